"""Explicit scratch: one TempStorage for several calls, automatic or manual barriers."""

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
    return dst


ARGS = (np.zeros(1, np.int32), np.zeros(1, np.int32))
COMPILE = [
    (roundtrip, ARGS, {"block": 128}),
    (roundtrip_manual_sync, ARGS, {"block": 128}),
    (two_tiles, ARGS * 2, {"block": 128}),
]

if __name__ == "__main__":
    main()
    print("ok")
