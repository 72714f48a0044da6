"""Place every call's scratch in shared memory for one kernel.

Inputs are the kernel's storage-bearing calls with their per-instance layouts
(read from the compiled providers).  Calls without an explicit ``TempStorage``
share one compiler-owned region: calls run one after another and each ends
with a barrier of its own group.  That barrier only orders the threads of one
(logical) warp, so two calls may overlap in the region only when the same
threads own the same bytes in both: the region holds one slice per *ownership
map* (one instance for the whole block, or ``n`` instances of ``stride`` bytes,
one per logical warp), as large as the largest need of that map, and calls of
different maps never share bytes.  A width-2 warp exchange followed by a
width-4 one would otherwise let lanes 0-1 write, in the second call, bytes that
lanes 2-3 are still reading in the first.  Each explicit
``TempStorage`` constructor is its own region: ``sharing="shared"`` overlaps
all its calls (largest need), ``"exclusive"`` gives each call site its own
aligned slice (sum of needs).  An explicit size smaller than the need is an
error; a larger one is honoured.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._errors import SharedMemoryLimitError, TempStorageError
from ..ops._spec import TempStorageArg

__all__ = ["StorageUse", "Region", "StoragePlan", "plan_storage", "STATIC_SHARED_LIMIT"]

# Static __shared__ is limited to 48 KiB per block; cooperative scratch stays
# static because numba-cuda-mlir 0.6 can overlap dynamic and static shared
# arrays (numba-cuda-mlir PR #312).
STATIC_SHARED_LIMIT = 48 * 1024


@dataclass(frozen=True)
class StorageUse:
    call: str  # a stable id of the call site
    label: str  # "coop.load()" for messages
    instance_bytes: int
    instance_align: int
    instances: int
    temp_storage: TempStorageArg | None

    @property
    def stride(self) -> int:
        return _round_up(self.instance_bytes, self.instance_align)

    @property
    def total_bytes(self) -> int:
        return self.stride * self.instances


@dataclass
class Region:
    name: str
    size: int = 0
    align: int = 1
    users: list = field(default_factory=list)


@dataclass
class StoragePlan:
    regions: dict  # name -> Region
    placement: dict  # call id -> (region name, byte offset)

    @property
    def total_bytes(self) -> int:
        return sum(_round_up(r.size, r.align) for r in self.regions.values())


def _round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _ownership(use: StorageUse):
    """Which threads own which bytes: the whole block (one instance), or one instance of
    ``stride`` bytes per logical warp (the instance count fixes the width)."""
    return "block" if use.instances == 1 else (use.instances, use.stride)


def plan_storage(uses, *, implicit_name: str, region_name_for_site) -> StoragePlan:
    regions: dict[str, Region] = {}
    placement: dict[str, tuple] = {}
    explicit_sites: dict[int, TempStorageArg] = {}
    implicit_slices: dict = {}  # ownership map -> [size, align, call ids]
    for use in uses:
        if use.temp_storage is None:
            region = regions.setdefault(implicit_name, Region(implicit_name))
            region.users.append(use.label)
            slice_ = implicit_slices.setdefault(_ownership(use), [0, 1, []])
            slice_[0] = max(slice_[0], use.total_bytes)
            slice_[1] = max(slice_[1], use.instance_align)
            slice_[2].append(use.call)
            continue
        ts = use.temp_storage
        explicit_sites[ts.site] = ts
        name = region_name_for_site(ts.site)
        region = regions.setdefault(name, Region(name, align=ts.alignment or 1))
        region.align = max(region.align, use.instance_align)
        region.users.append(use.label)
        if ts.sharing == "exclusive":
            if use.call in placement:
                continue
            offset = _round_up(region.size, use.instance_align)
            placement[use.call] = (name, offset)
            region.size = offset + use.total_bytes
        else:
            placement[use.call] = (name, 0)
            region.size = max(region.size, use.total_bytes)
    if implicit_slices:
        region = regions[implicit_name]
        for size, align, calls in implicit_slices.values():
            offset = _round_up(region.size, align)
            for call in calls:
                placement[call] = (implicit_name, offset)
            region.size = offset + size
            region.align = max(region.align, align)
    for site, ts in explicit_sites.items():
        region = regions[region_name_for_site(site)]
        if ts.size_in_bytes is not None:
            if ts.size_in_bytes < region.size:
                raise TempStorageError(
                    f"coop.TempStorage(): size_in_bytes={ts.size_in_bytes} is too small; the calls "
                    f"using it ({', '.join(sorted(set(region.users)))}) need {region.size} bytes "
                    f"(sharing={ts.sharing!r}); pass size_in_bytes>={region.size} or omit it to infer"
                )
            region.size = ts.size_in_bytes
    plan = StoragePlan(regions=regions, placement=placement)
    if plan.total_bytes > STATIC_SHARED_LIMIT:
        detail = ", ".join(f"{r.name}: {r.size} B" for r in regions.values())
        raise SharedMemoryLimitError(
            f"the kernel's cooperative scratch needs {plan.total_bytes} bytes of shared memory "
            f"({detail}), above the {STATIC_SHARED_LIMIT}-byte static limit; use fewer items per "
            "thread, a smaller block, storage-free algorithms, or share one coop.TempStorage"
        )
    return plan
