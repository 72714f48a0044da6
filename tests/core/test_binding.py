"""core.binding: a call bound to its stub, read by the planner as CallArgs."""

from __future__ import annotations

import inspect

import pytest

from cuda.coop._kernel_api import kernel_function
from cuda.coop.core import spec
from cuda.coop.core.binding import CallArgs, plans

pytestmark = pytest.mark.unit


@kernel_function
def gather(group, value, extra=None, /, *, width=4, mode="fast"):
    """A stand-in stub: two required operands, an optional one and two controls."""


@plans(gather)
def plan_gather(args: CallArgs):
    return args


def test_omitted_parameters_read_as_omitted():
    args = plan_gather("g", "v", mode="slow")
    assert (args.group, args.value, args.extra, args.width, args.mode) == ("g", "v", spec.OMITTED, spec.OMITTED, "slow")
    assert args.call == "coop.gather()" and args.op == "gather"


def test_a_name_the_stub_does_not_have_is_an_error_not_omitted():
    args = plan_gather("g", "v")
    with pytest.raises(AttributeError, match="coop.gather\\(\\) has no parameter 'widht'"):
        args.widht  # noqa: B018
    assert args.get("binary_op") is spec.OMITTED and "width" in args and "binary_op" not in args


def test_replace_copies_and_refuses_unknown_names():
    args = plan_gather("g", "v")
    changed = args.replace(width=8)
    assert (changed.width, args.width) == (8, spec.OMITTED)
    with pytest.raises(AttributeError):
        args.replace(depth=1)
    with pytest.raises(AttributeError):
        args.width = 2


def test_the_plan_is_called_like_the_stub():
    with pytest.raises(TypeError, match="missing operand"):
        plan_gather("g")
    with pytest.raises(TypeError, match="unknown control"):
        plan_gather("g", "v", depth=1)
    with pytest.raises(TypeError, match="4 operands for 3"):
        plan_gather("g", "v", "e", "x")
    sig = inspect.signature(plan_gather)
    assert [p.name for p in sig.parameters.values()] == ["group", "value", "extra", "width", "mode"]
    assert sig.parameters["group"].default is inspect.Parameter.empty
    assert all(sig.parameters[n].default is spec.OMITTED for n in ("extra", "width", "mode"))
