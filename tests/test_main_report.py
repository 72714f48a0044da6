"""``python -m cuda.coop``: the environment report asked for in bug reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _run(*args, code=None, **env):
    full = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]), **env)
    cmd = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "cuda.coop", *args]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, env=full, timeout=300)


@pytest.mark.compile
def test_report_names_toolchain_cache_environment_and_gpu(tmp_path):
    pytest.importorskip("numba_cuda_mlir")
    cache = tmp_path / "cache"
    out = _run(CUDA_COOP_CACHE_DIR=str(cache), CUDA_COOP_CACHE_MAX_MB="64")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for needle in ("cuda-coop 0.1.0", "backend: numba-cuda-mlir 0.", "NVRTC 1", "nvJitLink 1", "CCCL ",
                   "found via", "CUDA headers 1", f"provider cache: {cache}", "0 entries", "of 64.0 MB",
                   "CUDA_COOP_CACHE_MAX_MB=64", "GPU",
                   "shared-memory addresses (sm_90): 32-bit, as nvcc (CUDA_COOP_SHARED_ADDRESS_BITS=auto) in "
                   "radix sort and TopK kernels, 64-bit (CUDA_COOP_SHARED_ADDRESS_BITS=auto) in others"):
        assert needle in text, f"{needle!r} missing from:\n{text}"

    out = _run("--json", CUDA_COOP_CACHE_DIR=str(cache))
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert set(info) == {"cuda_coop", "python", "backend", "toolchain", "cache", "environment", "gpu"}
    assert info["environment"] == {"CUDA_COOP_CACHE_DIR": str(cache)}
    assert info["cache"]["entries"] == 0 and info["cache"]["limit_bytes"] == 512 * 2**20
    assert info["toolchain"]["cccl"]["found_via"]
    assert info["toolchain"]["shared_addresses"]["other_kernels"].startswith("64-bit")
    assert info["gpu"]["devices"] or info["gpu"]["reason"]


@pytest.mark.unit
def test_report_without_numba_cuda_mlir_or_toolkit_says_what_is_missing():
    # A blocked import stands for an environment where neither is installed.
    code = ("import sys; sys.modules['numba_cuda_mlir'] = None; sys.modules['cuda.bindings'] = None\n"
            "import warnings; warnings.simplefilter('ignore')\n"
            "from cuda.coop.__main__ import main; sys.argv[1:] = sys.argv[1:]; sys.exit(main(sys.argv[1:]))")
    out = _run(code=code)
    assert out.returncode == 0, out.stderr
    assert "backend: numba-cuda-mlir: missing, not installed" in out.stdout
    assert "toolchain: missing," in out.stdout
    assert "GPU: none (numba-cuda-mlir is not installed)" in out.stdout
    out = _run("--json", code=code)
    info = json.loads(out.stdout)
    assert info["backend"]["version"] is None and "missing" in info["toolchain"]
