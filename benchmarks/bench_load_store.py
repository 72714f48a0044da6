"""Tile copy of 2**28 items (int32: 1 GiB, float16: 512 MiB) per block load/store algorithm.

    python benchmarks/bench_load_store.py [--threads 256] [--items 16] [--dtype int32|float16]

Compares (1) the cuda.coop kernel (numba-cuda-mlir), (2) the same kernel in CUDA
C++ with CUB built by nvcc, (3) cudaMemcpy device-to-device; and reports the
compile latency of the coop kernel (cold provider cache, warm disk cache in a
new process) next to the same copy kernel without coop.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    compile_latency, import_source, latency_over_plain, launch_overhead_us, nvcc_baseline_ms, per_launch_table,
    specialize, time_kernel, write_results,
)

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
w = cuda.device_array(1, dtype=np.int32)
t0 = time.perf_counter(); warm_up[1, 1](w); cuda.synchronize(); t_init = time.perf_counter() - t0

{kernel}
src = cuda.to_device(np.arange(256 * 16 * 4, dtype=np.int32)); dst = cuda.device_array_like(src)
cuda.synchronize()
t0 = time.perf_counter(); k[4, 256](src, dst, 16); cuda.synchronize(); first = time.perf_counter() - t0
t0 = time.perf_counter(); k[4, 256](src, dst, 16); cuda.synchronize(); second = time.perf_counter() - t0
assert (dst.copy_to_host() == src.copy_to_host()).all()
print(json.dumps({{"import_compiler_s": t_compiler, "import_coop_s": t_coop, "compiler_init_s": t_init,
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


def throughput(threads: int, items: int, dtype: str = "int32"):
    import numpy as np
    from numba_cuda_mlir import cuda

    ns = vars(import_source(KERNEL_SOURCE, "bench_load_store_kernels"))
    # Exact in float16 too: integers below 2048.
    expected = (np.arange(1 << 20) % 2048).astype(dtype)
    src = cuda.to_device((np.arange(N) % 2048).astype(dtype))
    dst = cuda.device_array(N, dtype=dtype)
    grid = N // (threads * items)
    results = {}
    for algo in ALGORITHMS:
        kernel = ns["make"](algo)
        kernel[grid, threads](src, dst, items)
        cuda.synchronize()
        assert np.array_equal(dst[:1 << 20].copy_to_host(), expected), algo
        results[algo] = time_kernel(lambda: kernel[grid, threads](src, dst, items))
    small = ns["make"]("direct")
    tiny_src, tiny_dst = src[:threads * items], dst[:threads * items]
    results["launch_overhead_us"] = launch_overhead_us(lambda: small[1, threads](tiny_src, tiny_dst, items))
    # The floor: the same striped copy written without cuda.coop (numba-cuda-mlir alone).
    plain = import_source("from numba_cuda_mlir import cuda\n" + PLAIN_KERNEL, "bench_load_store_plain").k
    dst[:1 << 20].copy_to_device(np.zeros(1 << 20, dtype=dtype))
    plain[grid, threads](src, dst, items)
    cuda.synchronize()
    assert np.array_equal(dst[:1 << 20].copy_to_host(), expected), "plain copy"
    return results, {"copy": time_kernel(lambda: plain[grid, threads](src, dst, items))}


def latency(repeat: int = 1):
    return compile_latency(LATENCY_CODE, COOP_KERNEL, PLAIN_KERNEL, repeat)


def print_latency(lat: dict) -> None:
    for key, val in lat.items():
        print(f"  {key:16s} first launch {val['first_launch_s']:.3f}  second {val['second_launch_s']:.4f}  "
              f"(import numba_cuda_mlir {val['import_compiler_s']:.2f}, import cuda.coop "
              f"{val['import_coop_s']:.2f}, compiler init {val['compiler_init_s']:.2f})")
    for key, extra in latency_over_plain(lat).items():
        print(f"  {key} first launch over the kernel without cuda.coop: {extra:+.3f} s (median of "
              f"{len(lat[key]['first_launch_samples_s'])})")


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=256)
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--dtype", choices=sorted(CXX_TYPES), default="int32")
    parser.add_argument("--latency-only", action="store_true", help="only the compile-latency figures")
    parser.add_argument("--latency-repeat", type=int, default=1,
                        help="rounds of the three fresh processes (cold, warm, without cuda.coop); medians")
    args = parser.parse_args(argv)
    itemsize = 2 if args.dtype == "float16" else 4
    report = {"threads": args.threads, "items_per_thread": args.items, "dtype": args.dtype, "bytes": N * itemsize}
    if args.latency_only:
        report["latency"] = latency(args.latency_repeat)
        print_latency(report["latency"])
        write_results("load_store_latency", report)
        return report
    report["coop_ms"], report["plain_ms"] = throughput(args.threads, args.items, args.dtype)
    cxx = specialize(CUB_SOURCE, args.threads, args.items).replace("ITEM_TYPE", CXX_TYPES[args.dtype])
    report["cub_ms"] = nvcc_baseline_ms(cxx, "copy_tile")
    report["latency"] = latency(args.latency_repeat)
    print(f"\n{N * itemsize >> 20} MiB {args.dtype} tile copy, {args.threads} threads x {args.items} items per thread")
    print(f"{'algorithm':28s} {'coop ms':>9s} {'CUB C++ ms':>11s} {'coop/CUB':>9s} {'GB/s':>8s} {'% memcpy':>9s}")
    cub = report.get("cub_ms", {})
    memcpy = cub.get("memcpy")
    overhead = report["coop_ms"].pop("launch_overhead_us")
    for algo, ms in report["coop_ms"].items():
        c = cub.get(algo)
        ratio = f"{c / ms:9.3f}" if c else "      n/a"
        gbs = 2 * N * itemsize / (ms * 1e-3) / 1e9
        pct = f"{100 * memcpy / ms:8.1f}%" if memcpy else "      n/a"
        print(f"{algo:28s} {ms:9.3f} {c if c else float('nan'):11.3f} {ratio} {gbs:8.0f} {pct}")
    if memcpy:
        print(f"{'cudaMemcpy D2D':28s} {memcpy:9.3f}")
    print(f"host launch overhead of a coop kernel (numba-cuda-mlir dispatch): {overhead:.1f} us")
    report["coop_launch_overhead_us"] = overhead
    lat = report["latency"]
    print("\ncompile latency of copy_tile: first launch (compile + launch) after numba-cuda-mlir's own")
    print("one-time initialization, which a trivial kernel pays first; seconds")
    print_latency(lat)
    per_launch_table(report, "algorithm")
    write_results("load_store" if args.dtype == "int32" else f"load_store_{args.dtype}", report)
    return report


if __name__ == "__main__":
    main()
