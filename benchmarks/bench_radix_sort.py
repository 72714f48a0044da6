"""Block radix sort of 2^24 uint32 (or float16) keys in tiles of 128 threads x 16 keys.

    python benchmarks/bench_radix_sort.py [--threads 128] [--items 16] [--dtype uint32|float16]

Each case loads a tile (``warp_transpose``: coalesced reads into the blocked
layout), sorts it with a block radix sort and stores it, in (1) a cuda.coop
kernel (numba-cuda-mlir), (2) the same kernel in CUDA C++ with CUB built by
nvcc against the same CCCL, and (3) that C++ built by NVRTC with cuda.coop's
options (the compiler cuda.coop uses; see common.build_nvrtc_kernels).  Cases: keys with striped output (the coalesced
store CUB recommends), keys with blocked output (stored through a warp
transpose), keys descending, pairs (uint32 values) with striped output, and
TopK (the 16 smallest keys per tile; built on the same radix sort, so it should
cost the same) and TopK with ``algorithm="radix_select"`` (compared with the
same CUB sort, as CUB has no block top-k).  Reports milliseconds, the coop/CUB ratio (CUB time / coop
time: above 1 means coop is faster), sorted keys per second and GB/s (read +
write), and the first-launch compile time of each coop kernel.  ``--dtype float16``
sorts ``__half`` keys (random finite values; the values of pairs stay uint32).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import import_source, specialize  # noqa: E402
from harness import Case, Family, In, Out  # noqa: E402

N = 1 << 24  # keys
# --dtype: NumPy name -> (C++ key type, bytes per key)
KEY_TYPES = {"uint32": ("unsigned", 4), "float16": ("__half", 2)}
# case -> (its kernel from the kernel module and the configuration, the C++ case: sort_tile<CASE>,
# the key of that C++ kernel's timing).  CUB has no block top-k: both TopK rows compare with CUB's
# sort + taking the first 16.  The launch-bounded sort is the same sort: its baseline is the
# unbounded CUB kernel.
CASES = {
    "keys_striped": (lambda ns, cfg: ns["sort_keys"](True, False), 0, "keys_striped"),
    # NVRTC gives this sort ~91 registers (nvcc's build of the same CUB code 76): five
    # 128-thread blocks per SM.  launch_bounds=(threads, 6) asks ptxas for six.
    "keys_striped_launch_bounds": (lambda ns, cfg: ns["sort_keys"](True, False, (cfg.threads, 6)), 0,
                                   "keys_striped"),
    "keys_blocked": (lambda ns, cfg: ns["sort_keys"](False, False), 1, "keys_blocked"),
    "keys_descending_striped": (lambda ns, cfg: ns["sort_keys"](True, True), 2, "keys_descending_striped"),
    "pairs_striped": (lambda ns, cfg: ns["sort_pairs"], 3, "pairs_striped"),
    "topk_min_16": (lambda ns, cfg: ns["topk_min_16"]("radix_sort"), 4, "topk_min_16"),
    "topk_min_16_select": (lambda ns, cfg: ns["topk_min_16"]("radix_select"), 4, "topk_min_16"),
}

# Device code only, so NVRTC can build it too (see common.build_nvrtc_kernels).
CUB_KERNELS = r"""
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>
#include <cuda_fp16.h>

using KeyT = KEY_TYPE;
constexpr int BT = THREADS, IPT = ITEMS, TILE = BT * IPT;
using Load = cub::BlockLoad<KeyT, BT, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using LoadV = cub::BlockLoad<unsigned, BT, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using Store = cub::BlockStore<KeyT, BT, IPT, cub::BLOCK_STORE_WARP_TRANSPOSE>;
using SortK = cub::BlockRadixSort<KeyT, BT, IPT>;
using SortKV = cub::BlockRadixSort<KeyT, BT, IPT, unsigned>;

// CASE: 0 keys striped, 1 keys blocked, 2 keys descending striped, 3 pairs striped, 4 top-16 (sort, store 16)
template <int CASE>
__global__ void sort_tile(const KeyT* in, const unsigned* vin, KeyT* out, unsigned* vout) {
  __shared__ union {
    typename Load::TempStorage load;
    typename LoadV::TempStorage load_v;
    typename Store::TempStorage store;
    typename SortK::TempStorage sort_k;
    typename SortKV::TempStorage sort_kv;
  } storage;
  const size_t base = size_t(blockIdx.x) * TILE;
  KeyT keys[IPT];
  unsigned vals[IPT];
  Load(storage.load).Load(in + base, keys);
  if (CASE == 3) { __syncthreads(); LoadV(storage.load_v).Load(vin + base, vals); }
  __syncthreads();
  if (CASE == 0) {
    SortK(storage.sort_k).SortBlockedToStriped(keys);
    cub::StoreDirectStriped<BT>(threadIdx.x, out + base, keys);
  } else if (CASE == 1) {
    SortK(storage.sort_k).Sort(keys);
    __syncthreads();
    Store(storage.store).Store(out + base, keys);
  } else if (CASE == 2) {
    SortK(storage.sort_k).SortDescendingBlockedToStriped(keys);
    cub::StoreDirectStriped<BT>(threadIdx.x, out + base, keys);
  } else if (CASE == 3) {
    SortKV(storage.sort_kv).SortBlockedToStriped(keys, vals);
    cub::StoreDirectStriped<BT>(threadIdx.x, out + base, keys);
    cub::StoreDirectStriped<BT>(threadIdx.x, vout + base, vals);
  } else {
    SortK(storage.sort_k).Sort(keys);
    // The 16 smallest keys are tile positions 0..15 (blocked layout).
    cub::StoreDirectBlocked(threadIdx.x, out + size_t(blockIdx.x) * 16, keys, 16);
  }
}
"""

CUB_SOURCE = CUB_KERNELS + r"""
#include <cstdio>
#include <cuda_runtime.h>

template <int CASE>
float bench(const KeyT* in, const unsigned* vin, KeyT* out, unsigned* vout, size_t n) {
  dim3 grid(unsigned(n / TILE));
  return coop_bench::median_ms([&] { sort_tile<CASE><<<grid, BT>>>(in, vin, out, vout); });
}

int main() {
  const size_t n = size_t(1) << 24;
  KeyT *in, *out;
  unsigned *vin, *vout;
  cudaMalloc(&in, n * sizeof(KeyT)); cudaMalloc(&vin, n * 4); cudaMalloc(&out, n * sizeof(KeyT));
  cudaMalloc(&vout, n * 4);
  unsigned* h = (unsigned*)malloc(n * 4);
  KeyT* hk = (KeyT*)malloc(n * sizeof(KeyT));
  // The keys the Python side sorts (_keys): a 32-bit mix of each index.  uint32: uniform
  // bits; __half: uniform finite values in [-1000, 1000).
  for (size_t i = 0; i < n; ++i) {
    unsigned x = unsigned(i) + 0x9E3779B9u;
    x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
    hk[i] = KeyT(KEY_FROM_BITS(x));
  }
  cudaMemcpy(in, hk, n * sizeof(KeyT), cudaMemcpyHostToDevice);
  for (size_t i = 0; i < n; ++i) h[i] = unsigned(i);
  cudaMemcpy(vin, h, n * 4, cudaMemcpyHostToDevice);
  printf("{\"keys_striped\": %f", bench<0>(in, vin, out, vout, n));
  printf(", \"keys_blocked\": %f", bench<1>(in, vin, out, vout, n));
  printf(", \"keys_descending_striped\": %f", bench<2>(in, vin, out, vout, n));
  printf(", \"pairs_striped\": %f", bench<3>(in, vin, out, vout, n));
  printf(", \"topk_min_16\": %f", bench<4>(in, vin, out, vout, n));
  printf("}\n");
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""

KERNEL_SOURCE = """
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop


def sort_keys(striped, descending, launch_bounds=None):
    @cuda.jit(launch_bounds=launch_bounds)
    def kernel(source, values, destination, value_destination, items_per_thread):
        block = coop.this_block()
        keys = coop.ThreadData(items_per_thread)
        offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
        coop.load(block, source, keys, offset=offset, algorithm="warp_transpose")
        out = coop.radix_sort_keys(block, keys, descending=descending, blocked_to_striped=striped)
        coop.store(block, destination, out, offset=offset, algorithm="striped" if striped else "warp_transpose")
    return kernel


@cuda.jit
def sort_pairs(source, values, destination, value_destination, items_per_thread):
    block = coop.this_block()
    keys = coop.ThreadData(items_per_thread)
    vals = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, keys, offset=offset, algorithm="warp_transpose")
    coop.load(block, values, vals, offset=offset, algorithm="warp_transpose")
    k, v = coop.radix_sort_pairs(block, keys, vals, blocked_to_striped=True)
    coop.store(block, destination, k, offset=offset, algorithm="striped")
    coop.store(block, value_destination, v, offset=offset, algorithm="striped")


def topk_min_16(algorithm):
    @cuda.jit
    def kernel(source, values, destination, value_destination, items_per_thread):
        block = coop.this_block()
        keys = coop.ThreadData(items_per_thread)
        offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
        coop.load(block, source, keys, offset=offset, algorithm="warp_transpose")
        best = coop.topk_min_keys(block, keys, k=16, algorithm=algorithm)
        # The 16 smallest keys are tile positions 0..15 (blocked layout).
        coop.store(block, destination, best, offset=cuda.blockIdx.x * 16, valid_items=16)
    return kernel
"""


def _keys(dtype: str = "uint32"):
    """The keys both sides sort, the C++ program computing the same ones: a 32-bit mix of each
    index (Wellons' lowbias32), uniform bits; float16: finite values in [-1000, 1000) from
    bits 8-23, by the C++ program's float arithmetic.

    Both sides must sort the same keys: an LCG's low bits repeat with a short period (bit 0
    alternates, bits 0-3 run through all 16 values in every 16 keys), which gave the C++
    program's radix sort a lighter ranking step than random keys give (4 % on an H100,
    2026-12-07, with the same SASS on both sides)."""
    x = np.arange(N, dtype=np.uint32) + np.uint32(0x9E3779B9)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    if dtype == "float16":
        return (((x >> np.uint32(8)) & np.uint32(0xFFFF)).astype(np.float32) / np.float32(32.768)
                - np.float32(1000.0)).astype(np.float16)
    return x


def cxx(source: str, cfg) -> str:
    """A C++ baseline for one tile shape and key type."""
    key_from_bits = "(x)" if cfg.dtype == "uint32" else "(float((x >> 8) & 0xFFFF) / 32.768f - 1000.0f)"
    return (specialize(source, cfg.threads, cfg.items).replace("KEY_TYPE", KEY_TYPES[cfg.dtype][0])
            .replace("KEY_FROM_BITS(x)", key_from_bits))


def buffers(cfg):
    """Keys, uint32 values, and where the sorted keys and values go."""
    return {"src": In(cfg.dtype, N, lambda: _keys(cfg.dtype)),
            "vals": In(np.uint32, N, lambda: np.arange(N, dtype=np.uint32)),
            "dst": Out(cfg.dtype, N), "vdst": Out(np.uint32, N)}


def check(name: str, tile: int):
    """The first four tiles of case ``name`` against NumPy."""
    def run_check(data):
        host = data.host("src")
        head = host[:4 * tile].reshape(4, tile)
        got = data.dev("dst").copy_to_host()
        if name.startswith("topk"):
            for b in range(4):
                assert np.array_equal(np.sort(got[b * 16:(b + 1) * 16]), np.sort(head[b])[:16]), name
            return
        got = got[:4 * tile].reshape(4, tile)
        expected = np.sort(head, axis=1)
        if "descending" in name:
            expected = expected[:, ::-1]
        assert np.array_equal(got, expected), name
        if name.startswith("pairs"):
            v = data.dev("vdst")[:4 * tile].copy_to_host().reshape(4, tile)
            assert np.array_equal(host[v], got), name
    return run_check


def moved(name: str, key_bytes: int) -> int:
    """Bytes moved per key: read + write (pairs: and the uint32 value; TopK: read only)."""
    if name.startswith("pairs"):
        return 2 * (key_bytes + 4)
    return key_bytes if name.startswith("topk") else 2 * key_bytes


def cases(cfg):
    ns = vars(import_source(KERNEL_SOURCE, "bench_radix_sort_kernels"))
    key_bytes = KEY_TYPES[cfg.dtype][1]
    made = []
    for name, (make, index, cub) in CASES.items():
        made.append(Case(name, make(ns, cfg), N // (cfg.threads * cfg.items), cfg.threads,
                         ("src", "vals", "dst", "vdst", cfg.items), check(name, cfg.threads * cfg.items), cub=cub,
                         twin=f"sort_tile<{index}>", twin_args=("src", "vals", "dst", "vdst"),
                         bytes=moved(name, key_bytes) * N, items=N))
    return made


FAMILY = Family(
    "radix_sort", __doc__, buffers, cases, cub_source=CUB_SOURCE, cub_kernels=CUB_KERNELS, cxx=cxx,
    threads=128, options=((("--dtype",), {"choices": sorted(KEY_TYPES), "default": "uint32", "help": "key type"}),),
    suffix="dtype", header=lambda cfg: {"keys": N, "dtype": cfg.dtype},
    title=lambda cfg: f"block radix sort of 2^24 {cfg.dtype} keys, {cfg.threads} threads x {cfg.items} keys per tile")


main = FAMILY.main


if __name__ == "__main__":
    main()
