"""Parity: the reduction examples of NVIDIA's cuda.coop docs (common and qualified).

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/``
``test_reduce_examples.py`` (broadcast ``reduce(binary_op="max")`` read by every
thread; ``broadcast=False`` with runtime ``valid_items`` and ``algorithm=``;
``sum(broadcast=False, algorithm="raking")``), ``test_qualified_reduce_examples.py``
(device-function ``binary_op`` with a runtime ``items_per_thread``; logical-warp
``sum`` read at ``group.rank() == 0``), ``test_qualified_reduce_batched_examples.py``
(``reduce_batched`` with a device-function operator) and ``test_common_root.py``
(``coop.reduce(group, items[0])`` with the default operator, broadcast).
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda, types

from ..compiler import qualified as numba_coop
from cuda import coop

from ._helpers import poison

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("valid", [93, 128, 1])
@pytest.mark.parametrize("algorithm", ["warp_reductions", "raking"])
def test_broadcast_max_and_rank0_partial_min(rng, valid, algorithm):
    """Mirrors test_reduce_examples.py::test_reduce_example."""

    @cuda.jit
    def extrema(source, maxima, prefix_minimum, valid):
        block = coop.this_block()
        value = source[cuda.threadIdx.x]
        maxima[cuda.threadIdx.x] = coop.reduce(block, value, binary_op="max")
        minimum = coop.reduce(block, value, binary_op="min", broadcast=False, valid_items=valid,
                              algorithm=algorithm)
        if cuda.threadIdx.x == 0:
            prefix_minimum[0] = minimum

    values = rng.integers(-10**6, 10**6, 128, dtype=np.int32)
    maxima, prefix_minimum = poison(values), poison(1, np.int32)
    extrema[1, 128](values, maxima, prefix_minimum, valid)
    cuda.synchronize()
    np.testing.assert_array_equal(maxima, np.full_like(values, values.max()))
    assert prefix_minimum[0] == values[:valid].min()


@pytest.mark.parametrize("count", [300, 256, 129])
def test_tile_sums_without_broadcast(rng, count):
    """Mirrors test_reduce_examples.py::test_sum_example."""

    @cuda.jit
    def sum_tiles(source, totals):
        block = coop.this_block()
        items = coop.ThreadData(2, dtype=np.int32)
        tile_size = cuda.blockDim.x * 2
        offset = cuda.blockIdx.x * tile_size
        valid = min(max(source.size - offset, 0), tile_size)
        coop.load(block, source, items, offset=offset, valid_items=valid, oob_default=0)
        total = coop.sum(block, items, broadcast=False, algorithm="raking")
        if cuda.threadIdx.x == 0:
            totals[cuda.blockIdx.x] = total

    values = rng.integers(-150, 150, count, dtype=np.int32)
    totals = poison(2, np.int32)
    sum_tiles[2, 128](values, totals)
    cuda.synchronize()
    np.testing.assert_array_equal(totals, [values[:256].sum(), values[256:].sum()])


def test_device_function_reduce_with_runtime_items_per_thread(rng):
    """Mirrors test_qualified_reduce_examples.py::test_qualified_reduce_example."""

    @cuda.jit(device=True)
    def larger(a, b):
        return max(a, b)

    @cuda.jit
    def tile_max(source, output, items_per_thread):
        block = numba_coop.this_block()
        items = numba_coop.ThreadData(items_per_thread)
        numba_coop.load(block, source, items)
        result = numba_coop.reduce(block, items, binary_op=larger)
        if block.rank() == 0:
            output[0] = result

    for ipt in (1, 3, 4):
        values = rng.integers(-10**5, 10**5, 64 * ipt, dtype=np.int32)
        output = poison(1, np.int32)
        tile_max[1, 64](values, output, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(output, [values.max()])


@pytest.mark.parametrize("width", [8, 16])
def test_logical_warp_sum_read_at_group_rank_zero(rng, width):
    """Mirrors test_qualified_reduce_examples.py::test_qualified_sum_example."""

    @cuda.jit
    def warp_totals(source, destination):
        group = numba_coop.this_warp().group_by(width)
        t = cuda.threadIdx.x
        total = numba_coop.sum(group, source[t])
        if group.rank() == 0:
            destination[t // width] = total

    values = rng.integers(-100, 100, 64, dtype=np.int32)
    destination = poison(64 // width, np.int32)
    warp_totals[1, 64](values, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, values.reshape(-1, width).sum(axis=1))


def test_reduce_batched_with_device_function(rng):
    """Mirrors test_qualified_reduce_batched_examples.py::test_qualified_batched_reduce_example."""

    @cuda.jit(device=True)
    def larger(a, b):
        return max(a, b)

    @cuda.jit
    def feature_maxima(source, destination, items_per_thread):
        warp = numba_coop.this_warp()
        features = numba_coop.ThreadData(items_per_thread)
        numba_coop.load(numba_coop.this_block(), source, features)
        result = numba_coop.reduce_batched(warp, features, binary_op=larger)
        if warp.rank() < items_per_thread:
            destination[warp.rank()] = result[0]

    for ipt in (1, 4, 7):
        values = rng.integers(-1000, 1000, 32 * ipt, dtype=np.int32)
        destination = poison(ipt, np.int32)
        feature_maxima[1, 32](values, destination, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(destination, values.reshape(32, ipt).max(axis=0))


def test_default_operator_reduce_broadcasts(rng):
    """Mirrors test_common_root.py::test_common_root_load_store_reduce_without_compiler_scope."""

    @cuda.jit
    def kernel(source, round_trip, totals):
        t = cuda.threadIdx.x
        group = coop.this_block()
        items = coop.ThreadData(1, dtype=types.int32)
        coop.load(group, source, items)
        coop.store(group, round_trip, items)
        totals[t] = coop.reduce(group, items[0])

    values = rng.integers(-1000, 1000, 32, dtype=np.int32)
    for _ in range(2):  # a second launch reuses the compiled kernel
        round_trip, totals = poison(values), poison(values)
        kernel[1, 32](values, round_trip, totals)
        cuda.synchronize()
        np.testing.assert_array_equal(round_trip, values)
        np.testing.assert_array_equal(totals, np.full_like(values, values.sum()))
