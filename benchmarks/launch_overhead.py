"""Host cost of one launch: a cuda.coop kernel against the same kernel written without cuda.coop.

    python benchmarks/launch_overhead.py [--launches 3000] [--repeat 7] [--profile N]
                                         [--compiler numba-cuda-mlir|numba-cuda]

Each case launches a small copy kernel (one block, 4 items per thread, device arrays)
``--launches`` times asynchronously and reports host microseconds per launch (median of
``--repeat`` rounds, synchronized at the end of each round): what a user's loop pays per
``kernel[grid, block](...)`` call.  Cases:

- ``plain_1d``  / ``plain_3d``: the copy without cuda.coop (the compiler's own floor)
- ``coop_1d``   / ``coop_3d``: ``ThreadData(4)``, ``coop.load``/``coop.store`` (striped)
- ``coop_ipt_arg``: the same with ``items_per_thread`` a kernel argument (specialized per value)
- ``plain_ipt_arg``: the plain copy taking the same extra integer argument
- ``native_launcher``: numba-cuda-mlir's native launcher that ``coop_1d``'s repeat launches
  end in, called directly with the arguments it receives there (numba-cuda-mlir only): the
  floor of a launch from Python with this compiler; ``coop_1d`` minus it is what
  cuda.coop's fast path costs
- ``native_launcher_ipt_arg``: the same for ``coop_ipt_arg`` (its integer argument too)

``--profile N`` also runs N launches of each case under cProfile (``--profile-cases``, default
``coop_1d plain_1d coop_ipt_arg``) and prints where the host time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    COMPILER_IMPORTS, compiler_cuda, current_device_meta, for_compiler, import_source, write_results,
)

ITEMS = 4
THREADS_1D = 128
BLOCK_3D = (8, 4, 4)

KERNELS = '''
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS = 4

@cuda.jit
def plain_1d(src, dst):
    base = cuda.threadIdx.x
    for i in range(ITEMS):
        dst[base + i * cuda.blockDim.x] = src[base + i * cuda.blockDim.x]

@cuda.jit
def plain_3d(src, dst):
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    n = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    for i in range(ITEMS):
        dst[t + i * n] = src[t + i * n]

@cuda.jit
def plain_ipt_arg(src, dst, items_per_thread):
    base = cuda.threadIdx.x
    for i in range(items_per_thread):
        dst[base + i * cuda.blockDim.x] = src[base + i * cuda.blockDim.x]

@cuda.jit
def coop_1d(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(ITEMS)
    coop.load(block, src, items, algorithm="striped")
    coop.store(block, dst, items, algorithm="striped")

coop_3d = coop_1d

@cuda.jit
def coop_ipt_arg(src, dst, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    coop.load(block, src, items, algorithm="striped")
    coop.store(block, dst, items, algorithm="striped")
'''


def cases(ns, src, dst):
    return {
        "plain_1d": lambda: ns.plain_1d[1, THREADS_1D](src, dst),
        "coop_1d": lambda: ns.coop_1d[1, THREADS_1D](src, dst),
        "plain_3d": lambda: ns.plain_3d[1, BLOCK_3D](src, dst),
        "coop_3d": lambda: ns.coop_3d[1, BLOCK_3D](src, dst),
        "plain_ipt_arg": lambda: ns.plain_ipt_arg[1, THREADS_1D](src, dst, ITEMS),
        "coop_ipt_arg": lambda: ns.coop_ipt_arg[1, THREADS_1D](src, dst, ITEMS),
    }


def native_launcher(kernel, *args):
    """``kernel[1, THREADS_1D]``'s remembered native launcher, called with ``args`` as
    cuda.coop's fast path calls it (backends/numba_mlir/_compat_launch.py), or None when no
    launch was remembered.  The first launch marks the kernel launch-configuration
    specialized, so the configuration is taken again after it."""
    from cuda.coop.backends.numba_mlir._compat_launch import launch_arguments

    for _ in range(3):
        configured = kernel[1, THREADS_1D]
        configured(*args)
        fast = configured.__dict__.get("_coop_fast") or {}
        if len(fast) == 1:
            entry = next(iter(fast.values()))
            _, launch_args = launch_arguments(args, kernel._literal_arg_positions, type(args[0]), frozenset())
            return lambda: entry.launcher(*launch_args)
    return None


def per_launch_us(launch, launches: int, repeat: int, sync) -> float:
    launch()  # compile and load outside the timing
    sync()
    rounds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(launches):
            launch()
        sync()
        rounds.append((time.perf_counter() - t0) / launches * 1e6)
    return statistics.median(rounds)


def profile(launch, count: int, sync, top: int = 25) -> str:
    launch()
    sync()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(count):
        launch()
    sync()
    prof.disable()
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return text.getvalue()


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--profile", type=int, default=0, metavar="N")
    ap.add_argument("--profile-cases", nargs="*", default=["coop_1d", "plain_1d", "coop_ipt_arg"])
    ap.add_argument("--only", nargs="*", help="case names to run (default: all)")
    ap.add_argument("--compiler", choices=sorted(COMPILER_IMPORTS), default="numba-cuda-mlir",
                    help="compile both kernels of every case with this compiler")
    args = ap.parse_args(argv)

    import numpy as np

    cuda = compiler_cuda(args.compiler)
    ns = import_source(for_compiler(KERNELS, args.compiler), "coop_launch_cost_kernels")
    n = THREADS_1D * ITEMS
    src = cuda.to_device(np.arange(n, dtype=np.int32))
    dst = cuda.device_array(n, dtype=np.int32)
    launches = cases(ns, src, dst)
    if args.compiler == "numba-cuda-mlir":
        for name, kernel, kernel_args in (("native_launcher", ns.coop_1d, (src, dst)),
                                          ("native_launcher_ipt_arg", ns.coop_ipt_arg, (src, dst, ITEMS))):
            floor = native_launcher(kernel, *kernel_args)
            cuda.synchronize()
            if floor is None:
                print(f"{name}: not measured (the fast path remembered no launch of {kernel.__name__})")
            else:
                launches[name] = floor
    chosen = args.only or list(launches)
    report = {"compiler": args.compiler, "launches": args.launches, "repeat": args.repeat, "us_per_launch": {},
              "meta": current_device_meta(cuda, args.compiler)}
    for name in chosen:
        dst[:] = -1
        us = per_launch_us(launches[name], args.launches, args.repeat, cuda.synchronize)
        assert np.array_equal(dst.copy_to_host(), src.copy_to_host()), name
        report["us_per_launch"][name] = us
        print(f"{name:14s} {us:8.2f} us per launch", flush=True)
    per = report["us_per_launch"]
    for shape, floor in (("1d", "native_launcher"), ("ipt_arg", "native_launcher_ipt_arg")):
        if floor in per and f"coop_{shape}" in per:
            report[f"fast_path_us_{shape}"] = per[f"coop_{shape}"] - per[floor]
            print(f"cuda.coop's fast path: {report[f'fast_path_us_{shape}']:+.2f} us over the native launcher "
                  f"({shape})")
    for shape in ("1d", "3d", "ipt_arg"):
        if f"coop_{shape}" in per and f"plain_{shape}" in per:
            extra = per[f"coop_{shape}"] - per[f"plain_{shape}"]
            report[f"extra_us_{shape}"] = extra
            print(f"cuda.coop adds {extra:+.2f} us per launch ({shape})")
    if args.profile:
        for name in args.profile_cases:
            print(f"\n===== cProfile: {args.profile} launches of {name} =====")
            print(profile(launches[name], args.profile, cuda.synchronize))
    suffix = "" if args.compiler == "numba-cuda-mlir" else "_" + args.compiler.replace("-", "_")
    write_results("launch_overhead" + suffix, report)
    return report


if __name__ == "__main__":
    main()
