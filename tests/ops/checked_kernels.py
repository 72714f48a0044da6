"""Kernels that each pass one run-time argument outside its range, for the run-time checks.

A failed check ends the CUDA context (a trap), so the GPU tests (test_checked_mode.py) run
these in a child process: ``python -m tests.ops.checked_kernels CASE GOOD BAD`` launches ``CASE`` with
the valid value ``GOOD``, prints ``RESULT <json>``, then launches it with ``BAD``
and prints ``RESULT <json>`` again (which it never reaches when the check traps).
The compile tests import the same kernels.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from ..compiler import cuda

from cuda import coop

THREADS = 128
TILE = THREADS * 4
RLD_ROOM = 100  # run_length_kernel's destination
RLD_RUNS = 50  # its non-empty runs


@cuda.jit
def load_kernel(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(block, src, items, valid_items=n, oob_default=-1)
    coop.store(block, dst, items)


@cuda.jit
def reduce_kernel(src, dst, n):
    tid = cuda.threadIdx.x
    dst[tid] = coop.sum(coop.this_warp(), src[tid], valid_items=n)


@cuda.jit
def shuffle_kernel(src, dst, d):
    tid = cuda.threadIdx.x
    dst[tid] = coop.shuffle(coop.this_block(), src[tid], mode="rotate", distance=d)


@cuda.jit
def topk_kernel(src, dst, k):
    block = coop.this_block()
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(block, src, items)
    top = coop.topk_max_keys(block, items, k=k)
    coop.store(block, dst, top)


@cuda.jit
def run_length_kernel(src, dst, lengths, totals):
    block = coop.this_block()
    tid = cuda.threadIdx.x
    values = coop.ThreadData(1, dtype=np.int32)
    runs = coop.ThreadData(1, dtype=np.int32)
    values[0] = src[tid]
    runs[0] = lengths[tid]
    total = coop.run_length_decode_into(block, values, runs, dst)
    totals[tid] = total


@cuda.jit
def run_length_window_kernel(src, dst, lengths):
    block = coop.this_block()
    tid = cuda.threadIdx.x
    values = coop.ThreadData(1, dtype=np.int32)
    runs = coop.ThreadData(1, dtype=np.uint64)
    values[0] = src[tid]
    runs[0] = lengths[tid]
    window = coop.run_length_decode(block, values, runs, decoded_items_per_thread=4,
                                    decoded_offset_dtype=np.uint32)
    coop.store(block, dst, window)


@cuda.jit
def store_kernel(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, items, valid_items=n)


@cuda.jit
def merge_sort_kernel(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.merge_sort_keys(block, items, valid_items=n, oob_default=2**30))


@cuda.jit
def neighbors_kernel(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.adjacent_difference(block, items, valid_items=n))


@cuda.jit
def radix_kernel(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(block, src, items)
    coop.store(block, dst, coop.radix_sort_keys(block, items, begin_bit=n, end_bit=32))


@cuda.jit
def scan_kernel(src, dst, n):
    tid = cuda.threadIdx.x
    dst[tid] = coop.inclusive_sum(coop.this_warp(), src[tid], valid_items=n)


KERNELS = {"load": load_kernel, "store": store_kernel, "reduce": reduce_kernel, "scan": scan_kernel,
           "shuffle": shuffle_kernel, "topk": topk_kernel, "merge_sort": merge_sort_kernel,
           "neighbors": neighbors_kernel, "radix": radix_kernel}
PER_THREAD = ("reduce", "shuffle", "scan")  # one value per thread; the others 4


def _source(rng, size):
    return rng.integers(-1000, 1000, size, dtype=np.int32)


def launch(case: str, value: int):
    """Run ``case`` once with run-time argument ``value``; its outputs as NumPy arrays."""
    rng = np.random.default_rng(7)
    poison = np.int32(-77777)
    if case == "run_length":
        src = _source(rng, THREADS)
        # Runs 0..RLD_RUNS-1 have length ``value``, the others none: 2 fills the
        # destination exactly, 3 needs 150 slots.
        lengths = np.where(np.arange(THREADS) < RLD_RUNS, value, 0).astype(np.int32)
        d_dst = cuda.to_device(np.full(RLD_ROOM, poison, np.int32))
        d_totals = cuda.to_device(np.full(THREADS, -1, np.int64))
        run_length_kernel[1, THREADS](cuda.to_device(src), d_dst, cuda.to_device(lengths), d_totals)
        cuda.synchronize()
        return src, np.concatenate([d_dst.copy_to_host().astype(np.int64), d_totals.copy_to_host()])
    if case == "run_length_window":
        src = _source(rng, THREADS)
        # Run 0 has length ``value`` and run 1 one item: 2**32 - 1 makes the total 2**32,
        # one more than decoded_offset_dtype=uint32 holds.
        lengths = np.zeros(THREADS, np.uint64)
        lengths[:2] = [value, 1]
        d_dst = cuda.to_device(np.full(TILE, poison, np.int32))
        run_length_window_kernel[1, THREADS](cuda.to_device(src), d_dst, cuda.to_device(lengths))
        cuda.synchronize()
        return src, d_dst.copy_to_host()
    size = THREADS if case in PER_THREAD else TILE
    src = _source(rng, size)
    d_dst = cuda.to_device(np.full(size, poison, np.int32))
    KERNELS[case][1, THREADS](cuda.to_device(src), d_dst, np.int64(value))
    cuda.synchronize()
    return src, d_dst.copy_to_host()


def main(argv):
    case, good, bad = argv[1], int(argv[2]), int(argv[3])
    for value in (good, bad):
        src, out = launch(case, value)
        print("RESULT " + json.dumps({"value": value, "src": src.tolist(), "out": out.tolist()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
