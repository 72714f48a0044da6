"""Quickstart: copy an array tile by tile with a block load and a block store.

Run it on a machine with a CUDA GPU: ``python docs/examples/quickstart.py``.
The test suite compiles it without a GPU (tests/docs_examples) and runs it on one.
"""

# example-begin quickstart
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS_PER_THREAD = 4


@cuda.jit
def copy_tiles(source, destination):
    block = coop.this_block()  # every thread of the block takes part
    items = coop.ThreadData(ITEMS_PER_THREAD)  # 4 slots per thread; dtype from `source`
    tile = cuda.blockDim.x * ITEMS_PER_THREAD
    offset = cuda.blockIdx.x * tile  # this block's tile
    coop.load(block, source, items, offset=offset)
    coop.store(block, destination, items, offset=offset)


def main():
    threads, blocks = 128, 64
    source = np.arange(blocks * threads * ITEMS_PER_THREAD, dtype=np.int32)
    destination = np.zeros_like(source)
    copy_tiles[blocks, threads](source, destination)  # compiled for 128-thread blocks
    np.testing.assert_array_equal(destination, source)
    return destination
# example-end quickstart


# What the tests compile on a machine without a GPU: (kernel, example arguments, launch).
COMPILE = [
    (copy_tiles, (np.zeros(1, np.int32), np.zeros(1, np.int32)), {"block": 128}),
    (copy_tiles, (np.zeros(1, np.float64), np.zeros(1, np.float64)), {"block": (16, 8)}),
]

if __name__ == "__main__":
    main()
    print("ok")
