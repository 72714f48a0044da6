"""Misuse of merge sort: one broken argument per case, named error, message, user line."""

from __future__ import annotations

import pytest

import cuda.coop as coop

from ..error_harness import assert_at_user_line, prelude_compiler, sort_prelude

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

SETUP = sort_prelude("int32", "float32")
fails = prelude_compiler(SETUP)



def test_block_sort_needs_a_power_of_two_thread_count():
    info, module = fails("""
        out = coop.merge_sort_keys(coop.this_block(), keys)
    """, block=96)
    assert isinstance(info.value, coop.UnsupportedBlockShapeError)
    msg = str(info.value)
    assert "power-of-two" in msg and "96 threads" in msg and "64 or 128" in msg and "coop.this_warp()" in msg
    assert_at_user_line(info, module, "coop.merge_sort_keys(")


def test_warp_sort_needs_whole_warps():
    info, module = fails("""
        out = coop.merge_sort_keys(coop.this_warp().group_by(8), keys)
    """, block=48)
    assert isinstance(info.value, coop.UnsupportedBlockShapeError)
    assert "multiple of 32" in str(info.value) and "48 threads" in str(info.value)


def test_descending_must_be_a_compile_time_bool():
    info, module = fails("""
        out = coop.merge_sort_keys(coop.this_block(), keys, descending=src[0] > 0)
    """)
    assert isinstance(info.value, coop.NonConstantArgumentError)
    assert "descending=" in str(info.value) and "compile-time True or False" in str(info.value)
    assert_at_user_line(info, module, "coop.merge_sort_keys(")


def test_oob_default_needs_valid_items():
    info, module = fails("""
        out = coop.merge_sort_keys(coop.this_block(), keys, oob_default=0)
    """)
    assert isinstance(info.value, coop.ConflictingArgumentsError)
    assert "oob_default" in str(info.value) and "valid_items" in str(info.value)
    assert_at_user_line(info, module, "oob_default=0")


def test_oob_default_of_another_dtype():
    info, _ = fails("""
        out = coop.merge_sort_keys(coop.this_block(), keys, valid_items=n, oob_default=vals[0])
    """)
    assert isinstance(info.value, coop.DtypeMismatchError)
    assert "oob_default" in str(info.value) and "float32" in str(info.value) and "int32" in str(info.value)


def test_oob_default_literal_out_of_range():
    info, _ = fails("""
        out = coop.merge_sort_keys(coop.this_block(), keys, valid_items=n, oob_default=2**40)
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    assert "int32" in str(info.value)


def test_values_with_another_item_count():
    info, module = fails("""
        other = coop.ThreadData(2, dtype=np.float32)
        k, v = coop.merge_sort_pairs(coop.this_block(), keys, other)
    """)
    assert isinstance(info.value, coop.ExtentMismatchError)
    msg = str(info.value)
    assert "values has 2 items per thread but keys has 4" in msg and "coop.ThreadData(4" in msg
    assert_at_user_line(info, module, "coop.merge_sort_pairs(")


def test_keys_must_be_a_payload():
    info, _ = fails("""
        out = coop.merge_sort_keys(coop.this_block(), src)
    """)
    assert isinstance(info.value, coop.InvalidArgumentTypeError)
    assert "keys=array(int32, 1d)" in str(info.value) and "ThreadData" in str(info.value)


def test_valid_items_must_be_an_integer():
    info, _ = fails("""
        out = coop.merge_sort_keys(coop.this_block(), keys, valid_items=1.5)
    """)
    assert isinstance(info.value, coop.InvalidArgumentTypeError)
    assert "valid_items=" in str(info.value) and "integer" in str(info.value)


def test_warp_sorts_own_their_scratch():
    info, _ = fails("""
        ts = coop.TempStorage()
        out = coop.merge_sort_keys(coop.this_warp(), keys, temp_storage=ts)
    """)
    assert isinstance(info.value, coop.TempStorageError)
    assert "temp_storage=" in str(info.value) and "coop.this_warp()" in str(info.value)


def test_group_must_be_a_group():
    info, _ = fails("""
        out = coop.merge_sort_keys(keys, keys)
    """)
    assert isinstance(info.value, coop.InvalidGroupError)


def test_a_kernel_is_not_a_comparator():
    info, _ = fails("""
        out = coop.merge_sort_keys(coop.this_block(), keys, compare_op=kernel)
    """)
    assert isinstance(info.value, (coop.NotADeviceFunctionError, coop.InvalidArgumentTypeError))
    assert "compare_op=" in str(info.value)
