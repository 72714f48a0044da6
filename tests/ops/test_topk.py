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

from cuda.coop.reference import topk as ref
from cuda.coop.reference.radix import ordered_bits

from ..kernelgen import module_from_source
from .test_merge_sort import DTYPES, gpu_launch, other_value_dtype, random_keys

ITEMS = [1, 4, 9]
BLOCK = 128
STATIC_K = 5

# (op, kwargs, values, k ("rt" = per block), valid_items used), run with each algorithm.
_VARIANTS = [
    ("topk_min_keys", "k=kr, valid_items=vi", None, "rt", True),
    ("topk_max_keys", f"k={STATIC_K}", None, STATIC_K, False),
    ("topk_min_pairs", "k=kr, valid_items=vi", "index", "rt", True),
    ("topk_max_pairs", "k=kr, valid_items=vi", "index", "rt", True),
    # k by position after the operands (NVIDIA's spelling), runtime and compile-time.
    ("topk_max_keys", "kr", None, "rt", False),
    ("topk_min_pairs", "kr", "other", "rt", False),
    ("topk_min_keys", f"{STATIC_K}, valid_items=vi", None, STATIC_K, True),
]
ALGORITHMS = ["radix_sort", "radix_select"]
# (row, op, kwargs, values, k, valid_items used)
CASES = [(row, op, f'{kws}, algorithm="{algo}"', vals, k, vi)
         for row, (algo, (op, kws, vals, k, vi)) in enumerate(
             (algo, variant) for algo in ALGORITHMS for variant in _VARIANTS)]


def topk_kernel(dtype: str):
    lines = []
    for row, op, kws, vals, _k, _vi in CASES:
        if vals is None:
            lines.append(f"""
    r = coop.{op}(g, k, {kws})
    for i in range(items_per_thread):
        out_k[{row}, base + tid * items_per_thread + i] = r[i]
""")
        else:
            vin, vout = ("v", "out_v") if vals == "index" else ("w", "out_w")
            lines.append(f"""
    r, s = coop.{op}(g, k, {vin}, {kws})
    for i in range(items_per_thread):
        out_k[{row}, base + tid * items_per_thread + i] = r[i]
        {vout}[{row}, base + tid * items_per_thread + i] = s[i]
""")
    source = f"""
DT = np.{dtype}
WT = np.{other_value_dtype(dtype)}

@cuda.jit
def kernel(keys, out_k, out_v, out_w, ks, valid, items_per_thread):
    g = coop.this_block()
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    nthreads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    base = cuda.blockIdx.x * nthreads * items_per_thread
    kr = ks[cuda.blockIdx.x]
    vi = valid[cuda.blockIdx.x]
    k = coop.ThreadData(items_per_thread, dtype=DT)
    v = coop.ThreadData(items_per_thread, dtype=np.int32)
    w = coop.ThreadData(items_per_thread, dtype=WT)
    for i in range(items_per_thread):
        k[i] = keys[base + tid * items_per_thread + i]
        v[i] = tid * items_per_thread + i
        w[i] = WT(tid * items_per_thread + i)
""" + "".join(lines)
    return module_from_source(source).kernel


def k_and_valid(rng, tile):
    """(k, valid_items) per block: the edges of both clamps and two random pairs."""
    pairs = [(tile, 10**9), (0, tile), (-3, 10), (tile + 50, tile - 1), (7, 3), (1, 0), (tile, -2),
             (int(rng.integers(1, tile + 1)), int(rng.integers(1, tile + 1))),
             (int(rng.integers(1, 17)), tile)]
    return (np.array([p[0] for p in pairs], dtype=np.int32), np.array([p[1] for p in pairs], dtype=np.int64))


def check_selection(got_keys, got_values, tile_keys, tile_values, *, k, largest, valid_items, exact_positions,
                    label):
    """The first m result positions against the model: multiset, argpartition bound, pairs."""
    pos = ref.selected_positions(tile_keys, k, largest=largest, valid_items=valid_items)
    m = len(pos)
    got = got_keys[:m]
    order = lambda keys: np.sort(ordered_bits(keys))  # noqa: E731 - multiset in radix order
    np.testing.assert_array_equal(order(got), order(tile_keys[pos]), err_msg="selected keys (multiset) " + label)
    n_valid = len(tile_keys) if valid_items is None else int(min(max(valid_items, 0), len(tile_keys)))
    rest = np.setdiff1d(np.arange(n_valid), pos)
    if m and len(rest):
        sel, others = ordered_bits(got), ordered_bits(tile_keys[rest])
        if largest:
            assert sel.min() >= others.max(), "an unselected key is larger " + label
        else:
            assert sel.max() <= others.min(), "an unselected key is smaller " + label
    if got_values is None:
        return
    vals = got_values[:m]
    if exact_positions:
        # Values are tile positions: each must carry its own key, once, and ties
        # at the k-th key go to the earlier positions.
        assert len(np.unique(vals)) == m, "a position was selected twice " + label
        assert ((vals >= 0) & (vals < n_valid)).all(), "a position past valid_items " + label
        np.testing.assert_array_equal(tile_keys[vals], got, err_msg="value left its key " + label)
        np.testing.assert_array_equal(np.sort(vals), np.sort(pos), err_msg="tie-break positions " + label)
    else:
        exp = sorted(zip(ordered_bits(tile_keys[pos]).tolist(), tile_values[pos].tolist()))
        assert sorted(zip(ordered_bits(got).tolist(), vals.tolist())) == exp, "pairs (multiset) " + label


def run_topk(dtype, ipt, block=(BLOCK, 1, 1), seed=0, launch=gpu_launch):
    """Run the kernel (``launch`` may emulate it, see the unit test) and check every case."""
    rng = np.random.default_rng(seed)
    threads = int(np.prod(block))
    tile = threads * ipt
    ks, valid = k_and_valid(rng, tile)
    nblocks = len(ks)
    n = nblocks * tile
    keys = random_keys(rng, dtype, n)
    if np.dtype(dtype).kind == "f":
        keys[np.isnan(keys)] = 0.25  # NaNs order by their bits in TopK; np.argpartition differs
    wdt = np.dtype(other_value_dtype(dtype))
    out_k = np.zeros((len(CASES), n), dtype=keys.dtype)
    out_v = np.full((len(CASES), n), -1, dtype=np.int32)
    out_w = np.zeros((len(CASES), n), dtype=wdt)
    kernel = topk_kernel(dtype) if launch is gpu_launch else dtype
    launch(kernel, nblocks, block, keys, out_k, out_v, out_w, ks, valid, ipt)
    index = np.arange(tile, dtype=np.int32)
    for b in range(nblocks):
        sl = slice(b * tile, (b + 1) * tile)
        for row, op, _kws, vals, k, use_vi in CASES:
            k = int(ks[b]) if k == "rt" else k
            vi = int(valid[b]) if use_vi else None
            values = {None: None, "index": index, "other": index.astype(wdt)}[vals]
            got_v = None if vals is None else (out_v if vals == "index" else out_w)[row, sl]
            check_selection(out_k[row, sl], got_v, keys[sl], values, k=k, largest="max" in op, valid_items=vi,
                            exact_positions=vals == "index",
                            label=f"{op} {dtype} ipt={ipt} block#{b} k={k} valid={vi}")


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
