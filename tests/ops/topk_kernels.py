"""What tests/ops/test_topk.py shares with tests/ops/test_sorting_reference.py,
tests/ops/test_topk_compile.py: kept here because test modules do not import each other."""

from __future__ import annotations

import numpy as np

from cuda.coop.reference import topk as ref
from cuda.coop.reference.radix import ordered_bits

from ..kernelgen import module_from_source
from .merge_sort_kernels import KEYS_AND_VALUES, gpu_launch, other_value_dtype, random_keys

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
{KEYS_AND_VALUES}    kr = ks[cuda.blockIdx.x]
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
