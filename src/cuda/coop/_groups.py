"""Cooperative groups: who participates in an operation.

Groups are compile-time descriptors.  ``this_block()`` is the whole thread block
(its shape comes from the launch configuration, never from arguments);
``this_warp()`` is the 32-lane hardware warp; ``this_warp().group_by(w)`` splits
each warp into logical warps of ``w`` consecutive lanes; ``this_block().group_by(n)``
splits the block into groups of ``n`` consecutive warps.  ``this_thread()`` is the
calling thread alone; ``this_grid()`` and ``this_cluster()`` describe the launch
(their ``rank``/``count`` queries work; no cooperative operation runs over them).

Inside a kernel every group has ``rank(level=None)``, ``count(level=None)``,
``rank_as(dtype, level=None)``, ``count_as(dtype, level=None)``, ``is_member()``,
``sync()`` and ``sync_aligned()`` (see :mod:`cuda.coop.backends.numba_mlir.group_methods`).
"""

from __future__ import annotations

from ._errors import InvalidGroupWidthError
from ._kernel_api import kernel_function

__all__ = ["ThreadGroup", "BlockGroup", "WarpGroup", "WarpsGroup", "SingleThreadGroup", "GridGroup", "ClusterGroup",
           "this_block", "this_warp", "this_thread", "this_grid", "this_cluster", "LOGICAL_WARP_WIDTHS"]

LOGICAL_WARP_WIDTHS = (1, 2, 4, 8, 16, 32)


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

    def group_by(self, warps_per_group: int) -> "WarpsGroup":
        """Split the block into groups of ``warps_per_group`` consecutive warps."""
        return WarpsGroup(warps_per_group)

    def __repr__(self):
        return "coop.this_block()"


class WarpsGroup(ThreadGroup):
    """``warps`` consecutive hardware warps of a block (``this_block().group_by(warps)``)."""

    kind = "warps"

    def __init__(self, warps: int):
        self.warps = check_warps_per_group(warps)

    def _key(self):
        return (self.warps,)

    def __repr__(self):
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
    """A hardware warp (``width == 32``) or a logical warp of ``width`` lanes."""

    kind = "warp"

    def __init__(self, width: int = 32):
        self.width = check_warp_width(width)

    def _key(self):
        return (self.width,)

    @property
    def is_logical(self) -> bool:
        return self.width != 32

    def group_by(self, width: int, *, exhaustive: bool = True) -> "WarpGroup":
        """Split each warp into logical warps of ``width`` consecutive lanes.

        ``exhaustive`` is accepted for NVIDIA's spelling; power-of-two widths
        always cover the whole warp.
        """
        if self.width != 32:
            raise InvalidGroupWidthError(
                f"group_by(): the group is already a logical warp of width {self.width}; "
                "call group_by() on coop.this_warp()"
            )
        return WarpGroup(width)

    def __repr__(self):
        return "coop.this_warp()" if self.width == 32 else f"coop.this_warp().group_by({self.width})"


MAX_WARPS_PER_BLOCK = 32  # 1024 threads


def check_warps_per_group(warps) -> int:
    if isinstance(warps, bool) or not isinstance(warps, int) or not 1 <= warps <= MAX_WARPS_PER_BLOCK:
        raise InvalidGroupWidthError(
            f"coop.this_block().group_by(): warps_per_group={warps!r} is not a warp count (a block has "
            f"at most {MAX_WARPS_PER_BLOCK} warps); pass an int from 1 to {MAX_WARPS_PER_BLOCK}"
        )
    return warps


def check_warp_width(width) -> int:
    if isinstance(width, bool) or not isinstance(width, int) or width not in LOGICAL_WARP_WIDTHS:
        raise InvalidGroupWidthError(
            f"coop.this_warp().group_by(): width={width!r} is not a logical warp width; use one of "
            f"{', '.join(map(str, LOGICAL_WARP_WIDTHS))}"
        )
    return width


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
