"""Binding a cooperative call's argument descriptors to its operation's stub signature.

Compiler-neutral: every backend translates its compiler's argument types into
``core.spec`` descriptors and binds them here, so that a bad call (an extra operand,
an unknown keyword, a missing operand) is reported in the same words whichever
compiler types the kernel.
"""

from __future__ import annotations

import difflib
import inspect

from .._errors import ConflictingArgumentsError, InvalidArgumentTypeError, MissingArgumentError
from . import spec

__all__ = ["bind_descriptors", "CallArgs", "plans"]


def bind_descriptors(op_spec, arg_descs, kw_descs):
    """Bind descriptors to the stub's signature, with cuda-coop errors for bad calls."""
    call = f"coop.{op_spec.name}()"
    sig = op_spec.signature
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind == inspect.Parameter.POSITIONAL_ONLY]
    # Controls that may also come by position after the operands (TopK's k, as in NVIDIA's
    # cuda.coop); they reach the plan by name.
    either = [p for p in params if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    keywords = {p.name: p for p in params if p.kind in (inspect.Parameter.KEYWORD_ONLY,
                                                          inspect.Parameter.POSITIONAL_OR_KEYWORD)}
    if len(arg_descs) > len(positional) + len(either):
        taken = len(positional) + len(either)
        extra = [spec.describe(d) for d in arg_descs[taken:]]
        first_kw = next((n for n in keywords if n not in {p.name for p in either}), None)
        raise InvalidArgumentTypeError(
            f"{call}: takes {taken} positional operands ("
            + ", ".join(p.name for p in (*positional, *either))
            + f") but got {len(arg_descs)}: {', '.join(extra)} after them; controls are keyword-only, "
            + (f"so pass them by name, e.g. {first_kw}={extra[0]}" if first_kw else "so remove the extra operands")
        )
    by_position = dict(zip((p.name for p in either), arg_descs[len(positional):]))
    arg_descs = arg_descs[:len(positional)]
    for name in kw_descs:
        if name in by_position:
            raise ConflictingArgumentsError(
                f"{call}: {name} is given twice, by position ({spec.describe(by_position[name])}) and as "
                f"{name}={spec.describe(kw_descs[name])}; pass it once, either way")
        if name in keywords:
            continue
        if name in {p.name for p in positional}:
            raise InvalidArgumentTypeError(
                f"{call}: {name} is a positional operand; pass it by position, not as {name}=..."
            )
        close = difflib.get_close_matches(name, list(keywords), n=1)
        hint = f"did you mean {close[0]}=? " if close else ""
        raise InvalidArgumentTypeError(
            f"{call}: unexpected keyword {name}=; {hint}use one of the controls " + ", ".join(keywords)
        )
    missing = [p.name for p in positional[len(arg_descs):] if p.default is inspect.Parameter.empty]
    if missing:
        raise MissingArgumentError(
            f"{call}: missing operand(s) {', '.join(missing)}; pass them by position: "
            f"{call[:-1]}{', '.join(p.name for p in positional)}, ...)")
    optional = [spec.OMITTED] * (len(positional) - len(arg_descs))  # optional operands left out
    kw_descs = {**kw_descs, **by_position}
    return (*arg_descs, *optional), {k: kw_descs.get(k, spec.OMITTED) for k in keywords}


class CallArgs:
    """One call's operands and controls, by the names its stub gives them.

    A planner reads ``args.value``, ``args.algorithm``...; what the call left out reads as
    ``spec.OMITTED``, so the stub's signature is the only place an operation's parameters
    are written.  A name the stub does not have raises AttributeError (a planner's typo
    fails on the first call, not silently).
    """

    __slots__ = ("_values", "op")

    def __init__(self, op: str, values: dict):
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "_values", values)

    @property
    def call(self) -> str:
        """How error messages name the call: ``coop.reduce()``."""
        return f"coop.{self.op}()"

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"{self.call} has no parameter {name!r}") from None

    def __setattr__(self, name, value):
        raise AttributeError("CallArgs is read-only; use .replace()")

    def __contains__(self, name) -> bool:
        return name in self._values

    def get(self, name, default=spec.OMITTED):
        """A parameter that only some of the operations sharing a planner have."""
        return self._values.get(name, default)

    def replace(self, **changes) -> CallArgs:
        unknown = set(changes) - set(self._values)
        if unknown:
            raise AttributeError(f"{self.call} has no parameter(s) {', '.join(sorted(unknown))}")
        return CallArgs(self.op, {**self._values, **changes})

    def __repr__(self):
        return f"CallArgs({self.op}: " + ", ".join(f"{k}={v!r}" for k, v in self._values.items()) + ")"


def plans(stub):
    """Make ``planner(args: CallArgs)`` the plan of ``stub``'s operation.

    The result is called like the stub (operands by position, controls by name, with
    core descriptors); whatever the call omits reaches the planner as ``spec.OMITTED``
    (typing binds the call with :func:`bind_descriptors` first, which words a bad call's
    error).  Its ``__signature__`` is the stub's with those defaults, so the stub is the
    one place a keyword is added.
    """
    sig = inspect.signature(stub)
    op = stub.__name__
    params = list(sig.parameters.values())
    positional = [p.name for p in params if p.kind == inspect.Parameter.POSITIONAL_ONLY]
    required = {p.name for p in params
                if p.kind == inspect.Parameter.POSITIONAL_ONLY and p.default is inspect.Parameter.empty}
    named = [p.name for p in params if p.kind != inspect.Parameter.POSITIONAL_ONLY]

    def decorate(planner):
        def plan(*operands, **controls):
            if len(operands) > len(positional):
                raise TypeError(f"{op} plan: {len(operands)} operands for {len(positional)} ({', '.join(positional)})")
            unknown = set(controls) - set(named)
            if unknown:
                raise TypeError(f"{op} plan: unknown control(s) {', '.join(sorted(unknown))}")
            values = dict(zip(positional, operands))
            missing = [n for n in positional if n in required and n not in values]
            if missing:
                raise TypeError(f"{op} plan: missing operand(s) {', '.join(missing)}")
            for name in (*positional, *named):
                values.setdefault(name, controls.get(name, spec.OMITTED))
            return planner(CallArgs(op, values))

        plan.__name__ = plan.__qualname__ = planner.__name__
        plan.__module__ = planner.__module__
        plan.__doc__ = planner.__doc__ or f"The CallPlan of a coop.{op}() call (its parameters: the stub's)."
        plan.__wrapped__ = planner
        plan.__signature__ = sig.replace(parameters=[
            p if p.name in required else p.replace(default=spec.OMITTED) for p in params])
        return plan

    return decorate
