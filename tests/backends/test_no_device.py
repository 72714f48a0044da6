"""A cooperative kernel launched with no usable driver raises one NoDeviceError."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.compile

pytest.importorskip("numba_cuda_mlir")

SRC = str(Path(__file__).resolve().parents[2] / "src")

COOP = """
    import numpy as np
    from numba_cuda_mlir import cuda
    from cuda import coop

    @cuda.jit
    def copy_tile(source, destination, items_per_thread):
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread)
        coop.load(block, source, items)
        coop.store(block, destination, items)

    src = np.arange(128 * 4, dtype=np.int32)
    copy_tile[1, 128](src, np.zeros_like(src), 4)
"""

PLAIN = """
    import numpy as np
    from numba_cuda_mlir import cuda
    import cuda.coop.numba_mlir as numba_coop  # the backend (and its launch hook) is active

    @cuda.jit
    def plain(a):
        a[cuda.threadIdx.x] = 1

    plain[1, 32](np.zeros(32))
"""


def _no_gpu():
    try:
        from numba_cuda_mlir import cuda

        return not cuda.is_available()
    except Exception:  # noqa: BLE001  (no numba-cuda-mlir driver at all: no GPU)
        return True


needs_no_gpu = pytest.mark.skipif(not _no_gpu(), reason="a GPU is present: the launch succeeds")


def _run(source):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-W", "ignore", "-c", textwrap.dedent(source)],
                          check=False, capture_output=True, text=True, env=env, timeout=300)


@needs_no_gpu
def test_coop_launch_without_driver_raises_one_short_error():
    out = _run(COOP)
    assert out.returncode == 1, out.stderr
    lines = out.stderr.strip().splitlines()
    assert lines[-1].startswith("cuda.coop._errors.NoDeviceError: cannot launch cooperative kernel 'copy_tile'"), out.stderr
    assert "compile_cubin" in lines[-1]
    assert "During handling" not in out.stderr and "CudaSupportError" not in out.stderr
    assert len(lines) <= 8, out.stderr  # the driver's own traceback is ~40 lines


@needs_no_gpu
def test_coop_free_kernel_keeps_the_drivers_error():
    out = _run(PLAIN)
    assert out.returncode == 1
    assert "CudaSupportError" in out.stderr and "NoDeviceError" not in out.stderr, out.stderr


def test_uses_coop_sees_module_function_and_closure_references():
    from numba_cuda_mlir import cuda

    import cuda.coop.numba_mlir as numba_coop
    from cuda import coop
    from cuda.coop import load
    from cuda.coop.backends.numba_mlir.launch import uses_coop

    def via_module(a):
        coop.this_block()

    def via_function(a):
        load(a)

    def via_submodule(a):
        numba_coop.this_block()

    def make_closure():
        block = coop.this_block

        def inner(a):
            block()
        return inner

    def plain(a):
        a[cuda.threadIdx.x] = 1

    for f in (via_module, via_function, via_submodule, make_closure()):
        assert uses_coop(cuda.jit(f)), f.__name__
    assert not uses_coop(cuda.jit(plain))
    assert not uses_coop(None)
