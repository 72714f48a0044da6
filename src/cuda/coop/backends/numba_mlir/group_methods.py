"""Group queries and barriers inside kernels: ``rank``, ``count``, ``rank_as``, ``count_as``,
``is_member``, ``sync`` and ``sync_aligned`` on every group descriptor.

Each method is a small Python implementation, chosen at compile time from the
group's kind and inlined into the caller (``inline="always"``: a group is a
compile-time descriptor with no run-time value to pass to a function).

``level`` names the unit counted, and its default is the thread:

============  =====================================  ====================================
group         ``rank(level)``                        ``count(level)``
============  =====================================  ====================================
block         "thread": linear thread id             threads of the block
              "warp": warp index in the block         warps of the block (last may be partial)
warp (w)      "thread": lane in the (logical) warp    ``w``
partial (w)   "thread": the lane (``0 .. w-1`` in      ``w``
              members; ``w .. 31`` elsewhere)
warps (n)     "thread": rank in the n-warp group      ``32 * n``
              "warp": warp index in the group         ``n``
thread        "thread": 0                             1
grid          "thread" / "gpu_thread": global rank    threads of the launch
              "block": linear block index             blocks of the launch
cluster       "block": block rank in the cluster      blocks of the cluster
              "thread": block rank * block threads    threads of the cluster
              + thread id
============  =====================================  ====================================

Linear ranks are x-major (``x + X*(y + Y*z)``).  ``sync()`` is ``__syncthreads``
for a block (also a group of warps, which needs the whole block to call it),
``__syncwarp`` with the exact lane mask for a (logical) warp, nothing for a
thread, the cluster barrier (``barrier.cluster.arrive`` + ``wait``) for a
cluster; a grid barrier is refused (it needs a cooperative launch).

The cluster values come from the hardware registers (``%cluster_ctarank``,
``%cluster_nctarank``) on compute capability 9.0 and later, where a launch that
names no cluster runs every block as a cluster of one; below 9.0 there are no
clusters, so the rank is 0, the count 1 and the barrier ``__syncthreads``.

A *partial* logical warp (``group_by(w, exhaustive=False)``, ``w`` from 17 to 31)
has lanes ``0 .. w-1`` of each warp as members: ``is_member()`` is ``lane < w``
(True for every other group), ``rank()`` is the lane (meaningful in members
only), and ``sync()`` waits for lanes ``0 .. w-1`` and does nothing in the
other lanes, so it may be called inside or outside an ``is_member()`` guard.
"""

from __future__ import annotations

import functools

import numpy as np

from ..._errors import InvalidArgumentTypeError, InvalidArgumentValueError, InvalidGroupError
from . import _compat as C
from .types import GroupType

__all__ = ["install"]

_LEVELS = {
    "block": ("thread", "warp"),
    "warp": ("thread",),
    "warps": ("thread", "warp"),
    "thread": ("thread",),
    "grid": ("thread", "gpu_thread", "block"),
    "cluster": ("thread", "block"),
}


def _level(group: GroupType, level, method: str) -> str:
    label = group.descriptor().label
    if level is None or isinstance(level, (C.types.NoneType, C.types.Omitted)):
        return "thread"
    if isinstance(level, C.types.UnicodeType):
        return None  # numba's second, non-literal attempt: the literal one already decided
    if not isinstance(level, C.types.StringLiteral):
        raise InvalidArgumentTypeError(
            f"{label}.{method}(): level={level} is not a compile-time string; pass one of "
            + ", ".join(map(repr, _LEVELS[group.kind]))
        )
    value = level.literal_value.strip().lower()
    if value not in _LEVELS[group.kind]:
        raise InvalidArgumentValueError(
            f"{label}.{method}(): level={level.literal_value!r} does not apply to this group; use one of "
            + ", ".join(map(repr, _LEVELS[group.kind]))
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


# Written out in full: numba compiles each lambda on its own, so they cannot call local helpers.
def _rank_impl(group: GroupType, level: str):
    cuda = C.cuda
    kind, width = group.kind, group.width
    if kind == "thread":
        return lambda: 0
    if kind == "grid" and level == "block":
        return lambda: cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    if kind == "grid":
        return lambda: (
            cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
            + cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
            * (cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)))
    if kind == "block" and level == "warp":
        return lambda: (cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)) // 32
    if kind == "block":
        return lambda: cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    if kind == "warp" and 32 % width:
        # A partial logical warp is lanes 0..width-1: its members' rank is their lane.
        return lambda: (cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)) % 32
    span = width if kind == "warp" else 32 * width
    if kind == "warps" and level == "warp":
        return lambda: (cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)) % span // 32
    return lambda: (cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)) % span


def _count_impl(group: GroupType, level: str):
    cuda = C.cuda
    kind, width = group.kind, group.width
    if kind == "thread":
        return lambda: 1
    if kind in ("warp", "warps"):
        n = width if kind == "warp" or level == "warp" else 32 * width
        return lambda: n
    if kind == "block" and level == "warp":
        return lambda: (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z + 31) // 32
    if kind == "block":
        return lambda: cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    if level == "block":
        return lambda: cuda.gridDim.x * cuda.gridDim.y * cuda.gridDim.z
    return lambda: cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z * cuda.gridDim.x * cuda.gridDim.y * cuda.gridDim.z


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
        if 32 % w:
            # Lanes w..31 are not members: they skip the barrier (their own mask would name
            # lanes that never arrive), so sync() is harmless outside an is_member() guard.
            mask = (1 << w) - 1

            def partial_sync():
                if cuda.laneid < w:
                    cuda.syncwarp(np.uint32(mask))

            return partial_sync
        return lambda: cuda.syncwarp(np.uint32(((1 << w) - 1) << ((cuda.laneid // w) * w)))
    raise InvalidGroupError(
        f"{group.descriptor().label}.{method}(): a {group.kind}-wide barrier needs a cooperative "
        "launch, which cuda-coop does not make; end the kernel and launch another, or synchronize "
        "per block with coop.this_block().sync()"
    )


def _member_impl(width: int):
    cuda = C.cuda
    return lambda: (cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)) % 32 < width


def _value(method, group, level):
    make = _rank_impl if method == "rank" else _count_impl
    return _device((method, group.kind, group.width, level), make(group, level))


# ---- thread-block clusters ---------------------------------------------------------------
# Stubs typed and lowered here (``_install_cluster_registers``).  A cluster method calls
# them from its inlined overload, not from a ``_device`` function: they are lowered in
# the kernel, whose target decides between the cluster registers and the one-block
# fallback, where a device function compiled once would keep the first target's PTX.

def _cluster_block_rank():
    """%cluster_ctarank: the calling block's linear (x-major) rank in its cluster."""


def _cluster_block_count():
    """%cluster_nctarank: blocks in the calling block's cluster."""


def _cluster_sync():
    """Every thread of every block of the cluster arrives (release), then waits (acquire)."""


def _cluster_sync_aligned():
    """``_cluster_sync`` with ``.aligned``: every thread of each warp executes the same barrier."""


# stub -> (PTX on CC >= 9.0, what it is below: a value, or PTX)
_CLUSTER_PTX = {
    _cluster_block_rank: ("mov.u32 $0, %cluster_ctarank;", 0),
    _cluster_block_count: ("mov.u32 $0, %cluster_nctarank;", 1),
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
            else:
                lower.store_var(target, C.inline_ptx_u32(ptx) if modern else C.i32_constant(fallback))

        C.lowering_registry.lower(stub)(lower)


def _cluster_method(method: str, level: str | None = None, ty=None):
    """The implementation of a cluster method: ``rank``/``count`` (``ty``: the ``_as`` form) at
    ``level``, or ``sync``/``sync_aligned``; written out per case (numba compiles each alone)."""
    cuda = C.cuda
    rank, count = _cluster_block_rank, _cluster_block_count
    if method == "sync":
        return lambda group: _cluster_sync()
    if method == "sync_aligned":
        return lambda group: _cluster_sync_aligned()
    if ty is None:
        if (method, level) == ("rank", "block"):
            return lambda group, level=None: rank()
        if (method, level) == ("count", "block"):
            return lambda group, level=None: count()
        if method == "rank":
            return lambda group, level=None: (
                rank() * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z)
                + cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z))
        return lambda group, level=None: count() * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z)
    if (method, level) == ("rank", "block"):
        return lambda group, dtype, level=None: ty(rank())
    if (method, level) == ("count", "block"):
        return lambda group, dtype, level=None: ty(count())
    if method == "rank":
        return lambda group, dtype, level=None: ty(
            rank() * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z)
            + cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z))
    return lambda group, dtype, level=None: ty(count() * (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z))


def install():
    """Register the methods on GroupType (called once by ``activate``)."""
    from .typing import located_method

    _install_cluster_registers()

    def overload(name):
        register = C.overload_inlined_method(GroupType, name)
        return lambda typer: register(functools.wraps(typer)(located_method(typer)))

    @overload("rank")
    def rank(group, level=None):
        lv = _level(group, level, "rank")
        if lv is None:
            return None
        if group.kind == "cluster":
            return _cluster_method("rank", lv)
        value = _value("rank", group, lv)
        return lambda group, level=None: value()

    @overload("count")
    def count(group, level=None):
        lv = _level(group, level, "count")
        if lv is None:
            return None
        if group.kind == "cluster":
            return _cluster_method("count", lv)
        value = _value("count", group, lv)
        return lambda group, level=None: value()

    @overload("rank_as")
    def rank_as(group, dtype, level=None):
        lv = _level(group, level, "rank_as")
        if lv is None:
            return None
        if group.kind == "cluster":
            return _cluster_method("rank", lv, _dtype(group, dtype, "rank_as"))
        value, ty = _value("rank", group, lv), _dtype(group, dtype, "rank_as")
        return lambda group, dtype, level=None: ty(value())

    @overload("count_as")
    def count_as(group, dtype, level=None):
        lv = _level(group, level, "count_as")
        if lv is None:
            return None
        if group.kind == "cluster":
            return _cluster_method("count", lv, _dtype(group, dtype, "count_as"))
        value, ty = _value("count", group, lv), _dtype(group, dtype, "count_as")
        return lambda group, dtype, level=None: ty(value())

    @overload("is_member")
    def is_member(group):
        if group.kind == "warp" and 32 % group.width:
            # A partial logical warp: lanes 0..width-1 of each warp.
            member = _device(("is_member", group.kind, group.width), _member_impl(group.width))
            return lambda group: member()
        # Every other group covers its threads exactly (power-of-two logical warps, whole
        # warps); a thread is always a member of its own groups.
        return lambda group: True

    @overload("sync")
    def sync(group):
        if group.kind == "cluster":
            return _cluster_method("sync")
        barrier = _device(("sync", group.kind, group.width), _sync_impl(group, "sync"))
        return lambda group: barrier()

    @overload("sync_aligned")
    def sync_aligned(group):
        if group.kind == "cluster":
            return _cluster_method("sync_aligned")
        barrier = _device(("sync", group.kind, group.width), _sync_impl(group, "sync_aligned"))
        return lambda group: barrier()
