"""Parity: group queries, partitions and barriers as NVIDIA's documentation uses them.

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/
test_group_examples.py``: ``this_thread/this_warp/this_block/this_grid/this_cluster``,
``rank(level)``, ``count()``, ``rank_as(types.int64, "grid")``, ``count_as``,
``sync()``/``sync_aligned()``, ``this_warp().group_by(8)`` and
``this_block().group_by(2, exhaustive=False)`` with ``is_member()``.  The
common import (``from cuda import coop``) is activated by importing the
qualified module, as NVIDIA's examples do.
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda, types

from ..compiler import qualified as numba_coop  # noqa: F401  (activates the backend)
from cuda import coop

from ._helpers import poison

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("blocks,threads", [(2, 96), (3, 64)])
def test_group_queries_per_thread(blocks, threads):
    """Mirrors test_group_examples.py::test_group_queries_example."""

    @cuda.jit
    def coordinates(output):
        thread = coop.this_thread()
        warp = coop.this_warp()
        block = coop.this_block()
        grid = coop.this_grid()
        i = cuda.grid(1)
        thread.sync()
        warp.sync_aligned()
        block.sync()
        output[0, i] = thread.rank("block")
        output[1, i] = warp.rank()
        output[2, i] = block.rank_as(types.int64, "grid")
        output[3, i] = block.count_as(types.int64)
        output[4, i] = grid.rank()
        output[5, i] = grid.count()
        output[6, i] = warp.count()
        output[7, i] = block.rank()

    n = blocks * threads
    output = poison((8, n), np.int64)
    coordinates[blocks, threads](output)
    cuda.synchronize()
    idx = np.arange(n)
    expected = np.stack((idx % threads, idx % threads % 32, idx // threads, np.full(n, threads), idx,
                         np.full(n, n), np.full(n, 32), idx % threads))
    np.testing.assert_array_equal(output, expected)


def test_partitions_and_membership():
    """Mirrors test_group_examples.py::test_group_by_example (group_by(2, exhaustive=False) over 3 warps)."""

    @cuda.jit
    def partitions(output):
        i = cuda.threadIdx.x
        lanes = coop.this_warp().group_by(8)
        pair = coop.this_block().group_by(2, exhaustive=False)
        lanes.sync_aligned()
        output[0, i] = lanes.rank()
        output[1, i] = lanes.count()
        member = pair.is_member()
        output[2, i] = member
        if member:
            output[3, i] = pair.rank()
        else:
            output[3, i] = -1

    output = poison((4, 96), np.int64)
    partitions[1, 96](output)
    cuda.synchronize()
    idx = np.arange(96)
    expected = np.stack((idx % 8, np.full(96, 8), idx < 64, np.where(idx < 64, idx, -1)))
    np.testing.assert_array_equal(output, expected)


def test_exhaustive_block_partition_ranks():
    """Mirrors test_group_examples.py::test_group_by_example (exhaustive warp groups, every thread a member)."""

    @cuda.jit
    def partitions(output):
        i = cuda.threadIdx.x
        pair = coop.this_block().group_by(2)
        output[0, i] = pair.rank()
        output[1, i] = pair.count()
        output[2, i] = pair.is_member()

    output = poison((3, 128), np.int64)
    partitions[1, 128](output)
    cuda.synchronize()
    idx = np.arange(128)
    np.testing.assert_array_equal(output, np.stack((idx % 64, np.full(128, 64), np.ones(128))))


def test_cluster_queries():
    """Mirrors test_group_examples.py::test_cluster_group_example (configure(..., cluster=(2, 1, 1)))."""

    @cuda.jit
    def cluster_coordinates(output):
        cluster = coop.this_cluster()
        cluster.sync()
        i = cuda.grid(1)
        output[0, i] = cluster.rank("block")
        output[1, i] = cluster.count("block")
        output[2, i] = cluster.is_member()

    if cuda.get_current_device().compute_capability < (9, 0):
        pytest.skip("thread-block clusters need compute capability 9.0")
    output = cuda.to_device(poison((3, 128), np.int64))
    cluster_coordinates.configure((4, 1, 1), (32, 1, 1), cluster=(2, 1, 1))(output)
    expected = np.stack((np.arange(128) // 32 % 2, np.full(128, 2), np.ones(128, dtype=np.int64)))
    np.testing.assert_array_equal(output.copy_to_host(), expected)


def _partial_mapped_sync(operation):
    @cuda.jit
    def kernel(output, ranks):
        group = coop.this_warp().group_by(3, exhaustive=False)
        if operation == "sync":
            group.sync()
        else:
            group.sync_aligned()
        output[cuda.threadIdx.x] = group.is_member()
        ranks[cuda.threadIdx.x] = group.rank() * 100 + group.rank("warp")

    return kernel


@pytest.mark.parametrize("operation", ["sync", "sync_aligned"])
def test_partial_mapped_group_sync_and_membership(operation):
    """Mirrors test_group_hierarchy.py::test_partial_mapped_group_sync_excludes_nonmembers: ten
    logical warps of 3 lanes per warp, lanes 30 and 31 are not members, every lane calls the
    barrier (without NVIDIA's injected CCCL assertions)."""
    output, ranks = poison(32, np.int32), poison(32, np.int32)
    _partial_mapped_sync(operation)[1, 32](output, ranks)
    cuda.synchronize()
    np.testing.assert_array_equal(output, [1] * 30 + [0, 0])
    lanes = np.arange(32)
    np.testing.assert_array_equal(ranks[:30], (lanes % 3 * 100 + lanes // 3)[:30])
