"""A before-inference rewrite that tags every cuda.coop call site.

Numba types each call in isolation, but two facts need the whole function:

- where a call is (errors point at the user's line; each ``TempStorage(...)``
  constructor and each call using ``sharing="exclusive"`` storage is its own site);
- the element type of a ``ThreadData(n)`` without ``dtype``, which comes from the
  first ``coop.load`` source or ``coop.store`` destination that uses it (also
  through ``@cuda.jit(device=True)`` helpers it is passed to, whose untyped IR is
  read for the load/store of that parameter), else the first value written into
  it, else the dtype the call that fills it as an output writes (e.g.
  ``run_length_decode(..., relative_offsets=p)``: ``decoded_offset_dtype`` or uint32).

A fixed-size 1-D ``cuda.local.array(n, dtype)`` passed to a cooperative call is
the same thing as ``coop.ThreadData(n, dtype)`` (a per-thread array of
compile-time length), so the rewrite turns its constructor into that one: every
family then accepts local arrays wherever it accepts a ``ThreadData``, as input
and as output, and indexing them is unchanged.

The rewrite adds hidden keywords to the calls: ``_coop_site=<id>`` everywhere,
``_dtype_from=<array>`` to such ``ThreadData`` constructors (the array must be a
kernel argument, or a slice of one, so it is defined before the payload), and
records whether ``items_per_thread`` is a kernel argument so the typer can ask
for it as a literal.  It also runs on the IR of ``inline="always"`` device
functions before they are inlined.

The analysis (the dtype source) and the local-array edit are shared with the classic
numba-cuda backend (``backends/_inference.py``); this module keeps the site tagging and
the checks of numba-cuda-mlir.
"""

from __future__ import annotations

import itertools
import threading

from ...core.records import record
from ..._kernel_api import KernelFunction
from ..._payloads import TempStorage, ThreadData
from .._float_literals import literal_keywords
from .._inference import (
    CallSiteChecks, PayloadDtypeAnalysis, PlainFunctionOperands, is_coop_callee,
)
from ._compat import Rewrite, cuda, ir, replace_vars_stmt, run_frontend

__all__ = ["SITES", "Site", "HIDDEN_KEYWORDS"]

HIDDEN_KEYWORDS = ("_coop_site", "_dtype_from")


# The analysis (which array, value or output keyword types an untyped payload) is shared
# with the classic numba-cuda backend; this module keeps the IR edits.
_ANALYSIS = PayloadDtypeAnalysis(ir, run_frontend, replace_vars_stmt)
_resolve_value = _ANALYSIS.resolve_value
_is_arg = _ANALYSIS.is_arg
_dtype_source = _ANALYSIS.dtype_source
_is_coop_callee = is_coop_callee


@record
class Site:
    loc: object  # numba ir.Loc
    name: str  # the called cuda.coop name
    function: str  # the Python function that contains the call
    items_per_thread_is_arg: bool = False
    # ((keyword, value), ...): operands written as Python float constants (backends/_float_literals.py)
    float_literals: tuple = ()


SITES: dict[int, Site] = {}
_counter = itertools.count(1)
_lock = threading.Lock()


# Plain Python operators become device functions of this compiler (backends/_inference.py).
_PLAIN_FUNCTIONS = PlainFunctionOperands(_ANALYSIS, lambda fn: cuda.jit(device=True)(fn), "numba_cuda_mlir.cuda")
_CHECKS = CallSiteChecks(_ANALYSIS, cuda)


_coop_operands = _ANALYSIS.coop_operands
_local_array_as_thread_data = _ANALYSIS.local_array_as_thread_data


# Registered by hooks.py, whose rewrite runs this one once the backend is ready.
class TagCoopCallSites(Rewrite):
    def __init__(self, state=None):
        super().__init__(state)
        self.state = state

    def match(self, func_ir, block, typemap, calltypes):
        self.func_ir = func_ir
        self.block = block
        self.todo = []
        self.prefix = {}  # id(inst) -> assignments to insert before it
        operands = None
        fname = getattr(getattr(func_ir, "func_id", None), "func_qualname", "?")
        _CHECKS.check_constant_indexes(func_ir, block, fname)
        for inst in block.body:
            if not (isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr)
                    and inst.value.op == "call"):
                continue
            expr = inst.value
            if any(name == "_coop_site" for name, _ in expr.kws):
                continue
            callee = _resolve_value(func_ir, expr.func)
            _CHECKS.reject_host_constructors(func_ir, inst, callee, fname)
            if isinstance(getattr(callee, "__self__", None), TempStorage):
                _CHECKS.reject_reservation(func_ir, inst)
            if _is_coop_callee(callee) or _ANALYSIS.is_coop_method_call(func_ir, expr):
                # once: a second pass finds no such constant left
                constants = _ANALYSIS.constants_as_literals(func_ir, expr, block.scope, inst.loc)
                if constants:
                    self.prefix[id(inst)] = constants
            if callee is cuda.local.array:
                operands = _coop_operands(func_ir) if operands is None else operands
                if inst.target.name in operands:
                    added = _local_array_as_thread_data(func_ir, inst, block.scope)
                    if added:
                        self.prefix[id(inst)] = added
                        callee = ThreadData
            if _is_coop_callee(callee):
                self.todo.append((inst, callee))
        return bool(self.todo or self.prefix)

    def apply(self):
        func_ir = self.func_ir
        todo = {id(inst): callee for inst, callee in self.todo}
        body = []
        scope = self.block.scope
        fname = getattr(getattr(func_ir, "func_id", None), "func_qualname", "?")
        for inst in self.block.body:
            body.extend(self.prefix.get(id(inst), ()))
            callee = todo.get(id(inst))
            after = []
            if callee is not None:
                expr = inst.value
                ipt_is_arg = False
                if callee is ThreadData:
                    ipt = expr.args[0] if expr.args else dict(expr.kws).get("items_per_thread")
                    ipt_is_arg = ipt is not None and _is_arg(func_ir, ipt)
                    if not _ANALYSIS.has_dtype(func_ir, expr):
                        source = _dtype_source(func_ir, inst.target)
                        if isinstance(source, type):  # a dtype the output implies
                            var = ir.Var(scope, f"$coop_implied_dtype.{id(inst)}", inst.loc)
                            glob = ir.Global(source.__name__, source, inst.loc)
                            func_ir._definitions[var.name] = [glob]
                            body.append(ir.Assign(glob, var, inst.loc))
                            source = var
                        if source is not None:
                            expr.kws = list(expr.kws) + [("_dtype_from", source)]
                name = callee.name if isinstance(callee, KernelFunction) else callee.__name__
                if isinstance(callee, KernelFunction):
                    _ANALYSIS.rename_keyword_aliases(expr, name, inst.loc, fname)
                    if name in _ANALYSIS.result_aliases:
                        after = _ANALYSIS.alias_result(func_ir, inst, _ANALYSIS.result_aliases[name][0], scope)
                    _PLAIN_FUNCTIONS.swap(func_ir, expr, name, inst.loc, fname)
                    _CHECKS.reject_operands(func_ir, expr, name, inst.loc, fname)
                    _CHECKS.reject_constant_destinations(func_ir, expr, name, inst.loc, fname)
                elif callee is TempStorage:
                    _CHECKS.check_constant_arguments(func_ir, expr, callee, inst.loc, fname)
                    after = _ANALYSIS.storage_byte_view(func_ir, inst, scope)
                floats = literal_keywords(_ANALYSIS, func_ir, expr.kws) if isinstance(callee, KernelFunction) else ()
                with _lock:
                    site_id = next(_counter)
                    SITES[site_id] = Site(inst.loc, name, fname, ipt_is_arg, floats)
                var = ir.Var(scope, f"$coop_site.{site_id}", inst.loc)
                body.append(ir.Assign(ir.Const(site_id, inst.loc), var, inst.loc))
                func_ir._definitions[var.name] = [ir.Const(site_id, inst.loc)]
                expr.kws = list(expr.kws) + [("_coop_site", var)]
            body.append(inst)
            body.extend(after)
        self.block.body = body
        return self.block
