"""Where a cold first cooperative launch spends its time, in fresh processes (needs a GPU).

    python benchmarks/first_launch_timeline.py [--rounds 4] [--shape reduce load_store]
                                               [--base-src DIR]

Each process has an empty provider cache and runs the latency script of
``bench_reduce.py`` (the cooperative kernel is the process's first) or
``bench_load_store.py`` (a trivial kernel first), as their ``--latency-only`` runs do,
with cuda.coop's log timed.  Reported per process, in seconds from the first launch's
start: when NVRTC's precompiled header started building (negative: before the launch)
and what started it, when it was ready, when the compiler reached cuda-coop's NVRTC
compile, how long that compile waited for the header and how long it took, what came
after it (numba-cuda-mlir's lowering, the link, loading the module) and the whole first
launch; then medians per shape.  With ``--base-src``, every round also runs each shape
with another tree's ``src/`` first on ``PYTHONPATH``, the trees alternated, so that two
trees are compared on one noisy host.  Writes ``first_launch_timeline.json`` (to
``$OUT`` when set).

The processes import from bytecode, written by an untimed process per tree first
(``common.timed_subprocess``): the device image sets ``PYTHONDONTWRITEBYTECODE``, and
with the compiler's modules compiled from source in every process a first compile's
set-up took 1.1-1.6 s instead of 0.5 s (the eleventh H100 check, docs/spot_checks.rst).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_load_store  # noqa: E402
import bench_reduce  # noqa: E402
from common import around_first_launch, timed_subprocess  # noqa: E402

SHAPES = {"reduce": bench_reduce, "load_store": bench_load_store}

# Before the script: cuda.coop's log, each record with its time since the process started.
LOG_CAPTURE = '''
import logging as _logging, time as _time
_T0 = _time.perf_counter()
_LOG = []


class _Timed(_logging.Handler):
    def emit(self, record):
        _LOG.append([_time.perf_counter() - _T0, record.threadName, record.getMessage()])


_coop_log = _logging.getLogger("cuda.coop")
_coop_log.setLevel(_logging.DEBUG)
_coop_log.addHandler(_Timed())
_coop_log.propagate = False
'''

# After the script's own JSON line: the log and the background build, one more JSON line.
REPORT = '''
from cuda.coop.core.pch import pch as _pch
_build = _pch.background
print(json.dumps({"launch_at": _launch_at, "first_launch_s": first, "log": _LOG, "coop_file": coop.__file__,
                  "build": _build and {"reason": _build.reason, "seconds": _build.seconds,
                                       "ok": _build.ok, "used": _build.used}}))
'''


def script(shape: str) -> str:
    """The latency script of ``shape`` with the log timed and the launch's start noted."""
    module = SHAPES[shape]
    code = module.LATENCY_CODE.format(coop_import="from cuda import coop", kernel=module.COOP_KERNEL)
    code = around_first_launch(code, "_launch_at = _time.perf_counter() - _T0", "")
    return LOG_CAPTURE + code + REPORT


_STARTED = re.compile(r"building NVRTC's precompiled header for \S+ in the background \((.+)\)$")
_BUILT = re.compile(r"NVRTC precompiled header for \S+ built in the background in ([0-9.]+) s")
_COMPILED = re.compile(r"NVRTC compiled \d+ providers for \S+ in ([0-9.]+) s \((with|without) PCH\)")


def timeline(result: dict) -> dict:
    """One process's times, in seconds from its first launch's start, from its log."""
    launch = result["launch_at"]
    out = {"first_launch": result["first_launch_s"], "build_reason": None, "build_start": None,
           "build_ready": None, "compile_reached": None, "compile_end": None, "with_pch": None}
    for at, _thread, message in result["log"]:
        at -= launch
        if (m := _STARTED.search(message)) and out["build_start"] is None:
            out["build_start"], out["build_reason"] = at, m.group(1)
        elif _BUILT.search(message) and out["build_ready"] is None:
            out["build_ready"] = at
        elif message.startswith("provider cache miss") and out["compile_reached"] is None:
            out["compile_reached"] = at
        elif (m := _COMPILED.search(message)) and out["compile_end"] is None:
            out["compile_end"], out["with_pch"] = at, m.group(2) == "with"
    if out["compile_reached"] is None or out["compile_end"] is None:
        raise ValueError("the process compiled nothing with NVRTC: was its provider cache empty?")
    # The logged NVRTC time includes the wait for a header still being built.
    ready = out["build_ready"] if out["with_pch"] and out["build_ready"] is not None else out["compile_reached"]
    begun = max(out["compile_reached"], ready)
    out["waited"] = begun - out["compile_reached"]
    out["compile"] = out["compile_end"] - begun
    out["after_compile"] = out["first_launch"] - out["compile_end"]
    if out["build_start"] is not None and out["build_ready"] is not None:
        out["build"] = out["build_ready"] - out["build_start"]
    return out


COLUMNS = ("build_start", "build", "compile_reached", "waited", "compile", "after_compile", "first_launch")


def _run(shape: str, src) -> dict:
    env = {"CUDA_COOP_CACHE_DIR": tempfile.mkdtemp(prefix="coop-timeline-cache-")}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])
    result = timed_subprocess(script(shape), env)
    if src is not None and not Path(result["coop_file"]).resolve().is_relative_to(src.resolve()):
        # Another cuda.coop first on the path would compare a tree with itself.
        raise RuntimeError(f"--base-src {src}: the process imported cuda.coop from {result['coop_file']}")
    return timeline(result)


def _arguments(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--shape", nargs="+", choices=sorted(SHAPES), default=sorted(SHAPES))
    parser.add_argument("--base-src", type=Path, help="another tree's src/, alternated with this one")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: give 1 or more fresh processes per shape and tree")
    if args.base_src is not None and not (args.base_src / "cuda" / "coop" / "__init__.py").is_file():
        parser.error(f"--base-src {args.base_src}: no cuda/coop/__init__.py there; give the src/ folder of a "
                     "cuda-coop tree (e.g. one made with `git archive <commit> src | tar x -C DIR`: DIR/src)")
    return args


def main(argv=None) -> None:
    args = _arguments(argv)
    trees = {"this tree": None, **({f"base ({args.base_src})": args.base_src} if args.base_src else {})}
    for src in trees.values():  # untimed: writes the bytecode of cuda.coop and the compiler
        _run(args.shape[0], src)
    samples = {(tree, shape): [] for tree in trees for shape in args.shape}
    for _ in range(args.rounds):
        for shape in args.shape:
            for tree, src in trees.items():
                samples[tree, shape].append(_run(shape, src))
    print("seconds from the first launch's start, medians of", args.rounds, "fresh processes each")
    print(f"{'':<34}" + "".join(f"{c:>16}" for c in COLUMNS))
    report = {"rounds": args.rounds, "median": {}, "samples": {}}
    for (tree, shape), runs in samples.items():
        name = f"{shape}, {tree}"
        median = {c: statistics.median(r[c] for r in runs if r.get(c) is not None)
                  for c in COLUMNS if any(r.get(c) is not None for r in runs)}
        report["median"][name], report["samples"][name] = median, runs
        print(f"{name:<34}" + "".join(f"{median[c]:>16.3f}" if c in median else f"{'-':>16}" for c in COLUMNS))
        reasons = sorted({r["build_reason"] or "not started" for r in runs})
        print(f"{'':<34}build started by: {'; '.join(reasons)}")
    path = Path(os.environ.get("OUT", ".")) / "first_launch_timeline.json"
    path.write_text(json.dumps(report, indent=1))
    print(f"results written to {path}")


if __name__ == "__main__":
    main()
