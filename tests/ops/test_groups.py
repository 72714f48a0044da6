"""Group queries and barriers in kernels, and the groups beyond block and warp.

``rank``/``count`` (and their ``_as`` forms) of every group at every level are
written per thread and compared with the values NumPy computes from the launch
shape; ``this_thread()`` and ``this_block().group_by(n)`` reductions are checked
against NumPy; ``this_grid()`` and ``this_cluster()`` are refused by operations
with a message saying why.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import cuda.coop as coop

from ..backends_param import COMPILERS, compile_for, gpu_for, kernel_for, types_for
from ..kernelgen import module_from_source
from .cubin_checks import assert_inlined, numba_types
from ..error_harness import compile_error

QUERIES = [  # (expression, NumPy value from (linear tid, block index, threads, blocks))
    ("block.rank()", lambda t, b, n, g: t),
    ("block.rank('warp')", lambda t, b, n, g: t // 32),
    ("block.count()", lambda t, b, n, g: n),
    ("block.count('warp')", lambda t, b, n, g: (n + 31) // 32),
    ("coop.this_warp().rank()", lambda t, b, n, g: t % 32),
    ("coop.this_warp().count()", lambda t, b, n, g: 32),
    ("coop.this_warp().group_by(8).rank()", lambda t, b, n, g: t % 8),
    ("coop.this_warp().group_by(8, exhaustive=True).count()", lambda t, b, n, g: 8),
    ("coop.this_block().group_by(2).rank()", lambda t, b, n, g: t % 64),
    ("coop.this_block().group_by(2).rank('warp')", lambda t, b, n, g: t % 64 // 32),
    ("coop.this_block().group_by(2).count()", lambda t, b, n, g: 64),
    ("coop.this_thread().rank() + coop.this_thread().count()", lambda t, b, n, g: 1),
    ("coop.this_grid().rank()", lambda t, b, n, g: b * n + t),
    ("coop.this_grid().rank('block')", lambda t, b, n, g: b),
    ("coop.this_grid().count()", lambda t, b, n, g: n * g),
    ("coop.this_grid().count_as(np.int64, 'block')", lambda t, b, n, g: g),
    ("block.rank_as(np.uint16)", lambda t, b, n, g: t),
    ("coop.this_cluster().rank('block') + coop.this_cluster().count('block')", lambda t, b, n, g: 1),
    ("1 if coop.this_warp().group_by(4).is_member() else 0", lambda t, b, n, g: 1),
    # a level coarser than the group places the group in it; the group's own level is 0 / 1
    ("coop.this_thread().rank('block')", lambda t, b, n, g: t),
    ("coop.this_thread().rank('warp')", lambda t, b, n, g: t % 32),
    ("coop.this_thread().rank('gpu_thread') * 10 + coop.this_thread().count('thread')", lambda t, b, n, g: 1),
    ("coop.this_thread().rank('grid')", lambda t, b, n, g: b * n + t),
    ("coop.this_thread().count('grid')", lambda t, b, n, g: n * g),
    ("coop.this_warp().rank('block')", lambda t, b, n, g: t // 32),
    ("coop.this_warp().count('block')", lambda t, b, n, g: (n + 31) // 32),
    ("coop.this_warp().rank('grid')", lambda t, b, n, g: b * ((n + 31) // 32) + t // 32),
    ("coop.this_warp().count_as(np.int32, 'grid')", lambda t, b, n, g: g * ((n + 31) // 32)),
    ("coop.this_warp().rank('warp') * 10 + coop.this_warp().count('warp')", lambda t, b, n, g: 1),
    ("block.rank('grid')", lambda t, b, n, g: b),
    ("block.count('grid')", lambda t, b, n, g: g),
    ("block.rank('block') * 10 + block.count('block')", lambda t, b, n, g: 1),
    ("coop.this_grid().rank('warp')", lambda t, b, n, g: b * ((n + 31) // 32) + t // 32),
    ("coop.this_grid().count('warp')", lambda t, b, n, g: g * ((n + 31) // 32)),
    ("coop.this_warp().group_by(8).rank('warp')", lambda t, b, n, g: t % 32 // 8),
    ("coop.this_warp().group_by(8).count('warp')", lambda t, b, n, g: 4),
    ("coop.this_warp().group_by(20, exhaustive=False).count('warp')", lambda t, b, n, g: 1),
    ("coop.this_block().group_by(2).rank('block')", lambda t, b, n, g: t // 64),
    ("coop.this_block().group_by(2).count('block')", lambda t, b, n, g: ((n + 31) // 32 + 1) // 2),
    # exhaustive=False: complete groups only (7 warps: 3 groups of 2, warp 6 is not a member)
    ("coop.this_block().group_by(2, exhaustive=False).count('block')", lambda t, b, n, g: n // 32 // 2),
    ("1 if coop.this_block().group_by(2, exhaustive=False).is_member() else 0",
     lambda t, b, n, g: (t // 64 < n // 64).astype(np.int64)),
    ("coop.this_block().group_by(3, exhaustive=False).rank('block')", lambda t, b, n, g: t // 96),
    ("coop.this_block().group_by(3, exhaustive=False).rank()", lambda t, b, n, g: t % 96),
    ("coop.this_block().group_by(3, exhaustive=False).count()", lambda t, b, n, g: 96),
    # widths that do not divide 32 (exhaustive=False): 32 // w logical warps of w lanes per
    # warp, the last 32 % w lanes are not members (rank() is still lane % w there)
    ("coop.this_warp().group_by(3, exhaustive=False).rank()", lambda t, b, n, g: t % 32 % 3),
    ("coop.this_warp().group_by(3, exhaustive=False).rank('warp')", lambda t, b, n, g: t % 32 // 3),
    ("coop.this_warp().group_by(3, exhaustive=False).count() * 100 + "
     "coop.this_warp().group_by(3, exhaustive=False).count('warp')", lambda t, b, n, g: 310),
    ("1 if coop.this_warp().group_by(3, exhaustive=False).is_member() else 0",
     lambda t, b, n, g: (t % 32 < 30).astype(np.int64)),
    ("coop.this_warp().group_by(5, exhaustive=False).rank()", lambda t, b, n, g: t % 32 % 5),
    ("1 if coop.this_warp().group_by(5, exhaustive=False).is_member() else 0",
     lambda t, b, n, g: (t % 32 < 30).astype(np.int64)),
    ("coop.this_warp().group_by(12, exhaustive=False).rank('warp')", lambda t, b, n, g: t % 32 // 12),
    ("1 if coop.this_warp().group_by(24, exhaustive=False).is_member() else 0",
     lambda t, b, n, g: (t % 32 < 24).astype(np.int64)),
    ("coop.this_warp().group_by(24, exhaustive=False).rank()", lambda t, b, n, g: t % 32 % 24),
    # a launch without a cluster shape: every block is a cluster of one
    ("coop.this_thread().rank('cluster')", lambda t, b, n, g: t),
    ("coop.this_warp().rank('cluster') * 1000 + coop.this_warp().count('cluster')",
     lambda t, b, n, g: t // 32 * 1000 + (n + 31) // 32),
    ("coop.this_cluster().rank('grid')", lambda t, b, n, g: b),
    ("coop.this_cluster().count_as(np.uint32, 'grid')", lambda t, b, n, g: g),
    ("block.rank('cluster') * 10 + block.count('cluster')", lambda t, b, n, g: 1),
    ("coop.this_cluster().rank('cluster') * 10 + coop.this_cluster().count('cluster')", lambda t, b, n, g: 1),
    ("coop.this_grid().count('cluster')", lambda t, b, n, g: g),
    ("coop.this_cluster().rank('warp')", lambda t, b, n, g: t // 32),
]

_SOURCE = """
@cuda.jit
def kernel(out, src, sums):
    block = coop.this_block()
    gtid = coop.this_grid().rank()
{queries}
    items = coop.ThreadData(3, dtype=np.int32)
    for i in range(3):
        items[i] = src[gtid * 3 + i]
    block.sync()
    coop.this_warp().group_by(4).sync()
    coop.this_warp().sync_aligned()
    coop.this_warp().group_by(3, exhaustive=False).sync()  # members and non-members alike
    coop.this_warp().group_by(24, exhaustive=False).sync_aligned()
    partial = coop.this_warp().group_by(5, exhaustive=False)
    if partial.is_member():
        partial.sync()
    sums[0, gtid] = coop.sum(coop.this_thread(), items)
    sums[1, gtid] = coop.sum(coop.this_block().group_by(2), items)
    sums[2, gtid] = coop.reduce(coop.this_block().group_by(3), items, binary_op="max")
    sums[3, gtid] = coop.sum(coop.this_block().group_by(7, exhaustive=False), items)  # 7 warps: 1 group
"""


def groups_kernel(compiler="numba-cuda-mlir"):
    lines = "".join(f"    out[{row}, gtid] = {expr}\n" for row, (expr, _) in enumerate(QUERIES))
    if compiler == "numba-cuda-mlir":
        return module_from_source(_SOURCE.format(queries=lines)).kernel
    return kernel_for(compiler, _SOURCE.format(queries=lines)).kernel


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS)
def test_group_queries_and_group_reductions_compile_inlined(compiler):
    T = types_for(compiler)
    kb = compile_for(compiler, groups_kernel(compiler), (T.int64[:, ::1], T.int32[::1], T.int32[:, ::1]), cc=(9, 0),
                     block=224)
    assert_inlined(kb, (9, 0))
    assert "%cluster_ctarank" in kb.ptx and "%cluster_nctarank" in kb.ptx


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS)
def test_cluster_level_queries_compile_below_hopper(compiler):
    # Below 9.0 there are no clusters: the cluster registers become the block's (%ctaid).
    T = types_for(compiler)
    kb = compile_for(compiler, groups_kernel(compiler), (T.int64[:, ::1], T.int32[::1], T.int32[:, ::1]), cc=(8, 0),
                     block=224)
    assert "%cluster" not in kb.ptx and "%nclusterid" not in kb.ptx, "a cluster register in sm_80 code"


@pytest.mark.compile
def test_a_grid_is_not_an_operation_group():
    info, _ = compile_error("""
        x = coop.sum(coop.this_grid(), src[0])
    """)
    assert isinstance(info.value, coop.InvalidGroupError)
    assert "coop.this_grid()" in str(info.value) and "cuda.atomic.add" in str(info.value)


@pytest.mark.compile
def test_a_grid_barrier_is_refused():
    info, _ = compile_error("""
        coop.this_grid().sync()
    """)
    assert "cooperative launch" in str(info.value)


@pytest.mark.compile
@pytest.mark.parametrize("expr,listed", [
    ("coop.this_warp().group_by(8).rank('block')", "'thread', 'warp'"),
    ("coop.this_block().group_by(2).count('grid')", "'thread', 'warp', 'block'"),
    ("coop.this_thread().rank('planet')", "'thread', 'warp', 'block', 'cluster', 'grid'"),
])
def test_a_level_that_does_not_apply(expr, listed):
    info, _ = compile_error(f"""
        dst[0] = {expr}
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    msg = str(info.value)
    assert "does not apply to this group" in msg and listed in msg, msg


@pytest.mark.compile
def test_a_level_must_be_a_constant_string():
    info, _ = compile_error("""
        dst[0] = coop.this_thread().rank(n)
    """)
    assert isinstance(info.value, coop.InvalidArgumentTypeError)
    assert "compile-time string" in str(info.value)


@pytest.mark.compile
def test_block_group_by_exhaustive_must_be_a_constant():
    info, _ = compile_error("""
        dst[0] = coop.this_block().group_by(2, exhaustive=n > 0).rank()
    """)
    assert isinstance(info.value, coop.NonConstantArgumentError)
    assert "exhaustive=" in str(info.value)


# this_block().group_by(n, exhaustive=False) with warps past the last complete group: they
# are no members, return 0 and go on (NVIDIA's test_nonexhaustive_mapped_reduce_guards_nonmembers).
_PARTIAL_WARPS = """
@cuda.jit
def kernel(source, observed, continued):
    t = cuda.threadIdx.x
    groups = coop.this_block().group_by(WARPS, exhaustive=False)
    observed[t] = coop.{op}(groups, source[t]{extra})
    continued[t] = source[t] + 1
"""


def _partial_warps_kernel(compiler, warps, op):
    extra = ', binary_op="max"' if op == "reduce" else ""
    return kernel_for(compiler, f"WARPS = {warps}\n" + _PARTIAL_WARPS.format(op=op, extra=extra)).kernel


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS)
def test_incomplete_groups_of_warps_meet_at_a_member_barrier(compiler):
    # 7 warps in groups of 2: warp 6 is no member; the members' barrier counts 192 threads.
    T = types_for(compiler)
    kb = compile_for(compiler, _partial_warps_kernel(compiler, 2, "sum"), (T.int32[::1],) * 3, cc=(9, 0), block=224)
    assert_inlined(kb, (9, 0))
    assert re.search(r"\b(?:bar|barrier)(?:\.cta)?\.sync(?:\.aligned)?\s+1,\s*192;", kb.ptx), kb.ptx[-2000:]


_WHOLE_GROUPS = """
@cuda.jit
def kernel(source, observed):
    t = cuda.threadIdx.x
    observed[t] = coop.sum(coop.this_block().group_by(WARPS), source[t])
"""


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("threads,warps,slots", [(224, 2, 8), (224, 3, 9), (256, 2, 8)])
def test_group_totals_have_a_slot_for_every_warp_of_the_last_group(compiler, threads, warps, slots):
    # The fold of a last, incomplete group (warp 6 of 7 in pairs) reads its warp totals
    # through NVVM-widened loads (totals[6] and totals[7] as one 64-bit load): compute-sanitizer's
    # memcheck found the read past a 7-slot array on the H100.  The scratch is whole groups.
    T = types_for(compiler)
    kernel = kernel_for(compiler, f"WARPS = {warps}\n" + _WHOLE_GROUPS).kernel
    kb = compile_for(compiler, kernel, (T.int32[::1],) * 2, cc=(9, 0), block=threads)
    assert kb.shared_bytes() >= 4 * slots, kb.ptx[:3000]


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["sum", "reduce"])
@pytest.mark.parametrize("threads,warps", [(128, 3), (224, 2), (96, 2), (160, 4)])
@pytest.mark.parametrize("compiler", COMPILERS)
def test_incomplete_groups_of_warps_on_the_device(compiler, threads, warps, op):
    gpu_for(compiler)
    rng = np.random.default_rng(threads + warps)
    source = rng.integers(-1000, 1000, size=threads).astype(np.int32)
    observed, continued = np.full_like(source, -77), np.full_like(source, -77)
    _partial_warps_kernel(compiler, warps, op)[1, threads](source, observed, continued)
    members = threads // 32 // warps * warps * 32
    groups = source[:members].reshape(-1, warps * 32)
    per_group = groups.sum(axis=1) if op == "sum" else groups.max(axis=1)
    expected = np.zeros_like(source)
    expected[:members] = np.repeat(per_group, warps * 32)
    np.testing.assert_array_equal(observed, expected)
    np.testing.assert_array_equal(continued, source + 1)


@pytest.mark.compile
@pytest.mark.parametrize("width", [3, 12])
def test_no_collective_takes_several_partial_logical_warps_per_warp(width):
    types = numba_types()
    info, module = compile_error(f"""
        group = coop.this_warp().group_by({width}, exhaustive=False)
        if group.is_member():
            dst[cuda.threadIdx.x] = coop.sum(group, src[cuda.threadIdx.x])
    """, argtypes=(types.int32[::1], types.int32[::1], types.int64))
    assert isinstance(info.value, coop.InvalidGroupWidthError), info.value
    msg = str(info.value)
    assert f"group_by({width}, exhaustive=False)" in msg and "width from 17 to 31" in msg, msg


@pytest.mark.unit
def test_a_width_not_dividing_32_needs_exhaustive_false():
    with pytest.raises(coop.InvalidGroupWidthError, match=r"group_by\(5, exhaustive=False\) for 6 logical warps"):
        coop.this_warp().group_by(5)
    assert coop.this_warp().group_by(5, exhaustive=False).width == 5


@pytest.mark.unit
def test_groups_on_the_host():
    assert coop.this_block().group_by(4) == coop.WarpsGroup(4)
    assert coop.this_thread().kind == "thread" and coop.this_grid().kind == "grid"
    assert coop.this_cluster().kind == "cluster"
    with pytest.raises(coop.InvalidGroupWidthError, match="warps_per_group=33"):
        coop.this_block().group_by(33)
    assert coop.this_block().group_by(2, exhaustive=False) != coop.this_block().group_by(2)
    assert repr(coop.this_block().group_by(2, exhaustive=False)) == "coop.this_block().group_by(2, exhaustive=False)"
    with pytest.raises(coop.InvalidArgumentTypeError, match="exhaustive=1"):
        coop.this_block().group_by(2, exhaustive=1)


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", COMPILERS)
def test_group_queries_and_reductions_on_the_device(compiler):
    gpu_for(compiler)
    queries = QUERIES
    threads, blocks = 224, 3  # 7 warps: group_by(2) and group_by(3) leave a partial last group
    n = threads * blocks
    out = np.full((len(queries), n), -1, np.int64)
    rng = np.random.default_rng(5)
    src = rng.integers(-1000, 1000, size=n * 3).astype(np.int32)
    sums = np.full((4, n), -7, np.int32)
    groups_kernel(compiler)[blocks, threads](out, src, sums)  # host arrays: copied in and back
    tid = np.tile(np.arange(threads), blocks)
    bid = np.repeat(np.arange(blocks), threads)
    for row, (expr, fn) in enumerate(queries):
        np.testing.assert_array_equal(out[row], fn(tid, bid, threads, blocks), err_msg=expr)
    per_thread = src.reshape(n, 3)
    np.testing.assert_array_equal(sums[0], per_thread.sum(axis=1))
    for row, warps, fold in ((1, 2, np.sum), (2, 3, np.max), (3, 7, np.sum)):
        span = 32 * warps
        for b in range(blocks):
            for start in range(0, threads, span):
                members = slice(b * threads + start, b * threads + min(start + span, threads))
                expected = fold(per_thread[members])
                assert (sums[row, members] == expected).all(), (row, b, start)
