"""TopK compiles to cubin with CUB inlined, on any machine (no GPU).

Also compiles the GPU test kernels (every key dtype, every items_per_thread).
"""

from __future__ import annotations

import pytest

from ..kernelgen import module_from_source
from .merge_sort_kernels import DTYPES, other_value_dtype
from .topk_kernels import ITEMS, topk_kernel
from .cubin_checks import assert_inlined, compile_cubin, numba_types

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def gpu_kernel_argtypes(dtype, ipt):
    types = numba_types()
    key, other = getattr(types, dtype), getattr(types, other_value_dtype(dtype))
    return (key[::1], key[:, ::1], types.int32[:, ::1], other[:, ::1], types.int32[::1], types.int64[::1], ipt)


SAMPLE = [(dtype, ITEMS[i % len(ITEMS)]) for i, dtype in enumerate(DTYPES)]


@pytest.mark.parametrize("dtype,ipt", SAMPLE, ids=[f"{d}-ipt{i}" for d, i in SAMPLE])
def test_gpu_kernels_compile(dtype, ipt):
    kb = compile_cubin(topk_kernel(dtype), gpu_kernel_argtypes(dtype, ipt), cc=(9, 0), block=128)
    assert_inlined(kb)
    assert "bar.sync" in kb.ptx


def test_gpu_kernel_for_multidimensional_blocks_compiles():
    kb = compile_cubin(topk_kernel("int32"), gpu_kernel_argtypes("int32", 3), cc=(9, 0), block=(16, 6, 1))
    assert_inlined(kb)


@pytest.mark.parametrize("algorithm", ["radix_sort", "radix_select"])
@pytest.mark.parametrize("cc", [(9, 0), (8, 0)], ids=["sm90", "sm80"])
def test_topk_pairs_inlined(cc, algorithm, nvdisasm):
    kernel = module_from_source(f"""
ALGORITHM = "{algorithm}"

@cuda.jit
def kernel(src, dst, idx, k, n, items_per_thread):
    g = coop.this_block()
    base = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread + cuda.threadIdx.x * items_per_thread
    keys = coop.ThreadData(items_per_thread, dtype=np.float32)
    vals = coop.ThreadData(items_per_thread, dtype=np.int32)
    for i in range(items_per_thread):
        keys[i] = src[base + i]
        vals[i] = base + i
    r, s = coop.topk_max_pairs(g, keys, vals, k=k, valid_items=n, algorithm=ALGORITHM)
    for i in range(items_per_thread):
        dst[base + i] = r[i]
        idx[base + i] = s[i]
""").kernel
    types = numba_types()
    kb = compile_cubin(kernel, (types.float32[::1], types.float32[::1], types.int32[::1], types.int32, types.int64, 8),
                       cc=cc, block=256)
    assert_inlined(kb, nvdisasm=nvdisasm)
    # Both stage one tile of keys in shared memory (the sort's exchange, or the select's scatter).
    assert kb.shared_bytes() >= 256 * 8 * 4
    if algorithm == "radix_select":
        assert "atom.shared.add" in kb.ptx or "red.shared.add" in kb.ptx
