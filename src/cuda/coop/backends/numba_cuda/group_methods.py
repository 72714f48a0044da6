"""Group queries and barriers on classic numba-cuda: ``rank``, ``count``, ``rank_as``,
``count_as``, ``is_member``, ``sync`` and ``sync_aligned``.

The device code is the numba-cuda-mlir backend's (``backends/_group_methods.py``, which
documents the semantics), compiled by numba-cuda; the methods are inlined overloads on
this backend's ``GroupType``.  Queries that reach the thread-block cluster level are
refused by name: this backend has no cluster groups.
"""

from __future__ import annotations

import functools

from ..._diagnostics import raise_at
from ..._errors import CoopError
from .. import _group_methods as G
from . import _compat as C
from .types import GroupType, describe_type
from .typing import unsupported

__all__ = ["install"]


def _located(fn):
    """Re-raise cuda-coop errors of a method typer at the line of the call being typed."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except CoopError as exc:
            loc, function = C.typing_location()
            raise_at(exc, getattr(loc, "filename", None), getattr(loc, "line", None), function)

    return wrapper


def _no_cluster(group, level, method):
    if group.kind == "cluster" or level == "cluster":
        raise unsupported(f"{group.descriptor().label}.{method}(level={level!r})",
                          "query the block or the grid, or compile this kernel with numba-cuda-mlir")


def _query(method):
    def typer(group, lv, ty=None):
        _no_cluster(group, lv, method)
        value = G.value_of(C, method, group, lv)
        if ty is None:
            return lambda group, level=None: value()
        return lambda group, dtype, level=None: ty(value())

    return typer


def install():
    """Register the methods on GroupType (called once by ``activate``)."""

    def overload(name):
        register = C.overload_method(GroupType, name, inline="always", prefer_literal=True)
        return lambda typer: register(functools.wraps(typer)(_located(typer)))

    rank_value, count_value = _query("rank"), _query("count")

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
            _no_cluster(group, None, method)
            barrier = G.device(C, ("sync", group.kind, group.width), G.sync_impl(C, group, method))
            return lambda group: barrier()

        return sync

    overload("sync")(_sync("sync"))
    overload("sync_aligned")(_sync("sync_aligned"))
