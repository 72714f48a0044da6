"""Exchange: coalesced striped loads, blocked work, and a scatter by rank."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS = 4


# example-begin running-sums
@cuda.jit
def running_sums_per_thread(source, destination):
    block = coop.this_block()
    items = coop.ThreadData(ITEMS)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS
    # A striped load is coalesced and needs no shared memory ...
    coop.load(block, source, items, algorithm="striped", offset=offset)
    # ... and exchange gives every thread a run of consecutive items (blocked).
    run = coop.exchange(block, items, mode="striped_to_blocked")
    for i in range(1, ITEMS):  # work that needs consecutive items in one thread
        run[i] += run[i - 1]
    # Back to striped for a coalesced, storage-free store.
    out = coop.exchange(block, run, mode="blocked_to_striped")
    coop.store(block, destination, out, algorithm="striped", offset=offset)
# example-end running-sums


# example-begin reverse-tile
@cuda.jit
def reverse_tiles(source, destination):
    block = coop.this_block()
    items = coop.ThreadData(ITEMS)
    ranks = coop.ThreadData(ITEMS, dtype=np.int32)
    tile = cuda.blockDim.x * ITEMS
    offset = cuda.blockIdx.x * tile
    coop.load(block, source, items, offset=offset)  # blocked: slot i is position t*K + i
    for i in range(ITEMS):
        ranks[i] = tile - 1 - (cuda.threadIdx.x * ITEMS + i)  # where each item goes
    reversed_items = coop.exchange(block, items, mode="scatter_to_blocked", ranks=ranks)
    coop.store(block, destination, reversed_items, offset=offset)
# example-end reverse-tile


def main():
    threads, blocks = 128, 16
    src = np.random.default_rng(1).integers(0, 100, blocks * threads * ITEMS).astype(np.int64)
    dst = np.zeros_like(src)
    running_sums_per_thread[blocks, threads](src, dst)
    np.testing.assert_array_equal(dst.reshape(-1, ITEMS), np.cumsum(src.reshape(-1, ITEMS), axis=1))

    rev = np.zeros_like(src)
    reverse_tiles[blocks, threads](src, rev)
    tile = threads * ITEMS
    np.testing.assert_array_equal(rev.reshape(blocks, tile), src.reshape(blocks, tile)[:, ::-1])
    return dst, rev


ARGS = (np.zeros(1, np.int64), np.zeros(1, np.int64))
COMPILE = [
    (running_sums_per_thread, ARGS, {"block": 128}),
    (reverse_tiles, ARGS, {"block": 128}),
]

if __name__ == "__main__":
    main()
    print("ok")
