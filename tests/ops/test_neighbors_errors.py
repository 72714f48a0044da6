"""Misuse of adjacent_difference and discontinuity: named error, message, user line."""

from __future__ import annotations

from functools import partial

import pytest

import cuda.coop as coop

from .. import error_harness
from ..error_harness import PAYLOAD_PRELUDE

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

CALLBACKS = """
import operator

@cuda.jit(device=True)
def three_args(a, b, c):
    return a

def host_function(a, b):
    return a - b

import types as _types_module
ns = _types_module.SimpleNamespace(host_function=host_function)
"""


# The kernels start from two int32 payloads, a and r (n is a run-time integer), and may call
# the callbacks above.
expect_error = partial(error_harness.expect_error, prelude=PAYLOAD_PRELUDE, n="int64",
                       module_code=CALLBACKS)


@pytest.mark.parametrize("call", ["adjacent_difference", "discontinuity"])
def test_block_only(call):
    expect_error(f"d = coop.{call}(coop.this_warp(), a)\n", coop.InvalidGroupError, f"coop.{call}()",
        "group=coop.this_warp()", "coop.this_block()", at=f"coop.{call}(")


@pytest.mark.parametrize("call", ["adjacent_difference", "discontinuity"])
def test_values_must_be_a_payload(call):
    expect_error(f"d = coop.{call}(coop.this_block(), n)\n", coop.InvalidArgumentTypeError, f"coop.{call}()",
        "values=int64", "coop.ThreadData")


def test_unknown_direction():
    expect_error('d = coop.adjacent_difference(coop.this_block(), a, direction="up")\n',
        coop.InvalidAlgorithmError, "coop.adjacent_difference()", "direction='up'", "'left' or 'right'",
        at='direction="up"')


def test_unknown_discontinuity_mode():
    expect_error('d = coop.discontinuity(coop.this_block(), a, mode="head")\n', coop.InvalidAlgorithmError,
        "coop.discontinuity()", "mode='head'", "'heads', 'tails' or 'heads_and_tails'")


def test_successor_with_left_difference():
    expect_error('d = coop.adjacent_difference(coop.this_block(), a, tile_successor_item=a[0])\n',
        coop.ConflictingArgumentsError, "coop.adjacent_difference()", "tile_successor_item=",
        "direction='right'", at="tile_successor_item")


def test_predecessor_with_right_difference():
    expect_error('d = coop.adjacent_difference(coop.this_block(), a, direction="right", '
                    'tile_predecessor_item=a[0])\n', coop.ConflictingArgumentsError,
        "coop.adjacent_difference()", "tile_predecessor_item=", "direction='left'")


def test_predecessor_with_tails():
    expect_error('d = coop.discontinuity(coop.this_block(), a, mode="tails", tile_predecessor_item=a[0])\n',
        coop.ConflictingArgumentsError, "coop.discontinuity()", "tile_predecessor_item=",
        "'heads_and_tails'")


def test_successor_with_heads():
    expect_error('d = coop.discontinuity(coop.this_block(), a, tile_successor_item=a[0])\n',
        coop.ConflictingArgumentsError, "coop.discontinuity()", "tile_successor_item=", "mode='heads'")


def test_neighbour_item_dtype_must_match():
    expect_error('d = coop.adjacent_difference(coop.this_block(), a, tile_predecessor_item=n)\n',
        coop.DtypeMismatchError, "coop.adjacent_difference()", "tile_predecessor_item has dtype int64",
        "values has dtype int32", "np.int32(value)", at="tile_predecessor_item=n")


def test_float_literal_neighbour_for_integer_values():
    # A Python float literal is converted to the values' dtype when it is a whole number in range.
    expect_error('d = coop.discontinuity(coop.this_block(), a, tile_predecessor_item=1.5)\n',
        coop.InvalidArgumentValueError, "coop.discontinuity()", "tile_predecessor_item=1.5",
        "not representable in int32")


def test_float64_neighbour_for_integer_values():
    expect_error('d = coop.discontinuity(coop.this_block(), a, tile_predecessor_item=src[0] * 1.5)\n',
        coop.DtypeMismatchError, "coop.discontinuity()", "tile_predecessor_item has dtype float64",
        "int32")


def test_out_of_range_literal_neighbour():
    expect_error('d = coop.adjacent_difference(coop.this_block(), a, tile_predecessor_item=2**40)\n',
        coop.InvalidArgumentValueError, "coop.adjacent_difference()", "outside the range of int32")


@pytest.mark.parametrize("call", ["adjacent_difference", "discontinuity"])
def test_valid_items_must_be_an_integer(call):
    expect_error(f"d = coop.{call}(coop.this_block(), a, valid_items=1.5)\n", coop.InvalidArgumentTypeError,
        f"coop.{call}()", "valid_items=1.5", "integer")


def test_unknown_difference_op():
    expect_error('d = coop.adjacent_difference(coop.this_block(), a, difference_op="xor")\n',
        coop.InvalidOperatorError, "coop.adjacent_difference()", "difference_op='xor'", "'-'",
        "@cuda.jit(device=True)")


def test_operator_that_is_not_a_difference():
    expect_error("d = coop.adjacent_difference(coop.this_block(), a, difference_op=operator.add)\n",
        coop.InvalidOperatorError, "coop.adjacent_difference()", "difference_op=operator.add")


def test_unknown_flag_op():
    expect_error("d = coop.discontinuity(coop.this_block(), a, flag_op=operator.add)\n",
        coop.InvalidOperatorError, "coop.discontinuity()", "flag_op=operator.add", "'!='")


def test_plain_python_function_compiles_as_a_device_function():
    """NVIDIA's examples pass undecorated operators; only one behind an attribute is refused."""
    expect_error("d = coop.adjacent_difference(coop.this_block(), a, difference_op=ns.host_function)\n",
        coop.NotADeviceFunctionError, "host_function", "@cuda.jit(device=True)",
        at="difference_op=ns.host_function")


def test_device_function_with_the_wrong_signature():
    expect_error("d = coop.discontinuity(coop.this_block(), a, flag_op=three_args)\n",
        coop.InvalidArgumentTypeError, "coop.discontinuity()", "flag_op=device function three_args",
        "int32(int32, int32)", at="flag_op=three_args")


def test_discontinuity_returns_a_pair_only_for_heads_and_tails():
    # Unpacking a single flags payload is a Numba typing error, not ours; the pair
    # form must type.  This checks the pair form compiles into two results.
    from ..compiler import types

    from ..compiler import compile_cubin

    from ..kernelgen import module_from_source

    module = module_from_source("""
@cuda.jit
def kernel(src, dst):
    a = coop.ThreadData(2, dtype=np.float32)
    for i in range(2):
        a[i] = src[cuda.threadIdx.x * 2 + i]
    h, t = coop.discontinuity(coop.this_block(), a, mode="heads_and_tails")
    for i in range(2):
        dst[cuda.threadIdx.x * 2 + i] = h[i] + 2 * t[i]
""")
    kb = compile_cubin(module.kernel, (types.float32[::1], types.int32[::1]), cc=(9, 0), block=32)
    assert kb.cubin[:4] == b"\x7fELF"
