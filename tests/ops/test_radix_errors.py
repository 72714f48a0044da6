"""Misuse of radix sort and radix rank: one broken argument per case, named error, message, user line."""

from __future__ import annotations

import pytest

import cuda.coop as coop

from ..error_harness import assert_at_user_line, kernel_types, prelude_compiler, sort_prelude

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

SETUP = sort_prelude("uint32", "float32", ("small", "uint8"))
fails = prelude_compiler(SETUP)



def test_radix_sort_is_a_block_operation():
    info, module = fails("""
        out = coop.radix_sort_keys(coop.this_warp(), keys)
    """)
    assert isinstance(info.value, coop.InvalidGroupError)
    assert "coop.this_warp()" in str(info.value) and "coop.this_block()" in str(info.value)
    assert_at_user_line(info, module, "coop.radix_sort_keys(")


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
    info, _ = fails("""
        out = coop.radix_sort_keys(coop.this_block(), keys, begin_bit=8, end_bit=8)
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    assert "begin_bit=8 and end_bit=8 select no bits" in str(info.value)


def test_bit_index_must_be_an_integer():
    info, _ = fails("""
        out = coop.radix_sort_keys(coop.this_block(), keys, begin_bit=1.5)
    """)
    assert isinstance(info.value, coop.InvalidArgumentTypeError)
    assert "begin_bit=" in str(info.value) and "integer" in str(info.value)


@pytest.mark.parametrize("bits", [0, 9])
def test_radix_bits_range(bits):
    info, _ = fails(f"""
        out = coop.radix_sort_keys(coop.this_block(), keys, radix_bits={bits})
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    assert f"radix_bits={bits}" in str(info.value) and "[1, 8]" in str(info.value)


def test_blocked_to_striped_must_be_static():
    info, _ = fails("""
        out = coop.radix_sort_keys(coop.this_block(), keys, blocked_to_striped=n > 2)
    """)
    assert isinstance(info.value, coop.NonConstantArgumentError)
    assert "blocked_to_striped=" in str(info.value)


def test_pairs_with_another_item_count():
    info, _ = fails("""
        other = coop.ThreadData(3, dtype=np.float32)
        k, v = coop.radix_sort_pairs(coop.this_block(), keys, other)
    """)
    assert isinstance(info.value, coop.ExtentMismatchError)


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
    info, _ = fails("""
        r = coop.radix_rank(coop.this_block(), keys, begin_bit=0, end_bit=12)
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    assert "12 bits" in str(info.value) and "1..8" in str(info.value)


def test_rank_radix_bits_disagrees_with_end_bit():
    info, _ = fails("""
        r = coop.radix_rank(coop.this_block(), keys, begin_bit=2, end_bit=6, radix_bits=3)
    """)
    assert isinstance(info.value, coop.ConflictingArgumentsError)
    assert "radix_bits=3" in str(info.value) and "6 - 2 = 4" in str(info.value)


def test_rank_digit_past_the_key():
    info, _ = fails("""
        r = coop.radix_rank(coop.this_block(), small, begin_bit=6, radix_bits=4)
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    assert "[6, 10)" in str(info.value) and "uint8" in str(info.value) and "begin_bit <= 4" in str(info.value)


def test_digit_prefix_items_must_match_the_digits():
    info, module = fails("""
        pre = coop.ThreadData(3, dtype=np.int32)
        r = coop.radix_rank(coop.this_block(), keys, radix_bits=6, exclusive_digit_prefix=pre)
    """)
    assert isinstance(info.value, coop.ExtentMismatchError)
    msg = str(info.value)
    assert "3 items per thread" in msg and "64 digits over 128 threads need 1" in msg
    assert "coop.ThreadData(1, dtype=np.int32)" in msg
    assert_at_user_line(info, module, "coop.radix_rank(")


def test_digit_prefix_must_be_int32():
    info, _ = fails("""
        pre = coop.ThreadData(1, dtype=np.int64)
        r = coop.radix_rank(coop.this_block(), keys, exclusive_digit_prefix=pre)
    """)
    assert isinstance(info.value, coop.DtypeMismatchError)
    assert "int64" in str(info.value) and "int32" in str(info.value)


def test_rank_of_a_warp_is_not_supported():
    info, _ = fails("""
        r = coop.radix_rank(coop.this_warp().group_by(4), keys)
    """)
    assert isinstance(info.value, coop.InvalidGroupError)


def test_oob_default_needs_valid_items():
    info, module = fails("""
        out = coop.radix_sort_keys(coop.this_block(), keys, oob_default=0)
    """)
    assert isinstance(info.value, coop.ConflictingArgumentsError)
    assert "oob_default" in str(info.value) and "valid_items" in str(info.value)
    assert_at_user_line(info, module, "coop.radix_sort_keys(")


def test_oob_default_of_another_dtype():
    info, _ = fails("""
        out = coop.radix_sort_keys(coop.this_block(), keys, valid_items=n, oob_default=vals[0])
    """)
    assert isinstance(info.value, coop.DtypeMismatchError)
