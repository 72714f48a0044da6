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

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    build_nvrtc_kernels, import_source, nvcc_baseline_ms, per_launch_table, specialize, time_kernel, write_results,
)

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
    import numpy as np

    if distribution == "constant":
        return np.full(N, 77, dtype=np.uint8)
    return np.random.default_rng(0).integers(0, 256, size=N, dtype=np.uint8)


def _check_and_time(launchers: dict) -> dict:
    """``launchers[algo](samples, out)`` launches one kernel; check each, then time it."""
    import numpy as np
    from numba_cuda_mlir import cuda

    out = cuda.device_array(BINS, dtype=np.uint32)
    results = {}
    for dist in DISTRIBUTIONS:
        host = _samples(dist)
        expected = np.bincount(host, minlength=BINS).astype(np.uint32)
        samples = cuda.to_device(host)
        results[dist] = {}
        for algo, launch in launchers.items():
            out.copy_to_device(np.zeros(BINS, dtype=np.uint32))
            launch(samples, out)
            cuda.synchronize()
            assert np.array_equal(out.copy_to_host(), expected), (dist, algo)
            # The counters keep accumulating over the timed launches (as in the C++ baseline).
            results[dist][algo] = time_kernel(lambda: launch(samples, out))
    return results


def throughput(threads: int, items: int, grid: int):
    kernels = {algo: coop_kernel(algo, threads, items) for algo in ALGORITHMS}
    return _check_and_time({algo: (lambda samples, out, k=k: k[grid, threads](samples, out, N))
                            for algo, k in kernels.items()})


def nvrtc_baseline(threads: int, items: int, grid: int) -> dict:
    """The per-tile C++ kernel built by NVRTC (cuda.coop's compiler), checked and timed like coop's."""
    source = specialize(CUB_KERNELS, threads, items)
    names = {algo: f"per_tile<cub::BLOCK_HISTO_{algo.upper()}>" for algo in ALGORITHMS}
    launches = build_nvrtc_kernels(source, list(names.values()))
    return _check_and_time({algo: (lambda samples, out, f=launches[name]: f(grid, threads, samples, out, N))
                            for algo, name in names.items()})


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=256)
    parser.add_argument("--items", type=int, default=32)
    parser.add_argument("--blocks-per-sm", type=int, default=8)
    args = parser.parse_args(argv)
    from numba_cuda_mlir import cuda

    device = cuda.get_current_device()
    sms = device.MULTIPROCESSOR_COUNT
    grid = sms * args.blocks_per_sm
    cc = device.compute_capability
    report = {"threads": args.threads, "items_per_thread": args.items, "grid": grid, "samples": N, "bins": BINS,
              "device": device.name.decode() if isinstance(device.name, bytes) else str(device.name)}
    report["coop_ms"] = throughput(args.threads, args.items, grid)
    report["cub_ms"] = nvcc_baseline_ms(specialize(CUB_SOURCE, args.threads, args.items), "histogram", grid,
                                        arch=f"sm_{cc[0]}{cc[1]}")
    report["cub_nvrtc_ms"] = nvrtc_baseline(args.threads, args.items, grid)
    print(f"\n2^28 uint8 samples -> 256 bins, {args.threads} threads x {args.items} items, grid {grid}")
    print(f"{'data':9s} {'algorithm':9s} {'coop ms':>8s} {'CUB same':>9s} {'ratio':>6s} {'CUB idiom':>10s} "
          f"{'ratio':>6s} {'NVRTC same':>11s} {'ratio':>6s} {'coop GB/s':>10s}")
    cub = report.get("cub_ms", {})
    for dist, per_algo in report["coop_ms"].items():
        for algo, ms in per_algo.items():
            same = cub.get(dist, {}).get(f"per_tile_{algo}")
            idiom = cub.get(dist, {}).get(f"composite_{algo}")
            nv = report["cub_nvrtc_ms"][dist][algo]
            r1 = f"{same / ms:6.3f}" if same else "   n/a"
            r2 = f"{idiom / ms:6.3f}" if idiom else "   n/a"
            print(f"{dist:9s} {algo:9s} {ms:8.3f} {same or float('nan'):9.3f} {r1} {idiom or float('nan'):10.3f} "
                  f"{r2} {nv:11.3f} {nv / ms:6.3f} {N / (ms * 1e-3) / 1e9:10.0f}")
    print("ratio = CUB ms / coop ms (>= 1: coop as fast or faster); CUB same/idiom built by nvcc, "
          "NVRTC same = the per-tile C++ built by NVRTC, cuda.coop's compiler")
    per_launch_table(report, "case", rename={"cub_ms": lambda k: k.replace("/", "/per_tile_")})
    write_results("histogram", report)
    return report


if __name__ == "__main__":
    main()
