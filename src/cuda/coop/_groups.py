"""Cooperative groups: who participates in an operation.

Groups are compile-time descriptors.  ``this_block()`` is the whole thread block
(its shape comes from the launch configuration, never from arguments);
``this_warp()`` is the 32-lane hardware warp; ``this_warp().group_by(w)`` splits
each warp into logical warps of ``w`` consecutive lanes (``w`` = 1, 2, 4, 8, 16, 32),
and ``this_warp().group_by(w, exhaustive=False)`` with ``w`` from 17 to 31 makes one
*partial* logical warp per warp, lanes ``0 .. w-1`` (taken by ``coop.reduce`` and
``coop.sum`` only: CUB's WarpReduce runs one such group per warp); ``this_block().group_by(n)``
splits the block into groups of ``n`` consecutive warps (the last one smaller when ``n`` does
not divide the block's warps), and ``this_block().group_by(n, exhaustive=False)`` into the
complete groups only: the warps past the last complete group are not members.  ``this_thread()`` is the
calling thread alone; ``this_grid()`` and ``this_cluster()`` describe the launch
(their ``rank``/``count`` queries work; no cooperative operation runs over them).

Inside a kernel every group has ``rank(level=None)``, ``count(level=None)``,
``rank_as(dtype, level=None)``, ``count_as(dtype, level=None)``, ``is_member()``,
``sync()`` and ``sync_aligned()`` (see :mod:`cuda.coop.backends.numba_mlir.group_methods`).
"""

from __future__ import annotations

from ._errors import InvalidArgumentTypeError, InvalidGroupWidthError
from ._kernel_api import as_python_int, kernel_function

__all__ = ["ThreadGroup", "BlockGroup", "WarpGroup", "WarpsGroup", "SingleThreadGroup", "GridGroup", "ClusterGroup",
           "this_block", "this_warp", "this_thread", "this_grid", "this_cluster", "LOGICAL_WARP_WIDTHS",
           "PARTIAL_WARP_WIDTHS", "REDUCIBLE_PARTIAL_WIDTHS", "is_partial_warp_width"]

# Widths that tile the 32-lane warp: every lane is a member of one logical warp.
LOGICAL_WARP_WIDTHS = (1, 2, 4, 8, 16, 32)
# Widths that do not divide 32 (exhaustive=False, NVIDIA's partial mapping): each warp holds
# 32 // w logical warps of w consecutive lanes, and its last 32 % w lanes are not members.
# Every such group answers the queries and sync().  CUB's WarpReduce handles a
# non-power-of-two LOGICAL_WARP_THREADS through shared memory with the member mask of lanes
# 0..w-1 whatever the lane, so only widths above 16 (one logical warp per warp) can run a
# collective: coop.reduce and coop.sum take those.
PARTIAL_WARP_WIDTHS = tuple(w for w in range(3, 32) if 32 % w)
REDUCIBLE_PARTIAL_WIDTHS = tuple(range(17, 32))


def is_partial_warp_width(width: int) -> bool:
    """Whether logical warps of ``width`` lanes leave lanes of each warp out (widths not dividing 32)."""
    return 32 % width != 0


class ThreadGroup:
    """Base class of group descriptors."""

    kind: str = "?"

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((type(self), self._key()))

    def _key(self):
        return ()


class BlockGroup(ThreadGroup):
    """All threads of the thread block (1-D, 2-D or 3-D; linear rank is x-major)."""

    kind = "block"

    def group_by(self, warps_per_group: int, *, exhaustive: bool = True) -> "WarpsGroup":
        """Split the block into groups of ``warps_per_group`` consecutive warps.

        ``exhaustive=True`` (the default): every warp is in a group, the last group is
        smaller when ``warps_per_group`` does not divide the block's warps.
        ``exhaustive=False`` (NVIDIA's partial mapping): only complete groups; the warps
        past the last complete group are not members (``is_member()`` is False there).
        """
        if not isinstance(exhaustive, bool):
            raise InvalidArgumentTypeError(
                f"coop.this_block().group_by(): exhaustive={exhaustive!r} is not a bool; pass "
                "exhaustive=True or exhaustive=False"
            )
        return WarpsGroup(warps_per_group, exhaustive=exhaustive)

    def __repr__(self):
        return "coop.this_block()"


class WarpsGroup(ThreadGroup):
    """``warps`` consecutive hardware warps of a block (``this_block().group_by(warps)``);
    ``exhaustive=False``: complete groups only (the trailing warps are not members)."""

    kind = "warps"

    def __init__(self, warps: int, *, exhaustive: bool = True):
        self.warps = check_warps_per_group(warps)
        self.exhaustive = exhaustive

    def _key(self):
        return (self.warps, self.exhaustive)

    def __repr__(self):
        if not self.exhaustive:
            return f"coop.this_block().group_by({self.warps}, exhaustive=False)"
        return f"coop.this_block().group_by({self.warps})"


class SingleThreadGroup(ThreadGroup):
    """The calling thread alone (``this_thread()``)."""

    kind = "thread"

    def __repr__(self):
        return "coop.this_thread()"


class GridGroup(ThreadGroup):
    """Every thread of the launch (``this_grid()``): a descriptor for queries."""

    kind = "grid"

    def __repr__(self):
        return "coop.this_grid()"


class ClusterGroup(ThreadGroup):
    """The thread-block cluster of the calling block (``this_cluster()``): a descriptor for queries."""

    kind = "cluster"

    def __repr__(self):
        return "coop.this_cluster()"


class WarpGroup(ThreadGroup):
    """A hardware warp (``width == 32``) or a logical warp of ``width`` lanes.

    A width that does not divide 32 (``group_by(width, exhaustive=False)``) is a *partial*
    mapping: each warp holds ``32 // width`` logical warps of consecutive lanes and its last
    ``32 % width`` lanes are not members.
    """

    kind = "warp"

    def __init__(self, width: int = 32, *, exhaustive: bool = True):
        self.width = check_warp_width(width, exhaustive=exhaustive)

    def _key(self):
        return (self.width,)

    @property
    def is_logical(self) -> bool:
        return self.width != 32

    @property
    def is_partial(self) -> bool:
        """Whether the last ``32 % width`` lanes of each warp are not members."""
        return is_partial_warp_width(self.width)

    def group_by(self, width: int, *, exhaustive: bool = True) -> "WarpGroup":
        """Split each warp into logical warps of ``width`` consecutive lanes.

        ``width`` is 1, 2, 4, 8, 16 or 32: the logical warps tile the warp, and
        ``exhaustive`` (NVIDIA's spelling) may be either value.  Any other width from 3
        to 31 needs ``exhaustive=False``: each warp holds ``32 // width`` logical warps
        of consecutive lanes and its last ``32 % width`` lanes are not members
        (``is_member()`` is False there).  Every such group answers ``rank()``,
        ``count()``, ``is_member()`` and ``sync()``; with a width from 17 to 31 (one
        logical warp per warp) ``coop.reduce`` and ``coop.sum`` take it too: guard the
        call with ``if group.is_member():``.
        """
        if self.width != 32:
            raise InvalidGroupWidthError(
                f"group_by(): the group is already a logical warp of width {self.width}; "
                "call group_by() on coop.this_warp()"
            )
        if not isinstance(exhaustive, bool):
            raise InvalidArgumentTypeError(
                f"coop.this_warp().group_by(): exhaustive={exhaustive!r} is not a bool; pass "
                "exhaustive=True or exhaustive=False"
            )
        return WarpGroup(width, exhaustive=exhaustive)

    def __repr__(self):
        if self.width == 32:
            return "coop.this_warp()"
        if self.is_partial:
            return f"coop.this_warp().group_by({self.width}, exhaustive=False)"
        return f"coop.this_warp().group_by({self.width})"


MAX_WARPS_PER_BLOCK = 32  # 1024 threads


def check_warps_per_group(warps) -> int:
    count = as_python_int(warps)
    if count is None or not 1 <= count <= MAX_WARPS_PER_BLOCK:
        raise InvalidGroupWidthError(
            f"coop.this_block().group_by(): warps_per_group={warps!r} is not a warp count (a block has "
            f"at most {MAX_WARPS_PER_BLOCK} warps); pass an int from 1 to {MAX_WARPS_PER_BLOCK}"
        )
    return count


_WIDTH_CHOICES = (f"use one of {', '.join(map(str, LOGICAL_WARP_WIDTHS))}, or another width from 3 to 31 "
                  "with exhaustive=False (the last 32 % width lanes of each warp are not members; "
                  "coop.reduce and coop.sum take widths 17 to 31)")


def check_warp_width(width, *, exhaustive: bool = True) -> int:
    """``width`` when ``group_by(width, exhaustive=exhaustive)`` describes a supported logical warp."""
    call = "coop.this_warp().group_by()"
    if as_python_int(width) is None:
        raise InvalidGroupWidthError(f"{call}: width={width!r} is not a logical warp width; {_WIDTH_CHOICES}")
    width = as_python_int(width)
    if width in LOGICAL_WARP_WIDTHS:
        return width
    if width in PARTIAL_WARP_WIDTHS:
        if exhaustive:
            groups, left = 32 // width, 32 % width
            raise InvalidGroupWidthError(
                f"{call}: width={width} does not divide the 32-lane warp, so exhaustive=True (the default) "
                f"cannot hold; pass group_by({width}, exhaustive=False) for {groups} logical warp"
                f"{'s' if groups > 1 else ''} of {width} lanes per warp (the last {left} lanes are not "
                "members; guard calls with `if group.is_member():`"
                + ("; coop.reduce and coop.sum take it)" if width in REDUCIBLE_PARTIAL_WIDTHS else
                   "; it answers rank(), count(), is_member() and sync(), and no collective takes it)")
                + ", or use one of 1, 2, 4, 8, 16, 32"
            )
        return width
    raise InvalidGroupWidthError(
        f"{call}: width={width!r} is not a logical warp width; {_WIDTH_CHOICES}"
    )


@kernel_function(host_callable=True)
def this_block() -> BlockGroup:
    """The thread block that runs the kernel.

    Its shape is the launch block shape (``kernel[grid, block]``); a kernel is
    compiled once per block shape.
    """
    return BlockGroup()


@kernel_function(host_callable=True)
def this_warp() -> WarpGroup:
    """The 32-lane hardware warp of the calling thread.

    Warp operations need the block's thread count to be a multiple of 32.
    Use ``this_warp().group_by(width)`` for logical warps.
    """
    return WarpGroup(32)


@kernel_function(host_callable=True)
def this_thread() -> SingleThreadGroup:
    """The calling thread alone: reductions over it fold its own items."""
    return SingleThreadGroup()


@kernel_function(host_callable=True)
def this_grid() -> GridGroup:
    """Every thread of the launch.  A descriptor: ``rank``/``count`` work, no operation takes it."""
    return GridGroup()


@kernel_function(host_callable=True)
def this_cluster() -> ClusterGroup:
    """The calling block's thread-block cluster.  A descriptor: ``rank``/``count`` work."""
    return ClusterGroup()
