"""Misuse of TopK: one broken argument per case, named error, message, user line."""

from __future__ import annotations

import pytest

import cuda.coop as coop

from ..error_harness import assert_at_user_line, prelude_compiler, sort_prelude

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

SETUP = sort_prelude("float32", "int32")
fails = prelude_compiler(SETUP)



def test_k_is_required():
    info, module = fails("""
        out = coop.topk_min_keys(coop.this_block(), keys)
    """)
    assert isinstance(info.value, coop.MissingArgumentError)
    assert "k is required" in str(info.value) and "k=" in str(info.value)
    assert_at_user_line(info, module, "coop.topk_min_keys(")


@pytest.mark.parametrize("call", ["coop.topk_min_keys(coop.this_block(), keys, 3, k=3)",
                                  "coop.topk_max_pairs(coop.this_block(), keys, vals, n, k=3)"])
def test_k_given_twice(call):
    info, module = fails(f"""
        out = {call}
    """)
    assert isinstance(info.value, coop.ConflictingArgumentsError), info.value
    msg = str(info.value)
    assert "k is given twice" in msg and "k=" in msg and "pass it once" in msg, msg
    assert_at_user_line(info, module, "coop.topk_")


def test_too_many_positional_operands():
    info, module = fails("""
        out = coop.topk_min_keys(coop.this_block(), keys, 3, 5)
    """)
    assert isinstance(info.value, coop.InvalidArgumentTypeError), info.value
    msg = str(info.value)
    assert "takes 3 positional operands (block, keys, k)" in msg and "valid_items=" in msg, msg


def test_static_k_negative():
    info, module = fails("""
        out = coop.topk_max_keys(coop.this_block(), keys, k=-1)
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    assert "k=-1" in str(info.value)


def test_static_k_larger_than_the_tile():
    info, module = fails("""
        out = coop.topk_max_keys(coop.this_block(), keys, k=600)
    """, block=128)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    msg = str(info.value)
    assert "k=600" in msg and "512 keys" in msg and "0 <= k <= 512" in msg
    assert_at_user_line(info, module, "coop.topk_max_keys(")


def test_k_must_be_an_integer():
    info, _ = fails("""
        out = coop.topk_min_keys(coop.this_block(), keys, k=2.5)
    """)
    assert isinstance(info.value, coop.InvalidArgumentTypeError)
    assert "k=" in str(info.value) and "integer" in str(info.value)


def test_topk_is_a_block_operation():
    info, _ = fails("""
        out = coop.topk_min_keys(coop.this_warp(), keys, k=3)
    """)
    assert isinstance(info.value, coop.InvalidGroupError)


def test_pairs_with_another_item_count():
    info, module = fails("""
        other = coop.ThreadData(8, dtype=np.int32)
        k, v = coop.topk_min_pairs(coop.this_block(), keys, other, k=3)
    """)
    assert isinstance(info.value, coop.ExtentMismatchError)
    assert_at_user_line(info, module, "coop.topk_min_pairs(")


def test_valid_items_must_be_an_integer():
    info, _ = fails("""
        out = coop.topk_min_keys(coop.this_block(), keys, k=3, valid_items=2.0)
    """)
    assert isinstance(info.value, coop.InvalidArgumentTypeError)
    assert "valid_items=" in str(info.value)


def test_unknown_algorithm_lists_both():
    info, module = fails("""
        out = coop.topk_min_keys(coop.this_block(), keys, k=3, algorithm="bitonic")
    """)
    assert isinstance(info.value, coop.InvalidAlgorithmError)
    msg = str(info.value)
    assert "algorithm='bitonic'" in msg and "'radix_sort'" in msg and "'radix_select'" in msg
    assert_at_user_line(info, module, "bitonic")


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
