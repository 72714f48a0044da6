#!/usr/bin/env python3
"""Run the GPU tests in parallel shards (compiling is CPU-bound; the GPU is idle most of the time).

    python scripts/run_gpu_tests.py [-j N] [--log-dir DIR] [pytest args...]

Each shard is ``python -m pytest -m gpu`` with ``COOP_SHARD=i/N`` (see
tests/conftest.py).  Prints each shard's summary and the totals, writes the
outcome counts per test file to ``by-file.txt`` in the log folder (``$OUT`` when
set, else ``build/gpu-test-logs``, git-ignored), and exits non-zero if any shard
failed.  Without a usable GPU (as numba-cuda-mlir's ``cuda.is_available()`` sees
it, the test suite's own check) it runs nothing, prints one line saying so and
exits 1: every GPU test would only have skipped.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path


DEFAULT_LOG_DIR = "build/gpu-test-logs"  # build/ is git-ignored
NEEDS_GPU = r"(?<!not )\bgpu\b"  # a -m expression that selects gpu tests: ask for a GPU first

# What tests/conftest.py asks before it skips the gpu tests; prints why when there is no GPU.
_GPU_PROBE = """
import sys
def why(exc):
    text = " ".join(str(exc).replace("Error at driver init:", "").split()).strip(" :")
    return f"{type(exc).__name__}: {text}"
try:
    from numba_cuda_mlir import cuda
except Exception as exc:
    print(f"numba-cuda-mlir does not import ({why(exc)})"); sys.exit(3)
if not cuda.is_available():
    try:
        cuda.get_current_device()
        print("numba_cuda_mlir.cuda.is_available() is False")
    except Exception as exc:
        print(why(exc))
    sys.exit(3)
"""


def gpu_problem() -> str | None:
    """Why this Python (the one that runs the shards) sees no GPU, or None when it sees one."""
    probe = subprocess.run([sys.executable, "-c", _GPU_PROBE], capture_output=True, text=True)
    if probe.returncode == 0:
        return None
    lines = (probe.stdout.strip() or probe.stderr.strip()).splitlines()
    return lines[-1] if lines else f"the GPU probe exited with {probe.returncode}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-j", "--jobs", type=int, default=max(1, min(12, (os.cpu_count() or 2) - 2)))
    parser.add_argument("--log-dir", default=os.environ.get("OUT", DEFAULT_LOG_DIR))
    parser.add_argument("--marker", default="gpu")
    parser.add_argument("--part", default="1/1", metavar="K/M",
                        help="run part K of M (the tests split into jobs*M shards, this part runs jobs of them "
                             "at once): a suite longer than one device call, in M calls")
    args, rest = parser.parse_known_args(argv)
    match = re.fullmatch(r"(\d+)/(\d+)", args.part)
    part, parts = (int(match[1]), int(match[2])) if match else (0, 0)
    if not 1 <= part <= parts:
        parser.error(f"--part {args.part}: give K/M with 1 <= K <= M, e.g. --part 1/2 then --part 2/2")
    first = (part - 1) * args.jobs
    shards = range(first, first + args.jobs)
    if re.search(NEEDS_GPU, args.marker):
        problem = gpu_problem()
        if problem is not None:
            print(f"run_gpu_tests.py: no GPU ({problem}); nothing run", file=sys.stderr)
            return 1
    log_dir = Path(args.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    procs = []
    t0 = time.time()
    for i in shards:
        env = dict(os.environ, COOP_SHARD=f"{i}/{args.jobs * parts}")
        log = open(log_dir / f"shard-{i}.log", "w")
        cmd = [sys.executable, "-m", "pytest", "-m", args.marker, "-q", "-rfE", "-p", "no:cacheprovider",
               f"--junitxml={log_dir / f'shard-{i}.xml'}", "-o", "junit_family=xunit1", *rest]
        procs.append((i, subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT), log))
    totals = {"passed": 0, "failed": 0, "skipped": 0, "error": 0, "errors": 0, "deselected": 0}
    worst = 0
    for i, proc, log in procs:
        rc = proc.wait()
        log.close()
        text = (log_dir / f"shard-{i}.log").read_text()
        summary = [l for l in text.splitlines() if re.search(r"\d+ (passed|failed|error)", l)]
        line = summary[-1] if summary else f"(no summary, rc={rc})"
        print(f"shard {i}: rc={rc} {line}")
        for n, what in re.findall(r"(\d+) (passed|failed|skipped|errors?|deselected)", line):
            totals[what] += int(n)
        if rc not in (0, 5):
            worst = rc or 1
            for l in text.splitlines():
                if l.startswith(("FAILED", "ERROR")):
                    print("   ", l)
    # One file with every shard's failures (device runs return only a few files).
    with open(log_dir / "failures.log", "w") as merged:
        for i, _proc, _log in procs:
            text = (log_dir / f"shard-{i}.log").read_text()
            start = text.find("= FAILURES =")
            if start >= 0:
                end = text.find("short test summary info", start)
                merged.write(f"##### shard {i}\n{text[start:end if end > 0 else None]}\n")
    _write_counts_by_file(log_dir, shards)
    errors = totals["error"] + totals["errors"]
    print(f"GPU tests{'' if parts == 1 else f' (part {part} of {parts})'}: {totals['passed']} passed, "
          f"{totals['failed']} failed, {errors} errors, {totals['skipped']} skipped in {time.time() - t0:.0f} s "
          f"over {args.jobs} shards")
    return worst


def _write_counts_by_file(log_dir: Path, shards) -> None:
    """Outcome counts per test file over the shards run (evidence tables cite them)."""
    counts = collections.defaultdict(collections.Counter)
    for i in shards:
        path = log_dir / f"shard-{i}.xml"
        if not path.exists():
            continue
        for case in ElementTree.parse(path).iter("testcase"):
            filename = case.get("file", "?")  # xunit1 records each test's file
            outcome = "passed"
            for child in case:
                if child.tag in ("failure", "error"):
                    outcome = "failed"
                elif child.tag == "skipped":
                    outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
            counts[filename][outcome] += 1
        path.unlink()
    with open(log_dir / "by-file.txt", "w") as out:
        for filename in sorted(counts):
            c = counts[filename]
            out.write(f"{filename}\t{c['passed']} passed\t{c['failed']} failed\t{c['skipped']} skipped"
                      f"\t{c['xfailed']} xfailed\n")


if __name__ == "__main__":
    sys.exit(main())
