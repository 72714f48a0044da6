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

Where the regions fit: while they and the kernel's own static ``cuda.shared.array``
arrays fit in the 48 KiB of static shared memory, each region is a static array.
Above that, all regions are staged into one *dynamic* backing (each at a 16-byte
aligned offset), which the launch reserves, up to the shared memory a block of the
target GPU may opt in to (227 KiB on sm_90).  The dynamic base is 16-byte aligned,
so a region asking for more alignment is refused there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .records import record
from .._errors import SharedMemoryLimitError, TempStorageError
from .spec import TempStorageArg

__all__ = ["StorageUse", "Region", "StoragePlan", "plan_storage", "mixed_warp_widths", "is_partial_warp",
           "STATIC_SHARED_LIMIT", "DYNAMIC_ALIGNMENT", "OPTIN_SHARED_LIMITS", "MAX_SHARED_LIMIT", "optin_shared_limit",
           "place_regions", "launch_limit_error", "explicit_size_error"]

# Static __shared__ is limited to 48 KiB per block (ptxas refuses more).
STATIC_SHARED_LIMIT = 48 * 1024
# The alignment of the dynamic shared-memory base that cuda-coop relies on (the
# backing is declared ``.extern .shared .align 16``); CUB's 128-bit accesses need 16.
DYNAMIC_ALIGNMENT = 16
# Shared memory a block may opt in to (static plus dynamic), per compute capability:
# cudaDevAttrMaxSharedMemoryPerBlockOptin, from the CUDA C++ Programming Guide's
# "technical specifications per compute capability".  A GPU not listed is checked at
# launch only, against what its driver reports.
OPTIN_SHARED_LIMITS = {
    (7, 0): 96 * 1024, (7, 2): 96 * 1024, (7, 5): 64 * 1024,
    (8, 0): 163 * 1024, (8, 6): 99 * 1024, (8, 7): 163 * 1024, (8, 9): 99 * 1024,
    (9, 0): 227 * 1024, (10, 0): 227 * 1024, (12, 0): 99 * 1024,
}
# No GPU gives a block more: a single call needing more can never run (checked before NVRTC).
MAX_SHARED_LIMIT = max(OPTIN_SHARED_LIMITS.values())


def optin_shared_limit(cc) -> int | None:
    """The shared memory (bytes) a block of a ``cc`` GPU may opt in to, or None if not known."""
    return OPTIN_SHARED_LIMITS.get(tuple(cc)) if cc else None
_RESERVE_LABEL = "TempStorage.reserve()"


@record
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
    # Dynamic placement: region name -> byte offset in the one dynamic backing; empty when
    # every region is its own static array.
    dynamic_offsets: dict = field(default_factory=dict)
    dynamic_bytes: int = 0  # bytes the launch must reserve (0: static)

    @property
    def total_bytes(self) -> int:
        return sum(_round_up(r.size, r.align) for r in self.regions.values())

    @property
    def is_dynamic(self) -> bool:
        return bool(self.dynamic_offsets)


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


def plan_storage(uses, *, implicit_name: str, region_name_for_site, user_shared_bytes: int = 0,
                 cc=None, allow_dynamic: bool = True) -> StoragePlan:
    """Place the scratch of ``uses``.

    ``user_shared_bytes``: the kernel's own static shared arrays, which count against the
    same limits.  ``cc``: the target GPU, whose opt-in limit bounds a dynamic backing.
    ``allow_dynamic=False``: the static limit is the only one (a device function
    compiled on its own, whose launch cannot be told to reserve dynamic bytes).
    """
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
                raise explicit_size_error(ts, region.users, region.size)
            region.size = ts.size_in_bytes
    return place_regions(StoragePlan(regions=regions, placement=placement), user_shared_bytes=user_shared_bytes,
                         cc=cc, allow_dynamic=allow_dynamic)


def explicit_size_error(ts, users, needed: int) -> TempStorageError:
    """A ``TempStorage(size_in_bytes=...)`` smaller than what its calls and reservations
    (``users``: call labels, ``"TempStorage.reserve()"`` for reservations) need."""
    return TempStorageError(
        f"coop.TempStorage(): size_in_bytes={ts.size_in_bytes} is too small; the calls using it "
        f"({', '.join(sorted(set(users)))}) need {needed} bytes (sharing={ts.sharing!r}"
        + ("; each TempStorage.reserve() array has bytes of its own" if _RESERVE_LABEL in users else "")
        + f"); pass size_in_bytes>={needed} or omit it to infer"
    )


def place_regions(plan: StoragePlan, *, user_shared_bytes: int = 0, cc=None, allow_dynamic: bool = True) -> StoragePlan:
    """Static or dynamic for ``plan``'s regions as they are: within the static limit (with
    the kernel's own arrays) each region stays its own static array; above it every region
    moves into one dynamic backing (``plan.dynamic_offsets``, ``plan.dynamic_bytes``), up to
    the ``cc`` target's opt-in limit.  Raises the named errors of both cases.  A backend that
    sizes its regions itself (classic numba-cuda, one call at a time) calls this directly."""
    if plan.total_bytes + user_shared_bytes <= STATIC_SHARED_LIMIT:
        return plan
    if not allow_dynamic:
        raise SharedMemoryLimitError(
            _over(plan, user_shared_bytes, f"the {STATIC_SHARED_LIMIT}-byte static limit")
            + "; this device function is compiled on its own (inline='never'), so its scratch cannot "
            "move to dynamic shared memory (only a kernel's launch reserves that): drop inline='never', "
            "or " + _fixes(plan, user_shared_bytes)
        )
    return _place_dynamic(plan, user_shared_bytes, cc)


def _detail(plan) -> str:
    return ", ".join(f"{r.name}: {r.size} B" for r in plan.regions.values())


def _over(plan, user_shared_bytes: int, limit: str, scratch: int | None = None) -> str:
    scratch = plan.total_bytes if scratch is None else scratch
    if user_shared_bytes:
        return (f"the kernel's cuda.shared.array arrays ({user_shared_bytes} bytes) plus its cooperative "
                f"scratch ({scratch} bytes: {_detail(plan)}) need "
                f"{user_shared_bytes + scratch} bytes of shared memory, above {limit}")
    return (f"the kernel's cooperative scratch needs {scratch} bytes of shared memory "
            f"({_detail(plan)}), above {limit}")


def _fixes(plan, user_shared_bytes: int) -> str:
    reserved = any(label == "TempStorage.reserve()" for r in plan.regions.values() for label in r.users)
    return (("make the shared arrays smaller, " if user_shared_bytes else "")
            + ("reserve fewer elements, " if reserved else "")
            + "use fewer items per thread, a smaller block, storage-free algorithms, or share one "
            "coop.TempStorage")


def _place_dynamic(plan: StoragePlan, user_shared_bytes: int, cc) -> StoragePlan:
    """Stage every region into one dynamic backing, each at a 16-byte aligned offset."""
    if user_shared_bytes > STATIC_SHARED_LIMIT:
        raise SharedMemoryLimitError(
            f"the kernel's cuda.shared.array arrays need {user_shared_bytes} bytes of static shared "
            f"memory, above the {STATIC_SHARED_LIMIT}-byte static limit on their own (cuda-coop moves its "
            f"scratch, {plan.total_bytes} bytes, to dynamic shared memory, but not your arrays); make "
            "the shared arrays smaller"
        )
    for region in plan.regions.values():
        if region.align > DYNAMIC_ALIGNMENT:
            raise TempStorageError(
                f"{', '.join(sorted(set(region.users)))}: the scratch region {region.name} asks for "
                f"{region.align}-byte alignment, but the kernel's shared memory "
                f"({plan.total_bytes + user_shared_bytes} bytes) is above the {STATIC_SHARED_LIMIT}-byte "
                f"static limit, so its cooperative scratch lives in dynamic shared memory, which is "
                f"{DYNAMIC_ALIGNMENT}-byte aligned; use alignment<={DYNAMIC_ALIGNMENT} (TempStorage "
                f"alignment= or reserve(..., alignment=)), or keep the kernel within "
                f"{STATIC_SHARED_LIMIT} bytes of shared memory"
            )
    offset = 0
    for region in plan.regions.values():
        offset = _round_up(offset, DYNAMIC_ALIGNMENT)
        plan.dynamic_offsets[region.name] = offset
        offset += region.size
    plan.dynamic_bytes = _round_up(max(offset, 1), DYNAMIC_ALIGNMENT)
    limit = optin_shared_limit(cc)
    if limit is not None and plan.dynamic_bytes + user_shared_bytes > limit:
        from .pch import arch_for_cc

        arch = arch_for_cc(cc)
        raise SharedMemoryLimitError(
            _over(plan, user_shared_bytes, f"the {limit}-byte limit of a {arch} thread block",
                  plan.dynamic_bytes)
            + f" (scratch above the {STATIC_SHARED_LIMIT}-byte static limit moves to dynamic shared "
            f"memory, up to that limit); " + _fixes(plan, user_shared_bytes)
        )
    return plan


def launch_limit_error(kernel_name: str, requested: int, static: int, limit: int,
                       required: int | None) -> SharedMemoryLimitError:
    """A launch whose dynamic shared memory (``requested``: the cooperative scratch,
    ``required``, or more when the launch's own ``sharedmem`` asks for more) plus the
    kernel's ``static`` bytes is above the GPU's opt-in ``limit``: the error both backends
    raise at the launch."""
    extra = requested - required if required else 0
    ours = f"{required} bytes for its cooperative scratch" if required else "for its cooperative scratch"
    if extra > 0:
        ours += f", {extra} more asked for by the launch's sharedmem"
    return SharedMemoryLimitError(
        f"cannot launch cooperative kernel {kernel_name!r}: it needs {requested} bytes of dynamic shared memory "
        f"({ours}) plus {static} bytes of static shared memory, above this GPU's limit of {limit} bytes "
        "per block (cudaDevAttrMaxSharedMemoryPerBlockOptin); "
        + ("launch it without that sharedmem (cuda-coop reserves its own bytes), or " if extra > 0 else "")
        + "use fewer items per thread, a smaller block, storage-free algorithms, or share one "
        "coop.TempStorage"
    )
