"""Docs tests: the explorer data (unit) and the built pages in headless Chromium (browser).

Browser tests (marker ``browser``) need Playwright (``docs/requirements.txt``) and
Debian's ``chromium`` (``apt-get install chromium``); Playwright never downloads a browser
here.  Where Playwright is not installed (the CUDA test venvs) the browser test module is
not collected at all.  They test the HTML in ``COOP_DOCS_HTML`` (default
``docs/_build/html``), building it first when it is missing.  Screenshots go to
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


def chromium_path() -> str | None:
    for candidate in (os.environ.get("COOP_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


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

    exe = chromium_path()
    if exe is None:
        pytest.fail("no chromium: apt-get install -y chromium (or set COOP_CHROMIUM)")
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
