"""Warps and logical warps: each group moves its own tile."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS_PER_THREAD = 4


# example-begin warp-copy
@cuda.jit
def warp_copy(source, destination):
    warp = coop.this_warp()  # 32 lanes; the block must hold whole warps
    items = coop.ThreadData(ITEMS_PER_THREAD)
    # The block's tile origin. coop adds each warp's own origin, so warp w of the block
    # reads source[offset + w*32*4 : offset + (w+1)*32*4].
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS_PER_THREAD
    coop.load(warp, source, items, offset=offset, algorithm="transpose")
    coop.store(warp, destination, items, offset=offset, algorithm="transpose")
# example-end warp-copy


# example-begin row-reverse
ROW = 8  # lanes per logical warp: one matrix row per group of 8 lanes


@cuda.jit
def reverse_rows(matrix, out):
    row_group = coop.this_warp().group_by(ROW)
    items = coop.ThreadData(ITEMS_PER_THREAD)  # a row has 8 * 4 = 32 elements
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS_PER_THREAD
    coop.load(row_group, matrix, items, offset=offset)  # blocked: lane l owns 4*l .. 4*l+3
    reversed_items = coop.ThreadData(ITEMS_PER_THREAD, dtype=np.float32)
    for i in range(ITEMS_PER_THREAD):
        reversed_items[i] = items[ITEMS_PER_THREAD - 1 - i]
    # Store lane l's reversed run at the mirrored lane: done with a plain indexed write.
    lane = cuda.threadIdx.x % ROW
    row_start = offset + (cuda.threadIdx.x // ROW) * ROW * ITEMS_PER_THREAD
    mirrored = row_start + (ROW - 1 - lane) * ITEMS_PER_THREAD
    for i in range(ITEMS_PER_THREAD):
        out[mirrored + i] = reversed_items[i]
# example-end row-reverse


def main():
    threads = 128
    src = np.arange(10 * threads * ITEMS_PER_THREAD, dtype=np.int64)
    dst = np.zeros_like(src)
    warp_copy[10, threads](src, dst)
    np.testing.assert_array_equal(dst, src)

    rows, width = 64, ROW * ITEMS_PER_THREAD
    matrix = np.arange(rows * width, dtype=np.float32)
    out = np.zeros_like(matrix)
    reverse_rows[rows * ROW // threads, threads](matrix, out)
    np.testing.assert_array_equal(out.reshape(rows, width), matrix.reshape(rows, width)[:, ::-1])
    return dst, out


COMPILE = [
    (warp_copy, (np.zeros(1, np.int64), np.zeros(1, np.int64)), {"block": 128}),
    (reverse_rows, (np.zeros(1, np.float32), np.zeros(1, np.float32)), {"block": 128}),
]

if __name__ == "__main__":
    main()
    print("ok")
