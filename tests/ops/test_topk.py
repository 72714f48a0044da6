"""TopK on a device: selections checked as multisets against np.argpartition-style models.

One kernel per (key dtype, items_per_thread) runs the four operations, with
both algorithms, with a runtime ``k`` and ``valid_items`` (one pair per block:
full, k=0, negative k, k beyond the tile, k beyond valid_items, empty, random)
and a compile-time ``k``.  Results are unordered by contract, so each check compares the selected
prefix as a multiset, checks that no unselected valid key beats a selected one,
and, for pairs whose values are tile positions, that every value still sits
with its key and that ties went to the earlier positions.  30 kernels.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.reference.radix import ordered_bits

from ..kernelgen import module_from_source
from .merge_sort_kernels import DTYPES, random_keys
from .topk_kernels import ALGORITHMS, ITEMS, run_topk


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("ipt", ITEMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_topk_matrix(dtype, ipt):
    run_topk(dtype, ipt)


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("block", [(8, 4, 4), (16, 6, 1)], ids=["3d-128", "2d-96"])
def test_topk_multidimensional_blocks(block):
    run_topk("int32", 3, block=block, seed=7)


# begin_bit/end_bit (NVIDIA's controls): keys compare by bits [begin, end) of their ordered
# bits.  Runtime bit ranges per block, both algorithms, keys alone and with their positions.
_BIT_RANGES = [(0, None), (3, 11), (None, 5), (7, 7)]  # None: the key's width; (7, 7) is empty


def bits_kernel():
    rows = []
    for row, algo in enumerate(ALGORITHMS):
        rows.append(f"""
    hi = coop.topk_max_keys(g, k, kr, valid_items=vi, begin_bit=lo_bit, end_bit=hi_bit, algorithm="{algo}")
    lo, pos = coop.topk_min_pairs(g, k, v, kr, valid_items=vi, begin_bit=lo_bit, end_bit=hi_bit,
                                  algorithm="{algo}")
    for i in range(ipt):
        out_hi[{row}, base + tid * ipt + i] = hi[i]
        out_lo[{row}, base + tid * ipt + i] = lo[i]
        out_pos[{row}, base + tid * ipt + i] = pos[i]
""")
    return module_from_source("""
@cuda.jit
def kernel(keys, out_hi, out_lo, out_pos, ks, valid, begins, ends):
    ipt = 3
    g = coop.this_block()
    tid = cuda.threadIdx.x
    base = cuda.blockIdx.x * cuda.blockDim.x * ipt
    kr = ks[cuda.blockIdx.x]
    vi = valid[cuda.blockIdx.x]
    lo_bit = begins[cuda.blockIdx.x]
    hi_bit = ends[cuda.blockIdx.x]
    k = coop.ThreadData(ipt, dtype=keys.dtype)
    v = coop.ThreadData(ipt, dtype=np.int32)
    for i in range(ipt):
        k[i] = keys[base + tid * ipt + i]
        v[i] = tid * ipt + i
""" + "".join(rows)).kernel


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["int32", "uint64", "float32", "int16"])
def test_topk_bit_range(dtype):
    from ..compiler import cuda

    rng = np.random.default_rng(21)
    threads, ipt = 64, 3
    tile = threads * ipt
    bits = np.dtype(dtype).itemsize * 8
    nblocks = len(_BIT_RANGES)
    keys = random_keys(rng, dtype, nblocks * tile)
    if np.dtype(dtype).kind == "f":
        keys[np.isnan(keys)] = 0.25
    begins = np.array([b if b is not None else bits for b, _ in _BIT_RANGES], dtype=np.int32)
    ends = np.array([e if e is not None else bits for _, e in _BIT_RANGES], dtype=np.int32)
    ks = np.array([17, 40, 1, 9], dtype=np.int32)
    valid = np.array([tile, 150, 181, 100], dtype=np.int32)
    out_hi, out_lo = (np.zeros((2, keys.size), keys.dtype) for _ in range(2))
    out_pos = np.full((2, keys.size), -1, np.int32)
    bits_kernel()[nblocks, threads](keys, out_hi, out_lo, out_pos, ks, valid, begins, ends)
    cuda.synchronize()
    for b in range(nblocks):
        lo_bit, hi_bit, k, vi = int(begins[b]), int(ends[b]), int(ks[b]), int(valid[b])
        width = max(hi_bit - lo_bit, 0)
        digit = lambda x: (ordered_bits(x).astype(object) >> lo_bit) & ((1 << width) - 1)  # noqa: E731
        tile_keys = keys[b * tile:(b + 1) * tile]
        want = np.sort(digit(tile_keys[:vi]))
        for row, algo in enumerate(ALGORITHMS):
            label = f"{dtype} {algo} bits [{lo_bit}, {hi_bit}) k={k} valid={vi}"
            sl = slice(b * tile, b * tile + k)
            np.testing.assert_array_equal(np.sort(digit(out_hi[row, sl])), want[-k:], err_msg="max " + label)
            np.testing.assert_array_equal(np.sort(digit(out_lo[row, sl])), want[:k], err_msg="min " + label)
            pos = out_pos[row, sl]
            assert len(np.unique(pos)) == k and ((pos >= 0) & (pos < vi)).all(), "positions " + label
            np.testing.assert_array_equal(tile_keys[pos].view(f"u{keys.itemsize}"),
                                          out_lo[row, sl].view(f"u{keys.itemsize}"), err_msg="pairs " + label)
            if width == 0:  # every key equal: the first k valid positions, as the ties rule says
                np.testing.assert_array_equal(np.sort(pos), np.arange(k), err_msg="empty range " + label)
