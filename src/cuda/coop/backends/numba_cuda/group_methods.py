"""Group queries and barriers on classic numba-cuda: ``rank``, ``count``, ``rank_as``,
``count_as``, ``is_member``, ``sync`` and ``sync_aligned``.

The device code is the numba-cuda-mlir backend's (``backends/_group_methods.py``, which
documents the semantics), compiled by numba-cuda; the methods are inlined overloads on
this backend's ``GroupType``.  The cluster registers and barriers are intrinsics that
emit the inline PTX of ``G.CLUSTER_PTX`` for the kernel's target.
"""

from __future__ import annotations

import functools

from .. import _group_methods as G
from . import _compat as C
from .types import GroupType, describe_type

__all__ = ["install"]


_CLUSTER_REGISTERS: dict = {}


def _cluster_register(name, ptx, fallback):
    """An intrinsic of no arguments: the register's value (int32), or the barrier."""
    barrier = isinstance(fallback, str)

    def typer(typingctx):
        def codegen(context, builder, sig, args):
            modern = C.target_cc() >= G.CLUSTER_MIN_CC
            if barrier:
                C.inline_ptx_barrier(builder, ptx if modern else fallback)
                return context.get_dummy_value()
            if modern or isinstance(fallback, tuple):
                return C.inline_ptx_u32(builder, ptx if modern else fallback[1])
            return context.get_constant(C.types.int32, fallback)

        return C.signature(C.types.none if barrier else C.types.int32), codegen

    typer.__name__ = typer.__qualname__ = f"_cluster_{name}"
    return C.intrinsic(typer)


def install():
    """Register the methods on GroupType (called once, by the backend's ``ready()``)."""
    from .typing import located_method

    for name, (ptx, fallback) in G.CLUSTER_PTX.items():
        _CLUSTER_REGISTERS[name] = _cluster_register(name, ptx, fallback)

    def overload(name):
        register = C.overload_method(GroupType, name, inline="always", prefer_literal=True)
        return lambda typer: register(functools.wraps(typer)(located_method(typer)))

    rank_value, count_value = G.query(C, _CLUSTER_REGISTERS, "rank"), G.query(C, _CLUSTER_REGISTERS, "count")

    @overload("rank")
    def rank(group, level=None):
        lv = G.level_of(C, group, level, "rank")
        return None if lv is None else rank_value(group, lv)

    @overload("count")
    def count(group, level=None):
        lv = G.level_of(C, group, level, "count")
        return None if lv is None else count_value(group, lv)

    @overload("rank_as")
    def rank_as(group, dtype, level=None):
        lv = G.level_of(C, group, level, "rank_as")
        return None if lv is None else rank_value(group, lv, G.dtype_of(C, describe_type, group, dtype, "rank_as"))

    @overload("count_as")
    def count_as(group, dtype, level=None):
        lv = G.level_of(C, group, level, "count_as")
        return None if lv is None else count_value(group, lv,
                                                   G.dtype_of(C, describe_type, group, dtype, "count_as"))

    @overload("is_member")
    def is_member(group):
        if (group.kind == "warp" and 32 % group.width) or not group.exhaustive:
            member = G.device(C, ("is_member", group.kind, group.width), G.member_impl(C, group))
            return lambda group: member()
        return lambda group: True

    def _sync(method):
        def sync(group):
            if group.kind == "cluster":
                return G.cluster_sync(_CLUSTER_REGISTERS, method)
            barrier = G.device(C, ("sync", group.kind, group.width), G.sync_impl(C, group, method))
            return lambda group: barrier()

        return sync

    overload("sync")(_sync("sync"))
    overload("sync_aligned")(_sync("sync_aligned"))
