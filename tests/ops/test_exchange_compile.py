"""Exchange compiles to cubin with CUB inlined, on any machine (no GPU).

Builds the GPU test kernels themselves (every mode x group, every payload, rank
and flag dtype) so a GPU run can only find numerical problems.
"""

from __future__ import annotations

import re

import pytest

from ..compiler import SEPARATE_SCRATCH

from .exchange_kernels import BLOCK_DTYPES, ITEMS, RANK_DTYPES, WARP_DTYPES, exchange_kernel
from .cubin_checks import assert_inlined, compile_cubin, sass_calls

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def _argtypes(dtype, ipt):
    from ..compiler import types

    from .exchange_kernels import FLAG_DTYPES

    arr = lambda d: getattr(types, d)[::1]  # noqa: E731
    return (arr(dtype), arr(RANK_DTYPES[dtype]), arr(FLAG_DTYPES[dtype]), getattr(types, dtype)[:, ::1], ipt)


# Every payload dtype at K=8 (CUB's padded layout), every K for one dtype, both groups.
GPU_KERNELS = (
    [("block", d, 8) for d in BLOCK_DTYPES]
    + [("block", "int32", k) for k in ITEMS if k != 8]
    + [("warp", d, 3) for d in WARP_DTYPES]
)


@pytest.mark.xfail_on("numba-cuda", "AssertionError", SEPARATE_SCRATCH,
                      ids=("block-int64-ipt8", "block-float64-ipt8"))
@pytest.mark.parametrize("kind,dtype,ipt", GPU_KERNELS, ids=[f"{k}-{d}-ipt{i}" for k, d, i in GPU_KERNELS])
def test_gpu_test_kernels_compile(kind, dtype, ipt, nvdisasm):
    kernel, cases = exchange_kernel(kind, dtype)
    kb = compile_cubin(kernel, _argtypes(dtype, ipt), cc=(9, 0), block=128)
    assert_inlined(kb, (9, 0))
    assert kb.shared_bytes() > 0
    if kind == "block":
        assert "bar.sync" in kb.ptx
    else:
        # Warp exchanges synchronize their own lanes only: no block barrier at all.
        assert "bar.warp.sync" in kb.ptx and "bar.sync" not in kb.ptx.replace("bar.warp.sync", "")
    if nvdisasm:
        sass = kb.sass()
        calls = sass_calls(sass)
        assert not calls, calls
        assert "STS" in sass and "LDS" in sass


@pytest.mark.parametrize("block", [(16, 6, 1), (10, 5, 1)], ids=["2d-96", "2d-50"])
def test_multidimensional_and_partial_warp_blocks_compile(block):
    warp_multiple = block[0] * block[1] % 32 == 0
    kernel, _ = exchange_kernel("block", "float32", warp_multiple)
    kb = compile_cubin(kernel, _argtypes("float32", 3), cc=(9, 0), block=block)
    assert_inlined(kb, (9, 0))
    if warp_multiple:
        kernel, _ = exchange_kernel("warp", "float64")
        assert_inlined(compile_cubin(kernel, _argtypes("float64", 3), cc=(9, 0), block=block), (9, 0))


@pytest.mark.parametrize("cc", [(8, 0), (10, 0), (12, 0)], ids=["sm80", "sm100", "sm120"])
def test_other_architectures(cc):
    kernel, _ = exchange_kernel("block", "int64")
    assert_inlined(compile_cubin(kernel, _argtypes("int64", 4), cc=cc, block=64), cc)


def _one_call_kernel(extra: str):
    from ..kernelgen import module_from_source

    return module_from_source(f"""
@cuda.jit
def kernel(src, dst):
    a = coop.ThreadData(4, dtype=np.float64)
    for i in range(4):
        a[i] = src[cuda.threadIdx.x * 4 + i]
    x = coop.exchange(coop.this_block(), a, mode="striped_to_blocked"{extra})
    for i in range(4):
        dst[cuda.threadIdx.x * 4 + i] = x[i]
""").kernel


def test_time_slicing_uses_one_warp_of_scratch():
    from ..compiler import types

    args = (types.float64[::1], types.float64[::1])
    full = compile_cubin(_one_call_kernel(""), args, cc=(9, 0), block=256).shared_bytes()
    sliced = compile_cubin(_one_call_kernel(", warp_time_slicing=True"), args, cc=(9, 0), block=256).shared_bytes()
    assert full >= 256 * 4 * 8  # the whole tile
    assert 32 * 4 * 8 <= sliced < full / 4  # one warp's share


def test_manual_sync_storage_drops_the_trailing_barrier():
    from ..compiler import types

    from ..kernelgen import module_from_source

    source = """
@cuda.jit
def kernel(src, dst):
    ts = coop.TempStorage(auto_sync={auto})
    a = coop.ThreadData(2, dtype=np.int32)
    for i in range(2):
        a[i] = src[cuda.threadIdx.x * 2 + i]
    x = coop.exchange(coop.this_block(), a, mode="blocked_to_striped", temp_storage=ts)
    for i in range(2):
        dst[cuda.threadIdx.x * 2 + i] = x[i]
"""
    args = (types.int32[::1], types.int32[::1])
    bars = lambda kb: len(re.findall(r"\bbar\.sync|\bbarrier\.sync", kb.ptx))  # noqa: E731
    auto = compile_cubin(module_from_source(source.format(auto=True)).kernel, args, cc=(9, 0), block=64)
    manual = compile_cubin(module_from_source(source.format(auto=False)).kernel, args, cc=(9, 0), block=64)
    assert bars(manual) == bars(auto) - 1
