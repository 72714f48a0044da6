"""Shared helpers for the ci/ scripts: the pin table and PASS/FAIL/SKIP reporting.

Standard library only, so that every venv (and the device image) can import it.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PINS_FILE = ROOT / "ci" / "pins.toml"
MAJORS = (12, 13)


def load_pins(path: Path = PINS_FILE) -> dict[int, dict]:
    """The pin table as {cuda_major: row}; rows are checked for the keys every script reads."""
    table = tomllib.loads(Path(path).read_text())
    required = ("cuda_major", "cuda_version", "ctk_cccl", "cccl", "numba_cuda_mlir",
                "cuda_bindings", "pypi_cccl", "pypi_nvrtc", "pypi_nvjitlink")
    rows = {}
    for key, row in table.items():
        missing = [k for k in required if k not in row]
        if missing:
            raise SystemExit(f"{path}: [{key}] lacks {', '.join(missing)}")
        if key != f"cu{row['cuda_major']}":
            raise SystemExit(f"{path}: [{key}] has cuda_major = {row['cuda_major']}")
        if not row["cuda_version"].startswith(f"{row['cuda_major']}."):
            raise SystemExit(f"{path}: [{key}] cuda_version {row['cuda_version']} is not CUDA {row['cuda_major']}")
        rows[row["cuda_major"]] = row
    if tuple(sorted(rows)) != MAJORS:
        raise SystemExit(f"{path}: expected rows for CUDA {MAJORS}, found {tuple(sorted(rows))}")
    return rows


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


class Report:
    """Prints one `PASS: name -- detail` line per check and counts them."""

    def __init__(self, stage: str):
        self.stage = stage
        self.counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}

    def line(self, status: str, name: str, detail: str = "") -> bool:
        self.counts[status] += 1
        print(f"{status}: {self.stage}: {name}" + (f" -- {detail}" if detail else ""), flush=True)
        return status != "FAIL"

    def check(self, ok: bool, name: str, detail: str = "") -> bool:
        return self.line("PASS" if ok else "FAIL", name, detail)

    def equal(self, name: str, found, expected) -> bool:
        if found == expected:
            return self.line("PASS", name, repr(found))
        return self.line("FAIL", name, f"found {found!r}, expected {expected!r}")

    def skip(self, name: str, why: str) -> None:
        self.line("SKIP", name, why)

    def finish(self) -> int:
        c = self.counts
        print(f"{self.stage}: {c['PASS']} passed, {c['FAIL']} failed, {c['SKIP']} skipped", flush=True)
        return 1 if c["FAIL"] else 0


def failures_of(run) -> list[str]:
    """The FAIL lines of ``run(report)`` on a silent Report (a planted mutation's checks).

    A SystemExit (a checker refusing its input outright) counts as a failure too.
    """
    import contextlib
    import io

    quiet = Report("mutated")
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            run(quiet)
        except SystemExit as exc:
            print(f"FAIL: mutated: refused -- {exc}")
    return [ln for ln in out.getvalue().splitlines() if ln.startswith("FAIL")]


def main_guard(fn) -> None:
    """Run fn() -> exit code; an unexpected exception is a FAIL line, not a silent pass."""
    try:
        code = fn()
    except SystemExit:
        raise
    except Exception as exc:  # report and fail loudly
        import traceback

        traceback.print_exc()
        print(f"FAIL: {Path(sys.argv[0]).stem}: unexpected {type(exc).__name__}: {exc}", flush=True)
        code = 1
    sys.exit(code)
