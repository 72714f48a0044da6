"""Every public stub is the one place its operation's parameters are written.

The family's planner reads a call through ``core.binding.CallArgs`` (``args.algorithm``)
and is made the operation's plan by ``@plans(stub)``, which gives the plan the stub's
signature: a keyword is added to the stub (and its docstring) and read where the
planner uses it, nowhere else.

Their defaults are spelled differently on purpose: the binder
(``core/binding.bind_descriptors``) passes ``OMITTED`` for every
control a call leaves out, so the plan decides what omission means.  The checked
mapping: a stub default must mean exactly what the plan does on omission, i.e.
planning a sample call with the stub's default written out gives the same
``CallPlan`` (params, operands, result, storage: the generated C++) as leaving it
out.  A stub default of ``None`` on a control the plan requires is a disagreement
too (the stub claims the control is optional): such controls have no default in
the stub.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from cuda.coop._errors import CoopError, MissingArgumentError
from cuda.coop.core import spec
from cuda.coop.ops._registry import all_specs

pytestmark = pytest.mark.unit

_BLOCK = spec.GroupArg("block")
_WARP = spec.GroupArg("warp", 32)


def _payload(dtype="int32", items=4):
    return spec.PayloadArg(np.dtype(dtype), items)


def _literal(value):
    return spec.ScalarArg(np.dtype("int64"), value)


_ARRAY = spec.ArrayArg(np.dtype("int32"), 1, True)

# One valid call per operation: its positional operands and its required controls.
SAMPLE_CALLS = {
    "load": ((_BLOCK, _ARRAY, spec.PayloadArg(None, 4)), {}),
    "store": ((_BLOCK, _ARRAY, _payload()), {}),
    "exchange": ((_BLOCK, _payload()), {}),
    "merge_sort_keys": ((_BLOCK, _payload()), {}),
    "merge_sort_pairs": ((_BLOCK, _payload(), _payload("float32")), {}),
    "radix_sort_keys": ((_BLOCK, _payload()), {}),
    "radix_sort_pairs": ((_BLOCK, _payload(), _payload("float32")), {}),
    "radix_rank": ((_BLOCK, _payload()), {}),
    "radix_rank_keys": ((_BLOCK, _payload()), {}),
    "topk_min_keys": ((_BLOCK, _payload()), {"k": _literal(4)}),
    "topk_max_keys": ((_BLOCK, _payload()), {"k": _literal(4)}),
    "topk_min_pairs": ((_BLOCK, _payload(), _payload("float32")), {"k": _literal(4)}),
    "topk_max_pairs": ((_BLOCK, _payload(), _payload("float32")), {"k": _literal(4)}),
    "shuffle": ((_BLOCK, _payload()), {}),
    "adjacent_difference": ((_BLOCK, _payload()), {}),
    "discontinuity": ((_BLOCK, _payload()), {}),
    "histogram": ((_BLOCK, _payload("uint8")), {"bins": _literal(256)}),
    "run_length_decode": ((_BLOCK, _payload("float32", 2), _payload("int32", 2)),
                          {"decoded_items_per_thread": _literal(8)}),
    "run_length_decode_into": ((_BLOCK, _payload("int32", 2), _payload("int32", 2), _ARRAY), {}),
    "reduce": ((_BLOCK, _payload()), {}),
    "sum": ((_BLOCK, _payload()), {}),
    "reduce_batched": ((_WARP, _payload()), {}),
    "scan": ((_BLOCK, _payload()), {}),
    "exclusive_scan": ((_BLOCK, _payload()), {}),
    "inclusive_scan": ((_BLOCK, _payload()), {}),
    "exclusive_sum": ((_BLOCK, _payload()), {}),
    "inclusive_sum": ((_BLOCK, _payload()), {}),
}

SPECS = {s.name: s for s in all_specs()}
_EMPTY = inspect.Parameter.empty


def as_descriptor(value):
    """The descriptor typing gives a Python default written out in a call."""
    if value is None:
        return spec.NoneArg()
    if isinstance(value, bool):
        return spec.ScalarArg(None, value, "bool")
    if isinstance(value, int):
        return _literal(value)
    if isinstance(value, str):
        return spec.StringArg(value)
    raise AssertionError(f"no descriptor for a default of {value!r}")


def _plan(op_spec, args, kws):
    """The plan, or the error it raises (class and message), for comparing outcomes."""
    try:
        return op_spec.plan(*args, **kws)
    except CoopError as exc:
        return type(exc), str(exc)


def test_every_public_operation_has_a_sample_call():
    assert set(SAMPLE_CALLS) == set(SPECS)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_planner_takes_the_stub_signature_instead_of_repeating_it(name):
    op_spec = SPECS[name]
    planner = getattr(op_spec.plan, "__wrapped__", None)
    assert planner is not None, f"{name}: its plan is not made by core.binding.plans(stub)"
    assert list(inspect.signature(planner).parameters) == ["args"], (
        f"{name}: the planner {planner.__qualname__} takes its own parameter list; take `args: CallArgs`")
    stub = list(inspect.signature(op_spec.stub).parameters.values())
    plan = list(inspect.signature(op_spec.plan).parameters.values())
    assert [(p.name, p.kind) for p in stub] == [(p.name, p.kind) for p in plan]


@pytest.mark.parametrize("name", sorted(SPECS))
def test_stub_defaults_mean_what_the_plan_does_on_omission(name):
    op_spec = SPECS[name]
    args, required = SAMPLE_CALLS[name]
    baseline = op_spec.plan(*args, **required)
    assert isinstance(baseline, spec.CallPlan)
    positional = [p for p in op_spec.signature.parameters.values() if p.kind == inspect.Parameter.POSITIONAL_ONLY]
    for param in op_spec.signature.parameters.values():
        if param.kind == inspect.Parameter.POSITIONAL_ONLY:
            if param.default is _EMPTY:
                continue
            # An optional operand (scan's state): pass every operand up to it.
            index = positional.index(param)
            written = (*args, *[spec.OMITTED] * (index - len(args)), as_descriptor(param.default))
            assert _plan(op_spec, written, required) == baseline, f"{name}: operand {param.name}"
            continue
        if param.default is _EMPTY:
            assert param.name in required, f"{name}: required control {param.name} missing from SAMPLE_CALLS"
            without = {k: d for k, d in required.items() if k != param.name}
            with pytest.raises(MissingArgumentError):
                op_spec.plan(*args, **without)
            continue
        if param.name in required:
            pytest.fail(f"{name}: {param.name}={param.default!r} in the stub, but the plan requires it")
        written = _plan(op_spec, args, {**required, param.name: as_descriptor(param.default)})
        assert written == baseline, (
            f"{name}: {param.name}={param.default!r} written out plans differently from leaving it out")


@pytest.mark.parametrize("name", sorted(SPECS))
def test_required_controls_have_no_stub_default(name):
    """A control whose omission the plan refuses is spelled without a default in the stub."""
    op_spec = SPECS[name]
    args, required = SAMPLE_CALLS[name]
    for param in op_spec.signature.parameters.values():
        if param.kind != inspect.Parameter.KEYWORD_ONLY or param.default is _EMPTY:
            continue
        kws = {**required, param.name: spec.OMITTED}
        outcome = _plan(op_spec, args, kws)
        assert not (isinstance(outcome, tuple) and outcome[0] is MissingArgumentError), (
            f"{name}: {param.name}={param.default!r} in the stub, but leaving it out raises {outcome[1]}")
