"""`import cuda.coop` stays cheap: what it must not import (docs/compile_latency.rst, "Import time").

Not a timing assertion (the machines are shared and noisy): a fresh process imports
cuda.coop and the test lists the modules that must stay lazy until first use.  A change
that makes one of them eager fails here, naming the module and who imported it.
``import cuda.coop`` beside numba_cuda_mlir (the backend registers) is checked the same
way in tests/backends/test_first_import.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.unit

# Loaded on first use, never by `import cuda.coop` alone.
LAZY = (
    # The compiler, the toolkit bindings and optional dtypes: only with a backend.
    "numba_cuda_mlir", "numba", "cuda.bindings", "cuda.pathfinder", "ml_dtypes",
    # cuda.coop's own heavy parts: the family modules (OpSpecs, C++ rendering), the
    # compile path and the backend.  coop.load etc. import their family on first use.
    "cuda.coop.ops._registry", "cuda.coop.ops._validate", "cuda.coop.ops.load_store",
    "cuda.coop.ops.reduce", "cuda.coop.ops.scan", "cuda.coop.ops.radix", "cuda.coop.ops.histogram",
    "cuda.coop.core.spec", "cuda.coop.core.cpp", "cuda.coop.core.build", "cuda.coop.core.toolchain",
    "cuda.coop.backends.numba_mlir",
    # Standard library modules nothing at import needs: logging is imported by the one
    # module that logs (core/build.py), importlib.abc/resources by nobody, inspect by
    # the first signature lookup.
    "logging", "importlib.abc", "importlib.resources", "dataclasses", "hashlib", "tempfile",
    # typing (coop.ThreadDataLike and coop.TempStorageLike are typing.Protocols, imported
    # on first use), pathlib (the cache paths) and numpy (a dtype given to
    # coop.ThreadData; a kernel's arrays bring it anyway).
    "typing", "pathlib", "numpy",
)


def _fresh_import(code: str, **env) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k != "CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION"}
    full.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full, timeout=300)


def test_import_cuda_coop_keeps_the_lazy_modules_out():
    # Counted from what the interpreter had before the import: site's .pth files run
    # first (numba-cuda's _numba_cuda_redirector.pth imports importlib.abc, pathlib,
    # tempfile and typing in every process of an environment that has it).
    result = _fresh_import(f"""
        import sys
        before = set(sys.modules)
        import cuda.coop
        print("EAGER", sorted(m for m in {LAZY!r} if m in sys.modules and m not in before))
        # ops/_families.py (which module defines each name, a dict) is not a family.
        print("FAMILIES", sorted(m for m in sys.modules
                                 if m.startswith("cuda.coop.ops.") and m != "cuda.coop.ops._families"))
    """)
    assert result.returncode == 0, result.stderr
    assert "EAGER []" in result.stdout, (
        result.stdout + "\nfind who imports it: python -X importtime -c 'import cuda.coop'")
    assert "FAMILIES []" in result.stdout, result.stdout


def test_first_use_of_an_operation_imports_only_its_family():
    result = _fresh_import("""
        import sys
        import cuda.coop as coop
        coop.histogram
        print("FAMILIES", sorted(m.rsplit(".", 1)[1] for m in sys.modules
                                 if m.startswith("cuda.coop.ops.") and not m.split(".")[-1].startswith("_")))
        print("LOGGING", "logging" in sys.modules)
    """, CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION="1")
    assert result.returncode == 0, result.stderr
    assert "FAMILIES ['histogram']" in result.stdout, result.stdout
    assert "LOGGING False" in result.stdout, result.stdout


def test_the_lazy_list_names_real_modules():
    """A renamed module would make the check above vacuous."""
    import importlib.util

    for name in LAZY:
        if name.startswith("cuda.coop."):
            assert importlib.util.find_spec(name) is not None, name
