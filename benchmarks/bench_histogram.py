"""Block histogram of 2^28 uint8 samples into 256 bins, per algorithm and data distribution.

    python benchmarks/bench_histogram.py [--threads 256] [--items 32] [--blocks-per-sm 8]

Compares (1) the cuda.coop kernel (numba-cuda-mlir): a grid-stride loop of
``coop.load(..., "vectorize")`` and ``coop.histogram(..., accumulate=acc)`` with
the counters in registers, flushed with one global atomic per bin and block;
(2) the same kernel in CUDA C++ with CUB built by nvcc (``BlockLoad`` +
``BlockHistogram::Histogram`` per tile, striped read-back into registers); and
(3) the idiomatic CUB kernel that keeps one shared-memory histogram for all of
a block's tiles (``InitHistogram`` once, ``Composite`` per tile); and (4) kernel
(2) built by NVRTC with cuda.coop's options (the compiler cuda.coop uses).  Data:
uniform random bytes (little atomic contention) and a constant byte (every
atomic on one bin).  Every result is checked against ``np.bincount``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import import_source  # noqa: E402
from harness import Case, Family, In, Out  # noqa: E402

N = 1 << 28  # uint8 samples
BINS = 256
ALGORITHMS = ["atomic", "sort"]
DISTRIBUTIONS = ["uniform", "constant"]

# Device code only, so NVRTC can build it too (see common.build_nvrtc_kernels).
CUB_KERNELS = r"""
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_load.cuh>

constexpr int T = THREADS, K = ITEMS, BINS = 256, BPT = (BINS + T - 1) / T;
using BL = cub::BlockLoad<unsigned char, T, K, cub::BLOCK_LOAD_VECTORIZE>;

// The cuda.coop kernel's structure: a full Histogram() per tile (zero, composite,
// barrier), read back striped into per-thread counters; one flush per block.
template <cub::BlockHistogramAlgorithm A>
__global__ void per_tile(const unsigned char* in, unsigned* out, long long n) {
  using BH = cub::BlockHistogram<unsigned char, T, K, BINS, A>;
  __shared__ typename BL::TempStorage load_storage;
  __shared__ typename BH::TempStorage storage;
  __shared__ unsigned bins[BINS];
  unsigned acc[BPT] = {};
  unsigned char items[K];
  const long long tile = (long long)T * K;
  for (long long start = blockIdx.x * tile; start < n; start += (long long)gridDim.x * tile) {
    BL(load_storage).Load(in + start, items);
    BH(storage).Histogram(items, bins);
    __syncthreads();
    for (int i = 0; i < BPT; ++i) {
      const int b = threadIdx.x + i * T;
      if (b < BINS) acc[i] += bins[b];
    }
  }
  for (int i = 0; i < BPT; ++i) {
    const int b = threadIdx.x + i * T;
    if (b < BINS) atomicAdd(out + b, acc[i]);
  }
}

// Idiomatic CUB: one shared histogram for all of the block's tiles.
template <cub::BlockHistogramAlgorithm A>
__global__ void composite(const unsigned char* in, unsigned* out, long long n) {
  using BH = cub::BlockHistogram<unsigned char, T, K, BINS, A>;
  __shared__ typename BL::TempStorage load_storage;
  __shared__ typename BH::TempStorage storage;
  __shared__ unsigned bins[BINS];
  unsigned char items[K];
  BH(storage).InitHistogram(bins);
  __syncthreads();
  const long long tile = (long long)T * K;
  for (long long start = blockIdx.x * tile; start < n; start += (long long)gridDim.x * tile) {
    BL(load_storage).Load(in + start, items);
    BH(storage).Composite(items, bins);
    if (A == cub::BLOCK_HISTO_SORT) __syncthreads();  // the sort's scratch is reused by the next tile
  }
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += T) atomicAdd(out + b, bins[b]);
}
"""

CUB_SOURCE = CUB_KERNELS + r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

template <typename Kernel>
float bench(Kernel kernel, int grid, const unsigned char* in, unsigned* out, long long n,
            const std::vector<unsigned>& expected) {
  cudaMemset(out, 0, BINS * sizeof(unsigned));
  kernel<<<grid, T>>>(in, out, n);
  std::vector<unsigned> got(BINS);
  cudaMemcpy(got.data(), out, BINS * sizeof(unsigned), cudaMemcpyDeviceToHost);
  if (got != expected) { fprintf(stderr, "wrong histogram\n"); exit(2); }
  // The counters keep accumulating: only timing from here on.
  return coop_bench::median_ms([&] { kernel<<<grid, T>>>(in, out, n); });
}

int main(int argc, char** argv) {
  const long long n = 1LL << 28;
  const int grid = atoi(argv[1]);
  std::vector<unsigned char> host(n);
  unsigned long long state = 0x9E3779B97F4A7C15ULL;
  unsigned char* in; unsigned* out;
  cudaMalloc(&in, n); cudaMalloc(&out, BINS * sizeof(unsigned));
  printf("{");
  const char* dists[2] = {"uniform", "constant"};
  for (int d = 0; d < 2; ++d) {
    std::vector<unsigned> expected(BINS, 0);
    for (long long i = 0; i < n; ++i) {
      state ^= state << 13; state ^= state >> 7; state ^= state << 17;
      host[i] = d == 0 ? (unsigned char)(state >> 56) : (unsigned char)77;
      expected[host[i]]++;
    }
    cudaMemcpy(in, host.data(), n, cudaMemcpyHostToDevice);
    printf("%s\"%s\": {", d ? ", " : "", dists[d]);
    printf("\"per_tile_atomic\": %f", bench(per_tile<cub::BLOCK_HISTO_ATOMIC>, grid, in, out, n, expected));
    printf(", \"per_tile_sort\": %f", bench(per_tile<cub::BLOCK_HISTO_SORT>, grid, in, out, n, expected));
    printf(", \"composite_atomic\": %f", bench(composite<cub::BLOCK_HISTO_ATOMIC>, grid, in, out, n, expected));
    printf(", \"composite_sort\": %f}", bench(composite<cub::BLOCK_HISTO_SORT>, grid, in, out, n, expected));
  }
  printf("}\n");
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""

KERNEL_SOURCE = """
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

THREADS = {threads}
ITEMS = {items}
BPT = (256 + THREADS - 1) // THREADS


@cuda.jit
def histogram_kernel(samples, out, n):
    block = coop.this_block()
    # Only the histogram uses this storage, so consecutive calls need no barrier.
    ts = coop.TempStorage(auto_sync=False)
    acc = coop.ThreadData(BPT, dtype=np.uint32)
    for i in range(BPT):
        acc[i] = 0
    items = coop.ThreadData(ITEMS, dtype=np.uint8)
    tile = THREADS * ITEMS
    start = cuda.blockIdx.x * tile
    while start < n:
        coop.load(block, samples, items, offset=start, algorithm="vectorize")
        coop.histogram(block, items, bins=256, algorithm="{algorithm}", accumulate=acc, temp_storage=ts)
        start += cuda.gridDim.x * tile
    for i in range(BPT):
        b = cuda.threadIdx.x + i * THREADS
        if b < 256:
            cuda.atomic.add(out, b, acc[i])
"""


def coop_kernel(algorithm: str, threads: int, items: int):
    source = KERNEL_SOURCE.format(threads=threads, items=items, algorithm=algorithm)
    return import_source(source, f"bench_histogram_{algorithm}_{threads}_{items}").histogram_kernel


def _samples(distribution: str):
    if distribution == "constant":
        return np.full(N, 77, dtype=np.uint8)
    return np.random.default_rng(0).integers(0, 256, size=N, dtype=np.uint8)


def buffers(cfg):
    specs = {dist: In(np.uint8, N, lambda dist=dist: _samples(dist)) for dist in DISTRIBUTIONS}
    specs["out"] = Out(np.uint32, BINS, fill=0)  # the counters accumulate
    return specs


def check(dist: str, algo: str):
    def run_check(data):
        expected = data.derived(f"bincount/{dist}",
                                lambda: np.bincount(data.host(dist), minlength=BINS).astype(np.uint32))
        # Only the first launch is checked: the counters keep accumulating over the timed
        # launches (as in the C++ baseline).
        assert np.array_equal(data.dev("out").copy_to_host(), expected), (dist, algo)
    return run_check


def grid(cfg) -> int:
    return cfg.sms * cfg.blocks_per_sm


def cases(cfg):
    kernels = {algo: coop_kernel(algo, cfg.threads, cfg.items) for algo in ALGORITHMS}
    return [Case(f"{dist}/{algo}", kernels[algo], grid(cfg), cfg.threads, (dist, "out", N), check(dist, algo),
                 cub=f"{dist}/per_tile_{algo}", twin=f"per_tile<cub::BLOCK_HISTO_{algo.upper()}>", bytes=N)
            for dist in DISTRIBUTIONS for algo in ALGORITHMS]


FAMILY = Family(
    "histogram", __doc__, buffers, cases, cub_source=CUB_SOURCE, cub_kernels=CUB_KERNELS, items=32,
    cub_args=lambda cfg: (grid(cfg),),
    options=((("--blocks-per-sm",), {"type": int, "default": 8, "help": "grid = SMs x this"}),),
    header=lambda cfg: {"grid": grid(cfg), "samples": N, "bins": BINS, "device": cfg.device},
    columns={"CUB idiom": lambda case: case.cub.replace("/per_tile_", "/composite_")},
    title=lambda cfg: f"2^28 uint8 samples -> 256 bins, {cfg.threads} threads x {cfg.items} items, grid {grid(cfg)}",
    note="CUB C++: the cuda.coop kernel's structure (a Histogram per tile), built by nvcc; CUB idiom: one shared "
         "histogram per block (Composite per tile); NVRTC: the per-tile C++ built by cuda.coop's compiler")


main = FAMILY.main


if __name__ == "__main__":
    main()
