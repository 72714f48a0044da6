"""The compiler the suite builds its kernels with, chosen once per run.

    pytest tests                         # numba-cuda-mlir (the default)
    pytest --compiler numba-cuda tests   # classic numba-cuda, the same tests (CI runs both)

Test modules take the compiler's names from here and never import a compiler themselves,
so one source runs on both:

    from ..compiler import compile_cubin, cuda, qualified, require, types

``cuda`` is ``numba_cuda_mlir.cuda`` or ``numba.cuda``; ``types`` that compiler's Numba
types; ``qualified`` ``cuda.coop.numba_mlir`` or ``cuda.coop.numba_cuda`` (NVIDIA's qualified
namespace); ``compile_cubin`` its driverless compile.  ``require()`` skips (a test, or a
module at import) where the compiler is not installed or its backend does not register.
Kernels built from source text (tests/kernelgen.py) use the same compiler.

What a compiler does not do is a mark at the test, tied to the exception it raises
(conftest.py applies them for the selected compiler):

    @pytest.mark.xfail_on("numba-cuda", "SharedMemoryLimitError", "why", ids=("logical-int64-16",))
        strict xfail on that compiler, raising that class (a cuda.coop error, a Numba error or
        a builtin); ``ids`` limits it to the parameter sets with exactly those ids.
    @pytest.mark.only_on("numba-cuda-mlir", "why")
        skipped with the reason on every other compiler.

Tests that run one body on both compilers within a single run keep tests/backends_param.py.
"""

from __future__ import annotations

import importlib
import importlib.util
import os

import pytest

NAMES = ("numba-cuda-mlir", "numba-cuda")
DEFAULT = "numba-cuda-mlir"
# The variable through which a child process a test starts (``python -m tests.ops.<module>``)
# inherits the run's compiler; in the run itself conftest.py sets NAME from --compiler
# before any test module is imported.
CHILD_ENV = "CUDA_COOP_TEST_COMPILER"
NAME = os.environ.get(CHILD_ENV, DEFAULT)

# Each name this module lends, per compiler: (module, attribute or None for the module).
_NAMES = {
    "numba-cuda-mlir": {
        "cuda": ("numba_cuda_mlir.cuda", None),
        "types": ("numba_cuda_mlir.numba_cuda.types", None),
        "qualified": ("cuda.coop.numba_mlir", None),
        "compile_cubin": ("cuda.coop.numba_mlir", "compile_cubin"),
        "bfloat16": ("numba_cuda_mlir.numba_cuda.types", "bfloat16"),
    },
    "numba-cuda": {
        "cuda": ("numba.cuda", None),
        "types": ("numba.cuda.types", None),
        "qualified": ("cuda.coop.numba_cuda", None),
        "compile_cubin": ("cuda.coop.numba_cuda", "compile_cubin"),
        "bfloat16": ("numba.cuda.types", "bfloat16"),
    },
}
_PACKAGE = {"numba-cuda-mlir": "numba_cuda_mlir", "numba-cuda": "numba_cuda"}
# How a kernel module written as text (tests/kernelgen.py, scripts run in a subprocess)
# imports the compiler's ``cuda``.
CUDA_IMPORT = {"numba-cuda-mlir": "from numba_cuda_mlir import cuda", "numba-cuda": "from numba import cuda"}


def select(name: str) -> None:
    """Make ``name`` the compiler of this run (conftest.py, from ``--compiler``)."""
    global NAME
    if name not in NAMES:
        raise pytest.UsageError(f"--compiler {name!r}: choose one of {', '.join(NAMES)}")
    NAME = name
    os.environ[CHILD_ENV] = name
    from . import kernelgen

    kernelgen.DEFAULT_COMPILER = name


def require(compiler: str | None = None) -> None:
    """Skip where the compiler (default: the run's) is not installed or its backend cannot register."""
    compiler = compiler or NAME
    if importlib.util.find_spec(_PACKAGE[compiler]) is None:
        pytest.skip(f"{compiler} is not installed (pip install 'cuda-coop[{compiler}-cu13]')",
                    allow_module_level=True)
    if compiler == "numba-cuda":
        from cuda.coop._errors import (
            BackendUnavailableError,
            UnsupportedBackendVersionError,
        )

        try:
            from cuda import coop

            coop.register("numba-cuda")
        # e.g. numba.cuda is numba's own target, or a NumPy numba-cuda cannot compile with
        except (BackendUnavailableError, UnsupportedBackendVersionError) as error:
            pytest.skip(f"numba-cuda backend unavailable here: {error}", allow_module_level=True)


def named_exception(name: str) -> type:
    """The class an ``xfail_on`` mark names: cuda.coop's, then Numba's, then a builtin."""
    import builtins

    from cuda import coop

    errors = importlib.import_module("numba.cuda.core.errors" if NAME == "numba-cuda"
                                     else "numba_cuda_mlir.numba_cuda.core.errors")
    found = getattr(coop, name, None) or getattr(errors, name, None) or getattr(builtins, name, None)
    if not (isinstance(found, type) and issubclass(found, BaseException)):
        raise pytest.UsageError(f"xfail_on names {name!r}, which is not an exception class")
    return found


def lend(attribute: str, compiler: str | None = None):
    """One of the names above, of ``compiler`` (default: the run's); skips where it is absent."""
    compiler = compiler or NAME
    try:
        module, name = _NAMES[compiler][attribute]
    except KeyError:
        raise AttributeError(f"tests.compiler has no {attribute!r}") from None
    require(compiler)
    found = importlib.import_module(module)
    return found if name is None else getattr(found, name)


def __getattr__(attribute: str):
    return lend(attribute)


# Why classic numba-cuda differs, for the marks at the tests (docs/choosing_a_compiler.rst).
SEPARATE_SCRATCH = ("each call's scratch is a region of its own, never overlapped across the kernel, so the "
                    "shared-memory sizes and offsets the test reads from numba-cuda-mlir's plan differ")
HELPER_NOT_INLINED = "cooperative calls in a device function that is not inlined"
SOURCE_FILES_FOR_MLIR = ("compiles a source file written for numba-cuda-mlir (benchmarks/, examples/, "
                         "tests/examples_src/, tests/parity/)")
