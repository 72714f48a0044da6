"""ci/build_conda.py: an unreachable channel is one line and a non-zero exit, not rattler's
"Failed to resolve dependencies" after a traceback. No test here leaves the machine: the
channels are 127.0.0.1 (a closed port, or a server of this test) and local folders."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import build_conda

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
CLOSED = "http://127.0.0.1:9/"  # the discard port: nothing listens there


def run_builder(*args, cwd=ROOT):
    return subprocess.run([sys.executable, str(ROOT / "ci" / "build_conda.py"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_unreachable_channel_is_one_line_and_exit_2(tmp_path):
    p = run_builder("--channel", CLOSED, "--output", str(tmp_path / "out"))
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    line = lines[0]
    assert line.startswith("FAIL: conda: cannot reach conda channel http://127.0.0.1:9 ("), line
    assert "--offline" in line and "Traceback" not in p.stderr and "Failed to resolve" not in p.stderr
    assert p.stdout == ""
    assert not list((tmp_path / "out").glob("**/*.conda"))


def test_one_line_per_unreachable_channel(tmp_path):
    good = tmp_path / "local"
    (good / "noarch").mkdir(parents=True)
    (good / "noarch" / "repodata.json").write_text("{}")
    p = run_builder("--channel", str(good), "--channel", CLOSED, "--channel", str(tmp_path / "missing"),
                    "--output", str(tmp_path / "out"))
    assert p.returncode == 2
    lines = p.stderr.splitlines()
    assert len(lines) == 2, p.stderr
    assert "127.0.0.1:9" in lines[0] and "missing has no noarch/repodata.json" in lines[1]


def test_channel_names_and_paths():
    assert build_conda.channel_url("conda-forge") == "https://conda.anaconda.org/conda-forge"
    assert build_conda.channel_url("https://example.org/ch/") == "https://example.org/ch"
    assert build_conda.channel_url("/srv/channel").startswith("file:///")


class _Channel(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.mark.parametrize("has_repodata", [True, False])
def test_a_served_channel_answers(tmp_path, has_repodata):
    (tmp_path / "noarch").mkdir()
    if has_repodata:
        (tmp_path / "noarch" / "repodata.json").write_text("{}")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: _Channel(*a, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        problem = build_conda.channel_problem(f"http://127.0.0.1:{server.server_port}/", timeout_s=5)
    finally:
        server.shutdown()
        server.server_close()
    if has_repodata:
        assert problem is None
    else:
        assert problem.startswith("HTTP 404 for http://127.0.0.1:")
