"""Block shuffle inside a copy of 1 GiB of int32.

    python benchmarks/bench_shuffle.py [--threads 256] [--items 16]

Tile cases load a blocked tile, shift it by one position (``mode="up"``/``"down"``)
and store it; scalar cases move one value per thread (``"offset"``, ``"rotate"``).
Each runs as (1) a cuda.coop kernel (numba-cuda-mlir) and (2) the same kernel in
CUDA C++ with CUB's BlockShuffle built by nvcc.  ``up_by_runtime_distance`` (the
staged-tile shift that CUB has no counterpart for) is reported without a ratio.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    build_nvrtc_kernels, import_source, nvcc_baseline_ms, per_launch_table, print_ratio_table, specialize,
    time_kernel, write_results,
)

N = 1 << 28  # int32 elements = 1 GiB

# Device code only, so NVRTC can build it too (see common.build_nvrtc_kernels).
CUB_KERNELS = r"""
#include <cub/block/block_load.cuh>
#include <cub/block/block_shuffle.cuh>
#include <cub/block/block_store.cuh>

constexpr int BT = THREADS, IPT = ITEMS, TILE = BT * IPT;
using Shuffle = cub::BlockShuffle<int, BT>;

template <bool UP>
__global__ void shift(const int* in, int* out) {
  __shared__ typename Shuffle::TempStorage storage;
  const size_t base = size_t(blockIdx.x) * TILE;
  int a[IPT], b[IPT];
  cub::LoadDirectBlocked(threadIdx.x, in + base, a);
  for (int i = 0; i < IPT; ++i) b[i] = a[i];
  if (UP) Shuffle(storage).Up(a, b); else Shuffle(storage).Down(a, b);
  cub::StoreDirectBlocked(threadIdx.x, out + base, b);
}

template <bool ROTATE>
__global__ void scalar(const int* in, int* out) {
  __shared__ typename Shuffle::TempStorage storage;
  const size_t i = size_t(blockIdx.x) * BT + threadIdx.x;
  int v = in[i], r = v;
  if (ROTATE) Shuffle(storage).Rotate(v, r, 1u); else Shuffle(storage).Offset(v, r, 1);
  out[i] = r;
}
"""

CUB_SOURCE = CUB_KERNELS + r"""
#include <cstdio>
#include <cuda_runtime.h>

template <typename K>
float bench(K kernel, const int* in, int* out, size_t n, int per_block) {
  dim3 grid(unsigned(n / per_block));
  return coop_bench::median_ms([&] { kernel<<<grid, BT>>>(in, out); }, 20);
}

int main() {
  const size_t n = size_t(1) << 28;
  int *in, *out; cudaMalloc(&in, n * 4); cudaMalloc(&out, n * 4); cudaMemset(in, 1, n * 4);
  printf("{\"up\": %f", bench(shift<true>, in, out, n, TILE));
  printf(", \"down\": %f", bench(shift<false>, in, out, n, TILE));
  printf(", \"offset\": %f", bench(scalar<false>, in, out, n, BT));
  printf(", \"rotate\": %f", bench(scalar<true>, in, out, n, BT));
  printf("}\n");
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""

KERNEL_SOURCE = """
from numba_cuda_mlir import cuda
from cuda import coop


def shift(mode):
    @cuda.jit
    def kernel(source, destination, distance, items_per_thread):
        block = coop.this_block()
        a = coop.ThreadData(items_per_thread)
        offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
        coop.load(block, source, a, offset=offset)
        b = coop.shuffle(block, a, mode=mode)
        coop.store(block, destination, b, offset=offset)
    return kernel


@cuda.jit
def up_by_runtime_distance(source, destination, distance, items_per_thread):
    block = coop.this_block()
    a = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, a, offset=offset)
    b = coop.shuffle(block, a, mode="up", distance=distance)
    coop.store(block, destination, b, offset=offset)


def scalar(mode):
    @cuda.jit
    def kernel(source, destination, distance, items_per_thread):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        destination[i] = coop.shuffle(coop.this_block(), source[i], mode=mode)
    return kernel
"""

TILE_CASES = ("up", "down", "up_by_runtime_distance")


def kernels(ns):
    return {"up": ns["shift"]("up"), "down": ns["shift"]("down"),
            "up_by_runtime_distance": ns["up_by_runtime_distance"],
            "offset": ns["scalar"]("offset"), "rotate": ns["scalar"]("rotate")}


def _check(name: str, dst, count: int, per_block: int) -> None:
    """The first ``count`` outputs of a shift/offset/rotate of ``arange`` in tiles of ``per_block``."""
    import numpy as np

    got = dst[:count].copy_to_host().reshape(-1, per_block)
    tiles = np.arange(count, dtype=np.int32).reshape(-1, per_block)
    if name.startswith("up"):
        expected = np.concatenate([tiles[:, :1], tiles[:, :-1]], axis=1)
    elif name == "down":
        expected = np.concatenate([tiles[:, 1:], tiles[:, -1:]], axis=1)
    else:
        expected = np.roll(tiles, -1, axis=1)
        if name == "offset":
            expected[:, -1] = tiles[:, -1]
    assert np.array_equal(got, expected), name


def throughput(threads: int, items: int):
    import numpy as np
    from numba_cuda_mlir import cuda

    ns = vars(import_source(KERNEL_SOURCE, "bench_shuffle_kernels"))
    src = cuda.to_device(np.arange(N, dtype=np.int32))
    dst = cuda.device_array(N, dtype=np.int32)
    head = np.arange(N, dtype=np.int32)[:4 * threads * items]
    results = {}
    for name, kernel in kernels(ns).items():
        per_block = threads * items if name in TILE_CASES else threads
        ipt = items if name in TILE_CASES else 1
        grid = N // per_block
        kernel[grid, threads](src, dst, np.int64(1), ipt)
        cuda.synchronize()
        _check(name, dst, len(head), per_block)
        results[name] = time_kernel(lambda: kernel[grid, threads](src, dst, np.int64(1), ipt))
    return results


CUB_NAMES = {"up": "shift<true>", "down": "shift<false>", "offset": "scalar<false>", "rotate": "scalar<true>"}


def nvrtc_baseline(threads: int, items: int) -> dict:
    """The C++ kernels built by NVRTC (cuda.coop's compiler), checked and timed like the coop ones."""
    import numpy as np
    from numba_cuda_mlir import cuda

    source = specialize(CUB_KERNELS, threads, items)
    launches = build_nvrtc_kernels(source, list(CUB_NAMES.values()))
    src = cuda.to_device(np.arange(N, dtype=np.int32))
    dst = cuda.device_array(N, dtype=np.int32)
    results = {}
    for name, expr in CUB_NAMES.items():
        launch = launches[expr]
        per_block = threads * items if name in TILE_CASES else threads
        grid = N // per_block
        launch(grid, threads, src, dst)
        cuda.synchronize()
        _check(name, dst, 4 * per_block, per_block)
        results[name] = time_kernel(lambda: launch(grid, threads, src, dst))
    return results


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=256)
    parser.add_argument("--items", type=int, default=16)
    args = parser.parse_args(argv)
    report = {"threads": args.threads, "items_per_thread": args.items, "bytes": N * 4}
    report["coop_ms"] = throughput(args.threads, args.items)
    report["cub_ms"] = nvcc_baseline_ms(specialize(CUB_SOURCE, args.threads, args.items), "shuffle")
    report["cub_nvrtc_ms"] = nvrtc_baseline(args.threads, args.items)
    print(f"\n1 GiB int32 load -> shuffle -> store, {args.threads} threads x {args.items} items per thread "
          "(scalar cases: one item per thread)")
    print_ratio_table("case", report["coop_ms"], {"CUB C++": report["cub_ms"], "NVRTC": report["cub_nvrtc_ms"]},
                      lambda name: 2 * N * 4)
    per_launch_table(report, "case")
    write_results("shuffle", report)
    return report


if __name__ == "__main__":
    main()
