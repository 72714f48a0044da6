"""Block and warp exchange inside a tile copy of 1 GiB of int32.

    python benchmarks/bench_exchange.py [--threads 256] [--items 16]

Each case loads a tile in one layout, exchanges it and stores it in the other
(so the output equals the input), in (1) a cuda.coop kernel (numba-cuda-mlir),
(2) the same kernel in CUDA C++ with CUB built by nvcc and (3) that C++ built by
NVRTC with cuda.coop's options.  The scatter case reverses each tile through
``ranks``; the cuda.coop call also checks every rank against the tile
(out-of-tile ranks are dropped), which CUB's plain scatter does not.  Reports
milliseconds, the coop/CUB ratios and GB/s (read + write).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import import_source  # noqa: E402
from harness import Case, Family, In, Out  # noqa: E402

N = 1 << 28  # int32 elements = 1 GiB

# Device code only, so NVRTC can build it too (see common.build_nvrtc_kernels).
CUB_KERNELS = r"""
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_exchange.cuh>

constexpr int BT = THREADS, IPT = ITEMS, TILE = BT * IPT;

template <bool SLICED, bool TO_BLOCKED>
__global__ void block_exchange(const int* in, int* out) {
  using Ex = cub::BlockExchange<int, BT, IPT, SLICED>;
  __shared__ typename Ex::TempStorage storage;
  const size_t base = size_t(blockIdx.x) * TILE;
  int a[IPT], b[IPT];
  if (TO_BLOCKED) {
    cub::LoadDirectStriped<BT>(threadIdx.x, in + base, a);
    Ex(storage).StripedToBlocked(a, b);
    cub::StoreDirectBlocked(threadIdx.x, out + base, b);
  } else {
    cub::LoadDirectBlocked(threadIdx.x, in + base, a);
    Ex(storage).BlockedToStriped(a, b);
    cub::StoreDirectStriped<BT>(threadIdx.x, out + base, b);
  }
}

__global__ void scatter(const int* in, int* out) {
  using Ex = cub::BlockExchange<int, BT, IPT>;
  __shared__ typename Ex::TempStorage storage;
  const size_t base = size_t(blockIdx.x) * TILE;
  int a[IPT], b[IPT], ranks[IPT];
  cub::LoadDirectBlocked(threadIdx.x, in + base, a);
  for (int i = 0; i < IPT; ++i) ranks[i] = TILE - 1 - (int(threadIdx.x) * IPT + i);
  Ex(storage).ScatterToStriped(a, b, ranks);
  cub::StoreDirectStriped<BT>(threadIdx.x, out + base, b);  // the tile, reversed
}

template <int W>
__global__ void warp_exchange(const int* in, int* out) {
  using Ex = cub::WarpExchange<int, IPT, W>;
  __shared__ typename Ex::TempStorage storage[BT / W];
  const int warp = threadIdx.x / W, lane = threadIdx.x % W;
  const size_t base = size_t(blockIdx.x) * TILE + size_t(warp) * W * IPT;
  int a[IPT], b[IPT];
  cub::LoadDirectStriped<W>(lane, in + base, a);
  Ex(storage[warp]).StripedToBlocked(a, b);
  cub::StoreDirectBlocked(lane, out + base, b);
}
"""

CUB_SOURCE = CUB_KERNELS + r"""
#include <cstdio>
#include <cuda_runtime.h>

template <typename K>
float bench(K kernel, const int* in, int* out, size_t n) {
  dim3 grid(unsigned(n / TILE));
  return coop_bench::median_ms([&] { kernel<<<grid, BT>>>(in, out); }, 20);
}

int main() {
  const size_t n = size_t(1) << 28;
  int *in, *out; cudaMalloc(&in, n * 4); cudaMalloc(&out, n * 4); cudaMemset(in, 1, n * 4);
  printf("{\"striped_to_blocked\": %f", bench(block_exchange<false, true>, in, out, n));
  printf(", \"blocked_to_striped\": %f", bench(block_exchange<false, false>, in, out, n));
  printf(", \"striped_to_blocked_timesliced\": %f", bench(block_exchange<true, true>, in, out, n));
  printf(", \"scatter_to_striped\": %f", bench(scatter, in, out, n));
  printf(", \"warp_striped_to_blocked\": %f", bench(warp_exchange<32>, in, out, n));
  printf(", \"logical8_striped_to_blocked\": %f", bench(warp_exchange<8>, in, out, n));
  printf("}\n");
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""

KERNEL_SOURCE = """
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop


def block_exchange(sliced, to_blocked):
    @cuda.jit
    def kernel(source, destination, items_per_thread):
        block = coop.this_block()
        a = coop.ThreadData(items_per_thread)
        offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
        if to_blocked:
            coop.load(block, source, a, offset=offset, algorithm="striped")
            b = coop.exchange(block, a, mode="striped_to_blocked", warp_time_slicing=sliced)
            coop.store(block, destination, b, offset=offset, algorithm="direct")
        else:
            coop.load(block, source, a, offset=offset, algorithm="direct")
            b = coop.exchange(block, a, mode="blocked_to_striped", warp_time_slicing=sliced)
            coop.store(block, destination, b, offset=offset, algorithm="striped")
    return kernel


@cuda.jit
def scatter(source, destination, items_per_thread):
    block = coop.this_block()
    tile = cuda.blockDim.x * items_per_thread
    a = coop.ThreadData(items_per_thread)
    ranks = coop.ThreadData(items_per_thread, dtype=np.int32)
    offset = cuda.blockIdx.x * tile
    coop.load(block, source, a, offset=offset, algorithm="direct")
    for i in range(items_per_thread):
        ranks[i] = tile - 1 - (cuda.threadIdx.x * items_per_thread + i)
    b = coop.exchange(block, a, mode="scatter_to_striped", ranks=ranks)
    coop.store(block, destination, b, offset=offset, algorithm="striped")


def warp_exchange(width):
    @cuda.jit
    def kernel(source, destination, items_per_thread):
        warp = coop.this_warp().group_by(width)
        a = coop.ThreadData(items_per_thread)
        offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
        coop.load(warp, source, a, offset=offset, algorithm="striped")
        b = coop.exchange(warp, a, mode="striped_to_blocked")
        coop.store(warp, destination, b, offset=offset, algorithm="direct")
    return kernel
"""


# case -> (kernel factory and its arguments, the C++ twin)
CASES = {
    "striped_to_blocked": (("block_exchange", False, True), "block_exchange<false, true>"),
    "blocked_to_striped": (("block_exchange", False, False), "block_exchange<false, false>"),
    "striped_to_blocked_timesliced": (("block_exchange", True, True), "block_exchange<true, true>"),
    "scatter_to_striped": (("scatter",), "scatter"),
    "warp_striped_to_blocked": (("warp_exchange", 32), "warp_exchange<32>"),
    "logical8_striped_to_blocked": (("warp_exchange", 8), "warp_exchange<8>"),
}


def buffers(cfg):
    return {"src": In(np.int32, N, lambda: np.arange(N, dtype=np.int32)), "dst": Out(np.int32, N)}


def check(name: str, tile: int):
    def run_check(data):
        head = np.arange(4 * tile, dtype=np.int32)
        expected = head.reshape(4, tile)[:, ::-1].ravel() if name.startswith("scatter") else head
        assert np.array_equal(data.dev("dst")[:4 * tile].copy_to_host(), expected), name
    return run_check


def cases(cfg):
    ns = vars(import_source(KERNEL_SOURCE, "bench_exchange_kernels"))
    tile = cfg.threads * cfg.items
    made = []
    for name, ((factory, *params), twin) in CASES.items():
        kernel = ns[factory](*params) if params else ns[factory]
        made.append(Case(name, kernel, N // tile, cfg.threads, ("src", "dst", cfg.items), check(name, tile),
                         twin=twin, twin_args=("src", "dst"), bytes=2 * N * 4))
    return made


FAMILY = Family(
    "exchange", __doc__, buffers, cases, cub_source=CUB_SOURCE, cub_kernels=CUB_KERNELS,
    title=lambda cfg: f"1 GiB int32 load -> exchange -> store, {cfg.threads} threads x {cfg.items} items per thread")


main = FAMILY.main


if __name__ == "__main__":
    main()
