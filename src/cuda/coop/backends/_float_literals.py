"""Python float literals as operands (``oob_default=0.5``, ``initial_value=-math.inf``).

NVIDIA's cuda.coop converts a Python literal to the payload's dtype after a range check.
Numba types ``0.5`` written in a kernel as float64 and has no float literal type, so typing
alone cannot tell it from a float64 the kernel computed, which must match the payload's
dtype exactly (DtypeMismatchError).  Both compilers' rewrites see the untyped IR, where the
literal is still a constant:

1. ``literal_keywords`` finds the keyword operands the kernel wrote as Python floats;
2. ``_planning.plan_call`` describes each as a literal ``ScalarArg``, which the families'
   ``optional_scalar_of_dtype`` range-checks and accepts for any numeric dtype;
3. ``converted_signature_kws`` gives the call's signature the operand's dtype for it, so the
   compiler converts the float64 value at the call, and a plan made from the signature alone
   (classic numba-cuda's lowering) sees the payload's dtype.

numba-cuda-mlir's rewrite keeps the keywords on the call's site (``rewrite.Site``), which its
typing and lowering both read; classic numba-cuda's typing reads them from the IR of the
call being typed.  Imports no compiler.
"""

from __future__ import annotations

import operator

from ._inference import _DEPTH  # how deep a chain of copies (here: and unary minus) is followed

__all__ = ["literal_keywords", "converted_signature_kws"]


def float_literal(analysis, func_ir, var, depth=0):
    """The Python ``float`` ``var`` holds when the kernel wrote one as a constant (``0.5``,
    ``-1.0``, ``math.inf``, a module or closure float, ``-np.inf``), else None.  A NumPy
    scalar (``np.float64(0.5)``) is a typed value, not a Python literal: None."""
    ir = analysis.ir
    d = analysis.definition(func_ir, var)
    if isinstance(d, ir.Const):
        value = d.value
    elif isinstance(d, ir.Var) and depth < _DEPTH:
        return float_literal(analysis, func_ir, d, depth + 1)
    elif isinstance(d, ir.Expr) and d.op == "unary" and d.fn is operator.neg and depth < _DEPTH:
        inner = float_literal(analysis, func_ir, d.value, depth + 1)
        return None if inner is None else -inner
    else:
        value = analysis.resolve_value(func_ir, var)
    return value if type(value) is float else None


def literal_keywords(analysis, func_ir, kws) -> tuple:
    """``((keyword, value), ...)``: the keyword operands of ``kws`` (``(name, var)`` pairs)
    written as Python float constants.  ``analysis``: the compiler's ``PayloadDtypeAnalysis``."""
    found = []
    for keyword, var in kws:
        if keyword.startswith("_"):  # a rewrite's hidden keyword
            continue
        value = float_literal(analysis, func_ir, var)
        if value is not None:
            found.append((keyword, value))
    return tuple(found)


def converted_signature_kws(plan, kws: dict, literals: dict, numba_type_of_dtype) -> dict:
    """``kws`` (keyword -> Numba type) with each float literal's type replaced by the dtype
    of the provider operand it becomes (a literal the plan passes on as no operand keeps
    float64)."""
    converted = dict(kws)
    for operand in plan.operands:
        if operand.source in literals and operand.source in converted and operand.passing in ("value", "scalar_in"):
            converted[operand.source] = numba_type_of_dtype(operand.dtype)
    return converted
