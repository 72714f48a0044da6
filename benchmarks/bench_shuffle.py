"""Block shuffle inside a copy of 1 GiB of int32.

    python benchmarks/bench_shuffle.py [--threads 256] [--items 16]

Tile cases load a blocked tile, shift it by one position (``mode="up"``/``"down"``)
and store it; scalar cases move one value per thread (``"offset"``, ``"rotate"``), indexed
by a signed thread index and by an unsigned one (``*_unsigned_index``), as the C++ twin's
``size_t``.  ``copy`` and ``copy_unsigned_index`` are the scalar kernels without the
shuffle and without cuda.coop: what numba-cuda-mlir's indexing costs against the C++ copy,
the floor of the scalar cases' ratios.
Each runs as (1) a cuda.coop kernel (numba-cuda-mlir), (2) the same kernel in
CUDA C++ with CUB's BlockShuffle built by nvcc and (3) that C++ built by NVRTC.
``up_by_runtime_distance`` (the staged-tile shift that CUB has no counterpart for)
is reported without a ratio.
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

// The scalar kernels without the shuffle: what indexing one item per thread costs each compiler.
__global__ void copy(const int* in, int* out) {
  const size_t i = size_t(blockIdx.x) * BT + threadIdx.x;
  out[i] = in[i];
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
  printf(", \"copy\": %f", bench(copy, in, out, n, BT));
  printf("}\n");
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""

KERNEL_SOURCE = """
import numpy as np
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


@cuda.jit
def copy(source, destination, distance, items_per_thread):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    destination[i] = source[i]


@cuda.jit
def copy_unsigned_index(source, destination, distance, items_per_thread):
    i = np.uint64(cuda.grid(1))
    destination[i] = source[i]


def scalar_unsigned_index(mode):
    # A signed index makes every array access check for a negative index and wrap it around
    # (Python's a[-1]); an unsigned one, like the C++ twin's size_t, skips that.
    @cuda.jit
    def kernel(source, destination, distance, items_per_thread):
        i = np.uint64(cuda.grid(1))
        destination[i] = coop.shuffle(coop.this_block(), source[i], mode=mode)
    return kernel
"""

# case -> (kernel factory and its mode, the C++ twin); tile cases move ITEMS per thread, scalar ones one
CASES = {
    "up": (("shift", "up"), "shift<true>"),
    "down": (("shift", "down"), "shift<false>"),
    "up_by_runtime_distance": (("up_by_runtime_distance",), None),
    "offset": (("scalar", "offset"), "scalar<false>"),
    "rotate": (("scalar", "rotate"), "scalar<true>"),
    "offset_unsigned_index": (("scalar_unsigned_index", "offset"), "scalar<false>"),
    "rotate_unsigned_index": (("scalar_unsigned_index", "rotate"), "scalar<true>"),
    # Controls without cuda.coop: the scalar cases' indexing alone, numba-cuda-mlir against C++.
    "copy": (("copy",), "copy"),
    "copy_unsigned_index": (("copy_unsigned_index",), "copy"),
}
TILE_CASES = ("up", "down", "up_by_runtime_distance")


def buffers(cfg):
    return {"src": In(np.int32, N, lambda: np.arange(N, dtype=np.int32)), "dst": Out(np.int32, N)}


def check(name: str, per_block: int, count: int):
    """The first ``count`` outputs, in tiles of ``per_block``: a shift/offset/rotate of ``arange``."""
    def run_check(data):
        got = data.dev("dst")[:count].copy_to_host().reshape(-1, per_block)
        tiles = np.arange(count, dtype=np.int32).reshape(-1, per_block)
        if name.startswith("up"):
            expected = np.concatenate([tiles[:, :1], tiles[:, :-1]], axis=1)
        elif name == "down":
            expected = np.concatenate([tiles[:, 1:], tiles[:, -1:]], axis=1)
        elif name.startswith("copy"):
            expected = tiles
        else:
            expected = np.roll(tiles, -1, axis=1)
            if name.startswith("offset"):
                expected[:, -1] = tiles[:, -1]
        assert np.array_equal(got, expected), name
    return run_check


def cases(cfg):
    ns = vars(import_source(KERNEL_SOURCE, "bench_shuffle_kernels"))
    made = []
    for name, ((factory, *mode), twin) in CASES.items():
        kernel = ns[factory](*mode) if mode else ns[factory]
        per_block = cfg.threads * cfg.items if name in TILE_CASES else cfg.threads
        ipt = cfg.items if name in TILE_CASES else 1
        made.append(Case(name, kernel, N // per_block, cfg.threads, ("src", "dst", np.int64(1), ipt),
                         check(name, per_block, 4 * cfg.threads * cfg.items),
                         cub=name.removesuffix("_unsigned_index") if twin else None,
                         twin=twin, twin_args=("src", "dst"),
                         bytes=2 * N * 4))
    return made


FAMILY = Family(
    "shuffle", __doc__, buffers, cases, cub_source=CUB_SOURCE, cub_kernels=CUB_KERNELS,
    title=lambda cfg: f"1 GiB int32 load -> shuffle -> store, {cfg.threads} threads x {cfg.items} items per "
                      "thread (scalar cases: one item per thread)")


main = FAMILY.main


if __name__ == "__main__":
    main()
