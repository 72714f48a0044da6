"""Run-time argument checks in the generated C++ (pure Python: plans and providers, no
compiler).  They are on by default; ``CUDA_COOP_CHECKED=0`` turns them off."""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop import _env
from cuda.coop.core import spec
from cuda.coop.core.cpp import CHECKED_PRELUDE, check_label, make_provider, render_translation_unit
from cuda.coop.ops.load_store import plan_load
from cuda.coop.ops.topk import plan_topk_max_keys

pytestmark = pytest.mark.unit

LAUNCH = spec.LaunchFacts(block=(128, 1, 1), cc=(9, 0))
INT64 = spec.ScalarArg(np.dtype("int64"))
SITE = ("my_kernels.py", 42, "kernel")


def _load_plan(**kw):
    return plan_load(spec.GroupArg("block"), spec.ArrayArg(np.dtype("int32"), 1, True),
                     spec.PayloadArg(np.dtype("int32"), 4), **kw)


@pytest.mark.parametrize("value,expected", [(None, True), ("", True), ("1", True), ("yes", True),
                                            ("0", False), ("off", False), ("false", False), (" No ", False)])
def test_env_var_is_read_on_each_call(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("CUDA_COOP_CHECKED", raising=False)
    else:
        monkeypatch.setenv("CUDA_COOP_CHECKED", value)
    assert _env.checked_mode() is expected
    assert "CUDA_COOP_CHECKED" in _env.ENV


def test_check_only_in_checked_provider():
    plan = _load_plan(valid_items=INT64)
    assert not plan.checked
    plain = make_provider(plan, LAUNCH)
    checked = make_provider(plan.with_checks(SITE), LAUNCH)
    assert "cuda_coop_checked" not in plain.source
    assert "cuda_coop_checked::range_failed(" in checked.source
    # The report names the call and the user's line, then the argument and its range.
    assert ('range_failed("coop.load(coop.this_block(), ...) at my_kernels.py:42 in kernel", "valid_items", '
            '(long long)(valid_items), (long long)(0), (long long)(TILE));') in checked.source
    # Against 0, one unsigned comparison: a negative count is above any tile.
    assert "if ((unsigned long long)(valid_items) > (unsigned long long)(TILE)) " in checked.source
    # The unchecked clamp is still there after the check: the check adds, it changes nothing else.
    clamp = "(unsigned long long)valid_items <= (unsigned long long)TILE ? (int)valid_items"
    assert clamp in plain.source and clamp in checked.source
    assert plain.symbol != checked.symbol


def test_prelude_only_in_checked_translation_units():
    plan = _load_plan(valid_items=INT64)
    plain = make_provider(plan, LAUNCH)
    checked = make_provider(plan.with_checks(SITE), LAUNCH)
    assert CHECKED_PRELUDE not in render_translation_unit([plain])
    unit = render_translation_unit([plain, checked])
    assert unit.count(CHECKED_PRELUDE) == 1
    # After every #include: code before one would end NVRTC's precompiled header.
    assert unit.index(CHECKED_PRELUDE) > unit.rindex("#include")


def test_call_without_runtime_arguments_generates_the_same_provider():
    plan = _load_plan()
    checked = plan.with_checks(SITE)
    assert checked.checked and checked.with_checks(("other.py", 1, "f")) is checked
    provider = make_provider(checked, LAUNCH)
    # Nothing to test at run time: the unchecked plan, its provider shared by identical
    # calls on other lines (no site in its C++).
    assert provider.plan is plan and not provider.plan.checked
    assert provider.source == make_provider(plan, LAUNCH).source
    assert make_provider(plan.with_checks(("other.py", 7, "g")), LAUNCH).symbol == provider.symbol


def test_a_failed_check_traps_after_printing_the_report():
    # NVIDIA's contract: PTX trap (an illegal instruction / launch failure), not a device
    # assertion (cudaErrorAssert); the report goes out first, through printf.
    assert "__trap();" in CHECKED_PRELUDE and "__assertfail" not in CHECKED_PRELUDE
    assert CHECKED_PRELUDE.index('printf("cuda.coop: %s: %s=%lld is outside') < CHECKED_PRELUDE.rindex("fail(reporter)")


def test_label_without_site():
    assert check_label(_load_plan().with_checks()) == "coop.load(coop.this_block(), ...)"


def test_quotes_in_a_site_are_escaped():
    plan = _load_plan(valid_items=INT64).with_checks(('we"ird\\name.py', 3, "k"))
    source = make_provider(plan, LAUNCH).source
    assert 'at we\\"ird\\\\name.py:3 in k"' in source


def test_topk_sort_takes_k_only_when_checked():
    """The sorting TopK never reads k, so its unchecked provider does not take it (ABI
    unchanged); the checked one does, to test it."""
    plan = plan_topk_max_keys(spec.GroupArg("block"), spec.PayloadArg(np.dtype("int32"), 4), k=INT64)
    assert "k" not in [op.name for op in plan.operands]
    checked = plan.with_checks(SITE)
    assert [op.name for op in checked.operands][-1] == "k"
    source = make_provider(checked, LAUNCH).source
    assert 'range_failed("coop.topk_max_keys(coop.this_block(), ...) at my_kernels.py:42 in kernel", "k", ' in source
    select = plan_topk_max_keys(spec.GroupArg("block"), spec.PayloadArg(np.dtype("int32"), 4), k=INT64,
                                algorithm=spec.StringArg("radix_select"))
    assert [op.name for op in select.operands].count("k") == 1
    assert [op.name for op in select.with_checks().operands].count("k") == 1


def test_literal_k_is_not_checked():
    plan = plan_topk_max_keys(spec.GroupArg("block"), spec.PayloadArg(np.dtype("int32"), 4),
                              k=spec.ScalarArg(np.dtype("int64"), literal=5))
    source = make_provider(plan.with_checks(SITE), LAUNCH).source
    assert "cuda_coop_checked" not in source


@pytest.mark.parametrize("offset_dtype,checked", [("int64", True), ("int32", True), ("uint64", False)])
def test_window_offset_range_check_only_for_signed_offsets(offset_dtype, checked):
    """A signed window offset below 0 is refused; a uint64 offset has no invalid value (NVIDIA's
    uint64 run lengths window up to 2**64 - 1), so it must not be checked as a signed number."""
    from cuda.coop.ops.run_length import plan_run_length_decode

    plan = plan_run_length_decode(spec.GroupArg("block"), spec.PayloadArg(np.dtype("uint8"), 2),
                                  spec.PayloadArg(np.dtype("uint64"), 2),
                                  decoded_items_per_thread=spec.ScalarArg(np.dtype("int64"), 3),
                                  decoded_window_offset=spec.ScalarArg(np.dtype(offset_dtype)))
    source = make_provider(plan.with_checks(SITE), LAUNCH).source
    assert ('"decoded_window_offset"' in source) is checked, source


@pytest.mark.parametrize("offset_dtype,checked", [(None, False), ("uint32", True), ("uint64", False)])
def test_window_total_checked_against_decoded_offset_dtype(offset_dtype, checked):
    """NVIDIA traps when the total decoded size outgrows decoded_offset_dtype (its tests'
    sum_overflow32 and value_overflow32 cases); a uint64 always holds it, and without
    decoded_offset_dtype the total is 64-bit."""
    from cuda.coop.ops.run_length import plan_run_length_decode

    extra = {} if offset_dtype is None else {"decoded_offset_dtype": spec.DtypeArg(np.dtype(offset_dtype))}
    plan = plan_run_length_decode(spec.GroupArg("block"), spec.PayloadArg(np.dtype("int32"), 1),
                                  spec.PayloadArg(np.dtype("uint64"), 1),
                                  decoded_items_per_thread=spec.ScalarArg(np.dtype("int64"), 2), **extra)
    source = make_provider(plan.with_checks(SITE), LAUNCH).source
    assert ("decoded_offset_dtype" in source) is checked, source
