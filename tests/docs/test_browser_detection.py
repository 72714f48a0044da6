"""Where the browser tests cannot run (no Playwright, no chromium, a chromium that does not
start), they skip with a reason naming what is missing and how to get it, never error."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from . import conftest
from .conftest import ROOT, browser_problem

pytestmark = pytest.mark.unit

_real_find_spec = importlib.util.find_spec


@pytest.fixture
def with_playwright(monkeypatch):
    """browser_problem() as where docs/requirements.txt is installed (Playwright importable)."""
    monkeypatch.setattr(conftest.importlib.util, "find_spec",
                        lambda name, *a: object() if name == "playwright" else _real_find_spec(name, *a))


def _fake_chromium(tmp_path, body):
    exe = tmp_path / "chromium"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(0o755)
    return exe


def test_without_playwright_the_reason_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(conftest.importlib.util, "find_spec",
                        lambda name, *a: None if name == "playwright" else _real_find_spec(name, *a))
    assert browser_problem() == "Playwright is not installed: python -m pip install -r docs/requirements.txt"


def test_without_chromium_the_reason_names_it_and_how_to_get_it(with_playwright, monkeypatch, tmp_path):
    monkeypatch.setenv("COOP_CHROMIUM", str(tmp_path / "no-such-chromium"))
    reason = browser_problem()
    assert f"COOP_CHROMIUM={tmp_path / 'no-such-chromium'} is not a file" in reason
    assert "apt-get install -y chromium" in reason and "Playwright never downloads one" in reason


def test_a_chromium_that_does_not_start_is_reported_with_what_it_said(with_playwright, monkeypatch, tmp_path):
    # Ubuntu's chromium deb: a stub that asks for the snap.
    stub = _fake_chromium(tmp_path, 'echo "Command \'$0\' requires the chromium snap to be installed." >&2; exit 1')
    monkeypatch.setenv("COOP_CHROMIUM", str(stub))
    reason = browser_problem()
    assert reason.startswith(f"{stub} does not run ({stub} --version: Command"), reason
    assert "requires the chromium snap" in reason and "apt-get install -y chromium" in reason


def test_a_working_chromium_is_no_problem(with_playwright, monkeypatch, tmp_path):
    monkeypatch.setenv("COOP_CHROMIUM", str(_fake_chromium(tmp_path, 'echo "Chromium 150.0.7871.100"')))
    assert browser_problem() is None


def test_the_browser_tests_skip_without_chromium_and_fail_if_it_is_required(tmp_path):
    # What `pip install -r docs/requirements.txt` into the test environment leads to where chromium is missing.
    pytest.importorskip("playwright", reason="the browser test module is collected only where Playwright is installed")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "COOP_REQUIRE_BROWSER", "COOP_PYTEST_COUNTS")}
    env.update(COOP_CHROMIUM=str(tmp_path / "no-such-chromium"), COOP_DOCS_HTML=str(tmp_path / "no-html"),
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    # The tests that need no browser (the page without JavaScript) still run; they would build the docs first.
    cmd = [sys.executable, "-m", "pytest", "tests/docs/test_explorers_browser.py", "-k", "not without_javascript",
           "-q", "-rs", "-p", "no:cacheprovider"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    last = out.stdout.strip().splitlines()[-1]
    assert out.returncode == 0, out.stdout[-3000:]
    assert re.fullmatch(r"\d+ skipped, \d+ deselected in .*", last), last
    assert "is not a file; the browser tests drive the system's chromium" in out.stdout
    assert not (tmp_path / "no-html").exists(), "skipped tests must not build the docs"

    env["COOP_REQUIRE_BROWSER"] = "1"
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert out.returncode == 4, out.stdout[-3000:]  # pytest's usage error
    assert "COOP_REQUIRE_BROWSER=1 but the browser tests cannot run" in out.stdout + out.stderr
