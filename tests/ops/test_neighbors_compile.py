"""Adjacent difference and discontinuity compile with CUB and the user callbacks inlined.

Builds the GPU test kernels themselves (every direction, mode, neighbour item,
valid_items and callback; every dtype and items_per_thread) so a GPU run can
only find numerical problems.
"""

from __future__ import annotations

import re

import pytest

from .test_neighbors import DTYPES, ITEMS, neighbors_kernel

pytestmark = pytest.mark.compile

nb = pytest.importorskip("numba_cuda_mlir")


def _compile(kernel, argtypes, **kw):
    from cuda.coop.numba_mlir import compile_cubin

    return compile_cubin(kernel, argtypes, **kw)


def _argtypes(dtype, ipt):
    from numba_cuda_mlir.numba_cuda import types

    t = getattr(types, dtype)
    return (t[::1], t[::1], types.int64[::1], t[:, ::1], types.int32[:, ::1], ipt)


def _assert_inlined(kb, cc):
    assert kb.cubin[:4] == b"\x7fELF"
    assert f".target sm_{cc[0]}{cc[1]}" in kb.ptx
    assert not re.search(r"^\s*call", kb.ptx, re.M), "a call (CUB wrapper or user callback) survived LTO"
    assert "coop_neighbors" not in kb.ptx and "coop_cb_" not in kb.ptx


# Every dtype, each with one of the items_per_thread values (all of them covered).
GPU_KERNELS = [(d, ITEMS[i % len(ITEMS)]) for i, d in enumerate(DTYPES)]


@pytest.mark.parametrize("dtype,ipt", GPU_KERNELS, ids=[f"{d}-ipt{i}" for d, i in GPU_KERNELS])
def test_gpu_test_kernels_compile(dtype, ipt, nvdisasm):
    import numpy as np

    kb = _compile(neighbors_kernel(dtype), _argtypes(dtype, ipt), cc=(9, 0), block=128)
    _assert_inlined(kb, (9, 0))
    # One scratch region shared by every call: two items per thread (first and last items).
    assert kb.shared_bytes() == 2 * 128 * np.dtype(dtype).itemsize
    assert "bar.sync" in kb.ptx or "barrier.sync" in kb.ptx
    if nvdisasm:
        sass = kb.sass()
        calls = [l for l in sass.splitlines() if "CALL" in l and "__cuda_sm" not in l]
        assert not calls, calls


@pytest.mark.parametrize("block", [(8, 4, 4), (10, 5, 1)], ids=["3d", "2d-50"])
def test_multidimensional_blocks_compile(block):
    _assert_inlined(_compile(neighbors_kernel("int32"), _argtypes("int32", 3), cc=(9, 0), block=block), (9, 0))


@pytest.mark.parametrize("cc", [(8, 0), (12, 0)], ids=["sm80", "sm120"])
def test_other_architectures(cc):
    _assert_inlined(_compile(neighbors_kernel("float64"), _argtypes("float64", 2), cc=cc, block=64), cc)
