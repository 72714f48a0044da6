"""cuda.coop against CUB C++, both timed by NVBench (the ``cuda-bench`` package).

    python benchmarks/nvbench_compare.py [NVBench options, e.g. --json results.json]

The family benchmarks (``bench_*.py``) time each side with CUDA events, the C++
side inside its own nvcc-built program.  Here one well-known harness times both
sides in one process: NVBench's ``State.exec`` launches each kernel on its own
stream behind a blocking kernel and reports GPU time ("cold": one launch after an
L2 flush, and "batch": back-to-back launches) until the relative noise is small.

Benchmarks (axis ``build``: cuda.coop's kernel, the same kernel in CUDA C++ with
CUB built by nvcc, and that C++ built by NVRTC with cuda.coop's options):
  - ``copy``: tile copy of 2^26 int32 (256 MiB), 256 threads x 16 items, axis
    ``algorithm`` over every block load/store algorithm;
  - ``radix_sort_keys``: block radix sort of 2^24 uint32 keys, 128 threads x 16,
    warp-transpose load, striped output;
  - ``block_sum``: block sum of each 256 x 16 tile of 2^26 int32 (vectorized load);
  - ``inclusive_sum``: block inclusive scan of 128 x 8 tiles (warp-transpose load/store);
  - ``histogram``: 256-bin atomic block histogram of 2^26 uint8, 256 x 16 per block,
    then one atomic add per bin and block.
Every kernel's output is checked against NumPy once before it is timed.

NVBench is not used by the family benchmarks because they also report what a
user sees timing one launch with events (host launch cost included), which NVBench
deliberately hides behind its blocking kernel; see docs/performance.rst.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

BUILDS = ["cuda.coop", "CUB (nvcc)", "CUB (NVRTC)"]
COPY_ALGORITHMS = ["direct", "striped", "vectorize", "transpose", "warp_transpose", "warp_transpose_timesliced"]
COPY_N, COPY_THREADS, COPY_ITEMS = 1 << 26, 256, 16
SORT_N, SORT_THREADS, SORT_ITEMS = 1 << 24, 128, 16
SCAN_THREADS, SCAN_ITEMS = 128, 8  # over the copy's 2^26 int32

CUB_SOURCE = r"""
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

template <int BT, int IPT, cub::BlockLoadAlgorithm LA, cub::BlockStoreAlgorithm SA>
__device__ void copy_tile(const int* in, int* out) {
  using BL = cub::BlockLoad<int, BT, IPT, LA>;
  using BS = cub::BlockStore<int, BT, IPT, SA>;
  __shared__ union { typename BL::TempStorage load; typename BS::TempStorage store; } storage;
  int items[IPT];
  const size_t offset = size_t(blockIdx.x) * BT * IPT;
  BL(storage.load).Load(in + offset, items);
  __syncthreads();
  BS(storage.store).Store(out + offset, items);
}

#define COPY(name, LA, SA) \
  extern "C" __global__ void copy_##name(const int* in, int* out) { \
    copy_tile<%(copy_threads)d, %(copy_items)d, cub::LA, cub::SA>(in, out); }
COPY(direct, BLOCK_LOAD_DIRECT, BLOCK_STORE_DIRECT)
COPY(striped, BLOCK_LOAD_STRIPED, BLOCK_STORE_STRIPED)
COPY(vectorize, BLOCK_LOAD_VECTORIZE, BLOCK_STORE_VECTORIZE)
COPY(transpose, BLOCK_LOAD_TRANSPOSE, BLOCK_STORE_TRANSPOSE)
COPY(warp_transpose, BLOCK_LOAD_WARP_TRANSPOSE, BLOCK_STORE_WARP_TRANSPOSE)
COPY(warp_transpose_timesliced, BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED, BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED)

extern "C" __global__ void block_sum(const int* in, int* out) {
  constexpr int BT = %(copy_threads)d, IPT = %(copy_items)d;
  using Reduce = cub::BlockReduce<int, BT>;
  __shared__ typename Reduce::TempStorage storage;
  int items[IPT];
  cub::BlockLoad<int, BT, IPT, cub::BLOCK_LOAD_VECTORIZE>().Load(in + size_t(blockIdx.x) * BT * IPT, items);
  const int total = Reduce(storage).Sum(items);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

extern "C" __global__ void inclusive_sum(const int* in, int* out) {
  constexpr int BT = %(scan_threads)d, IPT = %(scan_items)d;
  using Load = cub::BlockLoad<int, BT, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Scan = cub::BlockScan<int, BT>;
  using Store = cub::BlockStore<int, BT, IPT, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  __shared__ union {
    typename Load::TempStorage load; typename Scan::TempStorage scan; typename Store::TempStorage store;
  } storage;
  int items[IPT];
  const size_t base = size_t(blockIdx.x) * BT * IPT;
  Load(storage.load).Load(in + base, items);
  __syncthreads();
  Scan(storage.scan).InclusiveSum(items, items);
  __syncthreads();
  Store(storage.store).Store(out + base, items);
}

extern "C" __global__ void histogram(const unsigned char* in, unsigned* out) {
  constexpr int BT = %(copy_threads)d, IPT = %(copy_items)d;
  using Histogram = cub::BlockHistogram<unsigned char, BT, IPT, 256, cub::BLOCK_HISTO_ATOMIC>;
  __shared__ typename Histogram::TempStorage storage;
  __shared__ unsigned bins[256];
  unsigned char items[IPT];
  cub::BlockLoad<unsigned char, BT, IPT, cub::BLOCK_LOAD_VECTORIZE>().Load(in + size_t(blockIdx.x) * BT * IPT,
                                                                         items);
  Histogram(storage).Histogram(items, bins);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += BT) atomicAdd(out + b, bins[b]);
}

extern "C" __global__ void radix_sort_keys(const unsigned* in, unsigned* out) {
  constexpr int BT = %(sort_threads)d, IPT = %(sort_items)d;
  using Load = cub::BlockLoad<unsigned, BT, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<unsigned, BT, IPT>;
  __shared__ union { typename Load::TempStorage load; typename Sort::TempStorage sort; } storage;
  unsigned keys[IPT];
  const size_t base = size_t(blockIdx.x) * BT * IPT;
  Load(storage.load).Load(in + base, keys);
  __syncthreads();
  Sort(storage.sort).SortBlockedToStriped(keys);
  cub::StoreDirectStriped<BT>(threadIdx.x, out + base, keys);
}
""" % {"copy_threads": COPY_THREADS, "copy_items": COPY_ITEMS, "sort_threads": SORT_THREADS,
       "sort_items": SORT_ITEMS, "scan_threads": SCAN_THREADS, "scan_items": SCAN_ITEMS}

COOP_SOURCE = """
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop


def copy(algorithm):
    @cuda.jit
    def kernel(source, destination, items_per_thread):
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread)
        offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
        coop.load(block, source, items, offset=offset, algorithm=algorithm)
        coop.store(block, destination, items, offset=offset, algorithm=algorithm)
    return kernel


@cuda.jit
def block_sum(source, destination, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    coop.load(block, source, items, offset=cuda.blockIdx.x * cuda.blockDim.x * items_per_thread,
              algorithm="vectorize")
    total = coop.sum(block, items, broadcast=False)
    if cuda.threadIdx.x == 0:
        destination[cuda.blockIdx.x] = total


@cuda.jit
def inclusive_sum(source, destination, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, items, offset=offset, algorithm="warp_transpose")
    sums = coop.inclusive_sum(block, items)
    coop.store(block, destination, sums, offset=offset, algorithm="warp_transpose")


@cuda.jit
def histogram(samples, destination, items_per_thread):
    block = coop.this_block()
    counts = coop.ThreadData(1, dtype=np.uint32)  # 256 threads: bin = thread
    counts[0] = 0
    items = coop.ThreadData(items_per_thread, dtype=np.uint8)
    coop.load(block, samples, items, offset=cuda.blockIdx.x * cuda.blockDim.x * items_per_thread,
              algorithm="vectorize")
    coop.histogram(block, items, bins=256, algorithm="atomic", accumulate=counts)
    cuda.atomic.add(destination, cuda.threadIdx.x, counts[0])


@cuda.jit
def radix_sort_keys(source, destination, items_per_thread):
    block = coop.this_block()
    keys = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, keys, offset=offset, algorithm="warp_transpose")
    out = coop.radix_sort_keys(block, keys, blocked_to_striped=True)
    coop.store(block, destination, out, offset=offset, algorithm="striped")
"""


def _nvcc_cubin(source: str, arch: str) -> bytes | None:
    from cuda.coop.core.toolchain import toolchain

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import nvcc_path

    nvcc = nvcc_path() or shutil.which("nvcc")
    if nvcc is None:
        return None
    work = Path(tempfile.mkdtemp(prefix="coop-nvbench-"))
    (work / "k.cu").write_text(source)
    subprocess.run([nvcc, "-O3", "-std=c++17", f"-arch={arch}", "-cubin",
                    *[f"-I{d}" for d in toolchain().include_dirs], "-o", str(work / "k.cubin"),
                    str(work / "k.cu")], check=True, capture_output=True, text=True)
    return (work / "k.cubin").read_bytes()


def _nvrtc_cubin(source: str, arch: str) -> bytes:
    """The C++ built by NVRTC (through cuda.core) with cuda.coop's options, less -rdc/-dlto."""
    from cuda.core import Program

    from common import nvrtc_options

    return Program(source, "c++", nvrtc_options(arch)).compile("cubin").code


def main(argv=None) -> int:
    import cupy as cp
    import cuda.bench as bench
    from cuda.core import Device, LaunchConfig, ObjectCode, launch
    from numba_cuda_mlir import cuda

    device = Device()
    device.set_current()
    cc = device.compute_capability
    arch = f"sm_{cc.major}{cc.minor}"
    cuda.current_context()

    namespace: dict = {}
    exec(compile(COOP_SOURCE, "nvbench_compare_kernels", "exec"), namespace)  # noqa: S102
    modules = {"CUB (NVRTC)": ObjectCode.from_cubin(_nvrtc_cubin(CUB_SOURCE, arch))}
    nvcc = _nvcc_cubin(CUB_SOURCE, arch)
    if nvcc is not None:
        modules["CUB (nvcc)"] = ObjectCode.from_cubin(nvcc)

    rng = np.random.default_rng(2026)
    copy_in = cp.asarray(rng.integers(-(2**31), 2**31 - 1, COPY_N, dtype=np.int32))
    copy_out = cp.empty_like(copy_in)
    sort_host = rng.integers(0, 2**32, SORT_N, dtype=np.uint32)
    sort_in = cp.asarray(sort_host)
    sort_out = cp.empty_like(sort_in)
    sort_expected = cp.asarray(np.sort(sort_host.reshape(-1, SORT_THREADS * SORT_ITEMS), axis=1).reshape(-1))
    small_host = rng.integers(-1000, 1000, COPY_N, dtype=np.int32)  # sums stay far from overflow
    small_in = cp.asarray(small_host)
    sums_out = cp.empty(COPY_N // (COPY_THREADS * COPY_ITEMS), dtype=np.int32)
    sums_expected = cp.asarray(small_host.reshape(-1, COPY_THREADS * COPY_ITEMS).sum(axis=1, dtype=np.int32))
    scan_expected = cp.asarray(np.cumsum(small_host.reshape(-1, SCAN_THREADS * SCAN_ITEMS), axis=1,
                                         dtype=np.int32).reshape(-1))
    samples_host = rng.integers(0, 256, COPY_N, dtype=np.uint8)
    samples_in = cp.asarray(samples_host)
    bins_out = cp.empty(256, dtype=np.uint32)
    bins_expected = cp.asarray(np.bincount(samples_host, minlength=256).astype(np.uint32))

    def coop_launcher(kernel, grid, block, args):
        # Numba views without the producer-stream sync of __cuda_array_interface__: that sync
        # waits on CuPy's (legacy default) stream, which waits on NVBench's blocking kernel.
        args = [cuda.as_cuda_array(a, sync=False) if hasattr(a, "__cuda_array_interface__") else a for a in args]

        configured = {}  # per stream handle: the configured launcher, made once as a user would

        def launch_on(stream_handle):
            if stream_handle not in configured:
                configured[stream_handle] = kernel[grid, block, cuda.external_stream(stream_handle)]
            configured[stream_handle](*args)
        return launch_on

    def cub_launcher(module, name, grid, block, args):
        kernel = module.get_kernel(name)
        config = LaunchConfig(grid=grid, block=block)
        pointers = [a.data.ptr for a in args]

        streams = {}

        def launch_on(stream_handle):
            if stream_handle not in streams:
                streams[stream_handle] = device.create_stream(_Handle(stream_handle))
            launch(streams[stream_handle], config, kernel, *pointers)
        return launch_on

    def checked(launch_on, output, expected, what, poison=None):
        # Poisoned first; a histogram accumulates, so it starts from zero instead.
        output.fill(poison if poison is not None else (-1 if output.dtype == cp.int32 else 0xDEADBEEF))
        launch_on(cp.cuda.get_current_stream().ptr)
        cp.cuda.Device().synchronize()
        if not bool(cp.array_equal(output, expected)):
            raise SystemExit(f"{what}: wrong result")
        return launch_on

    sides: dict = {}
    for algorithm in COPY_ALGORITHMS:
        grid, block = COPY_N // (COPY_THREADS * COPY_ITEMS), COPY_THREADS
        kernel = namespace["copy"](algorithm)
        sides[("copy", algorithm, "cuda.coop")] = checked(
            coop_launcher(kernel, grid, block, (copy_in, copy_out, COPY_ITEMS)), copy_out, copy_in,
            f"coop copy {algorithm}")
        for build, module in modules.items():
            sides[("copy", algorithm, build)] = checked(
                cub_launcher(module, f"copy_{algorithm}", grid, block, (copy_in, copy_out)), copy_out, copy_in,
                f"{build} copy {algorithm}")
    grid, block = SORT_N // (SORT_THREADS * SORT_ITEMS), SORT_THREADS
    sides[("sort", "", "cuda.coop")] = checked(
        coop_launcher(namespace["radix_sort_keys"], grid, block, (sort_in, sort_out, SORT_ITEMS)), sort_out,
        sort_expected, "coop sort")
    for build, module in modules.items():
        sides[("sort", "", build)] = checked(
            cub_launcher(module, "radix_sort_keys", grid, block, (sort_in, sort_out)), sort_out, sort_expected,
            f"{build} sort")

    # (case, kernel name, grid, block, inputs, output, expected, coop's items_per_thread, poison)
    tile = COPY_THREADS * COPY_ITEMS
    cases = [
        ("block_sum", "block_sum", COPY_N // tile, COPY_THREADS, small_in, sums_out, sums_expected, COPY_ITEMS,
         None),
        ("inclusive_sum", "inclusive_sum", COPY_N // (SCAN_THREADS * SCAN_ITEMS), SCAN_THREADS, small_in, copy_out,
         scan_expected, SCAN_ITEMS, None),
        ("histogram", "histogram", COPY_N // tile, COPY_THREADS, samples_in, bins_out, bins_expected, COPY_ITEMS,
         0),
    ]
    for case, name, grid, block, source, output, expected, items, poison in cases:
        sides[(case, "", "cuda.coop")] = checked(
            coop_launcher(namespace[name], grid, block, (source, output, items)), output, expected,
            f"coop {case}", poison)
        for build, module in modules.items():
            sides[(case, "", build)] = checked(
                cub_launcher(module, name, grid, block, (source, output)), output, expected, f"{build} {case}",
                poison)

    def run(state, key):
        if key not in sides:
            state.skip(f"{key[2]} is not available here (nvcc not found)")
            return
        launch_on = sides[key]
        state.exec(lambda nvbench_launch: launch_on(nvbench_launch.get_stream().__cuda_stream__()[1]))

    @bench.register
    def copy(state):
        n_bytes = COPY_N * 4
        state.add_global_memory_reads(n_bytes)
        state.add_global_memory_writes(n_bytes)
        run(state, ("copy", state.get_string("algorithm"), state.get_string("build")))

    copy.add_string_axis("algorithm", COPY_ALGORITHMS)
    copy.add_string_axis("build", BUILDS)

    @bench.register
    def radix_sort_keys(state):
        state.add_element_count(SORT_N)
        state.add_global_memory_reads(SORT_N * 4)
        state.add_global_memory_writes(SORT_N * 4)
        run(state, ("sort", "", state.get_string("build")))

    radix_sort_keys.add_string_axis("build", BUILDS)

    def register_case(case, element_count, read_bytes, write_bytes):
        def benchmark(state):
            state.add_element_count(element_count)
            state.add_global_memory_reads(read_bytes)
            state.add_global_memory_writes(write_bytes)
            run(state, (case, "", state.get_string("build")))
        benchmark.__name__ = case
        bench.register(benchmark).add_string_axis("build", BUILDS)

    register_case("block_sum", COPY_N, COPY_N * 4, COPY_N // tile * 4)
    register_case("inclusive_sum", COPY_N, COPY_N * 4, COPY_N * 4)
    register_case("histogram", COPY_N, COPY_N, COPY_N // tile * 256 * 4)
    bench.run_all_benchmarks([sys.argv[0], *(sys.argv[1:] if argv is None else argv)])
    return 0


class _Handle:
    """A raw stream handle in the form cuda.core takes foreign streams (``__cuda_stream__``)."""

    def __init__(self, handle: int):
        self._handle = handle

    def __cuda_stream__(self):
        return (0, self._handle)


if __name__ == "__main__":
    sys.exit(main())
