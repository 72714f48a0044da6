"""Merge sort compiles to cubin with CUB inlined, on any machine (no GPU).

Also compiles the GPU test kernels (every dtype, every items_per_thread, every
group and variant), so a device run can only find numerical problems.
"""

from __future__ import annotations


import pytest

from ..compiler import SEPARATE_SCRATCH

from .merge_sort_kernels import DTYPES, ITEMS, merge_sort_kernel, oob_text, other_value_dtype
from .cubin_checks import assert_inlined, compile_cubin, numba_types

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def gpu_kernel_argtypes(dtype, ipt):
    types = numba_types()
    key, other = getattr(types, dtype), getattr(types, other_value_dtype(dtype))
    return (key[::1], key[:, ::1], types.int32[:, ::1], other[:, ::1], types.int64[::1], ipt)


# Every dtype once, items_per_thread cycling through the GPU matrix's values.
SAMPLE = [(dtype, ITEMS[i % len(ITEMS)]) for i, dtype in enumerate(DTYPES)]


@pytest.mark.xfail_on("numba-cuda", "AssertionError", SEPARATE_SCRATCH,
                      ids=("int32-ipt4", "uint16-ipt4", "uint64-ipt3", "float32-ipt4"))
@pytest.mark.parametrize("dtype,ipt", SAMPLE, ids=[f"{d}-ipt{i}" for d, i in SAMPLE])
def test_gpu_kernels_compile(dtype, ipt):
    kb = compile_cubin(merge_sort_kernel(dtype, oob_text(dtype)), gpu_kernel_argtypes(dtype, ipt), cc=(9, 0), block=128)
    assert_inlined(kb)
    assert kb.shared_bytes() > 0 and "bar.sync" in kb.ptx and "bar.warp.sync" in kb.ptx


@pytest.mark.parametrize("block", [(8, 4, 4), (32, 2, 1)], ids=["3d-128", "2d-64"])
def test_gpu_block_only_kernels_compile(block):
    kb = compile_cubin(merge_sort_kernel("int64", oob_text("int64"), block_only=True), gpu_kernel_argtypes("int64", 4),
                       cc=(9, 0), block=block)
    assert_inlined(kb)


def sort_kernel(group: str, pairs: bool, **controls):
    from ..kernelgen import module_from_source

    kw = "".join(f", {k}={v}" for k, v in controls.items())
    call = (f"r, s = coop.merge_sort_pairs({group}, keys, vals{kw})" if pairs
            else f"r = coop.merge_sort_keys({group}, keys{kw})")
    return module_from_source(f"""
@cuda.jit
def kernel(src, dst, vdst, n, items_per_thread):
    base = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread + cuda.threadIdx.x * items_per_thread
    keys = coop.ThreadData(items_per_thread, dtype=np.float32)
    vals = coop.ThreadData(items_per_thread, dtype=np.int32)
    for i in range(items_per_thread):
        keys[i] = src[base + i]
        vals[i] = i
    {call}
    for i in range(items_per_thread):
        dst[base + i] = r[i]
        {"vdst[base + i] = s[i]" if pairs else ""}
""").kernel


def _sort_argtypes(ipt=4):
    types = numba_types()
    return (types.float32[::1], types.float32[::1], types.int32[::1], types.int64, ipt)


@pytest.mark.parametrize("cc", [(9, 0), (8, 0)], ids=["sm90", "sm80"])
@pytest.mark.parametrize("group", ["coop.this_block()", "coop.this_warp()", "coop.this_warp().group_by(4)"],
                         ids=["block", "warp", "logical4"])
def test_sort_inlined_and_uses_shared_memory(group, cc, nvdisasm):
    kb = compile_cubin(sort_kernel(group, True, valid_items="n", oob_default="np.float32(1e30)"), _sort_argtypes(),
                       cc=cc, block=128)
    assert f".target sm_{cc[0]}{cc[1]}" in kb.ptx
    assert_inlined(kb, nvdisasm=nvdisasm)
    assert kb.shared_bytes() > 0
    if nvdisasm:
        sass = kb.sass()
        assert "STS" in sass and "LDS" in sass


def test_block_scratch_is_one_tile_of_keys():
    """CUB's BlockMergeSort TempStorage: a union of (tile + 1) keys and (tile + 1) values."""
    kb = compile_cubin(sort_kernel("coop.this_block()", False), _sort_argtypes(), cc=(9, 0), block=128)
    assert kb.shared_bytes() >= (128 * 4 + 1) * 4
    assert kb.shared_bytes() <= (128 * 4 + 1) * 4 + 64


def test_logical_warps_get_one_scratch_slice_each():
    one = compile_cubin(sort_kernel("coop.this_warp().group_by(8)", False), _sort_argtypes(), cc=(9, 0), block=64)
    two = compile_cubin(sort_kernel("coop.this_warp().group_by(8)", False), _sort_argtypes(), cc=(9, 0), block=128)
    assert two.shared_bytes() == 2 * one.shared_bytes()


def test_non_power_of_two_block_is_fine_for_warp_sorts():
    kb = compile_cubin(sort_kernel("coop.this_warp()", False), _sort_argtypes(), cc=(9, 0), block=96)
    assert_inlined(kb)


def test_descending_and_full_tile_variants_compile():
    kb = compile_cubin(sort_kernel("coop.this_block()", True, descending=True), _sort_argtypes(3), cc=(9, 0), block=256)
    assert_inlined(kb)
