"""Parity: ThreadData and TempStorage spellings from NVIDIA's storage examples and tests.

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/``
``test_storage_examples.py`` (``ThreadData(items_per_thread=2, alignment=16)`` with
the dtype taken from the store destination; ``TempStorage(alignment=16,
auto_sync=True)`` reused in a loop), ``test_thread_data.py`` (keyword and
positional ``ThreadData`` forms, ``alignas=``) and the TempStorage chains of
``test_composition.py`` (shared/auto, shared/manual with ``cuda.syncthreads()``,
``sharing="exclusive"``).
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda, types

from ..compiler import qualified as numba_coop  # noqa: F401  (activates the backend)
from cuda import coop

from ._helpers import poison

pytestmark = pytest.mark.gpu


def test_thread_data_dtype_from_store_destination():
    """Mirrors test_storage_examples.py::test_thread_data_example."""

    @cuda.jit
    def squares(destination):
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread=2, alignment=16)
        offset = cuda.blockIdx.x * cuda.blockDim.x * 2
        for i in range(items.items_per_thread):
            index = offset + cuda.threadIdx.x * 2 + i
            items[i] = types.int32(index * index - 7)
        coop.store(block, destination, items, offset=offset)

    destination = poison(384, np.int32)
    squares[3, 64](destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, np.arange(384, dtype=np.int32) ** 2 - 7)


def test_aligned_scratch_reused_across_tiles(rng):
    """Mirrors test_storage_examples.py::test_temp_storage_example (alignment=16, auto_sync=True, loop)."""

    @cuda.jit
    def scan_tiles(source, destination):
        block = coop.this_block()
        scratch = coop.TempStorage(alignment=16, auto_sync=True)
        items = coop.ThreadData(items_per_thread=2)
        for tile in range(3):
            offset = tile * cuda.blockDim.x * 2
            coop.load(block, source, items, offset=offset, algorithm="transpose", temp_storage=scratch)
            prefixes = coop.exclusive_sum(block, items, temp_storage=scratch)
            coop.store(block, destination, prefixes, offset=offset, algorithm="transpose", temp_storage=scratch)

    values = rng.integers(-50, 50, 768, dtype=np.int32)
    destination = poison(values)
    scan_tiles[1, 128](values, destination)
    cuda.synchronize()
    tiles = values.reshape(3, 256)
    np.testing.assert_array_equal(destination, (np.cumsum(tiles, axis=1) - tiles).ravel())


def test_thread_data_constructor_spellings():
    """Mirrors test_thread_data.py::test_thread_data_extent_keywords_compile_in_single_phase_kernel."""

    @cuda.jit
    def spellings(output):
        canonical = numba_coop.ThreadData(items_per_thread=2, dtype=types.int32)
        positional = numba_coop.ThreadData(2, types.int32)
        aligned = numba_coop.ThreadData(2, types.int32, alignment=16)
        canonical[0] = 3
        canonical[1] = 5
        positional[0] = 7
        positional[1] = 11
        aligned[0] = 13
        aligned[1] = 17
        output[0] = canonical[0] + canonical[1] + positional[0] + positional[1] + aligned[0] + aligned[1]

    output = poison(1, np.int32)
    spellings[1, 1](output)
    cuda.synchronize()
    assert output.tolist() == [56]


def test_thread_data_alignas_spelling():
    """Mirrors test_thread_data.py (``alignas=16``, the qualified spelling of an earlier NVIDIA variant)."""

    @cuda.jit
    def spelled(output):
        aligned = numba_coop.ThreadData(2, types.int32, alignas=16)
        aligned[0] = 7
        aligned[1] = 11
        output[0] = aligned[0] + aligned[1]

    output = poison(1, np.int32)
    spelled[1, 1](output)
    cuda.synchronize()
    assert output.tolist() == [18]


def _chain_expected(values):
    scanned = np.concatenate([[0], np.cumsum(values[:-1], dtype=np.uint64)]).astype(np.uint32)
    return np.sort(scanned)


@cuda.jit(device=True)
def _less(a, b):
    return a < b


@cuda.jit
def _chain_shared_auto(source, destination):
    scratch = coop.TempStorage()
    block = coop.this_block()
    items = coop.ThreadData(4, dtype=source.dtype)
    coop.load(block, source, items, temp_storage=scratch)
    scanned = coop.exclusive_sum(block, items, temp_storage=scratch)
    keys = coop.radix_sort_keys(block, scanned, begin_bit=0, end_bit=16, temp_storage=scratch)
    ordered = coop.merge_sort_keys(block, keys, compare_op=_less, temp_storage=scratch)
    coop.store(block, destination, ordered, temp_storage=scratch)


@cuda.jit
def _chain_shared_manual(source, destination):
    scratch = coop.TempStorage(auto_sync=False)
    block = coop.this_block()
    items = coop.ThreadData(4, dtype=source.dtype)
    coop.load(block, source, items, algorithm="transpose", temp_storage=scratch)
    cuda.syncthreads()
    scanned = coop.exclusive_sum(block, items, temp_storage=scratch)
    cuda.syncthreads()
    keys = coop.radix_sort_keys(block, scanned, begin_bit=0, end_bit=16, temp_storage=scratch)
    cuda.syncthreads()
    ordered = coop.merge_sort_keys(block, keys, compare_op=_less, temp_storage=scratch)
    cuda.syncthreads()
    coop.store(block, destination, ordered, algorithm="transpose", temp_storage=scratch)
    cuda.syncthreads()


@cuda.jit
def _chain_exclusive(source, destination):
    scratch = coop.TempStorage(sharing="exclusive")
    block = coop.this_block()
    items = coop.ThreadData(4, dtype=source.dtype)
    coop.load(block, source, items, algorithm="warp_transpose", temp_storage=scratch)
    scanned = coop.exclusive_sum(block, items, temp_storage=scratch)
    keys = coop.radix_sort_keys(block, scanned, begin_bit=0, end_bit=16, temp_storage=scratch)
    ordered = coop.merge_sort_keys(block, keys, compare_op=_less, temp_storage=scratch)
    coop.store(block, destination, ordered, temp_storage=scratch)


@pytest.mark.parametrize("kernel", [_chain_shared_auto, _chain_shared_manual, _chain_exclusive],
                         ids=["shared-auto", "shared-manual", "exclusive"])
def test_one_descriptor_through_a_chain_of_families(rng, kernel):
    """Mirrors test_composition.py::test_block_temp_storage_chained_primitives (common-API spelling)."""
    values = rng.integers(0, 17, 128 * 4, dtype=np.uint32)
    destination = poison(values)
    kernel[1, 128](values, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, _chain_expected(values))


def test_thread_data_in_a_grid_stride_loop(rng):
    """Mirrors test_composition.py::test_block_sort_scan_grid_stride_thread_data (common-API spelling)."""

    @cuda.jit
    def grid_stride(source, destination, total):
        block = coop.this_block()
        per_block = cuda.blockDim.x * 4
        offset = cuda.blockIdx.x * per_block
        while offset < total:
            items = coop.ThreadData(4)
            coop.load(block, source, items, offset=offset)
            scanned = coop.exclusive_sum(block, items)
            keys = coop.radix_sort_keys(block, scanned, begin_bit=0, end_bit=16)
            ordered = coop.merge_sort_keys(block, keys, compare_op=_less)
            coop.store(block, destination, ordered, offset=offset)
            offset += cuda.gridDim.x * per_block

    per_block = 64 * 4
    values = rng.integers(0, 16, per_block * 5, dtype=np.uint32)
    destination = poison(values)
    grid_stride[2, 64](values, destination, values.size)
    cuda.synchronize()
    expected = np.concatenate([_chain_expected(values[s:s + per_block]) for s in range(0, values.size, per_block)])
    np.testing.assert_array_equal(destination, expected)
