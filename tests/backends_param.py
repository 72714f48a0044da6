"""Running one test on both compiler backends: numba-cuda-mlir and classic numba-cuda.

``@pytest.mark.parametrize("compiler", COMPILERS)`` (or the ``compiler`` fixture
of a module that sets ``pytestmark``) runs a test once per compiler; a compiler that
is not installed skips its instance with the reason.  ``kernel_for``, ``types_for`` and
``compile_for`` give the test that compiler's kernel, types and ``compile_cubin``.
"""

from __future__ import annotations

import pytest

from . import compiler as compiler_names
from .kernelgen import module_from_source

COMPILERS = list(compiler_names.NAMES)


def require(compiler: str) -> None:
    compiler_names.require(compiler)


def kernel_for(compiler: str, source: str):
    """The module built from ``source`` with ``cuda`` from ``compiler`` (registered)."""
    require(compiler)
    from cuda import coop

    coop.register(compiler)
    return module_from_source(source, compiler)


def types_for(compiler: str):
    return compiler_names.lend("types", compiler)


def compile_for(compiler: str, kernel, argtypes, **kw):
    return compiler_names.lend("compile_cubin", compiler)(kernel, argtypes, **kw)


def gpu_for(compiler: str):
    """The compiler's ``cuda`` module for a GPU test; skips where it has no device (unless the
    ci/pytest_plugins/gpu_compile_only plugin compiles the launches instead)."""
    import os

    cuda = compiler_names.lend("cuda", compiler)
    if not cuda.is_available() and os.environ.get("CUDA_COOP_GPU_COMPILE_ONLY") != "1":
        pytest.skip(f"no CUDA device ({compiler}: cuda.is_available() is False)")
    return cuda
