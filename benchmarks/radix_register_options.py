"""What each compiler option gives the CUB block radix sort that NVRTC builds with more registers.

    python benchmarks/radix_register_options.py [--json PATH]

cuda.coop compiles CUB with NVRTC.  Built by NVRTC, the block radix sort of
``bench_radix_sort.py`` (uint32 keys, 128 threads x 16 keys, striped output) needs
about 92 registers where nvcc's build of the same C++ needs 72, which leaves one
resident block per SM fewer.  This script builds that one CUB kernel every way we
tried to close the gap (NVRTC options, ptxas options through NVRTC, launch bounds in
the source) plus nvcc's build, and reports for each: registers and resident blocks
per SM as the driver sees them, and the device time of the sort (CUDA events around
10 back-to-back launches, median of 15, after 3 warm-up launches: the batched method
of ``common.time_kernel``) over 2^24 keys.

Options that NVRTC or libNVVM refuse are listed with their error: a 32-bit shared
address width (``-nvptx-short-ptr``, what makes nvcc's PTX address shared memory
with 32-bit registers) has no NVRTC spelling.

Uses cuda.core for building, loading and launching, so both builds of a kernel are
loaded and timed the same way.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

THREADS, ITEMS = 128, 16
TILE = THREADS * ITEMS
N = 1 << 24

SOURCE = r"""
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_store.cuh>

constexpr int BT = %(threads)d, IPT = %(items)d, TILE = BT * IPT;
using Load = cub::BlockLoad<unsigned, BT, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using Sort = cub::BlockRadixSort<unsigned, BT, IPT>;

extern "C" __global__ void %(bounds)s sort_tiles(const unsigned* in, unsigned* out) {
  __shared__ union {
    typename Load::TempStorage load;
    typename Sort::TempStorage sort;
  } storage;
  unsigned keys[IPT];
  const long long base = (long long)blockIdx.x * TILE;
  Load(storage.load).Load(in + base, keys);
  __syncthreads();
  Sort(storage.sort).SortBlockedToStriped(keys);
  for (int i = 0; i < IPT; ++i) out[base + i * BT + threadIdx.x] = keys[i];
}
"""

# (label, launch bounds written in the source, ProgramOptions fields beyond cuda.coop's)
NVRTC_VARIANTS = [
    ("NVRTC, cuda.coop's options", "", {}),
    ("NVRTC + __launch_bounds__(128)", "__launch_bounds__(128)", {}),
    ("NVRTC + __launch_bounds__(128, 6)", "__launch_bounds__(128, 6)", {}),
    ("NVRTC -maxrregcount=80", "", {"max_register_count": 80}),
    ("NVRTC -maxrregcount=72", "", {"max_register_count": 72}),
    ("NVRTC --extra-device-vectorization", "", {"extra_device_vectorization": True}),
    ("NVRTC -Xptxas --allow-expensive-optimizations=true", "",
     {"ptxas_options": ["--allow-expensive-optimizations=true"]}),
    ("NVRTC -Xptxas -O3 --maxrregcount=80", "", {"ptxas_options": ["-O3", "--maxrregcount=80"]}),
    ("NVRTC --Ofast-compile=min", "", {"ofast_compile": "min"}),
    ("NVRTC -Xnvvm -nvptx-short-ptr (32-bit shared addresses)", "", {"_raw": ["-Xnvvm", "-nvptx-short-ptr"]}),
]
NVCC_VARIANTS = [
    ("nvcc -O3", "", []),
    ("nvcc -O3 + __launch_bounds__(128, 6)", "__launch_bounds__(128, 6)", []),
]


def _source(bounds: str) -> str:
    return SOURCE % {"threads": THREADS, "items": ITEMS, "bounds": bounds}


def _nvrtc_cubin(bounds: str, extra: dict, arch: str):
    """cuda.coop's NVRTC options (less -rdc/-dlto: a whole program here) plus ``extra``."""
    from cuda.bindings import nvrtc

    from cuda.coop.core.build import NVRTC_OPTIONS
    from cuda.coop.core.toolchain import toolchain

    extra = dict(extra)
    raw = extra.pop("_raw", [])
    options = [o for o in NVRTC_OPTIONS if o not in ("-rdc=true", "-dlto")]
    options += [f"-arch={arch}", *[f"-I{d}" for d in toolchain().include_dirs], *raw]
    if "max_register_count" in extra:
        options.append(f"-maxrregcount={extra.pop('max_register_count')}")
    if extra.pop("extra_device_vectorization", False):
        options.append("--extra-device-vectorization")
    for flag in extra.pop("ptxas_options", []):
        options += ["-Xptxas", flag]
    if "ofast_compile" in extra:
        options.append(f"--Ofast-compile={extra.pop('ofast_compile')}")
    assert not extra, extra
    _, prog = nvrtc.nvrtcCreateProgram(_source(bounds).encode(), b"sort.cu", 0, [], [])
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), [o.encode() for o in options])
    try:
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise RuntimeError(log.decode(errors="replace").strip().splitlines()[-1])
        _, size = nvrtc.nvrtcGetCUBINSize(prog)
        cubin = b" " * size
        nvrtc.nvrtcGetCUBIN(prog, cubin)
        return cubin
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _nvcc_cubin(bounds: str, flags, arch: str):
    from cuda.coop.core.toolchain import toolchain

    try:
        from common import nvcc_path
    except ImportError:  # run from elsewhere
        nvcc_path = lambda: shutil.which("nvcc")  # noqa: E731
    nvcc = nvcc_path()
    if nvcc is None:
        raise RuntimeError("nvcc not found")
    work = Path(tempfile.mkdtemp(prefix="coop-radix-options-"))
    (work / "sort.cu").write_text(_source(bounds))
    cmd = [nvcc, "-O3", "-std=c++17", f"-arch={arch}", "-cubin", *flags,
           *[f"-I{d}" for d in toolchain().include_dirs], "-o", str(work / "sort.cubin"), str(work / "sort.cu")]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return (work / "sort.cubin").read_bytes()


def _measure(cubin: bytes, device, stream, keys_in, keys_out, expected) -> dict:
    from cuda.core import EventOptions, LaunchConfig, ObjectCode, launch

    kernel = ObjectCode.from_cubin(cubin).get_kernel("sort_tiles")
    registers = kernel.attributes.num_regs
    blocks_per_sm = kernel.occupancy.max_active_blocks_per_multiprocessor(THREADS, 0)
    config = LaunchConfig(grid=N // TILE, block=THREADS)

    def run():
        launch(stream, config, kernel, keys_in.data.ptr, keys_out.data.ptr)

    for _ in range(3):
        run()
    stream.sync()
    import cupy as cp

    correct = bool(cp.array_equal(keys_out, expected))
    samples = []
    timing = EventOptions(timing_enabled=True)
    for _ in range(15):
        start = stream.record(options=timing)
        for _ in range(10):
            run()
        stop = stream.record(options=timing)
        stop.sync()
        samples.append((stop - start) / 10)
    return {"registers": registers, "blocks_per_sm": blocks_per_sm, "ms": float(np.median(samples)),
            "correct": correct}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))

    import cupy as cp
    from cuda.core import Device

    device = Device()
    device.set_current()
    arch = f"sm_{device.compute_capability.major}{device.compute_capability.minor}"
    stream = device.create_stream()
    rng = np.random.default_rng(7)
    host = rng.integers(0, 2**32, N, dtype=np.uint32)
    keys_in = cp.asarray(host)
    keys_out = cp.full(N, 0xDEADBEEF, dtype=cp.uint32)  # poisoned: a kernel that writes nothing fails
    # Striped output of a sorted tile: key i of thread t has rank i*BT + t and is stored
    # there, so each output tile is the sorted tile.
    expected = cp.asarray(np.sort(host.reshape(-1, TILE), axis=1).reshape(-1))
    cp.cuda.Device().synchronize()

    rows = []
    builds = [("nvrtc", label, bounds, extra) for label, bounds, extra in NVRTC_VARIANTS]
    builds += [("nvcc", label, bounds, flags) for label, bounds, flags in NVCC_VARIANTS]
    for compiler, label, bounds, extra in builds:
        try:
            cubin = (_nvrtc_cubin(bounds, extra, arch) if compiler == "nvrtc"
                     else _nvcc_cubin(bounds, extra, arch))
        except (RuntimeError, subprocess.CalledProcessError) as error:
            rows.append({"build": label, "refused": str(error)[:160]})
            print(f"{label:58s} refused: {str(error)[:100]}")
            continue
        keys_out.fill(0xDEADBEEF)
        cp.cuda.Device().synchronize()  # the fill runs on CuPy's stream, the sort on ours
        row = {"build": label, **_measure(cubin, device, stream, keys_in, keys_out, expected)}
        rows.append(row)
    reference = next((r["ms"] for r in rows if r["build"] == "nvcc -O3" and "ms" in r), None)
    print(f"{'build':58s} {'regs':>5s} {'blocks/SM':>9s} {'ms':>7s} {'nvcc/this':>9s} correct")
    for row in rows:
        if "ms" not in row:
            continue
        ratio = reference / row["ms"] if reference else float("nan")
        row["nvcc_over_this"] = ratio
        print(f"{row['build']:58s} {row['registers']:5d} {row['blocks_per_sm']:9d} {row['ms']:7.4f} "
              f"{ratio:9.3f} {row['correct']}")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": device.name, "arch": arch, "rows": rows}, indent=1))
    return 0 if all(r.get("correct", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
