"""``ThreadData`` without ``dtype``: the dtype comes from the first value written into it, or
from the call that fills it as ``aggregate_output=`` (besides a load source / store target)."""

from __future__ import annotations

import numpy as np
import pytest

from ..kernelgen import module_from_source
from .cubin_checks import assert_inlined, compile_cubin, numba_types

_SOURCE = """
@cuda.jit
def kernel(src, dst, aggs):
    block = coop.this_block()
    t = cuda.threadIdx.x
    doubled = coop.ThreadData(4)  # int16: the type of the first value written
    for i in range(4):
        doubled[i] = np.int16(src[t * 4 + i] * 2)
    agg = coop.ThreadData(items_per_thread=1)  # int16: the scanned value's dtype
    out = coop.exclusive_sum(block, doubled, aggregate_output=agg)
    for i in range(4):
        dst[t * 4 + i] = out[i]
    aggs[t] = agg[0]
"""


def kernel():
    return module_from_source(_SOURCE).kernel


@pytest.mark.compile
def test_dtype_from_the_first_write_and_from_aggregate_output():
    T = numba_types()
    kb = compile_cubin(kernel(), (T.int16[::1], T.int16[::1], T.int16[::1]), cc=(9, 0), block=64)
    assert_inlined(kb, (9, 0))


@pytest.mark.gpu
def test_inferred_payloads_on_the_device():
    from numba_cuda_mlir import cuda

    rng = np.random.default_rng(3)
    src = rng.integers(-100, 100, size=256).astype(np.int16)
    dst = np.full(256, -1, np.int16)
    aggs = np.full(64, -1, np.int16)
    d_dst, d_aggs = cuda.to_device(dst), cuda.to_device(aggs)
    kernel()[1, 64](cuda.to_device(src), d_dst, d_aggs)
    doubled = (src * 2).astype(np.int16)
    np.testing.assert_array_equal(d_dst.copy_to_host(), np.r_[0, np.cumsum(doubled, dtype=np.int16)[:-1]])
    assert (d_aggs.copy_to_host() == doubled.sum(dtype=np.int16)).all()


# coop.load returns its output payload itself (NVIDIA's cuda.coop does): the result feeds
# store/sort and is the same storage as the output, whose dtype comes from the source.
_LOAD_RESULT_SOURCE = """
@cuda.jit
def kernel(src, sorted_out, stored, aliased, warp_out):
    block = coop.this_block()
    t = cuda.threadIdx.x
    items = coop.ThreadData(3)  # dtype from the load source
    loaded = coop.load(block, src, items, algorithm="transpose", valid_items=n_valid, oob_default=OOB)
    coop.store(block, stored, loaded, algorithm="striped")
    coop.store(block, sorted_out, coop.radix_sort_keys(block, loaded))
    loaded[0] = loaded[0] + 1  # the result is the output itself: items sees the write
    for i in range(3):
        aliased[t * 3 + i] = items[i]
    w = coop.ThreadData(3, dtype=src.dtype)
    coop.store(coop.this_warp(), warp_out, coop.load(coop.this_warp(), src, w, algorithm="striped"),
               algorithm="striped")
"""

N_VALID, OOB = 181, -5


def load_result_kernel():
    return module_from_source(f"n_valid = {N_VALID}\nOOB = {OOB}\n" + _LOAD_RESULT_SOURCE).kernel


@pytest.mark.compile
def test_load_result_compiles_for_block_and_warp():
    T = numba_types()
    arr = T.int32[::1]
    kb = compile_cubin(load_result_kernel(), (arr,) * 5, cc=(9, 0), block=64)
    assert_inlined(kb, (9, 0))


@pytest.mark.gpu
def test_load_result_on_the_device():
    from numba_cuda_mlir import cuda

    rng = np.random.default_rng(11)
    src = rng.integers(-1000, 1000, size=192).astype(np.int32)
    outs = [np.full(192, -7, np.int32) for _ in range(4)]
    d_outs = [cuda.to_device(o) for o in outs]
    load_result_kernel()[1, 64](cuda.to_device(src), *d_outs)
    sorted_out, stored, aliased, warp_out = (d.copy_to_host() for d in d_outs)
    tile = np.where(np.arange(192) < N_VALID, src, OOB).astype(np.int32)
    np.testing.assert_array_equal(sorted_out, np.sort(tile))
    # blocked slots stored striped: slot (t, i) lands at t + i*64
    np.testing.assert_array_equal(stored, tile.reshape(64, 3).T.reshape(-1))
    bumped = tile.copy()
    bumped[::3] += 1
    np.testing.assert_array_equal(aliased, bumped)
    np.testing.assert_array_equal(warp_out, src)
