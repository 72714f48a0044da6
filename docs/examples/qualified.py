"""The qualified namespace, cuda.coop.numba_mlir: kernels written against it alone,
mixed with common-API helpers, with a stateful prefix callback, with scalar payloads,
and compiled offline."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS = 4


# example-begin qualified-kernel
import cuda.coop.numba_mlir as ncoop  # with "as": a bare import would rebind the name cuda


@cuda.jit
def scan_tiles(source, destination, totals):
    """Exclusive prefix sum of each block's tile, and each tile's total."""
    block = ncoop.this_block()
    items = ncoop.local.array(ITEMS, np.int32)  # a fixed-size local array is a payload
    total = ncoop.local.array(1, np.int32)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS
    ncoop.load(block, source, items, offset=offset, algorithm="transpose")
    prefix = ncoop.exclusive_sum(block, items, aggregate_output=total)
    ncoop.store(block, destination, prefix, offset=offset, algorithm="transpose")
    if cuda.threadIdx.x == 0:
        totals[cuda.blockIdx.x] = total[0]
# example-end qualified-kernel


# example-begin mixed
# A helper written against the common vocabulary (it would read the same against
# NVIDIA's common API); the annotation is the payload protocol, ignored by the compiler.
@cuda.jit(device=True, inline="always")
def tile_max(items: coop.ThreadDataLike):
    return coop.reduce(coop.this_block(), items, binary_op="max")


@cuda.jit
def normalize(source, destination):
    """Each block divides its tile by the tile's maximum."""
    block = ncoop.this_block()
    items = ncoop.local.array(ITEMS, np.float32)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS
    ncoop.load(block, source, items, offset=offset)
    scale = tile_max(items)  # the same coop.reduce object: the spellings mix freely
    for i in range(ITEMS):
        items[i] = items[i] / scale
    ncoop.store(block, destination, items, offset=offset)
# example-end mixed


# example-begin stateful
@cuda.jit(device=True)
def running_total(state, tile_total):
    """Called once per scan: return this tile's prefix, keep the total so far in state[0]."""
    prefix = state[0]
    state[0] = prefix + tile_total
    return prefix


carry = ncoop.StatefulFunction(running_total, np.int64)  # the state's dtype, checked at compile time


@cuda.jit
def prefix_sum(values, out, count):
    """Inclusive prefix sum of a whole array by one block walking its tiles."""
    block = ncoop.this_block()
    items = ncoop.local.array(ITEMS, np.int64)
    state = ncoop.local.array(1, np.int64)
    state[0] = 0  # the same in every thread; thread 0's copy is the one CUB reads
    tile = cuda.blockDim.x * ITEMS
    for offset in range(0, count, tile):
        valid = min(count - offset, tile)
        ncoop.load(block, values, items, offset=offset, valid_items=valid, oob_default=np.int64(0))
        sums = ncoop.inclusive_sum(block, items, state, prefix_op=carry)
        ncoop.store(block, out, sums, offset=offset, valid_items=valid)
# example-end stateful


# example-begin scalars
@cuda.jit
def one_key_per_thread(keys, sorted_keys, rotated, ranks):
    """Scalars are one-item payloads: each thread passes a value and gets a value back."""
    block = ncoop.this_block()
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    key = keys[i]
    sorted_keys[i] = ncoop.radix_sort_keys(block, key)  # the block's keys, sorted, one per thread
    rotated[i] = ncoop.shuffle(block, key, mode="rotate", distance=1)  # thread t + 1's key
    ranks[i] = ncoop.exclusive_sum(block, np.int32(1 if key < 0 else 0))  # negatives before t
# example-end scalars


# example-begin offline
def compile_for_sm80():
    """The qualified module's compiler helper: a cubin for a GPU this machine need not have."""
    binary = ncoop.compile_cubin(
        scan_tiles, (np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)),
        cc=(8, 0), block=128)
    assert binary.calls() == 0  # every CUB wrapper inlined by LTO
    assert binary.shared_bytes() > 0  # the transpose load/store and the scan's scratch
    print(binary.summary())  # kernel, sm_80, block, registers, shared memory, calls, size
    return binary
# example-end offline


def main():
    rng = np.random.default_rng(11)
    threads, blocks = 128, 6
    tile = threads * ITEMS

    source = rng.integers(-50, 50, blocks * tile).astype(np.int32)
    destination = np.full_like(source, -999)
    totals = np.full(blocks, -999, dtype=np.int32)
    scan_tiles[blocks, threads](source, destination, totals)
    tiles = source.reshape(blocks, tile)
    np.testing.assert_array_equal(destination.reshape(blocks, tile), np.cumsum(tiles, axis=1) - tiles)
    np.testing.assert_array_equal(totals, tiles.sum(axis=1))

    floats = rng.uniform(1.0, 100.0, blocks * tile).astype(np.float32)
    scaled = np.full_like(floats, np.nan)
    normalize[blocks, threads](floats, scaled)
    ftiles = floats.reshape(blocks, tile)
    np.testing.assert_allclose(scaled.reshape(blocks, tile), ftiles / ftiles.max(axis=1, keepdims=True),
                               rtol=1e-6)

    values = rng.integers(-1000, 1000, 50_001).astype(np.int64)  # not a whole number of tiles
    sums = np.full_like(values, -1)
    prefix_sum[1, 256](values, sums, values.size)
    np.testing.assert_array_equal(sums, np.cumsum(values))

    keys = rng.integers(-1000, 1000, blocks * threads).astype(np.int32)
    sorted_keys = np.full_like(keys, -1)
    rotated = np.full_like(keys, -1)
    ranks = np.full_like(keys, -1)
    one_key_per_thread[blocks, threads](keys, sorted_keys, rotated, ranks)
    per_block = keys.reshape(blocks, threads)
    np.testing.assert_array_equal(sorted_keys.reshape(blocks, threads), np.sort(per_block, axis=1))
    np.testing.assert_array_equal(rotated.reshape(blocks, threads), np.roll(per_block, -1, axis=1))
    negative = (per_block < 0).astype(np.int32)
    np.testing.assert_array_equal(ranks.reshape(blocks, threads), np.cumsum(negative, axis=1) - negative)
    return destination, scaled, sums, sorted_keys


I32 = np.zeros(1, np.int32)
COMPILE = [
    (scan_tiles, (I32, I32, I32), {"block": 128}),
    (normalize, (np.zeros(1, np.float32), np.zeros(1, np.float32)), {"block": 128}),
    (prefix_sum, (np.zeros(1, np.int64), np.zeros(1, np.int64), np.int64(1)), {"block": 256}),
    (one_key_per_thread, (I32, I32, I32, I32), {"block": 128}),
]

if __name__ == "__main__":
    main()
    print("ok")
