"""Misuse of reduce / sum / reduce_batched: one broken argument per case, named error, message, user line."""

from __future__ import annotations

import pytest

import cuda.coop as coop

from ..kernelgen import module_from_source
from ..error_harness import assert_at_user_line, compile_error, expect_error, kernel_types
from .reduce_error_cases import HELPERS, body, float_args

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def test_bitwise_operator_on_floats():
    expect_error("""
        x = coop.reduce(coop.this_block(), src[0], binary_op="&")
    """, coop.UnsupportedDtypeError, "coop.reduce(): binary_op='&'", "integer", "float32", at='binary_op="&"',
        argtypes=float_args())


def test_python_bitwise_operator_on_floats():
    expect_error("""
        x = coop.reduce(coop.this_warp(), src[0], binary_op=np.bitwise_xor)
    """, coop.UnsupportedDtypeError, "np.bitwise_xor", argtypes=float_args())


def test_unknown_operator_lists_the_valid_ones():
    expect_error(body("""
x = coop.reduce(coop.this_block(), items, binary_op="average")
"""), coop.InvalidOperatorError, "binary_op='average'", "'+'", "'max'", "device=True", at="average")


def test_unsupported_python_operator():
    expect_error("""
        x = coop.reduce(coop.this_block(), src[0], binary_op=np.less)
    """, coop.InvalidOperatorError, "binary_op=np.less is not a supported operator")


@pytest.mark.parametrize("valid", [0, -2, 129])
def test_static_valid_items_out_of_range_for_a_warp(valid):
    info, module = compile_error(f"""
        x = coop.sum(coop.this_warp(), src[0], valid_items={valid})
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    msg = str(info.value)
    assert f"valid_items={valid}" in msg
    assert ("at least 1" in msg) if valid < 1 else ("tile size 32" in msg)
    assert_at_user_line(info, module, "valid_items=")


def test_static_valid_items_above_the_block_tile():
    """A block's tile size is known from the launch: checked when the kernel is specialized."""
    expect_error(body("""
x = coop.sum(coop.this_block(), items, valid_items=600)
"""), coop.InvalidArgumentValueError, "valid_items=600", "512", "(128, 1, 1)", at="valid_items=600",
        block=128)


def test_algorithm_for_a_warp_group():
    expect_error("""
        x = coop.sum(coop.this_warp(), src[0], algorithm="raking")
    """, coop.UnsupportedAlgorithmForGroupError, "algorithm='raking'", "block groups only",
        "coop.this_warp()", at='algorithm="raking"')


def test_unknown_block_algorithm():
    expect_error("""
        x = coop.sum(coop.this_block(), src[0], algorithm="raking_memoize")
    """, coop.InvalidAlgorithmError, "'warp_reductions'", "'raking'", "'raking_commutative_only'")


def test_kernel_is_not_a_device_function():
    expect_error("""
        x = coop.reduce(coop.this_block(), src[0], binary_op=other_kernel)
    """, coop.NotADeviceFunctionError, "binary_op=kernel other_kernel is not a device function",
        "device=True", at="binary_op=other_kernel", params="src, dst, n")


def test_plain_python_function_becomes_a_device_function():
    """NVIDIA's examples pass undecorated operators; they compile as device functions."""
    from ..compiler import compile_cubin

    types = kernel_types()
    module = module_from_source("""
@cuda.jit
def kernel(src, dst, n):
    x = coop.reduce(coop.this_block(), src[cuda.threadIdx.x], binary_op=plain_function)
    y = coop.inclusive_scan(coop.this_warp(), src[cuda.threadIdx.x], scan_op=max_lambda)
    dst[cuda.threadIdx.x] = x + y
""")
    compile_cubin(module.kernel, (types.int32[::1], types.int32[::1], 4), cc=(9, 0), block=128)


def test_plain_function_through_an_attribute_is_named():
    expect_error("""
        x = coop.reduce(coop.this_block(), src[0], binary_op=operators_module.plain_function)
    """, coop.NotADeviceFunctionError,
        "binary_op=plain_function, a plain Python function reached through an attribute",
        "@cuda.jit(device=True)", at="binary_op=operators_module.plain_function")


def test_builtin_that_is_not_an_operator():
    expect_error("""
        x = coop.reduce(coop.this_block(), src[0], binary_op=math.hypot)
    """, coop.NotADeviceFunctionError, "neither a supported operator nor a device function")


def test_device_function_with_the_wrong_signature():
    expect_error("""
        x = coop.reduce(coop.this_warp(), src[0], binary_op=takes_an_array)
    """, coop.InvalidArgumentTypeError, "binary_op=device function takes_an_array does not compile",
        "int32(int32, int32)", at="binary_op=takes_an_array")


def test_temp_storage_on_a_warp_reduction():
    expect_error("""
        ts = coop.TempStorage()
        x = coop.sum(coop.this_warp(), src[0], temp_storage=ts)
    """, coop.TempStorageError, "temp_storage=", "coop.this_warp()", at="temp_storage=ts")


def test_broadcast_must_be_a_constant():
    expect_error("""
        x = coop.sum(coop.this_block(), src[0], broadcast=n > 2)
    """, coop.NonConstantArgumentError, "broadcast=", params="src, dst, n",
        argtypes=(kernel_types().int32[::1], kernel_types().int32[::1], kernel_types().int64))


def test_warp_reduction_needs_whole_warps():
    expect_error("""
        x = coop.sum(coop.this_warp().group_by(8), src[0])
    """, coop.UnsupportedBlockShapeError, "multiple of 32", "40", at="coop.sum(", block=40)


def test_reduce_batched_on_a_block():
    expect_error(body("""
r = coop.reduce_batched(coop.this_block(), items, binary_op="+")
"""), coop.InvalidGroupError, "coop.this_block()", "coop.this_warp()", at="coop.reduce_batched(")


def test_reduce_batched_of_a_scalar():
    expect_error("""
        r = coop.reduce_batched(coop.this_warp(), src[0], binary_op="+")
    """, coop.InvalidArgumentTypeError, "coop.ThreadData", "coop.reduce()")


def test_reduce_batched_layout():
    expect_error(body("""
r = coop.reduce_batched(coop.this_warp(), items, binary_op="+", output_layout="warp_striped")
"""), coop.InvalidAlgorithmError, "output_layout='warp_striped'", "'blocked'")


@pytest.fixture(autouse=True)
def _helpers(monkeypatch):
    """Globals the kernels above refer to, injected into the generated modules' header."""
    from .. import kernelgen

    monkeypatch.setattr(kernelgen, "HEADER", kernelgen.HEADER + HELPERS)


