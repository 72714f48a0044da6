"""Misuse of TopK: one broken argument per case, named error, message, user line."""

from __future__ import annotations

from functools import partial

import pytest

import cuda.coop as coop

from .. import error_harness
from ..error_harness import assert_at_user_line, prelude_compiler, sort_prelude

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

SETUP = sort_prelude("float32", "int32")
fails = prelude_compiler(SETUP)
expect_error = partial(error_harness.expect_error, prelude=SETUP)



def test_k_is_required():
    expect_error("""
        out = coop.topk_min_keys(coop.this_block(), keys)
    """, coop.MissingArgumentError, "k is required", "k=", at="coop.topk_min_keys(")


@pytest.mark.parametrize("call", ["coop.topk_min_keys(coop.this_block(), keys, 3, k=3)",
                                  "coop.topk_max_pairs(coop.this_block(), keys, vals, n, k=3)"])
def test_k_given_twice(call):
    expect_error(f"""
        out = {call}
    """, coop.ConflictingArgumentsError, "k is given twice", "k=", "pass it once", at="coop.topk_")


def test_too_many_positional_operands():
    expect_error("""
        out = coop.topk_min_keys(coop.this_block(), keys, 3, 5)
    """, coop.InvalidArgumentTypeError, "takes 3 positional operands (block, keys, k)", "valid_items=")


def test_static_k_negative():
    expect_error("""
        out = coop.topk_max_keys(coop.this_block(), keys, k=-1)
    """, coop.InvalidArgumentValueError, "k=-1")


def test_static_k_larger_than_the_tile():
    expect_error("""
        out = coop.topk_max_keys(coop.this_block(), keys, k=600)
    """, coop.InvalidArgumentValueError, "k=600", "512 keys", "0 <= k <= 512", at="coop.topk_max_keys(",
        block=128)


def test_k_must_be_an_integer():
    expect_error("""
        out = coop.topk_min_keys(coop.this_block(), keys, k=2.5)
    """, coop.InvalidArgumentTypeError, "k=", "integer")


def test_topk_is_a_block_operation():
    expect_error("""
        out = coop.topk_min_keys(coop.this_warp(), keys, k=3)
    """, coop.InvalidGroupError)


def test_pairs_with_another_item_count():
    expect_error("""
        other = coop.ThreadData(8, dtype=np.int32)
        k, v = coop.topk_min_pairs(coop.this_block(), keys, other, k=3)
    """, coop.ExtentMismatchError, at="coop.topk_min_pairs(")


def test_valid_items_must_be_an_integer():
    expect_error("""
        out = coop.topk_min_keys(coop.this_block(), keys, k=3, valid_items=2.0)
    """, coop.InvalidArgumentTypeError, "valid_items=")


def test_unknown_algorithm_lists_both():
    expect_error("""
        out = coop.topk_min_keys(coop.this_block(), keys, k=3, algorithm="bitonic")
    """, coop.InvalidAlgorithmError, "algorithm='bitonic'", "'radix_sort'", "'radix_select'", at="bitonic")


@pytest.mark.parametrize("bits,cls,parts", [
    ("begin_bit=40", coop.InvalidArgumentValueError, ["begin_bit=40", "[0, 32]"]),
    ("begin_bit=8, end_bit=8", coop.InvalidArgumentValueError, ["begin_bit=8 and end_bit=8", "select no bits"]),
    ("end_bit=2.5", coop.InvalidArgumentTypeError, ["end_bit=", "integer"]),
], ids=["outside", "empty", "float"])
def test_bit_range(bits, cls, parts):
    info, module = fails(f"""
        out = coop.topk_max_keys(coop.this_block(), keys, 3, {bits})
    """)
    assert isinstance(info.value, cls), info.value
    for part in parts:
        assert part in str(info.value), (part, str(info.value))
    assert_at_user_line(info, module, "coop.topk_max_keys(")
