"""scripts/sanitize.py: findings land under the group that caused them, also where pytest's
progress dots and compute-sanitizer's reports share a line of the child's stdout."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "sanitize.py"
if not SCRIPT.is_file():
    pytest.skip("scripts/ is not in the sdist; the checkout runs these checks", allow_module_level=True)


def _load():
    spec = importlib.util.spec_from_file_location("sanitize_script", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_findings_after_progress_dots_count_for_their_group():
    script = _load()
    # As the H100 printed it on 2026-12-05: a report glued to the dots of the group before.
    output = "\n".join([
        "========= COMPUTE-SANITIZER",
        "", "@@sanitize group dynamic_shared", "....", "@@check dynamic_shared ok",
        "", "@@sanitize group groups",
        "..........========= Invalid __shared__ read of size 8 bytes",
        "=========     at kernel(...)+0x3960",
        "========= Invalid __shared__ read of size 8 bytes",
        "F", "@@check groups FAILED",
        "", "@@sanitize group reserve", "..", "@@check reserve ok",
        "========= ERROR SUMMARY: 2 errors",
    ])
    errors, checks = script._errors_per_group(output)
    assert errors == {"dynamic_shared": 0, "groups": 2, "reserve": 0}
    assert checks == {"dynamic_shared": "ok", "groups": "FAILED", "reserve": "ok"}


def test_every_test_file_gets_its_marker_and_check(tmp_path, capfd, monkeypatch):
    """The plugin's lines reach stdout (not pytest's capture) and start a line each."""
    script = _load()
    for name in ("PYTEST_ADDOPTS", "COOP_REQUIRE_GPU", "COOP_PYTEST_COUNTS"):  # CI's, for the outer run only
        monkeypatch.delenv(name, raising=False)
    for name, body in (("alpha", "def test_a():\n    pass\n\ndef test_b():\n    pass\n"),
                       ("beta", "def test_c():\n    assert False\n")):
        (tmp_path / f"test_{name}.py").write_text(body)
    pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--rootdir", str(tmp_path),
                 str(tmp_path / "test_alpha.py"), str(tmp_path / "test_beta.py")], plugins=[script._GroupPerFile()])
    errors, checks = script._errors_per_group(capfd.readouterr().out)
    assert errors == {"alpha": 0, "beta": 0}
    assert checks == {"alpha": "ok", "beta": "FAILED"}
