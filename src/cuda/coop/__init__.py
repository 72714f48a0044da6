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

# The operations, imported by name so that editors and type checkers see them (the
# registry, ops/_registry.py, and __all__ must list the same names: tests/test_public_api.py
# checks).
from .ops.load_store import load, store
from .ops.exchange import exchange
from .ops.shuffle import shuffle
from .ops.reduce import reduce, reduce_batched, sum  # coop.sum shadows the builtin, like np.sum
from .ops.scan import exclusive_scan, exclusive_sum, inclusive_scan, inclusive_sum, scan
from .ops.merge_sort import merge_sort_keys, merge_sort_pairs
from .ops.radix import radix_rank, radix_rank_keys, radix_sort_keys, radix_sort_pairs
from .ops.topk import topk_max_keys, topk_max_pairs, topk_min_keys, topk_min_pairs
from .ops.neighbors import adjacent_difference, discontinuity
from .ops.histogram import histogram
from .ops.run_length import run_length_decode, run_length_decode_into

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
    "load", "store", "exchange", "shuffle",
    "reduce", "reduce_batched", "sum",
    "scan", "exclusive_scan", "inclusive_scan", "exclusive_sum", "inclusive_sum",
    "merge_sort_keys", "merge_sort_pairs",
    "radix_sort_keys", "radix_sort_pairs", "radix_rank", "radix_rank_keys",
    "topk_min_keys", "topk_max_keys", "topk_min_pairs", "topk_max_pairs",
    "adjacent_difference", "discontinuity", "histogram",
    "run_length_decode", "run_length_decode_into",
    *_errors_all,
]

# Silent unless the application configures logging (docs/configuration.rst, "Logging").
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

from ._registration import maybe_auto_register as _maybe_auto_register  # noqa: E402

_maybe_auto_register()
del _maybe_auto_register
