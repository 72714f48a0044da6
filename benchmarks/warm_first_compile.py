"""A warm first compile as a program meets it, on the host (no GPU needed).

    python benchmarks/warm_first_compile.py [--rounds 8] [--context-s 0.15] [--base-src DIR]

Each round runs two fresh processes with a filled provider and link cache: one compiles
bench_reduce.py's latency kernel (``coop.load`` + ``coop.sum``) for sm_90, the other its
kernel without cuda.coop.  Both import the compiler, compile a trivial kernel first (the
compiler's own set-up, as a launch-latency benchmark warms up), define their kernel, sleep
``--context-s`` where a program creates its CUDA context and arrays (the driver's work, in
which Python's lock is free), then time ``compile_cubin``: everything a first launch does
but loading the module.  The difference of the medians is what cuda.coop adds to a warm
first launch (issue #31's target: +0.05 s).

``--base-src`` alternates another tree's ``src/`` with this one's in the same rounds (an
A/B of a change, e.g. a ``git worktree`` of the commit before it).  The children import
cuda.coop from bytecode, as an installed package does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_reduce import COOP_KERNEL, PLAIN_KERNEL  # noqa: E402
from common import run_meta, write_results  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src"

# The child: bench_reduce.py's latency kernels (each defines ``k(source, total)``).
CHILD = textwrap.dedent('''
    import json, sys, time
    from numba_cuda_mlir import cuda, types
    cooperative = sys.argv[1] == "coop"
    if cooperative:
        from cuda import coop
    from cuda.coop.numba_mlir import compile_cubin

    @cuda.jit
    def warm_up(x):
        x[0] = 1

    if sys.argv[3] == "warm-up":
        compile_cubin(warm_up, [types.int32[::1]], block=256)
    if cooperative:
    {coop_kernel}
    else:
    {plain_kernel}
    time.sleep(float(sys.argv[2]))  # the CUDA context and the arrays, in the driver
    t = time.perf_counter()
    compile_cubin(k, [types.float32[::1], types.float32[::1]], block=256)
    print(json.dumps({{"compile_s": time.perf_counter() - t}}))
''').format(coop_kernel=textwrap.indent(COOP_KERNEL.strip(), "    "),
              plain_kernel=textwrap.indent(PLAIN_KERNEL.strip(), "    "))



def run_child(src: Path, kind: str, context_s: float, cache: str, first_kernel: bool = False) -> float:
    env = dict(os.environ, PYTHONPATH=str(src), CUDA_COOP_CACHE_DIR=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, "-c", CHILD, kind, str(context_s), "first" if first_kernel else "warm-up"],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["compile_s"]


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--context-s", type=float, default=0.15)
    ap.add_argument("--base-src", type=Path, help="another tree's src/ to alternate with this one")
    ap.add_argument("--first-kernel", action="store_true",
                    help="no trivial kernel first: the compile includes the compiler's set-up, as a program's "
                         "first launch does (bench_reduce.py --latency-only's case)")
    args = ap.parse_args(argv)
    trees = {"this": SRC} | ({"base": args.base_src.resolve()} if args.base_src else {})
    report = {"rounds": args.rounds, "context_s": args.context_s, "first_kernel": args.first_kernel, "trees": {},
              "meta": run_meta("no GPU: compile_cubin for sm_90", (9, 0))}
    with tempfile.TemporaryDirectory() as cache:
        for src in trees.values():  # fill the caches and write the bytecode, untimed
            run_child(src, "coop", 0.0, cache)
        samples = {(name, kind): [] for name in trees for kind in ("plain", "coop")}
        for _ in range(args.rounds):
            for name, src in trees.items():
                for kind in ("plain", "coop"):
                    samples[(name, kind)].append(run_child(src, kind, args.context_s, cache, args.first_kernel))
    for name in trees:
        plain, coop = samples[(name, "plain")], samples[(name, "coop")]
        extra = statistics.median(c - p for c, p in zip(coop, plain))
        report["trees"][name] = {"src": str(trees[name]), "plain_s": plain, "coop_s": coop,
                                 "median_plain_s": statistics.median(plain), "median_coop_s": statistics.median(coop),
                                 "median_extra_s": extra}
        print(f"{name:5s} plain {statistics.median(plain):.4f} s, cuda.coop {statistics.median(coop):.4f} s: "
              f"{extra:+.4f} s (median of the rounds' differences)")
    write_results("warm_first_compile", report)
    return report


if __name__ == "__main__":
    main()
