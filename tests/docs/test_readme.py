"""README.md's Python blocks run as written, each in a fresh process.

A block whose first line is ``# needs a GPU`` runs only where a GPU is present (marker
``gpu``); every other block runs everywhere (marker ``compile``: they compile kernels to
cubin with NVRTC, no GPU needed).  A block must not fail and must print something.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GPU_MARK = "# needs a GPU"


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of every ```python fenced block."""
    blocks = []
    for m in re.finditer(r"^```python[ \t]*\n(.*?)^```[ \t]*$", text, re.MULTILINE | re.DOTALL):
        blocks.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    return blocks


def _cases():
    cases = []
    for line, code in python_blocks(README.read_text()):
        gpu = code.lstrip().startswith(GPU_MARK)
        marks = [pytest.mark.gpu] if gpu else [pytest.mark.compile]
        cases.append(pytest.param(code, id=f"README.md:{line}{'-gpu' if gpu else ''}", marks=marks))
    return cases


@pytest.mark.parametrize("code", _cases())
def test_readme_block_runs(code, tmp_path):
    cuda = pytest.importorskip("numba_cuda_mlir").cuda
    if code.lstrip().startswith(GPU_MARK) and not cuda.is_available():
        # Reached only where a plugin un-skips GPU tests (ci/pytest_plugins/gpu_compile_only.py):
        # the subprocess cannot be compiled-only, so it needs the device itself.
        pytest.skip("this README block needs a GPU")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=600)
    assert out.returncode == 0, f"README block failed:\n{code}\n--- stderr ---\n{out.stderr}"
    assert out.stdout.strip(), "a README block should print its result"


@pytest.mark.unit
def test_readme_has_a_gpu_block_and_a_no_gpu_block():
    blocks = [code for _, code in python_blocks(README.read_text())]
    assert any(code.lstrip().startswith(GPU_MARK) for code in blocks)
    no_gpu = [code for code in blocks if not code.lstrip().startswith(GPU_MARK)]
    assert no_gpu and all("compile_cubin" in code for code in no_gpu)
    for code in blocks:
        # ``import cuda.coop.numba_mlir`` would rebind ``cuda`` after ``from numba_cuda_mlir import cuda``.
        assert not re.search(r"^import cuda\.coop\S*\s*$", code, re.MULTILINE), code
