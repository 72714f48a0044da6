"""Cooperative groups: who participates in an operation.

Groups are compile-time descriptors.  ``this_block()`` is the whole thread block
(its shape comes from the launch configuration, never from arguments);
``this_warp()`` is the 32-lane hardware warp; ``this_warp().group_by(w)`` splits
each warp into logical warps of ``w`` consecutive lanes.
"""

from __future__ import annotations

from ._errors import InvalidGroupWidthError
from ._kernel_api import kernel_function

__all__ = ["ThreadGroup", "BlockGroup", "WarpGroup", "this_block", "this_warp", "LOGICAL_WARP_WIDTHS"]

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

    def __repr__(self):
        return "coop.this_block()"


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

    def group_by(self, width: int) -> "WarpGroup":
        """Split each warp into logical warps of ``width`` consecutive lanes."""
        if self.width != 32:
            raise InvalidGroupWidthError(
                f"group_by(): the group is already a logical warp of width {self.width}; "
                "call group_by() on coop.this_warp()"
            )
        return WarpGroup(width)

    def __repr__(self):
        return "coop.this_warp()" if self.width == 32 else f"coop.this_warp().group_by({self.width})"


def check_warp_width(width) -> int:
    if isinstance(width, bool) or not isinstance(width, int) or width not in LOGICAL_WARP_WIDTHS:
        raise InvalidGroupWidthError(
            f"group_by(): width={width!r} is not a logical warp width; use one of "
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
