"""Parity: cooperative calls inside device helpers, and the launch shape as the group shape.

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/``
``test_device_helpers_example.py`` (``coop.register("numba-cuda-mlir")`` then
groups and ThreadData passed through ``@cuda.jit(device=True)`` helpers, one with
``inline="always"``, a ThreadData returned from a helper), the device-function
part of ``test_composition.py`` (block and warp sums in helpers) and
``test_launch_dimension_inference.py`` (1-D and 2-D launches, helpers,
``launch_bounds=``), all in the public spelling.
"""

from __future__ import annotations

import numpy as np
import pytest

from ..compiler import HELPER_NOT_INLINED
from ..compiler import cuda

from cuda import coop

from ._helpers import poison

coop.register("numba-cuda-mlir")

pytestmark = pytest.mark.gpu


@cuda.jit(device=True, inline="always")
def _load_into(group, source, items):
    coop.load(group, source, items)


@cuda.jit(device=True)
def _load_tile(group, source):
    items = coop.ThreadData(items_per_thread=2)
    _load_into(group, source, items)
    return items


@pytest.mark.xfail_on("numba-cuda", "TypingError", "numba-cuda cannot return a local array from a device function")
def test_thread_data_returned_from_a_helper(rng):
    """Mirrors test_device_helpers_example.py::test_device_helpers_example."""

    @cuda.jit
    def copy_tile(source, destination):
        block = coop.this_block()
        items = _load_tile(block, source)
        coop.store(block, destination, items)

    values = rng.integers(-10**6, 10**6, 256, dtype=np.int32)
    destination = poison(values)
    copy_tile[1, 128](values, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, values)


@cuda.jit(device=True)
def _block_total(value):
    return coop.sum(coop.this_block(), value)


@cuda.jit(device=True)
def _warp_total(value):
    return coop.sum(coop.this_warp(), value)


@pytest.mark.xfail_on("numba-cuda", "UnknownBlockDimensionError", HELPER_NOT_INLINED)
def test_block_and_warp_sums_in_helpers(rng):
    """Mirrors test_composition.py::test_device_function_single_phase_block_and_warp_primitives."""

    @cuda.jit
    def kernel(source, block_out, warp_out):
        t = cuda.threadIdx.x
        v = source[t]
        w = _warp_total(v)
        b = _block_total(v)
        if t == 0:
            block_out[0] = b
        if t % 32 == 0:
            warp_out[t // 32] = w

    values = rng.integers(0, 64, 96, dtype=np.int32)
    block_out, warp_out = poison(1, np.int32), poison(3, np.int32)
    kernel[1, 96](values, block_out, warp_out)
    cuda.synchronize()
    assert block_out[0] == values.sum()
    np.testing.assert_array_equal(warp_out, values.reshape(3, 32).sum(axis=1))


@cuda.jit
def _sum_1d(source, output):
    t = cuda.threadIdx.x
    total = coop.sum(coop.this_block(), source[t])
    if t == 0:
        output[0] = total


@cuda.jit
def _sum_2d(source, output):
    t = cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y
    total = coop.sum(coop.this_block(), source[t])
    if t == 0:
        output[0] = total


@cuda.jit(device=True, inline=True)
def _helper_sum(value):
    return coop.sum(coop.this_block(), value)


@cuda.jit
def _sum_via_helper(source, output):
    t = cuda.threadIdx.x
    total = _helper_sum(source[t])
    if t == 0:
        output[0] = total


@cuda.jit(launch_bounds=128)
def _sum_bounded(source, output):
    t = cuda.threadIdx.x
    total = coop.sum(coop.this_block(), source[t])
    if t == 0:
        output[0] = total


@pytest.mark.parametrize("kernel,block", [
    (_sum_1d, 64), (_sum_1d, 96), (_sum_2d, (8, 4)), (_sum_2d, (16, 6)), (_sum_via_helper, 64),
    (_sum_bounded, 64),
], ids=["1d-64", "1d-96", "2d-8x4", "2d-16x6", "helper", "launch-bounds"])
def test_block_shape_comes_from_the_launch(rng, kernel, block):
    """Mirrors test_launch_dimension_inference.py (every test but the G2 threads_per_block= one)."""
    threads = int(np.prod(block))
    values = rng.integers(-1000, 1000, threads, dtype=np.int32)
    output = poison(1, np.int32)
    kernel[1, block](values, output)
    cuda.synchronize()
    assert output[0] == values.sum()
