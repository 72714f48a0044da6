"""Neighbour operations: deltas of a sorted array and where its runs start."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS = 4


# example-begin deltas
@cuda.jit
def deltas(sorted_keys, out, count):
    block = coop.this_block()
    keys = coop.ThreadData(ITEMS)
    tile = cuda.blockDim.x * ITEMS
    offset = cuda.blockIdx.x * tile
    valid = min(count - offset, tile)
    coop.load(block, sorted_keys, keys, offset=offset, valid_items=valid)
    # The item before this block's tile, so the first delta is right too (block-uniform).
    before = sorted_keys[offset - 1] if offset > 0 else sorted_keys[0]
    d = coop.adjacent_difference(block, keys, valid_items=valid, tile_predecessor_item=before)
    coop.store(block, out, d, offset=offset, valid_items=valid)
# example-end deltas


# example-begin heads
@cuda.jit
def run_heads(sorted_keys, heads, count):
    block = coop.this_block()
    keys = coop.ThreadData(ITEMS)
    tile = cuda.blockDim.x * ITEMS
    offset = cuda.blockIdx.x * tile
    valid = min(count - offset, tile)
    coop.load(block, sorted_keys, keys, offset=offset, valid_items=valid)
    if offset > 0:  # block-uniform branch: every thread of the block takes the same side
        flags = coop.discontinuity(block, keys, valid_items=valid,
                                   tile_predecessor_item=sorted_keys[offset - 1])
    else:
        flags = coop.discontinuity(block, keys, valid_items=valid)  # position 0 is a head
    coop.store(block, heads, flags, offset=offset, valid_items=valid)
# example-end heads


def main():
    rng = np.random.default_rng(3)
    count = 10_000
    keys = np.sort(rng.integers(0, 3000, count)).astype(np.int32)
    threads = 128
    blocks = -(-count // (threads * ITEMS))
    out = np.zeros_like(keys)
    deltas[blocks, threads](keys, out, count)
    np.testing.assert_array_equal(out, np.diff(keys, prepend=keys[0]))

    heads = np.zeros(count, dtype=np.int32)
    run_heads[blocks, threads](keys, heads, count)
    expected = np.concatenate([[1], keys[1:] != keys[:-1]]).astype(np.int32)
    np.testing.assert_array_equal(heads, expected)
    return out, heads


ARGS = (np.zeros(1, np.int32), np.zeros(1, np.int32), np.int64(1))
COMPILE = [(deltas, ARGS, {"block": 128}), (run_heads, ARGS, {"block": 128})]

if __name__ == "__main__":
    main()
    print("ok")
