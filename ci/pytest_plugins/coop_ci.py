"""pytest plugin for cuda-coop's CI runs, loaded through PYTEST_ADDOPTS="-p coop_ci".

It leaves the test command itself (`python -m pytest`) untouched and adds:
- COOP_REQUIRE_GPU=1: a `gpu` test that skips is a failure, and a session in which no
  `gpu` test passed fails, so a GPU run can never be green by skipping;
- COOP_PYTEST_COUNTS=<file>: the outcome counts as JSON, for the CI summary.
"""

from __future__ import annotations

import json
import os

import pytest

REQUIRE_GPU = os.environ.get("COOP_REQUIRE_GPU", "") == "1"
_gpu_passed = 0


def pytest_report_header(config):
    # The toolchain line itself comes from tests/conftest.py (cuda-coop toolchain: ...).
    return [f"cuda-coop CI: COOP_REQUIRE_GPU={int(REQUIRE_GPU)}"]


def _other_compilers_test(item) -> bool:
    try:
        from tests import compiler
    except ImportError:
        return False
    return any(mark.args[0] != compiler.NAME for mark in item.iter_markers("only_on"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    global _gpu_passed
    outcome = yield
    report = outcome.get_result()
    if item.get_closest_marker("gpu") is None:
        return
    if report.when == "call" and report.passed:
        _gpu_passed += 1
    # An expected failure reports as skipped (with wasxfail), and a test of another compiler
    # (only_on, tests/compiler.py) skips by design: neither is a missing GPU.
    if REQUIRE_GPU and report.skipped and not hasattr(report, "wasxfail") and not _other_compilers_test(item):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"COOP_REQUIRE_GPU=1 but this gpu test skipped: {reason}"


def pytest_sessionfinish(session, exitstatus):
    if REQUIRE_GPU and _gpu_passed == 0 and exitstatus in (0, 5):
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if REQUIRE_GPU and _gpu_passed == 0:
        terminalreporter.write_line("COOP_REQUIRE_GPU=1: no gpu test passed in this session", red=True)
    path = os.environ.get("COOP_PYTEST_COUNTS")
    if not path:
        return
    stats = terminalreporter.stats
    counts = {k: len(stats.get(k, [])) for k in ("passed", "failed", "error", "skipped", "xfailed", "xpassed")}
    counts["gpu_passed"] = _gpu_passed
    with open(path, "w") as f:
        json.dump(counts, f)
