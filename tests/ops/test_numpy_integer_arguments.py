"""NumPy integer scalars are accepted wherever a Python ``int`` is (issue #32): on the host
(the constructors' checks) and in kernels, where a module or closure constant such as
``np.int64(32)`` is read as the literal it holds, on both compilers."""

from __future__ import annotations

import numpy as np
import pytest

import cuda.coop as coop

from ..backends_param import COMPILERS, compile_for, gpu_for, kernel_for, types_for

SCALARS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.unit
@pytest.mark.parametrize("scalar", SCALARS, ids=lambda t: t.__name__)
def test_host_constructors_take_numpy_integers(scalar):
    items = coop.ThreadData(scalar(4), np.int32, alignment=scalar(32))
    assert (items.items_per_thread, items.alignment) == (4, 32)
    assert type(items.items_per_thread) is int
    storage = coop.TempStorage(scalar(96), alignment=scalar(16))
    assert (storage.size_in_bytes, storage.alignment) == (96, 16)
    assert coop.this_warp().group_by(scalar(8)).width == 8


@pytest.mark.unit
@pytest.mark.parametrize("value", [True, np.True_, 4.0, np.float32(4), "4"], ids=repr)
def test_host_constructors_still_refuse_what_is_not_an_integer(value):
    with pytest.raises(coop.InvalidArgumentTypeError, match="items_per_thread="):
        coop.ThreadData(value, np.int32)
    with pytest.raises(coop.InvalidArgumentTypeError, match="alignment="):
        coop.TempStorage(alignment=value)
    with pytest.raises(coop.InvalidArgumentTypeError, match="size_in_bytes="):
        coop.TempStorage(value)


# Every integer-valued compile-time argument of the kernel below is a NumPy scalar constant.
_SOURCE = """
IPT = np.int32(4)
ALIGN = np.int64(32)
SIZE = np.uint32(8192)
BINS = np.int16(16)
PER_THREAD = np.uint8(1)
K = np.int64(5)
END = np.uint64(8)
WIDTH = np.int32(8)
COUNT = np.int16(7)


@cuda.jit
def kernel(source, copied, histogram_out, top, sorted_low, warp_sums, reserved_out):
    t = cuda.threadIdx.x
    block = coop.this_block()
    storage = coop.TempStorage(SIZE, alignment=ALIGN, sharing="exclusive", auto_sync=True)
    items = coop.ThreadData(IPT, alignment=ALIGN)
    coop.load(block, source, items, algorithm="transpose", temp_storage=storage)
    coop.store(block, copied, items, algorithm="transpose", temp_storage=storage)
    counts = coop.histogram(block, items, bins=BINS, bins_per_thread=PER_THREAD)
    if t < BINS:
        histogram_out[t] = counts[0]
    best = coop.topk_max_keys(block, items, k=K)
    coop.store(block, top, best)
    low = coop.radix_sort_keys(block, items, begin_bit=0, end_bit=END)
    coop.store(block, sorted_low, low)
    warp_sums[t] = coop.sum(coop.this_warp().group_by(WIDTH), items[0])
    scratch = coop.TempStorage()
    ring = scratch.reserve(COUNT, np.int32, alignment=ALIGN)
    if t < COUNT:
        ring[t] = t * 3
    cuda.syncthreads()
    if t == 0:
        for i in range(COUNT):
            reserved_out[i] = ring[i]
"""

THREADS = 64


def _kernel(compiler):
    return kernel_for(compiler, _SOURCE).kernel


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS)
def test_numpy_integer_constants_compile(compiler):
    T = types_for(compiler)
    arr = T.uint8[::1]
    i32 = T.int32[::1]
    compile_for(compiler, _kernel(compiler), (arr, arr, i32, arr, arr, i32, i32), cc=(9, 0), block=THREADS)


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", COMPILERS)
def test_numpy_integer_constants_on_the_device(compiler):
    gpu_for(compiler)
    rng = np.random.default_rng(32)
    source = rng.integers(0, 16, size=4 * THREADS).astype(np.uint8)
    copied, top, sorted_low = (np.full_like(source, 99) for _ in range(3))
    histogram_out = np.full(16, -1, np.int32)
    warp_sums = np.full(THREADS, -1, np.int32)
    reserved_out = np.full(7, -1, np.int32)
    _kernel(compiler)[1, THREADS](source, copied, histogram_out, top, sorted_low, warp_sums, reserved_out)
    np.testing.assert_array_equal(copied, source)
    np.testing.assert_array_equal(histogram_out, np.bincount(source, minlength=16))
    np.testing.assert_array_equal(np.sort(top[:5]), np.sort(source)[-5:])
    np.testing.assert_array_equal(sorted_low, np.sort(source, kind="stable"))
    firsts = source[::4].astype(np.int64).reshape(-1, 8).sum(axis=1)
    np.testing.assert_array_equal(warp_sums[::8], firsts.astype(np.int32))
    np.testing.assert_array_equal(reserved_out, np.arange(7) * 3)
