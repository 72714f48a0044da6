"""numba-cuda-mlir 0.6 behaviours cuda-coop's tests work around (strict xfail: a fix upstream
turns these into failures, the signal to drop the workaround)."""

import re

import pytest

from ..kernelgen import module_from_source  # compiler named at each call: these are numba-cuda-mlir's

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

    kb = compile_cubin(module_from_source(WIDENING, "numba-cuda-mlir").kernel,
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

    kb = compile_cubin(module_from_source(NAN_COMPARE, "numba-cuda-mlir").kernel, (types.float32[::1], types.int32[::1]),
                       cc=(9, 0), block=32)
    assert "setp.nan" in kb.ptx or "setp.neu" in kb.ptx


RECORD_LOCAL = """
RECORD = numpy_support.from_dtype(np.dtype([("key", np.int32), ("value", np.float32)], align=True))


@cuda.jit
def kernel(src, dst):
    tmp = cuda.local.array(4, RECORD)
    for i in range(4):
        tmp[i] = src[cuda.threadIdx.x * 4 + i]
    for i in range(4):
        dst[cuda.threadIdx.x * 4 + i] = tmp[i]
"""


@pytest.mark.xfail(strict=True, raises=RuntimeError,  # its UserFacingInternalCompilerError
                   reason="numba-cuda-mlir 0.6 cannot lower cuda.local.array of a Record dtype "
                                       "(NotImplementedError in lower_call_expr_assign), so record payloads "
                                       "(issue #13 item 4) have no per-thread storage yet")
def test_local_array_of_records_compiles():
    from numba_cuda_mlir.numba_cuda import types

    from cuda.coop.numba_mlir import compile_cubin

    source = "from numba_cuda_mlir.numba_cuda.np import numpy_support\n" + RECORD_LOCAL
    module = module_from_source(source, "numba-cuda-mlir")
    record_array = types.Array(module.RECORD, 1, "C")
    compile_cubin(module.kernel, (record_array, record_array), cc=(9, 0), block=128)
