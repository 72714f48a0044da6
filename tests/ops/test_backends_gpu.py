"""The same kernels, launched, on both compiler backends: results against NumPy.

Each test poisons the output, launches with random data and a partial last tile where
the operation allows, and compares with a NumPy reference.  The block shape comes from
the launch on both backends (classic numba-cuda: its launch configuration, read at
compile time).
"""

from __future__ import annotations

import numpy as np
import pytest

from ..backends_param import COMPILERS, gpu_for, kernel_for

# Under --compiler numba-cuda these would only repeat themselves.
pytestmark = [pytest.mark.gpu, pytest.mark.only_on("numba-cuda-mlir", "runs each test on both compilers itself (tests/backends_param.py)")]

IPT, THREADS = 4, 128
TILE = IPT * THREADS


def _module(compiler, call, store):
    return kernel_for(compiler, f"""
@cuda.jit
def kernel(src, dst):
    g = coop.this_block()
    items = coop.ThreadData({IPT}, dtype=np.int32)
    offset = cuda.blockIdx.x * {TILE}
    coop.load(g, src[offset:offset + {TILE}], items, algorithm="striped")
    {call}
    {store}
""")


@pytest.mark.parametrize("compiler", COMPILERS)
def test_block_sum(compiler):
    gpu_for(compiler)
    rng = np.random.default_rng(1)
    tiles = 5
    src = rng.integers(-100, 100, tiles * TILE, dtype=np.int32)
    dst = np.full(tiles, -777, np.int32)
    module = _module(compiler, "r = coop.sum(g, items)", "if cuda.threadIdx.x == 0:\n        dst[cuda.blockIdx.x] = r")
    module.kernel[tiles, THREADS](src, dst)  # host arrays: copied in and back by the launch
    np.testing.assert_array_equal(dst, src.reshape(tiles, TILE).sum(axis=1))


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("op", ["inclusive_sum", "exclusive_sum"])
def test_block_scan_and_store(compiler, op):
    gpu_for(compiler)
    rng = np.random.default_rng(2)
    tiles = 3
    src = rng.integers(-50, 50, tiles * TILE, dtype=np.int32)
    dst = np.full_like(src, -777)
    module = _module(compiler, f"r = coop.{op}(g, items)",
                     f'coop.store(g, dst[offset:offset + {TILE}], r, algorithm="striped")')
    module.kernel[tiles, THREADS](src, dst)
    # Striped: thread t holds positions t, t + 128, ...; the scan runs over the blocked order
    # of the payload, i.e. thread-major over each thread's items.
    tile = src.reshape(tiles, IPT, THREADS).transpose(0, 2, 1).reshape(tiles, TILE)
    ref = np.cumsum(tile, axis=1, dtype=np.int32)
    if op == "exclusive_sum":
        ref = np.concatenate([np.zeros((tiles, 1), np.int32), ref[:, :-1]], axis=1)
    ref = ref.reshape(tiles, THREADS, IPT).transpose(0, 2, 1).reshape(-1)
    np.testing.assert_array_equal(dst, ref)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_radix_sort_keys(compiler):
    gpu_for(compiler)
    rng = np.random.default_rng(3)
    tiles = 2
    src = rng.integers(-1000, 1000, tiles * TILE, dtype=np.int32)
    dst = np.full_like(src, -777)
    module = kernel_for(compiler, f"""
@cuda.jit
def kernel(src, dst):
    g = coop.this_block()
    items = coop.ThreadData({IPT}, dtype=np.int32)
    offset = cuda.blockIdx.x * {TILE}
    coop.load(g, src[offset:offset + {TILE}], items)
    r = coop.radix_sort_keys(g, items)
    coop.store(g, dst[offset:offset + {TILE}], r)
""")
    module.kernel[tiles, THREADS](src, dst)
    np.testing.assert_array_equal(dst, np.sort(src.reshape(tiles, TILE), axis=1).reshape(-1))


@pytest.mark.parametrize("compiler", COMPILERS)
def test_block_shape_from_each_launch(compiler):
    """One kernel launched with two block shapes: compiled per shape, both correct."""
    gpu_for(compiler)
    module = kernel_for(compiler, """
@cuda.jit
def kernel(src, dst):
    items = coop.ThreadData(2, dtype=np.int32)
    coop.load(coop.this_block(), src, items)
    r = coop.sum(coop.this_block(), items)
    if cuda.threadIdx.x == 0:
        dst[0] = r
""")
    rng = np.random.default_rng(4)
    for threads in (64, 256):
        src = rng.integers(-100, 100, 2 * threads, dtype=np.int32)
        dst = np.full(1, -777, np.int32)
        module.kernel[1, threads](src, dst)
        assert dst[0] == src.sum()


@pytest.mark.parametrize("compiler", COMPILERS)
def test_kernel_arguments_specialize_each_launch(compiler):
    """items_per_thread and a bit range as kernel arguments: the kernel is specialized per
    value at launch (classic numba-cuda retries its typing with literal arguments), and each
    specialization gives NumPy's answer, a partial last tile included."""
    gpu_for(compiler)
    module = kernel_for(compiler, """
@cuda.jit
def kernel(src, dst, items_per_thread, end_bit):
    g = coop.this_block()
    items = coop.ThreadData(items_per_thread, dtype=src.dtype)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    n = min(src.size - offset, cuda.blockDim.x * items_per_thread)
    coop.load(g, src, items, offset=offset, valid_items=n, oob_default=255)
    keys = coop.radix_sort_keys(g, items, end_bit=end_bit)
    coop.store(g, dst, keys, offset=offset, valid_items=n)
""")
    rng = np.random.default_rng(7)
    threads = 64
    for ipt, end_bit in ((2, 8), (5, 8), (5, 4)):
        tile = threads * ipt
        size = 3 * tile - 37  # a partial last tile
        src = rng.integers(0, 255, size, dtype=np.uint8)
        dst = np.full(size, 99, np.uint8)
        module.kernel[3, threads](src, dst, ipt, end_bit)
        for start in range(0, size, tile):
            chunk = src[start:start + tile]
            padded = np.concatenate([chunk, np.full(tile - chunk.size, 255, np.uint8)])  # oob_default
            keys = padded if end_bit == 8 else padded & 0xF  # bits [0, end_bit), a stable sort
            want = padded[np.argsort(keys, kind="stable")][:chunk.size]
            np.testing.assert_array_equal(dst[start:start + tile], want, err_msg=f"{ipt=} {end_bit=}")
