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

from .. import _group_methods as G
from . import _compat as C
from .types import GroupType, describe_type

__all__ = ["install"]

_ORDER = G.ORDER


def _level(group, level, method):
    return G.level_of(C, group, level, method)


def _dtype(group, dtype, method):
    return G.dtype_of(C, describe_type, group, dtype, method)


def _device(key, pyfunc):
    return G.device(C, key, pyfunc)


def _part(name):
    return G.part(C, name)


def _sync_impl(group, method):
    return G.sync_impl(C, group, method)


def _member_impl(group):
    return G.member_impl(C, group)


def _value(method, group, level):
    return G.value_of(C, method, group, level)


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
