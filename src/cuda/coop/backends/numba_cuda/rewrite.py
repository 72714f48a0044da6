"""Rewrites that give an untyped ``coop.ThreadData(n)`` its dtype (classic numba-cuda).

They also turn a fixed-size 1-D ``cuda.local.array(n, dtype)`` passed to a cooperative
call into ``coop.ThreadData(n, dtype)``, as the numba-cuda-mlir backend does.

numba types each call in isolation, so the dtype of a ``ThreadData(n)`` without ``dtype``
(the array it is loaded from or stored to, the first value written into it, the output
keyword it is passed as) needs the whole function.  The analysis is the one the
numba-cuda-mlir backend uses (``backends/_inference.py``); this module only edits
numba-cuda's IR: before inference it adds a hidden ``_dtype_from=<variable>`` keyword to
such a constructor (typing reads the variable's type), and after inference it points the
keyword at a null of that type defined just before the call, because the variable may be
defined after the constructor (the first value written into it), which lowering does not
allow.
"""

from __future__ import annotations

from ..._kernel_api import KernelFunction
from ..._payloads import DTYPE_FROM, TempStorage, ThreadData
from .._inference import CallSiteChecks, PayloadDtypeAnalysis, PlainFunctionOperands, is_coop_callee
from . import _compat as C

__all__ = ["InferPayloadDtypes"]

ir = C.ir
_ANALYSIS = PayloadDtypeAnalysis(ir, C.run_frontend, C.replace_vars_stmt)
_PLAIN_FUNCTIONS = PlainFunctionOperands(_ANALYSIS, lambda fn: C.cuda.jit(device=True)(fn), "numba.cuda")
_CHECKS = CallSiteChecks(_ANALYSIS, C.cuda)


# Registered by hooks.py, whose rewrite runs this one once the backend is ready.
class InferPayloadDtypes(C.Rewrite):
    """Local-array payloads become ThreadData; untyped ThreadData get ``_dtype_from=``.

    Plain Python operators passed to an operation become device functions here too, and the
    misuses of ``CallSiteChecks`` are named errors.
    """

    def match(self, func_ir, block, typemap, calltypes):
        self.func_ir, self.block, self.todo, self.prefix, self.suffix = func_ir, block, {}, {}, {}
        fname = getattr(getattr(func_ir, "func_id", None), "func_qualname", "?")
        operands = None
        _CHECKS.check_constant_indexes(func_ir, block, fname)
        for inst in block.body:
            if not (isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr) and inst.value.op == "call"):
                continue
            callee = _ANALYSIS.resolve_value(func_ir, inst.value.func)
            _CHECKS.reject_host_constructors(func_ir, inst, callee, fname)
            if callee is C.cuda.local.array:
                # A fixed-size 1-D cuda.local.array passed to a cooperative call is a
                # ThreadData(n, dtype): every family then takes it as input and output.
                operands = _ANALYSIS.coop_operands(func_ir) if operands is None else operands
                if inst.target.name in operands:
                    added = _ANALYSIS.local_array_as_thread_data(func_ir, inst, block.scope)
                    if added:
                        self.prefix[id(inst)] = added
                continue
            expr = inst.value
            if is_coop_callee(callee) or _ANALYSIS.is_coop_method_call(func_ir, expr):  # once: none are left
                constants = _ANALYSIS.constants_as_literals(func_ir, expr, block.scope, inst.loc)
                if constants:
                    self.prefix[id(inst)] = [*self.prefix.get(id(inst), ()), *constants]
            if isinstance(callee, KernelFunction):
                _ANALYSIS.rename_keyword_aliases(expr, callee.name, inst.loc, fname)
                if callee.name in _ANALYSIS.result_aliases:  # a second pass finds no reads left
                    after = _ANALYSIS.alias_result(func_ir, inst, _ANALYSIS.result_aliases[callee.name][0],
                                                   block.scope)
                    if after:
                        self.suffix[id(inst)] = after
                _PLAIN_FUNCTIONS.swap(func_ir, expr, callee.name, inst.loc, fname)
                _CHECKS.reject_operands(func_ir, expr, callee.name, inst.loc, fname)
                _CHECKS.reject_constant_destinations(func_ir, expr, callee.name, inst.loc, fname)
                continue
            if isinstance(getattr(callee, "__self__", None), TempStorage):
                _CHECKS.reject_reservation(func_ir, inst)
            if callee is TempStorage:
                _CHECKS.check_constant_arguments(func_ir, expr, callee, inst.loc, fname)
                after = _ANALYSIS.storage_byte_view(func_ir, inst, block.scope)  # a second pass: none left
                if after:
                    self.suffix[id(inst)] = after
            if (callee is not ThreadData or _ANALYSIS.has_dtype(func_ir, expr)
                    or any(k == DTYPE_FROM for k, _ in expr.kws)):
                continue
            source = _ANALYSIS.dtype_source(func_ir, inst.target)
            if source is not None:
                self.todo[id(inst)] = source
        return bool(self.todo or self.prefix or self.suffix)

    def apply(self):
        body = []
        for inst in self.block.body:
            body.extend(self.prefix.get(id(inst), ()))
            source = self.todo.get(id(inst))
            if source is not None:
                if isinstance(source, type):  # a NumPy scalar type an output keyword implies
                    var = ir.Var(self.block.scope, f"$coop_implied_dtype.{id(inst)}", inst.loc)
                    glob = ir.Global(source.__name__, source, inst.loc)
                    self.func_ir._definitions[var.name] = [glob]
                    body.append(ir.Assign(glob, var, inst.loc))
                    source = var
                inst.value.kws = list(inst.value.kws) + [(DTYPE_FROM, source)]
            body.append(inst)
            body.extend(self.suffix.get(id(inst), ()))
        self.block.body = body
        return self.block
