"""Explicit scratch: one TempStorage for several calls, automatic or manual barriers, reserved arrays."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS = 4


# example-begin shared-scratch
@cuda.jit
def roundtrip(source, destination):
    block = coop.this_block()
    temp = coop.TempStorage()  # size and alignment inferred from the calls that use it
    items = coop.ThreadData(ITEMS)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS
    # Both calls use the same shared-memory region ("shared" sharing, the default):
    # the load ends with a barrier (auto_sync), so the store may reuse the bytes.
    coop.load(block, source, items, algorithm="transpose", offset=offset, temp_storage=temp)
    coop.store(block, destination, items, algorithm="transpose", offset=offset, temp_storage=temp)
# example-end shared-scratch


# example-begin manual-sync
@cuda.jit
def roundtrip_manual_sync(source, destination):
    block = coop.this_block()
    temp = coop.TempStorage(auto_sync=False)  # you place the barriers
    items = coop.ThreadData(ITEMS)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS
    coop.load(block, source, items, algorithm="transpose", offset=offset, temp_storage=temp)
    for i in range(ITEMS):  # work that does not touch the scratch runs before the barrier
        items[i] = items[i] + 1
    cuda.syncthreads()  # every thread is done with the scratch before it is reused
    coop.store(block, destination, items, algorithm="transpose", offset=offset, temp_storage=temp)
# example-end manual-sync


# example-begin exclusive
@cuda.jit
def two_tiles(a, b, out_a, out_b):
    block = coop.this_block()
    temp = coop.TempStorage(sharing="exclusive")  # each call site gets its own slice
    x = coop.ThreadData(ITEMS)
    y = coop.ThreadData(ITEMS)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS
    coop.load(block, a, x, algorithm="transpose", offset=offset, temp_storage=temp)
    coop.load(block, b, y, algorithm="transpose", offset=offset, temp_storage=temp)
    coop.store(block, out_a, y, offset=offset)  # direct: no scratch
    coop.store(block, out_b, x, offset=offset)
# example-end exclusive


THREADS = 128
SLOTS = THREADS + 1  # a reservation's count is a compile-time constant


# example-begin reserve
@cuda.jit
def share_of_total(source, destination):
    block = coop.this_block()
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * THREADS + t
    storage = coop.TempStorage()  # coop.sum's scratch never overlaps a reservation
    values = storage.reserve(SLOTS, np.float32)  # an ordinary shared array
    values[t] = source[i]
    total = coop.sum(block, source[i], temp_storage=storage)
    if t == 0:
        values[THREADS] = total  # thread 0 holds the sum: share it through the array
    cuda.syncthreads()  # a descriptor with reservations never adds barriers itself
    destination[i] = values[(t + 1) % THREADS] / values[THREADS]  # a neighbour's share
# example-end reserve


def main():
    threads, blocks = 128, 8
    src = np.arange(blocks * threads * ITEMS, dtype=np.int32)
    dst = np.zeros_like(src)
    roundtrip[blocks, threads](src, dst)
    np.testing.assert_array_equal(dst, src)
    roundtrip_manual_sync[blocks, threads](src, dst)
    np.testing.assert_array_equal(dst, src + 1)
    a, b = src.copy(), src[::-1].copy()
    out_a, out_b = np.zeros_like(a), np.zeros_like(b)
    two_tiles[blocks, threads](a, b, out_a, out_b)
    np.testing.assert_array_equal(out_a, b)
    np.testing.assert_array_equal(out_b, a)
    values = np.arange(1, blocks * THREADS + 1, dtype=np.float32)
    shares = np.zeros_like(values)
    share_of_total[blocks, THREADS](values, shares)
    tiles = values.reshape(blocks, THREADS)
    expected = np.roll(tiles, -1, axis=1) / tiles.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(shares, expected.reshape(-1), rtol=1e-6)
    return dst


ARGS = (np.zeros(1, np.int32), np.zeros(1, np.int32))
COMPILE = [
    (roundtrip, ARGS, {"block": 128}),
    (roundtrip_manual_sync, ARGS, {"block": 128}),
    (two_tiles, ARGS * 2, {"block": 128}),
    (share_of_total, (np.zeros(1, np.float32), np.zeros(1, np.float32)), {"block": THREADS}),
]

if __name__ == "__main__":
    main()
    print("ok")
