"""From a cooperative call's Numba types to its CallPlan and result type, for either compiler.

Both backends type a call the same way: each argument type becomes a core descriptor
(the backend's ``describe_type``), the stub's signature binds them, and the family's
``plan`` validates them and decides the result.  Only ``describe_type`` and the hidden
keywords a backend's rewrite adds differ, so ``_typing.build`` binds those for one
compiler (``functools.partial``).  Imports no compiler.
"""

from __future__ import annotations

import functools

import numpy as np

from .._errors import CoopError
from ..core import spec
from ..core.binding import bind_descriptors
from ..ops._lookup import spec_named

__all__ = ["plan_call", "flatten_results"]


@functools.lru_cache(maxsize=4096)
def _plan_cached(op_name, arg_descs, kw_items):
    # Keyed by core descriptors, which do not depend on the compiler.
    return spec_named(op_name).plan(*arg_descs, **dict(kw_items))


def plan_call(op_spec, argtys, kwtys, *, describe_type, hidden_keywords=(), float_literals=None) -> spec.CallPlan:
    """The CallPlan of a call with these Numba argument types (memoized).

    ``float_literals``: keyword -> the Python float the kernel wrote there
    (backends/_float_literals.py); such a float64 operand is described as that literal."""
    kwtys = {k: v for k, v in kwtys.items() if k not in hidden_keywords}
    described = {k: describe_type(t) for k, t in kwtys.items()}
    for keyword, value in (float_literals or {}).items():
        d = described.get(keyword)
        if isinstance(d, spec.ScalarArg) and d.dtype == np.float64 and not d.is_literal:
            described[keyword] = spec.ScalarArg(d.dtype, value, d.type_name)
    args, kws = bind_descriptors(op_spec, [describe_type(t) for t in argtys], described)
    try:
        return _plan_cached(op_spec.name, args, tuple(sorted(kws.items())))
    except TypeError as exc:
        if isinstance(exc, CoopError):
            raise
        # An unhashable descriptor (a device function handle): plan without memoizing.
        return op_spec.plan(*args, **kws)


def flatten_results(result) -> list:
    """The results a provider writes, in order."""
    if result is None:
        return []
    if isinstance(result, spec.TupleResult):
        return list(result.items)
    return [result]
