"""The closing summary of .ci/run (and of ci/gpu_matrix.sh with --matrix-only).

Reads ci-venvs/results/stages.tsv (stage, exit code, seconds; written by .ci/run), the
stage logs ci-venvs/logs/stage-<name>.log (their PASS:/FAIL:/SKIP: lines) and the pytest
counts ci-venvs/results/pytest-cuXX.json (ci/pytest_plugins/coop_ci.py). The last line is
`total: N passed, N failed, N skipped`: checks and tests together. A stage that exited
non-zero without printing a FAIL line still counts one failure. Exit status 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS, LOGS = ROOT / "ci-venvs" / "results", ROOT / "ci-venvs" / "logs"
LINE = re.compile(r"^(PASS|FAIL|SKIP): ")


def pytest_counts() -> dict[str, dict]:
    """Per run: ``cuXX`` (the whole suite) and ``cuXX --compiler numba-cuda`` (the whole suite
    compiled by classic numba-cuda, where it is installed)."""
    out = {}
    for major in ("13", "12"):
        env = RESULTS / f"matrix-cu{major}.env"
        kv = dict(ln.split("=", 1) for ln in env.read_text().split() if "=" in ln) if env.is_file() else None
        for label, stem, prefix in ((f"cu{major}", f"pytest-cu{major}", "pytest"),
                                    (f"cu{major} --compiler numba-cuda", f"pytest-cu{major}-numba-cuda",
                                     "pytest_numba_cuda")):
            f = RESULTS / f"{stem}.json"
            if f.is_file():
                out[label] = json.loads(f.read_text())
            elif kv is not None and (prefix == "pytest" or f"{prefix}_rc" in kv):
                out[label] = {}
            if label in out and kv is not None:
                out[label]["status"] = {"install": kv.get("install"), "headers": kv.get("headers"),
                                        "pytest": kv.get(prefix), "pytest_rc": kv.get(f"{prefix}_rc")}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matrix-only", action="store_true", help="pytest counts per major only")
    ap.add_argument("--total-seconds", type=int)
    args = ap.parse_args()
    passed = failed = skipped = 0
    print("\n==================== summary ====================")
    if not args.matrix_only:
        stages = [ln.split("\t") for ln in (RESULTS / "stages.tsv").read_text().splitlines() if ln.strip()] \
            if (RESULTS / "stages.tsv").is_file() else []
        print(f"{'stage':<16}{'result':<8}{'checks pass/fail/skip':<24}time")
        for name, rc, seconds in stages:
            log = LOGS / f"stage-{name}.log"
            counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
            for ln in log.read_text(errors="replace").splitlines() if log.is_file() else []:
                m = LINE.match(ln)
                if m:
                    counts[m.group(1)] += 1
            if rc != "0" and counts["FAIL"] == 0:
                counts["FAIL"] = 1  # crashed without saying what failed
            passed, failed, skipped = passed + counts["PASS"], failed + counts["FAIL"], skipped + counts["SKIP"]
            result = "PASS" if rc == "0" else "FAIL"
            print(f"{name:<16}{result:<8}{counts['PASS']:>5} /{counts['FAIL']:>3} /{counts['SKIP']:>3}{'':<10}{seconds} s")
    for label, c in pytest_counts().items():
        status = c.get("status", {})
        if "passed" in c:
            fails = c["failed"] + c["error"]
            print(f"pytest {label}: {c['passed']} passed, {c['failed']} failed, {c['error']} errors, "
                  f"{c['skipped']} skipped (gpu tests passed: {c['gpu_passed']}; exit {status.get('pytest_rc', '?')}; "
                  f"headers {status.get('headers', '?')})")
            passed, failed, skipped = passed + c["passed"], failed + fails, skipped + c["skipped"]
        else:
            print(f"pytest {label}: no counts (install {status.get('install', '?')}, "
                  f"pytest {status.get('pytest', 'not run')})")
        if args.matrix_only and "FAIL" in status.values():
            failed += 1
    if args.total_seconds is not None:
        print(f"total wall time: {args.total_seconds} s ({args.total_seconds / 60:.1f} min)")
    print(f"total: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
