#!/usr/bin/env python3
"""compute-sanitizer over representative kernels of every family: a per-tool, per-family table.

    python scripts/sanitize.py [--tools memcheck,racecheck,synccheck,initcheck] [--families ...]

pytest under the sanitizer is far too slow, so this runs the GPU tests' own
kernel drivers (each checks its results against NumPy) directly: first once
without the sanitizer (compiles every kernel and fills the provider cache), then
once per tool in a child process under ``compute-sanitizer --tool <tool>``.  The
child prints a marker line before each family and synchronizes after it, so
every sanitizer report lands under the family that caused it.  Every algorithm,
block and logical-warp groups and partial tiles are covered by the drivers'
case lists.  Exit status 1 if any tool reported an error or a check failed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "@@sanitize family "
TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")


def _families():
    """family -> list of zero-argument callables (the GPU tests' drivers, small sizes)."""
    from tests.ops import (
        test_exchange, test_histogram, test_load_store, test_merge_sort, test_neighbors, test_radix,
        test_reduce, test_run_length, test_scan, test_shuffle, test_topk,
    )

    return {
        "load_store": [lambda: test_load_store.run_load_store(k, "int32", 3) for k in ("block", "warp", "logical")]
        + [lambda: test_load_store.run_load_store("block", "uint8", 16, block=(16, 6, 1))],
        "reduce": [lambda: test_reduce.run_reduce("int32", 3), lambda: test_reduce.run_batched("float32", 5)],
        "scan": [lambda: test_scan.run_scan("int32", 3),
                 lambda: test_scan.run_scan("float64", 1, block=(10, 5, 1),
                                            cases=[c for c in test_scan.scan_cases("float64")
                                                   if c.group == "block"])],
        # Permutation ranks only: colliding scatter ranks race by design (see make_ranks).
        "exchange": [lambda: test_exchange.run_exchange("block", "int32", 4, colliding_ranks=False),
                     lambda: test_exchange.run_exchange("warp", "int8", 3, colliding_ranks=False),
                     lambda: test_exchange.run_exchange("block", "float32", 3, block=(10, 5, 1), warp_multiple=False,
                                                        colliding_ranks=False)],
        "shuffle": [lambda: test_shuffle.run_shuffle("int32", 3)],
        "merge_sort": [lambda: test_merge_sort.run_merge_sort("int32", 3)],
        "radix": [lambda: test_radix.run_radix("uint32", 4)],
        "topk": [lambda: test_topk.run_topk("float32", 4)],
        "histogram": [lambda: test_histogram.run_histogram("uint8", 4)],
        "neighbors": [lambda: test_neighbors.run_neighbors("int32", 3)],
        "run_length": [lambda: test_run_length.run_rld("int32", "int32", 3, 4, "int32")],
    }


def run_families(names) -> int:
    """Child mode: run each family's drivers, a marker line before each."""
    from numba_cuda_mlir import cuda

    failed = 0
    table = _families()
    for name in names:
        print(f"{MARK}{name}", flush=True)
        try:
            for driver in table[name]:
                driver()
            cuda.synchronize()
            print(f"@@check {name} ok", flush=True)
        except Exception as exc:  # a wrong result or a launch failure: counted, reported
            failed += 1
            print(f"@@check {name} FAILED: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
    return 1 if failed else 0


def _errors_per_family(output: str) -> tuple[dict, dict]:
    errors, checks, family = {}, {}, None
    for line in output.splitlines():
        if line.startswith(MARK):
            family = line[len(MARK):].strip()
            errors.setdefault(family, 0)
        elif line.startswith("@@check "):
            parts = line.split()
            checks[parts[1]] = parts[2]
        elif family is not None and re.match(r"=+ (Error|Warning|Invalid|Uninitialized|Barrier|Program hit)\b", line) \
                and "SUMMARY" not in line:
            errors[family] += 1
    return errors, checks


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--families", default="")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--log-dir", default=os.environ.get("OUT", "sanitize-logs"))
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    names = [n for n in args.families.split(",") if n] or list(_families())
    if args.child:
        return run_families(names)
    sanitizer = shutil.which("compute-sanitizer") or next(
        (str(p) for p in Path("/usr/local").glob("cuda*/bin/compute-sanitizer")), None)
    if sanitizer is None:
        print("compute-sanitizer not found (PATH, /usr/local/cuda*/bin)")
        return 1
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    child = [sys.executable, str(Path(__file__).resolve()), "--child", "--families", ",".join(names)]
    t0 = time.time()
    warm = subprocess.run(child, env=env, capture_output=True, text=True, cwd=ROOT)
    _, checks = _errors_per_family(warm.stdout)
    print(f"warm-up (no sanitizer): {time.time() - t0:.0f} s, checks: "
          + ", ".join(f"{k}={v}" for k, v in checks.items()), flush=True)
    if warm.returncode:
        print(warm.stdout[-3000:], warm.stderr[-3000:])
    log_dir = Path(args.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    results, bad = {}, warm.returncode != 0
    for tool in args.tools.split(","):
        t0 = time.time()
        cmd = [sanitizer, "--tool", tool, "--print-limit", "100000", "--nvtx", "no", *child]
        if tool == "racecheck":
            cmd[3:3] = ["--racecheck-report", "all"]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
        (log_dir / f"sanitize-{tool}.log").write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
        errors, checks = _errors_per_family(proc.stdout)
        # racecheck ends with "RACECHECK SUMMARY: N hazards displayed (...)", the others with "ERROR SUMMARY".
        summary = re.findall(r"(?:ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: (\d+) hazard)", proc.stdout)
        summary = ["".join(pair) for pair in summary]
        results[tool] = (errors, checks, summary[-1] if summary else "?", time.time() - t0)
        bad |= any(errors.values()) or (summary and summary[-1] != "0") or proc.returncode != 0
        print(f"{tool}: ERROR SUMMARY {results[tool][2]}, rc={proc.returncode}, {results[tool][3]:.0f} s", flush=True)
    print()
    print(f"{'family':<12}" + "".join(f"{t:>12}" for t in results))
    for name in names:
        cells = []
        for tool, (errors, checks, _s, _t) in results.items():
            cell = str(errors.get(name, "-"))
            if checks.get(name) not in (None, "ok"):
                cell += "!"  # its NumPy check failed under this tool
            cells.append(f"{cell:>12}")
        print(f"{name:<12}" + "".join(cells))
    print("(findings per family; '!' = the family's NumPy check failed under that tool)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
