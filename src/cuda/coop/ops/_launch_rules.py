"""Launch-shape rules shared by the families (checked when the block shape is known)."""

from __future__ import annotations

from .._errors import (
    InvalidArgumentValueError,
    UnsupportedBlockShapeError,
    UnsupportedClusterShapeError,
    UnsupportedComputeCapabilityError,
)
from ..core.spec import CallPlan, LaunchFacts

__all__ = ["check_whole_warps", "check_constant_valid_items", "non_member_warps_start", "check_cluster_launch", "CLUSTER_MIN_CC", "MAX_PORTABLE_CLUSTER_BLOCKS"]


def check_whole_warps(plan: CallPlan, launch: LaunchFacts) -> None:
    """Warp groups need whole warps: CUB's warp collectives shuffle over all 32 lanes."""
    threads = launch.block_threads
    g = plan.group
    if g.kind in ("warp", "warps") and threads % 32:
        raise UnsupportedBlockShapeError(
            f"{plan.call}: group={g.label} needs the block's thread count to be a multiple of 32, "
            f"but the launch block {launch.block} has {threads} threads; launch whole warps"
        )


def check_constant_valid_items(plan: CallPlan, launch: LaunchFacts) -> None:
    """``valid_items`` given as a constant outside ``0 .. tile`` is refused here, at the kernel
    line; the same value at run time would trap in checked mode (or be clamped).  The tile is a
    block's threads (or a warp's lanes) times the payload's items per thread (``params.items``)."""
    value = plan.literal_valid_items
    if value is None:
        return
    g, items = plan.group, plan.params.items
    threads, who = (launch.block_threads, "threads") if g.kind == "block" else (g.width, "lanes")
    if not 0 <= value <= threads * items:
        raise InvalidArgumentValueError(
            f"{plan.call}: valid_items={value} is outside 0 .. {threads * items} (the tile is {threads} {who} "
            f"x {items} items per thread); pass a value in that range"
        )


def non_member_warps_start(plan: CallPlan, launch: LaunchFacts) -> int | None:
    """The first warp that is no member of ``this_block().group_by(n, exhaustive=False)``
    (the warps past the last complete group of ``n``), or None when every warp is one."""
    g = plan.group
    if g.kind != "warps" or g.exhaustive:
        return None
    warps = launch.block_threads // 32
    return None if warps % g.width == 0 else warps // g.width * g.width


# Thread-block clusters: compute capability 9.0 (Hopper) and later.  A launch may
# name at most 8 blocks per cluster ("portable" size); more needs the kernel
# attribute cudaFuncAttributeNonPortableClusterSizeAllowed, which numba-cuda-mlir
# 0.6 does not set, so such a launch would fail in the driver.
CLUSTER_MIN_CC = (9, 0)
MAX_PORTABLE_CLUSTER_BLOCKS = 8


def check_cluster_launch(plan: CallPlan, launch: LaunchFacts) -> None:
    """A cluster-group call: a CC 9.0+ target and a cluster shape that tiles the grid.

    A launch without a cluster shape is reported by the backend, which knows how its
    launches name one (``ClusterLaunchRequiredError``).
    """
    g = plan.group
    if g.kind != "cluster":
        return
    if tuple(launch.cc) < CLUSTER_MIN_CC:
        from ..core.pch import arch_for_cc  # here: core.pch brings logging, which a family's import must not

        raise UnsupportedComputeCapabilityError(
            f"{plan.call}: group={g.label} needs compute capability "
            f"{CLUSTER_MIN_CC[0]}.{CLUSTER_MIN_CC[1]} or later (thread-block clusters), but the kernel is "
            f"compiled for {arch_for_cc(launch.cc)}; compile it for sm_90 or later, or reduce "
            "over coop.this_block() and combine the block results yourself"
        )
    if launch.cluster is None:
        return
    blocks = launch.cluster_blocks
    if blocks > MAX_PORTABLE_CLUSTER_BLOCKS:
        raise UnsupportedClusterShapeError(
            f"{plan.call}: group={g.label} with the launch cluster {launch.cluster} ({blocks} blocks) is above "
            f"the portable cluster size of {MAX_PORTABLE_CLUSTER_BLOCKS} blocks, which is the most a launch "
            f"without the non-portable cluster attribute may use; launch at most {MAX_PORTABLE_CLUSTER_BLOCKS} "
            "blocks per cluster"
        )
    if launch.grid is not None and any(n % c for n, c in zip(launch.grid, launch.cluster)):
        raise UnsupportedClusterShapeError(
            f"{plan.call}: group={g.label}: the launch grid {launch.grid} is not a whole number of clusters "
            f"{launch.cluster} in every dimension, so the driver would refuse the launch; make each grid "
            "dimension a multiple of the cluster's"
        )
