"""Run the device benchmarks one after another: the entry point of `pixi run bench`.

    python benchmarks/run_all.py                    # every benchmarks/bench_*.py
    python benchmarks/run_all.py reduce scan        # some of them (bench_reduce.py, bench_scan.py)
    python benchmarks/run_all.py launch_overhead    # host cost per launch (launch_overhead.py)
    python benchmarks/run_all.py --latency          # also compile_latency.py (host only)
    python benchmarks/run_all.py --allow-no-nvcc    # without the CUDA C++ baselines
    python benchmarks/run_all.py --skip-compile-latency  # no fresh-process compile timings (faster)

Each family benchmark prints two tables and records both in its JSON: batched (CUDA events
around 10 back-to-back launches: the kernel's device time, ``coop_ms``/``cub_ms``) and per
launch (events around ONE launch, synchronized, median of 20: what a user timing a single
launch sees, host launch cost included, ``per_launch_ms``), for the cuda.coop kernel and
its C++ baselines alike (benchmarks/common.py: ``time_kernel``, ``time_single_launch``).

Each benchmark runs in its own process (``python benchmarks/bench_<name>.py`` with its
default sizes) and writes ``bench_<name>.json`` to ``--out`` (default ``$OUT``, else
``bench-results/``), with the run's device, toolkit, commit and date in its ``meta``
(``COOP_BENCH_COMMIT`` names the commit where the tree has no ``.git``). The benchmarks
need a CUDA device; without one this script stops before running any. They also compare
with CUB built by nvcc: a benchmark run without nvcc silently drops that baseline, so nvcc
is required unless ``--allow-no-nvcc``.
Prints one PASS/FAIL line per benchmark; exit status 1 when any failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import nvcc_path  # noqa: E402


def available() -> dict[str, Path]:
    found = {p.stem.removeprefix("bench_"): p for p in sorted(HERE.glob("bench_*.py"))}
    found["launch_overhead"] = HERE / "launch_overhead.py"  # host cost per launch, no C++ side
    found["check_cost"] = HERE / "check_cost.py"  # the run-time checks' device cost, no C++ side
    return found


def device_check() -> str | None:
    """None when a CUDA device is usable, else why not."""
    try:
        from numba_cuda_mlir import cuda

        return None if cuda.is_available() else "numba_cuda_mlir.cuda.is_available() is False"
    except Exception as exc:  # no numba-cuda-mlir, no driver
        return f"{type(exc).__name__}: {exc}"


def main(argv=None) -> int:
    benches = available()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help=f"benchmarks to run (default: all of {', '.join(benches)})")
    ap.add_argument("--latency", action="store_true", help="also run compile_latency.py (no GPU needed)")
    ap.add_argument("--allow-no-nvcc", action="store_true", help="run without the nvcc-built CUB baselines")
    ap.add_argument("--skip-compile-latency", action="store_true",
                    help="skip the fresh-process compile-latency figures inside bench_load_store/scan/reduce")
    ap.add_argument("--out", default=os.environ.get("OUT") or "bench-results", help="folder for the JSON results")
    args = ap.parse_args(argv)

    unknown = [n for n in args.names if n.removeprefix("bench_").removesuffix(".py") not in benches]
    if unknown:
        ap.error(f"unknown benchmark(s) {unknown}; known: {', '.join(benches)}")
    chosen = [benches[n.removeprefix("bench_").removesuffix(".py")] for n in args.names] or list(benches.values())

    nvcc = nvcc_path()
    if nvcc is None and not args.allow_no_nvcc:
        print("FAIL: bench: nvcc not found (PATH, /usr/local/cuda/bin): the CUB baselines need it "
              "(pixi: the bench environments bring cuda-nvcc; or pass --allow-no-nvcc)")
        return 1
    print(f"nvcc: {nvcc or 'none (CUB baselines skipped)'}")
    why = device_check()
    if why is not None:
        print(f"FAIL: bench: no CUDA device ({why}); the benchmarks run kernels")
        return 1

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OUT": str(out), "PYTHONUNBUFFERED": "1"}
    if args.skip_compile_latency:
        env["COOP_BENCH_SKIP_LATENCY"] = "1"
    scripts = chosen + ([HERE / "compile_latency.py"] if args.latency else [])
    failed = 0
    for script in scripts:
        cmd = [sys.executable, str(script)]
        if script.name == "compile_latency.py":
            cmd += ["--json", str(out / "compile_latency.json")]
        print(f"\n=== {script.name} ===", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, env=env).returncode
        dt = time.perf_counter() - t0
        failed += rc != 0
        print(f"{'PASS' if rc == 0 else 'FAIL'}: bench: {script.name} (rc={rc}, {dt:.1f} s)", flush=True)
    print(f"\nbench: {len(scripts) - failed} passed, {failed} failed; results in {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
