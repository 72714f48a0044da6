"""Parity: the scan examples of NVIDIA's cuda.coop docs (common and qualified).

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/``
``test_scan_examples.py`` (scalar block scans with string operators,
``initial_value`` as a kernel argument, ``algorithm="raking_memoize"``, logical
warp ``inclusive_scan``), ``test_qualified_scan_examples.py`` (device-function
``scan_op`` on a ``cuda.local.array``; warp ``exclusive_scan`` with
``initial_value=``, runtime ``valid_items=`` and ``aggregate_output=``) and
``test_qualified_prefix_examples.py`` (``scan(mode="inclusive", scan_op="max")``).
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda, types

from ..compiler import qualified as numba_coop
from cuda import coop

from ._helpers import poison

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("op,ufunc", [("bit_xor", np.bitwise_xor), ("bit_or", np.bitwise_or),
                                      ("max", np.maximum), ("*", np.multiply)])
def test_scalar_block_scan_with_string_operator(rng, op, ufunc):
    """Mirrors test_scan_examples.py::test_scan_example (coop.scan(mode="inclusive", scan_op="bit_xor"))."""

    @cuda.jit
    def prefixes(source, destination):
        t = cuda.threadIdx.x
        destination[t] = coop.scan(coop.this_block(), source[t], mode="inclusive", scan_op=op)

    values = rng.integers(1, 3 if op == "*" else 100, 96, dtype=np.int32)
    destination = poison(values)
    prefixes[1, 96](values, destination)
    cuda.synchronize()
    # Products of 96 factors of 1..2 wrap in int32, in CUB as in NumPy with dtype=int32.
    np.testing.assert_array_equal(destination, ufunc.accumulate(values, dtype=values.dtype))


def test_scalar_block_exclusive_sum(rng):
    """Mirrors test_scan_examples.py::test_exclusive_sum_example."""

    @cuda.jit
    def offsets_of(counts, offsets):
        t = cuda.threadIdx.x
        offsets[t] = coop.exclusive_sum(coop.this_block(), counts[t])

    counts = rng.integers(0, 5, 160, dtype=np.int32)
    offsets = poison(counts)
    offsets_of[1, 160](counts, offsets)
    cuda.synchronize()
    np.testing.assert_array_equal(offsets, np.cumsum(counts) - counts)


@pytest.mark.parametrize("algorithm", ["raking", "raking_memoize", "warp_scans"])
def test_inclusive_sum_algorithms_preserve_input(rng, algorithm):
    """Mirrors test_scan_examples.py::test_inclusive_sum_example (runtime items_per_thread, input kept)."""

    @cuda.jit
    def sum_tile(source, destination, original, items_per_thread):
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread)
        coop.load(block, source, items)
        prefixes = coop.inclusive_sum(block, items, algorithm=algorithm)
        coop.store(block, destination, prefixes)
        coop.store(block, original, items)

    for ipt in (1, 4):
        values = rng.integers(-5, 6, 64 * ipt, dtype=np.int32)
        destination, original = poison(values), poison(values)
        sum_tile[1, 64](values, destination, original, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(destination, np.cumsum(values))
        np.testing.assert_array_equal(original, values)


def test_scalar_exclusive_min_with_runtime_initial_value(rng):
    """Mirrors test_scan_examples.py::test_exclusive_scan_example (initial_value= a kernel argument)."""

    @cuda.jit
    def min_prefixes(source, destination, initial):
        t = cuda.threadIdx.x
        destination[t] = coop.exclusive_scan(coop.this_block(), source[t], scan_op="min", initial_value=initial)

    values = rng.integers(-100, 100, 64, dtype=np.int32)
    initial = np.int32(17)
    destination = poison(values)
    min_prefixes[1, 64](values, destination, initial)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, np.minimum.accumulate(np.r_[initial, values[:-1]]))


@pytest.mark.parametrize("width", [8, 32])
def test_logical_warp_inclusive_max(rng, width):
    """Mirrors test_scan_examples.py::test_inclusive_scan_example."""

    @cuda.jit
    def warp_maxima(source, destination):
        t = cuda.threadIdx.x
        group = coop.this_warp().group_by(width)
        destination[t] = coop.inclusive_scan(group, source[t], scan_op="max")

    values = rng.integers(-50, 50, 128, dtype=np.int32)
    destination = poison(values)
    warp_maxima[1, 128](values, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, np.maximum.accumulate(values.reshape(-1, width), axis=1).ravel())


def test_device_function_scan_on_local_array(rng):
    """Mirrors test_qualified_scan_examples.py::test_qualified_inclusive_scan_example."""

    @cuda.jit(device=True)
    def larger(a, b):
        if a > b:
            return a
        return b

    @cuda.jit
    def running_max(source, destination):
        block = numba_coop.this_block()
        items = cuda.local.array(2, dtype=types.int32)
        for i in range(2):
            items[i] = source[2 * cuda.threadIdx.x + i]
        prefixes = numba_coop.inclusive_scan(block, items, scan_op=larger)
        for i in range(2):
            destination[2 * cuda.threadIdx.x + i] = prefixes[i]

    values = rng.integers(-1000, 1000, 128, dtype=np.int32)
    destination = poison(values)
    running_max[1, 64](values, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, np.maximum.accumulate(values))


@pytest.mark.parametrize("valid", [5, 8, 1])
def test_warp_exclusive_scan_valid_items_and_aggregate(rng, valid):
    """Mirrors test_qualified_scan_examples.py::test_qualified_exclusive_scan_example."""

    @cuda.jit
    def partial_prefixes(source, destination, totals, initial, valid):
        t = cuda.threadIdx.x
        group = numba_coop.this_warp().group_by(8)
        aggregate = numba_coop.ThreadData(1, dtype=np.int32)
        prefix = numba_coop.exclusive_scan(group, source[t], initial_value=initial, valid_items=valid,
                                           aggregate_output=aggregate)
        if group.rank() < valid:
            destination[t] = prefix
        totals[t] = aggregate[0]

    values = rng.integers(1, 14, 64, dtype=np.int32)
    initial = np.int32(11)
    destination, totals = poison(values), poison(values)
    partial_prefixes[1, 64](values, destination, totals, initial, np.int64(valid))
    cuda.synchronize()
    rows = values.reshape(8, 8)[:, :valid]
    expected = np.full((8, 8), -7, dtype=np.int32)
    expected[:, :valid] = initial + np.cumsum(rows, axis=1) - rows
    np.testing.assert_array_equal(destination, expected.ravel())
    np.testing.assert_array_equal(totals, np.repeat(rows.sum(axis=1), 8))


def test_scan_mode_and_inclusive_sum_on_one_payload(rng):
    """Mirrors test_qualified_prefix_examples.py::test_qualified_prefix_examples."""

    @cuda.jit
    def prefixes(source, maxima, sums, items_per_thread):
        block = numba_coop.this_block()
        items = numba_coop.ThreadData(items_per_thread)
        numba_coop.load(block, source, items)
        running_max = numba_coop.scan(block, items, mode="inclusive", scan_op="max")
        running_sum = numba_coop.inclusive_sum(block, items)
        numba_coop.store(block, maxima, running_max)
        numba_coop.store(block, sums, running_sum)

    for ipt in (1, 4):
        values = rng.integers(-15, 16, 64 * ipt, dtype=np.int32)
        maxima, sums = poison(values), poison(values)
        prefixes[1, 64](values, maxima, sums, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(maxima, np.maximum.accumulate(values))
        np.testing.assert_array_equal(sums, np.cumsum(values))


def test_device_arrays_as_operands(rng):
    """Mirrors the device-array launches of test_scan_examples.py (cuda.to_device / device_array_like)."""

    @cuda.jit
    def offsets_of(counts, offsets):
        t = cuda.threadIdx.x
        offsets[t] = coop.exclusive_sum(coop.this_block(), counts[t])

    counts = rng.integers(0, 5, 64, dtype=np.int32)
    d_counts = cuda.to_device(counts)
    d_offsets = cuda.device_array_like(d_counts)
    offsets_of[1, 64](d_counts, d_offsets)
    np.testing.assert_array_equal(d_offsets.copy_to_host(), np.cumsum(counts) - counts)
