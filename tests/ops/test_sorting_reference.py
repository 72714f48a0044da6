"""The NumPy models of merge sort, radix sort/rank and TopK agree with NumPy and with each other."""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.ops._sorting import sentinel_bits
from cuda.coop.reference import merge_sort as ms
from cuda.coop.reference import radix as rx
from cuda.coop.reference import topk as tk

from .merge_sort_kernels import DTYPES, random_keys

pytestmark = pytest.mark.unit


def _keys(dtype, n=600, seed=0, nan=True):
    keys = random_keys(np.random.default_rng(seed), dtype, n)
    if not nan and keys.dtype.kind == "f":
        keys[np.isnan(keys)] = 1.5
    return keys


@pytest.mark.parametrize("dtype", DTYPES)
def test_merge_sort_order_is_np_sort(dtype):
    keys = _keys(dtype)
    perm = ms.sort_permutation(keys)
    np.testing.assert_array_equal(keys[perm], np.sort(keys, kind="stable"))
    np.testing.assert_array_equal(perm, np.argsort(keys, kind="stable"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_descending_merge_sort_is_stable_and_reversed(dtype):
    keys = _keys(dtype)
    perm = ms.sort_permutation(keys, descending=True)
    asc = keys[np.argsort(keys, kind="stable")]
    np.testing.assert_array_equal(keys[perm], asc[::-1])
    # Stable: equal keys keep their tile order.
    same = keys[perm][1:] == keys[perm][:-1]
    assert (perm[1:][same] > perm[:-1][same]).all()


def test_merge_sort_partial_tile_and_groups():
    keys = np.array([[5, 1], [4, 4], [9, 0], [2, 7]], dtype=np.int32)  # 4 threads x 2 items
    values = np.arange(8, dtype=np.int32).reshape(4, 2)
    k, v, (kdef, vdef) = ms.merge_sort(keys, values, valid_items=5, oob_default=-1)
    assert k.reshape(-1).tolist() == [1, 4, 4, 5, 9, -1, -1, -1]
    assert v.reshape(-1)[:5].tolist() == [1, 2, 3, 0, 4]
    assert kdef.all() and vdef.reshape(-1).tolist() == [True] * 5 + [False] * 3
    k, _v, _d = ms.merge_sort(keys, group_width=2, descending=True)
    assert k.reshape(-1).tolist() == [5, 4, 4, 1, 9, 7, 2, 0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_radix_order_matches_numpy_without_nan(dtype):
    keys = _keys(dtype, nan=False)
    perm = rx.sort_permutation(keys)
    np.testing.assert_array_equal(perm, np.argsort(keys, kind="stable"))
    # Merge sort and radix sort agree (both stable, -0.0 == +0.0).
    np.testing.assert_array_equal(perm, ms.sort_permutation(keys))
    np.testing.assert_array_equal(rx.sort_permutation(keys, descending=True),
                                  ms.sort_permutation(keys, descending=True))


def test_radix_float_special_values_order():
    keys = np.array([np.nan, 1.0, -np.inf, -0.0, 0.0, np.inf, -1.0, -np.nan], dtype=np.float32)
    perm = rx.sort_permutation(keys)
    out = keys[perm]
    assert np.isnan(out[0]) and np.signbit(out[0])  # negative NaN first
    assert out[1:7].tolist() == [-np.inf, -1.0, -0.0, 0.0, 1.0, np.inf]
    assert perm[3] == 3 and perm[4] == 4  # -0.0 and +0.0 are equal: tile order kept
    assert np.isnan(out[7]) and not np.signbit(out[7])


def test_radix_bit_ranges():
    keys = np.array([0b1010, 0b0101, 0b1001, 0b0110], dtype=np.uint8)
    # Low two bits: 10, 01, 01, 10 -> stable order 0101, 1001, 1010, 0110.
    assert keys[rx.sort_permutation(keys, begin_bit=0, end_bit=2)].tolist() == [0b0101, 0b1001, 0b1010, 0b0110]
    # Empty and clamped ranges.
    assert rx.sort_permutation(keys, begin_bit=5, end_bit=5).tolist() == [0, 1, 2, 3]
    assert rx.sort_permutation(keys, begin_bit=7, end_bit=2).tolist() == [0, 1, 2, 3]
    assert rx.clamp_bits(-3, 100, 8) == (0, 8)
    k, _ = rx.radix_sort(keys.reshape(2, 2), blocked_to_striped=True)
    assert k.tolist() == [[0b0101, 0b1001], [0b0110, 0b1010]]  # thread t slot i = sorted[t + 2i]


@pytest.mark.parametrize("descending", [False, True])
def test_radix_rank_is_a_stable_permutation(descending):
    keys = _keys("int16", 512)
    ranks = rx.radix_rank(keys.reshape(128, 4), begin_bit=3, radix_bits=5, descending=descending)
    flat = ranks.reshape(-1)
    assert sorted(flat.tolist()) == list(range(512))
    d = rx.digits(keys, 3, 5).astype(np.int64)
    order = np.argsort(flat)
    seq = d[order]
    assert (np.diff(seq) <= 0).all() if descending else (np.diff(seq) >= 0).all()
    prefix = rx.exclusive_digit_prefix(keys, 128, begin_bit=3, radix_bits=5, descending=descending).reshape(-1)
    for digit in range(32):
        members = flat[d == digit]
        if len(members):
            assert members.min() == prefix[digit]
    assert (prefix[32:] == 512).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("largest", [False, True])
def test_topk_model_matches_argpartition(dtype, largest):
    keys = _keys(dtype, 500, nan=False)
    for k in (0, 1, 17, 250, 500):
        pos = tk.selected_positions(keys, k, largest=largest)
        assert len(pos) == k
        if k:
            part = np.argpartition(-keys.astype(np.float64) if largest else keys, k - 1)[:k]
            np.testing.assert_array_equal(np.sort(keys[pos]), np.sort(keys[part]))
    pos = tk.selected_positions(keys, 40, largest=largest, valid_items=30)
    assert len(pos) == 30 and (pos < 30).all()
    assert len(tk.selected_positions(keys, -5, largest=largest)) == 0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("largest", [False, True])
def test_sentinel_orders_after_every_key(dtype, largest):
    dt = np.dtype(dtype)
    sentinel = np.array([sentinel_bits(dt, largest)], dtype=f"u{dt.itemsize}").view(dt)
    keys = np.concatenate([_keys(dtype, 200), sentinel])
    ob = rx.ordered_bits(keys)
    if largest:
        assert ob[-1] == ob.min()
    else:
        assert ob[-1] == ob.max()


# --------------------------------------------------------------------------------------
# The GPU tests' harnesses, run on emulated kernels: the checks themselves are sound
# (shapes, masks, clamps), so a device run only reports real differences.
# --------------------------------------------------------------------------------------

def _tiles(nblocks, block, ipt):
    threads = int(np.prod(block))
    return threads, threads * ipt


def _oob(dtype):
    from .merge_sort_kernels import _scalar, oob_text

    return _scalar(dtype, oob_text(dtype))


def emulate_merge_sort(cases, nblocks, block, keys, out_k, out_v, out_w, valid, ipt):
    threads, tile = _tiles(nblocks, block, ipt)
    index = np.arange(tile, dtype=np.int32).reshape(threads, ipt)
    from .merge_sort_kernels import custom_reference

    dtype = keys.dtype.name
    for row, kind, width, op, desc, use_vi, use_oob, vt, cmp in cases:
        sort_key, ref_desc = custom_reference(dtype, desc) if cmp else (None, desc)
        for b in range(nblocks):
            sl = slice(b * tile, (b + 1) * tile)
            vals = index if vt == "index" else index.astype(out_w.dtype)
            k, v, _ = ms.merge_sort(keys[sl].reshape(threads, ipt), vals if op == "merge_sort_pairs" else None,
                                    group_width=None if kind == "block" else width, descending=ref_desc,
                                    sort_key=sort_key, valid_items=int(valid[b]) if use_vi else None,
                                    oob_default=_oob(out_k.dtype) if use_oob else None)
            out_k[row, sl] = k.reshape(-1)
            if v is not None:
                (out_v if vt == "index" else out_w)[row, sl] = v.reshape(-1)


def emulate_radix(kernel, nblocks, block, keys, out_k, out_v, out_w, out_r, out_p, begin_bits, end_bits, valid,
                  ipt):
    from .radix_kernels import rank_cases, sort_cases

    dtype, pitems = kernel
    threads, tile = _tiles(nblocks, block, ipt)
    index = np.arange(tile, dtype=np.int32).reshape(threads, ipt)
    for b in range(nblocks):
        sl = slice(b * tile, (b + 1) * tile)
        slots = keys[sl].reshape(threads, ipt)
        for row, _op, _kws, vals, (bb, eb), desc, striped, use_vi, use_oob in sort_cases(dtype):
            begin = int(begin_bits[b]) if bb == "rt" else bb
            end = int(end_bits[b]) if eb == "rt" else eb
            v = None if vals is None else (index if vals == "index" else index.astype(out_w.dtype))
            work = slots.copy()
            if use_vi:
                # What the C++ does: a sentinel past valid_items, then sort the whole tile.
                vi = int(min(max(valid[b], 0), tile))
                sentinel = np.array([sentinel_bits(keys.dtype, desc)], dtype=f"u{keys.dtype.itemsize}")
                work.reshape(-1)[vi:] = sentinel.view(keys.dtype)[0]
            k, v = rx.radix_sort(work, v, begin_bit=begin, end_bit=end, descending=desc, blocked_to_striped=striped)
            if use_oob:
                k[rx.defined_slots(threads, ipt, valid_items=vi, blocked_to_striped=striped) == 0] = _oob(keys.dtype)
            out_k[row, sl] = k.reshape(-1)
            if v is not None:
                (out_v if vals == "index" else out_w)[row, sl] = v.reshape(-1)
        for row, _kws, rb, rbits, desc, prefix in rank_cases(dtype):
            begin = int(min(max(begin_bits[b], 0), keys.dtype.itemsize * 8)) if rb == "rt" else rb
            out_r[row, sl] = rx.radix_rank(slots, begin_bit=begin, radix_bits=rbits, descending=desc).reshape(-1)
            if prefix:
                out_p[b * threads * pitems:(b + 1) * threads * pitems] = rx.exclusive_digit_prefix(
                    slots, threads, begin_bit=begin, radix_bits=rbits, descending=desc).reshape(-1)


def emulate_topk(dtype, nblocks, block, keys, out_k, out_v, out_w, ks, valid, ipt):
    """What the C++ does: sentinel past valid_items, radix sort (descending for max), first k."""
    from .topk_kernels import CASES

    threads, tile = _tiles(nblocks, block, ipt)
    index = np.arange(tile, dtype=np.int32)
    for b in range(nblocks):
        sl = slice(b * tile, (b + 1) * tile)
        for row, op, _kws, vals, _k, use_vi in CASES:
            largest = "max" in op
            tile_keys = keys[sl].copy()
            if use_vi:
                vi = int(min(max(valid[b], 0), tile))
                sentinel = np.array([sentinel_bits(keys.dtype, largest)], dtype=f"u{keys.dtype.itemsize}")
                tile_keys[vi:] = sentinel.view(keys.dtype)[0]
            perm = rx.sort_permutation(tile_keys, descending=largest)
            if "radix_select" in _kws:
                # The selection in tile order, then the other keys in tile order.
                m = min(max(int(ks[b]) if _k == "rt" else _k, 0), int(min(max(valid[b], 0), tile)) if use_vi
                        else tile)
                chosen = np.sort(perm[:m])
                perm = np.concatenate([chosen, np.setdiff1d(np.arange(tile), chosen)])
            out_k[row, sl] = tile_keys[perm]
            if vals is not None:
                v = index if vals == "index" else index.astype(out_w.dtype)
                (out_v if vals == "index" else out_w)[row, sl] = v[perm]


@pytest.mark.parametrize("dtype,ipt", [("float32", 3), ("uint8", 1), ("int64", 4)])
def test_merge_sort_harness(dtype, ipt):
    from .merge_sort_kernels import run_merge_sort

    run_merge_sort(dtype, ipt, launch=emulate_merge_sort)
    run_merge_sort(dtype, ipt, block=(8, 4, 4), block_only=True, launch=emulate_merge_sort)


@pytest.mark.parametrize("dtype,ipt", [("float64", 7), ("int8", 1), ("uint32", 4)])
def test_radix_harness(dtype, ipt):
    from .radix_kernels import run_radix

    run_radix(dtype, ipt, launch=emulate_radix)
    run_radix(dtype, 3, block=(16, 6, 1), launch=emulate_radix)


@pytest.mark.parametrize("dtype,ipt", [("float32", 9), ("int16", 1), ("uint64", 4), ("int8", 4)])
def test_topk_harness_and_sentinel_scheme(dtype, ipt):
    from .topk_kernels import run_topk

    run_topk(dtype, ipt, launch=emulate_topk)


def test_merge_stages_end_in_the_sort():
    keys = _keys("int32", 8 * 3).reshape(8, 3)
    for width in (None, 4, 2):
        stages = ms.merge_stages(keys, group_width=width, descending=True)
        expected, _v, _d = ms.merge_sort(keys, group_width=width, descending=True)
        np.testing.assert_array_equal(stages[-1][1], expected)
        assert [s[2] for s in stages] == [0] + [2 ** i for i in range(len(stages) - 1)]
        assert stages[-1][2] == (width or 8)


@pytest.mark.parametrize("descending", [False, True])
def test_radix_passes_end_in_the_sort(descending):
    keys = _keys("int16", 8 * 4).reshape(8, 4)
    passes = rx.radix_passes(keys, begin_bit=2, end_bit=15, radix_bits=4, descending=descending)
    assert [p[0] for p in passes] == [(2, 6), (6, 10), (10, 14), (14, 15)]
    expected, _ = rx.radix_sort(keys, begin_bit=2, end_bit=15, descending=descending)
    np.testing.assert_array_equal(passes[-1][2], expected)
