#!/usr/bin/env python3
"""Run GPU tests many times in one process, to catch intermittent results (races, uninitialised reads).

    python scripts/repeat_gpu_tests.py --count 50 tests/ops/test_exchange.py tests/ops/test_shuffle.py

Kernels are compiled once (the test kernels are cached per process); every later
round only launches and checks.  Prints one line per round that had a failure,
then the totals, and exits non-zero if any round failed.
"""

from __future__ import annotations

import argparse
import sys
import time

import pytest


class _Tally:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.failures: list = []

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            if report.passed and report.when == "call":
                self.passed += 1
            elif report.failed:
                self.failed += 1
                self.failures.append(report.nodeid)
            elif report.skipped:
                self.skipped += 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=50)
    args, rest = parser.parse_known_args(argv)
    totals = _Tally()
    bad_rounds = 0
    t0 = time.time()
    for round_ in range(1, args.count + 1):
        tally = _Tally()
        pytest.main(["-m", "gpu", "-q", "-p", "no:cacheprovider", "--no-header", "-o", "console_output_style=classic",
                     "--disable-warnings", *rest], plugins=[tally])
        totals.passed += tally.passed
        totals.failed += tally.failed
        totals.skipped += tally.skipped
        if tally.failed:
            bad_rounds += 1
            print(f"round {round_}: {tally.failed} failed: {', '.join(tally.failures)}", flush=True)
        if round_ == 1 and tally.passed == 0:
            print("round 1 ran no test: nothing to repeat", flush=True)
            return 1
    print(f"repeat: {args.count} rounds, {bad_rounds} with a failure, in {time.time() - t0:.0f} s", flush=True)
    print(f"{totals.passed} passed, {totals.failed} failed, {totals.skipped} skipped", flush=True)
    return 1 if totals.failed or not totals.passed else 0


if __name__ == "__main__":
    sys.exit(main())
