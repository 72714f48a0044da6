"""The demo's kernels: one small, real kernel per operation family, and its NumPy reference.

Each kernel is plain numba-cuda-mlir code, written as a user would write it: copy one into
a file with the three imports below and it compiles and runs as it is.  Every kernel takes
``items_per_thread`` as its last argument, an int the kernel is specialized on (a launch
compiles once per value), and works on whole tiles of ``blockDim.x * items_per_thread``
items, one tile per block.

Next to each kernel, its ``*_case`` function makes the kernel's arguments from a seeded
generator (outputs included, zeroed) and the result NumPy expects, computed from the
inputs before the launch.  ``python -m cuda.coop demo`` prints the kernel's source, so keep
the kernels short and the comments about what the user sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba_cuda_mlir import cuda

from cuda import coop

THREADS = 128  # the block size every demo kernel is compiled and launched with


@dataclass(frozen=True)
class Case:
    """One set of arguments for a demo kernel and what NumPy says it must produce."""

    args: tuple
    output: int  # the index in ``args`` of the array the kernel writes
    expected: np.ndarray
    # Turns the kernel's output into something ``expected`` compares with (TopK's order
    # among the selected keys is unspecified, so both sides are sorted).
    normalize: Callable[[np.ndarray], np.ndarray] | None = None


@dataclass(frozen=True)
class Demo:
    family: str
    kernel: object  # the @cuda.jit kernel
    about: str  # one line: what the kernel does, with the operations it calls
    case: Callable  # (rng, blocks, items_per_thread) -> Case


def _tiles(array, blocks):
    return array.reshape(blocks, -1)


# -- reduce (the default): the README's quick start ----------------------------------


@cuda.jit
def tile_sums(source, sums, items_per_thread):
    block = coop.this_block()                        # shape = the launch's block shape
    items = coop.ThreadData(items_per_thread)        # dtype inferred from the load source
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, items, offset=offset)   # cub::BlockLoad, inlined by LTO
    total = coop.sum(block, items, broadcast=False)  # cub::BlockReduce; thread 0 gets the sum
    if cuda.threadIdx.x == 0:
        sums[cuda.blockIdx.x] = total


def tile_sums_case(rng, blocks, items_per_thread):
    source = rng.integers(-1000, 1000, blocks * THREADS * items_per_thread, dtype=np.int32)
    expected = _tiles(source, blocks).sum(axis=1, dtype=np.int32)
    return Case((source, np.zeros(blocks, np.int32), items_per_thread), 1, expected)


# -- load_store ----------------------------------------------------------------------


@cuda.jit
def scale_tiles(source, destination, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    # "transpose" reads the tile coalesced (striped) and hands each thread a run of
    # consecutive items (blocked) through shared memory: cub::BlockLoad's BLOCK_LOAD_TRANSPOSE.
    coop.load(block, source, items, algorithm="transpose", offset=offset)
    for i in range(items_per_thread):
        items[i] = items[i] * 2
    coop.store(block, destination, items, algorithm="transpose", offset=offset)


def scale_tiles_case(rng, blocks, items_per_thread):
    source = rng.random(blocks * THREADS * items_per_thread, dtype=np.float32)
    return Case((source, np.zeros_like(source), items_per_thread), 1, source * np.float32(2))


# -- scan ----------------------------------------------------------------------------


@cuda.jit
def tile_prefix_sums(source, destination, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, items, offset=offset)  # blocked: the scan runs in tile order
    sums = coop.inclusive_sum(block, items)          # cub::BlockScan::InclusiveSum
    coop.store(block, destination, sums, offset=offset)


def tile_prefix_sums_case(rng, blocks, items_per_thread):
    source = rng.integers(-100, 100, blocks * THREADS * items_per_thread, dtype=np.int32)
    expected = np.cumsum(_tiles(source, blocks), axis=1, dtype=np.int32).ravel()
    return Case((source, np.zeros_like(source), items_per_thread), 1, expected)


# -- exchange ------------------------------------------------------------------------


@cuda.jit
def reverse_tiles(source, destination, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    ranks = coop.ThreadData(items_per_thread, dtype=np.int32)
    tile = cuda.blockDim.x * items_per_thread
    offset = cuda.blockIdx.x * tile
    coop.load(block, source, items, offset=offset)  # blocked: slot i is position t*K + i
    for i in range(items_per_thread):
        ranks[i] = tile - 1 - (cuda.threadIdx.x * items_per_thread + i)  # where each item goes
    reversed_items = coop.exchange(block, items, mode="scatter_to_blocked", ranks=ranks)
    coop.store(block, destination, reversed_items, offset=offset)


def reverse_tiles_case(rng, blocks, items_per_thread):
    source = rng.integers(0, 1 << 30, blocks * THREADS * items_per_thread, dtype=np.int64)
    expected = _tiles(source, blocks)[:, ::-1].ravel()
    return Case((source, np.zeros_like(source), items_per_thread), 1, expected)


# -- shuffle -------------------------------------------------------------------------


@cuda.jit
def neighbour_sums(source, destination, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, items, offset=offset)
    left = coop.shuffle(block, items, mode="up")     # position p gets the item of p-1
    right = coop.shuffle(block, items, mode="down")  # position p gets the item of p+1
    for i in range(items_per_thread):                # (the tile's two ends get their own)
        items[i] = left[i] + items[i] + right[i]
    coop.store(block, destination, items, offset=offset)


def neighbour_sums_case(rng, blocks, items_per_thread):
    source = rng.integers(-1000, 1000, blocks * THREADS * items_per_thread, dtype=np.int32)
    tiles = _tiles(source, blocks)
    left = np.concatenate([tiles[:, :1], tiles[:, :-1]], axis=1)
    right = np.concatenate([tiles[:, 1:], tiles[:, -1:]], axis=1)
    return Case((source, np.zeros_like(source), items_per_thread), 1, (left + tiles + right).ravel())


# -- merge_sort ----------------------------------------------------------------------


@cuda.jit
def merge_sort_tiles(keys, out, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, keys, items, offset=offset)
    ordered = coop.merge_sort_keys(block, items)  # cub::BlockMergeSort; blocked result
    coop.store(block, out, ordered, offset=offset)


def merge_sort_tiles_case(rng, blocks, items_per_thread):
    keys = rng.standard_normal(blocks * THREADS * items_per_thread).astype(np.float32)
    expected = np.sort(_tiles(keys, blocks), axis=1).ravel()
    return Case((keys, np.zeros_like(keys), items_per_thread), 1, expected)


# -- radix ---------------------------------------------------------------------------


@cuda.jit
def radix_sort_tiles(keys, out, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, keys, items, offset=offset)
    ordered = coop.radix_sort_keys(block, items)  # cub::BlockRadixSort, 4 bits per pass
    coop.store(block, out, ordered, offset=offset)


def radix_sort_tiles_case(rng, blocks, items_per_thread):
    keys = rng.integers(0, 1 << 32, blocks * THREADS * items_per_thread, dtype=np.uint32)
    expected = np.sort(_tiles(keys, blocks), axis=1).ravel()
    return Case((keys, np.zeros_like(keys), items_per_thread), 1, expected)


# -- topk ----------------------------------------------------------------------------


@cuda.jit
def best_per_tile(scores, best, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, scores, items, offset=offset)
    top = coop.topk_max_keys(block, items, k=8)  # tile positions 0..7 hold the 8 largest
    # Only the first 8 positions are defined: store exactly those.
    coop.store(block, best, top, offset=cuda.blockIdx.x * 8, valid_items=8)


def best_per_tile_case(rng, blocks, items_per_thread):
    scores = rng.random(blocks * THREADS * items_per_thread, dtype=np.float32)
    expected = -np.sort(-_tiles(scores, blocks), axis=1)[:, :8]

    def sorted_rows(best):  # the 8 are a set: their order is not specified
        return -np.sort(-best.reshape(blocks, 8), axis=1)

    return Case((scores, np.zeros(blocks * 8, np.float32), items_per_thread), 1, expected, sorted_rows)


# -- neighbors -----------------------------------------------------------------------


@cuda.jit
def run_heads(sorted_keys, heads, items_per_thread):
    block = coop.this_block()
    keys = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, sorted_keys, keys, offset=offset)
    # 1 where a key differs from the one before it; each tile's first key is a head.
    flags = coop.discontinuity(block, keys, mode="heads")  # cub::BlockDiscontinuity
    coop.store(block, heads, flags, offset=offset)


def run_heads_case(rng, blocks, items_per_thread):
    count = blocks * THREADS * items_per_thread
    keys = np.sort(rng.integers(0, count // 3 + 1, count)).astype(np.int32)
    tiles = _tiles(keys, blocks)
    expected = np.concatenate([np.ones((blocks, 1), bool), tiles[:, 1:] != tiles[:, :-1]], axis=1)
    return Case((keys, np.zeros_like(keys), items_per_thread), 1, expected.astype(np.int32).ravel())


# -- histogram -----------------------------------------------------------------------


@cuda.jit
def tile_histograms(samples, histograms, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)  # uint8, from `samples`
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, samples, items, offset=offset)
    # 256 bins over 128 threads: 2 counters per thread, striped (counter i of thread t
    # counts bin t + i*128).  cub::BlockHistogram.
    counts = coop.histogram(block, items, bins=256, bins_per_thread=2)
    for i in range(2):
        histograms[cuda.blockIdx.x * 256 + cuda.threadIdx.x + i * cuda.blockDim.x] = counts[i]


def tile_histograms_case(rng, blocks, items_per_thread):
    samples = rng.integers(0, 256, blocks * THREADS * items_per_thread, dtype=np.uint8)
    expected = np.stack([np.bincount(tile, minlength=256) for tile in _tiles(samples, blocks)])
    return Case((samples, np.zeros(blocks * 256, np.int32), items_per_thread), 1,
                expected.astype(np.int32).ravel())


# -- run_length ----------------------------------------------------------------------


@cuda.jit
def decode_runs(run_values, run_lengths, out, out_offsets, items_per_thread):
    """Each block decodes its 128 * items_per_thread runs to out[out_offsets[block]:]."""
    block = coop.this_block()
    values = coop.ThreadData(items_per_thread)
    lengths = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, run_values, values, offset=offset)
    coop.load(block, run_lengths, lengths, offset=offset)
    coop.run_length_decode_into(block, values, lengths, out,  # cub::BlockRunLengthDecode
                                destination_offset=out_offsets[cuda.blockIdx.x])


def decode_runs_case(rng, blocks, items_per_thread):
    count = blocks * THREADS * items_per_thread
    run_values = rng.integers(0, 1000, count, dtype=np.int32)
    # Positive: an empty run before a non-empty one is invalid input (the run-time checks trap).
    run_lengths = rng.integers(1, 5, count, dtype=np.int32)
    per_block = _tiles(run_lengths, blocks).sum(axis=1)
    out_offsets = np.concatenate([[0], np.cumsum(per_block)[:-1]]).astype(np.int64)
    out = np.zeros(int(per_block.sum()), np.int32)
    return Case((run_values, run_lengths, out, out_offsets, items_per_thread), 2,
                np.repeat(run_values, run_lengths))


# In the order `--all` shows them: the README's kernel first, then from plain data movement
# to the sorts and the specialized families.
DEMOS = {demo.family: demo for demo in (
    Demo("reduce", tile_sums, "the README's tile sum: coop.load, then coop.sum (cub::BlockReduce)",
         tile_sums_case),
    Demo("load_store", scale_tiles, "coalesced tile load and store through shared memory "
         "(coop.load/coop.store, algorithm='transpose')", scale_tiles_case),
    Demo("scan", tile_prefix_sums, "inclusive prefix sum of each tile (coop.inclusive_sum)",
         tile_prefix_sums_case),
    Demo("exchange", reverse_tiles, "reverse each tile by scattering to ranks (coop.exchange)",
         reverse_tiles_case),
    Demo("shuffle", neighbour_sums, "each item plus its two neighbours in the tile (coop.shuffle)",
         neighbour_sums_case),
    Demo("merge_sort", merge_sort_tiles, "sort each tile of float32 keys (coop.merge_sort_keys)",
         merge_sort_tiles_case),
    Demo("radix", radix_sort_tiles, "sort each tile of uint32 keys (coop.radix_sort_keys)",
         radix_sort_tiles_case),
    Demo("topk", best_per_tile, "the 8 largest scores of each tile (coop.topk_max_keys)",
         best_per_tile_case),
    Demo("neighbors", run_heads, "flag where each run of a sorted array starts (coop.discontinuity)",
         run_heads_case),
    Demo("histogram", tile_histograms, "a 256-bin histogram of each tile of bytes (coop.histogram)",
         tile_histograms_case),
    Demo("run_length", decode_runs, "decode (value, length) runs into one array "
         "(coop.run_length_decode_into)", decode_runs_case),
)}
