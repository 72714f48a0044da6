"""Block-reduce sum of 2^28 float32 (one atomic per block), per BlockReduce algorithm.

    python benchmarks/bench_reduce.py [--threads 256] [--items 16]

Compares (1) the cuda.coop kernel (numba-cuda-mlir): ``coop.load(...,
"vectorize")``, ``coop.sum(block, items, algorithm=...)`` and one
``cuda.atomic.add`` per block; (2) the same kernel in CUDA C++ with CUB built by
nvcc (``BlockLoad`` vectorized + ``BlockReduce::Sum`` + ``atomicAdd``); (3)
``torch.sum`` of the whole array when torch is installed.  Also times a warp
variant (``coop.sum(coop.this_warp(), ...)``, one atomic per warp) and
``coop.reduce_batched`` against per-batch CUB ``WarpReduce`` (16 batches per lane),
and reports the compile latency of the block kernel (cold provider cache, warm
disk cache in a new process) next to the same kernel without cuda.coop.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import import_source, specialize  # noqa: E402
from harness import Case, Family, In, Out, Reference  # noqa: E402

N = 1 << 28  # float32 elements = 1 GiB
ALGORITHMS = ["warp_reductions", "raking", "raking_commutative_only"]
BATCHES = 16

CUB_SOURCE = r"""
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cstdio>
#include <cuda_runtime.h>

constexpr int T = THREADS, K = ITEMS, B = BATCHES;

template <cub::BlockReduceAlgorithm A>
__global__ void block_sum(const float* in, float* out) {
  using BL = cub::BlockLoad<float, T, K, cub::BLOCK_LOAD_VECTORIZE>;
  using BR = cub::BlockReduce<float, T, A>;
  __shared__ typename BR::TempStorage storage;
  float items[K];
  BL().Load(in + size_t(blockIdx.x) * T * K, items);
  float total = BR(storage).Sum(items);
  if (threadIdx.x == 0) atomicAdd(out, total);
}

__global__ void warp_sum(const float* in, float* out) {
  using BL = cub::BlockLoad<float, T, K, cub::BLOCK_LOAD_VECTORIZE>;
  using WR = cub::WarpReduce<float>;
  __shared__ typename WR::TempStorage storage[T / 32];
  float items[K];
  BL().Load(in + size_t(blockIdx.x) * T * K, items);
  float partial = items[0];
  for (int i = 1; i < K; ++i) partial += items[i];
  float total = WR(storage[threadIdx.x / 32]).Sum(partial);
  if (threadIdx.x % 32 == 0) atomicAdd(out, total);
}

// B batches per lane, each reduced over the warp with its own WarpReduce (B*log2(32) shuffles).
__global__ void batched(const float* in, float* out) {
  using WR = cub::WarpReduce<float>;
  __shared__ typename WR::TempStorage storage[T / 32];
  const size_t base = (size_t(blockIdx.x) * T + threadIdx.x) * B;
  float items[B];
  for (int j = 0; j < B; ++j) items[j] = in[base + j];
  const int lane = threadIdx.x % 32;
  float mine = 0;
  for (int j = 0; j < B; ++j) {
    float r = WR(storage[threadIdx.x / 32]).Sum(items[j]);
    r = __shfl_sync(0xffffffffu, r, 0);
    if (j % 32 == lane) mine = r;
  }
  if (lane < B) out[(size_t(blockIdx.x) * T + threadIdx.x) / 32 * B + lane] = mine;
}

template <class F>
float bench(F launch) { return coop_bench::median_ms(launch); }

int main() {
  const size_t n = size_t(1) << 28;
  float *in, *out; cudaMalloc(&in, n * 4); cudaMalloc(&out, n * 4); cudaMemset(in, 0, n * 4);
  const unsigned grid = unsigned(n / (T * K));
  printf("{");
#define RUN(name, A) printf("\"%s\": %f, ", name, bench([&] { block_sum<cub::A><<<grid, T>>>(in, out); }));
  RUN("warp_reductions", BLOCK_REDUCE_WARP_REDUCTIONS)
  RUN("raking", BLOCK_REDUCE_RAKING)
  RUN("raking_commutative_only", BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY)
  printf("\"warp\": %f, ", bench([&] { warp_sum<<<grid, T>>>(in, out); }));
  const unsigned bgrid = unsigned(n / (size_t(T) * B));
  printf("\"batched\": %f}\n", bench([&] { batched<<<bgrid, T>>>(in, out); }));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""

KERNEL_SOURCE = """
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

def make_block(algorithm, items_per_thread):
    @cuda.jit
    def block_sum(source, total):
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread)
        coop.load(block, source, items, offset=cuda.blockIdx.x * cuda.blockDim.x * items_per_thread,
                  algorithm="vectorize")
        s = coop.sum(block, items, algorithm=algorithm, broadcast=False)
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(total, 0, s)
    return block_sum

def make_warp(items_per_thread):
    @cuda.jit
    def warp_sum(source, total):
        items = coop.ThreadData(items_per_thread)
        coop.load(coop.this_block(), source, items,
                  offset=cuda.blockIdx.x * cuda.blockDim.x * items_per_thread, algorithm="vectorize")
        s = coop.sum(coop.this_warp(), items, broadcast=False)
        if cuda.threadIdx.x % 32 == 0:
            cuda.atomic.add(total, 0, s)
    return warp_sum

def make_batched(batches):
    @cuda.jit
    def batched(source, out):
        gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        items = coop.ThreadData(batches, dtype=np.float32)
        for j in range(batches):
            items[j] = source[gtid * batches + j]
        r = coop.reduce_batched(coop.this_warp(), items, binary_op="+")
        lane = cuda.threadIdx.x % 32
        if lane < batches:
            out[gtid // 32 * batches + lane] = r[0]
    return batched
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
src = cuda.to_device(np.ones(256 * 16 * 4, dtype=np.float32)); total = cuda.to_device(np.zeros(1, np.float32))
cuda.synchronize(); t_setup = time.perf_counter() - t0
t0 = time.perf_counter(); k[4, 256](src, total); cuda.synchronize(); first = time.perf_counter() - t0
t0 = time.perf_counter(); k[4, 256](src, total); cuda.synchronize(); second = time.perf_counter() - t0
print(json.dumps({{"import_s": t_import, "setup_s": t_setup, "first_launch_s": first, "second_launch_s": second}}))
"""

COOP_KERNEL = """
@cuda.jit
def k(source, total):
    block = coop.this_block()
    items = coop.ThreadData(16)
    coop.load(block, source, items, offset=cuda.blockIdx.x * cuda.blockDim.x * 16, algorithm="vectorize")
    s = coop.sum(block, items, broadcast=False)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(total, 0, s)
"""

PLAIN_KERNEL = """
@cuda.jit
def k(source, total):
    s = source[cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x]
    cuda.atomic.add(total, 0, s)
"""


def buffers(cfg):
    return {"src": In(np.float32, N, lambda: np.random.default_rng(0).standard_normal(N, dtype=np.float32)),
            "total": Out(np.float32, 1, fill=0),  # the atomics add to it
            "out": Out(np.float32, N // 32)}


def check_sum(name: str):
    """The block/warp sums against the float64 sum: returns the absolute error (``abs_error``)."""
    def run_check(data):
        host = data.host("src")
        exact = data.derived("sums", lambda: {"sum": float(host.astype(np.float64).sum()),
                                             "abs": float(np.abs(host).sum())})
        got = float(data.dev("total").copy_to_host()[0])
        error = abs(got - exact["sum"])
        # Float atomics across blocks reorder the sum; the partial sums stay small, so
        # the error is far below 1e-5 * sum|x|.
        assert error <= 1e-5 * exact["abs"], (name, got, exact["sum"])
        return error
    return run_check


def check_batched(cfg):
    def run_check(data):
        sample = data.host("src")[:cfg.threads * BATCHES * 4].reshape(-1, 32, BATCHES).sum(axis=1)
        np.testing.assert_allclose(data.dev("out")[:sample.size].copy_to_host(), sample.reshape(-1),
                                   rtol=1e-4, atol=1e-3)
    return run_check


def cases(cfg):
    ns = vars(import_source(KERNEL_SOURCE, "bench_reduce_kernels"))
    grid = N // (cfg.threads * cfg.items)
    made = [Case(algo, ns["make_block"](algo, cfg.items), grid, cfg.threads, ("src", "total"), check_sum(algo),
                 bytes=N * 4) for algo in ALGORITHMS]
    made.append(Case("warp", ns["make_warp"](cfg.items), grid, cfg.threads, ("src", "total"), check_sum("warp"),
                     bytes=N * 4))
    made.append(Case("batched", ns["make_batched"](BATCHES), N // (cfg.threads * BATCHES), cfg.threads,
                     ("src", "out"), check_batched(cfg), bytes=N * 4))
    return made


def torch_sum(cfg, data):
    def make():
        import torch

        t = torch.from_numpy(data.host("src")).cuda()
        torch.cuda.synchronize()
        return lambda: torch.sum(t)
    return [Reference("torch.sum", make, bytes=N * 4)]


FAMILY = Family(
    "reduce", __doc__, buffers, cases, cub_source=CUB_SOURCE,
    cxx=lambda source, cfg: specialize(source, cfg.threads, cfg.items).replace("BATCHES", str(BATCHES)),
    header=lambda cfg: {"bytes": N * 4}, label="kernel", references=torch_sum, check_field="abs_error",
    latency=(LATENCY_CODE, COOP_KERNEL, PLAIN_KERNEL),
    title=lambda cfg: f"1 GiB float32 sum, {cfg.threads} threads x {cfg.items} items per thread, one atomic per block",
    note="(torch.sum: the whole array; ratio > 1: cuda.coop is faster; the target is >= 0.97)")


main = FAMILY.main


if __name__ == "__main__":
    main()
