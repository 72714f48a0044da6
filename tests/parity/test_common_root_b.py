"""Parity: NVIDIA's common-root runtime tests for the sorting families, top-k, run-length decode
and payload inference, checked against NumPy.

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/``
``test_common_root_merge_sort.py``, ``test_common_root_radix_sort.py``,
``test_common_root_radix_rank.py``, ``test_common_root_topk.py``,
``test_common_root_run_length_decode.py`` and ``test_common_root_payload_inference.py``.
The kernels are ours; the calls (``ThreadData(n)`` with the dtype left to inference,
``compare_op=`` device functions, ``begin_bit=``/``end_bit=``/``radix_bits=`` as kernel
arguments, runtime ``k``, ``relative_offsets=``/``total_decoded_size=``) are those tests' calls.
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda

from ..compiler import qualified as numba_coop
from cuda import coop

from ._helpers import poison

pytestmark = pytest.mark.gpu

_IPT = 2
_N = 64 * _IPT


@cuda.jit(device=True)
def _less(a, b):
    return a < b


@cuda.jit(device=True)
def _greater(a, b):
    return a > b


def _ordered(values, begin_bit, end_bit):
    """CUB's radix digit: the bits [begin_bit, end_bit) of the key with the sign bit flipped."""
    bits = values.dtype.itemsize * 8
    u = values.view(np.dtype(f"uint{bits}")).astype(object)
    if np.issubdtype(values.dtype, np.signedinteger):
        u = u ^ (1 << (bits - 1))
    return np.array([(int(x) >> begin_bit) & ((1 << (end_bit - begin_bit)) - 1) for x in u], dtype=object)


def _radix_order(values, begin_bit, end_bit, descending):
    d = _ordered(values, begin_bit, end_bit)
    order = sorted(range(values.size), key=lambda i: (-d[i] if descending else d[i], i))
    return values[np.asarray(order)]


def _keys(rng, dtype, count=_N):
    info = np.iinfo(dtype)
    keys = rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)
    keys[9::9] = keys[8::9][: keys[9::9].size]  # neighbouring duplicates
    keys[:4] = [info.min, info.max, 0, 1]
    return keys


@cuda.jit
def _merge_block(source, kept, full, qfull, partial):
    t = cuda.threadIdx.x
    a = coop.ThreadData(_IPT)
    b = numba_coop.ThreadData(_IPT)
    c = coop.ThreadData(_IPT)
    for i in range(_IPT):
        v = source[t * _IPT + i]
        a[i] = v
        b[i] = v
        c[i] = v
    r1 = coop.merge_sort_keys(coop.this_block(), a)
    r2 = numba_coop.merge_sort_keys(numba_coop.this_block(), b, compare_op=_less)
    r3 = coop.merge_sort_keys(coop.this_block(), c, descending=True, valid_items=117,
                              oob_default=-2_147_483_648)
    for i in range(_IPT):
        k = t * _IPT + i
        kept[k] = a[i]
        full[k] = r1[i]
        qfull[k] = r2[i]
        partial[k] = r3[i]


@cuda.jit
def _merge_warp(source, full, qfull, partial):
    t = cuda.threadIdx.x
    a = coop.ThreadData(_IPT)
    b = numba_coop.ThreadData(_IPT)
    c = coop.ThreadData(_IPT)
    for i in range(_IPT):
        v = source[t * _IPT + i]
        a[i] = v
        b[i] = v
        c[i] = v
    r1 = coop.merge_sort_keys(coop.this_warp(), a, descending=True)
    r2 = numba_coop.merge_sort_keys(numba_coop.this_warp(), b, compare_op=_greater)
    r3 = coop.merge_sort_keys(coop.this_warp(), c, valid_items=53, oob_default=2_147_483_647)
    for i in range(_IPT):
        k = t * _IPT + i
        full[k] = r1[i]
        qfull[k] = r2[i]
        partial[k] = r3[i]


def test_merge_sort_keys_block_and_warp_with_inferred_dtype(rng):
    """Mirrors test_common_root_merge_sort.py::test_common_and_qualified_merge_sort_match_independent_oracles_and_preserve_input."""
    values = rng.integers(-9, 10, _N, dtype=np.int32)
    outs = [poison(values) for _ in range(4)]
    _merge_block[1, 64](values, *outs)
    cuda.synchronize()
    kept, full, qfull, partial = outs
    np.testing.assert_array_equal(kept, values)
    np.testing.assert_array_equal(full, np.sort(values))
    np.testing.assert_array_equal(qfull, np.sort(values))
    np.testing.assert_array_equal(partial[:117], np.sort(values[:117])[::-1])
    outs = [poison(values) for _ in range(3)]
    _merge_warp[1, 64](values, *outs)
    cuda.synchronize()
    for base in (0, 64):
        w = values[base:base + 64]
        np.testing.assert_array_equal(outs[0][base:base + 64], np.sort(w)[::-1])
        np.testing.assert_array_equal(outs[1][base:base + 64], np.sort(w)[::-1])
        np.testing.assert_array_equal(outs[2][base:base + 53], np.sort(w[:53]))


@cuda.jit
def _merge_dtypes(source, block_out, warp_out):
    t = cuda.threadIdx.x
    keys = coop.ThreadData(_IPT, dtype=source.dtype)
    for i in range(_IPT):
        keys[i] = source[t * _IPT + i]
    b = coop.merge_sort_keys(coop.this_block(), keys, temp_storage=coop.TempStorage())
    w = coop.merge_sort_keys(coop.this_warp(), keys, descending=True)
    for i in range(_IPT):
        block_out[t * _IPT + i] = b[i]
        warp_out[t * _IPT + i] = w[i]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_merge_sort_keys_integer_dtypes(rng, dtype):
    """Mirrors test_common_root_merge_sort.py::test_portable_integer_dtypes_preserve_type_and_match_block_and_warp_oracles."""
    values = _keys(rng, dtype)
    block_out, warp_out = np.full_like(values, 7), np.full_like(values, 7)
    _merge_dtypes[1, 64](values, block_out, warp_out)
    cuda.synchronize()
    np.testing.assert_array_equal(block_out, np.sort(values))
    for base in (0, 64):
        np.testing.assert_array_equal(warp_out[base:base + 64], np.sort(values[base:base + 64])[::-1])


@cuda.jit
def _merge_pairs(keys_in, values_in, bk, bv, wk, wv):
    t = cuda.threadIdx.x
    keys = coop.ThreadData(_IPT)
    vals = coop.ThreadData(_IPT)
    for i in range(_IPT):
        keys[i] = keys_in[t * _IPT + i]
        vals[i] = values_in[t * _IPT + i]
    block = coop.merge_sort_pairs(coop.this_block(), keys, vals)
    warp = coop.merge_sort_pairs(coop.this_warp(), keys, vals, descending=True)
    for i in range(_IPT):
        k = t * _IPT + i
        bk[k] = block[0][i]
        bv[k] = block[1][i]
        wk[k] = warp[0][i]
        wv[k] = warp[1][i]


def test_merge_sort_pairs_keep_their_association(rng):
    """Mirrors test_common_root_merge_sort.py::test_common_merge_sort_pairs_match_qualified_and_preserve_association."""
    keys = rng.integers(-9, 10, _N, dtype=np.int32)
    values = np.arange(_N, dtype=np.float64) + 0.5
    bk, wk = poison(keys), poison(keys)
    bv, wv = poison(values), poison(values)
    _merge_pairs[1, 64](keys, values, bk, bv, wk, wv)
    cuda.synchronize()
    np.testing.assert_array_equal(bk, np.sort(keys))
    assert sorted(zip(bk, bv)) == sorted(zip(keys, values))
    for base in (0, 64):
        np.testing.assert_array_equal(wk[base:base + 64], np.sort(keys[base:base + 64])[::-1])
        assert sorted(zip(wk[base:base + 64], wv[base:base + 64])) == sorted(zip(keys[base:base + 64], values[base:base + 64]))


@cuda.jit
def _radix_sorts(source, kept, full, high, middle, begin_only, sub_begin, sub_end):
    t = cuda.threadIdx.x
    keys = coop.ThreadData(_IPT, dtype=source.dtype)
    for i in range(_IPT):
        keys[i] = source[t * _IPT + i]
    block = coop.this_block()
    r1 = coop.radix_sort_keys(block, keys, temp_storage=coop.TempStorage())
    r2 = coop.radix_sort_keys(block, keys, begin_bit=begin_only, descending=True)
    r3 = numba_coop.radix_sort_keys(numba_coop.this_block(), keys, begin_bit=sub_begin, end_bit=sub_end)
    for i in range(_IPT):
        k = t * _IPT + i
        kept[k] = keys[i]
        full[k] = r1[i]
        high[k] = r2[i]
        middle[k] = r3[i]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_radix_sort_keys_bit_ranges_as_kernel_arguments(rng, dtype):
    """Mirrors test_common_root_radix_sort.py::test_common_and_qualified_radix_sort_match_cub_bit_order_and_preserve_input."""
    values = _keys(rng, dtype)
    bits = values.dtype.itemsize * 8
    outs = [np.full_like(values, 7) for _ in range(4)]
    _radix_sorts[1, 64](values, *outs, np.int32(7), np.int32(4), np.int32(13))
    cuda.synchronize()
    kept, full, high, middle = outs
    np.testing.assert_array_equal(kept, values)
    np.testing.assert_array_equal(full, np.sort(values))
    np.testing.assert_array_equal(high, _radix_order(values, 7, bits, True))
    np.testing.assert_array_equal(middle, _radix_order(values, 4, 13, False))


@cuda.jit
def _radix_pairs(keys_in, values_in, ko, vo):
    t = cuda.threadIdx.x
    keys = coop.ThreadData(_IPT, dtype=keys_in.dtype)
    vals = coop.ThreadData(_IPT, dtype=values_in.dtype)
    for i in range(_IPT):
        keys[i] = keys_in[t * _IPT + i]
        vals[i] = values_in[t * _IPT + i]
    r = coop.radix_sort_pairs(coop.this_block(), keys, vals, descending=True)
    for i in range(_IPT):
        ko[t * _IPT + i] = r[0][i]
        vo[t * _IPT + i] = r[1][i]


def test_radix_sort_pairs_descending(rng):
    """Mirrors test_common_root_radix_sort.py::test_common_radix_sort_pairs_match_qualified_and_preserve_association."""
    keys = _keys(rng, np.int64)
    values = np.arange(_N, dtype=np.float32) + np.float32(0.25)
    ko, vo = poison(keys), poison(values)
    _radix_pairs[1, 64](keys, values, ko, vo)
    cuda.synchronize()
    np.testing.assert_array_equal(ko, _radix_order(keys, 0, 64, True))
    assert sorted(zip(ko, vo)) == sorted(zip(keys, values))


def _stable_ranks(values, begin_bit, end_bit, descending):
    d = _ordered(values, begin_bit, end_bit)
    order = sorted(range(values.size), key=lambda i: (-d[i] if descending else d[i], i))
    ranks = np.empty(values.size, np.int32)
    ranks[np.asarray(order)] = np.arange(values.size)
    return ranks


def _rank_kernel(begin_bit, bits):
    radix_bits = bits - begin_bit

    @cuda.jit
    def kernel(source, asc, qasc, desc):
        t = cuda.threadIdx.x
        keys = coop.ThreadData(_IPT, dtype=source.dtype)
        for i in range(_IPT):
            keys[i] = source[t * _IPT + i]
        a = coop.radix_rank(coop.this_block(), keys, begin_bit=begin_bit, end_bit=bits)
        b = numba_coop.radix_rank(numba_coop.this_block(), keys, begin_bit=begin_bit, radix_bits=radix_bits)
        c = coop.radix_rank(coop.this_block(), keys, begin_bit=begin_bit, radix_bits=radix_bits,
                            descending=True)
        for i in range(_IPT):
            asc[t * _IPT + i] = a[i]
            qasc[t * _IPT + i] = b[i]
            desc[t * _IPT + i] = c[i]

    return kernel


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_radix_rank_top_digit_end_bit_or_radix_bits(rng, dtype):
    """Mirrors test_common_root_radix_rank.py::test_common_and_qualified_radix_rank_match_stable_bit_ordered_oracles."""
    values = _keys(rng, dtype)
    bits = values.dtype.itemsize * 8
    outs = [poison(_N, np.int32) for _ in range(3)]
    _rank_kernel(bits - 4, bits)[1, 64](values, *outs)
    cuda.synchronize()
    np.testing.assert_array_equal(outs[0], _stable_ranks(values, bits - 4, bits, False))
    np.testing.assert_array_equal(outs[1], _stable_ranks(values, bits - 4, bits, False))
    np.testing.assert_array_equal(outs[2], _stable_ranks(values, bits - 4, bits, True))


def test_radix_rank_eight_bit_digit(rng):
    """Mirrors test_common_root_radix_rank.py::test_common_and_qualified_radix_rank_execute_width_eight_boundary."""
    values = _keys(rng, np.int32)
    outs = [poison(_N, np.int32) for _ in range(3)]
    _rank_kernel(24, 32)[1, 64](values, *outs)
    cuda.synchronize()
    np.testing.assert_array_equal(outs[0], _stable_ranks(values, 24, 32, False))


@cuda.jit
def _topk_partial(source, top, bottom, kept, k, valid, begin_bit, end_bit):
    t = cuda.threadIdx.x
    keys = coop.ThreadData(_IPT, dtype=source.dtype)
    for i in range(_IPT):
        keys[i] = source[t * _IPT + i]
    hi = coop.topk_max_keys(coop.this_block(), keys, k, valid_items=valid, begin_bit=begin_bit, end_bit=end_bit)
    lo = numba_coop.topk_min_keys(numba_coop.this_block(), keys, k, valid_items=valid, begin_bit=begin_bit)
    for i in range(_IPT):
        j = t * _IPT + i
        if j < k:
            top[j] = hi[i]
            bottom[j] = lo[i]
        kept[j] = keys[i]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_topk_keys_partial_tile_and_bit_range(rng, dtype):
    """Mirrors test_common_root_topk.py::test_common_and_qualified_partial_topk_match_bit_ordered_oracle_and_preserve_input."""
    values = _keys(rng, dtype, 64)
    bits = values.dtype.itemsize * 8
    k, valid, begin = 11, 57, bits - 5
    top, bottom, kept = (np.zeros_like(values) for _ in range(3))
    _topk_partial[1, 32](values, top, bottom, kept, np.int32(k), np.int32(valid), np.int32(begin), np.int32(bits))
    cuda.synchronize()
    np.testing.assert_array_equal(kept, values)
    digits = np.sort(_ordered(values[:valid], begin, bits))
    np.testing.assert_array_equal(np.sort(_ordered(top[:k], begin, bits)), digits[-k:])
    np.testing.assert_array_equal(np.sort(_ordered(bottom[:k], begin, bits)), digits[:k])


@cuda.jit
def _topk_pairs(keys_in, values_in, tk, tv, bk, bv, k, valid):
    t = cuda.threadIdx.x
    keys = coop.ThreadData(_IPT, dtype=keys_in.dtype)
    vals = coop.ThreadData(_IPT, dtype=values_in.dtype)
    for i in range(_IPT):
        keys[i] = keys_in[t * _IPT + i]
        vals[i] = values_in[t * _IPT + i]
    hi = coop.topk_max_pairs(coop.this_block(), keys, vals, k)
    lo = coop.topk_min_pairs(coop.this_block(), keys, vals, k, valid_items=valid)
    for i in range(_IPT):
        j = t * _IPT + i
        if j < k:
            tk[j] = hi[0][i]
            tv[j] = hi[1][i]
            bk[j] = lo[0][i]
            bv[j] = lo[1][i]


def test_topk_pairs_runtime_k(rng):
    """Mirrors test_common_root_topk.py::test_common_topk_pairs_match_qualified_oracles_and_preserve_association."""
    keys = rng.permutation(np.arange(-32, 32, dtype=np.int32))
    values = np.arange(64, dtype=np.float64) + 0.5
    k, valid = 11, 57
    tk, bk = poison(keys), poison(keys)
    tv, bv = poison(values), poison(values)
    _topk_pairs[1, 32](keys, values, tk, tv, bk, bv, np.int32(k), np.int32(valid))
    cuda.synchronize()
    np.testing.assert_array_equal(np.sort(tk[:k]), np.sort(keys)[-k:])
    np.testing.assert_array_equal(np.sort(bk[:k]), np.sort(keys[:valid])[:k])
    pairs = dict(zip(keys, values))
    assert all(pairs[a] == b for a, b in zip(tk[:k], tv[:k]))
    assert all(pairs[a] == b for a, b in zip(bk[:k], bv[:k]))


@cuda.jit
def _topk_full(source, top, bottom, k):
    t = cuda.threadIdx.x
    keys = coop.ThreadData(_IPT, dtype=source.dtype)
    for i in range(_IPT):
        keys[i] = source[t * _IPT + i]
    hi = coop.topk_max_keys(coop.this_block(), keys, k)
    lo = coop.topk_min_keys(coop.this_block(), keys, k)
    for i in range(_IPT):
        j = t * _IPT + i
        if j < k:
            top[j] = hi[i]
            bottom[j] = lo[i]


@pytest.mark.parametrize("k", [1, 64])
def test_topk_keys_k_boundaries(rng, k):
    """Mirrors test_common_root_topk.py::test_common_and_qualified_full_topk_cover_k_boundaries."""
    values = _keys(rng, np.int32, 64)
    top, bottom = poison(values), poison(values)
    _topk_full[1, 32](values, top, bottom, np.int32(k))
    cuda.synchronize()
    np.testing.assert_array_equal(np.sort(top[:k]), np.sort(values)[-k:])
    np.testing.assert_array_equal(np.sort(bottom[:k]), np.sort(values)[:k])


@cuda.jit
def _decode(values, lengths, window_offset, decoded_out, relative_out, totals):
    t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
    runs = coop.ThreadData(2, dtype=values.dtype)
    sizes = coop.ThreadData(2, dtype=lengths.dtype)
    for i in range(2):
        runs[i] = values[t * 2 + i]
        sizes[i] = lengths[t * 2 + i]
    plain = coop.run_length_decode(coop.this_block(), runs, sizes, decoded_items_per_thread=3,
                                   decoded_window_offset=window_offset)
    relative = numba_coop.ThreadData(3, dtype=lengths.dtype)
    total = numba_coop.ThreadData(1, dtype=lengths.dtype)
    numba_coop.run_length_decode(numba_coop.this_block(), runs, sizes, decoded_items_per_thread=3,
                                 decoded_window_offset=window_offset, relative_offsets=relative,
                                 total_decoded_size=total)
    for i in range(3):
        decoded_out[t * 3 + i] = plain[i]
        relative_out[t * 3 + i] = relative[i]
    totals[t] = total[0]


@pytest.mark.parametrize("value_dtype,length_dtype", [
    (np.uint8, np.uint64), (np.int32, np.int32), (np.uint32, np.uint32), (np.int64, np.int64),
    (np.uint64, np.uint32)])
def test_run_length_decode_window_dtypes(rng, value_dtype, length_dtype):
    """Mirrors test_common_root_run_length_decode.py::test_common_and_qualified_run_length_decode_match_window_oracle_and_preserve_inputs."""
    values = rng.integers(0, 100, 128).astype(value_dtype)
    lengths = np.zeros(128, length_dtype)
    lengths[:7] = rng.integers(1, 5, 7)
    decoded = np.repeat(values[:7], lengths[:7].astype(np.int64))
    relative = np.concatenate([np.arange(n) for n in lengths[:7].astype(np.int64)])
    sentinel = np.iinfo(length_dtype).max if np.dtype(length_dtype).kind == "u" else -1
    for offset in (4, decoded.size + 3):
        out = np.full(192, 77, value_dtype)
        rel = np.zeros(192, length_dtype)
        totals = np.zeros(64, length_dtype)
        _decode[1, (8, 4, 2)](values, lengths, np.asarray(offset, length_dtype)[()], out, rel, totals)
        cuda.synchronize()
        exp, exp_rel = np.zeros(192, value_dtype), np.full(192, sentinel, length_dtype)
        window = decoded[offset:offset + 192]
        exp[:window.size] = window
        exp_rel[:window.size] = relative[offset:offset + 192]
        np.testing.assert_array_equal(out, exp)
        np.testing.assert_array_equal(rel, exp_rel)
        np.testing.assert_array_equal(totals, np.full(64, decoded.size, length_dtype))


@cuda.jit
def _numpy_dtype_fill(source, sorted_out, heads_out, counts_out):
    t = cuda.threadIdx.x
    block = coop.this_block()
    keys = coop.ThreadData(_IPT, dtype=np.int32)
    for i in range(_IPT):
        keys[i] = source[t * _IPT + i]
    ordered = coop.radix_sort_keys(block, keys)
    coop.store(block, sorted_out, ordered)
    coop.store(block, heads_out, coop.discontinuity(block, ordered))
    counts = coop.histogram(block, keys, bins=16, bins_per_thread=1, counter_dtype=np.int32)
    if t < 16:
        counts_out[t] = counts[0]


def test_numpy_class_dtype_filled_by_hand_reaches_sort_discontinuity_histogram(rng):
    """Mirrors test_common_root_payload_inference.py::test_numpy_scalar_class_dtype_with_manual_fill_reaches_sort_collectives."""
    values = rng.integers(0, 16, _N, dtype=np.int32)
    sorted_out, heads = poison(values), poison(values)
    counts = poison(16, np.int32)
    _numpy_dtype_fill[1, 64](values, sorted_out, heads, counts)
    cuda.synchronize()
    s = np.sort(values)
    np.testing.assert_array_equal(sorted_out, s)
    np.testing.assert_array_equal(heads, np.concatenate(([1], s[1:] != s[:-1])).astype(np.int32))
    np.testing.assert_array_equal(counts, np.bincount(values, minlength=16))


@cuda.jit
def _load_result_sorted(source, sorted_out):
    block = coop.this_block()
    items = coop.ThreadData(_IPT, dtype=np.int32)
    loaded = coop.load(block, source, items)
    coop.store(block, sorted_out, coop.radix_sort_keys(block, loaded))


def test_load_result_feeds_radix_sort(rng):
    """Mirrors test_common_root_payload_inference.py::test_load_result_feeds_radix_sort."""
    values = rng.integers(-1000, 1000, _N, dtype=np.int32)
    out = poison(values)
    _load_result_sorted[1, 64](values, out)
    cuda.synchronize()
    np.testing.assert_array_equal(out, np.sort(values))
