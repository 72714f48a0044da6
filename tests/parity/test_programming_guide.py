"""Parity: the programming-guide kernels of NVIDIA's cuda.coop, written our way.

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/
test_programming_guide_examples.py``: the same calls (both import spellings,
``ThreadData`` with and without a dtype, an ``items_per_thread`` kernel argument,
``aggregate_output=``, logical-warp scalar scans, ``TempStorage`` with and without
``auto_sync``, ``block.sync()``, device-function operators, ``StatefulFunction``
prefix callbacks) with our own data, checked against NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda, types

from ..compiler import qualified as numba_coop
from cuda import coop

from ._helpers import poison

pytestmark = pytest.mark.gpu


def _tiled(values, tile, fn):
    out = np.empty_like(values)
    for start in range(0, values.size, tile):
        out[start:start + tile] = fn(values[start:start + tile])
    return out


@pytest.mark.parametrize("count", [700, 768, 5])
def test_scan_tiles_with_partial_last_tile(rng, count):
    """Mirrors test_programming_guide_examples.py::test_first_kernel (common import, partial tile)."""

    @cuda.jit
    def scan_tiles(source, destination, count):
        block = coop.this_block()
        items = coop.ThreadData(2, dtype=np.int32)
        tile_size = cuda.blockDim.x * 2
        offset = cuda.blockIdx.x * tile_size
        valid = min(max(count - offset, 0), tile_size)
        coop.load(block, source, items, offset=offset, valid_items=valid, oob_default=0)
        prefixes = coop.exclusive_sum(block, items)
        coop.store(block, destination, prefixes, offset=offset, valid_items=valid)

    source = rng.integers(-50, 50, count, dtype=np.int32)
    destination = poison(source)
    scan_tiles[(count + 255) // 256, 128](source, destination, count)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, _tiled(source, 256, lambda t: np.cumsum(t) - t))


def test_qualified_namespace_has_the_common_operations():
    """Mirrors test_programming_guide_examples.py::test_qualified_import."""
    for name in ("exclusive_sum", "load", "store", "this_block", "ThreadData", "TempStorage",
                 "StatefulFunction", "local", "shared"):
        assert hasattr(numba_coop, name), name
    assert numba_coop.exclusive_sum is coop.exclusive_sum


def test_scan_with_totals_and_runtime_items_per_thread(rng):
    """Mirrors test_programming_guide_examples.py::test_qualified_scan (aggregate_output=, dtype inferred)."""

    @cuda.jit
    def scan_with_totals(source, destination, totals, items_per_thread):
        block = numba_coop.this_block()
        items = numba_coop.ThreadData(items_per_thread)
        aggregate = numba_coop.ThreadData(items_per_thread=1)
        offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
        numba_coop.load(block, source, items, offset=offset)
        prefixes = numba_coop.exclusive_sum(block, items, aggregate_output=aggregate)
        numba_coop.store(block, destination, prefixes, offset=offset)
        if block.rank() == 0:
            totals[cuda.blockIdx.x] = aggregate[0]

    for ipt in (1, 3, 4):
        tile = 64 * ipt
        source = rng.integers(-20, 20, 3 * tile, dtype=np.int32)
        destination, totals = poison(source), poison(3, np.int32)
        scan_with_totals[3, 64](source, destination, totals, ipt)
        cuda.synchronize()
        tiles = source.reshape(3, tile)
        np.testing.assert_array_equal(destination.reshape(3, tile), np.cumsum(tiles, axis=1) - tiles)
        np.testing.assert_array_equal(totals, tiles.sum(axis=1))


@pytest.mark.parametrize("width", [4, 8, 16])
def test_logical_warp_row_scan_of_scalars(rng, width):
    """Mirrors test_programming_guide_examples.py::test_row_scan (scalar per lane, group_by(8))."""

    @cuda.jit
    def scan_rows(source, destination):
        rows = coop.this_warp().group_by(width)
        i = cuda.grid(1)
        destination[i] = coop.inclusive_sum(rows, source[i])

    source = rng.integers(-9, 9, 256, dtype=np.int64)
    destination = poison(source)
    scan_rows[2, 128](source, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination.reshape(-1, width), np.cumsum(source.reshape(-1, width), axis=1))


def test_striped_load_then_exchange_before_scan(rng):
    """Mirrors test_programming_guide_examples.py::test_exchange."""

    @cuda.jit
    def scan_striped(source, destination):
        block = coop.this_block()
        items = coop.ThreadData(3, dtype=np.int32)
        coop.load(block, source, items, algorithm="striped")
        blocked = coop.exchange(block, items, mode="striped_to_blocked")
        prefixes = coop.inclusive_sum(block, blocked)
        coop.store(block, destination, prefixes, algorithm="direct")

    source = rng.integers(-30, 30, 384, dtype=np.int32)
    destination = poison(source)
    scan_striped[1, 128](source, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, np.cumsum(source))


@pytest.mark.parametrize("count", [531, 3 * 256, 17])
def test_logical_warp_copy_with_group_origin(rng, count):
    """Mirrors test_programming_guide_examples.py::test_warp_copy (offset= is the block origin only)."""

    @cuda.jit
    def copy_warp_tiles(source, destination, count):
        group = coop.this_warp().group_by(8)
        items = coop.ThreadData(2, dtype=np.int32)
        block_origin = cuda.blockIdx.x * cuda.blockDim.x * 2
        group_origin = (cuda.threadIdx.x // 8) * 16
        valid = min(max(count - block_origin - group_origin, 0), 16)
        coop.load(group, source, items, offset=block_origin, valid_items=valid, oob_default=0)
        coop.store(group, destination, items, offset=block_origin, valid_items=valid)

    source = rng.integers(-1000, 1000, count, dtype=np.int32)
    destination = poison(source)
    copy_warp_tiles[3, 128](source, destination, count)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, source)


def test_one_auto_sync_scratch_for_three_calls(rng):
    """Mirrors test_programming_guide_examples.py::test_shared_scratch."""

    @cuda.jit
    def scan_shared_scratch(source, destination):
        block = coop.this_block()
        scratch = coop.TempStorage(auto_sync=True)
        items = coop.ThreadData(2, dtype=np.int32)
        coop.load(block, source, items, algorithm="transpose", temp_storage=scratch)
        prefixes = coop.exclusive_sum(block, items, temp_storage=scratch)
        coop.store(block, destination, prefixes, algorithm="transpose", temp_storage=scratch)

    source = rng.integers(-40, 40, 256, dtype=np.int32)
    destination = poison(source)
    scan_shared_scratch[1, 128](source, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, np.cumsum(source) - source)


def test_manual_scratch_with_block_sync(rng):
    """Mirrors test_programming_guide_examples.py::test_manual_scratch (TempStorage() + block.sync())."""

    @cuda.jit
    def copy_manual(source, destination):
        block = coop.this_block()
        scratch = coop.TempStorage()
        items = coop.ThreadData(2, dtype=np.int32)
        for tile in range(3):
            offset = tile * cuda.blockDim.x * 2
            coop.load(block, source, items, offset=offset, algorithm="transpose", temp_storage=scratch)
            block.sync()
            coop.store(block, destination, items, offset=offset, algorithm="transpose", temp_storage=scratch)
            block.sync()

    source = rng.integers(-1000, 1000, 768, dtype=np.int32)
    destination = poison(source)
    copy_manual[1, 128](source, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, source)


@pytest.mark.parametrize("count", [785, 1024])
def test_tile_sums_read_at_rank_zero(rng, count):
    """Mirrors test_programming_guide_examples.py::test_reduce (block.rank() == 0 reads the sum)."""

    @cuda.jit
    def tile_sums(source, totals, count):
        block = coop.this_block()
        items = coop.ThreadData(2, dtype=np.int32)
        tile_size = cuda.blockDim.x * 2
        offset = cuda.blockIdx.x * tile_size
        valid = min(max(count - offset, 0), tile_size)
        coop.load(block, source, items, offset=offset, valid_items=valid, oob_default=0)
        total = coop.sum(block, items)
        if block.rank() == 0:
            totals[cuda.blockIdx.x] = total

    source = rng.integers(-100, 100, count, dtype=np.int32)
    blocks = (count + 255) // 256
    totals = poison(blocks, np.int32)
    tile_sums[blocks, 128](source, totals, count)
    cuda.synchronize()
    np.testing.assert_array_equal(totals, [source[s:s + 256].sum() for s in range(0, count, 256)])


def test_device_function_scan_operator(rng):
    """Mirrors test_programming_guide_examples.py::test_custom_scan (scan_op=@cuda.jit(device=True))."""

    @cuda.jit(device=True)
    def larger(a, b):
        if a > b:
            return a
        return b

    @cuda.jit
    def running_max(source, destination):
        block = numba_coop.this_block()
        items = numba_coop.ThreadData(2, dtype=np.int32)
        numba_coop.load(block, source, items)
        result = numba_coop.inclusive_scan(block, items, scan_op=larger)
        numba_coop.store(block, destination, result)

    source = rng.integers(-500, 500, 256, dtype=np.int32)
    destination = poison(source)
    running_max[1, 128](source, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, np.maximum.accumulate(source))


def test_stateful_prefix_carries_across_tiles(rng):
    """Mirrors test_programming_guide_examples.py::test_prefix_callback (int64 state, int32 scan, state 3rd positional)."""

    @cuda.jit(device=True)
    def carry(state, block_total):
        before = state[0]
        state[0] = before + block_total
        return before

    running = numba_coop.StatefulFunction(carry, types.int64)

    @cuda.jit
    def scan_tiles(source, destination, final_total):
        block = numba_coop.this_block()
        state = numba_coop.ThreadData(1, dtype=types.int64)
        state[0] = types.int64(0)
        scratch = numba_coop.TempStorage(auto_sync=True)
        for tile in range(4):
            i = tile * cuda.blockDim.x + cuda.threadIdx.x
            destination[i] = numba_coop.exclusive_sum(block, source[i], state, prefix_op=running,
                                                      temp_storage=scratch)
        if block.rank() == 0:
            final_total[0] = state[0]

    source = rng.integers(0, 9, 512, dtype=np.int32)
    destination, final_total = poison(source), poison(1, np.int64)
    scan_tiles[1, 128](source, destination, final_total)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, np.cumsum(source) - source)
    np.testing.assert_array_equal(final_total, [source.sum()])
