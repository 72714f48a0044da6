"""Where an untyped ``coop.ThreadData(n)`` takes its dtype from: analysis of a Numba IR.

Both compilers (numba-cuda-mlir and classic numba-cuda) hand their before-inference
rewrites a Numba IR of the same shape, made of classes each vendors in its own module.
The analysis here is written once against those classes: a backend builds one
:class:`PayloadDtypeAnalysis` with its ``ir`` module and its ``run_frontend`` (how it reads
a device helper's untyped IR) and keeps only the IR edits in its own rewrite.

The dtype of a ``ThreadData(n)`` without ``dtype`` comes from, in this order:

- the array of the first ``coop.load`` (source) or ``coop.store`` (destination) that uses
  it, also through ``@cuda.jit(device=True)`` helpers it is passed to (their untyped IR is
  read for the load/store of that parameter); the array must be a kernel argument or a
  slice of one, so it is defined before the payload;
- else the first value written into it (``items[i] = x``), or the value of the first call
  that fills it as ``aggregate_output=``;
- else the NumPy scalar type an output keyword implies (``run_length_decode(...,
  relative_offsets=p)``: ``decoded_offset_dtype``, else the op's default).
"""

from __future__ import annotations

import types
import weakref

from .._kernel_api import KernelConstructMeta, KernelFunction

__all__ = ["PayloadDtypeAnalysis", "PlainFunctionOperands", "CallSiteChecks", "NO_CONSTANT", "positions"]

NO_CONSTANT = object()
_DEPTH = 8  # copy chains followed this deep
_HELPER_DEPTH = 4  # helpers that pass a payload on to helpers, followed this deep


class _ByOperation:
    """op name -> what ``compute(spec)`` makes of its OpSpec, None for nothing; computed on
    first use, which imports only that operation's family (``ops/_lookup.py``).  Answers
    ``in``, ``[]`` and ``get`` like the dict of every operation it stands for."""

    def __init__(self, compute):
        self._compute = compute
        self._values: dict = {}

    def _value(self, name):
        try:
            return self._values[name]
        except (KeyError, TypeError):
            pass
        from ..ops._lookup import spec_named

        spec = spec_named(name) if isinstance(name, str) else None
        value = None if spec is None else self._compute(spec)
        if isinstance(name, str):
            self._values[name] = value
        return value

    def __contains__(self, name) -> bool:
        return self._value(name) is not None

    def __getitem__(self, name):
        value = self._value(name)
        if value is None:
            raise KeyError(name)
        return value

    def get(self, name, default=None):
        value = self._value(name)
        return default if value is None else value


def positions(field: str) -> _ByOperation:
    """op name -> positions (ints) of the operands an OpSpec field names, from the op records."""

    def compute(spec):
        value = getattr(spec, field)
        if value is None:
            return None
        names = value if isinstance(value, tuple) else (value,)
        return tuple(spec.positional_index(n) for n in names)

    return _ByOperation(compute)


def _implied_dtypes() -> _ByOperation:
    """op name -> {keyword output: (keyword naming its dtype or None, default dtype name)}."""
    return _ByOperation(lambda spec: {out: (kw, default) for out, kw, default in spec.implied_payload_dtypes}
                        if spec.implied_payload_dtypes else None)


def _keyword_aliases() -> _ByOperation:
    """op name -> {alias: keyword} from the op records."""
    return _ByOperation(lambda spec: dict(spec.keyword_aliases) if spec.keyword_aliases else None)


def is_coop_callee(obj) -> bool:
    return isinstance(obj, (KernelFunction, KernelConstructMeta))


class PayloadDtypeAnalysis:
    """The IR queries of the payload-dtype inference, over one compiler's IR classes."""

    def __init__(self, ir, run_frontend, replace_vars_stmt):
        self.ir = ir
        self.run_frontend = run_frontend
        self.replace_vars_stmt = replace_vars_stmt
        # op name -> (payload position, array position): the calls an untyped payload takes its dtype from
        self.dtype_definers = positions("payload_dtype_from")
        # op name -> (position of the operand its None result is read as,)
        self.result_aliases = positions("result_alias")
        self.keyword_aliases = _keyword_aliases()
        self.implied = _implied_dtypes()
        self._helper_irs = weakref.WeakKeyDictionary()

    # -- variables --------------------------------------------------------------------

    def definition(self, func_ir, var):
        try:
            return func_ir.get_definition(var)
        except Exception:
            return None

    def resolve_value(self, func_ir, var, depth=0):
        """The Python object a variable holds, when it is a global/closure attribute chain."""
        ir = self.ir
        if depth > _DEPTH:
            return None
        d = self.definition(func_ir, var)
        if isinstance(d, (ir.Global, ir.FreeVar)):
            return d.value
        if isinstance(d, ir.Var):
            return self.resolve_value(func_ir, d, depth + 1)
        if isinstance(d, ir.Expr) and d.op == "getattr":
            base = self.resolve_value(func_ir, d.value, depth + 1)
            if base is not None:
                return getattr(base, d.attr, None)
        return None

    def same_var(self, func_ir, a, b, depth=0) -> bool:
        """Whether variable ``a`` is ``b``, a plain copy of it or an item of a tuple holding it
        (``packed = (items,)``; ``alias = packed``; ``alias[0]``)."""
        if a.name == b.name:
            return True
        if depth > _DEPTH:
            return False
        d = self.alias_of(func_ir, a)
        return d is not None and self.same_var(func_ir, d, b, depth + 1)

    def root(self, func_ir, var, depth=0):
        """The variable ``var`` is an alias of (a plain copy, or a constant-index item of a
        tuple built in the kernel), followed to the end; ``var`` itself when it is neither."""
        d = self.alias_of(func_ir, var)
        if d is not None and depth < _DEPTH:
            return self.root(func_ir, d, depth + 1)
        return var

    def alias_of(self, func_ir, var):
        """The variable ``var`` stands for, one step back, or None: the source of a plain copy,
        or item ``i`` of ``t[i]`` where ``t`` is (a copy of) a tuple built in the kernel and
        ``i`` a constant (``static_getitem``, or ``getitem`` with a constant index)."""
        ir = self.ir
        d = self.definition(func_ir, var)
        if isinstance(d, ir.Var):
            return d
        if not (isinstance(d, ir.Expr) and d.op in ("static_getitem", "getitem")):
            return None
        index = d.index if d.op == "static_getitem" else self.constant(func_ir, d.index)
        if isinstance(index, bool) or not isinstance(index, int):
            return None
        built = self.definition(func_ir, self.root(func_ir, d.value))
        if not (isinstance(built, ir.Expr) and built.op == "build_tuple"):
            return None
        try:
            return built.items[index]
        except IndexError:
            return None

    def arg_base(self, func_ir, var, depth=0):
        """The kernel-argument variable ``var`` is, or is a slice of; else None."""
        ir = self.ir
        if depth > _DEPTH:
            return None
        d = self.definition(func_ir, var)
        if isinstance(d, ir.Arg):
            return var
        if isinstance(d, ir.Var):
            return self.arg_base(func_ir, d, depth + 1)
        if isinstance(d, ir.Expr) and d.op in ("getitem", "static_getitem"):
            return self.arg_base(func_ir, d.value, depth + 1)
        return None

    def is_arg(self, func_ir, var, depth=0) -> bool:
        d = self.definition(func_ir, var)
        if isinstance(d, self.ir.Arg):
            return True
        return isinstance(d, self.ir.Var) and depth < _DEPTH and self.is_arg(func_ir, d, depth + 1)

    def constant(self, func_ir, var):
        """The value of ``var`` when it is a literal or a global/closure constant, else NO_CONSTANT."""
        ir = self.ir
        d = self.definition(func_ir, self.root(func_ir, var))
        if isinstance(d, (ir.Const, ir.Global, ir.FreeVar)):
            return d.value
        return NO_CONSTANT

    def calls(self, func_ir):
        ir = self.ir
        for label in sorted(func_ir.blocks):
            for inst in func_ir.blocks[label].body:
                if isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr) and inst.value.op == "call":
                    yield inst.value

    # -- the dtype source -------------------------------------------------------------

    def dtype_source(self, func_ir, payload_var):
        """What gives ``payload_var`` its dtype: the array of the first load/store that uses it
        (directly or in a device helper it is passed to), else the first value written into it
        (``items[i] = x``), else the value of the first call that fills it as
        ``aggregate_output=`` (whose dtype is the value's), else the NumPy scalar type an
        output keyword implies (returned as a type, not a variable); None when nothing does."""
        found = self.array_source(func_ir, payload_var)
        if found is None:
            found = self.written_value(func_ir, payload_var)
        return found if found is not None else self.implied_dtype(func_ir, payload_var)

    def written_value(self, func_ir, payload_var):
        ir = self.ir
        for label in sorted(func_ir.blocks):
            for inst in func_ir.blocks[label].body:
                if (isinstance(inst, (ir.SetItem, ir.StaticSetItem))
                        and self.same_var(func_ir, inst.target, payload_var)):
                    return inst.value
                if isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr) and inst.value.op == "call":
                    out = dict(inst.value.kws).get("aggregate_output")
                    if out is not None and len(inst.value.args) >= 2 and self.same_var(func_ir, out, payload_var):
                        return inst.value.args[1]
        return None

    def array_source(self, func_ir, payload_var, depth=0):
        for expr in self.calls(func_ir):
            callee = self.resolve_value(func_ir, expr.func)
            if isinstance(callee, KernelFunction):
                if callee.name not in self.dtype_definers:
                    continue
                payload_at, array_at = self.dtype_definers[callee.name]
                if len(expr.args) <= max(payload_at, array_at):
                    continue
                if not self.same_var(func_ir, expr.args[payload_at], payload_var):
                    continue
                return self.arg_base(func_ir, expr.args[array_at])
            pyfunc = getattr(callee, "py_func", None)
            if pyfunc is None or depth >= _HELPER_DEPTH:
                continue
            # A device helper: the payload is its parameter k; when the helper loads into
            # (or stores from) that parameter with its parameter j as the array, the array
            # is the caller's argument j.
            for k, arg in enumerate(expr.args):
                if not self.same_var(func_ir, arg, payload_var):
                    continue
                j = self.helper_array_parameter(pyfunc, k, depth + 1)
                if j is not None and j < len(expr.args):
                    base = self.arg_base(func_ir, expr.args[j])
                    if base is not None:
                        return base
        return None

    def helper_ir(self, pyfunc):
        """The untyped IR of a device helper's Python function (None when it cannot be read)."""
        if pyfunc not in self._helper_irs:
            try:
                self._helper_irs[pyfunc] = self.run_frontend(pyfunc)
            except Exception:  # not Python source numba reads (a builtin, a C function): no facts
                self._helper_irs[pyfunc] = None
        return self._helper_irs[pyfunc]

    def helper_array_parameter(self, pyfunc, k, depth):
        """The index of the helper's parameter that is the array its parameter ``k`` (a payload)
        is loaded from or stored to, else None."""
        ir = self.ir
        helper_ir = self.helper_ir(pyfunc)
        if helper_ir is None:
            return None
        params = {}
        for block in helper_ir.blocks.values():
            for inst in block.body:
                if isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Arg):
                    params[inst.value.index] = inst.target
        if k not in params:
            return None
        base = self.array_source(helper_ir, params[k], depth)
        d = self.definition(helper_ir, base) if base is not None else None
        return d.index if isinstance(d, ir.Arg) else None

    def implied_dtype(self, func_ir, payload_var):
        """The NumPy scalar type of an output keyword that ``payload_var`` is passed as
        (``decoded_offset_dtype=`` when it is a constant, else the op's default), or None."""
        import numpy as np

        for expr in self.calls(func_ir):
            callee = self.resolve_value(func_ir, expr.func)
            rules = self.implied.get(getattr(callee, "name", None)) if isinstance(callee, KernelFunction) else None
            if not rules:
                continue
            kws = dict(expr.kws)
            for out, (dtype_kw, default) in rules.items():
                if out not in kws or not self.same_var(func_ir, kws[out], payload_var):
                    continue
                value = default
                if dtype_kw in kws:
                    value = self.constant(func_ir, kws[dtype_kw])
                    if value is NO_CONSTANT:  # np.uint64 is an attribute of a global
                        value = self.resolve_value(func_ir, kws[dtype_kw])
                        if value is None:  # computed: typing asks for dtype=
                            return None
                    if value is None:
                        value = default
                for spelling in (value, str(value)):  # np.uint64, "uint64"; numba's types.uint64 by name
                    try:
                        return np.dtype(spelling).type
                    except (TypeError, ValueError):
                        pass
                # Not a dtype: the default types the payload, and the op then names the bad
                # keyword (decoded_offset_dtype=3 -> "use np.uint32 or np.uint64").
                return np.dtype(default).type
        return None

    # -- constants typing cannot read, as literals (an IR edit, the same on both compilers' IR) --

    def constants_as_literals(self, func_ir, expr, scope, loc) -> list:
        """Pass the call the literals that typing reads in place of two kinds of constant
        (module, closure or attribute-chain constants) numba types by their class alone:

        - a NumPy integer scalar (``np.int64(32)``) becomes the Python ``int`` it holds:
          numba types it as a plain ``int64``, so ``TempStorage(alignment=np.int64(32))`` or
          ``bins=np.int32(16)`` would be "not known at compile time" where ``32`` is accepted;
        - a member of one of the qualified namespace's algorithm enums
          (``BlockScanAlgorithm.RAKING_MEMOIZE``, ``_enums.py``) becomes its selector string.

        Returns the assignments of the new constants, to insert before the call.
        """
        from .._enums import selector_of
        from .._kernel_api import as_python_int

        ir = self.ir
        added = []

        def literal(var):
            value = self.resolve_value(func_ir, var)
            if value is None or isinstance(value, int) and not hasattr(value, "selector"):
                return var
            replacement = selector_of(value)
            if replacement is None:
                replacement = as_python_int(value)
            if replacement is None:
                return var
            new = ir.Var(scope, f"$coop_constant.{len(added)}.{id(expr)}", loc)
            const = ir.Const(replacement, loc)
            func_ir._definitions[new.name] = [const]
            added.append(ir.Assign(const, new, loc))
            return new

        expr.args = [literal(v) for v in expr.args]
        expr.kws = [(k, literal(v)) for k, v in expr.kws]
        return added

    def rename_keyword_aliases(self, expr, name, loc, fname) -> None:
        """Rename the keywords of ``coop.<name>(...)`` that are another spelling of one of its
        controls (an OpSpec's ``keyword_aliases``); both spellings at once are refused."""
        aliases = self.keyword_aliases.get(name)
        if not aliases or not any(k in aliases for k, _ in expr.kws):
            return
        given = {k for k, _ in expr.kws}
        for alias, keyword in aliases.items():
            if alias in given and keyword in given:
                from .._diagnostics import raise_at
                from .._errors import ConflictingArgumentsError

                raise_at(ConflictingArgumentsError(
                    f"coop.{name}(): {alias}= and {keyword}= were both given, but {alias}= is another "
                    f"spelling of {keyword}=; pass only {keyword}="
                ), getattr(loc, "filename", None), getattr(loc, "line", None), fname)
        expr.kws = [(aliases.get(k, k), v) for k, v in expr.kws]

    def is_coop_method_call(self, func_ir, expr) -> bool:
        """Whether ``expr`` calls a method of a cuda.coop object made in the kernel:
        ``coop.this_warp().group_by(8)``, ``storage.reserve(33, np.float64)``."""
        ir = self.ir
        d = self.definition(func_ir, expr.func)
        if not (isinstance(d, ir.Expr) and d.op == "getattr" and d.attr in ("group_by", "reserve")):
            return False
        made = self.definition(func_ir, self.root(func_ir, d.value))
        return (isinstance(made, ir.Expr) and made.op == "call"
                and is_coop_callee(self.resolve_value(func_ir, made.func)))

    # -- a None result read as its operand (an IR edit, the same on both compilers' IR) --

    def alias_result(self, func_ir, inst, operand_at: int, scope) -> list:
        """Make the reads of a call's (None) result read its operand ``operand_at`` instead.

        ``inst`` is ``r = coop.load(g, src, items)``; an OpSpec's ``result_alias`` names the
        operand.  Every read of ``r`` in the function (passed on, indexed, stored) is renamed
        to a copy of ``items`` made right after the call, so it is the payload filled in
        place; ``r is None`` / ``r is not None`` keep reading ``r`` (None), as NVIDIA's
        documentation of the call says.  Returns the copy's assignment to insert after
        ``inst`` ([] when the result is never read as a value).
        """
        ir = self.ir
        result = inst.target.name
        if len(inst.value.args) <= operand_at:
            return []
        reads = []
        for block in func_ir.blocks.values():
            for stmt in block.body:
                if stmt is inst or isinstance(stmt, ir.Del):
                    continue
                value = getattr(stmt, "value", None)
                if (isinstance(stmt, ir.Assign) and isinstance(value, ir.Expr) and value.op == "binop"
                        and getattr(value.fn, "__name__", "") in ("is_", "is_not")):
                    continue
                if any(v.name == result for v in stmt.list_vars()):
                    reads.append(stmt)
        if not reads:
            return []
        alias = ir.Var(scope, f"$coop_result_of.{id(inst)}", inst.loc)
        copy = ir.Assign(inst.value.args[operand_at], alias, inst.loc)
        func_ir._definitions[alias.name] = [inst.value.args[operand_at]]
        for stmt in reads:
            self.replace_vars_stmt(stmt, {result: alias})
        return [copy]

    # -- a TempStorage indexed as bytes (an IR edit, the same on both compilers' IR) -----

    def storage_byte_view(self, func_ir, inst, scope) -> list:
        """Make ``storage[i]`` / ``storage[i] = v`` index bytes of the storage's own.

        NVIDIA's qualified ``TempStorage`` is opaque byte scratch that kernels may index.
        ``inst`` is ``storage = TempStorage(size_in_bytes, ...)``; when the function indexes
        ``storage`` (or a copy), a ``storage.reserve(size_in_bytes, np.uint8)`` is made right
        after the constructor and the indexing reads and writes that shared array, which
        calls using the storage never overwrite (a reservation).  Returns the assignments to
        insert after ``inst`` ([] when the storage is not indexed).  Without a constant
        ``size_in_bytes`` there is no extent to index: the named error points at the line.
        """
        import numpy as np

        ir = self.ir
        storage = inst.target.name
        uses = []
        for block in func_ir.blocks.values():
            for stmt in block.body:
                if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                    base = stmt.target
                elif (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                      and stmt.value.op in ("getitem", "static_getitem")):
                    base = stmt.value.value
                else:
                    continue
                if self.root(func_ir, base).name == storage:
                    uses.append((stmt, base))
        if not uses:
            return []
        expr = inst.value
        size = expr.args[0] if expr.args else dict(expr.kws).get("size_in_bytes")
        size = self.constant(func_ir, size) if size is not None else None
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            from .._diagnostics import raise_at
            from .._errors import TempStorageError

            stmt = uses[0][0]
            raise_at(TempStorageError(
                "coop.TempStorage(): the storage is indexed as bytes, which needs a constant "
                f"size_in_bytes of at least 1 (given: {size!r}); pass it, e.g. coop.TempStorage(256)"
            ), getattr(stmt.loc, "filename", None), getattr(stmt.loc, "line", None),
                getattr(getattr(func_ir, "func_id", None), "func_qualname", "?"))
        loc, tag = inst.loc, id(inst)

        def var(name, value):
            v = ir.Var(scope, f"$coop_storage_{name}.{tag}", loc)
            func_ir._definitions[v.name] = [value]
            return v, ir.Assign(value, v, loc)

        method, a1 = var("reserve", ir.Expr.getattr(inst.target, "reserve", loc))
        count, a2 = var("bytes", ir.Const(size, loc))
        dtype, a3 = var("uint8", ir.Global("uint8", np.uint8, loc))
        view, a4 = var("view", ir.Expr.call(method, [count, dtype], (), loc))
        for stmt, base in uses:
            self.replace_vars_stmt(stmt, {base.name: view})
        return [a1, a2, a3, a4]

    # -- cuda.local.array payloads (an IR edit, the same on both compilers' IR) ----------

    def coop_operands(self, func_ir) -> set:
        """Names of the variables passed (positionally or by keyword) to any cooperative call."""
        names = set()
        for expr in self.calls(func_ir):
            if isinstance(self.resolve_value(func_ir, expr.func), KernelFunction):
                for var in [*expr.args, *(v for _, v in expr.kws)]:
                    names.add(self.root(func_ir, var).name)
        return names

    def local_array_as_thread_data(self, func_ir, inst, scope) -> list:
        """Turn ``x = cuda.local.array(n, dtype[, alignas=a])`` into ``x = ThreadData(n, dtype, alignment=a)``.

        A fixed-size 1-D local array passed to a cooperative call is the same thing as a
        ``ThreadData(n, dtype)``.  Returns the assignments to insert before ``inst`` (the one
        that binds ``ThreadData`` last), or [] when the shape is not one compile-time length
        (a 2-D array is left alone).
        """
        from .._payloads import ThreadData

        ir = self.ir
        expr = inst.value
        kws = dict(expr.kws)
        shape = expr.args[0] if expr.args else kws.get("shape")
        dtype = expr.args[1] if len(expr.args) > 1 else kws.get("dtype")
        if shape is None or dtype is None:
            return []
        added = []
        d = self.definition(func_ir, shape)
        if isinstance(d, ir.Expr) and d.op == "build_tuple":  # (n,) spelled in the kernel
            if len(d.items) != 1:
                return []
            shape = d.items[0]
        elif isinstance(d, (ir.Const, ir.Global, ir.FreeVar)) and isinstance(d.value, tuple):  # a constant (n,)
            if len(d.value) != 1:
                return []
            shape = ir.Var(scope, f"$coop_local_len.{id(inst)}", inst.loc)
            func_ir._definitions[shape.name] = [ir.Const(d.value[0], inst.loc)]
            added.append(ir.Assign(ir.Const(d.value[0], inst.loc), shape, inst.loc))
        callee = ir.Var(scope, f"$coop_thread_data.{id(inst)}", inst.loc)
        glob = ir.Global("ThreadData", ThreadData, inst.loc)
        func_ir._definitions[callee.name] = [glob]
        expr.func = callee
        expr.args = [shape, dtype]
        expr.kws = [("alignment", v) for k, v in expr.kws if k == "alignas"]
        return [*added, ir.Assign(glob, callee, inst.loc)]

    def has_dtype(self, func_ir, expr) -> bool:
        """Whether a ``ThreadData(...)`` call passes a ``dtype`` (second positional or keyword)
        other than a constant ``None``, which means "infer it" as an omitted one does
        (``ThreadData(n, dtype)`` where the closure's ``dtype`` is None)."""
        given = expr.args[1] if len(expr.args) >= 2 else dict(expr.kws).get("dtype")
        return given is not None and self.constant(func_ir, given) is not None


class PlainFunctionOperands:
    """A plain Python function (or lambda) passed to an operation becomes a device function.

    NVIDIA's examples pass operators such as ``def max_op(a, b)`` undecorated.  Numba
    cannot type a plain function value ("Untyped global name"), so before typing the global
    or closure value is swapped for its device dispatcher, made by ``device_jit`` (the
    compiler's ``cuda.jit(device=True)``).  A function reached through an attribute
    (``module.op``) cannot be swapped in place: the user is told to decorate it with
    ``jit_name.jit(device=True)``.
    """

    def __init__(self, analysis: PayloadDtypeAnalysis, device_jit, jit_name: str):
        self.analysis, self.device_jit, self.jit_name = analysis, device_jit, jit_name
        # One dispatcher per plain function, so that its cache key stays the same.
        self._dispatchers = weakref.WeakKeyDictionary()

    def _global_node(self, func_ir, var, depth=0):
        ir = self.analysis.ir
        d = self.analysis.definition(func_ir, var)
        if isinstance(d, ir.Var) and depth < _DEPTH:
            return self._global_node(func_ir, d, depth + 1)
        return d if isinstance(d, (ir.Global, ir.FreeVar)) else None

    def swap(self, func_ir, expr, name, loc, fname) -> None:
        from .._diagnostics import raise_at
        from .._errors import NotADeviceFunctionError

        for label, var in [(None, a) for a in expr.args] + list(expr.kws):
            value = self.analysis.resolve_value(func_ir, var)
            if not isinstance(value, types.FunctionType):
                continue
            node = self._global_node(func_ir, var)
            if node is not None and node.value is value:
                dispatcher = self._dispatchers.get(value)
                if dispatcher is None:
                    dispatcher = self._dispatchers[value] = self.device_jit(value)
                node.value = dispatcher
                continue
            what = "a lambda" if value.__name__ == "<lambda>" else f"{value.__name__}, a plain Python function"
            where = f"{label}=" if label else "an operand "
            raise_at(NotADeviceFunctionError(
                f"coop.{name}(): {where}{what} reached through an attribute, is not a device function; "
                f"decorate it with @cuda.jit(device=True) ({self.jit_name}) or import it by name"
            ), getattr(loc, "filename", None), getattr(loc, "line", None), fname)


class CallSiteChecks:
    """Misuses that typing would report badly or not at all, found in the untyped IR and
    raised at the call's line (``cuda`` is the compiler's ``cuda`` module).

    - a ``ThreadData``/``TempStorage`` made outside the kernel (a module global or closure
      value) passed to an operation, or reserved from: numba cannot type it ("Untyped
      global name"), so the error says where to construct it instead;
    - a store into constant memory (``cuda.const.array_like(...)`` or a module-global
      array): typed as a mutable array, but the data is the kernel's read-only constant bank;
    - a ``TempStorage(...)`` constant argument of the wrong kind, checked by the host
      constructor, which shows the value the user wrote (typing sees only its type).
    """

    def __init__(self, analysis: PayloadDtypeAnalysis, cuda):
        self.analysis, self.cuda = analysis, cuda
        # op name -> (position of the array the call writes,)
        self.written_arrays = positions("writes")

    def reject_operands(self, func_ir, expr, name, loc, fname) -> None:
        from .._diagnostics import raise_at
        from .._errors import InvalidArgumentTypeError, TempStorageError
        from .._payloads import TempStorage, ThreadData

        a, ir = self.analysis, self.analysis.ir
        for label, var in [(None, v) for v in expr.args] + list(expr.kws):
            d = a.definition(func_ir, a.root(func_ir, var))
            value = getattr(d, "value", None) if isinstance(d, (ir.Global, ir.FreeVar)) else None
            if value is None:
                continue
            where = f"{label}={d.name}" if label else f"operand {d.name}"  # d: the Global or FreeVar
            if isinstance(value, type) and "__call__" in vars(value):
                # A functor class itself: numba cannot type a class object ("Untyped global name").
                raise_at(InvalidArgumentTypeError(
                    f"coop.{name}(): {where} is the class {value.__name__} itself; a class with __call__ is a "
                    f"prefix callback only inside coop.StatefulFunction: build it outside the kernel, "
                    f"running = coop.StatefulFunction({value.__name__}, state_dtype), and pass prefix_op=running "
                    "(any other operator is a @cuda.jit(device=True) function)"
                ), getattr(loc, "filename", None), getattr(loc, "line", None), fname)
            if not isinstance(value, (TempStorage, ThreadData)):
                continue
            kind = type(value).__name__
            exc_type = TempStorageError if kind == "TempStorage" else InvalidArgumentTypeError
            raise_at(exc_type(
                f"coop.{name}(): {where} is a coop.{kind} created outside the kernel (a module global or "
                f"closure value); a {kind} belongs to one kernel launch, so construct it inside the "
                f"kernel: {d.name.lower()} = coop.{kind}(...)"
            ), getattr(loc, "filename", None), getattr(loc, "line", None), fname)

    def reject_reservation(self, func_ir, inst) -> None:
        """``G.reserve(...)`` where ``G`` is such a ``TempStorage``."""
        from .._diagnostics import raise_at
        from .._errors import TempStorageError

        a, ir = self.analysis, self.analysis.ir
        fname = getattr(getattr(func_ir, "func_id", None), "func_qualname", "?")
        d = a.definition(func_ir, inst.value.func)
        is_attr = isinstance(d, ir.Expr) and d.op == "getattr"
        name = d.value.name if is_attr else "storage"
        root = a.definition(func_ir, a.root(func_ir, d.value)) if is_attr else None
        if isinstance(root, (ir.Global, ir.FreeVar)):
            name = root.name
        raise_at(TempStorageError(
            f"TempStorage.reserve(): {name} is a coop.TempStorage created outside the kernel (a module global "
            "or closure value); a reservation is shared memory of one kernel launch, so construct the "
            f"storage inside the kernel: {name.lower()} = coop.TempStorage(...)"
        ), getattr(inst.loc, "filename", None), getattr(inst.loc, "line", None), fname)

    def reject_constant_destinations(self, func_ir, expr, name, loc, fname) -> None:
        from .._diagnostics import raise_at
        from .._errors import InvalidArgumentTypeError

        a, ir = self.analysis, self.analysis.ir
        index = self.written_arrays.get(name, (None,))[0]
        if index is None or len(expr.args) <= index:
            return
        var = a.root(func_ir, expr.args[index])
        d = a.definition(func_ir, var)
        what = None
        if (isinstance(d, ir.Expr) and d.op == "call"
                and a.resolve_value(func_ir, d.func) is self.cuda.const.array_like):
            what = "a cuda.const.array_like(...) array (constant memory)"
        elif isinstance(d, (ir.Global, ir.FreeVar)) and hasattr(d.value, "__array_interface__"):
            what = f"the module-global array {d.name} (captured as a constant)"
        if what is not None:
            raise_at(InvalidArgumentTypeError(
                f"coop.{name}(): destination={var.name if not var.name.startswith('$') else d.name} is "
                f"{what}, which is read-only; store into a writable array, e.g. a kernel argument or a "
                "cuda.shared.array"
            ), getattr(loc, "filename", None), getattr(loc, "line", None), fname)

    def reject_host_constructors(self, func_ir, inst, callee, fname) -> None:
        """``coop.StatefulFunction(...)`` called in a kernel: it is a host object that declares a
        callback, which numba cannot type in device code ("Unknown attribute")."""
        from .._diagnostics import raise_at
        from .._errors import InvalidArgumentTypeError
        from .._stateful import StatefulFunction

        if callee is not StatefulFunction:
            return
        raise_at(InvalidArgumentTypeError(
            f"{inst.target.name if not inst.target.name.startswith('$') else 'op'} = StatefulFunction(...) in "
            "the kernel: coop.StatefulFunction declares a prefix callback on the host, before the kernel "
            "compiles; construct it outside the kernel (running = coop.StatefulFunction(op, np.int64) at "
            "module level) and pass it as prefix_op=running"
        ), getattr(inst.loc, "filename", None), getattr(inst.loc, "line", None), fname)

    def check_constant_indexes(self, func_ir, block, fname) -> None:
        """A constant index of a ``coop.ThreadData(n)`` (``n`` a constant) in ``block`` that is
        outside it, or not an integer.  A kernel checks no index, so ``items[7]`` on four
        items would read or write another variable's registers (it compiled silently); numba
        reports a float index as a bare TypingError."""
        from .._diagnostics import raise_at
        from .._errors import InvalidArgumentTypeError, InvalidArgumentValueError

        a, ir = self.analysis, self.analysis.ir
        for inst in block.body:
            if isinstance(inst, ir.StaticSetItem):
                target, index = inst.target, inst.index
            elif isinstance(inst, ir.SetItem):
                target, index = inst.target, a.constant(func_ir, inst.index)
            elif (isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr)
                  and inst.value.op in ("static_getitem", "getitem")):
                expr = inst.value
                target = expr.value
                index = expr.index if expr.op == "static_getitem" else a.constant(func_ir, expr.index)
            else:
                continue
            if isinstance(index, bool) or not isinstance(index, (int, float)):
                continue  # a run-time index, a slice, a tuple: typing and the hardware's
            items = self._thread_data_items(func_ir, target)
            if items is None:
                continue
            name = target.name if not target.name.startswith("$") else "items"
            where = getattr(inst, "loc", None)
            if isinstance(index, float):
                raise_at(InvalidArgumentTypeError(
                    f"{name}[{index!r}]: a coop.ThreadData is indexed with an integer, not the float "
                    f"{index!r}; use an int, e.g. {name}[{int(index)}]"
                ), getattr(where, "filename", None), getattr(where, "line", None), fname)
            if not -items <= index < items:
                raise_at(InvalidArgumentValueError(
                    f"{name}[{index}]: index {index} is outside coop.ThreadData({items}) {name} (its items "
                    f"are 0 .. {items - 1}, or -{items} .. -1 from the end); a kernel checks no index, so "
                    "this would read or write another variable's registers; use an index in that range"
                ), getattr(where, "filename", None), getattr(where, "line", None), fname)

    def _thread_data_items(self, func_ir, var):
        """``n`` when ``var`` is (a copy of) ``coop.ThreadData(n)`` with ``n`` a constant."""
        from .._payloads import ThreadData

        a, ir = self.analysis, self.analysis.ir
        d = a.definition(func_ir, a.root(func_ir, var))
        if not (isinstance(d, ir.Expr) and d.op == "call" and a.resolve_value(func_ir, d.func) is ThreadData):
            return None
        arg = d.args[0] if d.args else dict(d.kws).get("items_per_thread")
        items = a.constant(func_ir, arg) if isinstance(arg, ir.Var) else NO_CONSTANT
        return items if isinstance(items, int) and not isinstance(items, bool) and items > 0 else None

    def check_constant_arguments(self, func_ir, expr, callee, loc, fname) -> None:
        import inspect

        from .._diagnostics import raise_at
        from .._errors import CoopError

        a, ir = self.analysis, self.analysis.ir
        try:
            bound = inspect.signature(callee.__init__).bind(None, *expr.args, **dict(expr.kws)).arguments
        except TypeError:
            return  # typing reports the malformed call
        constants = {}
        for label, var in list(bound.items())[1:]:
            value = a.constant(func_ir, var) if isinstance(var, ir.Var) else NO_CONSTANT
            if value is not NO_CONSTANT:
                constants[label] = value
        try:
            callee(**constants)
        except CoopError as exc:
            raise_at(exc, getattr(loc, "filename", None), getattr(loc, "line", None), fname)
