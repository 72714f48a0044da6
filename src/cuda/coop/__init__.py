"""cuda.coop: cooperative block and warp primitives for Python GPU kernels.

Importable without a GPU or a compiler.  Kernels compiled by numba-cuda-mlir call
the operations directly (``coop.load(coop.this_block(), src, items)``); see
``coop.register`` for how the compiler backend is activated.
"""

# `TYPE_CHECKING = False` is the spelling type checkers treat as true without importing
# typing at run time (PEP 781); deleted after its one use below.
TYPE_CHECKING = False

from ._version import __version__
from ._errors import *  # noqa: F401,F403  (every error class is public)
from ._errors import __all__ as _errors_all
from ._groups import (
    BlockGroup, ClusterGroup, GridGroup, SingleThreadGroup, ThreadGroup, WarpGroup, WarpsGroup,
    this_block, this_cluster, this_grid, this_thread, this_warp,
)
from ._payloads import TempStorage, ThreadData
from ._registration import register

# The operations.  Each family module is imported on first use of one of its names
# (``coop.load``, ``from cuda.coop import load``, a kernel's global lookup, the backend's
# registration), so ``import cuda.coop`` stays cheap (docs/performance.rst, "Import
# time").  Editors and type checkers read the imports below; _OPERATIONS maps each name
# to its family module for __getattr__.  The imports, _OPERATIONS, the registry
# (ops/_registry.py) and __all__ must list the same names: tests/test_public_api.py checks.
if TYPE_CHECKING:
    from ._protocols import TempStorageLike, ThreadDataLike  # typing.Protocol: typing on first use
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
del TYPE_CHECKING

_OPERATIONS = {
    **dict.fromkeys(("load", "store"), "load_store"),
    "exchange": "exchange",
    "shuffle": "shuffle",
    **dict.fromkeys(("reduce", "reduce_batched", "sum"), "reduce"),
    **dict.fromkeys(("exclusive_scan", "exclusive_sum", "inclusive_scan", "inclusive_sum", "scan"), "scan"),
    **dict.fromkeys(("merge_sort_keys", "merge_sort_pairs"), "merge_sort"),
    **dict.fromkeys(("radix_rank", "radix_rank_keys", "radix_sort_keys", "radix_sort_pairs"), "radix"),
    **dict.fromkeys(("topk_max_keys", "topk_max_pairs", "topk_min_keys", "topk_min_pairs"), "topk"),
    **dict.fromkeys(("adjacent_difference", "discontinuity"), "neighbors"),
    "histogram": "histogram",
    **dict.fromkeys(("run_length_decode", "run_length_decode_into"), "run_length"),
}


def __getattr__(name):
    family = _OPERATIONS.get(name)
    if family is not None:
        module = f"{__name__}.ops.{family}"
    elif name in ("ThreadDataLike", "TempStorageLike"):
        module = f"{__name__}._protocols"
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


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

from ._registration import maybe_auto_register as _maybe_auto_register  # noqa: E402

_maybe_auto_register()
del _maybe_auto_register
