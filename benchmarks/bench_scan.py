"""Tile-wise inclusive scan of 2^28 int32, per BlockScan algorithm; and one-block running scan.

    python benchmarks/bench_scan.py [--threads 256] [--items 16]

Each block scans its own tile: (1) the cuda.coop kernel (numba-cuda-mlir):
``coop.load(..., "warp_transpose")``, ``coop.inclusive_sum(block, items,
algorithm=...)``, ``coop.store(..., "warp_transpose")``; (2) the same kernel in
CUDA C++ with CUB built by nvcc (``BlockLoad``/``BlockScan::InclusiveSum``/
``BlockStore``, same algorithms); (3) ``torch.cumsum`` of the whole array when
torch is installed (a different problem: one scan over all 2^28 items, given for
scale).  Also: a warp-level tile scan (``coop.inclusive_sum(coop.this_warp(),
...)``) against ``WarpScan``, and the stateful-prefix running scan of
``examples/running_scan.py`` (one block over 2^24 items) against the same CUB
loop with a C++ prefix functor.  Reports the compile latency of the tile kernel.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import import_source  # noqa: E402
from harness import Case, Family, In, Out, Reference  # noqa: E402

N = 1 << 28  # int32 elements = 1 GiB
RUNNING_N = 1 << 24  # the one-block running scan
ALGORITHMS = ["raking", "raking_memoize", "warp_scans"]

CUB_SOURCE = r"""
#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cstdio>
#include <cuda_runtime.h>

constexpr int T = THREADS, K = ITEMS;
using BL = cub::BlockLoad<int, T, K, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using BSt = cub::BlockStore<int, T, K, cub::BLOCK_STORE_WARP_TRANSPOSE>;

template <cub::BlockScanAlgorithm A>
__global__ void tile_scan(const int* in, int* out) {
  using BS = cub::BlockScan<int, T, A>;
  __shared__ union { typename BL::TempStorage load; typename BS::TempStorage scan;
                     typename BSt::TempStorage store; } storage;
  int items[K];
  const size_t offset = size_t(blockIdx.x) * T * K;
  BL(storage.load).Load(in + offset, items);
  __syncthreads();
  BS(storage.scan).InclusiveSum(items, items);
  __syncthreads();
  BSt(storage.store).Store(out + offset, items);
}

__global__ void warp_tile_scan(const int* in, int* out) {
  using WS = cub::WarpScan<int>;
  __shared__ typename WS::TempStorage storage[T / 32];
  const size_t base = size_t(blockIdx.x) * T * K + threadIdx.x / 32 * 32 * K + threadIdx.x % 32 * K;
  int items[K];
  for (int i = 0; i < K; ++i) items[i] = in[base + i];
  int total = 0;
  for (int i = 0; i < K; ++i) total += items[i];
  int prefix;
  WS(storage[threadIdx.x / 32]).ExclusiveSum(total, prefix);
  for (int i = 0; i < K; ++i) { prefix += items[i]; out[base + i] = prefix; }
}

struct Running {
  int total;
  __device__ int operator()(int block_aggregate) { int old = total; total += block_aggregate; return old; }
};

// examples/running_scan.py: 128 threads x 4 items, direct loads, default BlockScan.
constexpr int RT = 128;
__global__ void running_scan(const int* in, int* out, long long n) {
  using BLr = cub::BlockLoad<int, RT, 4, cub::BLOCK_LOAD_DIRECT>;
  using BSr = cub::BlockStore<int, RT, 4, cub::BLOCK_STORE_DIRECT>;
  using BS = cub::BlockScan<int, RT>;
  __shared__ typename BS::TempStorage storage;
  Running prefix{0};
  int items[4];
  for (long long start = 0; start < n; start += RT * 4) {
    const int valid = int(n - start < RT * 4 ? n - start : RT * 4);
    BLr().Load(in + start, items, valid, 0);
    BS(storage).InclusiveSum(items, items, prefix);
    __syncthreads();
    BSr().Store(out + start, items, valid);
  }
}

template <class F>
float bench(F launch) { return coop_bench::median_ms(launch); }

int main() {
  const size_t n = size_t(1) << 28;
  int *in, *out; cudaMalloc(&in, n * 4); cudaMalloc(&out, n * 4); cudaMemset(in, 0, n * 4);
  const unsigned grid = unsigned(n / (T * K));
  printf("{");
#define RUN(name, A) printf("\"%s\": %f, ", name, bench([&] { tile_scan<cub::A><<<grid, T>>>(in, out); }));
  RUN("raking", BLOCK_SCAN_RAKING)
  RUN("raking_memoize", BLOCK_SCAN_RAKING_MEMOIZE)
  RUN("warp_scans", BLOCK_SCAN_WARP_SCANS)
  printf("\"warp\": %f, ", bench([&] { warp_tile_scan<<<grid, T>>>(in, out); }));
  printf("\"running\": %f}\n", bench([&] { running_scan<<<1, RT>>>(in, out, 1ll << 24); }));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""

KERNEL_SOURCE = """
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

def make_tile(algorithm, items_per_thread):
    @cuda.jit
    def tile_scan(source, destination):
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread)
        offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
        coop.load(block, source, items, offset=offset, algorithm="warp_transpose")
        sums = coop.inclusive_sum(block, items, algorithm=algorithm)
        coop.store(block, destination, sums, offset=offset, algorithm="warp_transpose")
    return tile_scan

def make_warp(items_per_thread):
    @cuda.jit
    def warp_tile_scan(source, destination):
        warp = coop.this_warp()
        items = coop.ThreadData(items_per_thread)
        offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
        coop.load(warp, source, items, offset=offset)
        sums = coop.inclusive_sum(warp, items)
        coop.store(warp, destination, sums, offset=offset)
    return warp_tile_scan
"""

LATENCY_CODE = r"""
import json, time, numpy as np
t_import = time.perf_counter()
from numba_cuda_mlir import cuda
{coop_import}
t_import = time.perf_counter() - t_import
{kernel}
# The first CUDA context is created here, before the timed first launch (setup_s).
t0 = time.perf_counter()
src = cuda.to_device(np.ones(256 * 16 * 4, dtype=np.int32)); dst = cuda.device_array_like(src)
cuda.synchronize(); t_setup = time.perf_counter() - t0
t0 = time.perf_counter(); k[4, 256](src, dst); cuda.synchronize(); first = time.perf_counter() - t0
t0 = time.perf_counter(); k[4, 256](src, dst); cuda.synchronize(); second = time.perf_counter() - t0
print(json.dumps({{"import_s": t_import, "setup_s": t_setup, "first_launch_s": first, "second_launch_s": second}}))
"""

COOP_KERNEL = """
@cuda.jit
def k(source, destination):
    block = coop.this_block()
    items = coop.ThreadData(16)
    offset = cuda.blockIdx.x * cuda.blockDim.x * 16
    coop.load(block, source, items, offset=offset, algorithm="warp_transpose")
    sums = coop.inclusive_sum(block, items)
    coop.store(block, destination, sums, offset=offset, algorithm="warp_transpose")
"""

PLAIN_KERNEL = """
@cuda.jit
def k(source, destination):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    destination[i] = source[i]
"""


def _example():
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "examples" / "running_scan.py"
    spec = importlib.util.spec_from_file_location("coop_bench_running_scan", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def buffers(cfg):
    return {"src": In(np.int32, N, lambda: np.random.default_rng(0).integers(-100, 100, size=N, dtype=np.int32)),
            "dst": Out(np.int32, N)}


def check_tiles(name: str, tile: int, count: int = 8):
    """The first ``count`` tiles, each scanned on its own."""
    def run_check(data):
        head = data.host("src")[:tile * count].reshape(count, tile)
        expected = np.cumsum(head, axis=1, dtype=np.int32).reshape(-1)
        np.testing.assert_array_equal(data.dev("dst")[:tile * count].copy_to_host(), expected, err_msg=name)
    return run_check


def check_running(data):
    np.testing.assert_array_equal(data.dev("dst")[:RUNNING_N].copy_to_host(),
                                  np.cumsum(data.host("src")[:RUNNING_N], dtype=np.int32))


def cases(cfg):
    ns = vars(import_source(KERNEL_SOURCE, "bench_scan_kernels"))
    grid, tile = N // (cfg.threads * cfg.items), cfg.threads * cfg.items
    made = [Case(algo, ns["make_tile"](algo, cfg.items), grid, cfg.threads, ("src", "dst"),
                 check_tiles(algo, tile), bytes=2 * N * 4) for algo in ALGORITHMS]
    made.append(Case("warp", ns["make_warp"](cfg.items), grid, cfg.threads, ("src", "dst"),
                     check_tiles("warp", 32 * cfg.items), bytes=2 * N * 4))
    example = _example()
    made.append(Case("running", example.running_inclusive_sum, 1, example.THREADS, ("src", "dst", RUNNING_N),
                     check_running, bytes=2 * RUNNING_N * 4, repeat=5, batch=2))
    return made


def torch_cumsum(cfg, data):
    def make():
        import torch

        t = torch.from_numpy(data.host("src")).cuda()
        torch.cuda.synchronize()
        return lambda: torch.cumsum(t, 0)
    return [Reference("torch.cumsum", make, bytes=2 * N * 4)]


FAMILY = Family(
    "scan", __doc__, buffers, cases, cub_source=CUB_SOURCE, header=lambda cfg: {"bytes": N * 4}, label="kernel",
    references=torch_cumsum, latency=(LATENCY_CODE, COOP_KERNEL, PLAIN_KERNEL),
    title=lambda cfg: f"1 GiB int32 tile-wise inclusive scan, {cfg.threads} threads x {cfg.items} items per thread",
    note="(running: one block over 2^24 items; torch.cumsum: one scan of the whole array; ratio > 1: cuda.coop "
         "is faster; the target is >= 0.97)")


main = FAMILY.main


if __name__ == "__main__":
    main()
