"""numba-cuda-mlir 0.6 behaviours cuda-coop's tests work around (strict xfail: a fix upstream
turns these into failures, the signal to drop the workaround)."""

import re

import pytest

from ..kernelgen import module_from_source

pytestmark = pytest.mark.compile

pytest.importorskip("numba_cuda_mlir")

WIDENING = """
@cuda.jit
def kernel(samples, acc_init, out):
    tid = cuda.threadIdx.x
    sb = coop.ThreadData(4)
    coop.load(coop.this_block(), samples, sb)
    acc = cuda.local.array(2, np.int32)
    for i in range(2):
        acc[i] = acc_init[tid + i * 128]
    acc[0] = acc[0] + sb[0]
    for i in range(2):
        out[3, 0, tid + i * 128] = acc[i]
"""


@pytest.mark.xfail(strict=True, reason="numba-cuda-mlir 0.6 widens this int32 local element to int64 with a "
                                       "zero-extending load; tests/ops/test_histogram.py reads int32 results "
                                       "into int32 arrays because of it")
def test_int32_local_element_is_sign_extended_into_int64():
    from numba_cuda_mlir.numba_cuda import types

    from cuda.coop.numba_mlir import compile_cubin

    kb = compile_cubin(module_from_source(WIDENING).kernel,
                       (types.int16[::1], types.int32[::1], types.int64[:, :, ::1]), cc=(9, 0), block=128)
    assert not re.search(r"ld\.local\.u32\s+%rd", kb.ptx)


NAN_COMPARE = """
@cuda.jit
def kernel(x, out):
    a = x[0]
    out[0] = 1 if a != a else 0
"""


@pytest.mark.xfail(strict=True, reason="numba-cuda-mlir 0.6 lowers float != as an ordered comparison: a != a "
                                       "is False for NaN (Python says True); test comparators use math.isnan")
def test_float_not_equal_is_unordered():
    from numba_cuda_mlir.numba_cuda import types

    from cuda.coop.numba_mlir import compile_cubin

    kb = compile_cubin(module_from_source(NAN_COMPARE).kernel, (types.float32[::1], types.int32[::1]),
                       cc=(9, 0), block=32)
    assert "setp.nan" in kb.ptx or "setp.neu" in kb.ptx
