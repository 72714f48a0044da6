"""Misuse of merge sort: one broken argument per case, named error, message, user line."""

from __future__ import annotations

from functools import partial

import pytest

import cuda.coop as coop

from .. import error_harness
from ..error_harness import sort_prelude

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

SETUP = sort_prelude("int32", "float32")
expect_error = partial(error_harness.expect_error, prelude=SETUP)



def test_block_sort_needs_a_power_of_two_thread_count():
    expect_error("""
        out = coop.merge_sort_keys(coop.this_block(), keys)
    """, coop.UnsupportedBlockShapeError, "power-of-two", "96 threads", "64 or 128", "coop.this_warp()",
        at="coop.merge_sort_keys(", block=96)


def test_warp_sort_needs_whole_warps():
    expect_error("""
        out = coop.merge_sort_keys(coop.this_warp().group_by(8), keys)
    """, coop.UnsupportedBlockShapeError, "multiple of 32", "48 threads", block=48)


def test_descending_must_be_a_compile_time_bool():
    expect_error("""
        out = coop.merge_sort_keys(coop.this_block(), keys, descending=src[0] > 0)
    """, coop.NonConstantArgumentError, "descending=", "compile-time True or False",
        at="coop.merge_sort_keys(")


def test_oob_default_needs_valid_items():
    expect_error("""
        out = coop.merge_sort_keys(coop.this_block(), keys, oob_default=0)
    """, coop.ConflictingArgumentsError, "oob_default", "valid_items", at="oob_default=0")


def test_oob_default_of_another_dtype():
    expect_error("""
        out = coop.merge_sort_keys(coop.this_block(), keys, valid_items=n, oob_default=vals[0])
    """, coop.DtypeMismatchError, "oob_default", "float32", "int32")


def test_oob_default_literal_out_of_range():
    expect_error("""
        out = coop.merge_sort_keys(coop.this_block(), keys, valid_items=n, oob_default=2**40)
    """, coop.InvalidArgumentValueError, "int32")


def test_values_with_another_item_count():
    expect_error("""
        other = coop.ThreadData(2, dtype=np.float32)
        k, v = coop.merge_sort_pairs(coop.this_block(), keys, other)
    """, coop.ExtentMismatchError, "values has 2 items per thread but keys has 4", "coop.ThreadData(4",
        at="coop.merge_sort_pairs(")


def test_keys_must_be_a_payload():
    expect_error("""
        out = coop.merge_sort_keys(coop.this_block(), src)
    """, coop.InvalidArgumentTypeError, "keys=array(int32, 1d)", "ThreadData")


def test_valid_items_must_be_an_integer():
    expect_error("""
        out = coop.merge_sort_keys(coop.this_block(), keys, valid_items=1.5)
    """, coop.InvalidArgumentTypeError, "valid_items=", "integer")


def test_warp_sorts_own_their_scratch():
    expect_error("""
        ts = coop.TempStorage()
        out = coop.merge_sort_keys(coop.this_warp(), keys, temp_storage=ts)
    """, coop.TempStorageError, "temp_storage=", "coop.this_warp()")


def test_group_must_be_a_group():
    expect_error("""
        out = coop.merge_sort_keys(keys, keys)
    """, coop.InvalidGroupError)


def test_a_kernel_is_not_a_comparator():
    expect_error("""
        out = coop.merge_sort_keys(coop.this_block(), keys, compare_op=kernel)
    """, (coop.NotADeviceFunctionError, coop.InvalidArgumentTypeError), "compare_op=")
