"""Misuse of shuffle: one broken argument per case, named error, message, user line."""

from __future__ import annotations

from functools import partial

import pytest

import cuda.coop as coop

from .. import error_harness
from ..error_harness import PAYLOAD_PRELUDE

# The kernels start from two int32 payloads, a and r; n is a run-time integer.
compile_error = partial(error_harness.compile_error, prelude=PAYLOAD_PRELUDE, n="int64")
expect_error = partial(error_harness.expect_error, prelude=PAYLOAD_PRELUDE, n="int64")


pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


@pytest.mark.parametrize("group", ["coop.this_warp()", "coop.this_warp().group_by(4)"])
def test_block_only(group):
    expect_error(f'y = coop.shuffle({group}, a, mode="up")\n', coop.InvalidGroupError, "coop.shuffle()",
        f"group={group}", "coop.this_block()", at="coop.shuffle(")


def test_default_mode_down_needs_a_payload():
    # mode= defaults to "down" (NVIDIA's default); a scalar needs mode="offset"/"rotate" written out.
    expect_error("y = coop.shuffle(coop.this_block(), a[0])\n", coop.InvalidArgumentTypeError,
        "coop.shuffle()", "mode='down' (the default)", "coop.ThreadData tile", "mode='offset'",
        at="coop.shuffle(")


def test_unknown_mode():
    expect_error('y = coop.shuffle(coop.this_block(), a, mode="left")\n', coop.InvalidAlgorithmError,
        "coop.shuffle()", "mode='left'", "'rotate'")


@pytest.mark.parametrize("mode", ["up", "down"])
def test_tile_modes_need_a_payload(mode):
    expect_error(f'y = coop.shuffle(coop.this_block(), a[0], mode="{mode}")\n', coop.InvalidArgumentTypeError,
        "coop.shuffle()", f"mode='{mode}'", "coop.ThreadData tile", "mode='offset'", at="coop.shuffle(")


@pytest.mark.parametrize("mode", ["offset", "rotate"])
def test_scalar_modes_need_a_scalar(mode):
    expect_error(f'y = coop.shuffle(coop.this_block(), a, mode="{mode}")\n', coop.InvalidArgumentTypeError,
        "coop.shuffle()", f"mode='{mode}'", "ThreadData(4, int32)", "value[i]")


def test_value_must_be_a_payload_or_number():
    expect_error('y = coop.shuffle(coop.this_block(), src, mode="offset")\n', coop.InvalidArgumentTypeError,
        "coop.shuffle()", "value=array(int32, 1d)")


def test_float_distance():
    expect_error('y = coop.shuffle(coop.this_block(), a, mode="up", distance=1.5)\n',
        coop.InvalidArgumentTypeError, "coop.shuffle()", "distance=", "integer", at="distance=1.5")


def test_uint64_distance():
    expect_error('y = coop.shuffle(coop.this_block(), a[0], mode="offset", distance=np.uint64(n))\n',
        coop.InvalidArgumentTypeError, "coop.shuffle()", "distance is uint64", "signed integer")


def test_temp_storage_must_be_a_descriptor():
    expect_error('y = coop.shuffle(coop.this_block(), a, mode="up", temp_storage=src)\n',
        coop.InvalidArgumentTypeError, "coop.shuffle()", "temp_storage=", "coop.TempStorage")
