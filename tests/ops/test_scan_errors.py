"""Misuse of the scan family: one broken argument per case, named error, message, user line."""

from __future__ import annotations

import numpy as np
import pytest

import cuda.coop as coop

from ..error_harness import assert_at_user_line, compile_error, kernel_types
from .reduce_error_cases import HELPERS, body, float_args

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

SCAN_HELPERS = HELPERS + """
@cuda.jit(device=True)
def running(state, block_aggregate):
    old = state[0]
    state[0] = old + block_aggregate
    return old

from tests.compiler import qualified as _qualified
RUNNING64 = _qualified.StatefulFunction(running, np.int64)
"""


@pytest.fixture(autouse=True)
def _helpers(monkeypatch):
    from .. import kernelgen

    monkeypatch.setattr(kernelgen, "HEADER", kernelgen.HEADER + SCAN_HELPERS)


def test_non_sum_exclusive_scan_needs_an_initial_value():
    info, module = compile_error(body("""
r = coop.exclusive_scan(coop.this_block(), items, scan_op="max")
"""))
    assert isinstance(info.value, coop.MissingArgumentError)
    msg = str(info.value)
    assert "coop.exclusive_scan()" in msg and "scan_op='max'" in msg and "initial_value=" in msg
    assert_at_user_line(info, module, 'scan_op="max"')


def test_generic_scan_defaults_to_exclusive_and_needs_an_initial_value_too():
    info, _ = compile_error("""
        r = coop.scan(coop.this_warp(), src[0], scan_op=np.minimum)
    """)
    assert isinstance(info.value, coop.MissingArgumentError)
    assert "scan_op=np.minimum" in str(info.value)


def test_initial_value_on_an_inclusive_scan():
    info, module = compile_error(body("""
r = coop.scan(coop.this_block(), items, mode="inclusive", scan_op="max", initial_value=0)
"""))
    assert isinstance(info.value, coop.ConflictingArgumentsError)
    msg = str(info.value)
    assert "initial_value is not accepted by an inclusive scan" in msg and "exclusive" in msg
    assert_at_user_line(info, module, 'mode="inclusive"')


def test_inclusive_scan_has_no_initial_value_keyword():
    info, _ = compile_error(body("""
r = coop.inclusive_scan(coop.this_block(), items, initial_value=0)
"""))
    assert isinstance(info.value, coop.InvalidArgumentTypeError)
    assert "unexpected keyword initial_value=" in str(info.value)


def test_bitwise_scan_on_floats():
    info, module = compile_error("""
        r = coop.inclusive_scan(coop.this_warp(), src[0], scan_op="^")
    """, argtypes=float_args())
    assert isinstance(info.value, coop.UnsupportedDtypeError)
    assert "scan_op='^'" in str(info.value) and "float32" in str(info.value)
    assert_at_user_line(info, module, 'scan_op="^"')


@pytest.mark.parametrize("valid", [0, 33])
def test_static_valid_items_out_of_range(valid):
    info, module = compile_error(f"""
        r = coop.inclusive_sum(coop.this_warp(), src[0], valid_items={valid})
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    assert f"valid_items={valid}" in str(info.value)
    assert_at_user_line(info, module, "valid_items=")


def test_valid_items_on_a_block_scan():
    info, _ = compile_error(body("""
r = coop.inclusive_sum(coop.this_block(), items, valid_items=5)
"""))
    assert isinstance(info.value, coop.ConflictingArgumentsError)
    assert "warp scans only" in str(info.value)


def test_algorithm_for_a_warp_scan():
    info, module = compile_error("""
        r = coop.exclusive_sum(coop.this_warp().group_by(4), src[0], algorithm="warp_scans")
    """)
    assert isinstance(info.value, coop.UnsupportedAlgorithmForGroupError)
    msg = str(info.value)
    assert "algorithm='warp_scans'" in msg and "coop.this_warp().group_by(4)" in msg
    assert_at_user_line(info, module, "algorithm=")


def test_reduce_algorithm_on_a_scan():
    info, _ = compile_error(body("""
r = coop.inclusive_sum(coop.this_block(), items, algorithm="warp_reductions")
"""))
    assert isinstance(info.value, coop.InvalidAlgorithmError)
    msg = str(info.value)
    assert "'raking'" in msg and "'raking_memoize'" in msg and "'warp_scans'" in msg


def test_plain_function_as_scan_operator_through_an_attribute():
    info, module = compile_error("""
        r = coop.inclusive_scan(coop.this_warp(), src[0], scan_op=operators_module.plain_function)
    """)
    assert isinstance(info.value, coop.NotADeviceFunctionError)
    assert "scan_op=plain_function" in str(info.value)
    assert_at_user_line(info, module, "scan_op=operators_module.plain_function")


def test_prefix_op_must_be_a_device_function():
    info, _ = compile_error(body("""
r = coop.inclusive_sum(coop.this_block(), items, prefix_op="+")
"""))
    assert isinstance(info.value, coop.NotADeviceFunctionError)
    assert "prefix_op='+'" in str(info.value)


def test_prefix_op_on_a_warp_scan():
    info, module = compile_error("""
        r = coop.inclusive_sum(coop.this_warp(), src[0], prefix_op=takes_an_array)
    """)
    assert isinstance(info.value, coop.ConflictingArgumentsError)
    assert "prefix_op= applies to block scans" in str(info.value)
    assert_at_user_line(info, module, "prefix_op=")


def test_prefix_op_with_initial_value():
    info, _ = compile_error(body("""
state = coop.ThreadData(1, dtype=np.int32)
r = coop.exclusive_scan(coop.this_block(), items, scan_op="max", initial_value=0, prefix_op=running,
                        prefix_state=state)
"""))
    assert isinstance(info.value, coop.ConflictingArgumentsError)
    assert "prefix_op and initial_value" in str(info.value)


def test_prefix_state_without_prefix_op():
    info, _ = compile_error(body("""
state = coop.ThreadData(1, dtype=np.int32)
r = coop.exclusive_sum(coop.this_block(), items, prefix_state=state)
"""))
    assert isinstance(info.value, coop.ConflictingArgumentsError)
    assert "was given without prefix_op" in str(info.value)


def test_stateful_prefix_without_state_does_not_compile_for_the_signature():
    """A two-argument callback used as a stateless prefix: the signature error names both."""
    info, module = compile_error(body("""
r = coop.exclusive_sum(coop.this_block(), items, prefix_op=running)
"""))
    assert isinstance(info.value, coop.InvalidArgumentTypeError)
    msg = str(info.value)
    assert "prefix_op=device function running does not compile" in msg and "int32(int32)" in msg
    assert_at_user_line(info, module, "prefix_op=running")


def test_aggregate_output_dtype():
    info, _ = compile_error(body("""
agg = coop.ThreadData(1, dtype=np.int64)
r = coop.inclusive_sum(coop.this_block(), items, aggregate_output=agg)
"""))
    assert isinstance(info.value, coop.DtypeMismatchError)
    assert "aggregate_output has dtype int64" in str(info.value)


def test_temp_storage_on_a_warp_scan():
    info, module = compile_error("""
        ts = coop.TempStorage()
        r = coop.inclusive_sum(coop.this_warp(), src[0], temp_storage=ts)
    """)
    assert isinstance(info.value, coop.TempStorageError)
    assert "coop.this_warp()" in str(info.value)
    assert_at_user_line(info, module, "temp_storage=ts")


def test_initial_value_of_another_dtype():
    info, _ = compile_error("""
        r = coop.exclusive_scan(coop.this_warp(), src[0], scan_op="max", initial_value=n)
    """, params="src, dst, n", argtypes=(kernel_types().int32[::1], kernel_types().int32[::1], kernel_types().int64))
    assert isinstance(info.value, coop.DtypeMismatchError)
    assert "initial_value has dtype int64" in str(info.value)


def test_initial_value_literal_out_of_range():
    info, _ = compile_error("""
        r = coop.exclusive_scan(coop.this_warp(), src[0], scan_op="max", initial_value=2**40)
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError)
    assert "outside the range of int32" in str(info.value)


def test_stateful_function_needs_its_state():
    info, module = compile_error(body("""
r = coop.exclusive_sum(coop.this_block(), items, prefix_op=RUNNING64)
"""))
    assert isinstance(info.value, coop.MissingArgumentError)
    msg = str(info.value)
    assert "coop.StatefulFunction" in msg and "int64" in msg and "third operand" in msg
    assert_at_user_line(info, module, "prefix_op=RUNNING64")


def test_stateful_function_state_of_another_dtype():
    info, module = compile_error(body("""
state = coop.ThreadData(1, dtype=np.int32)
state[0] = 0
r = coop.inclusive_sum(coop.this_block(), items, state, prefix_op=RUNNING64)
"""))
    assert isinstance(info.value, coop.DtypeMismatchError)
    msg = str(info.value)
    assert "int32" in msg and "state_dtype=int64" in msg and "coop.ThreadData(1, dtype=np.int64)" in msg


def test_state_given_twice():
    info, _ = compile_error(body("""
state = cuda.local.array(1, np.int64)
state[0] = 0
r = coop.exclusive_sum(coop.this_block(), items, state, prefix_op=RUNNING64, prefix_state=state)
"""))
    assert isinstance(info.value, coop.ConflictingArgumentsError)
    assert "given twice" in str(info.value)


def test_state_without_prefix_op():
    info, _ = compile_error(body("""
state = coop.ThreadData(1, dtype=np.int64)
state[0] = 0
r = coop.exclusive_sum(coop.this_block(), items, state)
"""))
    assert isinstance(info.value, coop.ConflictingArgumentsError)
    assert "without prefix_op" in str(info.value)


def test_stateful_function_rejects_a_non_callable():
    from ..compiler import qualified

    with pytest.raises(coop.InvalidArgumentTypeError, match="op=3 is not callable"):
        qualified.StatefulFunction(3, np.int64)
    with pytest.raises(coop.UnsupportedDtypeError, match="state_dtype"):
        qualified.StatefulFunction(len, "complex64")


def test_stateful_function_takes_a_functor_class_and_checks_its_call():
    from ..compiler import qualified

    class Carry:
        def __call__(self, block_aggregate):
            return block_aggregate

    fn = qualified.StatefulFunction(Carry, np.int64)
    assert fn.op is Carry.__dict__["__call__"] and fn.name.endswith("Carry")

    class NoCall:
        pass

    class Binary:
        def __call__(self, left, right):
            return left + right

    class Static:
        @staticmethod
        def __call__(block_aggregate):
            return block_aggregate

    with pytest.raises(coop.InvalidArgumentTypeError, match="NoCall is a class without __call__"):
        qualified.StatefulFunction(NoCall, np.int64)
    with pytest.raises(coop.InvalidArgumentTypeError, match=r"Binary.__call__ takes 3 parameters"):
        qualified.StatefulFunction(Binary, np.int64)
    with pytest.raises(coop.InvalidArgumentTypeError, match="staticmethod"):
        qualified.StatefulFunction(Static, np.int64)


@pytest.mark.parametrize("call", [
    "coop.inclusive_sum(group, src[0])",
    "coop.exchange(group, items, mode='blocked_to_striped')",
    "coop.shuffle(group, src[0], distance=1)",
])
def test_a_width_that_does_not_divide_32_is_for_reductions_only(call):
    """Widths 17..31 (exhaustive=False) are logical warps of reduce and sum only."""
    info, module = compile_error(f"""
        group = coop.this_warp().group_by(24, exhaustive=False)
        items = coop.ThreadData(4, dtype=np.int32)
        for i in range(4):
            items[i] = src[i]
        r = {call}
    """)
    # shuffle takes no logical warp at all (InvalidGroupError); scans and exchanges take
    # power-of-two widths (InvalidGroupWidthError).
    assert isinstance(info.value, (coop.InvalidGroupWidthError, coop.InvalidGroupError)), type(info.value)
    assert "24" in str(info.value)
    assert_at_user_line(info, module, call.split("(")[0])
