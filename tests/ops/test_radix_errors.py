"""Misuse of radix sort and radix rank: one broken argument per case, named error, message, user line."""

from __future__ import annotations

from functools import partial

import pytest

import cuda.coop as coop

from .. import error_harness
from ..error_harness import assert_at_user_line, kernel_types, prelude_compiler, sort_prelude

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

SETUP = sort_prelude("uint32", "float32", ("small", "uint8"))
fails = prelude_compiler(SETUP)
expect_error = partial(error_harness.expect_error, prelude=SETUP)



def test_radix_sort_is_a_block_operation():
    expect_error("""
        out = coop.radix_sort_keys(coop.this_warp(), keys)
    """, coop.InvalidGroupError, "coop.this_warp()", "coop.this_block()", at="coop.radix_sort_keys(")


@pytest.mark.parametrize("control", ["begin_bit=33", "end_bit=-1"])
def test_static_bit_outside_the_key(control):
    info, module = fails(f"""
        out = coop.radix_sort_keys(coop.this_block(), keys, {control})
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    msg = str(info.value)
    assert control in msg and "[0, 32]" in msg
    assert_at_user_line(info, module, control)


def test_static_empty_bit_range():
    expect_error("""
        out = coop.radix_sort_keys(coop.this_block(), keys, begin_bit=8, end_bit=8)
    """, coop.InvalidArgumentValueError, "begin_bit=8 and end_bit=8 select no bits")


def test_bit_index_must_be_an_integer():
    expect_error("""
        out = coop.radix_sort_keys(coop.this_block(), keys, begin_bit=1.5)
    """, coop.InvalidArgumentTypeError, "begin_bit=", "integer")


@pytest.mark.parametrize("bits", [0, 9])
def test_radix_bits_range(bits):
    expect_error(f"""
        out = coop.radix_sort_keys(coop.this_block(), keys, radix_bits={bits})
    """, coop.InvalidArgumentValueError, f"radix_bits={bits}", "[1, 8]")


def test_blocked_to_striped_must_be_static():
    expect_error("""
        out = coop.radix_sort_keys(coop.this_block(), keys, blocked_to_striped=n > 2)
    """, coop.NonConstantArgumentError, "blocked_to_striped=")


def test_pairs_with_another_item_count():
    expect_error("""
        other = coop.ThreadData(3, dtype=np.float32)
        k, v = coop.radix_sort_pairs(coop.this_block(), keys, other)
    """, coop.ExtentMismatchError)


def test_rank_end_bit_must_be_static():
    types = kernel_types()
    info, module = fails("""
        r = coop.radix_rank(coop.this_block(), keys, end_bit=n)
    """, argtypes=(types.uint32[::1], types.int32[::1], types.int32))
    assert isinstance(info.value, coop.NonConstantArgumentError)
    assert "end_bit" in str(info.value)
    assert_at_user_line(info, module, "coop.radix_rank(")


def test_rank_end_bit_with_runtime_begin_bit():
    types = kernel_types()
    info, _ = fails("""
        r = coop.radix_rank(coop.this_block(), keys, begin_bit=n, end_bit=4)
    """, argtypes=(types.uint32[::1], types.int32[::1], types.int32))
    assert isinstance(info.value, coop.NonConstantArgumentError)
    assert "radix_bits=" in str(info.value)


def test_rank_digit_wider_than_8_bits():
    expect_error("""
        r = coop.radix_rank(coop.this_block(), keys, begin_bit=0, end_bit=12)
    """, coop.InvalidArgumentValueError, "12 bits", "1..8")


def test_rank_radix_bits_disagrees_with_end_bit():
    expect_error("""
        r = coop.radix_rank(coop.this_block(), keys, begin_bit=2, end_bit=6, radix_bits=3)
    """, coop.ConflictingArgumentsError, "radix_bits=3", "6 - 2 = 4")


def test_rank_digit_past_the_key():
    expect_error("""
        r = coop.radix_rank(coop.this_block(), small, begin_bit=6, radix_bits=4)
    """, coop.InvalidArgumentValueError, "[6, 10)", "uint8", "begin_bit <= 4")


def test_digit_prefix_items_must_match_the_digits():
    expect_error("""
        pre = coop.ThreadData(3, dtype=np.int32)
        r = coop.radix_rank(coop.this_block(), keys, radix_bits=6, exclusive_digit_prefix=pre)
    """, coop.ExtentMismatchError, "3 items per thread", "64 digits over 128 threads need 1",
        "coop.ThreadData(1, dtype=np.int32)", at="coop.radix_rank(")


def test_digit_prefix_must_be_int32():
    expect_error("""
        pre = coop.ThreadData(1, dtype=np.int64)
        r = coop.radix_rank(coop.this_block(), keys, exclusive_digit_prefix=pre)
    """, coop.DtypeMismatchError, "int64", "int32")


def test_rank_of_a_warp_is_not_supported():
    expect_error("""
        r = coop.radix_rank(coop.this_warp().group_by(4), keys)
    """, coop.InvalidGroupError)


def test_oob_default_needs_valid_items():
    expect_error("""
        out = coop.radix_sort_keys(coop.this_block(), keys, oob_default=0)
    """, coop.ConflictingArgumentsError, "oob_default", "valid_items", at="coop.radix_sort_keys(")


def test_oob_default_of_another_dtype():
    expect_error("""
        out = coop.radix_sort_keys(coop.this_block(), keys, valid_items=n, oob_default=vals[0])
    """, coop.DtypeMismatchError)
