"""Reductions: the sum of a whole array, row maxima shared by a warp, batched warp sums."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS = 4


# example-begin array-sum
@cuda.jit
def array_sum(x, count, total):
    block = coop.this_block()
    items = coop.ThreadData(ITEMS)
    partial = np.int64(0)  # this thread's share, over all the tiles it sees
    tile = cuda.blockDim.x * ITEMS
    for offset in range(cuda.blockIdx.x * tile, count, cuda.gridDim.x * tile):
        valid = min(count - offset, tile)
        coop.load(block, x, items, algorithm="striped", offset=offset,
                  valid_items=valid, oob_default=np.int64(0))
        for i in range(ITEMS):
            partial += items[i]
    block_total = coop.sum(block, partial, broadcast=False)  # thread 0 alone reads it
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(total, 0, block_total)
# example-end array-sum


# example-begin row-max
@cuda.jit
def scale_rows_by_max(matrix):
    """Each warp owns one row of 32 * 4 = 128 floats and divides it by the row's maximum."""
    warp = coop.this_warp()
    items = coop.ThreadData(ITEMS)
    offset = cuda.blockIdx.x * cuda.blockDim.x * ITEMS  # the block's origin; coop adds the warp's
    coop.load(warp, matrix, items, offset=offset)
    # A payload contributes all its items; every lane gets the result (broadcast=True).
    row_max = coop.reduce(warp, items, binary_op="max")
    for i in range(ITEMS):
        items[i] = items[i] / row_max
    coop.store(warp, matrix, items, offset=offset)
# example-end row-max


# example-begin batched
FEATURES = 3


@cuda.jit
def feature_sums(samples, sums):
    """samples is [n, 3]: every lane holds one sample's 3 features; a warp sums its 32 samples."""
    warp = coop.this_warp()
    features = coop.ThreadData(FEATURES, dtype=np.float32)
    sample = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    for j in range(FEATURES):
        features[j] = samples[sample, j]
    # Batch j = feature j of all 32 lanes. Striped result: lane l slot 0 holds batch l.
    per_lane = coop.reduce_batched(warp, features, binary_op="+")
    lane = cuda.threadIdx.x % 32
    if lane < FEATURES:
        cuda.atomic.add(sums, lane, per_lane[0])
# example-end batched


def main():
    rng = np.random.default_rng(6)
    x = rng.integers(-1000, 1000, 2_000_003).astype(np.int64)
    total = np.zeros(1, dtype=np.int64)
    array_sum[60, 256](x, x.size, total)
    assert total[0] == x.sum()

    m = rng.random((64, 32 * ITEMS)).astype(np.float32) + np.float32(0.5)
    expected = m / m.max(axis=1, keepdims=True)
    flat = m.ravel().copy()
    scale_rows_by_max[64 // 4, 128](flat)
    np.testing.assert_allclose(flat.reshape(m.shape), expected, rtol=1e-6)

    samples = rng.random((128 * 20, FEATURES)).astype(np.float32)
    sums = np.zeros(FEATURES, dtype=np.float32)
    feature_sums[20, 128](samples, sums)
    np.testing.assert_allclose(sums, samples.sum(axis=0), rtol=1e-4)
    return total, flat, sums


COMPILE = [
    (array_sum, (np.zeros(1, np.int64), np.int64(1), np.zeros(1, np.int64)), {"block": 256}),
    (scale_rows_by_max, (np.zeros(1, np.float32),), {"block": 128}),
    (feature_sums, (np.zeros((1, 3), np.float32), np.zeros(3, np.float32)), {"block": 128}),
]

if __name__ == "__main__":
    main()
    print("ok")
