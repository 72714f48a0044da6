"""Misuse of reduce / sum / reduce_batched: one broken argument per case, named error, message, user line."""

from __future__ import annotations

import pytest

import cuda.coop as coop

from ..kernelgen import module_from_source
from ..error_harness import assert_at_user_line, compile_error, kernel_types
from .reduce_error_cases import HELPERS, body, float_args

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def test_bitwise_operator_on_floats():
    info, module = compile_error("""
        x = coop.reduce(coop.this_block(), src[0], binary_op="&")
    """, argtypes=float_args())
    assert isinstance(info.value, coop.UnsupportedDtypeError)
    msg = str(info.value)
    assert "coop.reduce(): binary_op='&'" in msg and "integer" in msg and "float32" in msg
    assert_at_user_line(info, module, 'binary_op="&"')


def test_python_bitwise_operator_on_floats():
    info, _ = compile_error("""
        x = coop.reduce(coop.this_warp(), src[0], binary_op=np.bitwise_xor)
    """, argtypes=float_args())
    assert isinstance(info.value, coop.UnsupportedDtypeError)
    assert "np.bitwise_xor" in str(info.value)


def test_unknown_operator_lists_the_valid_ones():
    info, module = compile_error(body("""
x = coop.reduce(coop.this_block(), items, binary_op="average")
"""))
    assert isinstance(info.value, coop.InvalidOperatorError)
    msg = str(info.value)
    assert "binary_op='average'" in msg and "'+'" in msg and "'max'" in msg and "device=True" in msg
    assert_at_user_line(info, module, "average")


def test_unsupported_python_operator():
    info, _ = compile_error("""
        x = coop.reduce(coop.this_block(), src[0], binary_op=np.less)
    """)
    assert isinstance(info.value, coop.InvalidOperatorError)
    assert "binary_op=np.less is not a supported operator" in str(info.value)


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
    info, module = compile_error(body("""
x = coop.sum(coop.this_block(), items, valid_items=600)
"""), block=128)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    msg = str(info.value)
    assert "valid_items=600" in msg and "512" in msg and "(128, 1, 1)" in msg
    assert_at_user_line(info, module, "valid_items=600")


def test_algorithm_for_a_warp_group():
    info, module = compile_error("""
        x = coop.sum(coop.this_warp(), src[0], algorithm="raking")
    """)
    assert isinstance(info.value, coop.UnsupportedAlgorithmForGroupError)
    msg = str(info.value)
    assert "algorithm='raking'" in msg and "block groups only" in msg and "coop.this_warp()" in msg
    assert_at_user_line(info, module, 'algorithm="raking"')


def test_unknown_block_algorithm():
    info, _ = compile_error("""
        x = coop.sum(coop.this_block(), src[0], algorithm="raking_memoize")
    """)
    assert isinstance(info.value, coop.InvalidAlgorithmError)
    msg = str(info.value)
    assert "'warp_reductions'" in msg and "'raking'" in msg and "'raking_commutative_only'" in msg


def test_kernel_is_not_a_device_function():
    info, module = compile_error("""
        x = coop.reduce(coop.this_block(), src[0], binary_op=other_kernel)
    """, params="src, dst, n")
    assert isinstance(info.value, coop.NotADeviceFunctionError)
    msg = str(info.value)
    assert "binary_op=kernel other_kernel is not a device function" in msg and "device=True" in msg
    assert_at_user_line(info, module, "binary_op=other_kernel")


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
    info, module = compile_error("""
        x = coop.reduce(coop.this_block(), src[0], binary_op=operators_module.plain_function)
    """)
    assert isinstance(info.value, coop.NotADeviceFunctionError)
    msg = str(info.value)
    assert "binary_op=plain_function, a plain Python function reached through an attribute" in msg
    assert "@cuda.jit(device=True)" in msg
    assert_at_user_line(info, module, "binary_op=operators_module.plain_function")


def test_builtin_that_is_not_an_operator():
    info, _ = compile_error("""
        x = coop.reduce(coop.this_block(), src[0], binary_op=math.hypot)
    """)
    assert isinstance(info.value, coop.NotADeviceFunctionError)
    assert "neither a supported operator nor a device function" in str(info.value)


def test_device_function_with_the_wrong_signature():
    info, module = compile_error("""
        x = coop.reduce(coop.this_warp(), src[0], binary_op=takes_an_array)
    """)
    assert isinstance(info.value, coop.InvalidArgumentTypeError)
    msg = str(info.value)
    assert "binary_op=device function takes_an_array does not compile" in msg and "int32(int32, int32)" in msg
    assert_at_user_line(info, module, "binary_op=takes_an_array")


def test_temp_storage_on_a_warp_reduction():
    info, module = compile_error("""
        ts = coop.TempStorage()
        x = coop.sum(coop.this_warp(), src[0], temp_storage=ts)
    """)
    assert isinstance(info.value, coop.TempStorageError)
    msg = str(info.value)
    assert "temp_storage=" in msg and "coop.this_warp()" in msg
    assert_at_user_line(info, module, "temp_storage=ts")


def test_broadcast_must_be_a_constant():
    info, _ = compile_error("""
        x = coop.sum(coop.this_block(), src[0], broadcast=n > 2)
    """, params="src, dst, n", argtypes=(kernel_types().int32[::1], kernel_types().int32[::1], kernel_types().int64))
    assert isinstance(info.value, coop.NonConstantArgumentError)
    assert "broadcast=" in str(info.value)


def test_warp_reduction_needs_whole_warps():
    info, module = compile_error("""
        x = coop.sum(coop.this_warp().group_by(8), src[0])
    """, block=40)
    assert isinstance(info.value, coop.UnsupportedBlockShapeError)
    assert "multiple of 32" in str(info.value) and "40" in str(info.value)
    assert_at_user_line(info, module, "coop.sum(")


def test_reduce_batched_on_a_block():
    info, module = compile_error(body("""
r = coop.reduce_batched(coop.this_block(), items, binary_op="+")
"""))
    assert isinstance(info.value, coop.InvalidGroupError)
    assert "coop.this_block()" in str(info.value) and "coop.this_warp()" in str(info.value)
    assert_at_user_line(info, module, "coop.reduce_batched(")


def test_reduce_batched_of_a_scalar():
    info, _ = compile_error("""
        r = coop.reduce_batched(coop.this_warp(), src[0], binary_op="+")
    """)
    assert isinstance(info.value, coop.InvalidArgumentTypeError)
    assert "coop.ThreadData" in str(info.value) and "coop.reduce()" in str(info.value)


def test_reduce_batched_layout():
    info, _ = compile_error(body("""
r = coop.reduce_batched(coop.this_warp(), items, binary_op="+", output_layout="warp_striped")
"""))
    assert isinstance(info.value, coop.InvalidAlgorithmError)
    assert "output_layout='warp_striped'" in str(info.value) and "'blocked'" in str(info.value)


@pytest.fixture(autouse=True)
def _helpers(monkeypatch):
    """Globals the kernels above refer to, injected into the generated modules' header."""
    from .. import kernelgen

    monkeypatch.setattr(kernelgen, "HEADER", kernelgen.HEADER + HELPERS)


