"""Misuse of exchange: one broken argument per case, named error, message, user line."""

from __future__ import annotations

from functools import partial

import pytest

import cuda.coop as coop

from .. import error_harness
from ..error_harness import PAYLOAD_PRELUDE, assert_at_user_line

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

compile_error = partial(error_harness.compile_error, prelude=PAYLOAD_PRELUDE, n="int64")
expect_error = partial(error_harness.expect_error, prelude=PAYLOAD_PRELUDE, n="int64")


def check(info, cls, *parts):
    assert isinstance(info.value, cls), (type(info.value), str(info.value))
    msg = str(info.value)
    for part in parts:
        assert part in msg, (part, msg)
    assert "coop.exchange()" in msg


def test_default_mode_takes_no_ranks():
    # mode= defaults to "striped_to_blocked" (NVIDIA's default), which has no use for ranks=.
    expect_error("x = coop.exchange(coop.this_block(), a, ranks=r)\n", coop.CoopError, "ranks",
        "mode='striped_to_blocked'", "'scatter_to_*'", "coop.exchange()", at="coop.exchange(")


def test_unknown_mode_lists_every_mode():
    expect_error('x = coop.exchange(coop.this_block(), a, mode="blocked_to_warpstriped")\n',
        coop.InvalidAlgorithmError, "mode='blocked_to_warpstriped'", "'blocked_to_warp_striped'",
        "'scatter_to_striped_guarded'", "coop.exchange()", at="blocked_to_warpstriped")


def test_mode_must_be_a_constant_string():
    expect_error('x = coop.exchange(coop.this_block(), a, mode=1)\n', coop.InvalidAlgorithmError, "mode=1",
        "must be a string", "coop.exchange()")


@pytest.mark.parametrize("mode", ["warp_striped_to_blocked", "scatter_to_striped"])
def test_block_only_modes_reject_warp_groups(mode):
    expect_error(f'x = coop.exchange(coop.this_warp().group_by(8), a, mode="{mode}", ranks=r)\n',
        coop.UnsupportedAlgorithmForGroupError, f"mode='{mode}'", "coop.this_warp().group_by(8)",
        "'striped_to_blocked' or 'blocked_to_striped'", "coop.exchange()", at="coop.exchange(")


def test_value_must_be_a_payload():
    expect_error('x = coop.exchange(coop.this_block(), src, mode="striped_to_blocked")\n',
        coop.InvalidArgumentTypeError, "value=array(int32, 1d)", "coop.ThreadData", "coop.exchange()")


def test_scatter_needs_ranks():
    expect_error('x = coop.exchange(coop.this_block(), a, mode="scatter_to_blocked")\n',
        coop.MissingArgumentError, "mode='scatter_to_blocked' needs ranks=", "coop.exchange()",
        at="scatter_to_blocked")


def test_ranks_only_with_scatter_modes():
    expect_error('x = coop.exchange(coop.this_block(), a, mode="striped_to_blocked", ranks=r)\n',
        coop.ConflictingArgumentsError, "ranks=", "scatter", "mode='striped_to_blocked'", "coop.exchange()")


def test_ranks_must_be_integers():
    expect_error("""
        fr = coop.ThreadData(4, dtype=np.float32)
        for i in range(4):
            fr[i] = i
        x = coop.exchange(coop.this_block(), a, mode="scatter_to_striped", ranks=fr)
    """, coop.InvalidArgumentTypeError, "ranks has dtype float32", "integer", "coop.exchange()")


def test_ranks_must_be_a_payload():
    expect_error('x = coop.exchange(coop.this_block(), a, mode="scatter_to_striped", ranks=n)\n',
        coop.InvalidArgumentTypeError, "ranks=int64", "coop.ThreadData of integers", "coop.exchange()")


def test_ranks_must_pair_with_the_items():
    info, module = compile_error("""
        r2 = coop.ThreadData(2, dtype=np.int32)
        r2[0] = 0
        r2[1] = 1
        x = coop.exchange(coop.this_block(), a, mode="scatter_to_blocked", ranks=r2)
    """)
    check(info, coop.ExtentMismatchError, "ranks has 2 items per thread but value has 4",
          "coop.ThreadData(4, ...)")
    assert isinstance(info.value, ValueError)
    assert_at_user_line(info, module, "coop.exchange(")


def test_flagged_scatter_needs_valid_flags():
    expect_error('x = coop.exchange(coop.this_block(), a, mode="scatter_to_striped_flagged", ranks=r)\n',
        coop.MissingArgumentError, "needs valid_flags=", "coop.exchange()")


def test_valid_flags_only_with_the_flagged_scatter():
    expect_error('x = coop.exchange(coop.this_block(), a, mode="scatter_to_striped", ranks=r, valid_flags=r)\n',
        coop.ConflictingArgumentsError, "valid_flags=", "'scatter_to_striped_flagged'", "coop.exchange()")


def test_valid_flags_extent():
    expect_error("""
        f8 = coop.ThreadData(8, dtype=np.int8)
        for i in range(8):
            f8[i] = 1
        x = coop.exchange(coop.this_block(), a, mode="scatter_to_striped_flagged", ranks=r, valid_flags=f8)
    """, coop.ExtentMismatchError, "valid_flags has 8 items per thread", "coop.exchange()")


@pytest.mark.parametrize("mode", ["scatter_to_striped_guarded", "scatter_to_striped_flagged"])
def test_time_slicing_not_with_guarded_or_flagged(mode):
    expect_error(f'x = coop.exchange(coop.this_block(), a, mode="{mode}", ranks=r, valid_flags=r, '
        'warp_time_slicing=True)\n' if mode.endswith("flagged") else
        f'x = coop.exchange(coop.this_block(), a, mode="{mode}", ranks=r, warp_time_slicing=True)\n',
        coop.ConflictingArgumentsError, "warp_time_slicing=", f"mode='{mode}'", "coop.exchange()")


def test_time_slicing_must_be_a_constant_bool():
    expect_error('x = coop.exchange(coop.this_block(), a, mode="striped_to_blocked", warp_time_slicing=n > 0)\n',
        coop.NonConstantArgumentError, "warp_time_slicing=", "compile-time True or False", "coop.exchange()")


def test_time_slicing_is_a_block_option():
    expect_error('x = coop.exchange(coop.this_warp(), a, mode="striped_to_blocked", warp_time_slicing=True)\n',
        coop.UnsupportedAlgorithmForGroupError, "warp_time_slicing=True", "block exchanges",
        "coop.exchange()")


def test_warp_group_needs_whole_warps():
    expect_error('x = coop.exchange(coop.this_warp(), a, mode="striped_to_blocked")\n',
        coop.UnsupportedBlockShapeError, "multiple of 32", "48", "coop.exchange()", at="coop.exchange(",
        block=48)


def test_warp_striped_modes_need_whole_warps():
    expect_error('x = coop.exchange(coop.this_block(), a, mode="blocked_to_warp_striped")\n',
        coop.UnsupportedBlockShapeError, "mode='blocked_to_warp_striped'", "(10, 5, 1)", "50 threads",
        "coop.exchange()", block=(10, 5))


def test_temp_storage_rejected_for_warp_groups():
    expect_error("""
        ts = coop.TempStorage()
        x = coop.exchange(coop.this_warp(), a, mode="striped_to_blocked", temp_storage=ts)
    """, coop.TempStorageError, "temp_storage=", "warp", "coop.exchange()")


def test_payload_without_dtype():
    expect_error("""
        u = coop.ThreadData(4)
        x = coop.exchange(coop.this_block(), u, mode="striped_to_blocked")
    """, coop.UnknownDtypeError)
