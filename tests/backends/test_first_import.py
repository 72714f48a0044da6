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
    probe = ("import importlib, sys\n"
             "for name in sys.argv[1:]:\n"
             "    import subprocess\n"
             "    r = subprocess.run([sys.executable, '-c', f'import {name}'], capture_output=True, text=True)\n"
             "    print(name, r.returncode, r.stderr.strip().splitlines()[-1:] if r.returncode else '')\n")
    out = subprocess.run([sys.executable, "-c", probe, *MODULES], env=env, capture_output=True, text=True, check=True,
                         timeout=600).stdout
    failures = [line for line in out.splitlines() if line.split()[1:2] != ["0"]]
    assert len(out.splitlines()) == len(MODULES) and not failures, out
