"""Misuse of shuffle: one broken argument per case, named error, message, user line."""

from __future__ import annotations

from functools import partial

import pytest

import cuda.coop as coop

from .. import error_harness
from ..error_harness import PAYLOAD_PRELUDE, assert_at_user_line

# The kernels start from two int32 payloads, a and r; n is a run-time integer.
compile_error = partial(error_harness.compile_error, prelude=PAYLOAD_PRELUDE, n="int64")


pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def check(info, cls, *parts):
    assert isinstance(info.value, cls), (type(info.value), str(info.value))
    msg = str(info.value)
    for part in ("coop.shuffle()", *parts):
        assert part in msg, (part, msg)


@pytest.mark.parametrize("group", ["coop.this_warp()", "coop.this_warp().group_by(4)"])
def test_block_only(group):
    info, module = compile_error(f'y = coop.shuffle({group}, a, mode="up")\n')
    check(info, coop.InvalidGroupError, f"group={group}", "coop.this_block()")
    assert_at_user_line(info, module, "coop.shuffle(")


def test_default_mode_down_needs_a_payload():
    # mode= defaults to "down" (NVIDIA's default); a scalar needs mode="offset"/"rotate" written out.
    info, module = compile_error("y = coop.shuffle(coop.this_block(), a[0])\n")
    check(info, coop.InvalidArgumentTypeError, "mode='down' (the default)", "coop.ThreadData tile",
          "mode='offset'")
    assert_at_user_line(info, module, "coop.shuffle(")


def test_unknown_mode():
    info, _ = compile_error('y = coop.shuffle(coop.this_block(), a, mode="left")\n')
    check(info, coop.InvalidAlgorithmError, "mode='left'", "'rotate'")


@pytest.mark.parametrize("mode", ["up", "down"])
def test_tile_modes_need_a_payload(mode):
    info, module = compile_error(f'y = coop.shuffle(coop.this_block(), a[0], mode="{mode}")\n')
    check(info, coop.InvalidArgumentTypeError, f"mode='{mode}'", "coop.ThreadData tile", "mode='offset'")
    assert_at_user_line(info, module, "coop.shuffle(")


@pytest.mark.parametrize("mode", ["offset", "rotate"])
def test_scalar_modes_need_a_scalar(mode):
    info, _ = compile_error(f'y = coop.shuffle(coop.this_block(), a, mode="{mode}")\n')
    check(info, coop.InvalidArgumentTypeError, f"mode='{mode}'", "ThreadData(4, int32)", "value[i]")


def test_value_must_be_a_payload_or_number():
    info, _ = compile_error('y = coop.shuffle(coop.this_block(), src, mode="offset")\n')
    check(info, coop.InvalidArgumentTypeError, "value=array(int32, 1d)")


def test_float_distance():
    info, module = compile_error('y = coop.shuffle(coop.this_block(), a, mode="up", distance=1.5)\n')
    check(info, coop.InvalidArgumentTypeError, "distance=", "integer")
    assert_at_user_line(info, module, "distance=1.5")


def test_uint64_distance():
    info, _ = compile_error('y = coop.shuffle(coop.this_block(), a[0], mode="offset", distance=np.uint64(n))\n')
    check(info, coop.InvalidArgumentTypeError, "distance is uint64", "signed integer")


def test_temp_storage_must_be_a_descriptor():
    info, _ = compile_error('y = coop.shuffle(coop.this_block(), a, mode="up", temp_storage=src)\n')
    check(info, coop.InvalidArgumentTypeError, "temp_storage=", "coop.TempStorage")
