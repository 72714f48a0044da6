"""Scratch placement in shared memory (pure planning, no compiler)."""

import pytest

import cuda.coop as coop
from cuda.coop.core.storage import STATIC_SHARED_LIMIT, StorageUse, plan_storage
from cuda.coop.core.spec import TempStorageArg

pytestmark = pytest.mark.unit


def use(call, size, align=16, instances=1, ts=None, width=0):
    return StorageUse(call=call, label="coop.x()", instance_bytes=size, instance_align=align,
                      instances=instances, temp_storage=ts, width=width)


def plan(uses):
    return plan_storage(uses, implicit_name="implicit", region_name_for_site=lambda s: f"ts{s}")


def test_implicit_block_calls_share_one_slice_sized_by_the_largest():
    p = plan([use("a", 2064), use("b", 528, 8)])
    assert set(p.regions) == {"implicit"}
    region = p.regions["implicit"]
    assert region.size == 2064 and region.align == 16
    assert all(off == 0 and chunk == 0 for _, off, chunk in p.placement.values())


def test_per_warp_calls_share_one_chunk_per_hardware_warp():
    """Block-wide calls share one slice; per-warp calls of any width and stride share a second
    one, where each hardware warp owns a chunk as large as the largest of their needs, so no two
    hardware warps ever touch the same bytes."""
    p = plan([use("block", 2064), use("w4", 12, 1, instances=32, width=4),
              use("w2", 6, 1, instances=64, width=2), use("w32", 100, 4, instances=4, width=32)])
    place = p.placement
    assert place["block"] == ("implicit", 0, 0)
    assert place["w4"][1:] == place["w2"][1:] == place["w32"][1:]
    offset, chunk = place["w4"][1:]
    assert offset >= 2064 and chunk == 100  # max(8 * 12, 16 * 6, 1 * 100)
    assert p.regions["implicit"].size == offset + 4 * chunk


def test_mixed_widths_need_whole_warp_barriers():
    from cuda.coop.core.storage import mixed_warp_widths

    assert mixed_warp_widths([4, 2]) and not mixed_warp_widths([8, 8, 0]) and not mixed_warp_widths([])


def test_per_warp_instances_are_strided_by_alignment():
    u = use("w", 100, 8, instances=4)
    assert u.stride == 104 and u.total_bytes == 416


def test_explicit_shared_and_exclusive():
    shared = TempStorageArg(site=1, size_in_bytes=None, alignment=32, auto_sync=None, sharing="shared")
    excl = TempStorageArg(site=2, size_in_bytes=None, alignment=None, auto_sync=None, sharing="exclusive")
    p = plan([use("a", 100, ts=shared), use("b", 300, ts=shared), use("c", 100, 16, ts=excl),
              use("d", 50, 8, ts=excl), use("e", 10)])
    # Each instance is rounded up to its alignment (its stride).
    assert p.regions["ts1"].size == 304 and p.regions["ts1"].align == 32
    assert p.placement["c"] == ("ts2", 0, 0) and p.placement["d"] == ("ts2", 112, 0)
    assert p.regions["ts2"].size == 112 + 56
    assert p.regions["implicit"].size == 16


def test_explicit_size_too_small_names_the_need():
    ts = TempStorageArg(site=7, size_in_bytes=64, alignment=None, auto_sync=None, sharing="shared")
    with pytest.raises(coop.TempStorageError) as info:
        plan([use("a", 2064, ts=ts)])
    assert "size_in_bytes=64" in str(info.value) and "2064" in str(info.value)


def test_explicit_size_larger_than_need_is_honoured():
    ts = TempStorageArg(site=8, size_in_bytes=4096, alignment=None, auto_sync=None, sharing="shared")
    assert plan([use("a", 100, ts=ts)]).regions["ts8"].size == 4096


def test_within_the_static_limit_each_region_is_a_static_array():
    ts = TempStorageArg(site=3, size_in_bytes=None, alignment=None, auto_sync=None, sharing="shared")
    p = plan_storage([use("a", 2064), use("b", 4096, ts=ts)], implicit_name="implicit",
                     region_name_for_site=lambda s: f"ts{s}", user_shared_bytes=STATIC_SHARED_LIMIT - 6160,
                     cc=(9, 0))
    assert not p.is_dynamic and p.dynamic_bytes == 0 and p.dynamic_offsets == {}


def test_above_the_static_limit_all_regions_share_one_dynamic_backing():
    """Every region (the implicit one and each TempStorage) gets a 16-byte aligned offset in one
    backing, in the order the regions were made; the backing is their sum, rounded to 16."""
    ts = TempStorageArg(site=3, size_in_bytes=64 * 1024, alignment=None, auto_sync=None, sharing="shared")
    excl = TempStorageArg(site=4, size_in_bytes=None, alignment=8, auto_sync=None, sharing="exclusive")
    p = plan_storage([use("a", 2056, 8), use("b", 100, ts=ts), use("c", 20, 4, ts=excl), use("d", 12, 4, ts=excl)],
                     implicit_name="implicit", region_name_for_site=lambda s: f"ts{s}", cc=(9, 0))
    assert p.is_dynamic
    assert p.dynamic_offsets == {"implicit": 0, "ts3": 2064, "ts4": 2064 + 65536}
    assert p.dynamic_bytes == 2064 + 65536 + 32
    # Placement inside a region is unchanged: offsets are relative to the region.
    assert p.placement["c"] == ("ts4", 0, 0) and p.placement["d"] == ("ts4", 20, 0)


def test_user_static_arrays_push_the_scratch_to_dynamic_shared_memory():
    p = plan_storage([use("a", 2064)], implicit_name="implicit", region_name_for_site=str,
                     user_shared_bytes=48000, cc=(9, 0))
    assert p.is_dynamic and p.dynamic_bytes == 2064


@pytest.mark.parametrize("cc, limit", [((9, 0), 232448), ((8, 6), 101376), ((8, 0), 166912), ((12, 0), 101376)])
def test_above_the_opt_in_limit_of_the_target(cc, limit):
    from cuda.coop.core.storage import optin_shared_limit

    assert optin_shared_limit(cc) == limit
    plan_storage([use("a", limit - 1024)], implicit_name="implicit", region_name_for_site=str,
                 user_shared_bytes=1024, cc=cc)  # exactly the limit: fits
    with pytest.raises(coop.SharedMemoryLimitError) as info:
        plan_storage([use("a", limit - 1024)], implicit_name="implicit", region_name_for_site=str,
                     user_shared_bytes=1040, cc=cc)
    msg = str(info.value)
    for part in (f"{limit}-byte limit of a sm_{cc[0]}{cc[1]} thread block", f"{limit - 1024} bytes",
                 "cuda.shared.array arrays (1040 bytes)", "make the shared arrays smaller", "fewer items per thread"):
        assert part in msg, (part, msg)


def test_an_unknown_gpu_is_left_to_the_launch():
    p = plan_storage([use("a", 300 * 1024)], implicit_name="implicit", region_name_for_site=str, cc=(42, 0))
    assert p.is_dynamic and p.dynamic_bytes == 300 * 1024


def test_dynamic_backing_refuses_alignment_above_16():
    ts = TempStorageArg(site=5, size_in_bytes=None, alignment=64, auto_sync=None, sharing="shared")
    with pytest.raises(coop.TempStorageError) as info:
        plan_storage([use("a", STATIC_SHARED_LIMIT + 16, ts=ts)], implicit_name="implicit",
                     region_name_for_site=lambda s: f"ts{s}", cc=(9, 0))
    msg = str(info.value)
    for part in ("coop.x()", "ts5", "64-byte alignment", "dynamic shared memory", "16-byte aligned",
                 "alignment<=16", "49152"):
        assert part in msg, (part, msg)
    # The same region within the static limit keeps its alignment.
    assert plan([use("a", 4096, ts=ts)]).regions["ts5"].align == 64


def test_device_functions_compiled_on_their_own_keep_the_static_limit():
    with pytest.raises(coop.SharedMemoryLimitError) as info:
        plan_storage([use("a", STATIC_SHARED_LIMIT + 16)], implicit_name="implicit", region_name_for_site=str,
                     cc=(9, 0), allow_dynamic=False)
    msg = str(info.value)
    assert "49168 bytes" in msg and "49152-byte static limit" in msg and "inline='never'" in msg, msg


def test_user_arrays_above_the_static_limit_on_their_own():
    with pytest.raises(coop.SharedMemoryLimitError) as info:
        plan_storage([use("a", 2064)], implicit_name="implicit", region_name_for_site=str,
                     user_shared_bytes=50000, cc=(9, 0))
    msg = str(info.value)
    assert "cuda.shared.array arrays need 50000 bytes" in msg and "make the shared arrays smaller" in msg, msg


def reservation(call, count, itemsize, align, ts):
    return StorageUse(call=call, label="TempStorage.reserve()", instance_bytes=count * itemsize,
                      instance_align=max(align, itemsize), instances=1, temp_storage=ts, reserved=True)


def spans(p, uses):
    """``call -> (first byte, end)`` of each use in its region."""
    out = {}
    for u in uses:
        region, offset, _chunk = p.placement[u.call]
        out[u.call] = (region, offset, offset + u.total_bytes)
    return out


def overlap(a, b) -> bool:
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


@pytest.mark.parametrize("sharing", ["shared", "exclusive"])
@pytest.mark.parametrize("reservations_first", [True, False])
def test_reservations_never_overlap_scratch_or_each_other(sharing, reservations_first):
    """NVIDIA's test_reserve.py contract: values in a reserved array survive the calls on the
    same TempStorage whatever its sharing mode, and two reservations never overlap; only the
    calls' scratch overlaps (sharing="shared").  The shape mirrors the parity kernel: 3 uint8,
    then 32 int32 at alignment 32, then a transpose load, a scan and a transpose store."""
    ts = TempStorageArg(site=3, size_in_bytes=None, alignment=None, auto_sync=None, sharing=sharing)
    reserved = [reservation("small", 3, 1, 1, ts), reservation("values", 32, 4, 32, ts)]
    calls = [use("load", 132, 4, ts=ts), use("scan", 200, 16, ts=ts), use("store", 132, 4, ts=ts)]
    uses = reserved + calls if reservations_first else calls + reserved
    p = plan(uses)
    s = spans(p, uses)
    for r in reserved:
        assert s[r.call][1] % r.instance_align == 0, s
        for other in uses:
            if other is not r:
                assert not overlap(s[r.call], s[other.call]), (r.call, other.call, s)
    assert s["small"][1] == 0 and s["values"][1] == 32  # collected order, each aligned
    scratch_start = 32 + 128
    if sharing == "shared":
        assert {s[c.call][1] for c in calls} == {scratch_start}  # the calls overlap one slice
        assert p.regions["ts3"].size == scratch_start + 208  # the scan's 200 bytes, 16-byte stride
    else:
        assert not any(overlap(s[a.call], s[b.call]) for a in calls for b in calls if a is not b)
        # load at 160, scan at 304 (16-aligned, 208-byte stride), store at 512
        assert [s[c.call][1] for c in calls] == [160, 304, 512]
        assert p.regions["ts3"].size == 512 + 132
    assert p.regions["ts3"].align == 32


def test_a_reservation_made_through_an_alias_takes_new_bytes():
    """The parity kernel's ``prefix = storage.reserve(3, uint8)`` then, in an inlined helper,
    ``alias.reserve(33, float64, alignment=1)``: one descriptor (same site), two call ids.
    alignment=1 is raised to the element's 8 bytes (NVIDIA does the same)."""
    ts = TempStorageArg(site=4, size_in_bytes=None, alignment=None, auto_sync=None, sharing="shared")
    uses = [reservation("prefix", 3, 1, 1, ts), reservation("helper.values", 33, 8, 1, ts)]
    p = plan(uses)
    assert p.placement["prefix"] == ("ts4", 0, 0)
    assert p.placement["helper.values"] == ("ts4", 8, 0)
    assert p.regions["ts4"].size == 8 + 33 * 8 and p.regions["ts4"].align == 8


def test_a_repeated_reservation_call_keeps_its_slice():
    ts = TempStorageArg(site=5, size_in_bytes=None, alignment=None, auto_sync=None, sharing="shared")
    r = reservation("ring", 16, 4, 4, ts)
    p = plan([r, r, use("sum", 64, ts=ts)])
    assert p.placement["ring"] == ("ts5", 0, 0) and p.placement["sum"] == ("ts5", 64, 0)
    assert p.regions["ts5"].size == 128


@pytest.mark.parametrize("sharing", ["shared", "exclusive"])
def test_an_explicit_size_must_hold_every_reservation_and_the_scratch(sharing):
    ts = TempStorageArg(site=6, size_in_bytes=300, alignment=None, auto_sync=None, sharing=sharing)
    with pytest.raises(coop.TempStorageError) as info:
        plan([reservation("a", 64, 4, 4, ts), reservation("b", 64, 4, 4, ts), use("sum", 64, ts=ts)])
    message = str(info.value)
    assert "size_in_bytes=300" in message and "need 576" in message
    assert "each TempStorage.reserve() array has bytes of its own" in message
