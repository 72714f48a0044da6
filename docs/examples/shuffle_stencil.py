"""Shuffle: neighbours across thread boundaries without touching global memory twice."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS = 4


# example-begin smooth
@cuda.jit
def smooth(source, destination):
    """3-point average inside each block's tile; the tile's two ends keep their value."""
    block = coop.this_block()
    items = coop.ThreadData(ITEMS)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS
    coop.load(block, source, items, algorithm="transpose", offset=offset)  # blocked
    left = coop.shuffle(block, items, mode="up")     # position p gets the item of p-1
    right = coop.shuffle(block, items, mode="down")  # position p gets the item of p+1
    for i in range(ITEMS):
        items[i] = (left[i] + items[i] + right[i]) / np.float32(3)
    coop.store(block, destination, items, algorithm="transpose", offset=offset)
# example-end smooth


# example-begin rotate
@cuda.jit
def next_thread_value(values, out):
    block = coop.this_block()
    mine = values[cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x]
    # Scalar modes move one value per thread; rotate wraps around the block.
    theirs = coop.shuffle(block, mine, mode="rotate", distance=1)
    out[cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x] = theirs
# example-end rotate


def main():
    threads, blocks = 64, 8
    src = np.random.default_rng(2).random(blocks * threads * ITEMS, dtype=np.float32)
    dst = np.zeros_like(src)
    smooth[blocks, threads](src, dst)
    tiles = src.reshape(blocks, -1)
    left = np.concatenate([tiles[:, :1], tiles[:, :-1]], axis=1)
    right = np.concatenate([tiles[:, 1:], tiles[:, -1:]], axis=1)
    np.testing.assert_allclose(dst.reshape(blocks, -1), (left + tiles + right) / np.float32(3), rtol=1e-6)

    vals = np.arange(blocks * threads, dtype=np.int32)
    out = np.zeros_like(vals)
    next_thread_value[blocks, threads](vals, out)
    np.testing.assert_array_equal(out.reshape(blocks, threads), np.roll(vals.reshape(blocks, threads), -1, axis=1))
    return dst, out


COMPILE = [
    (smooth, (np.zeros(1, np.float32), np.zeros(1, np.float32)), {"block": 64}),
    (next_thread_value, (np.zeros(1, np.int32), np.zeros(1, np.int32)), {"block": 64}),
]

if __name__ == "__main__":
    main()
    print("ok")
