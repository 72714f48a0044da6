"""Scan an array of any length with one thread block.

The block walks the array tile by tile.  Each tile is loaded, scanned with
``coop.inclusive_sum`` (or ``coop.exclusive_sum``) and stored; a *stateful
prefix callback* carries the running total from one tile to the next:

- ``running_total(state, block_aggregate)`` receives the tile's total and a
  pointer to the calling thread's ``state`` (a one-item ``ThreadData``),
  returns the total of all earlier tiles (the prefix that CUB combines in front
  of every item of this tile) and adds this tile's total to the state;
- CUB calls it in the lanes of warp 0 only and uses thread 0's return value, so
  every thread initializes its state the same way and thread 0's state is the
  running total.

The exclusive kernel spells it as NVIDIA's cuda.coop documents it: the callback
wrapped in ``StatefulFunction(op, state_dtype)`` and the state as the scan's third
operand; the inclusive kernel passes the same state by keyword (``prefix_state=``).

    python examples/running_scan.py
"""

import numpy as np
from numba_cuda_mlir import cuda

from cuda import coop
from cuda.coop.numba_mlir import StatefulFunction

THREADS = 128
ITEMS_PER_THREAD = 4


@cuda.jit(device=True)
def running_total(state, block_aggregate):
    prefix = state[0]
    state[0] = prefix + block_aggregate
    return prefix


running_total_int32 = StatefulFunction(running_total, np.int32)


@cuda.jit
def running_inclusive_sum(values, out, n):
    block = coop.this_block()
    tile = cuda.blockDim.x * ITEMS_PER_THREAD
    items = coop.ThreadData(ITEMS_PER_THREAD)
    state = coop.ThreadData(1, dtype=values.dtype)
    state[0] = 0
    for start in range(0, n, tile):
        # The last tile is partial: pad it with zeros, which leave a sum unchanged.
        valid = min(n - start, tile)  # at most a tile: a larger count traps (run-time checks)
        coop.load(block, values, items, offset=start, valid_items=valid, oob_default=0)
        sums = coop.inclusive_sum(block, items, prefix_op=running_total, prefix_state=state)
        coop.store(block, out, sums, offset=start, valid_items=valid)


@cuda.jit
def running_exclusive_sum(values, out, n):
    block = coop.this_block()
    tile = cuda.blockDim.x * ITEMS_PER_THREAD
    items = coop.ThreadData(ITEMS_PER_THREAD)
    state = cuda.local.array(1, np.int32)  # a local array is a payload too
    state[0] = 0
    for start in range(0, n, tile):
        valid = min(n - start, tile)
        coop.load(block, values, items, offset=start, valid_items=valid, oob_default=0)
        sums = coop.exclusive_sum(block, items, state, prefix_op=running_total_int32)
        coop.store(block, out, sums, offset=start, valid_items=valid)


def main(n=1_000_003, seed=0):
    """Run both kernels on ``n`` random int32 values; return ``(values, inclusive, exclusive)``."""
    rng = np.random.default_rng(seed)
    values = rng.integers(-50, 50, size=n, dtype=np.int32)
    d_values = cuda.to_device(values)
    d_inclusive = cuda.device_array_like(values)
    d_exclusive = cuda.device_array_like(values)
    running_inclusive_sum[1, THREADS](d_values, d_inclusive, n)
    running_exclusive_sum[1, THREADS](d_values, d_exclusive, n)
    return values, d_inclusive.copy_to_host(), d_exclusive.copy_to_host()


if __name__ == "__main__":
    values, inclusive, exclusive = main()
    expected = np.cumsum(values, dtype=np.int32)
    assert (inclusive == expected).all()
    assert (exclusive[1:] == expected[:-1]).all() and exclusive[0] == 0
    print(f"scanned {len(values)} values with one block of {THREADS} threads: ok")
