"""Scratch placement in shared memory (pure planning, no compiler)."""

import pytest

import cuda.coop as coop
from cuda.coop.core.storage import STATIC_SHARED_LIMIT, StorageUse, plan_storage
from cuda.coop.ops._spec import TempStorageArg

pytestmark = pytest.mark.unit


def use(call, size, align=16, instances=1, ts=None):
    return StorageUse(call=call, label="coop.x()", instance_bytes=size, instance_align=align,
                      instances=instances, temp_storage=ts)


def plan(uses):
    return plan_storage(uses, implicit_name="implicit", region_name_for_site=lambda s: f"ts{s}")


def test_implicit_block_calls_share_one_slice_sized_by_the_largest():
    p = plan([use("a", 2064), use("b", 528, 8)])
    assert set(p.regions) == {"implicit"}
    region = p.regions["implicit"]
    assert region.size == 2064 and region.align == 16
    assert all(off == 0 for _, off in p.placement.values())


def test_implicit_calls_with_different_owners_never_share_bytes():
    """A warp-group barrier orders one logical warp only: calls whose threads own different
    bytes (block vs per-warp, two widths, two strides) get disjoint slices; calls of one
    ownership map share theirs."""
    p = plan([use("block", 2064), use("w4", 12, 1, instances=32), use("w2", 6, 1, instances=64),
              use("w4b", 12, 4, instances=32), use("w4wide", 20, 4, instances=32)])
    off = {call: offset for call, (_, offset) in p.placement.items()}
    assert off["block"] == 0 and off["w4"] == off["w4b"] == 2064
    spans = {c: (off[c], off[c] + size) for c, size in
             (("block", 2064), ("w4", 12 * 32), ("w2", 6 * 64), ("w4wide", 20 * 32))}
    ordered = sorted(spans.values())
    assert all(a[1] <= b[0] for a, b in zip(ordered, ordered[1:])), spans
    assert p.regions["implicit"].size == ordered[-1][1]


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
    assert p.placement["c"] == ("ts2", 0) and p.placement["d"] == ("ts2", 112)
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


def test_static_limit():
    with pytest.raises(coop.SharedMemoryLimitError) as info:
        plan([use("a", STATIC_SHARED_LIMIT + 16)])
    assert "48" in str(info.value) or str(STATIC_SHARED_LIMIT) in str(info.value)
