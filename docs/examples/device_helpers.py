"""Cooperative calls inside device functions: inline them into the kernel."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS = 4


# example-begin helper
@cuda.jit(device=True, inline="always")  # inlined: the call sees the kernel's launch shape
def load_tile(source, items, tile_index):
    offset = tile_index * cuda.blockDim.x * ITEMS
    coop.load(coop.this_block(), source, items, offset=offset, algorithm="striped")


@cuda.jit(device=True, inline="always")
def store_tile(destination, items, tile_index):
    offset = tile_index * cuda.blockDim.x * ITEMS
    coop.store(coop.this_block(), destination, items, offset=offset, algorithm="striped")


@cuda.jit
def add_one(source, destination):
    items = coop.ThreadData(ITEMS, dtype=np.int32)
    load_tile(source, items, cuda.blockIdx.x)
    for i in range(ITEMS):
        items[i] += 1
    store_tile(destination, items, cuda.blockIdx.x)
# example-end helper


def main():
    src = np.arange(32 * 64 * ITEMS, dtype=np.int32)
    dst = np.zeros_like(src)
    add_one[32, 64](src, dst)
    np.testing.assert_array_equal(dst, src + 1)
    return dst


COMPILE = [(add_one, (np.zeros(1, np.int32), np.zeros(1, np.int32)), {"block": 64})]

if __name__ == "__main__":
    main()
    print("ok")
