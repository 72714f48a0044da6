"""Docs tests: the explorer data (unit) and the built pages in headless Chromium (browser).

Browser tests (marker ``browser``) need Playwright (``docs/requirements.txt``) and
Debian's ``chromium`` (``apt-get install chromium``); Playwright never downloads a browser
here.  Where Playwright is not installed (the CUDA test venvs) the browser test module is
not collected at all; where it is but no chromium runs (``COOP_CHROMIUM``, else
``/usr/bin/chromium`` or ``chromium`` on ``PATH``), every browser test skips with a reason
that says what is missing and how to get it (those that need no browser still run), unless ``COOP_REQUIRE_BROWSER=1`` (CI's docs
stage), which makes that a usage error instead.  They test the HTML in ``COOP_DOCS_HTML``
(default ``docs/_build/html``), building it first when it is missing.  Screenshots go to
``test-artifacts/explorers/`` (git-ignored).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
ARTIFACTS = ROOT / "test-artifacts" / "explorers"

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def pytest_ignore_collect(collection_path, config):
    if collection_path.name == "test_explorers_browser.py":
        return importlib.util.find_spec("playwright") is None
    return None


GET_CHROMIUM = "apt-get install -y chromium (Debian), or set COOP_CHROMIUM=/path/to/chromium"


def chromium_path() -> str | None:
    """COOP_CHROMIUM when set (and only it), else /usr/bin/chromium, else chromium on PATH."""
    explicit = os.environ.get("COOP_CHROMIUM")
    candidates = [explicit] if explicit else ["/usr/bin/chromium", shutil.which("chromium")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    return None


_browser_problem: list = []  # [reason or None] once asked


def browser_problem() -> str | None:
    """Why the browser tests cannot run here (what is missing, how to get it), or None."""
    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed: python -m pip install -r docs/requirements.txt"
    explicit = os.environ.get("COOP_CHROMIUM")
    exe = chromium_path()
    if exe is None:
        where = f"COOP_CHROMIUM={explicit} is not a file" if explicit else \
            "no chromium at /usr/bin/chromium or on PATH"
        return f"{where}; the browser tests drive the system's chromium (Playwright never downloads one): {GET_CHROMIUM}"
    try:
        # Ubuntu's chromium deb is a stub that asks for the snap: it is there but does not run.
        probe = subprocess.run([exe, "--headless", "--no-sandbox", "--version"], capture_output=True,
                               text=True, timeout=60)
        ok, said = probe.returncode == 0, (probe.stdout + probe.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        ok, said = False, f"{type(exc).__name__}: {exc}"
    if not ok:
        said = " ".join(said.split())[:200] or "no output"
        return f"{exe} does not run ({exe} --version: {said}); {GET_CHROMIUM}"
    return None


def _cached_browser_problem() -> str | None:
    if not _browser_problem:
        _browser_problem.append(browser_problem())
    return _browser_problem[0]


def pytest_collection_modifyitems(config, items):
    # The tests that drive chromium (through the page or browser_context fixture); the other
    # browser tests (the built HTML, the data) run anyway.
    browser = [item for item in items if item.get_closest_marker("browser") is not None
               and "browser_context" in getattr(item, "fixturenames", ())]
    if not browser:
        return
    problem = _cached_browser_problem()
    if problem is None:
        return
    if os.environ.get("COOP_REQUIRE_BROWSER") == "1":
        raise pytest.UsageError(f"COOP_REQUIRE_BROWSER=1 but the browser tests cannot run: {problem}")
    skip = pytest.mark.skip(reason=problem)
    for item in browser:
        item.add_marker(skip)


@pytest.fixture(scope="session")
def docs_html() -> Path:
    html = Path(os.environ.get("COOP_DOCS_HTML", DOCS / "_build" / "html"))
    if not (html / "index.html").is_file():
        subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                        str(DOCS), str(html)], check=True)
    return html


@pytest.fixture(scope="session")
def browser_context():
    from playwright.sync_api import sync_playwright

    problem = _cached_browser_problem()
    if problem is not None:  # the browser tests were marked skip at collection; another user of this fixture
        pytest.skip(problem)
    exe = chromium_path()
    profile = tempfile.mkdtemp(prefix="coop-chromium-profile-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=exe, headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 1000}, device_scale_factor=1)
        network = []

        def block(route):
            url = route.request.url
            if url.startswith(("file:", "data:", "about:")):
                route.continue_()
            else:
                network.append(url)
                route.abort()

        context.route("**/*", block)
        context.coop_network = network
        yield context
        context.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser_context):
    page = browser_context.new_page()
    page.set_default_timeout(8000)
    errors = []
    page.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.coop_errors = errors
    yield page
    page.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
