"""Shuffle compiles to cubin with CUB inlined, on any machine (no GPU).

Builds the GPU test kernels themselves (every mode, literal/run-time/per-thread
distances, explicit TempStorage) so a GPU run can only find numerical problems.
"""

from __future__ import annotations


import pytest

from .shuffle_kernels import DTYPES, ITEMS, shuffle_kernel
from .cubin_checks import assert_inlined, compile_cubin, sass_calls

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def _argtypes(dtype, ipt):
    from ..compiler import types

    t = getattr(types, dtype)
    return (t[::1], t[::1], types.int64[::1], types.int64[::1], t[:, ::1], t[:, ::1], ipt)


# Every dtype, each with one of the items_per_thread values (all of them covered).
GPU_KERNELS = [(d, ITEMS[i % len(ITEMS)]) for i, d in enumerate(DTYPES)]


@pytest.mark.parametrize("dtype,ipt", GPU_KERNELS, ids=[f"{d}-ipt{i}" for d, i in GPU_KERNELS])
def test_gpu_test_kernels_compile(dtype, ipt, nvdisasm):
    kb = compile_cubin(shuffle_kernel(dtype), _argtypes(dtype, ipt), cc=(9, 0), block=128)
    assert_inlined(kb, (9, 0))
    assert kb.shared_bytes() > 0 and ("bar.sync" in kb.ptx or "barrier.sync" in kb.ptx)
    if nvdisasm:
        sass = kb.sass()
        calls = sass_calls(sass)
        assert not calls, calls
        assert "STS" in sass and "LDS" in sass


@pytest.mark.parametrize("block", [(8, 4, 4), (10, 5, 1)], ids=["3d", "2d-50"])
def test_multidimensional_blocks_compile(block):
    assert_inlined(compile_cubin(shuffle_kernel("int32"), _argtypes("int32", 3), cc=(9, 0), block=block), (9, 0))


def test_sm80():
    assert_inlined(compile_cubin(shuffle_kernel("float32"), _argtypes("float32", 4), cc=(8, 0), block=64), (8, 0))


def _single(call: str):
    from ..kernelgen import module_from_source

    return module_from_source(f"""
@cuda.jit
def kernel(src, dst, d):
    x = coop.ThreadData(4, dtype=np.float32)
    for i in range(4):
        x[i] = src[cuda.threadIdx.x * 4 + i]
    y = {call}
    for i in range(4):
        dst[cuda.threadIdx.x * 4 + i] = y[i]
""").kernel


def test_unit_shift_uses_one_item_per_thread_of_scratch():
    """distance=1 is CUB's BlockShuffle (BLOCK_THREADS items); other distances stage the tile."""
    from ..compiler import types

    args = (types.float32[::1], types.float32[::1], types.int64)
    unit = compile_cubin(_single('coop.shuffle(coop.this_block(), x, mode="up")'), args, cc=(9, 0), block=128)
    other = compile_cubin(_single('coop.shuffle(coop.this_block(), x, mode="up", distance=d)'), args, cc=(9, 0),
                          block=128)
    assert unit.shared_bytes() == 128 * 4
    assert other.shared_bytes() == 128 * 4 * 4
