"""Tile copy of 2**28 items (int32: 1 GiB, float16: 512 MiB) per block load/store algorithm.

    python benchmarks/bench_load_store.py [--threads 256] [--items 16] [--dtype int32|float16]

Compares (1) the cuda.coop kernel (numba-cuda-mlir), (2) the same kernel in CUDA
C++ with CUB built by nvcc, (3) cudaMemcpy device-to-device; and reports the
compile latency of the coop kernel (cold provider cache, warm disk cache in a
new process) next to the same copy kernel without coop.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import import_source, launch_overhead_us, specialize  # noqa: E402
from harness import Case, Family, In, Out  # noqa: E402

ALGORITHMS = ["direct", "striped", "vectorize", "transpose", "warp_transpose", "warp_transpose_timesliced"]
N = 1 << 28  # items: 1 GiB of int32
CXX_TYPES = {"int32": "int", "float16": "__half"}

CUB_SOURCE = r"""
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cuda_fp16.h>
#include <cstdio>
#include <cuda_runtime.h>

using T = ITEM_TYPE;

template <int BT, int IPT, cub::BlockLoadAlgorithm LA, cub::BlockStoreAlgorithm SA>
__global__ void copy_tile(const T* in, T* out) {
  using BL = cub::BlockLoad<T, BT, IPT, LA>;
  using BS = cub::BlockStore<T, BT, IPT, SA>;
  __shared__ union { typename BL::TempStorage load; typename BS::TempStorage store; } storage;
  T items[IPT];
  const size_t offset = size_t(blockIdx.x) * BT * IPT;
  BL(storage.load).Load(in + offset, items);
  __syncthreads();
  BS(storage.store).Store(out + offset, items);
}

template <int BT, int IPT, cub::BlockLoadAlgorithm LA, cub::BlockStoreAlgorithm SA>
float bench(const T* in, T* out, size_t n) {
  dim3 grid(unsigned(n / (BT * IPT)));
  return coop_bench::median_ms([&] { copy_tile<BT, IPT, LA, SA><<<grid, BT>>>(in, out); }, 20);
}

int main() {
  const size_t n = size_t(1) << 28;
  const size_t bytes = n * sizeof(T);
  T *in, *out; cudaMalloc(&in, bytes); cudaMalloc(&out, bytes); cudaMemset(in, 1, bytes);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  float memcpy_ms[20];
  for (int r = 0; r < 23; ++r) {
    cudaEventRecord(a); cudaMemcpy(out, in, bytes, cudaMemcpyDeviceToDevice); cudaEventRecord(b);
    cudaEventSynchronize(b); if (r >= 3) cudaEventElapsedTime(&memcpy_ms[r - 3], a, b);
  }
  for (int i = 0; i < 20; ++i) for (int j = i + 1; j < 20; ++j) if (memcpy_ms[j] < memcpy_ms[i]) { float t = memcpy_ms[i]; memcpy_ms[i] = memcpy_ms[j]; memcpy_ms[j] = t; }
  printf("{\"memcpy\": %f", 0.5f * (memcpy_ms[9] + memcpy_ms[10]));
#define RUN(name, LA, SA) printf(", \"%s\": %f", name, bench<THREADS, ITEMS, cub::LA, cub::SA>(in, out, n));
  RUN("direct", BLOCK_LOAD_DIRECT, BLOCK_STORE_DIRECT)
  RUN("striped", BLOCK_LOAD_STRIPED, BLOCK_STORE_STRIPED)
  RUN("vectorize", BLOCK_LOAD_VECTORIZE, BLOCK_STORE_VECTORIZE)
  RUN("transpose", BLOCK_LOAD_TRANSPOSE, BLOCK_STORE_TRANSPOSE)
  RUN("warp_transpose", BLOCK_LOAD_WARP_TRANSPOSE, BLOCK_STORE_WARP_TRANSPOSE)
  RUN("warp_transpose_timesliced", BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED, BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED)
  printf("}\n");
  cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? 0 : 1;
}
"""

KERNEL_SOURCE = """
from numba_cuda_mlir import cuda
from cuda import coop

def make(algorithm):
    @cuda.jit
    def copy_tile(source, destination, items_per_thread):
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread)
        offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
        coop.load(block, source, items, offset=offset, algorithm=algorithm)
        coop.store(block, destination, items, offset=offset, algorithm=algorithm)
    return copy_tile
"""

LATENCY_CODE = r"""
import json, time, numpy as np
t0 = time.perf_counter()
from numba_cuda_mlir import cuda
t_compiler = time.perf_counter() - t0
t0 = time.perf_counter()
{coop_import}
t_coop = time.perf_counter() - t0

# numba-cuda-mlir initializes its compiler and the CUDA context on the first
# compile of a process (the same cost with or without cuda.coop): pay it with a
# trivial kernel first, so the figures below are the kernel's own compile.
@cuda.jit
def warm_up(x):
    x[0] = 1
t0 = time.perf_counter(); w = cuda.device_array(1, dtype=np.int32); t_setup = time.perf_counter() - t0  # the context
t0 = time.perf_counter(); warm_up[1, 1](w); cuda.synchronize(); t_init = time.perf_counter() - t0

{kernel}
src = cuda.to_device(np.arange(256 * 16 * 4, dtype=np.int32)); dst = cuda.device_array_like(src)
cuda.synchronize()
t0 = time.perf_counter(); k[4, 256](src, dst, 16); cuda.synchronize(); first = time.perf_counter() - t0
t0 = time.perf_counter(); k[4, 256](src, dst, 16); cuda.synchronize(); second = time.perf_counter() - t0
assert (dst.copy_to_host() == src.copy_to_host()).all()
print(json.dumps({{"import_compiler_s": t_compiler, "import_coop_s": t_coop, "setup_s": t_setup, "compiler_init_s": t_init,
                  "first_launch_s": first, "second_launch_s": second}}))
"""

COOP_KERNEL = """
@cuda.jit
def k(source, destination, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, items, offset=offset, algorithm="warp_transpose")
    coop.store(block, destination, items, offset=offset, algorithm="warp_transpose")
"""

PLAIN_KERNEL = """
@cuda.jit
def k(source, destination, items_per_thread):
    base = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread + cuda.threadIdx.x
    for i in range(items_per_thread):
        destination[base + i * cuda.blockDim.x] = source[base + i * cuda.blockDim.x]
"""


def itemsize(cfg) -> int:
    return np.dtype(cfg.dtype).itemsize


def buffers(cfg):
    # Exact in float16 too: integers below 2048.
    return {"src": In(cfg.dtype, N, lambda: (np.arange(N) % 2048).astype(cfg.dtype)), "dst": Out(cfg.dtype, N)}


def check(name: str, dtype: str):
    def run_check(data):
        expected = (np.arange(1 << 20) % 2048).astype(dtype)
        assert np.array_equal(data.dev("dst")[:1 << 20].copy_to_host(), expected), name
    return run_check


def cases(cfg):
    ns = vars(import_source(KERNEL_SOURCE, "bench_load_store_kernels"))
    grid, moved = N // (cfg.threads * cfg.items), 2 * N * itemsize(cfg)
    made = [Case(algo, ns["make"](algo), grid, cfg.threads, ("src", "dst", cfg.items), check(algo, cfg.dtype),
                 bytes=moved) for algo in ALGORITHMS]
    # The floor: the same striped copy written without cuda.coop (numba-cuda-mlir alone).
    plain = import_source("from numba_cuda_mlir import cuda\n" + PLAIN_KERNEL, "bench_load_store_plain").k
    made.append(Case("copy", plain, grid, cfg.threads, ("src", "dst", cfg.items), check("plain copy", cfg.dtype),
                     cub=None, bytes=moved, into="plain_ms"))
    return made


def launch_overhead(report, cfg, data, cases):
    """Host microseconds per launch of a one-block coop copy (the compiler's dispatch)."""
    small = next(case.kernel for case in cases if case.name == "direct")
    tile = cfg.threads * cfg.items
    src, dst = data.dev("src")[:tile], data.dev("dst")[:tile]
    report["coop_launch_overhead_us"] = launch_overhead_us(lambda: small[1, cfg.threads](src, dst, cfg.items))


def note(report) -> str:
    memcpy = report.get("cub_ms", {}).get("memcpy")
    lines = [f"{'cudaMemcpy D2D':28s} {memcpy:9.3f} ms (coop/cudaMemcpy: the fraction of its speed)"] if memcpy else []
    lines.append(f"host launch overhead of a coop kernel ({report.get('compiler', 'numba-cuda-mlir')} dispatch): "
                 f"{report['coop_launch_overhead_us']:.1f} us")
    return "\n".join(lines)


FAMILY = Family(
    "load_store", __doc__, buffers, cases, cub_source=CUB_SOURCE,
    cxx=lambda source, cfg: specialize(source, cfg.threads, cfg.items).replace("ITEM_TYPE", CXX_TYPES[cfg.dtype]),
    options=((("--dtype",), {"choices": sorted(CXX_TYPES), "default": "int32", "help": "item type"}),),
    suffix="dtype", header=lambda cfg: {"dtype": cfg.dtype, "bytes": N * itemsize(cfg)}, label="algorithm",
    columns={"cudaMemcpy": lambda case: "memcpy"}, extra=launch_overhead, note=note,
    latency=(LATENCY_CODE, COOP_KERNEL, PLAIN_KERNEL),
    title=lambda cfg: f"{N * itemsize(cfg) >> 20} MiB {cfg.dtype} tile copy, {cfg.threads} threads x {cfg.items} "
                      "items per thread")


main = FAMILY.main


if __name__ == "__main__":
    main()
