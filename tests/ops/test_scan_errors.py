"""Misuse of the scan family: one broken argument per case, named error, message, user line."""

from __future__ import annotations

import numpy as np
import pytest

import cuda.coop as coop

from ..error_harness import expect_error, kernel_types
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
    expect_error(body("""
r = coop.exclusive_scan(coop.this_block(), items, scan_op="max")
"""), coop.MissingArgumentError, "coop.exclusive_scan()", "scan_op='max'", "initial_value=",
        at='scan_op="max"')


def test_generic_scan_defaults_to_exclusive_and_needs_an_initial_value_too():
    expect_error("""
        r = coop.scan(coop.this_warp(), src[0], scan_op=np.minimum)
    """, coop.MissingArgumentError, "scan_op=np.minimum")


def test_initial_value_on_an_inclusive_scan():
    expect_error(body("""
r = coop.scan(coop.this_block(), items, mode="inclusive", scan_op="max", initial_value=0)
"""), coop.ConflictingArgumentsError, "initial_value is not accepted by an inclusive scan", "exclusive",
        at='mode="inclusive"')


def test_inclusive_scan_has_no_initial_value_keyword():
    expect_error(body("""
r = coop.inclusive_scan(coop.this_block(), items, initial_value=0)
"""), coop.InvalidArgumentTypeError, "unexpected keyword initial_value=")


def test_bitwise_scan_on_floats():
    expect_error("""
        r = coop.inclusive_scan(coop.this_warp(), src[0], scan_op="^")
    """, coop.UnsupportedDtypeError, "scan_op='^'", "float32", at='scan_op="^"', argtypes=float_args())


@pytest.mark.parametrize("valid", [0, 33])
def test_static_valid_items_out_of_range(valid):
    expect_error(f"""
        r = coop.inclusive_sum(coop.this_warp(), src[0], valid_items={valid})
    """, coop.InvalidArgumentValueError, f"valid_items={valid}", at="valid_items=")


def test_valid_items_on_a_block_scan():
    expect_error(body("""
r = coop.inclusive_sum(coop.this_block(), items, valid_items=5)
"""), coop.ConflictingArgumentsError, "warp scans only")


def test_algorithm_for_a_warp_scan():
    expect_error("""
        r = coop.exclusive_sum(coop.this_warp().group_by(4), src[0], algorithm="warp_scans")
    """, coop.UnsupportedAlgorithmForGroupError, "algorithm='warp_scans'", "coop.this_warp().group_by(4)",
        at="algorithm=")


def test_reduce_algorithm_on_a_scan():
    expect_error(body("""
r = coop.inclusive_sum(coop.this_block(), items, algorithm="warp_reductions")
"""), coop.InvalidAlgorithmError, "'raking'", "'raking_memoize'", "'warp_scans'")


def test_plain_function_as_scan_operator_through_an_attribute():
    expect_error("""
        r = coop.inclusive_scan(coop.this_warp(), src[0], scan_op=operators_module.plain_function)
    """, coop.NotADeviceFunctionError, "scan_op=plain_function", at="scan_op=operators_module.plain_function")


def test_prefix_op_must_be_a_device_function():
    expect_error(body("""
r = coop.inclusive_sum(coop.this_block(), items, prefix_op="+")
"""), coop.NotADeviceFunctionError, "prefix_op='+'")


def test_prefix_op_on_a_warp_scan():
    expect_error("""
        r = coop.inclusive_sum(coop.this_warp(), src[0], prefix_op=takes_an_array)
    """, coop.ConflictingArgumentsError, "prefix_op= applies to block scans", at="prefix_op=")


def test_prefix_op_with_initial_value():
    expect_error(body("""
state = coop.ThreadData(1, dtype=np.int32)
r = coop.exclusive_scan(coop.this_block(), items, scan_op="max", initial_value=0, prefix_op=running,
                        prefix_state=state)
"""), coop.ConflictingArgumentsError, "prefix_op and initial_value")


def test_prefix_state_without_prefix_op():
    expect_error(body("""
state = coop.ThreadData(1, dtype=np.int32)
r = coop.exclusive_sum(coop.this_block(), items, prefix_state=state)
"""), coop.ConflictingArgumentsError, "was given without prefix_op")


def test_stateful_prefix_without_state_does_not_compile_for_the_signature():
    """A two-argument callback used as a stateless prefix: the signature error names both."""
    expect_error(body("""
r = coop.exclusive_sum(coop.this_block(), items, prefix_op=running)
"""), coop.InvalidArgumentTypeError, "prefix_op=device function running does not compile", "int32(int32)",
        at="prefix_op=running")


def test_aggregate_output_dtype():
    expect_error(body("""
agg = coop.ThreadData(1, dtype=np.int64)
r = coop.inclusive_sum(coop.this_block(), items, aggregate_output=agg)
"""), coop.DtypeMismatchError, "aggregate_output has dtype int64")


def test_temp_storage_on_a_warp_scan():
    expect_error("""
        ts = coop.TempStorage()
        r = coop.inclusive_sum(coop.this_warp(), src[0], temp_storage=ts)
    """, coop.TempStorageError, "coop.this_warp()", at="temp_storage=ts")


def test_initial_value_of_another_dtype():
    expect_error("""
        r = coop.exclusive_scan(coop.this_warp(), src[0], scan_op="max", initial_value=n)
    """, coop.DtypeMismatchError, "initial_value has dtype int64", params="src, dst, n",
        argtypes=(kernel_types().int32[::1], kernel_types().int32[::1], kernel_types().int64))


def test_initial_value_literal_out_of_range():
    expect_error("""
        r = coop.exclusive_scan(coop.this_warp(), src[0], scan_op="max", initial_value=2**40)
    """, coop.InvalidArgumentValueError, "outside the range of int32")


def test_stateful_function_needs_its_state():
    expect_error(body("""
r = coop.exclusive_sum(coop.this_block(), items, prefix_op=RUNNING64)
"""), coop.MissingArgumentError, "coop.StatefulFunction", "int64", "third operand", at="prefix_op=RUNNING64")


def test_stateful_function_built_in_the_kernel():
    """A host object numba cannot type in device code ("Unknown attribute" before): the
    error says to build it outside the kernel."""
    expect_error(body("""
running_total = _qualified.StatefulFunction(running, np.int64)
state = coop.ThreadData(1, dtype=np.int64)
state[0] = 0
r = coop.exclusive_sum(coop.this_block(), items, state, prefix_op=running_total)
"""), coop.InvalidArgumentTypeError, "running_total = StatefulFunction(...) in the kernel",
                 "construct it outside the kernel", "prefix_op=running", at="running_total = ")


def test_a_functor_class_passed_directly_as_prefix_op():
    """NVIDIA's class form of a prefix callback goes through coop.StatefulFunction; the class
    itself was numba's "Untyped global name"."""
    expect_error(body("""
state = coop.ThreadData(1, dtype=np.int64)
state[0] = 0
r = coop.exclusive_sum(coop.this_block(), items, state, prefix_op=RunningTotal)
"""), coop.InvalidArgumentTypeError, "prefix_op=RunningTotal is the class RunningTotal itself",
                 "coop.StatefulFunction(RunningTotal, state_dtype)", at="prefix_op=RunningTotal",
                 module_code="""
class RunningTotal:
    def __call__(self, block_aggregate):
        old = self[0]
        self[0] = old + block_aggregate
        return old
""")


def test_stateful_function_state_of_another_dtype():
    expect_error(body("""
state = coop.ThreadData(1, dtype=np.int32)
state[0] = 0
r = coop.inclusive_sum(coop.this_block(), items, state, prefix_op=RUNNING64)
"""), coop.DtypeMismatchError, "int32", "state_dtype=int64", "coop.ThreadData(1, dtype=np.int64)")


def test_state_given_twice():
    expect_error(body("""
state = cuda.local.array(1, np.int64)
state[0] = 0
r = coop.exclusive_sum(coop.this_block(), items, state, prefix_op=RUNNING64, prefix_state=state)
"""), coop.ConflictingArgumentsError, "given twice")


def test_state_without_prefix_op():
    expect_error(body("""
state = coop.ThreadData(1, dtype=np.int64)
state[0] = 0
r = coop.exclusive_sum(coop.this_block(), items, state)
"""), coop.ConflictingArgumentsError, "without prefix_op")


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
    expect_error(f"""
        group = coop.this_warp().group_by(24, exhaustive=False)
        items = coop.ThreadData(4, dtype=np.int32)
        for i in range(4):
            items[i] = src[i]
        r = {call}
    """, (coop.InvalidGroupWidthError, coop.InvalidGroupError), "24", at=call.split("(")[0])
