"""Histogram of a large array, block by block; run-length decoding into an array."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS = 8
BINS = 256
THREADS = 128
BINS_PER_THREAD = BINS // THREADS  # 2 counters per thread


# example-begin histogram
@cuda.jit
def byte_histogram(data, count, counts):
    block = coop.this_block()
    samples = coop.ThreadData(ITEMS)  # uint8, from `data`
    running = coop.ThreadData(BINS_PER_THREAD, dtype=np.int32)
    for i in range(BINS_PER_THREAD):
        running[i] = 0
    tile = cuda.blockDim.x * ITEMS
    for offset in range(cuda.blockIdx.x * tile, count, cuda.gridDim.x * tile):
        valid = min(count - offset, tile)
        coop.load(block, data, samples, algorithm="striped", offset=offset, valid_items=valid)
        # Adds this tile's counts into `running` (striped: counter i of thread t is bin t + i*128).
        coop.histogram(block, samples, bins=BINS, accumulate=running, valid_items=valid, layout="striped")
    for i in range(BINS_PER_THREAD):
        cuda.atomic.add(counts, cuda.threadIdx.x + i * cuda.blockDim.x, running[i])
# example-end histogram


# example-begin decode
RUNS = 2  # runs per thread


@cuda.jit
def decode_runs(run_values, run_lengths, out, out_offsets, totals):
    """Each block decodes its 128*2 runs to out[out_offsets[block] : ...]."""
    block = coop.this_block()
    values = coop.ThreadData(RUNS)
    lengths = coop.ThreadData(RUNS)
    offset = cuda.blockIdx.x * cuda.blockDim.x * RUNS
    coop.load(block, run_values, values, offset=offset)
    coop.load(block, run_lengths, lengths, offset=offset)
    total = coop.run_length_decode_into(block, values, lengths, out,
                                        destination_offset=out_offsets[cuda.blockIdx.x])
    if cuda.threadIdx.x == 0:
        totals[cuda.blockIdx.x] = total  # the same on every thread
# example-end decode


def main():
    rng = np.random.default_rng(5)
    data = rng.integers(0, 256, 3_000_001).astype(np.uint8)
    counts = np.zeros(BINS, dtype=np.int32)
    byte_histogram[60, THREADS](data, data.size, counts)
    np.testing.assert_array_equal(counts, np.bincount(data, minlength=BINS))

    blocks = 12
    run_values = rng.integers(0, 1000, blocks * THREADS * RUNS).astype(np.int32)
    # Positive: an empty run before a non-empty one is invalid input (the run-time checks trap).
    run_lengths = rng.integers(1, 5, blocks * THREADS * RUNS).astype(np.int32)
    per_block = run_lengths.reshape(blocks, -1).sum(axis=1)
    out_offsets = np.concatenate([[0], np.cumsum(per_block)[:-1]]).astype(np.int64)
    out = np.full(int(per_block.sum()), -1, dtype=np.int32)
    totals = np.zeros(blocks, dtype=np.int64)
    decode_runs[blocks, THREADS](run_values, run_lengths, out, out_offsets, totals)
    np.testing.assert_array_equal(totals, per_block)
    np.testing.assert_array_equal(out, np.repeat(run_values, run_lengths))
    return counts, out


COMPILE = [
    (byte_histogram, (np.zeros(1, np.uint8), np.int64(1), np.zeros(1, np.int32)), {"block": THREADS}),
    (decode_runs, (np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32),
                   np.zeros(1, np.int64), np.zeros(1, np.int64)), {"block": THREADS}),
]

if __name__ == "__main__":
    main()
    print("ok")
