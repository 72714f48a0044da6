"""Running one test on both compiler backends: numba-cuda-mlir and classic numba-cuda.

``@pytest.mark.parametrize("compiler", COMPILERS)`` (or the ``compiler`` fixture
of a module that sets ``pytestmark``) runs a test once per compiler; a compiler that
is not installed skips its instance with the reason.  ``kernel_for``, ``types_for`` and
``compile_for`` give the test that compiler's kernel, types and ``compile_cubin``.
"""

from __future__ import annotations

import importlib.util

import pytest

from .kernelgen import module_from_source

COMPILERS = ["numba-cuda-mlir", "numba-cuda"]
_MODULE = {"numba-cuda-mlir": "numba_cuda_mlir", "numba-cuda": "numba_cuda"}


def require(compiler: str) -> None:
    if importlib.util.find_spec(_MODULE[compiler]) is None:
        pytest.skip(f"{compiler} is not installed (pip install 'cuda-coop[{compiler}-cu13]')")
    if compiler == "numba-cuda":
        from cuda.coop._errors import BackendUnavailableError, UnsupportedBackendVersionError

        try:
            from cuda import coop

            coop.register("numba-cuda")
        # e.g. numba.cuda is numba's own target, or a NumPy numba-cuda cannot compile with
        except (BackendUnavailableError, UnsupportedBackendVersionError) as error:
            pytest.skip(f"numba-cuda backend unavailable here: {error}")


def kernel_for(compiler: str, source: str):
    """The module built from ``source`` with ``cuda`` from ``compiler`` (registered)."""
    require(compiler)
    from cuda import coop

    coop.register(compiler)
    return module_from_source(source, compiler)


def types_for(compiler: str):
    require(compiler)
    if compiler == "numba-cuda":
        from numba.cuda import types
    else:
        from numba_cuda_mlir.numba_cuda import types
    return types


def compile_for(compiler: str, kernel, argtypes, **kw):
    require(compiler)
    if compiler == "numba-cuda":
        from cuda.coop.numba_cuda import compile_cubin
    else:
        from cuda.coop.numba_mlir import compile_cubin
    return compile_cubin(kernel, argtypes, **kw)


def gpu_for(compiler: str):
    """The compiler's ``cuda`` module for a GPU test; skips where it has no device (unless the
    ci/pytest_plugins/gpu_compile_only plugin compiles the launches instead)."""
    import os

    require(compiler)
    if compiler == "numba-cuda":
        from numba import cuda
    else:
        from numba_cuda_mlir import cuda
    if not cuda.is_available() and os.environ.get("CUDA_COOP_GPU_COMPILE_ONLY") != "1":
        pytest.skip(f"no CUDA device ({compiler}: cuda.is_available() is False)")
    return cuda
