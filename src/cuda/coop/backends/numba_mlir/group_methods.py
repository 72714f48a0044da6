"""Group queries and barriers inside kernels: ``rank``, ``count``, ``rank_as``, ``count_as``,
``is_member``, ``sync`` and ``sync_aligned`` on every group descriptor.

Each method is a small Python implementation, chosen at compile time from the
group's kind and inlined into the caller (``inline="always"``: a group is a
compile-time descriptor with no run-time value to pass to a function).

``level`` is a level of the CUDA hierarchy, ``"thread"`` (also spelled
``"gpu_thread"``), ``"warp"``, ``"block"``, ``"cluster"`` or ``"grid"``; the default is
``"thread"``.  As NVIDIA's ``ThreadGroup`` (after ``cuda::hierarchy``), a query relates
the finer and the coarser of the group's own level and ``level``: a level finer than
the group counts units *inside* it (``block.rank("warp")``: the warp's index in the
block), a coarser one places the group in it (``thread.rank("block")``: the thread's
index in its block; ``block.count("grid")``: blocks of the grid), and the group's own
level gives rank 0, count 1.

========================  ==================================  =================================
group                     levels                              notes
========================  ==================================  =================================
thread, warp, block,      every level                         the warp is the 32-lane hardware
cluster, grid                                                 warp; a block's last warp may be
                                                              partial (``count("warp")``
                                                              rounds up)
logical warp (w)          "thread": lane in the logical       ``count("warp")`` is ``32 // w``
                          warp; "warp": its index in the      (1 for a partial logical warp)
                          hardware warp
group of n warps          "thread", "warp" (index in the      ``count("block")``: groups of the
                          group), "block" (the group's        block (complete ones only with
                          index in the block)                 ``exhaustive=False``)
========================  ==================================  =================================

Linear ranks are x-major (``x + X*(y + Y*z)``).  ``sync()`` is ``__syncthreads``
for a block (also a group of warps, which needs the whole block to call it),
``__syncwarp`` with the exact lane mask for a (logical) warp, nothing for a
thread, the cluster barrier (``barrier.cluster.arrive`` + ``wait``) for a
cluster; a grid barrier is refused (it needs a cooperative launch).

The cluster values come from the hardware registers (``%cluster_ctarank``,
``%cluster_nctarank``) on compute capability 9.0 and later, where a launch that
names no cluster runs every block as a cluster of one; below 9.0 there are no
clusters, so the rank is 0, the count 1 and the barrier ``__syncthreads``.

A *partial* mapping (``group_by(w, exhaustive=False)``, ``w`` not dividing 32) has
``32 // w`` logical warps of ``w`` consecutive lanes in each warp; the last ``32 % w``
lanes are not members: ``is_member()`` is ``lane < (32 // w) * w``, ``rank()`` is
``lane % w`` (meaningful in members only), and ``sync()`` waits for the lanes of the
caller's logical warp and does nothing in the other lanes, so it may be called inside
or outside an ``is_member()`` guard.  ``this_block().group_by(n,
exhaustive=False)`` has the complete groups of ``n`` whole warps as members
(``is_member()`` is False in the warps after them); its ``sync()`` is still
``__syncthreads``, called by the whole block (outside the guard).  Every other
group covers its threads: ``is_member()`` is True.
"""

from __future__ import annotations

import functools

import numpy as np

from ..._errors import InvalidArgumentTypeError, InvalidArgumentValueError, InvalidGroupError
from . import _compat as C
from .types import GroupType

__all__ = ["install"]

_ORDER = ("thread", "warp", "block", "cluster", "grid")  # finer to coarser


def _levels(group: GroupType) -> tuple:
    """The levels a group's queries accept (NVIDIA's per-kind lists)."""
    if group.kind == "warp" and group.width != 32:
        return ("thread", "warp")  # a logical warp: its lanes, its hardware warp
    if group.kind == "warps":
        return ("thread", "warp", "block")  # its threads, its warps, its block
    return _ORDER


def _level(group: GroupType, level, method: str) -> str:
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
        if value in _ORDER:
            why = (" (a logical warp answers for its lanes and its hardware warp only)" if group.kind == "warp"
                   else " (a group of warps answers for its threads, its warps and its block only)")
        raise InvalidArgumentValueError(
            f"{label}.{method}(): level={level.literal_value!r} does not apply to this group{why}; use one "
            f"of {names}"
        )
    return value


def _dtype(group, dtype, method):
    from .types import numba_type_of_dtype, describe_type
    from ...core import spec

    d = describe_type(dtype)
    if not isinstance(d, spec.DtypeArg) or d.dtype.kind not in "iu":
        raise InvalidArgumentTypeError(
            f"{group.descriptor().label}.{method}(): dtype={spec.describe(d)} is not an integer type; "
            "pass an integer dtype such as np.int32 or np.uint64"
        )
    return numba_type_of_dtype(d.dtype)


# ---- the values, as device code ---------------------------------------------------------

_DEVICE_FUNCTIONS: dict = {}


def _device(key, pyfunc):
    """A device function per (method, group, level), compiled once and inlined by LTO."""
    if key not in _DEVICE_FUNCTIONS:
        _DEVICE_FUNCTIONS[key] = C.cuda.jit(device=True)(pyfunc)
    return _DEVICE_FUNCTIONS[key]


# Building blocks, device functions inlined by LTO (numba compiles each lambda on its own,
# so a lambda calls these through its closure rather than local helpers).
_PARTS: dict = {}


def _part(name):
    if not _PARTS:
        cuda = C.cuda
        for key, fn in {
            "tid": lambda: cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z),
            "threads": lambda: cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z,
            "bid": lambda: cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z),
            "blocks": lambda: cuda.gridDim.x * cuda.gridDim.y * cuda.gridDim.z,
        }.items():
            _PARTS[key] = C.cuda.jit(device=True)(fn)
    return _PARTS[name]


def _rank_impl(group: GroupType, level: str):
    """rank() of a group that is not a cluster and does not reach the cluster level."""
    kind, width = group.kind, group.width
    tid, threads, bid = _part("tid"), _part("threads"), _part("bid")
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
    fine, coarse = sorted((kind, level), key=_ORDER.index)
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


def _count_impl(group: GroupType, level: str):
    """count() of a group that is not a cluster and does not reach the cluster level."""
    kind, width = group.kind, group.width
    threads, blocks = _part("threads"), _part("blocks")
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
    fine, coarse = sorted((kind, level), key=_ORDER.index)
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


def _sync_impl(group: GroupType, method: str):
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


def _member_impl(group: GroupType):
    tid, threads = _part("tid"), _part("threads")
    if group.kind == "warps":  # exhaustive=False: the complete groups of whole warps
        span = 32 * group.width
        return lambda: tid() // span < threads() // span
    members = 32 // group.width * group.width  # complete logical warps of each warp
    return lambda: tid() % 32 < members


def _value(method, group, level):
    make = _rank_impl if method == "rank" else _count_impl
    return _device((method, group.kind, group.width, group.exhaustive, level), make(group, level))


# ---- thread-block clusters ---------------------------------------------------------------
# Stubs typed and lowered here (``_install_cluster_registers``).  A cluster method calls
# them from its inlined overload, not from a ``_device`` function: they are lowered in
# the kernel, whose target decides between the cluster registers and the one-block
# fallback, where a device function compiled once would keep the first target's PTX.

def _cluster_block_rank():
    """%cluster_ctarank: the calling block's linear (x-major) rank in its cluster."""


def _cluster_block_count():
    """%cluster_nctarank: blocks in the calling block's cluster."""


def _cluster_index():
    """%clusterid: the linear (x-major) index of the calling block's cluster in the grid."""


def _cluster_total():
    """%nclusterid: clusters in the grid."""


def _cluster_sync():
    """Every thread of every block of the cluster arrives (release), then waits (acquire)."""


def _cluster_sync_aligned():
    """``_cluster_sync`` with ``.aligned``: every thread of each warp executes the same barrier."""


# x-major linear index of a 3-D register pair: z * (ny * nx) + y * nx + x
_LINEAR_PTX = ("{{\n\t.reg .u32 %cx, %cy, %cz, %nx, %ny;\n\tmov.u32 %cx, %{i}.x;\n\tmov.u32 %cy, %{i}.y;\n\t"
               "mov.u32 %cz, %{i}.z;\n\tmov.u32 %nx, %{n}.x;\n\tmov.u32 %ny, %{n}.y;\n\t"
               "mad.lo.u32 %cz, %cz, %ny, %cy;\n\tmad.lo.u32 $0, %cz, %nx, %cx;\n\t}}")
_PRODUCT_PTX = ("{{\n\t.reg .u32 %nx, %ny, %nz;\n\tmov.u32 %nx, %{n}.x;\n\tmov.u32 %ny, %{n}.y;\n\t"
                "mov.u32 %nz, %{n}.z;\n\tmul.lo.u32 %nx, %nx, %ny;\n\tmul.lo.u32 $0, %nx, %nz;\n\t}}")

# stub -> (PTX on CC >= 9.0, what it is below: a value, PTX of a value, or a barrier's PTX)
_CLUSTER_PTX = {
    _cluster_block_rank: ("mov.u32 $0, %cluster_ctarank;", 0),
    _cluster_block_count: ("mov.u32 $0, %cluster_nctarank;", 1),
    # Below 9.0 every block is its own cluster: the cluster index is the block index.
    _cluster_index: (_LINEAR_PTX.format(i="clusterid", n="nclusterid"), ("u32", _LINEAR_PTX.format(i="ctaid", n="nctaid"))),
    _cluster_total: (_PRODUCT_PTX.format(n="nclusterid"), ("u32", _PRODUCT_PTX.format(n="nctaid"))),
    _cluster_sync: ("barrier.cluster.arrive;\n\tbarrier.cluster.wait;", "barrier.sync 0;"),
    _cluster_sync_aligned: ("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;", "bar.sync 0;"),
}
_CLUSTER_MIN_CC = (9, 0)


def _install_cluster_registers():
    types = C.types
    for stub, (ptx, fallback) in _CLUSTER_PTX.items():
        restype = types.none if isinstance(fallback, str) else types.int32

        class Template(C.AbstractTemplate):
            key = stub
            _restype = restype

            def generic(self, args, kws):
                return C.signature(self._restype)

        C.typing_registry.register_global(stub, types.Function(Template))

        def lower(lower, target, args, kws, ptx=ptx, fallback=fallback):
            modern = C.target_compute_capability(lower) >= _CLUSTER_MIN_CC
            if isinstance(fallback, str):
                C.inline_ptx_barrier(ptx if modern else fallback)
                lower.store_var(target, None)
            elif modern:
                lower.store_var(target, C.inline_ptx_u32(ptx))
            elif isinstance(fallback, tuple):
                lower.store_var(target, C.inline_ptx_u32(fallback[1]))
            else:
                lower.store_var(target, C.i32_constant(fallback))

        C.lowering_registry.lower(stub)(lower)


def _cluster_terms(method: str, kind: str, level: str):
    """``(register, scale, offset)`` with the value ``register() * scale() + offset()`` for a
    query that reaches the cluster level (the group or ``level`` is the cluster, the other
    is finer) or the cluster-in-grid query; ``scale``/``offset`` are plain device functions."""
    fine, coarse = sorted((kind, level), key=_ORDER.index)
    one, zero = _device(("one",), lambda: 1), _device(("zero",), lambda: 0)
    tid, threads = _part("tid"), _part("threads")
    if (fine, coarse) == ("cluster", "grid"):
        return (_cluster_index if method == "rank" else _cluster_total), one, zero
    scale = {"thread": threads, "warp": _device(("warps",), lambda: (threads() + 31) // 32), "block": one}[fine]
    if method == "count":
        return _cluster_block_count, scale, zero
    offset = {"thread": tid, "warp": _device(("warp_rank",), lambda: tid() // 32), "block": zero}[fine]
    return _cluster_block_rank, scale, offset


def _reaches_cluster(kind: str, level: str) -> bool:
    return "cluster" in (kind, level) and kind != level


def _cluster_query(method: str, kind: str, level: str, ty=None):
    """A query through the cluster registers, written in the inlined overload (see above)."""
    register, scale, offset = _cluster_terms(method, kind, level)
    if ty is None:
        return lambda group, level=None: register() * scale() + offset()
    return lambda group, dtype, level=None: ty(register() * scale() + offset())


def _cluster_sync_method(method: str):
    if method == "sync":
        return lambda group: _cluster_sync()
    return lambda group: _cluster_sync_aligned()


def install():
    """Register the methods on GroupType (called once by ``activate``)."""
    from .typing import located_method

    _install_cluster_registers()

    def overload(name):
        register = C.overload_inlined_method(GroupType, name)
        return lambda typer: register(functools.wraps(typer)(located_method(typer)))

    def query(method):
        def typer(group, lv, ty=None):
            if _reaches_cluster(group.kind, lv):
                return _cluster_query(method, group.kind, lv, ty)
            if group.kind == "cluster":  # the cluster's own level
                value = _device((method, "same"), (lambda: 0) if method == "rank" else (lambda: 1))
            else:
                value = _value(method, group, lv)
            if ty is None:
                return lambda group, level=None: value()
            return lambda group, dtype, level=None: ty(value())
        return typer

    rank_value, count_value = query("rank"), query("count")

    @overload("rank")
    def rank(group, level=None):
        lv = _level(group, level, "rank")
        return None if lv is None else rank_value(group, lv)

    @overload("count")
    def count(group, level=None):
        lv = _level(group, level, "count")
        return None if lv is None else count_value(group, lv)

    @overload("rank_as")
    def rank_as(group, dtype, level=None):
        lv = _level(group, level, "rank_as")
        return None if lv is None else rank_value(group, lv, _dtype(group, dtype, "rank_as"))

    @overload("count_as")
    def count_as(group, dtype, level=None):
        lv = _level(group, level, "count_as")
        return None if lv is None else count_value(group, lv, _dtype(group, dtype, "count_as"))

    @overload("is_member")
    def is_member(group):
        if (group.kind == "warp" and 32 % group.width) or not group.exhaustive:
            # A partial logical warp (lanes 0..width-1 of each warp), or the complete
            # groups of this_block().group_by(n, exhaustive=False).
            member = _device(("is_member", group.kind, group.width), _member_impl(group))
            return lambda group: member()
        # Every other group covers its threads exactly (power-of-two logical warps, whole
        # warps); a thread is always a member of its own groups.
        return lambda group: True

    @overload("sync")
    def sync(group):
        if group.kind == "cluster":
            return _cluster_sync_method("sync")
        barrier = _device(("sync", group.kind, group.width), _sync_impl(group, "sync"))
        return lambda group: barrier()

    @overload("sync_aligned")
    def sync_aligned(group):
        if group.kind == "cluster":
            return _cluster_sync_method("sync_aligned")
        barrier = _device(("sync", group.kind, group.width), _sync_impl(group, "sync_aligned"))
        return lambda group: barrier()
