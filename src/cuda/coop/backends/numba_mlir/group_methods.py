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


def _level(group, level, method):
    return G.level_of(C, group, level, method)


def _dtype(group, dtype, method):
    return G.dtype_of(C, describe_type, group, dtype, method)


def _device(key, pyfunc):
    return G.device(C, key, pyfunc)


def _sync_impl(group, method):
    return G.sync_impl(C, group, method)


def _member_impl(group):
    return G.member_impl(C, group)


# ---- thread-block clusters ---------------------------------------------------------------
# One stub per register of G.CLUSTER_PTX, typed and lowered here (see _group_methods.py).
_CLUSTER_REGISTERS: dict = {}


def _install_cluster_registers():
    types = C.types
    for name, (ptx, fallback) in G.CLUSTER_PTX.items():
        def stub():
            pass

        stub.__name__ = stub.__qualname__ = f"_cluster_{name}"
        restype = types.none if isinstance(fallback, str) else types.int32

        class Template(C.AbstractTemplate):
            key = stub
            _restype = restype

            def generic(self, args, kws):
                return C.signature(self._restype)

        C.typing_registry.register_global(stub, types.Function(Template))

        def lower(lower, target, args, kws, ptx=ptx, fallback=fallback):
            modern = C.target_compute_capability(lower) >= G.CLUSTER_MIN_CC
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
        _CLUSTER_REGISTERS[name] = stub


def _block_sync_stub():
    """``block.sync()`` (and a group of warps' ``sync()``): typed here, lowered to
    ``nvvm.barrier`` (see ``_compat.user_block_barrier``)."""


def _install_block_sync():
    class Template(C.AbstractTemplate):
        key = _block_sync_stub

        def generic(self, args, kws):
            return C.signature(C.types.none)

    C.typing_registry.register_global(_block_sync_stub, C.types.Function(Template))

    def lower(lower, target, args, kws):
        C.user_block_barrier()
        lower.store_var(target, None)

    C.lowering_registry.lower(_block_sync_stub)(lower)


def is_block_sync(fnty) -> bool:
    """Whether a typed call is a block-wide barrier the kernel wrote: ``block.sync()`` (inlined
    by the time the lowering reads the IR) or ``cuda.syncthreads()``."""
    return isinstance(fnty, C.types.Function) and fnty.typing_key in (_block_sync_stub, C.cuda.syncthreads)


def install():
    """Register the methods on GroupType (called once, by the backend's ``ready()``)."""
    from .typing import located_method

    _install_cluster_registers()
    _install_block_sync()

    def overload(name):
        register = C.overload_inlined_method(GroupType, name)
        return lambda typer: register(functools.wraps(typer)(located_method(typer)))

    rank_value, count_value = G.query(C, _CLUSTER_REGISTERS, "rank"), G.query(C, _CLUSTER_REGISTERS, "count")

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
            return G.cluster_sync(_CLUSTER_REGISTERS, "sync")
        if group.kind in ("block", "warps"):
            return lambda group: _block_sync_stub()
        barrier = _device(("sync", group.kind, group.width), _sync_impl(group, "sync"))
        return lambda group: barrier()

    @overload("sync_aligned")
    def sync_aligned(group):
        if group.kind == "cluster":
            return G.cluster_sync(_CLUSTER_REGISTERS, "sync_aligned")
        if group.kind in ("block", "warps"):
            return lambda group: _block_sync_stub()
        barrier = _device(("sync", group.kind, group.width), _sync_impl(group, "sync_aligned"))
        return lambda group: barrier()
