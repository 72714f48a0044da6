"""Group queries and barriers (``rank``, ``count``, ``rank_as``, ``count_as``, ``is_member``,
``sync``), as device code chosen at compile time from the group's kind: shared by both
backends, each passing its compiler's ``_compat`` module as ``C`` (``C.cuda.jit`` compiles
the pieces, ``C.types`` reads the ``level`` argument).  backends/numba_mlir/group_methods.py
documents the semantics; each backend registers the methods on its ``GroupType``.
"""

from __future__ import annotations

import numpy as np

from .._errors import InvalidArgumentTypeError, InvalidArgumentValueError, InvalidGroupError
from ..core import spec

__all__ = ["ORDER", "level_of", "dtype_of", "device", "part", "sync_impl", "member_impl", "value_of",
           "CLUSTER_PTX", "CLUSTER_MIN_CC", "reaches_cluster", "cluster_query", "cluster_own_level", "cluster_sync"]

ORDER = ("thread", "warp", "block", "cluster", "grid")  # finer to coarser


def _levels(group) -> tuple:
    """The levels a group's queries accept (NVIDIA's per-kind lists)."""
    if group.kind == "warp" and group.width != 32:
        return ("thread", "warp")  # a logical warp: its lanes, its hardware warp
    if group.kind == "warps":
        return ("thread", "warp", "block")  # its threads, its warps, its block
    return ORDER


def level_of(C, group, level, method: str) -> str:
    label = group.descriptor().label
    names = ", ".join(map(repr, _levels(group)))
    if level is None or isinstance(level, (C.types.NoneType, C.types.Omitted)):
        return "thread"
    if isinstance(level, C.types.UnicodeType):
        return None  # numba's second, non-literal attempt: the literal one already decided
    if not isinstance(level, C.types.StringLiteral):
        raise InvalidArgumentTypeError(
            f"{label}.{method}(): level={level} is not a compile-time string; pass one of {names}"
        )
    value = level.literal_value.strip().lower()
    value = "thread" if value == "gpu_thread" else value
    if value not in _levels(group):
        why = ""
        if value in ORDER:
            why = (" (a logical warp answers for its lanes and its hardware warp only)" if group.kind == "warp"
                   else " (a group of warps answers for its threads, its warps and its block only)")
        raise InvalidArgumentValueError(
            f"{label}.{method}(): level={level.literal_value!r} does not apply to this group{why}; use one "
            f"of {names}"
        )
    return value


def dtype_of(C, describe_type, group, dtype, method):
    d = describe_type(dtype)
    if not isinstance(d, spec.DtypeArg) or d.dtype.kind not in "iu":
        raise InvalidArgumentTypeError(
            f"{group.descriptor().label}.{method}(): dtype={spec.describe(d)} is not an integer type; "
            "pass an integer dtype such as np.int32 or np.uint64"
        )
    return C.from_dtype(np.dtype(d.dtype))


# ---- the values, as device code ---------------------------------------------------------

_DEVICE_FUNCTIONS: dict = {}


def device(C, key, pyfunc):
    """A device function per (method, group, level), compiled once (per compiler) and inlined by LTO."""
    key = (C.__name__, *key)
    if key not in _DEVICE_FUNCTIONS:
        _DEVICE_FUNCTIONS[key] = C.cuda.jit(device=True)(pyfunc)
    return _DEVICE_FUNCTIONS[key]


# Building blocks, device functions inlined by LTO (numba compiles each lambda on its own,
# so a lambda calls these through its closure rather than local helpers).
_PARTS: dict = {}


def part(C, name):
    parts = _PARTS.setdefault(C.__name__, {})
    if not parts:
        cuda = C.cuda
        for key, fn in {
            "tid": lambda: cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z),
            "threads": lambda: cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z,
            "bid": lambda: cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z),
            "blocks": lambda: cuda.gridDim.x * cuda.gridDim.y * cuda.gridDim.z,
        }.items():
            parts[key] = C.cuda.jit(device=True)(fn)
    return parts[name]


def _rank_impl(C, group, level: str):
    """rank() of a group that is not a cluster and does not reach the cluster level."""
    kind, width = group.kind, group.width
    tid, threads, bid = part(C, "tid"), part(C, "threads"), part(C, "bid")
    if kind == "warp" and width != 32:  # a logical warp: its lane, or its index in the warp
        if level == "warp":
            return lambda: tid() % 32 // width
        # A partial mapping (width not dividing 32) restarts at each warp: the lane, not the
        # thread, is cut into logical warps.
        return (lambda: tid() % 32 % width) if 32 % width else (lambda: tid() % width)
    if kind == "warps":
        span = 32 * width
        if level == "block":
            return lambda: tid() // span
        if level == "warp":
            return lambda: tid() % span // 32
        return lambda: tid() % span
    fine, coarse = sorted((kind, level), key=ORDER.index)
    if fine == coarse:
        return lambda: 0
    return {
        ("thread", "warp"): lambda: tid() % 32,
        ("thread", "block"): lambda: tid(),
        ("thread", "grid"): lambda: bid() * threads() + tid(),
        ("warp", "block"): lambda: tid() // 32,
        ("warp", "grid"): lambda: bid() * ((threads() + 31) // 32) + tid() // 32,
        ("block", "grid"): lambda: bid(),
    }[(fine, coarse)]


def _count_impl(C, group, level: str):
    """count() of a group that is not a cluster and does not reach the cluster level."""
    kind, width = group.kind, group.width
    threads, blocks = part(C, "threads"), part(C, "blocks")
    if kind == "warp" and width != 32:
        n = 32 // width if level == "warp" else width
        return lambda: n
    if kind == "warps":
        if level == "block":
            if group.exhaustive:  # the last group may be smaller
                return lambda: ((threads() + 31) // 32 + width - 1) // width
            return lambda: threads() // 32 // width  # complete groups of whole warps
        n = width if level == "warp" else 32 * width
        return lambda: n
    fine, coarse = sorted((kind, level), key=ORDER.index)
    if fine == coarse:
        return lambda: 1
    return {
        ("thread", "warp"): lambda: 32,
        ("thread", "block"): lambda: threads(),
        ("thread", "grid"): lambda: blocks() * threads(),
        ("warp", "block"): lambda: (threads() + 31) // 32,
        ("warp", "grid"): lambda: blocks() * ((threads() + 31) // 32),
        ("block", "grid"): lambda: blocks(),
    }[(fine, coarse)]


def sync_impl(C, group, method: str):
    cuda = C.cuda
    if group.kind in ("block", "warps"):
        return lambda: cuda.syncthreads()
    if group.kind == "thread":
        return lambda: None
    if group.kind == "warp":
        w = group.width
        if w == 32:
            return lambda: cuda.syncwarp(0xFFFFFFFF)
        # Each lane waits for the lanes of its logical warp.  Where w does not divide 32, the
        # last 32 % w lanes (not members) name themselves only: they wait for each other when
        # they call sync() outside an is_member() guard, and no member's mask names them.
        # (One expression, no branch: numba-cuda-mlir 0.6 fails to lower a device function
        # whose barrier sits in an if.)
        return lambda: cuda.syncwarp(np.uint32((((1 << w) - 1) << ((cuda.laneid // w) * w)) & 0xFFFFFFFF))
    raise InvalidGroupError(
        f"{group.descriptor().label}.{method}(): a {group.kind}-wide barrier needs a cooperative "
        "launch, which cuda-coop does not make; end the kernel and launch another, or synchronize "
        "per block with coop.this_block().sync()"
    )


def member_impl(C, group):
    tid, threads = part(C, "tid"), part(C, "threads")
    if group.kind == "warps":  # exhaustive=False: the complete groups of whole warps
        span = 32 * group.width
        return lambda: tid() // span < threads() // span
    members = 32 // group.width * group.width  # complete logical warps of each warp
    return lambda: tid() % 32 < members


def value_of(C, method, group, level):
    make = _rank_impl if method == "rank" else _count_impl
    return device(C, (method, group.kind, group.width, group.exhaustive, level), make(C, group, level))


# ---- thread-block clusters ---------------------------------------------------------------
# The cluster values are hardware registers, read by inline PTX.  Each backend makes one
# stub per CLUSTER_PTX entry (``registers``: name -> stub), typed as a call of no arguments
# and lowered in the kernel itself, whose target decides between the cluster registers and
# the one-block fallback: a device function, compiled once, would keep the first target's PTX.

CLUSTER_MIN_CC = (9, 0)

# x-major linear index of a 3-D register pair: z * (ny * nx) + y * nx + x
_LINEAR_PTX = ("{{\n\t.reg .u32 %cx, %cy, %cz, %nx, %ny;\n\tmov.u32 %cx, %{i}.x;\n\tmov.u32 %cy, %{i}.y;\n\t"
               "mov.u32 %cz, %{i}.z;\n\tmov.u32 %nx, %{n}.x;\n\tmov.u32 %ny, %{n}.y;\n\t"
               "mad.lo.u32 %cz, %cz, %ny, %cy;\n\tmad.lo.u32 $0, %cz, %nx, %cx;\n\t}}")
_PRODUCT_PTX = ("{{\n\t.reg .u32 %nx, %ny, %nz;\n\tmov.u32 %nx, %{n}.x;\n\tmov.u32 %ny, %{n}.y;\n\t"
                "mov.u32 %nz, %{n}.z;\n\tmul.lo.u32 %nx, %nx, %ny;\n\tmul.lo.u32 $0, %nx, %nz;\n\t}}")

# name -> (PTX on CC >= 9.0, what it is below: a value, ("u32", PTX of a value), or a barrier's PTX)
CLUSTER_PTX = {
    # %cluster_ctarank: the calling block's linear (x-major) rank in its cluster
    "block_rank": ("mov.u32 $0, %cluster_ctarank;", 0),
    # %cluster_nctarank: blocks in the calling block's cluster
    "block_count": ("mov.u32 $0, %cluster_nctarank;", 1),
    # the linear index of the calling block's cluster in the grid, and the clusters of the
    # grid; below 9.0 every block is its own cluster: the block index and the block count
    "index": (_LINEAR_PTX.format(i="clusterid", n="nclusterid"), ("u32", _LINEAR_PTX.format(i="ctaid", n="nctaid"))),
    "total": (_PRODUCT_PTX.format(n="nclusterid"), ("u32", _PRODUCT_PTX.format(n="nctaid"))),
    # every thread of every block of the cluster arrives (release), then waits (acquire);
    # ``.aligned``: every thread of each warp executes the same barrier
    "sync": ("barrier.cluster.arrive;\n\tbarrier.cluster.wait;", "barrier.sync 0;"),
    "sync_aligned": ("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;", "bar.sync 0;"),
}


def query(C, registers, method: str):
    """The typer of ``rank``/``count`` (and their ``_as`` forms) at a resolved level: a
    function of no argument giving the value, wrapped in what each method returns."""
    def typer(group, lv, ty=None):
        if reaches_cluster(group.kind, lv):
            return cluster_query(C, registers, method, group.kind, lv, ty)
        if group.kind == "cluster":  # the cluster's own level
            value = cluster_own_level(C, method)
        else:
            value = value_of(C, method, group, lv)
        if ty is None:
            return lambda group, level=None: value()
        return lambda group, dtype, level=None: ty(value())

    return typer


def reaches_cluster(kind: str, level: str) -> bool:
    """A query between the cluster and a finer level, or between the cluster and the grid."""
    return "cluster" in (kind, level) and kind != level


def _cluster_terms(C, registers, method: str, kind: str, level: str):
    """``(register, scale, offset)`` with the value ``register() * scale() + offset()``;
    ``scale``/``offset`` are plain device functions."""
    fine, coarse = sorted((kind, level), key=ORDER.index)
    one, zero = device(C, ("one",), lambda: 1), device(C, ("zero",), lambda: 0)
    tid, threads = part(C, "tid"), part(C, "threads")
    if (fine, coarse) == ("cluster", "grid"):
        return registers["index" if method == "rank" else "total"], one, zero
    scale = {"thread": threads, "warp": device(C, ("warps",), lambda: (threads() + 31) // 32), "block": one}[fine]
    if method == "count":
        return registers["block_count"], scale, zero
    offset = {"thread": tid, "warp": device(C, ("warp_rank",), lambda: tid() // 32), "block": zero}[fine]
    return registers["block_rank"], scale, offset


def cluster_query(C, registers, method: str, kind: str, level: str, ty=None):
    """The implementation of a query that ``reaches_cluster``, for an inlined overload."""
    register, scale, offset = _cluster_terms(C, registers, method, kind, level)
    if ty is None:
        return lambda group, level=None: register() * scale() + offset()
    return lambda group, dtype, level=None: ty(register() * scale() + offset())


def cluster_own_level(C, method: str):
    """rank() (0) or count() (1) of a cluster at its own level, as a device function."""
    return device(C, (method, "same"), (lambda: 0) if method == "rank" else (lambda: 1))


def cluster_sync(registers, method: str):
    """The implementation of ``this_cluster().sync()`` / ``.sync_aligned()``."""
    barrier = registers[method]
    return lambda group: barrier()
