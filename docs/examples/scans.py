"""Scans: compaction inside a tile, and the prefix sum of a whole array with a running prefix."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS = 4


# example-begin compact
@cuda.jit
def keep_positive(x, out, kept):
    """Each block copies its tile's positive values, in order, to the front of its output tile."""
    block = coop.this_block()
    items = coop.ThreadData(ITEMS)
    flags = coop.ThreadData(ITEMS, dtype=np.int32)
    count = coop.ThreadData(1, dtype=np.int32)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS
    coop.load(block, x, items, offset=offset)  # blocked: the scan runs in tile order
    for i in range(ITEMS):
        flags[i] = 1 if items[i] > 0 else 0
    # Where each kept value goes; every thread also receives the tile's total in count[0].
    slot = coop.exclusive_sum(block, flags, aggregate_output=count)
    for i in range(ITEMS):
        if flags[i]:
            out[offset + slot[i]] = items[i]
    if cuda.threadIdx.x == 0:
        kept[cuda.blockIdx.x] = count[0]
# example-end compact


# example-begin running-prefix
@cuda.jit(device=True)
def carry(state, block_total):
    """Called by CUB once per tile: return the prefix for this tile, keep the running total."""
    prefix = state[0]
    state[0] = prefix + block_total
    return prefix


@cuda.jit
def cumulative_sum(x, out, count):
    """The inclusive prefix sum of a whole array, by one block walking its tiles."""
    block = coop.this_block()
    items = coop.ThreadData(ITEMS)
    state = coop.ThreadData(1, dtype=np.int64)
    state[0] = 0  # the same in every thread; thread 0's copy is the one that counts
    tile = cuda.blockDim.x * ITEMS
    for offset in range(0, count, tile):
        valid = min(count - offset, tile)
        coop.load(block, x, items, offset=offset, valid_items=valid, oob_default=np.int64(0))
        sums = coop.inclusive_sum(block, items, prefix_op=carry, prefix_state=state)
        coop.store(block, out, sums, offset=offset, valid_items=valid)
# example-end running-prefix


def main():
    rng = np.random.default_rng(7)
    threads, blocks = 128, 10
    tile = threads * ITEMS
    x = rng.integers(-5, 6, blocks * tile).astype(np.int32)
    out = np.zeros_like(x)
    kept = np.zeros(blocks, dtype=np.int32)
    keep_positive[blocks, threads](x, out, kept)
    for b in range(blocks):
        seg = x[b * tile:(b + 1) * tile]
        positive = seg[seg > 0]
        assert kept[b] == positive.size
        np.testing.assert_array_equal(out[b * tile:b * tile + positive.size], positive)

    values = rng.integers(0, 100, 100_001).astype(np.int64)
    sums = np.zeros_like(values)
    cumulative_sum[1, 256](values, sums, values.size)
    np.testing.assert_array_equal(sums, np.cumsum(values))
    return out, sums


COMPILE = [
    (keep_positive, (np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)), {"block": 128}),
    (cumulative_sum, (np.zeros(1, np.int64), np.zeros(1, np.int64), np.int64(1)), {"block": 256}),
]

if __name__ == "__main__":
    main()
    print("ok")
