"""Parity: NVIDIA's common-root runtime tests for scan/sum/reduce, exchange, load/store, shuffle,
neighbours and histogram, each kernel once through ``from cuda import coop`` and once through the
qualified module, checked against NumPy.

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/``
``test_common_root_sum_scan.py``, ``test_common_root_exchange.py``,
``test_common_root_load_store.py``, ``test_common_root_shuffle.py``,
``test_common_root_adjacent_discontinuity.py`` and ``test_common_root_histogram.py``.
The kernels are ours; the calls (keywords, defaults, shared ``TempStorage()``, 3-D blocks,
``dtype=int``/``dtype=source.dtype``) are the ones those tests make.
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda, types

from ..compiler import qualified as numba_coop
from cuda import coop

from ._helpers import poison

pytestmark = pytest.mark.gpu

_IPT = 2


@cuda.jit
def _block_sum_scan(source, out, partial):
    t = cuda.threadIdx.x
    group = coop.this_block()
    storage = coop.TempStorage()
    items = coop.ThreadData(_IPT, dtype=types.int32)
    for i in range(_IPT):
        items[i] = source[t * _IPT + i]
    total = coop.sum(group, items)
    first = coop.sum(group, source[t * _IPT], broadcast=False, valid_items=27, algorithm="raking")
    if t == 0:
        partial[0] = first
    running_max = coop.scan(group, items, mode="inclusive", scan_op="max", algorithm="warp_scans",
                            temp_storage=storage)
    ex_sum = coop.exclusive_sum(group, items, temp_storage=storage)
    in_sum = coop.inclusive_sum(group, items, temp_storage=storage)
    ex_max = coop.exclusive_scan(group, items, scan_op="max", initial_value=0, temp_storage=storage)
    in_max = coop.inclusive_scan(group, items, scan_op="max", temp_storage=storage)
    n = cuda.blockDim.x * _IPT
    for i in range(_IPT):
        k = t * _IPT + i
        out[0 * n + k] = total
        out[1 * n + k] = running_max[i]
        out[2 * n + k] = ex_sum[i]
        out[3 * n + k] = in_sum[i]
        out[4 * n + k] = ex_max[i]
        out[5 * n + k] = in_max[i]
        out[6 * n + k] = items[i]


def test_block_sum_and_scans_keep_their_input(rng):
    """Mirrors test_common_root_sum_scan.py::test_common_root_block_sum_scan_preserves_shape_and_input."""
    values = rng.integers(1, 1000, 64, dtype=np.int32)
    out, partial = poison(7 * 64, np.int32), poison(1, np.int32)
    _block_sum_scan[1, 32](values, out, partial)
    cuda.synchronize()
    ex = lambda a, first: np.concatenate(([first], a[:-1]))  # noqa: E731
    expected = [np.full(64, values.sum()), np.maximum.accumulate(values), ex(np.cumsum(values), 0),
                np.cumsum(values), ex(np.maximum.accumulate(values), 0), np.maximum.accumulate(values), values]
    np.testing.assert_array_equal(out.reshape(7, 64), np.stack(expected))
    assert partial[0] == values[::_IPT][:27].sum()


@cuda.jit
def _warp_sum_scan(source, out, partial):
    t = cuda.threadIdx.x
    warp = coop.this_warp()
    v = source[t]
    n = cuda.blockDim.x
    out[0 * n + t] = coop.sum(warp, v)
    first = coop.sum(warp, v, broadcast=False, valid_items=27)
    if t % 32 == 0:
        partial[t // 32] = first
    out[1 * n + t] = coop.scan(warp, v, mode="inclusive", scan_op="max")
    out[2 * n + t] = coop.exclusive_sum(warp, v)
    out[3 * n + t] = coop.inclusive_sum(warp, v)
    out[4 * n + t] = coop.exclusive_scan(warp, v, scan_op="max", initial_value=0)
    out[5 * n + t] = coop.inclusive_scan(warp, v, scan_op="max")


def test_physical_warps_scan_independently(rng):
    """Mirrors test_common_root_sum_scan.py::test_common_root_physical_warps_are_independent."""
    values = rng.integers(1, 1000, 64, dtype=np.int32)
    out, partial = poison(6 * 64, np.int32), poison(2, np.int32)
    _warp_sum_scan[1, 64](values, out, partial)
    cuda.synchronize()
    rows = []
    for w in values.reshape(2, 32):
        rows.append(np.stack([np.full(32, w.sum()), np.maximum.accumulate(w),
                              np.concatenate(([0], np.cumsum(w)[:-1])), np.cumsum(w),
                              np.concatenate(([0], np.maximum.accumulate(w)[:-1])), np.maximum.accumulate(w)]))
    np.testing.assert_array_equal(out.reshape(6, 64), np.concatenate(rows, axis=1))
    np.testing.assert_array_equal(partial, values.reshape(2, 32)[:, :27].sum(axis=1))


@cuda.jit
def _operator_aliases(source, out):
    t = cuda.threadIdx.x
    v = source[t]
    n = cuda.blockDim.x
    out[0 * n + t] = coop.scan(coop.this_block(), v, mode="exclusive", scan_op="+")
    out[1 * n + t] = coop.exclusive_scan(coop.this_block(), v, scan_op="sum")
    out[2 * n + t] = coop.exclusive_scan(coop.this_block(), v, scan_op="multiply", initial_value=1)
    out[3 * n + t] = numba_coop.scan(numba_coop.this_block(), v, mode="exclusive", scan_op="+")
    out[4 * n + t] = numba_coop.exclusive_scan(numba_coop.this_warp(), v, scan_op="sum")
    out[5 * n + t] = numba_coop.exclusive_scan(numba_coop.this_warp(), v, scan_op="multiply", initial_value=1)


def test_scan_operator_aliases_for_block_and_warp(rng):
    """Mirrors test_common_root_sum_scan.py::test_group_first_scan_operator_aliases_are_defined_for_block_and_warp_roots."""
    values = rng.integers(1, 3, 64, dtype=np.int32)
    values[rng.integers(0, 64, 50)] = 1  # keep the products inside int32
    out = poison(6 * 64, np.int32)
    _operator_aliases[1, 64](values, out)
    cuda.synchronize()
    ex_sum = np.concatenate(([0], np.cumsum(values)[:-1]))
    ex_prod = np.concatenate(([1], np.cumprod(values)[:-1]))
    w = values.reshape(2, 32)
    warp_sum = np.concatenate([np.concatenate(([0], np.cumsum(r)[:-1])) for r in w])
    warp_prod = np.concatenate([np.concatenate(([1], np.cumprod(r)[:-1])) for r in w])
    np.testing.assert_array_equal(out.reshape(6, 64), np.stack([ex_sum, ex_sum, ex_prod, ex_sum, warp_sum, warp_prod]))


@cuda.jit
def _max_common_and_qualified(source, maxima):
    t = cuda.threadIdx.x
    v = source[t]
    b = coop.reduce(coop.this_block(), v, binary_op="max", broadcast=False, algorithm="raking")
    w = coop.reduce(coop.this_warp(), v, binary_op="max", broadcast=False, valid_items=27)
    qb = numba_coop.reduce(numba_coop.this_block(), v, binary_op="max", broadcast=False, algorithm="raking")
    qw = numba_coop.reduce(numba_coop.this_warp(), v, binary_op="max", broadcast=False, valid_items=27)
    if t == 0:
        maxima[0] = b
        maxima[1] = qb
    if t % 32 == 0:
        maxima[2 + t // 32] = w
        maxima[4 + t // 32] = qw


def test_block_and_warp_max_without_broadcast(rng):
    """Mirrors test_common_root_sum_scan.py::test_common_root_max_matches_qualified_numba_and_independent_oracle."""
    values = rng.integers(-10**6, 10**6, 64, dtype=np.int32)
    maxima = poison(6, np.int32)
    _max_common_and_qualified[1, 64](values, maxima)
    cuda.synchronize()
    w = values.reshape(2, 32)[:, :27].max(axis=1)
    np.testing.assert_array_equal(maxima, [values.max(), values.max(), *w, *w])


_XIPT = 5


@cuda.jit
def _exchanges(source, out):
    t = cuda.threadIdx.x
    items = coop.ThreadData(_XIPT, dtype=types.int32)
    for i in range(_XIPT):
        items[i] = source[t * _XIPT + i]
    a = coop.exchange(coop.this_block(), items)
    b = coop.exchange(coop.this_block(), items, mode="blocked_to_striped")
    c = coop.exchange(coop.this_warp(), items)
    d = numba_coop.exchange(numba_coop.this_warp(), items, mode="blocked_to_striped")
    n = cuda.blockDim.x * _XIPT
    for i in range(_XIPT):
        k = t * _XIPT + i
        out[k] = items[i]
        out[n + k] = a[i]
        out[2 * n + k] = b[i]
        out[3 * n + k] = c[i]
        out[4 * n + k] = d[i]


def test_block_and_warp_exchange_defaults_and_modes(rng):
    """Mirrors test_common_root_exchange.py::test_common_exchange_matches_qualified_numba_and_independent_oracle."""
    values = rng.integers(-10**6, 10**6, 64 * _XIPT, dtype=np.int32)
    out = poison(5 * values.size, np.int32)
    _exchanges[1, 64](values, out)
    cuda.synchronize()
    # Default mode is striped_to_blocked: the input slot (t, i) is read as tile position
    # t + i*threads and handed back blocked (out[t*K + i] = tile[t*K + i]), so the output is
    # the input seen as [K, threads] in tile order; blocked_to_striped is the inverse.
    to_blocked = lambda v, thr: v.reshape(thr, _XIPT).T.reshape(-1)  # noqa: E731
    to_striped = lambda v, thr: v.reshape(_XIPT, thr).T.reshape(-1)  # noqa: E731
    warps = values.reshape(2, -1)
    expected = [values, to_blocked(values, 64), to_striped(values, 64),
                np.concatenate([to_blocked(w, 32) for w in warps]),
                np.concatenate([to_striped(w, 32) for w in warps])]
    np.testing.assert_array_equal(out.reshape(5, -1), np.stack(expected))


@cuda.jit
def _transposing_load_store(source, loaded, full, partial_a, partial_b, warp_loaded, warp_partial):
    block = coop.this_block()
    storage = coop.TempStorage()
    whole = coop.ThreadData(_IPT, dtype=types.int32)
    got_whole = coop.load(block, source, whole, algorithm="transpose", temp_storage=storage)
    part = coop.ThreadData(_IPT, dtype=types.int32)
    got_part = coop.load(block, source, part, algorithm="transpose", valid_items=119, oob_default=-7,
                         offset=3, temp_storage=storage)
    coop.store(block, full, got_whole, algorithm="transpose", temp_storage=storage)
    coop.store(block, partial_a, got_part, algorithm="transpose", valid_items=119, offset=5,
               temp_storage=storage)
    t = cuda.threadIdx.x
    loaded[t * _IPT] = part[0]
    loaded[t * _IPT + 1] = part[1]
    coop.store(block, partial_b, got_part, algorithm="transpose", valid_items=119, offset=5,
               temp_storage=storage)
    warp = coop.this_warp()
    wpart = coop.ThreadData(_IPT, dtype=types.int32)
    got_w = coop.load(warp, source, wpart, algorithm="transpose", valid_items=59, oob_default=-7, offset=3)
    coop.store(warp, warp_partial, got_w, algorithm="transpose", valid_items=59, offset=5)
    warp_loaded[t * _IPT] = wpart[0]
    warp_loaded[t * _IPT + 1] = wpart[1]


def test_transposing_load_store_with_offsets_keeps_the_payload(rng):
    """Mirrors test_common_root_load_store.py::test_common_root_load_store_runs_for_block_and_physical_warp."""
    values = rng.integers(-10**6, 10**6, 128, dtype=np.int32)
    outs = [poison(values) for _ in range(6)]
    _transposing_load_store[1, 64](values, *outs)
    cuda.synchronize()
    loaded, full, partial_a, partial_b, warp_loaded, warp_partial = outs
    exp_loaded = np.full(128, -7, np.int32)
    exp_loaded[:119] = values[3:122]
    exp_partial = np.full(128, -7, np.int32)
    exp_partial[5:124] = values[3:122]
    exp_wl, exp_wp = np.full(128, -7, np.int32), np.full(128, -7, np.int32)
    for base in (0, 64):
        exp_wl[base:base + 59] = values[base + 3:base + 62]
        exp_wp[base + 5:base + 64] = values[base + 3:base + 62]
    for got, want in zip(outs, (exp_loaded, values, exp_partial, exp_partial, exp_wl, exp_wp)):
        np.testing.assert_array_equal(got, want)


_BLOCK3 = (8, 4, 2)


@cuda.jit
def _shuffles(source, out):
    t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
    items = coop.ThreadData(3, dtype=types.int32)
    for i in range(3):
        items[i] = source[t * 3 + i]
    block = coop.this_block()
    default = coop.shuffle(block, items)
    down = coop.shuffle(block, items, mode="down", distance=1)
    up = numba_coop.shuffle(numba_coop.this_block(), items, mode="up", distance=1)
    n = 64 * 3
    for i in range(3):
        k = t * 3 + i
        out[k] = items[i]
        if k + 1 < n:
            out[n + k] = default[i]
            out[2 * n + k] = down[i]
        if k > 0:
            out[3 * n + k] = up[i]


def test_item_shuffle_in_a_3d_block(rng):
    """Mirrors test_common_root_shuffle.py::test_common_shuffle_matches_qualified_numba_and_independent_oracle_twice."""
    for _ in range(2):
        values = rng.integers(-10**6, 10**6, 192, dtype=np.int32)
        out = poison(4 * 192, np.int32)
        _shuffles[1, _BLOCK3](values, out)
        cuda.synchronize()
        expected = np.full((4, 192), -7, np.int32)
        expected[0] = values
        expected[1, :-1] = expected[2, :-1] = values[1:]
        expected[3, 1:] = values[:-1]
        np.testing.assert_array_equal(out.reshape(4, 192), expected)


@cuda.jit
def _neighbours(source, out, valid, predecessor, successor):
    t = cuda.threadIdx.x
    items = coop.ThreadData(_IPT, dtype=types.int32)
    for i in range(_IPT):
        items[i] = source[t * _IPT + i]
    group = coop.this_block()
    storage = coop.TempStorage()
    left = coop.adjacent_difference(group, items, valid_items=valid, tile_predecessor_item=predecessor,
                                    temp_storage=storage)
    right = coop.adjacent_difference(group, items, direction="right", tile_successor_item=successor,
                                     temp_storage=storage)
    heads = coop.discontinuity(group, items, mode="heads", tile_predecessor_item=predecessor, temp_storage=storage)
    tails = coop.discontinuity(group, items, mode="tails", tile_successor_item=successor, temp_storage=storage)
    both_h, both_t = numba_coop.discontinuity(numba_coop.this_block(), items, mode="heads_and_tails",
                                              tile_predecessor_item=predecessor, tile_successor_item=successor,
                                              temp_storage=storage)
    n = cuda.blockDim.x * _IPT
    for i in range(_IPT):
        k = t * _IPT + i
        out[k] = items[i]
        out[n + k] = left[i]
        out[2 * n + k] = right[i]
        out[3 * n + k] = heads[i]
        out[4 * n + k] = tails[i]
        out[5 * n + k] = both_h[i]
        out[6 * n + k] = both_t[i]


def test_adjacent_difference_and_discontinuity_with_tile_neighbours(rng):
    """Mirrors test_common_root_adjacent_discontinuity.py::test_common_adjacent_discontinuity_matches_qualified_and_independent_oracle."""
    values = rng.integers(-3, 3, 64, dtype=np.int32)
    valid, pred, succ = np.int32(61), np.int32(-13), np.int32(29)
    out = poison(7 * 64, np.int32)
    _neighbours[1, 32](values, out, valid, pred, succ)
    cuda.synchronize()
    e = np.empty((7, 64), np.int32)
    e[0] = values
    e[1] = values
    e[1, 0] = values[0] - pred
    e[1, 1:61] = values[1:61] - values[:60]
    e[2, :-1] = values[:-1] - values[1:]
    e[2, -1] = values[-1] - succ
    e[3] = np.concatenate(([values[0] != pred], values[1:] != values[:-1]))
    e[4] = np.concatenate((values[:-1] != values[1:], [values[-1] != succ]))
    e[5], e[6] = e[3], e[4]
    np.testing.assert_array_equal(out.reshape(7, 64), e)


_BINS, _BPT = 97, 2


def _striped_counts(samples):
    counts = np.bincount(samples.astype(np.int64), minlength=_BINS)
    expected = np.zeros(64 * _BPT, np.int64)
    for r in range(64):
        for i in range(_BPT):
            if r + i * 64 < _BINS:
                expected[r * _BPT + i] = counts[r + i * 64]
    return expected


@cuda.jit
def _histograms(source, atomic_out, sort_out, kept):
    t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
    samples = coop.ThreadData(3, dtype=int)
    for i in range(3):
        samples[i] = source[t * 3 + i]
    group = coop.this_block()
    atomic = coop.histogram(group, samples, bins=_BINS, bins_per_thread=_BPT, counter_dtype=int)
    by_sort = coop.histogram(group, samples, bins=_BINS, bins_per_thread=_BPT, counter_dtype=np.int64,
                             algorithm="sort")
    for i in range(_BPT):
        atomic_out[t * _BPT + i] = atomic[i]
        sort_out[t * _BPT + i] = by_sort[i]
    for i in range(3):
        kept[t * 3 + i] = samples[i]


def test_striped_histogram_counts_atomic_and_sort(rng):
    """Mirrors test_common_root_histogram.py::test_common_histogram_matches_qualified_numba_and_independent_oracle_twice."""
    for _ in range(2):
        samples = rng.integers(0, _BINS, 192).astype(np.uint8)
        atomic_out, sort_out = poison(128, np.int32), poison(128, np.int64)
        kept = np.zeros(192, np.uint8)
        _histograms[1, _BLOCK3](samples, atomic_out, sort_out, kept)
        cuda.synchronize()
        np.testing.assert_array_equal(atomic_out, _striped_counts(samples))
        np.testing.assert_array_equal(sort_out, _striped_counts(samples))
        np.testing.assert_array_equal(kept, samples)


def _histogram_kernel(counter_dtype):
    @cuda.jit
    def kernel(source, atomic_out, sort_out):
        t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.z * cuda.blockDim.x * cuda.blockDim.y
        samples = coop.ThreadData(3, dtype=source.dtype)
        for i in range(3):
            samples[i] = source[t * 3 + i]
        atomic = coop.histogram(coop.this_block(), samples, bins=_BINS, bins_per_thread=_BPT,
                                counter_dtype=counter_dtype)
        by_sort = numba_coop.histogram(numba_coop.this_block(), samples, bins=_BINS, bins_per_thread=_BPT,
                                       counter_dtype=counter_dtype, algorithm="sort")
        for i in range(_BPT):
            atomic_out[t * _BPT + i] = atomic[i]
            sort_out[t * _BPT + i] = by_sort[i]

    return kernel


@pytest.mark.parametrize("sample_dtype,counter_dtype", [(np.uint8, np.int32), (np.int32, np.uint32),
                                                        (np.uint32, np.int64), (np.int64, np.uint64),
                                                        (np.uint64, np.uint32)])
def test_histogram_sample_and_counter_dtypes(rng, sample_dtype, counter_dtype):
    """Mirrors test_common_root_histogram.py::test_common_histogram_portable_dtype_closure_matches_qualified_numba."""
    samples = rng.integers(0, _BINS, 192).astype(sample_dtype)
    outs = [np.full(128, np.iinfo(counter_dtype).max, counter_dtype) for _ in range(2)]
    _histogram_kernel(counter_dtype)[1, _BLOCK3](samples, *outs)
    cuda.synchronize()
    for out in outs:
        np.testing.assert_array_equal(out, _striped_counts(samples).astype(counter_dtype))
