"""Parity: adjacent difference and discontinuity examples of NVIDIA's cuda.coop docs.

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/``
``test_qualified_neighbor_examples.py`` (``direction="right"`` with
``tile_successor_item=0`` and a ``difference_op=`` device function;
``discontinuity(mode="heads_and_tails", flag_op=...)`` returning two payloads
stored into int32 arrays).
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda

from ..compiler import qualified as numba_coop

from ._helpers import poison

pytestmark = pytest.mark.gpu


def test_custom_difference_and_flags(rng):
    """Mirrors test_qualified_neighbor_examples.py::test_qualified_neighbor_examples."""

    @cuda.jit(device=True)
    def absolute_gap(current, neighbor):
        return abs(current - neighbor)

    @cuda.jit(device=True)
    def large_jump(previous, current):
        return abs(current - previous) > 2

    @cuda.jit
    def compare_neighbors(source, deltas, heads_out, tails_out, items_per_thread):
        block = numba_coop.this_block()
        items = numba_coop.ThreadData(items_per_thread)
        numba_coop.load(block, source, items)
        differences = numba_coop.adjacent_difference(block, items, direction="right", tile_successor_item=0,
                                                     difference_op=absolute_gap)
        heads, tails = numba_coop.discontinuity(block, items, mode="heads_and_tails", flag_op=large_jump)
        numba_coop.store(block, deltas, differences)
        numba_coop.store(block, heads_out, heads)
        numba_coop.store(block, tails_out, tails)

    for ipt in (1, 4):
        values = rng.integers(0, 7, 64 * ipt, dtype=np.int32)
        deltas, heads, tails = poison(values), poison(values), poison(values)
        compare_neighbors[1, 64](values, deltas, heads, tails, ipt)
        cuda.synchronize()
        jumps = np.abs(values[1:] - values[:-1]) > 2
        np.testing.assert_array_equal(deltas, np.abs(np.diff(np.r_[values, np.int32(0)])))
        np.testing.assert_array_equal(heads, np.r_[True, jumps])
        np.testing.assert_array_equal(tails, np.r_[jumps, True])
