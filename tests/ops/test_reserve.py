"""TempStorage.reserve() on a device: user shared arrays next to cooperative scratch.

Each kernel fills its reserved arrays per thread, synchronizes, reads its
neighbours' values back, and runs block scans/reductions on the same
``TempStorage``.  Outputs are poisoned first; the data is random; everything is
compared against NumPy.

- whatever the sharing mode, every reservation has bytes of its own: the ops'
  scratch on the same descriptor never overwrites it (NVIDIA's contract,
  ``test_reserve.py`` of cuda.coop), and a second, exclusive descriptor holds
  arrays that survive the ops as well.

- one reserve() call site in a loop next to a larger reservation of the same
  ``"shared"`` descriptor: the two stay disjoint and survive a block sum.

Kernels compiled per toolkit: 6 (sharing x reservation dtype) + 1 (loop,
inline helper, device function) + 1 (aliasing phases).  ``tests/ops/test_reserve_compile.py`` compiles
them on CPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from .reserve_kernels import BLOCK, BLOCKS, ITEMS, RESERVE_DTYPES, SHARINGS, alias_kernel, loop_kernel, neighbours_kernel

POISON = -777


def _host_value(dtype: str, x):
    x = np.asarray(x)
    if dtype.startswith("complex"):
        return (x + -2j * x).astype(dtype)
    return x.astype(dtype)


def run_neighbours(kernel, dtype, sharing, rng):
    from ..compiler import cuda

    src = rng.integers(-1000, 1000, size=BLOCKS * BLOCK * ITEMS).astype(np.int32)
    vals = rng.integers(-10**6, 10**6, size=BLOCKS * BLOCK).astype(np.int32)
    near = np.full(BLOCKS * BLOCK * 3, POISON, dtype=dtype)
    after = np.full(BLOCKS * BLOCK * 2, POISON, dtype=dtype)
    scanned = np.full_like(src, POISON)
    totals = np.full(BLOCKS, POISON, dtype=np.int32)
    kernel[BLOCKS, BLOCK](src, vals, near, after, scanned, totals)
    cuda.synchronize()
    tid = np.arange(BLOCK)
    for b in range(BLOCKS):
        v = vals[b * BLOCK:(b + 1) * BLOCK]
        wide = np.empty(2 * BLOCK, dtype=dtype)
        wide[0::2] = _host_value(dtype, v)
        wide[1::2] = _host_value(dtype, v + 1)
        mine = _host_value(dtype, v * 3)
        got = near[b * BLOCK * 3:(b + 1) * BLOCK * 3]
        np.testing.assert_array_equal(got[:BLOCK], wide[(2 * tid + 3) % (2 * BLOCK)])
        np.testing.assert_array_equal(got[BLOCK:2 * BLOCK], mine[(tid + 1) % BLOCK])
        np.testing.assert_array_equal(got[2 * BLOCK:], ((BLOCK - 1 - tid) % 251).astype(dtype))
        late = after[b * BLOCK * 2:(b + 1) * BLOCK * 2]
        np.testing.assert_array_equal(late[:BLOCK], wide[(2 * tid + 5) % (2 * BLOCK)])
        np.testing.assert_array_equal(late[BLOCK:], mine[(tid + 7) % BLOCK])
        tile = src[b * BLOCK * ITEMS:(b + 1) * BLOCK * ITEMS]
        np.testing.assert_array_equal(scanned[b * BLOCK * ITEMS:(b + 1) * BLOCK * ITEMS],
                                      np.cumsum(tile, dtype=np.int32))
        assert totals[b] == tile.sum(dtype=np.int32), b


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", RESERVE_DTYPES)
@pytest.mark.parametrize("sharing", SHARINGS)
def test_reserved_arrays_hold_neighbours_values_next_to_scan_and_sum(sharing, dtype):
    run_neighbours(neighbours_kernel(sharing, dtype), dtype, sharing, np.random.default_rng(23))


@pytest.mark.gpu
def test_reservation_in_a_loop_helper_and_device_function():
    """A reserve() call site in a loop returns the same array each round; a reservation made
    in an inlined helper and one passed to a device function behave as shared arrays."""
    from ..compiler import cuda

    rng = np.random.default_rng(5)
    rounds = 3
    vals = rng.standard_normal(BLOCKS * rounds * BLOCK).astype(np.float32)
    out = np.full_like(vals, POISON)
    sums = np.full(BLOCKS * rounds, POISON, dtype=np.float32)
    loop_kernel()[BLOCKS, BLOCK](vals, out, sums, rounds)
    cuda.synchronize()
    tid = np.arange(BLOCK)
    for row in range(BLOCKS * rounds):
        r = row % rounds
        ring = vals[row * BLOCK:(row + 1) * BLOCK]
        stage = ring[(tid + r + 1) % BLOCK]
        np.testing.assert_array_equal(out[row * BLOCK:(row + 1) * BLOCK], stage[BLOCK - 1 - tid] + BLOCK)
        assert sums[row] == ring.max(), row


@pytest.mark.gpu
def test_shared_reservations_are_disjoint_and_survive_the_sum():
    from ..compiler import cuda

    rng = np.random.default_rng(17)
    rounds = 3
    src = rng.integers(-10**5, 10**5, size=BLOCKS * rounds * 2 * BLOCK).astype(np.int32)
    out = np.full(BLOCKS * rounds * BLOCK, POISON, dtype=np.int32)
    totals = np.full(BLOCKS * rounds, POISON, dtype=np.int32)
    alias_kernel()[BLOCKS, BLOCK](src, out, totals, rounds)
    cuda.synchronize()
    tid = np.arange(BLOCK)
    for row in range(BLOCKS * rounds):
        wide = src[row * 2 * BLOCK:(row + 1) * 2 * BLOCK]
        narrow = -wide[:BLOCK]
        value = wide[BLOCK - 1 - tid] + narrow[(tid + 1) % BLOCK] + wide[BLOCK + (tid + 1) % BLOCK]
        expected = value + wide[(tid + 3) % BLOCK] + narrow[(tid + 5) % BLOCK]
        np.testing.assert_array_equal(out[row * BLOCK:(row + 1) * BLOCK], expected)
        assert totals[row] == value.sum(dtype=np.int32), row
