"""scripts/run_gpu_tests.py: without a GPU it says so and fails; with one it runs the shards."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "run_gpu_tests.py"
if not SCRIPT.is_file():
    pytest.skip("scripts/ is not in the sdist; the checkout runs these checks", allow_module_level=True)


def _env(**extra):
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
                **extra)


def _load():
    spec = importlib.util.spec_from_file_location("run_gpu_tests", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_without_a_gpu_it_runs_nothing_says_so_in_one_line_and_fails(tmp_path):
    # CUDA_VISIBLE_DEVICES="" hides every device, also on a GPU machine (cuInit: no device).
    logs = tmp_path / "logs"
    out = subprocess.run([sys.executable, str(SCRIPT), "-j", "2", "--log-dir", str(logs), "tests/test_main_report.py"],
                         capture_output=True, text=True, cwd=ROOT, env=_env(CUDA_VISIBLE_DEVICES=""), timeout=300)
    lines = (out.stdout + out.stderr).splitlines()
    assert out.returncode == 1, (out.returncode, lines)
    assert len(lines) == 1 and lines[0].startswith("run_gpu_tests.py: no GPU ("), lines
    assert lines[0].endswith("); nothing run"), lines
    assert not logs.exists(), "nothing ran, so no log folder"


def test_with_a_gpu_it_runs_the_shards_and_prints_the_totals(tmp_path, monkeypatch, capsys):
    script = _load()
    asked = []
    monkeypatch.setattr(script, "gpu_problem", lambda: asked.append(1))  # None: a GPU is there
    monkeypatch.setenv("PYTHONPATH", _env()["PYTHONPATH"])
    for name in ("PYTEST_ADDOPTS", "COOP_REQUIRE_GPU", "COOP_PYTEST_COUNTS"):  # CI's, for the outer run only
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(ROOT)
    # "unit or gpu" needs a GPU (so the probe is asked), and selects the one unit test of the file.
    rc = script.main(["-j", "2", "--marker", "unit or gpu", "--log-dir", str(tmp_path),
                      "tests/test_main_report.py", "-k", "without_numba_cuda_mlir"])
    out = capsys.readouterr().out
    assert asked == [1]
    assert rc == 0, out
    assert "GPU tests: 1 passed, 0 failed, 0 errors, 0 skipped" in out, out
    assert "over 2 shards" in out and (tmp_path / "by-file.txt").is_file()


def test_parts_split_one_run_into_disjoint_calls(tmp_path, monkeypatch, capsys):
    """--part K/M: each part runs its own jobs of the jobs*M shards; together they run every
    test once (a suite longer than one device call, in M calls)."""
    script = _load()
    monkeypatch.setattr(script, "gpu_problem", lambda: None)
    monkeypatch.setenv("PYTHONPATH", _env()["PYTHONPATH"])
    for name in ("PYTEST_ADDOPTS", "COOP_REQUIRE_GPU", "COOP_PYTEST_COUNTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(ROOT)
    passed = []
    for part in ("1/2", "2/2"):
        rc = script.main(["-j", "2", "--part", part, "--marker", "unit or gpu", "--log-dir", str(tmp_path / part[0]),
                          "tests/test_run_gpu_tests.py", "-k", "default_log_folder or needs_no_gpu"])
        out = capsys.readouterr().out
        assert rc == 0, out
        assert f"(part {part[0]} of 2)" in out, out
        passed.append(int(re.search(r"GPU tests \(part \d of 2\): (\d+) passed", out).group(1)))
    assert sum(passed) == 2, passed
    for bad in ("3/2", "0/2", "half", "1/0"):
        with pytest.raises(SystemExit):
            script.main(["--part", bad])
        err = capsys.readouterr().err
        assert f"--part {bad}: give K/M with 1 <= K <= M" in err and "--part 1/2" in err, err


def test_a_marker_that_needs_no_gpu_does_not_ask_for_one():
    script = _load()
    needs = [m for m in ("gpu", "unit or gpu", "gpu and not bench", "not gpu", "unit", "compile")
             if re.search(script.NEEDS_GPU, m)]
    assert needs == ["gpu", "unit or gpu", "gpu and not bench"]


def test_the_default_log_folder_is_git_ignored():
    if not (ROOT / ".gitignore").is_file():
        pytest.skip(".gitignore is not in the sdist; the checkout runs this check")
    script = _load()
    top = script.DEFAULT_LOG_DIR.split("/")[0]
    assert f"{top}/" in (ROOT / ".gitignore").read_text().split()
