"""Adjacent difference and discontinuity compile with CUB and the user callbacks inlined.

Builds the GPU test kernels themselves (every direction, mode, neighbour item,
valid_items and callback; every dtype and items_per_thread) so a GPU run can
only find numerical problems.
"""

from __future__ import annotations


import pytest

from ..compiler import SEPARATE_SCRATCH

from .neighbors_kernels import DTYPES, ITEMS, neighbors_kernel
from .cubin_checks import assert_inlined, compile_cubin, sass_calls

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def _argtypes(dtype, ipt):
    from ..compiler import types

    t = getattr(types, dtype)
    return (t[::1], t[::1], types.int64[::1], t[:, ::1], types.int32[:, ::1], ipt)


# Every dtype, each with one of the items_per_thread values (all of them covered).
GPU_KERNELS = [(d, ITEMS[i % len(ITEMS)]) for i, d in enumerate(DTYPES)]


@pytest.mark.xfail_on("numba-cuda", "AssertionError", SEPARATE_SCRATCH)
@pytest.mark.parametrize("dtype,ipt", GPU_KERNELS, ids=[f"{d}-ipt{i}" for d, i in GPU_KERNELS])
def test_gpu_test_kernels_compile(dtype, ipt, nvdisasm):
    import numpy as np

    kb = compile_cubin(neighbors_kernel(dtype), _argtypes(dtype, ipt), cc=(9, 0), block=128)
    assert_inlined(kb, (9, 0))
    # One scratch region shared by every call: two items per thread (first and last items).
    assert kb.shared_bytes() == 2 * 128 * np.dtype(dtype).itemsize
    assert "bar.sync" in kb.ptx or "barrier.sync" in kb.ptx
    if nvdisasm:
        sass = kb.sass()
        calls = sass_calls(sass)
        assert not calls, calls


@pytest.mark.parametrize("block", [(8, 4, 4), (10, 5, 1)], ids=["3d", "2d-50"])
def test_multidimensional_blocks_compile(block):
    assert_inlined(compile_cubin(neighbors_kernel("int32"), _argtypes("int32", 3), cc=(9, 0), block=block), (9, 0))


@pytest.mark.parametrize("cc", [(8, 0), (12, 0)], ids=["sm80", "sm120"])
def test_other_architectures(cc):
    assert_inlined(compile_cubin(neighbors_kernel("float64"), _argtypes("float64", 2), cc=cc, block=64), cc)
