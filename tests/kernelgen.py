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

_DIR = Path(tempfile.mkdtemp(prefix="coop-genkernels-"))
_MODULES: dict = {}

HEADER = """\
import math
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop
"""


def module_from_source(source: str):
    """Import ``source`` (a module body) once per distinct text."""
    source = HEADER + textwrap.dedent(source)
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
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
    return f"coop.this_warp().group_by({width})"
