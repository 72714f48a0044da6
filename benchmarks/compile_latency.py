"""Compile latency of cuda.coop kernels on the host (no GPU needed).

    python benchmarks/compile_latency.py [--repeat 3] [--json out.json]

Each scenario runs in a fresh Python process with its own provider cache directory and
times ``cuda.coop.numba_mlir.compile_cubin`` (typing, C++ generation, NVRTC, nvJitLink
LTO: everything a first launch does except loading the module on a device):

- import: ``from numba_cuda_mlir import cuda`` + ``from cuda import coop``
- compiler initialization: a trivial kernel without cuda.coop compiled first, as a
  launch-latency benchmark warms up (numba-cuda-mlir sets up its typing and target
  contexts on the first compile of a process, whatever the kernel); every row below
  is timed after it
- plain kernel: a copy kernel without cuda.coop (numba-cuda-mlir alone)
- cold: first coop kernel of a process, empty provider cache; with 4 or more usable CPUs
  NVRTC uses the precompiled header that the process started building at its first compile
  (core/pch.py); the same with CUDA_COOP_NVRTC_PCH=early (that build whatever the CPUs) and
  =0 (no PCH: what a cold compile did before)
- second and third kernel: other coop kernels in the same process (NVRTC with the PCH)
- same calls again: a kernel whose CUB calls repeat the first one's (memory cache hit)
- warm disk: the cold kernel in a new process, provider cache filled by a previous one
- cold, CCCL's default unroll limit: the cold kernel compiled as before issue #15
  (libcu++'s type-list unroll limit left at 16 under NVRTC), for comparison
- PCH off / PCH from the first compile: the cold and second-kernel paths with
  CUDA_COOP_NVRTC_PCH=0 and =1
- first kernel of a process: no trivial kernel first, so the compiler's initialization is
  in the figure, as a program that imports and launches meets it: a plain kernel, the
  cold coop kernel, and the cold coop kernel with CUDA_COOP_NVRTC_PCH=0 and =early
- CCCL's own headers: the cold rows with PCH=0 and the first kernel of a process with
  PCH=early, compiled with CCCL's thrust/iterator/discard_iterator.h, cuda/std/span and
  cuda/std/mdspan rather than cuda-coop's stand-ins (core/cpp.py), for comparison
- first kernel of a process after a first context: a 0.25 s sleep stands in for the
  driver's creation of the context, with what cuda.coop's wrapper of the compiler's
  ``Device.get_primary_context`` calls there run first (it starts the PCH, as at a real
  first context) or not (the PCH starts at the first compile); =early in both

The children import cuda.coop from bytecode, as an installed package does: they run without
``PYTHONDONTWRITEBYTECODE``, after one untimed child has written it.  The warm disk cache
holds both caches a new process reads: the providers' LTO-IR and the kernel's linked cubin.

docs/compile_latency.rst quotes the medians of one run of this script.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import toolkit_line  # noqa: E402

# The stand-in for the driver's creation of a first context (no GPU here), in seconds.
CONTEXT_S = 0.25

SCRIPT = textwrap.dedent('''
    import json, sys, time
    t0 = time.perf_counter()
    from numba_cuda_mlir import cuda
    from cuda import coop
    from cuda.coop.numba_mlir import compile_cubin
    import numpy as np
    t_import = time.perf_counter() - t0
    if len(sys.argv) > 2 and "cccl-headers" in sys.argv[2].split("+"):
        # The baseline of the stand-in headers (core/cpp.py): CCCL's own headers in
        # every NVRTC compile, the PCH's too.
        import cuda.coop.core.build as build
        build.HEADER_STAND_INS = ()
    if len(sys.argv) > 2 and sys.argv[2] == "cccl-default-unroll":
        # The baseline row: libcu++'s own type-list unroll limit under NVRTC (16), as
        # before issue #15; also a different provider key, so nothing is shared.
        import cuda.coop.core.build as build
        build.NVRTC_OPTIONS = tuple(o for o in build.NVRTC_OPTIONS if "_CCCL_META_UNROLL_LIMIT" not in o)

    @cuda.jit
    def plain(src, dst):
        i = cuda.grid(1)
        if i < src.size:
            dst[i] = src[i]

    @cuda.jit
    def first(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        off = cuda.blockIdx.x * cuda.blockDim.x * 4
        coop.load(block, src, items, offset=off, algorithm="warp_transpose")
        coop.store(block, dst, items, offset=off, algorithm="warp_transpose")

    @cuda.jit
    def second(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(8)
        off = cuda.blockIdx.x * cuda.blockDim.x * 8
        coop.load(block, src, items, offset=off, algorithm="transpose")
        coop.store(block, dst, items, offset=off, algorithm="striped")

    @cuda.jit
    def third(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(2)
        off = cuda.blockIdx.x * cuda.blockDim.x * 2
        coop.load(block, src, items, offset=off, algorithm="warp_transpose_timesliced")
        coop.store(block, dst, items, offset=off, algorithm="vectorize")

    @cuda.jit
    def repeat(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        off = cuda.blockIdx.x * cuda.blockDim.x * 4
        coop.load(block, src, items, offset=off, algorithm="warp_transpose")
        coop.store(block, dst, items, offset=off, algorithm="warp_transpose")

    @cuda.jit
    def warm_up(x):
        x[0] = 1

    args = (np.zeros(1, np.int32), np.zeros(1, np.int32))
    flags = sys.argv[2].split("+") if len(sys.argv) > 2 else []
    out = {"import_s": t_import}
    if "context" in flags or "sleep" in flags:
        # No GPU here: the driver's creation of the first context is stood in for by a
        # sleep of CONTEXT_S; with "context", what cuda.coop's wrapper of the compiler's
        # Device.get_primary_context calls at a first context runs first (for sm_90).
        t = time.perf_counter()
        if "context" in flags:
            from cuda.coop.backends._first_compile import at_first_context

            at_first_context((9, 0))
        time.sleep(CONTEXT_S)
        out["context_s"] = time.perf_counter() - t
    t = time.perf_counter()
    if "first-kernel" not in flags:
        compile_cubin(warm_up, args[:1], cc=(9, 0), block=32)
    out["init_s"] = time.perf_counter() - t
    for name in sys.argv[1].split(","):
        kernel = {"plain": plain, "first": first, "second": second, "third": third,
                  "repeat": repeat}[name]
        t = time.perf_counter()
        compile_cubin(kernel, args, cc=(9, 0), block=256)
        out[name + "_s"] = time.perf_counter() - t
    print("RESULT " + json.dumps(out))
''').replace("CONTEXT_S", repr(CONTEXT_S))


def run(kernels: str, env: dict, variant: str = "") -> dict:
    full = dict(os.environ, **env)
    full.pop("CUDA_COOP_SOURCE_DUMP_DIR", None)
    full.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode
    proc = subprocess.run([sys.executable, "-c", SCRIPT, kernels, variant], capture_output=True, text=True,
                          env=full, timeout=900)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if not line:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(line[-1][7:])


def in_new_cache(kernels: str, variant: str = "", **env) -> dict:
    """:func:`run` with a provider cache of its own, empty (``env`` adds variables)."""
    with tempfile.TemporaryDirectory(prefix="coop-latency-") as cache:
        return run(kernels, {"CUDA_COOP_CACHE_DIR": cache, **env}, variant)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    samples: dict = {}

    def add(key, value):
        samples.setdefault(key, []).append(value)

    in_new_cache("plain,first")  # untimed: writes the bytecode
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="coop-latency-") as cache:
            env = {"CUDA_COOP_CACHE_DIR": cache}
            # A cache of its own: a process that compiled nothing leaves a note that keeps
            # later processes of that cache from building the PCH early (core/pch.py).
            r = in_new_cache("plain")
            add("import", r["import_s"])
            add("compiler initialization (a first trivial kernel)", r["init_s"])
            add("plain kernel (no cuda.coop)", r["plain_s"])
            r = run("first,second,third,repeat", env)
            add("cold: first coop kernel, empty cache", r["first_s"])
            add("second kernel, same process", r["second_s"])
            add("third kernel, same process", r["third_s"])
            add("same CUB calls again (memory cache)", r["repeat_s"])
            r = run("first", env)
            add("warm disk cache, new process", r["first_s"])
        add("cold, CCCL's default unroll limit (before #15)", in_new_cache("first", "cccl-default-unroll")["first_s"])
        r = in_new_cache("first,second,third", CUDA_COOP_NVRTC_PCH="0")
        add("cold, CUDA_COOP_NVRTC_PCH=0 (no early PCH)", r["first_s"])
        add("third kernel, CUDA_COOP_NVRTC_PCH=0", r["third_s"])
        # The first kernel of a process, the compiler's initialization included, as a
        # program that imports and launches meets it.
        add("first kernel of a process: plain", in_new_cache("plain", "first-kernel")["plain_s"])
        add("first kernel of a process: cold coop", in_new_cache("first", "first-kernel")["first_s"])
        add("first kernel of a process: cold coop, CUDA_COOP_NVRTC_PCH=0",
            in_new_cache("first", "first-kernel", CUDA_COOP_NVRTC_PCH="0")["first_s"])
        # The early PCH whatever the CPUs (auto leaves it out below 4 usable CPUs).
        add("first kernel of a process: cold coop, CUDA_COOP_NVRTC_PCH=early",
            in_new_cache("first", "first-kernel", CUDA_COOP_NVRTC_PCH="early")["first_s"])
        # The same two with CCCL's own headers instead of the stand-ins.
        add("first kernel of a process: cold coop, CUDA_COOP_NVRTC_PCH=early, CCCL's own headers",
            in_new_cache("first", "first-kernel+cccl-headers", CUDA_COOP_NVRTC_PCH="early")["first_s"])
        add("cold, CUDA_COOP_NVRTC_PCH=0, CCCL's own headers",
            in_new_cache("first", "cccl-headers", CUDA_COOP_NVRTC_PCH="0")["first_s"])
        add("cold, CUDA_COOP_NVRTC_PCH=early", in_new_cache("first", CUDA_COOP_NVRTC_PCH="early")["first_s"])
        add("cold with CUDA_COOP_NVRTC_PCH=1", in_new_cache("first", CUDA_COOP_NVRTC_PCH="1")["first_s"])
        # The first context's start of the PCH (backends/_first_compile.py), against the
        # same process whose build starts at the first compile; both after the stand-in
        # for the context's creation, the early setting as on a machine of 4+ CPUs.
        for label, variant in (("a first context (stand-in) starts the PCH", "first-kernel+context"),
                               ("the first compile starts the PCH", "first-kernel+sleep")):
            r = in_new_cache("first", variant, CUDA_COOP_NVRTC_PCH="early")
            add(f"first kernel of a process after {CONTEXT_S} s of context creation, {label}", r["first_s"])
            add(f"  its context creation, {label}", r["context_s"])
    import numba_cuda_mlir

    from cuda.coop.core.toolchain import toolchain

    tc = toolchain()

    import datetime

    report = {
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                   f"Python {platform.python_version()}",
        "toolchain": toolkit_line(tc),
        "numba_cuda_mlir": numba_cuda_mlir.__version__,
        "repeat": args.repeat,
        "median_s": {k: statistics.median(v) for k, v in samples.items()},
        # The figures issue #15 sets targets for: a first compile in a fresh process over
        # the same copy kernel without cuda.coop (each round's pair, then the median).
        "over_plain_median_s": {
            name: statistics.median(c - p for c, p in zip(samples[key], samples[plain]))
            for name, key, plain in (
                ("cold", "cold: first coop kernel, empty cache", "plain kernel (no cuda.coop)"),
                ("cold, no early PCH", "cold, CUDA_COOP_NVRTC_PCH=0 (no early PCH)", "plain kernel (no cuda.coop)"),
                ("warm disk cache", "warm disk cache, new process", "plain kernel (no cuda.coop)"),
                ("cold before #15", "cold, CCCL's default unroll limit (before #15)", "plain kernel (no cuda.coop)"),
                ("cold, first kernel of a process", "first kernel of a process: cold coop",
                 "first kernel of a process: plain"),
                ("cold, first kernel of a process, no early PCH",
                 "first kernel of a process: cold coop, CUDA_COOP_NVRTC_PCH=0", "first kernel of a process: plain"),
                ("cold, first kernel of a process, early PCH forced",
                 "first kernel of a process: cold coop, CUDA_COOP_NVRTC_PCH=early", "first kernel of a process: plain"),
                ("cold, early PCH forced", "cold, CUDA_COOP_NVRTC_PCH=early", "plain kernel (no cuda.coop)"),
                ("cold, no early PCH, CCCL's own headers",
                 "cold, CUDA_COOP_NVRTC_PCH=0, CCCL's own headers", "plain kernel (no cuda.coop)"),
                ("cold, first kernel of a process, early PCH forced, CCCL's own headers",
                 "first kernel of a process: cold coop, CUDA_COOP_NVRTC_PCH=early, CCCL's own headers",
                 "first kernel of a process: plain"))
        },
        "min_s": {k: min(v) for k, v in samples.items()},
        "samples_s": samples,
    }
    width = max(map(len, samples))
    print(f"{report['machine']}; {report['toolchain']}; numba-cuda-mlir {report['numba_cuda_mlir']}")
    print(f"  {'':<{width}}  {'median':>7}  {'min':>7}")
    for key, value in report["median_s"].items():
        print(f"  {key:<{width}}  {value:7.3f}  {report['min_s'][key]:7.3f} s")
    for name, value in report["over_plain_median_s"].items():
        print(f"  first compile over the kernel without cuda.coop, {name}: {value:+.3f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
