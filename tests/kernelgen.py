"""Build test kernels from source text, so one kernel can cover many algorithms.

numba-cuda-mlir reads a kernel's source (``inspect.getsource``), so generated
kernels are written to a module file under a temporary directory and imported.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import tempfile
import textwrap
from pathlib import Path

from .compiler import CUDA_IMPORT

_DIR = Path(tempfile.mkdtemp(prefix="coop-genkernels-"))
_MODULES: dict = {}

HEADER = """\
import math
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop
"""


# The compiler of kernels built without naming one: the run's (pytest --compiler, which
# tests/compiler.py's select() sets here).
DEFAULT_COMPILER = "numba-cuda-mlir"


def module_from_source(source: str, compiler: str | None = None):
    """Import ``source`` (a module body) once per distinct text; ``cuda`` is ``compiler``'s
    (tests/backends_param.py; default ``DEFAULT_COMPILER``).  HEADER is read at each call:
    error tests extend it."""
    compiler = compiler or DEFAULT_COMPILER
    header = HEADER.replace(CUDA_IMPORT["numba-cuda-mlir"], CUDA_IMPORT[compiler])
    source = header + textwrap.dedent(source)
    # A dispatcher keeps the mode (run-time checks on or off) of its first compile, so
    # kernels built while CUDA_COOP_CHECKED differs are different modules.
    from cuda.coop import _env

    mode = "checked" if _env.checked_mode() else "unchecked"
    digest = hashlib.sha256(f"{mode}\n{source}".encode()).hexdigest()[:16]
    if digest in _MODULES:
        return _MODULES[digest]
    name = f"coop_genkernel_{digest}"
    path = _DIR / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _MODULES[digest] = module
    return module


def group_expr(kind: str, width: int | None) -> str:
    if kind == "block":
        return "coop.this_block()"
    if width in (None, 32):
        return "coop.this_warp()"
    if 32 % width:  # a partial logical warp (17..31 lanes): lanes 0..width-1 of each warp
        return f"coop.this_warp().group_by({width}, exhaustive=False)"
    return f"coop.this_warp().group_by({width})"


def kernel_module(body: str, *, params: str = "src, dst, n", prelude: str = ""):
    """A module whose ``kernel(params)`` runs ``body``; ``prelude`` goes above it."""
    indented = textwrap.indent(textwrap.dedent(body), "    ")
    return module_from_source(textwrap.dedent(prelude) + f"\n@cuda.jit\ndef kernel({params}):\n{indented}\n")


def scan_call(call: str, group: str, value: str, *, extra: str = "", scan_op: str = "", init: str = "",
              algorithm: str | None = None, aggregate: bool = False, valid: bool = False,
              prefix: str = "") -> str:
    """Kernel text of one scan call: ``coop.<call>(<group>, <value>, <keywords>)``.

    ``init`` is the initial_value expression, ``aggregate``/``valid`` name the kernel's
    ``agg`` payload and ``vi`` variable, ``prefix`` is the prefix_op keyword text.
    """
    kw = [extra] if extra else []
    if scan_op:
        kw.append(f"scan_op={scan_op}")
    if init:
        kw.append(f"initial_value={init}")
    if algorithm:
        kw.append(f'algorithm="{algorithm}"')
    if aggregate:
        kw.append("aggregate_output=agg")
    if valid:
        kw.append("valid_items=vi")
    if prefix:
        kw.append(prefix)
    return f"coop.{call}({group}, {value}, {', '.join(kw)})"
