"""Place every call's scratch in shared memory for one kernel.

Inputs are the kernel's storage-bearing calls with their per-instance layouts
(read from the compiled providers).  Calls without an explicit ``TempStorage``
share one compiler-owned region: calls run one after another and each ends
with a barrier of its own group.  A warp group's barrier orders its own lanes
only, so the region has two slices: block-wide calls share the first; calls of
(logical) warp groups share the second, in which every hardware warp owns one
*chunk* (the largest need of any of them) and each logical warp of width ``w``
uses instance ``lane / w`` of ``stride`` bytes inside its hardware warp's chunk.
No two hardware warps ever touch the same bytes, whatever the widths and
strides; within one hardware warp, calls of different widths overlap, so a
kernel that mixes widths on this region ends those calls with a whole-warp
``__syncwarp()`` (see ``mixed_warp_widths``).  Without both rules a width-2 warp
exchange followed by a width-4 one let lanes 0-1 write, in the second call,
bytes that lanes 2-3 were still reading in the first.  Each explicit
``TempStorage`` constructor is its own region: ``sharing="shared"`` overlaps
all its calls (largest need), ``"exclusive"`` gives each call site its own
aligned slice (sum of needs).  Reservations (``TempStorage.reserve()``) hold
user data that must outlive the calls, so whatever the sharing mode each one has
its own slice at the start of the region, in the order collected, and the calls'
scratch is placed after the last of them (NVIDIA's contract: cooperative scratch
never reuses a reservation, and two reservations never overlap).  An explicit
size smaller than the need is an error; a larger one is honoured.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._errors import SharedMemoryLimitError, TempStorageError
from .spec import TempStorageArg

__all__ = ["StorageUse", "Region", "StoragePlan", "plan_storage", "mixed_warp_widths", "is_partial_warp",
           "STATIC_SHARED_LIMIT"]

# Static __shared__ is limited to 48 KiB per block; cooperative scratch stays
# static because numba-cuda-mlir 0.6 can overlap dynamic and static shared
# arrays (numba-cuda-mlir PR #312).
STATIC_SHARED_LIMIT = 48 * 1024
_RESERVE_LABEL = "TempStorage.reserve()"


@dataclass(frozen=True)
class StorageUse:
    call: str  # a stable id of the call site
    label: str  # "coop.load()" for messages
    instance_bytes: int
    instance_align: int
    instances: int
    temp_storage: TempStorageArg | None
    width: int = 0  # the logical warp width of a per-warp use; 0: one instance for the block
    reserved: bool = False  # a TempStorage.reserve() array: a slice of its own, never overlapped

    @property
    def chunk(self) -> int:
        """Bytes one hardware warp's instances take (per-warp uses)."""
        return (32 // self.width) * self.stride if self.width else 0

    @property
    def hardware_warps(self) -> int:
        return -(-self.instances * self.width // 32) if self.width else 0

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
    placement: dict  # call id -> (region name, byte offset, bytes per hardware warp or 0)

    @property
    def total_bytes(self) -> int:
        return sum(_round_up(r.size, r.align) for r in self.regions.values())


def _round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def is_partial_warp(width: int) -> bool:
    """A per-warp use whose logical warp (width 17..31) leaves lanes of each warp out."""
    return bool(width) and 32 % width != 0


def mixed_warp_widths(widths) -> bool:
    """Whether per-warp calls of different widths share the implicit region (their barriers
    must then cover the whole hardware warp).  Partial logical warps have slices of their
    own and do not count."""
    return len({w for w in widths if w and not is_partial_warp(w)}) > 1


def _place_explicit(region: Region, uses, sharing: str, placement: dict) -> None:
    """Lay out one ``TempStorage``: its reservations first, each in a slice of its own, then
    the calls' scratch after them, overlapped (``"shared"``) or one slice per call site
    (``"exclusive"``).  A call id seen twice keeps its first slice."""
    name = region.name
    for use in uses:
        if use.reserved and use.call not in placement:
            offset = _round_up(region.size, use.instance_align)
            placement[use.call] = (name, offset, 0)
            region.size = offset + use.total_bytes
    scratch = [u for u in uses if not u.reserved]
    if not scratch:
        return
    if sharing == "exclusive":
        for use in scratch:
            if use.call in placement:
                continue
            offset = _round_up(region.size, use.instance_align)
            placement[use.call] = (name, offset, use.chunk)
            region.size = offset + use.total_bytes
        return
    # Each call's scratch starts at an offset aligned for every call sharing it.
    offset = _round_up(region.size, max(u.instance_align for u in scratch))
    for use in scratch:
        placement[use.call] = (name, offset, use.chunk)
    region.size = offset + max(u.total_bytes for u in scratch)


def plan_storage(uses, *, implicit_name: str, region_name_for_site, user_shared_bytes: int = 0) -> StoragePlan:
    """Place the scratch of ``uses``; ``user_shared_bytes``: the kernel's own static shared
    arrays, which count against the same limit."""
    regions: dict[str, Region] = {}
    placement: dict[str, tuple] = {}
    explicit_sites: dict[int, TempStorageArg] = {}
    block_size = block_align = 0
    warp_chunk, warp_align, hardware_warps = 0, 1, 0
    block_calls, warp_calls, partial_uses = [], [], []
    explicit_uses: dict[str, list] = {}  # region name -> its uses, in order
    for use in uses:
        if use.temp_storage is None:
            region = regions.setdefault(implicit_name, Region(implicit_name))
            region.users.append(use.label)
            if is_partial_warp(use.width):
                # Lanes width..31 take no part in a partial logical warp's call and may run
                # ahead into the next call while lanes 0..width-1 still use this scratch: no
                # barrier can order them, so the call gets a slice no other call overlaps.
                partial_uses.append(use)
            elif use.width:
                warp_chunk = max(warp_chunk, use.chunk)
                warp_align = max(warp_align, use.instance_align)
                hardware_warps = max(hardware_warps, use.hardware_warps)
                warp_calls.append(use.call)
            else:
                block_size = max(block_size, use.total_bytes)
                block_align = max(block_align, use.instance_align)
                block_calls.append(use.call)
            continue
        ts = use.temp_storage
        explicit_sites[ts.site] = ts
        name = region_name_for_site(ts.site)
        region = regions.setdefault(name, Region(name, align=ts.alignment or 1))
        region.align = max(region.align, use.instance_align)
        region.users.append(use.label)
        explicit_uses.setdefault(name, []).append(use)
    for name, site_uses in explicit_uses.items():
        _place_explicit(regions[name], site_uses, site_uses[0].temp_storage.sharing, placement)
    if implicit_name in regions:
        region = regions[implicit_name]
        for call in block_calls:
            placement[call] = (implicit_name, 0, 0)
        chunk = _round_up(warp_chunk, warp_align)
        offset = _round_up(block_size, warp_align)
        for call in warp_calls:
            placement[call] = (implicit_name, offset, chunk)
        region.size = offset + chunk * hardware_warps if warp_calls else block_size
        region.align = max(1, block_align, warp_align if warp_calls else 1)
        for use in partial_uses:
            offset = _round_up(region.size, use.instance_align)
            placement[use.call] = (implicit_name, offset, use.chunk)
            region.size = offset + use.chunk * use.hardware_warps
            region.align = max(region.align, use.instance_align)
    for site, ts in explicit_sites.items():
        region = regions[region_name_for_site(site)]
        if ts.size_in_bytes is not None:
            if ts.size_in_bytes < region.size:
                raise TempStorageError(
                    f"coop.TempStorage(): size_in_bytes={ts.size_in_bytes} is too small; the calls "
                    f"using it ({', '.join(sorted(set(region.users)))}) need {region.size} bytes "
                    f"(sharing={ts.sharing!r}"
                    + ("; each TempStorage.reserve() array has bytes of its own"
                       if _RESERVE_LABEL in region.users else "")
                    + f"); pass size_in_bytes>={region.size} or omit it to infer"
                )
            region.size = ts.size_in_bytes
    plan = StoragePlan(regions=regions, placement=placement)
    if plan.total_bytes + user_shared_bytes > STATIC_SHARED_LIMIT:
        detail = ", ".join(f"{r.name}: {r.size} B" for r in regions.values())
        if user_shared_bytes:
            raise SharedMemoryLimitError(
                f"the kernel's cuda.shared.array arrays ({user_shared_bytes} bytes) plus its cooperative "
                f"scratch ({plan.total_bytes} bytes: {detail}) need "
                f"{user_shared_bytes + plan.total_bytes} bytes of shared memory, above the "
                f"{STATIC_SHARED_LIMIT}-byte static limit; make the shared arrays smaller, or use fewer "
                "items per thread, a smaller block or storage-free algorithms"
            )
        reserved = any(label == "TempStorage.reserve()" for r in regions.values() for label in r.users)
        raise SharedMemoryLimitError(
            f"the kernel's cooperative scratch needs {plan.total_bytes} bytes of shared memory "
            f"({detail}), above the {STATIC_SHARED_LIMIT}-byte static limit; "
            + ("reserve fewer elements (TempStorage.reserve() arrays are static shared memory), "
               if reserved else "")
            + "use fewer items per thread, a smaller block, storage-free algorithms, or share one "
            "coop.TempStorage"
        )
    return plan
