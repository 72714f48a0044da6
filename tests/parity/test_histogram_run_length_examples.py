"""Parity: histogram and run-length decode examples of NVIDIA's cuda.coop docs.

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/``
``test_histogram_examples.py`` (fresh per-tile counters added into a
``ThreadData(items_per_thread=2)`` whose dtype comes from ``np.int64(0)``
writes, ``counter_dtype=np.int64``, striped store of ``valid_items=bins``),
``test_qualified_histogram_examples.py`` (``cuda.local.array`` samples sized by
a kernel argument; ``algorithm="sort"`` chosen by a run-time bool) and
``test_run_length_examples.py`` (window decode with ``decoded_window_offset``,
``relative_offsets=``/``total_decoded_size=`` outputs, and
``run_length_decode_into`` with ``destination_offset`` and
``decoded_offset_dtype=np.uint64``).
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda, types

from ..compiler import qualified as numba_coop
from cuda import coop

from ._helpers import poison

pytestmark = pytest.mark.gpu


def test_histogram_accumulated_over_tiles(rng):
    """Mirrors test_histogram_examples.py::test_histogram_accumulation_example."""

    @cuda.jit
    def histogram_tiles(source, tile_count, destination, items_per_thread):
        block = coop.this_block()
        samples = coop.ThreadData(items_per_thread)
        total = coop.ThreadData(items_per_thread=2)
        for i in range(2):
            total[i] = np.int64(0)
        for tile in range(tile_count):
            coop.load(block, source, samples, offset=tile * cuda.blockDim.x * items_per_thread)
            counts = coop.histogram(block, samples, bins=65, bins_per_thread=2, counter_dtype=np.int64)
            for i in range(2):
                total[i] += counts[i]
        coop.store(block, destination, total, algorithm="striped", valid_items=65)

    for ipt in (1, 4):
        source = rng.integers(0, 65, 3 * 64 * ipt).astype(np.int32)
        destination = poison(65, np.int64)
        histogram_tiles[1, 64](source, 3, destination, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(destination, np.bincount(source, minlength=65))


def test_histogram_algorithm_chosen_at_run_time(rng):
    """Mirrors test_qualified_histogram_examples.py::test_qualified_histogram_example."""

    @cuda.jit
    def count_bins(source, destination, items_per_thread, use_sort):
        block = numba_coop.this_block()
        samples = cuda.local.array(items_per_thread, dtype=types.int32)
        numba_coop.load(block, source, samples)
        if use_sort:
            counts = numba_coop.histogram(block, samples, bins=80, bins_per_thread=2, algorithm="sort")
        else:
            counts = numba_coop.histogram(block, samples, bins=80, bins_per_thread=2)
        numba_coop.store(block, destination, counts, algorithm="striped", valid_items=80)

    for ipt in (1, 4):
        values = rng.integers(0, 80, 64 * ipt).astype(np.int32)
        for use_sort in (False, True):
            destination = poison(80, np.int32)
            count_bins[1, 64](values, destination, ipt, use_sort)
            cuda.synchronize()
            np.testing.assert_array_equal(destination, np.bincount(values, minlength=80))


def _runs(ipt, run_values, run_lengths):
    values = np.zeros(128 * ipt, dtype=np.int32)
    lengths = np.zeros(128 * ipt, dtype=np.uint32)
    values[:len(run_values)] = run_values
    lengths[:len(run_lengths)] = run_lengths
    return values, lengths


def test_window_decode_pads_with_zero(rng):
    """Mirrors test_run_length_examples.py::test_common_run_length_window_example."""

    @cuda.jit
    def decode_window(values, lengths, output, items_per_thread):
        block = coop.this_block()
        runs = coop.ThreadData(items_per_thread)
        sizes = coop.ThreadData(items_per_thread)
        coop.load(block, values, runs)
        coop.load(block, lengths, sizes)
        decoded = coop.run_length_decode(block, runs, sizes, decoded_items_per_thread=4,
                                         decoded_window_offset=2)
        coop.store(block, output, decoded)

    for ipt in (1, 4):
        values, lengths = _runs(ipt, [7, 9, -4], [3, 2, 4])
        output = poison(512, np.int32)
        decode_window[1, 128](values, lengths, output, ipt)
        cuda.synchronize()
        expected = np.repeat(values[:3], lengths[:3])[2:]
        np.testing.assert_array_equal(output[:expected.size], expected)
        np.testing.assert_array_equal(output[expected.size:], 0)


def test_window_decode_with_offsets_and_total(rng):
    """Mirrors test_run_length_examples.py::test_run_length_window_example."""

    @cuda.jit
    def decode_window(values, lengths, output, offsets, totals, items_per_thread):
        block = numba_coop.this_block()
        runs = numba_coop.ThreadData(items_per_thread)
        sizes = numba_coop.ThreadData(items_per_thread)
        numba_coop.load(block, values, runs)
        numba_coop.load(block, lengths, sizes)
        relative = numba_coop.ThreadData(items_per_thread=4)
        total = numba_coop.ThreadData(items_per_thread=1)
        decoded = numba_coop.run_length_decode(block, runs, sizes, decoded_items_per_thread=4,
                                               decoded_window_offset=2, relative_offsets=relative,
                                               total_decoded_size=total)
        numba_coop.store(block, output, decoded)
        numba_coop.store(block, offsets, relative)
        totals[cuda.threadIdx.x] = total[0]

    for ipt in (1, 4):
        values, lengths = _runs(ipt, [7, 9], [3, 2])
        output, offsets = poison(512, np.int32), poison(512, np.uint32, value=5)
        totals = poison(128, np.uint32, value=9)
        decode_window[1, 128](values, lengths, output, offsets, totals, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(output[:3], [7, 9, 9])
        np.testing.assert_array_equal(offsets[:3], [2, 0, 1])
        assert np.all(totals == 5)
        assert np.all(output[3:] == 0)
        assert np.all(offsets[3:] == np.iinfo(np.uint32).max)


def test_bulk_decode_into_an_array(rng):
    """Mirrors test_run_length_examples.py::test_run_length_bulk_example."""

    @cuda.jit
    def decode_all(values, lengths, output, totals, items_per_thread):
        block = coop.this_block()
        runs = coop.ThreadData(items_per_thread)
        sizes = coop.ThreadData(items_per_thread)
        coop.load(block, values, runs)
        coop.load(block, lengths, sizes)
        total = coop.run_length_decode_into(block, runs, sizes, output, decoded_items_per_thread=4,
                                            destination_offset=3)
        totals[cuda.threadIdx.x] = total

    for ipt in (1, 4):
        values, lengths = _runs(ipt, [7, 9, 2], [3, 1100, 2])
        output = np.full(1110, -1, dtype=np.int32)
        totals = poison(128, np.uint32, value=9)
        decode_all[1, 128](values, lengths, output, totals, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(output[3:1108], np.repeat(values[:3], lengths[:3]))
        assert np.all(totals == 1105)
        assert np.all(output[:3] == -1) and np.all(output[1108:] == -1)


def test_bulk_decode_with_uint64_relative_offsets(rng):
    """Mirrors test_run_length_examples.py::test_qualified_run_length_bulk_example."""

    @cuda.jit
    def decode_all(values, lengths, output, relative, totals, items_per_thread):
        block = numba_coop.this_block()
        runs = numba_coop.ThreadData(items_per_thread)
        sizes = numba_coop.ThreadData(items_per_thread)
        numba_coop.load(block, values, runs)
        numba_coop.load(block, lengths, sizes)
        total = numba_coop.run_length_decode_into(block, runs, sizes, output, decoded_items_per_thread=4,
                                                  destination_offset=3, relative_offsets=relative,
                                                  decoded_offset_dtype=np.uint64)
        totals[cuda.threadIdx.x] = total

    for ipt in (1, 4):
        values, lengths = _runs(ipt, [7, 9, 2], [3, 1100, 2])
        output = np.full(1110, -1, dtype=np.int32)
        sentinel = np.iinfo(np.uint64).max
        relative = np.full(1110, sentinel, dtype=np.uint64)
        totals = poison(128, np.uint64, value=9)
        decode_all[1, 128](values, lengths, output, relative, totals, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(output[3:1108], np.repeat(values[:3], lengths[:3]))
        expected = np.concatenate([np.arange(n, dtype=np.uint64) for n in lengths[:3]])
        np.testing.assert_array_equal(relative[3:1108], expected)
        assert np.all(relative[:3] == sentinel) and np.all(relative[1108:] == sentinel)
        assert np.all(totals == 1105)
        assert np.all(output[:3] == -1) and np.all(output[1108:] == -1)
