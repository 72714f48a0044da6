"""Sorting inside a kernel: block merge sort of pairs, warp sorts of rows, radix sort, TopK."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS = 4


# example-begin sort-segments
@cuda.jit
def sort_segments(keys, values, count):
    """Sort every block-sized segment of (key, value) pairs by key, in place."""
    block = coop.this_block()
    k = coop.ThreadData(ITEMS)
    v = coop.ThreadData(ITEMS)
    tile = cuda.blockDim.x * ITEMS
    offset = cuda.blockIdx.x * tile
    valid = min(count - offset, tile)  # the last segment may be short: no sentinel needed
    coop.load(block, keys, k, algorithm="transpose", offset=offset, valid_items=valid)
    coop.load(block, values, v, algorithm="transpose", offset=offset, valid_items=valid)
    sk, sv = coop.merge_sort_pairs(block, k, v, valid_items=valid)  # stable; blocked result
    coop.store(block, keys, sk, algorithm="transpose", offset=offset, valid_items=valid)
    coop.store(block, values, sv, algorithm="transpose", offset=offset, valid_items=valid)
# example-end sort-segments


# example-begin sort-rows
ROW_LANES = 8  # one row of 8 * 4 = 32 keys per logical warp


@cuda.jit
def sort_rows_descending(matrix):
    rows = coop.this_warp().group_by(ROW_LANES)
    items = coop.ThreadData(ITEMS)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS  # the block's origin; coop adds each row's
    coop.load(rows, matrix, items, offset=offset)
    ordered = coop.merge_sort_keys(rows, items, descending=True)
    coop.store(rows, matrix, ordered, offset=offset)
# example-end sort-rows


# example-begin radix
@cuda.jit
def radix_sort_tiles(keys, out):
    block = coop.this_block()
    items = coop.ThreadData(ITEMS)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS
    # A striped load is fine here: for keys alone, the order they arrive in does not matter.
    coop.load(block, keys, items, algorithm="striped", offset=offset)
    # The keys are below 2**20: sorting 20 bits needs 5 passes of 4 bits instead of 8.
    # blocked_to_striped hands the result out striped, for a coalesced storage-free store.
    ordered = coop.radix_sort_keys(block, items, end_bit=20, blocked_to_striped=True)
    coop.store(block, out, ordered, algorithm="striped", offset=offset)
# example-end radix


# example-begin topk
K_BEST = 8


@cuda.jit
def best_per_tile(scores, best):
    block = coop.this_block()
    items = coop.ThreadData(ITEMS)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS
    coop.load(block, scores, items, offset=offset)
    top = coop.topk_max_keys(block, items, k=K_BEST)  # tile positions 0..7 hold the 8 largest
    # Only the first K_BEST positions are defined: store exactly those.
    coop.store(block, best, top, offset=cuda.blockIdx.x * K_BEST, valid_items=K_BEST)
# example-end topk


def main():
    rng = np.random.default_rng(4)
    threads = 128
    tile = threads * ITEMS

    count = 5 * tile + 77
    keys = rng.integers(0, 50, count).astype(np.int32)
    values = np.arange(count, dtype=np.int32)
    k0, v0 = keys.copy(), values.copy()
    blocks = -(-count // tile)
    sort_segments[blocks, threads](keys, values, count)
    for start in range(0, count, tile):
        seg = slice(start, min(start + tile, count))
        order = np.argsort(k0[seg], kind="stable")
        np.testing.assert_array_equal(keys[seg], k0[seg][order])
        np.testing.assert_array_equal(values[seg], v0[seg][order])

    matrix = rng.random(64 * ROW_LANES * ITEMS).astype(np.float32)
    m0 = matrix.copy()
    sort_rows_descending[64 * ROW_LANES // threads, threads](matrix)
    np.testing.assert_array_equal(matrix.reshape(64, -1), -np.sort(-m0.reshape(64, -1), axis=1))

    rkeys = rng.integers(0, 1 << 20, 16 * tile).astype(np.uint32)
    rout = np.zeros_like(rkeys)
    radix_sort_tiles[16, threads](rkeys, rout)
    np.testing.assert_array_equal(rout.reshape(16, -1), np.sort(rkeys.reshape(16, -1), axis=1))

    scores = rng.random(32 * tile).astype(np.float32)
    best = np.zeros(32 * K_BEST, dtype=np.float32)
    best_per_tile[32, threads](scores, best)
    # The selection is a set: compare sorted.
    expected = -np.sort(-scores.reshape(32, -1), axis=1)[:, :K_BEST]
    np.testing.assert_array_equal(-np.sort(-best.reshape(32, -1), axis=1), expected)
    return keys, matrix, rout, best


COMPILE = [
    (sort_segments, (np.zeros(1, np.int32), np.zeros(1, np.int32), np.int64(1)), {"block": 128}),
    (sort_rows_descending, (np.zeros(1, np.float32),), {"block": 128}),
    (radix_sort_tiles, (np.zeros(1, np.uint32), np.zeros(1, np.uint32)), {"block": 128}),
    (best_per_tile, (np.zeros(1, np.float32), np.zeros(1, np.float32)), {"block": 128}),
]

if __name__ == "__main__":
    main()
    print("ok")
