"""Parity: merge sort, radix sort/rank and TopK examples of NVIDIA's cuda.coop docs.

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/``
``test_merge_sort_examples.py`` (pairs with positions written as
``types.int32(...)`` into a ThreadData without dtype; descending partial tile
with ``valid_items``/``oob_default``), ``test_qualified_merge_sort_examples.py``
(``compare_op=`` device function on keys and pairs), ``test_radix_examples.py``
(stable pairs, ``radix_rank_keys(begin_bit=0, end_bit=4)``),
``test_qualified_radix_examples.py`` (``begin_bit``/``end_bit`` sorts and ranks
in one kernel), ``test_topk_examples.py`` and ``test_qualified_topk_examples.py``
(runtime ``valid_items``, unordered selection checked as a set).
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda, types

from ..compiler import qualified as numba_coop
from cuda import coop

from ._helpers import poison

pytestmark = pytest.mark.gpu


def test_merge_sort_pairs_with_positions(rng):
    """Mirrors test_merge_sort_examples.py::test_merge_sort_pairs_example."""

    @cuda.jit
    def order_tile(source, sorted_keys, original_positions, items_per_thread):
        block = coop.this_block()
        keys = coop.ThreadData(items_per_thread)
        positions = coop.ThreadData(items_per_thread)
        coop.load(block, source, keys)
        for i in range(items_per_thread):
            positions[i] = types.int32(cuda.threadIdx.x * items_per_thread + i)
        ordered_keys, ordered_positions = coop.merge_sort_pairs(block, keys, positions)
        coop.store(block, sorted_keys, ordered_keys)
        coop.store(block, original_positions, ordered_positions)

    for ipt in (1, 4):
        values = rng.permutation(64 * ipt).astype(np.int32) - 64
        keys_out, positions_out = poison(values), poison(values)
        order_tile[1, 64](values, keys_out, positions_out, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(keys_out, np.sort(values))
        np.testing.assert_array_equal(keys_out, values[positions_out])


def test_descending_partial_tile(rng):
    """Mirrors test_merge_sort_examples.py::test_merge_sort_keys_example."""

    @cuda.jit
    def order_partial(source, count, destination, items_per_thread):
        block = coop.this_block()
        keys = coop.ThreadData(items_per_thread)
        coop.load(block, source, keys, valid_items=count, oob_default=-1)
        ordered = coop.merge_sort_keys(block, keys, descending=True, valid_items=count, oob_default=-1)
        coop.store(block, destination, ordered, valid_items=count)

    for ipt in (1, 4):
        values = rng.permutation(64 * ipt - 7).astype(np.int32)
        destination = poison(values)
        order_partial[1, 64](values, len(values), destination, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(destination, np.sort(values)[::-1])


def test_compare_op_on_keys_and_pairs(rng):
    """Mirrors test_qualified_merge_sort_examples.py::test_qualified_sort_examples."""

    @cuda.jit(device=True)
    def greater(a, b):
        return a > b

    @cuda.jit
    def order_tile(source, key_output, pair_output, positions, items_per_thread):
        block = numba_coop.this_block()
        keys = numba_coop.ThreadData(items_per_thread)
        indices = numba_coop.ThreadData(items_per_thread)
        numba_coop.load(block, source, keys)
        for i in range(items_per_thread):
            indices[i] = types.int32(block.rank() * items_per_thread + i)
        ordered = numba_coop.merge_sort_keys(block, keys, compare_op=greater)
        pair_keys, pair_indices = numba_coop.merge_sort_pairs(block, keys, indices, compare_op=greater)
        numba_coop.store(block, key_output, ordered)
        numba_coop.store(block, pair_output, pair_keys)
        numba_coop.store(block, positions, pair_indices)

    for ipt in (1, 4):
        values = rng.permutation(64 * ipt).astype(np.int32)
        key_output, pair_output, positions = poison(values), poison(values), poison(values)
        order_tile[1, 64](values, key_output, pair_output, positions, ipt)
        cuda.synchronize()
        expected = np.sort(values)[::-1]
        np.testing.assert_array_equal(key_output, expected)
        np.testing.assert_array_equal(pair_output, expected)
        np.testing.assert_array_equal(pair_output, values[positions])


def test_radix_sort_pairs_is_stable(rng):
    """Mirrors test_radix_examples.py::test_radix_sort_pairs_example."""

    @cuda.jit
    def order_tile(source, sorted_keys, original_positions, items_per_thread):
        block = coop.this_block()
        keys = coop.ThreadData(items_per_thread)
        positions = coop.ThreadData(items_per_thread)
        coop.load(block, source, keys)
        for i in range(items_per_thread):
            positions[i] = types.int32(cuda.threadIdx.x * items_per_thread + i)
        ordered_keys, ordered_positions = coop.radix_sort_pairs(block, keys, positions)
        coop.store(block, sorted_keys, ordered_keys)
        coop.store(block, original_positions, ordered_positions)

    for ipt in (1, 4):
        values = rng.integers(-8, 9, 64 * ipt, dtype=np.int32)
        keys_out, positions_out = poison(values), poison(values)
        order_tile[1, 64](values, keys_out, positions_out, ipt)
        cuda.synchronize()
        order = np.argsort(values, kind="stable")
        np.testing.assert_array_equal(keys_out, values[order])
        np.testing.assert_array_equal(positions_out, order)


def test_radix_rank_keys_of_the_low_digit(rng):
    """Mirrors test_radix_examples.py::test_radix_rank_example."""

    @cuda.jit
    def rank_low_digit(source, destination, items_per_thread):
        block = coop.this_block()
        keys = coop.ThreadData(items_per_thread)
        coop.load(block, source, keys)
        ranks = coop.radix_rank_keys(block, keys, begin_bit=0, end_bit=4)
        coop.store(block, destination, ranks)

    for ipt in (1, 4):
        values = rng.integers(0, 256, 64 * ipt, dtype=np.uint32)
        destination = poison(values.size, np.int32)
        rank_low_digit[1, 64](values, destination, ipt)
        cuda.synchronize()
        order = np.argsort(values & np.uint32(15), kind="stable")
        expected = np.empty(values.size, dtype=np.int32)
        expected[order] = np.arange(values.size)
        np.testing.assert_array_equal(destination, expected)


def test_radix_bit_range_sorts_and_ranks(rng):
    """Mirrors test_qualified_radix_examples.py::test_qualified_radix_examples."""

    @cuda.jit
    def order_digit(source, key_output, pair_output, positions, ranks_out, items_per_thread):
        block = numba_coop.this_block()
        keys = numba_coop.ThreadData(items_per_thread)
        indices = numba_coop.ThreadData(items_per_thread)
        numba_coop.load(block, source, keys)
        for i in range(items_per_thread):
            indices[i] = types.int32(block.rank() * items_per_thread + i)
        ordered = numba_coop.radix_sort_keys(block, keys, begin_bit=0, end_bit=4)
        pair_keys, pair_indices = numba_coop.radix_sort_pairs(block, keys, indices, begin_bit=0, end_bit=4)
        ranks = numba_coop.radix_rank_keys(block, keys, begin_bit=0, end_bit=4)
        numba_coop.store(block, key_output, ordered)
        numba_coop.store(block, pair_output, pair_keys)
        numba_coop.store(block, positions, pair_indices)
        numba_coop.store(block, ranks_out, ranks)

    for ipt in (1, 4):
        values = rng.integers(0, 256, 64 * ipt, dtype=np.uint32)
        key_output, pair_output = poison(values), poison(values)
        positions, ranks = poison(values.size, np.int32), poison(values.size, np.int32)
        order_digit[1, 64](values, key_output, pair_output, positions, ranks, ipt)
        cuda.synchronize()
        order = np.argsort(values & np.uint32(15), kind="stable")
        expected_ranks = np.empty(values.size, dtype=np.int32)
        expected_ranks[order] = np.arange(values.size)
        np.testing.assert_array_equal(key_output, values[order])
        np.testing.assert_array_equal(pair_output, values[order])
        np.testing.assert_array_equal(positions, order)
        np.testing.assert_array_equal(ranks, expected_ranks)


def test_topk_max_pairs_of_a_partial_tile(rng):
    """Mirrors test_topk_examples.py::test_topk_pairs_example (negative keys: zero filler must not win)."""

    @cuda.jit
    def select_tile(source, count, selected_keys, original_positions, items_per_thread):
        block = coop.this_block()
        keys = coop.ThreadData(items_per_thread)
        positions = coop.ThreadData(items_per_thread)
        coop.load(block, source, keys, valid_items=count, oob_default=0)
        for i in range(items_per_thread):
            positions[i] = types.int32(cuda.threadIdx.x * items_per_thread + i)
        chosen_keys, chosen_positions = coop.topk_max_pairs(block, keys, positions, k=8, valid_items=count)
        coop.store(block, selected_keys, chosen_keys, valid_items=8)
        coop.store(block, original_positions, chosen_positions, valid_items=8)

    for ipt in (1, 4):
        values = (rng.permutation(64 * ipt).astype(np.int32) - 256 * ipt)[:64 * ipt - 7]
        selected, positions = poison(8, np.int32), poison(8, np.int32)
        select_tile[1, 64](values, len(values), selected, positions, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(np.sort(selected), np.sort(values)[-8:])
        assert np.all((positions >= 0) & (positions < len(values)))
        np.testing.assert_array_equal(selected, values[positions])


def test_topk_all_four_spellings(rng):
    """Mirrors test_qualified_topk_examples.py::test_qualified_topk_examples."""

    @cuda.jit
    def select_extremes(source, count, smallest, largest, min_pairs, max_pairs, min_ids, max_ids,
                        items_per_thread):
        block = numba_coop.this_block()
        keys = numba_coop.ThreadData(items_per_thread)
        indices = numba_coop.ThreadData(items_per_thread)
        numba_coop.load(block, source, keys, valid_items=count, oob_default=0)
        for i in range(items_per_thread):
            indices[i] = types.int32(block.rank() * items_per_thread + i)
        low = numba_coop.topk_min_keys(block, keys, k=8, valid_items=count)
        high = numba_coop.topk_max_keys(block, keys, k=8, valid_items=count)
        low_keys, low_ids = numba_coop.topk_min_pairs(block, keys, indices, k=8, valid_items=count)
        high_keys, high_ids = numba_coop.topk_max_pairs(block, keys, indices, k=8, valid_items=count)
        numba_coop.store(block, smallest, low, valid_items=8)
        numba_coop.store(block, largest, high, valid_items=8)
        numba_coop.store(block, min_pairs, low_keys, valid_items=8)
        numba_coop.store(block, max_pairs, high_keys, valid_items=8)
        numba_coop.store(block, min_ids, low_ids, valid_items=8)
        numba_coop.store(block, max_ids, high_ids, valid_items=8)

    for ipt in (1, 4):
        values = rng.permutation(64 * ipt - 7).astype(np.int32) - 256
        outputs = [poison(8, np.int32) for _ in range(6)]
        select_extremes[1, 64](values, values.size, *outputs, ipt)
        cuda.synchronize()
        low, high, low_keys, high_keys, low_ids, high_ids = outputs
        ordered = np.sort(values)
        for got, want in ((low, ordered[:8]), (high, ordered[-8:]), (low_keys, ordered[:8]),
                          (high_keys, ordered[-8:])):
            np.testing.assert_array_equal(np.sort(got), want)
        for keys, ids in ((low_keys, low_ids), (high_keys, high_ids)):
            assert np.all((ids >= 0) & (ids < values.size))
            np.testing.assert_array_equal(keys, values[ids])
