#!/usr/bin/env python3
"""compute-sanitizer over cuda-coop's kernels: a per-tool, per-group table, per compiler.

    python scripts/sanitize.py [--compiler numba-cuda-mlir|numba-cuda|both]
                               [--tools memcheck,racecheck,synccheck,initcheck] [--groups ...]

pytest under the sanitizer is too slow for the whole suite, so this runs three kinds of
group, each checking its results against NumPy:

- the 11 families (numba-cuda-mlir): the GPU tests' own kernel drivers, over every
  algorithm, block and logical-warp groups and partial tiles.  They pass oversized,
  negative and empty run-time controls on purpose, so they run with the checks off
  (``CUDA_COOP_CHECKED=0``, the clamp contract);
- ``checked``: the run-time checks compiled in (the default) and passed, for every
  family that has a run-time argument (tests/ops/checked_kernels.py with its valid value);
- the features added since the families were first sanitized, on each compiler: dynamic
  scratch above 48 KiB, ``TempStorage.reserve()`` and byte indexing, clusters, complex and
  half payloads, partial warp mappings and incomplete groups of warps, payload inference
  (aliases, the ``None`` that ``coop.load`` returns), exclusive storage reused in a loop,
  NumPy integer arguments and NVIDIA's enums: their GPU test files, run by pytest in the
  sanitized process, one group per file.

Every child runs once without the sanitizer first (compiles each kernel, fills the provider
cache), then once per tool under ``compute-sanitizer --tool <tool>``; the children of all
tools run at once (one GPU, many cores).  A child prints a marker line before each group
and its check result after it, so every report lands under the group that caused it.
Exit status 1 if any tool reported a finding or a check failed.  Logs go to ``--log-dir``
(``$OUT`` on the device machine).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "@@sanitize group "
TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
COMPILERS = ("numba-cuda-mlir", "numba-cuda")

# The GPU test files of the features, run for each compiler their tests are parametrized by.
FEATURES = ("dynamic_shared", "reserve", "cluster_reduce", "complex_payloads", "half_precision", "groups",
            "payload_inference", "storage_ordering", "numpy_integer_arguments", "qualified_namespace",
            "backends_gpu", "local_and_scalar_payloads")


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


def _checked_cases():
    """The run-time checks compiled in and passed: each case of checked_kernels with its valid value."""
    from tests.ops import checked_kernels as ck
    from tests.ops.test_checked_mode import CASES

    return [lambda case=case: ck.launch(case, CASES[case][0]) for case in CASES]


def run_groups(names) -> int:
    """Child mode: run each group's drivers, a marker line before each."""
    from numba_cuda_mlir import cuda

    failed = 0
    for name in names:
        print(f"{MARK}{name}", flush=True)
        try:
            if name == "checked":
                os.environ.pop("CUDA_COOP_CHECKED", None)  # the default: checks compiled in
                drivers = _checked_cases()
            else:
                os.environ["CUDA_COOP_CHECKED"] = "0"  # the drivers' out-of-range controls clamp
                drivers = _families()[name]
            for driver in drivers:
                driver()
            cuda.synchronize()
            print(f"@@check {name} ok", flush=True)
        except Exception as exc:  # a wrong result or a launch failure: counted, reported
            failed += 1
            print(f"@@check {name} FAILED: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
    return 1 if failed else 0


class _GroupPerFile:
    """pytest plugin: a marker line before each test file's first test, its check after the last."""

    def __init__(self):
        self.current, self.failed = None, set()

    def _close(self):
        if self.current is not None:
            state = "FAILED" if self.current in self.failed else "ok"
            print(f"\n@@check {self.current} {state}", flush=True)  # after pytest's progress dots

    # logstart, not setup: pytest captures what a setup hook prints (shown only on failure),
    # which once left most groups without their marker line.
    def pytest_runtest_logstart(self, nodeid, location):
        group = Path(location[0]).stem.removeprefix("test_")
        if group != self.current:
            self._close()
            self.current = group
            print(f"\n{MARK}{group}", flush=True)

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.failed.add(self.current)

    def pytest_sessionfinish(self):
        self._close()


def run_features(compiler: str, names) -> int:
    """Child mode: the features' GPU tests on ``compiler`` (one group per test file)."""
    import pytest

    files = [str(ROOT / "tests" / "ops" / f"test_{name}.py") for name in names]
    # Tests not parametrized by compiler (their ids do not name one) run on numba-cuda-mlir.
    select = ("not numba-cuda or numba-cuda-mlir" if compiler == "numba-cuda-mlir"
              else "numba-cuda and not numba-cuda-mlir")
    args = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-m", "gpu", "-k", select,
            "--rootdir", str(ROOT), *files]
    return 1 if pytest.main(args, plugins=[_GroupPerFile()]) not in (0, 5) else 0


# compute-sanitizer's report lines; in the features' children they may follow pytest's progress
# dots on the same line (both write to stdout), so they are searched for, not matched at the start.
_FINDING = re.compile(r"=+ (Error|Warning|Invalid|Uninitialized|Barrier|Program hit)\b")


def _errors_per_group(output: str) -> tuple[dict, dict]:
    """Findings per group and each group's check result, from a child's interleaved stdout."""
    errors, checks, group = {}, {}, None
    for line in output.splitlines():
        if MARK in line:
            group = line.split(MARK, 1)[1].strip()
            errors.setdefault(group, 0)
        elif "@@check " in line:
            parts = line.split("@@check ", 1)[1].split()
            checks[parts[0]] = parts[1]
        elif group is not None and _FINDING.search(line) and "SUMMARY" not in line:
            errors[group] += 1
    return errors, checks


def _children(compiler: str, groups) -> dict:
    """label -> the child command lines this compiler runs."""
    me = [sys.executable, str(Path(__file__).resolve()), "--child"]
    families = [g for g in groups if g in _FAMILY_NAMES or g == "checked"]
    features = [g for g in groups if g in FEATURES]
    children = {}
    if compiler == "numba-cuda-mlir" and families:
        children["families"] = me + ["groups", "--groups", ",".join(families)]
    if features:
        children["features"] = me + ["features", "--compiler", compiler, "--groups", ",".join(features)]
    return children


_FAMILY_NAMES = ("load_store", "reduce", "scan", "exchange", "shuffle", "merge_sort", "radix", "topk",
                 "histogram", "neighbors", "run_length")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compiler", default="both", choices=(*COMPILERS, "both"))
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--groups", default="", help="families, 'checked' and feature files (default: all)")
    parser.add_argument("--child", choices=("groups", "features"), help=argparse.SUPPRESS)
    parser.add_argument("--log-dir", default=os.environ.get("OUT", "sanitize-logs"))
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    names = [n for n in args.groups.split(",") if n] or [*_FAMILY_NAMES, "checked", *FEATURES]
    if args.child == "groups":
        return run_groups(names)
    if args.child == "features":
        return run_features(args.compiler, names)
    sanitizer = shutil.which("compute-sanitizer") or next(
        (str(p) for p in Path("/usr/local").glob("cuda*/bin/compute-sanitizer")), None)
    if sanitizer is None:
        print("compute-sanitizer not found (PATH, /usr/local/cuda*/bin)")
        return 1
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    compilers = COMPILERS if args.compiler == "both" else (args.compiler,)
    children = {(c, label): cmd for c in compilers for label, cmd in _children(c, names).items()}
    log_dir = Path(args.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)

    def run(key, tool):
        cmd = children[key]
        if tool is not None:
            cmd = [sanitizer, "--tool", tool, "--print-limit", "100000", "--nvtx", "no",
                   *(["--racecheck-report", "all"] if tool == "racecheck" else []), *cmd]
        t0 = time.time()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
        name = f"sanitize-{key[0]}-{key[1]}-{tool or 'warm'}.log"
        (log_dir / name).write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
        return key, tool, proc, time.time() - t0

    bad = False
    with ThreadPoolExecutor(max_workers=len(children)) as pool:  # warm-up: compile every kernel once
        for key, _tool, proc, seconds in pool.map(lambda k: run(k, None), children):
            _, checks = _errors_per_group(proc.stdout)
            bad |= proc.returncode != 0
            print(f"warm-up {key[0]} {key[1]} (no sanitizer): {seconds:.0f} s, rc={proc.returncode}, checks: "
                  + ", ".join(f"{k}={v}" for k, v in checks.items()), flush=True)
    tools = args.tools.split(",")
    results = {}
    with ThreadPoolExecutor(max_workers=len(children) * len(tools)) as pool:
        jobs = [pool.submit(run, key, tool) for key in children for tool in tools]
        for job in jobs:
            key, tool, proc, seconds = job.result()
            errors, checks = _errors_per_group(proc.stdout)
            # racecheck ends with "RACECHECK SUMMARY: N hazards displayed (...)", the others with "ERROR SUMMARY".
            summary = ["".join(pair) for pair in
                       re.findall(r"(?:ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: (\d+) hazard)", proc.stdout)]
            results[(key, tool)] = (errors, checks)
            bad |= any(errors.values()) or (summary and summary[-1] != "0") or proc.returncode != 0
            print(f"{key[0]} {key[1]} {tool}: SUMMARY {summary[-1] if summary else '?'}, rc={proc.returncode}, "
                  f"{seconds:.0f} s", flush=True)
    for compiler in compilers:
        print(f"\n{compiler}")
        print(f"{'group':<26}" + "".join(f"{t:>11}" for t in tools))
        for key in (k for k in children if k[0] == compiler):
            rows = {}
            for tool in tools:
                errors, checks = results[(key, tool)]
                for group, count in errors.items():
                    cell = str(count) + ("" if checks.get(group) == "ok" else "!")
                    rows.setdefault(group, {})[tool] = cell
            for group, cells in rows.items():
                print(f"{group:<26}" + "".join(f"{cells.get(t, '-'):>11}" for t in tools))
    print("(findings per group; '!' = the group's NumPy check failed, or did not finish, under that tool)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
