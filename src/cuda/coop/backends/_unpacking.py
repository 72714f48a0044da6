"""Unpacking a payload into names (``a, b = items``), checked for either compiler.

A ``coop.ThreadData`` is an array whose extent is part of its type.  Numba unpacks an array
with a run-time length check, which a kernel cannot report: classic numba-cuda compiled
``heads, tails = coop.discontinuity(block, items)`` (one payload of four flags, unpacked into
two names) into a kernel whose check fails silently on every launch, and numba-cuda-mlir
cannot unpack an array at all (a bare ``AssertionError`` from its lowering).  The typed
function is read before its lowering goes past a payload's unpacking: each ``exhaust_iter``
of a ``ThreadData``-typed value is an error at its line, unless the compiler unpacks arrays
and the count is the payload's extent.  Imports no compiler: each backend passes its ``ir``
module and its ``ThreadDataType``.
"""

from __future__ import annotations

from .._diagnostics import raise_at
from .._errors import InvalidArgumentTypeError

__all__ = ["check_payload_unpacking"]


def _producer(func_ir, typemap, var) -> str:
    """``coop.discontinuity()`` when ``var`` is the result of that call, else its name."""
    try:
        definition = func_ir.get_definition(var)
    except Exception:
        definition = None
    function = getattr(definition, "func", None) if getattr(definition, "op", None) == "call" else None
    key = getattr(typemap.get(function.name) if function is not None else None, "typing_key", None)
    name = getattr(key, "name", None)
    return f"the result of coop.{name}()" if isinstance(name, str) else var.name


def check_payload_unpacking(func_ir, typemap, *, ir, payload_type, unpacks_arrays: bool) -> None:
    """Raise at the line of the first unpacking of a payload that cannot work (see above)."""
    fname = getattr(getattr(func_ir, "func_id", None), "func_qualname", None)
    for block in func_ir.blocks.values():
        for inst in block.body:
            if not (isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr)
                    and inst.value.op == "exhaust_iter"):
                continue
            value = inst.value.value
            payload = typemap.get(value.name)
            if not isinstance(payload, payload_type):
                continue
            count = inst.value.count
            if unpacks_arrays and count == payload.items:
                continue
            what = _producer(func_ir, typemap, value)
            names = ", ".join(f"v{i}" for i in range(min(count, 3))) + (", ..." if count > 3 else "")
            if count != payload.items:
                fix = (f"it unpacks into exactly {payload.items} names; if you expected several results, "
                       "check what the call returns for the arguments you gave (a tuple only where a mode or "
                       "keyword asks for two), else index the payload")
            else:
                fix = "numba-cuda-mlir cannot unpack an array into names; index it instead"
            raise_at(InvalidArgumentTypeError(
                f"{names} = {what}: that is one coop.ThreadData of {payload.items} items "
                f"({payload.dtype}), unpacked into {count} names; {fix}, e.g. v0 = payload[0]"
            ), getattr(inst.loc, "filename", None), getattr(inst.loc, "line", None), fname)
