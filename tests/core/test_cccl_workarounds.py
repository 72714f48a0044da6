"""CCCL behaviours cuda-coop depends on, checked on the generated code (no GPU needed)."""

import pytest

from ..kernelgen import module_from_source

pytestmark = pytest.mark.compile

REDUCTIONS = """
@cuda.jit
def k(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    r = coop.reduce(coop.this_block(), items, binary_op="min", algorithm="raking_commutative_only")
    s = coop.inclusive_scan(coop.this_block(), items, scan_op="max")
    coop.store(coop.this_block(), dst, s)
    if cuda.threadIdx.x == 0:
        dst[0] = r
"""


@pytest.mark.parametrize("dtype", ["int32", "float32", "int8"])
def test_thread_reduce_never_reaches_the_trapping_simd_stub(dtype):
    """With fp16 compiled out, CCCL 2.8/3.0 route ThreadReduce of 4+ items to assert(false).

    cuda-coop keeps fp16 enabled (the CUDA runtime headers of NVRTC's toolkit are on
    its include path), so no assertion call may appear in the kernel.
    """
    from ..compiler import compile_cubin, types  # the run's compiler (pytest --compiler)

    ty = getattr(types, dtype)[::1]
    kb = compile_cubin(module_from_source(REDUCTIONS).k, (ty, ty), cc=(9, 0), block=128)
    assert "__assertfail" not in kb.ptx and "trap;" not in kb.ptx


def test_cuda_headers_come_from_nvrtcs_toolkit():
    from cuda.coop.core.toolchain import toolchain

    t = toolchain()
    assert t.cudart_version[0] == t.nvrtc_version[0]
    assert t.include_dirs[-1] == t.cuda_include_dir
