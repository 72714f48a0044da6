"""Radix sort and rank compile to cubin with CUB inlined, on any machine (no GPU).

Also compiles the GPU test kernels (every key dtype, every items_per_thread),
so a device run can only find numerical problems.
"""

from __future__ import annotations

import re

import pytest

from ..kernelgen import module_from_source
from .merge_sort_kernels import DTYPES, other_value_dtype
from .radix_kernels import ITEMS, TILE_SORT, prefix_items, radix_kernel
from .cubin_checks import assert_inlined, compile_cubin, numba_types

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def gpu_kernel_argtypes(dtype, ipt):
    types = numba_types()
    key, other = getattr(types, dtype), getattr(types, other_value_dtype(dtype))
    return (key[::1], key[:, ::1], types.int32[:, ::1], other[:, ::1], types.int32[:, ::1], types.int32[::1],
            types.int64[::1], types.int32[::1], types.int64[::1], ipt)


SAMPLE = [(dtype, ITEMS[i % len(ITEMS)]) for i, dtype in enumerate(DTYPES)]


@pytest.mark.parametrize("dtype,ipt", SAMPLE, ids=[f"{d}-ipt{i}" for d, i in SAMPLE])
def test_gpu_kernels_compile(dtype, ipt):
    kb = compile_cubin(radix_kernel(dtype, prefix_items(128)), gpu_kernel_argtypes(dtype, ipt), cc=(9, 0), block=128)
    assert_inlined(kb)
    assert "bar.sync" in kb.ptx


def test_gpu_kernel_for_multidimensional_blocks_compiles():
    kb = compile_cubin(radix_kernel("float64", prefix_items(96)), gpu_kernel_argtypes("float64", 3), cc=(9, 0),
                       block=(16, 6, 1))
    assert_inlined(kb)


def sort_kernel(body: str, dtype="uint32"):
    return module_from_source(f"""
@cuda.jit
def kernel(src, dst, vdst, lo, hi, items_per_thread):
    g = coop.this_block()
    base = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread + cuda.threadIdx.x * items_per_thread
    keys = coop.ThreadData(items_per_thread, dtype=np.{dtype})
    vals = coop.ThreadData(items_per_thread, dtype=np.int32)
    for i in range(items_per_thread):
        keys[i] = src[base + i]
        vals[i] = i
{body}
""").kernel


def _argtypes(dtype="uint32", ipt=16):
    types = numba_types()
    t = getattr(types, dtype)
    return (t[::1], t[::1], types.int32[::1], types.int32, types.int32, ipt)


STORE_KEYS = """
    for i in range(items_per_thread):
        dst[base + i] = r[i]
"""


@pytest.mark.parametrize("cc", [(9, 0), (8, 0)], ids=["sm90", "sm80"])
def test_benchmark_shape_inlined(cc, nvdisasm):
    """128 threads x 16 uint32 keys: the benchmark's tile."""
    kb = compile_cubin(sort_kernel("    r = coop.radix_sort_keys(g, keys)" + STORE_KEYS), _argtypes(), cc=cc, block=128)
    assert_inlined(kb, nvdisasm=nvdisasm)
    # CUB's TempStorage: the exchange of 128 x 16 keys (with bank-conflict padding)
    # or the ranking counters, whichever is larger.
    assert 128 * 16 * 4 <= kb.shared_bytes() <= 128 * 16 * 4 + 1024
    if nvdisasm:
        sass = kb.sass()
        assert "STS" in sass and "LDS" in sass and "BAR.SYNC" in sass


def test_runtime_bits_and_striped_output_compile():
    body = """
    r, s = coop.radix_sort_pairs(g, keys, vals, begin_bit=lo, end_bit=hi, blocked_to_striped=True,
                                 descending=True)
    for i in range(items_per_thread):
        dst[base + i] = r[i]
        vdst[base + i] = s[i]
"""
    kb = compile_cubin(sort_kernel(body, "float64"), _argtypes("float64", 4), cc=(9, 0), block=(32, 4))
    assert_inlined(kb)


def test_rank_with_digit_prefix_compiles():
    body = """
    pre = coop.ThreadData(4, dtype=np.int32)
    r = coop.radix_rank(g, keys, begin_bit=lo, radix_bits=8, exclusive_digit_prefix=pre)
    for i in range(items_per_thread):
        vdst[base + i] = r[i]
    vdst[cuda.threadIdx.x] = pre[0] + pre[3]
"""
    # 8-bit digits: CUB keeps 2**8 / 2 packed counters per thread (32 KiB at 64
    # threads; 128 threads would exceed the 48 KiB static limit).
    kb = compile_cubin(sort_kernel(body, "int16"), _argtypes("int16", 2), cc=(9, 0), block=64)
    assert_inlined(kb)


def test_rank_scratch_grows_with_radix_bits():
    def rank(bits):
        body = f"""
    r = coop.radix_rank(g, keys, radix_bits={bits})
    for i in range(items_per_thread):
        vdst[base + i] = r[i]
"""
        return compile_cubin(sort_kernel(body), _argtypes(ipt=2), cc=(9, 0), block=128).shared_bytes()

    assert rank(6) > rank(3)


def test_items_per_thread_attribute_of_a_payload():
    """``payload.items_per_thread`` lowers in kernels (a generic fix the digit-prefix tests needed)."""
    body = """
    pre = coop.ThreadData(3, dtype=np.int32)
    for j in range(pre.items_per_thread):
        pre[j] = j
    for j in range(pre.items_per_thread):
        vdst[cuda.threadIdx.x * pre.items_per_thread + j] = pre[j] + keys.items_per_thread
"""
    kb = compile_cubin(sort_kernel(body), _argtypes(ipt=2), cc=(9, 0), block=32)
    assert kb.cubin[:4] == b"\x7fELF"


def test_explicit_temp_storage_shared_by_sorting_calls():
    """One coop.TempStorage serves a radix sort, a radix rank, a merge sort and a TopK."""
    body = """
    ts = coop.TempStorage()
    r = coop.radix_sort_keys(g, keys, temp_storage=ts)
    q = coop.radix_rank(g, keys, temp_storage=ts)
    m = coop.merge_sort_keys(g, keys, temp_storage=ts)
    t = coop.topk_max_keys(g, keys, k=3, temp_storage=ts, algorithm="radix_select")
    for i in range(items_per_thread):
        dst[base + i] = r[i] + m[i] + t[i]
        vdst[base + i] = q[i]
"""
    kb = compile_cubin(sort_kernel(body), _argtypes(ipt=4), cc=(9, 0), block=128)
    assert_inlined(kb)
    regions = re.findall(r"\.shared\s+\.align\s+\d+\s+\.b8\s+(\w+)\[(\d+)\]", kb.ptx)
    assert len(regions) == 1, regions  # one region, as large as the largest need


def test_compile_cubin_keeps_the_decorators_launch_bounds():
    """``@cuda.jit(launch_bounds=(128, 8))`` caps the registers of a 128 x 16 radix sort (72
    without it on sm_90, with 32-bit shared addresses) so that eight blocks fit an SM, in
    ``compile_cubin`` as at launch."""
    types = numba_types()
    argtypes = (types.uint32[::1], types.uint32[::1], 16)
    free = compile_cubin(module_from_source(TILE_SORT.format(decorator="")).kernel, argtypes, block=128)
    bounded = compile_cubin(module_from_source(TILE_SORT.format(decorator="(launch_bounds=(128, 8))")).kernel,
                            argtypes, block=128)
    assert free.registers > 64, free.summary()
    assert bounded.registers <= 65536 // (8 * 128), bounded.summary()
