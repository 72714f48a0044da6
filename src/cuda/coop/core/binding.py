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

__all__ = ["bind_descriptors"]


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
