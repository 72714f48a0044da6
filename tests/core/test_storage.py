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
