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


def check(info, cls, *parts):
    assert isinstance(info.value, cls), (type(info.value), str(info.value))
    msg = str(info.value)
    for part in parts:
        assert part in msg, (part, msg)
    assert "coop.exchange()" in msg


def test_default_mode_takes_no_ranks():
    # mode= defaults to "striped_to_blocked" (NVIDIA's default), which has no use for ranks=.
    info, module = compile_error("x = coop.exchange(coop.this_block(), a, ranks=r)\n")
    check(info, coop.CoopError, "ranks", "mode='striped_to_blocked'", "'scatter_to_*'")
    assert_at_user_line(info, module, "coop.exchange(")


def test_unknown_mode_lists_every_mode():
    info, module = compile_error('x = coop.exchange(coop.this_block(), a, mode="blocked_to_warpstriped")\n')
    check(info, coop.InvalidAlgorithmError, "mode='blocked_to_warpstriped'", "'blocked_to_warp_striped'",
          "'scatter_to_striped_guarded'")
    assert_at_user_line(info, module, "blocked_to_warpstriped")


def test_mode_must_be_a_constant_string():
    info, _ = compile_error('x = coop.exchange(coop.this_block(), a, mode=1)\n')
    check(info, coop.InvalidAlgorithmError, "mode=1", "must be a string")


@pytest.mark.parametrize("mode", ["warp_striped_to_blocked", "scatter_to_striped"])
def test_block_only_modes_reject_warp_groups(mode):
    info, module = compile_error(f'x = coop.exchange(coop.this_warp().group_by(8), a, mode="{mode}", ranks=r)\n')
    check(info, coop.UnsupportedAlgorithmForGroupError, f"mode='{mode}'", "coop.this_warp().group_by(8)",
          "'striped_to_blocked' or 'blocked_to_striped'")
    assert_at_user_line(info, module, "coop.exchange(")


def test_value_must_be_a_payload():
    info, _ = compile_error('x = coop.exchange(coop.this_block(), src, mode="striped_to_blocked")\n')
    check(info, coop.InvalidArgumentTypeError, "value=array(int32, 1d)", "coop.ThreadData")


def test_scatter_needs_ranks():
    info, module = compile_error('x = coop.exchange(coop.this_block(), a, mode="scatter_to_blocked")\n')
    check(info, coop.MissingArgumentError, "mode='scatter_to_blocked' needs ranks=")
    assert_at_user_line(info, module, "scatter_to_blocked")


def test_ranks_only_with_scatter_modes():
    info, _ = compile_error('x = coop.exchange(coop.this_block(), a, mode="striped_to_blocked", ranks=r)\n')
    check(info, coop.ConflictingArgumentsError, "ranks=", "scatter", "mode='striped_to_blocked'")


def test_ranks_must_be_integers():
    info, _ = compile_error("""
        fr = coop.ThreadData(4, dtype=np.float32)
        for i in range(4):
            fr[i] = i
        x = coop.exchange(coop.this_block(), a, mode="scatter_to_striped", ranks=fr)
    """)
    check(info, coop.InvalidArgumentTypeError, "ranks has dtype float32", "integer")


def test_ranks_must_be_a_payload():
    info, _ = compile_error('x = coop.exchange(coop.this_block(), a, mode="scatter_to_striped", ranks=n)\n')
    check(info, coop.InvalidArgumentTypeError, "ranks=int64", "coop.ThreadData of integers")


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
    info, _ = compile_error('x = coop.exchange(coop.this_block(), a, mode="scatter_to_striped_flagged", ranks=r)\n')
    check(info, coop.MissingArgumentError, "needs valid_flags=")


def test_valid_flags_only_with_the_flagged_scatter():
    info, _ = compile_error(
        'x = coop.exchange(coop.this_block(), a, mode="scatter_to_striped", ranks=r, valid_flags=r)\n')
    check(info, coop.ConflictingArgumentsError, "valid_flags=", "'scatter_to_striped_flagged'")


def test_valid_flags_extent():
    info, _ = compile_error("""
        f8 = coop.ThreadData(8, dtype=np.int8)
        for i in range(8):
            f8[i] = 1
        x = coop.exchange(coop.this_block(), a, mode="scatter_to_striped_flagged", ranks=r, valid_flags=f8)
    """)
    check(info, coop.ExtentMismatchError, "valid_flags has 8 items per thread")


@pytest.mark.parametrize("mode", ["scatter_to_striped_guarded", "scatter_to_striped_flagged"])
def test_time_slicing_not_with_guarded_or_flagged(mode):
    info, _ = compile_error(
        f'x = coop.exchange(coop.this_block(), a, mode="{mode}", ranks=r, valid_flags=r, '
        'warp_time_slicing=True)\n' if mode.endswith("flagged") else
        f'x = coop.exchange(coop.this_block(), a, mode="{mode}", ranks=r, warp_time_slicing=True)\n')
    check(info, coop.ConflictingArgumentsError, "warp_time_slicing=", f"mode='{mode}'")


def test_time_slicing_must_be_a_constant_bool():
    info, _ = compile_error(
        'x = coop.exchange(coop.this_block(), a, mode="striped_to_blocked", warp_time_slicing=n > 0)\n')
    check(info, coop.NonConstantArgumentError, "warp_time_slicing=", "compile-time True or False")


def test_time_slicing_is_a_block_option():
    info, _ = compile_error(
        'x = coop.exchange(coop.this_warp(), a, mode="striped_to_blocked", warp_time_slicing=True)\n')
    check(info, coop.UnsupportedAlgorithmForGroupError, "warp_time_slicing=True", "block exchanges")


def test_warp_group_needs_whole_warps():
    info, module = compile_error('x = coop.exchange(coop.this_warp(), a, mode="striped_to_blocked")\n', block=48)
    check(info, coop.UnsupportedBlockShapeError, "multiple of 32", "48")
    assert_at_user_line(info, module, "coop.exchange(")


def test_warp_striped_modes_need_whole_warps():
    info, _ = compile_error('x = coop.exchange(coop.this_block(), a, mode="blocked_to_warp_striped")\n',
                            block=(10, 5))
    check(info, coop.UnsupportedBlockShapeError, "mode='blocked_to_warp_striped'", "(10, 5, 1)", "50 threads")


def test_temp_storage_rejected_for_warp_groups():
    info, _ = compile_error("""
        ts = coop.TempStorage()
        x = coop.exchange(coop.this_warp(), a, mode="striped_to_blocked", temp_storage=ts)
    """)
    check(info, coop.TempStorageError, "temp_storage=", "warp")


def test_payload_without_dtype():
    info, _ = compile_error("""
        u = coop.ThreadData(4)
        x = coop.exchange(coop.this_block(), u, mode="striped_to_blocked")
    """)
    assert isinstance(info.value, coop.UnknownDtypeError)
