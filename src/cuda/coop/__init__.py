"""cuda.coop: cooperative block and warp primitives for Python GPU kernels.

Importable without a GPU or a compiler.  Kernels compiled by numba-cuda-mlir call
the operations directly (``coop.load(coop.this_block(), src, items)``); see
``coop.register`` for how the compiler backend is activated.
"""

import logging as _logging

from ._version import __version__
from ._errors import *  # noqa: F401,F403  (every error class is public)
from ._errors import __all__ as _errors_all
from ._groups import (
    BlockGroup, ClusterGroup, GridGroup, SingleThreadGroup, ThreadGroup, WarpGroup, WarpsGroup,
    this_block, this_cluster, this_grid, this_thread, this_warp,
)
from ._payloads import TempStorage, ThreadData
from ._protocols import TempStorageLike, ThreadDataLike
from ._registration import register
from .ops._registry import public_operations as _public_operations

globals().update(_public_operations())

__all__ = [
    "__version__",
    "register",
    "this_block",
    "this_warp",
    "this_thread",
    "this_grid",
    "this_cluster",
    "WarpsGroup",
    "SingleThreadGroup",
    "GridGroup",
    "ClusterGroup",
    "ThreadGroup",
    "BlockGroup",
    "WarpGroup",
    "ThreadData",
    "TempStorage",
    "ThreadDataLike",
    "TempStorageLike",
    *_public_operations(),
    *_errors_all,
]

# Silent unless the application configures logging (docs/configuration.rst, "Logging").
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

from ._registration import maybe_auto_register as _maybe_auto_register  # noqa: E402

_maybe_auto_register()
del _maybe_auto_register
