"""Parity: the load/store examples of NVIDIA's cuda.coop docs (common and qualified).

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/``
``test_load_example.py`` (``ThreadData(items_per_thread)`` from a kernel
argument, dtype from the load source, ``valid_items``/``oob_default``/``offset``
keywords in any order), ``test_store_example.py`` (transpose store of a partial
tile at an unaligned ``offset=5``, elements outside left untouched) and
``test_qualified_load_store_examples.py`` (``cuda.local.array(items_per_thread,
...)`` sized by a kernel argument).
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda, types

from ..compiler import qualified as numba_coop
from cuda import coop

from ._helpers import poison

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8])
def test_copy_tiles_with_runtime_items_per_thread(rng, dtype):
    """Mirrors test_load_example.py::test_load_example."""

    @cuda.jit
    def copy_tiles(source, destination, items_per_thread):
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread)
        tile_size = cuda.blockDim.x * items_per_thread
        offset = cuda.blockIdx.x * tile_size
        valid = min(max(source.size - offset, 0), tile_size)
        coop.load(block, source, items, valid_items=valid, oob_default=0, offset=offset)
        coop.store(block, destination, items, valid_items=valid, offset=offset)

    for ipt in (1, 4):
        values = (rng.integers(0, 250, 1000) if dtype != np.float64 else rng.standard_normal(1000)).astype(dtype)
        destination = poison(values, value=7)
        tile = 128 * ipt
        copy_tiles[(values.size + tile - 1) // tile, 128](values, destination, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(destination, values)


@pytest.mark.parametrize("algorithm", ["transpose", "direct", "striped", "warp_transpose"])
def test_partial_store_at_unaligned_offset(algorithm):
    """Mirrors test_store_example.py::test_store_example."""

    @cuda.jit
    def store_prefix(destination):
        block = coop.this_block()
        rank = cuda.threadIdx.x
        items = coop.ThreadData(2, dtype=np.int32)
        items[0] = types.int32(2 * rank)
        items[1] = types.int32(2 * rank + 1)
        coop.store(block, destination, items, algorithm=algorithm, valid_items=251, offset=5)

    destination = np.full(263, -1, dtype=np.int32)
    store_prefix[1, 128](destination)
    cuda.synchronize()
    expected = np.full(263, -1, dtype=np.int32)
    if algorithm == "striped":
        order = np.arange(256).reshape(128, 2).T.ravel()  # slot i of thread t lands at t + i*128
        expected[5:256] = order[:251]
    else:
        expected[5:256] = np.arange(251)
    np.testing.assert_array_equal(destination, expected)


def test_local_array_sized_by_a_kernel_argument(rng):
    """Mirrors test_qualified_load_store_examples.py::test_qualified_load_store_example."""

    @cuda.jit
    def copy_tiles(source, destination, items_per_thread):
        block = numba_coop.this_block()
        items = cuda.local.array(items_per_thread, dtype=types.int32)
        tile_size = cuda.blockDim.x * items_per_thread
        offset = cuda.blockIdx.x * tile_size
        valid = min(source.size - offset, tile_size)
        numba_coop.load(block, source, items, offset=offset, valid_items=valid, oob_default=0)
        numba_coop.store(block, destination, items, offset=offset, valid_items=valid)

    for ipt in (1, 4):
        values = rng.integers(-10**6, 10**6, 1000, dtype=np.int32)
        destination = poison(values)
        tile = 64 * ipt
        copy_tiles[(values.size + tile - 1) // tile, 64](values, destination, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(destination, values)


def test_device_array_copy(rng):
    """Mirrors test_load_example.py (device arrays from cuda.to_device / device_array_like)."""

    @cuda.jit
    def copy_tiles(source, destination):
        block = coop.this_block()
        items = coop.ThreadData(4)
        coop.load(block, source, items, offset=cuda.blockIdx.x * 512)
        coop.store(block, destination, items, offset=cuda.blockIdx.x * 512)

    values = rng.integers(-10**6, 10**6, 1024, dtype=np.int32)
    source = cuda.to_device(values)
    destination = cuda.device_array_like(source)
    copy_tiles[2, 128](source, destination)
    np.testing.assert_array_equal(destination.copy_to_host(), values)
