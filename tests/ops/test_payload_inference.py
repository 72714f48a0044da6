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
