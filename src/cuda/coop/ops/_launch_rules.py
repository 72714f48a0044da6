"""Launch-shape rules shared by the families (checked when the block shape is known)."""

from __future__ import annotations

from .._errors import UnsupportedBlockShapeError
from ..core.spec import CallPlan, LaunchFacts

__all__ = ["check_whole_warps"]


def check_whole_warps(plan: CallPlan, launch: LaunchFacts) -> None:
    """Warp groups need whole warps: CUB's warp collectives shuffle over all 32 lanes."""
    threads = launch.block_threads
    g = plan.group
    if g.kind in ("warp", "warps") and threads % 32:
        raise UnsupportedBlockShapeError(
            f"{plan.call}: group={g.label} needs the block's thread count to be a multiple of 32, "
            f"but the launch block {launch.block} has {threads} threads; launch whole warps"
        )
