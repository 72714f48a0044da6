"""Where the trailing barrier of a call on the implicit scratch goes (no GPU needed).

A call on the compiler-owned scratch ends with ``__syncthreads()`` only when a
later cooperative call can reuse that scratch; the lowering reads the kernel's
control flow to decide.  CUB's ``BlockShuffle::Offset`` has exactly one barrier
of its own, so each case below has a known barrier count in the post-LTO PTX.
The GPU suites check that kernels with loops and several calls still compute
the right results (tests/ops/test_shuffle.py, test_scan.py running scans,
test_histogram.py accumulation across tiles).
"""

from __future__ import annotations

import re

import pytest

from ..kernelgen import module_from_source  # compiler named at each call: these are numba-cuda-mlir's

pytestmark = pytest.mark.compile

nb = pytest.importorskip("numba_cuda_mlir")

KERNELS = {
    # one call: its barrier would only cost time
    "single": ("""
@cuda.jit
def kernel(src, dst, n, flag):
    i = cuda.threadIdx.x
    dst[i] = coop.shuffle(coop.this_block(), src[i], mode="offset")
""", 1),
    # the first call's scratch is reused by the second
    "sequence": ("""
@cuda.jit
def kernel(src, dst, n, flag):
    i = cuda.threadIdx.x
    a = coop.shuffle(coop.this_block(), src[i], mode="offset")
    dst[i] = coop.shuffle(coop.this_block(), a, mode="offset")
""", 3),
    # the next iteration reuses the scratch (back edge); LLVM unrolls the loop, so
    # this case counts barriers per copy of the call (one shared store each)
    "loop": ("""
@cuda.jit
def kernel(src, dst, n, flag):
    i = cuda.threadIdx.x
    v = src[i]
    for _ in range(n):
        v = coop.shuffle(coop.this_block(), v, mode="offset")
    dst[i] = v
""", "2 per call"),
    # two calls on exclusive paths: neither can follow the other
    "branches": ("""
@cuda.jit
def kernel(src, dst, n, flag):
    i = cuda.threadIdx.x
    if flag:
        v = coop.shuffle(coop.this_block(), src[i], mode="offset")
    else:
        v = coop.shuffle(coop.this_block(), src[i], mode="rotate")
    dst[i] = v
""", 2),
    # an explicit TempStorage keeps its documented auto_sync barrier
    "explicit_temp_storage": ("""
@cuda.jit
def kernel(src, dst, n, flag):
    i = cuda.threadIdx.x
    ts = coop.TempStorage()
    dst[i] = coop.shuffle(coop.this_block(), src[i], mode="offset", temp_storage=ts)
""", 2),
}


def _barriers(ptx: str) -> int:
    return len(re.findall(r"\b(?:bar|barrier)(?:\.cta)?\.sync(?:\.aligned)?\b", ptx))


@pytest.mark.parametrize("case", list(KERNELS))
def test_trailing_barrier_only_where_the_scratch_is_reused(case):
    from numba_cuda_mlir.numba_cuda import types

    from cuda.coop.numba_mlir import compile_cubin

    source, expected = KERNELS[case]
    kernel = module_from_source(source, "numba-cuda-mlir").kernel
    kb = compile_cubin(kernel, (types.int32[::1], types.int32[::1], types.int64, types.boolean),
                       cc=(9, 0), block=128)
    if expected == "2 per call":
        copies = len(re.findall(r"\bst\.shared\.", kb.ptx))
        assert copies >= 1 and _barriers(kb.ptx) == 2 * copies, kb.ptx
    else:
        assert _barriers(kb.ptx) == expected, kb.ptx


# A call followed at once by the user's own block-wide barrier adds none (NVIDIA's programming
# guide, "manual scratch": "the descriptor adds no barriers to the explicit block.sync() calls").
# Counted in the kernel's MLIR, where the call's barrier would be a gpu.barrier of its own
# (LLVM later merges adjacent barriers, so the PTX would not tell).
_FOLLOWED = """
@cuda.jit
def kernel(src, dst, n, flag):
    i = cuda.threadIdx.x
    ts = coop.TempStorage()
    block = coop.this_block()
    pairs = block.group_by(2)
    v = coop.shuffle(block, src[i], mode="offset", temp_storage=ts)
{between}    {barrier}
    dst[i] = coop.shuffle(block, v, mode="offset", temp_storage=ts)
"""


@pytest.mark.parametrize("barrier", ["block.sync()", "cuda.syncthreads()", "pairs.sync()"])
@pytest.mark.parametrize("between,ours", [("", 0), ("    k = n\n", 0), ("    dst[i] = v\n", 1)])
def test_no_barrier_of_ours_right_before_the_users(barrier, between, ours):
    from numba_cuda_mlir.numba_cuda import types

    from cuda.coop.numba_mlir import compile_cubin

    kernel = module_from_source(_FOLLOWED.format(between=between, barrier=barrier), "numba-cuda-mlir").kernel
    kb = compile_cubin(kernel, (types.int32[::1], types.int32[::1], types.int64, types.boolean),
                       cc=(9, 0), block=128)
    mlir = kb._compile_result.metadata["mlir_module_str"]  # numba-cuda-mlir's compile result
    # gpu.barrier: the second call's (an explicit TempStorage keeps its auto_sync barrier), the
    # first call's only when a store comes between it and the user's, and cuda.syncthreads().
    # block.sync() is spelled nvvm.barrier there (NVIDIA's tests count gpu.barrier as the
    # barriers the library added).
    user_sync = barrier == "cuda.syncthreads()"
    assert mlir.count("gpu.barrier") == 1 + ours + user_sync, mlir
    assert mlir.count("nvvm.barrier") == (not user_sync), mlir
