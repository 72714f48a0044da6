"""A backend module may be the first cuda.coop import of a process (no circular import)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.compile

pytest.importorskip("numba_cuda_mlir")

SRC = Path(__file__).resolve().parents[2] / "src"
# The compat door, the user-facing compile module, and the two that pull in the most.
MODULES = [f"cuda.coop.backends.numba_mlir.{name}" for name in ("_compat", "compile", "typing", "lowering")]


def test_each_backend_module_imports_first_in_a_fresh_process():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))
    env.pop("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION", None)
    # One fresh interpreter per module, all started at once: each import is ~2 s of
    # CPU-bound start-up, so on a machine with a free core they overlap.
    procs = {name: subprocess.Popen([sys.executable, "-c", f"import {name}"], env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
             for name in MODULES}
    failures = []
    for name, proc in procs.items():
        _out, err = proc.communicate(timeout=600)
        if proc.returncode != 0:
            failures.append(f"{name} {proc.returncode} {err.strip().splitlines()[-1:]}")
    assert not failures, failures
