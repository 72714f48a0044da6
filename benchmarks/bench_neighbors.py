"""Adjacent difference and discontinuity over 1 GiB of int32.

    python benchmarks/bench_neighbors.py [--threads 256] [--items 16]

Each case loads a blocked tile, combines every item with its neighbour and
stores the result (differences, or int32 flags: heads, or heads + 2 * tails),
in (1) a cuda.coop kernel (numba-cuda-mlir) and (2) the same kernel in CUDA C++
with CUB's BlockAdjacentDifference / BlockDiscontinuity built by nvcc.  The
``*_callback`` cases pass a Python device function as the operator (inlined by
LTO), against a C++ functor.  Reports milliseconds, coop/CUB and GB/s.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import import_source  # noqa: E402
from harness import Case, Family, In, Out  # noqa: E402

N = 1 << 28  # int32 elements = 1 GiB

CUB_SOURCE = r"""
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cstdio>
#include <cuda_runtime.h>

constexpr int BT = THREADS, IPT = ITEMS, TILE = BT * IPT;

struct Sub { __device__ int operator()(int a, int b) const { return a - b; } };
struct AbsDiff { __device__ int operator()(int a, int b) const { return a > b ? a - b : b - a; } };
struct Unequal { __device__ bool operator()(int a, int b) const { return a != b; } };

template <bool RIGHT, typename Op>
__global__ void difference(const int* in, int* out) {
  using AD = cub::BlockAdjacentDifference<int, BT>;
  __shared__ typename AD::TempStorage storage;
  const size_t base = size_t(blockIdx.x) * TILE;
  int a[IPT], b[IPT];
  cub::LoadDirectBlocked(threadIdx.x, in + base, a);
  if (RIGHT) AD(storage).SubtractRight(a, b, Op{}); else AD(storage).SubtractLeft(a, b, Op{});
  cub::StoreDirectBlocked(threadIdx.x, out + base, b);
}

template <bool BOTH>
__global__ void flags(const int* in, int* out) {
  using BD = cub::BlockDiscontinuity<int, BT>;
  __shared__ typename BD::TempStorage storage;
  const size_t base = size_t(blockIdx.x) * TILE;
  int a[IPT], h[IPT], t[IPT];
  cub::LoadDirectBlocked(threadIdx.x, in + base, a);
  if (BOTH) {
    BD(storage).FlagHeadsAndTails(h, t, a, Unequal{});
    for (int i = 0; i < IPT; ++i) h[i] += 2 * t[i];
  } else {
    BD(storage).FlagHeads(h, a, Unequal{});
  }
  cub::StoreDirectBlocked(threadIdx.x, out + base, h);
}

template <typename K>
float bench(K kernel, const int* in, int* out, size_t n) {
  dim3 grid(unsigned(n / TILE));
  return coop_bench::median_ms([&] { kernel<<<grid, BT>>>(in, out); }, 20);
}

int main() {
  const size_t n = size_t(1) << 28;
  int *in, *out; cudaMalloc(&in, n * 4); cudaMalloc(&out, n * 4); cudaMemset(in, 1, n * 4);
  printf("{\"difference_left\": %f", bench(difference<false, Sub>, in, out, n));
  printf(", \"difference_right\": %f", bench(difference<true, Sub>, in, out, n));
  printf(", \"difference_left_callback\": %f", bench(difference<false, AbsDiff>, in, out, n));
  printf(", \"heads\": %f", bench(flags<false>, in, out, n));
  printf(", \"heads_and_tails\": %f", bench(flags<true>, in, out, n));
  printf("}\n");
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""

KERNEL_SOURCE = """
from numba_cuda_mlir import cuda
from cuda import coop


@cuda.jit(device=True)
def absdiff(a, b):
    return a - b if a > b else b - a


def difference(direction, callback):
    @cuda.jit
    def kernel(source, destination, items_per_thread):
        block = coop.this_block()
        a = coop.ThreadData(items_per_thread)
        offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
        coop.load(block, source, a, offset=offset)
        if callback:
            b = coop.adjacent_difference(block, a, direction=direction, difference_op=absdiff)
        else:
            b = coop.adjacent_difference(block, a, direction=direction)
        coop.store(block, destination, b, offset=offset)
    return kernel


@cuda.jit
def heads(source, destination, items_per_thread):
    block = coop.this_block()
    a = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, a, offset=offset)
    h = coop.discontinuity(block, a, mode="heads")
    coop.store(block, destination, h, offset=offset)


@cuda.jit
def heads_and_tails(source, destination, items_per_thread):
    block = coop.this_block()
    a = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, a, offset=offset)
    h, t = coop.discontinuity(block, a, mode="heads_and_tails")
    for i in range(items_per_thread):
        h[i] = h[i] + 2 * t[i]
    coop.store(block, destination, h, offset=offset)
"""


# case -> kernel factory and its arguments
CASES = {
    "difference_left": ("difference", "left", False),
    "difference_right": ("difference", "right", False),
    "difference_left_callback": ("difference", "left", True),
    "heads": ("heads",),
    "heads_and_tails": ("heads_and_tails",),
}


def _expected(name, tiles):
    if name == "difference_left":
        return np.concatenate([tiles[:, :1], np.diff(tiles, axis=1)], axis=1)
    if name == "difference_right":
        return np.concatenate([-np.diff(tiles, axis=1), tiles[:, -1:]], axis=1)
    if name == "difference_left_callback":
        return np.concatenate([tiles[:, :1], np.abs(np.diff(tiles, axis=1))], axis=1)
    h = np.concatenate([np.ones_like(tiles[:, :1]), (np.diff(tiles, axis=1) != 0)], axis=1)
    t = np.concatenate([(np.diff(tiles, axis=1) != 0), np.ones_like(tiles[:, :1])], axis=1)
    return h if name == "heads" else h + 2 * t


def buffers(cfg):
    # runs of 3 equal values
    return {"src": In(np.int32, N, lambda: (np.arange(N, dtype=np.int64) // 3 % 1000).astype(np.int32)),
            "dst": Out(np.int32, N)}


def check(name: str, tile: int):
    def run_check(data):
        got = data.dev("dst")[:4 * tile].copy_to_host().reshape(4, tile)
        assert np.array_equal(got, _expected(name, data.host("src")[:4 * tile].reshape(4, tile))), name
    return run_check


def cases(cfg):
    ns = vars(import_source(KERNEL_SOURCE, "bench_neighbors_kernels"))
    tile = cfg.threads * cfg.items
    return [Case(name, ns[factory](*params) if params else ns[factory], N // tile, cfg.threads,
                 ("src", "dst", cfg.items), check(name, tile), bytes=2 * N * 4)
            for name, (factory, *params) in CASES.items()]


FAMILY = Family(
    "neighbors", __doc__, buffers, cases, cub_source=CUB_SOURCE,
    title=lambda cfg: f"1 GiB int32 load -> neighbours -> store, {cfg.threads} threads x {cfg.items} items per thread")


main = FAMILY.main


if __name__ == "__main__":
    main()
