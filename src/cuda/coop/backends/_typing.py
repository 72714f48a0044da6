"""Typing of cuda.coop calls, for either compiler.

Both compilers (numba-cuda-mlir, classic numba-cuda) type a cooperative call the same way:
the call's Numba types are checked and decoded here (literal ints, flags, dtypes, a
ThreadData's dtype from its hidden source), operations become compiler-neutral
descriptors whose family ``plan`` decides the result (``_planning.plan_call``), and the
template returns that result's type.  Errors are cuda-coop exceptions raised at the
user's line (they are not NumbaErrors, so numba lets them through unchanged).

Only what a compiler spells differently comes from its backend, in a ``CompilerGlue``:
its Numba ``types`` and template base classes, its cuda.coop types (``_types.py``), how
it builds a signature, how it finds the call being typed for an error's location, how
its rewrite says that ``items_per_thread`` is a kernel argument, and what identifies a
``coop.TempStorage()`` call.  ``build`` makes the templates for one compiler; each
backend's ``typing.py`` binds them.  Imports no compiler.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, NamedTuple

from ..core.records import record
from .. import _groups
from .._diagnostics import raise_at
from .._dtypes import normalize_dtype
from .._errors import CoopError, InvalidArgumentTypeError, NonConstantArgumentError, UnknownDtypeError
from .._payloads import (
    DTYPE_FROM, SHARING_MODES, TempStorage, ThreadData, check_alignment, check_items_per_thread,
    check_payload_bytes, merge_alignas,
)
from ..core import spec
from . import _planning, _reserve
from ._float_literals import converted_signature_kws
from ._reserve import RESERVE_KEY

__all__ = ["CompilerGlue", "CompilerTyping", "build", "DTYPE_FROM", "GROUP_BY_KEY", "RESERVE_KEY"]

# The typing (and lowering) key of ``group.group_by(...)``, a method of every group type.
GROUP_BY_KEY = "cuda.coop.Group.group_by"

_NO_VALUE = object()
_CONSTANT_SOURCES = "a literal, a module constant or a closure value"


@record
class CompilerGlue:
    """What one compiler spells differently; everything else in this module is shared."""

    types: Any  # the compiler's Numba ``types`` module
    abstract_template: type  # its ``AbstractTemplate`` and ``AttributeTemplate``
    attribute_template: type
    coop_types: Any  # its cuda.coop types module (GroupType, describe_type, ...: _types.py)
    as_dtype: Callable
    force_literal_arg: type  # the ForceLiteralArg its dispatcher answers with literal retyping
    # ``(restype, args, kws, receiver=None)`` -> the call's signature; ``receiver`` is the
    # Numba type a method (``storage.reserve``) is bound to.
    signature: Callable
    typing_location: Callable[[], tuple]  # ``(loc, function)`` of the call numba is typing now
    hidden_keywords: tuple  # keywords its rewrite adds, which the user never wrote
    call_location: Callable[[dict], tuple]  # ``kws`` -> ``(loc, function)`` of a call's source line
    items_per_thread_is_kernel_argument: Callable[[dict], bool]  # of the ThreadData being typed
    temp_storage_site: Callable[[dict], Any]  # ``kws`` -> an id of the coop.TempStorage() call
    # ``kws`` -> True for an attempt that must decline (return None, no error): numba-cuda-mlir
    # retries a call with non-literal types after the literal attempt already decided.
    declines: Callable[[dict], bool] = lambda kws: False  # noqa: E731
    # ``kws`` -> {keyword: the Python float the kernel wrote there} (backends/_float_literals.py)
    float_literals: Callable[[dict], dict] = lambda kws: {}  # noqa: E731


class CompilerTyping(NamedTuple):
    """What ``build`` makes for one compiler, bound to names by its ``typing.py``."""

    GroupAttributes: type
    ThreadDataAttributes: type
    TempStorageAttributes: type
    function_types: Callable  # every kernel-callable object but the operations -> its function type
    op_function_type: Callable  # an operation's OpSpec -> its function type
    plan_call: Callable  # (op_spec, argtys, kwtys) -> CallPlan
    reservation_of: Callable  # (storage type, argtys, kwtys) -> (count, dtype, alignment)
    located_method: Callable  # decorator: a method typer's cuda-coop errors at the call's line


def _literal_value(types, ty):
    """The constant a literal type holds (``4096.0``, ``'yes'``), else ``_NO_VALUE``."""
    return ty.literal_value if isinstance(ty, types.Literal) else _NO_VALUE


def _fold_items_per_thread(args, kws):
    """Numba's argument folder for the literal request: index 0 is items_per_thread."""
    kws = dict(kws)
    return (args[0],) if args else (kws["items_per_thread"],)


class _Typer:
    """The checks and decoders of argument types, on one compiler's glue."""

    def __init__(self, glue: CompilerGlue):
        self.glue = glue
        self.types = glue.types
        self.describe_type = glue.coop_types.describe_type

    def described(self, ty) -> str:
        return spec.describe(self.describe_type(ty))

    # ---- error locations --------------------------------------------------------------

    def located_call(self, type_call, args, kws):
        """``type_call(args, kws)`` with its cuda-coop errors re-raised at the call's line."""
        if self.glue.declines(kws):
            return None
        try:
            return type_call(args, kws)
        except CoopError as exc:
            loc, function = self.glue.call_location(kws)
            raise_at(exc, getattr(loc, "filename", None), getattr(loc, "line", None), function)

    def located_method(self, fn):
        """Run a method typer (no hidden keywords); re-raise cuda-coop errors at the call's line."""

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except CoopError as exc:
                loc, function = self.glue.typing_location()
                raise_at(exc, getattr(loc, "filename", None), getattr(loc, "line", None), function)

        return wrapper

    # ---- argument readers -------------------------------------------------------------

    def bind_stub(self, call, pyfunc, args, kws):
        """The user's arguments bound to the host class's ``__init__`` (its names, its usage)."""
        kws = {k: v for k, v in kws.items() if k not in self.glue.hidden_keywords}
        try:
            return inspect.signature(pyfunc).bind(None, *args, **kws).arguments
        except TypeError as exc:
            params = list(inspect.signature(pyfunc).parameters.values())[1:]
            raise InvalidArgumentTypeError(
                f"{call}: {exc}; call it as {call[:-2]}({', '.join(map(str, params))})") from None

    def wrong_type_constant(self, call, label, ty, expected, right_kind):
        """The error for an argument that is not a compile-time ``expected``.

        A constant of another type is a type error that shows it; so is a run-time float,
        string or bool where none of those is ``right_kind`` (the Numba type class a
        constant of ``expected`` has).  Anything else is a value not known at compile time.
        """
        types = self.types
        value = _literal_value(types, ty)
        if value is not _NO_VALUE:
            return InvalidArgumentTypeError(f"{call}: {label}={value!r} is not {expected}; pass {expected}")
        if isinstance(ty, (types.Float, types.UnicodeType, types.Boolean)) and not isinstance(ty, right_kind):
            return InvalidArgumentTypeError(
                f"{call}: {label} is a {ty} value, but it must be {expected}; pass {expected}")
        return NonConstantArgumentError(
            f"{call}: {label}={ty} is not known at compile time; pass {expected} ({_CONSTANT_SOURCES})")

    def literal_int_or_none(self, call, label, ty, check):
        """``check(value)`` of a literal int argument, None where it is omitted or None."""
        types = self.types
        if ty is None or isinstance(ty, (types.NoneType, types.Omitted)):
            return None
        if isinstance(ty, types.IntegerLiteral) and not isinstance(ty, types.BooleanLiteral):
            return check(int(ty.literal_value))
        raise self.wrong_type_constant(call, label, ty, "an int or None", types.Integer)

    def literal_flag(self, call, label, ty):
        """A literal bool argument, None where it is omitted (group_by's ``exhaustive=``)."""
        types = self.types
        if ty is None or isinstance(ty, types.Omitted):
            return None
        if not isinstance(ty, types.BooleanLiteral):
            raise NonConstantArgumentError(
                f"{call}: {label}={self.described(ty)} is not known at compile time; pass {label}=True or "
                f"{label}=False (a literal or a module constant)")
        return bool(ty.literal_value)

    def dtype_of(self, call, label, ty):
        """The NumPy dtype a ``dtype=`` argument names, None where it is omitted or None."""
        types = self.types
        d = self.describe_type(ty)
        if isinstance(d, spec.DtypeArg):
            return d.dtype
        if isinstance(d, spec.StringArg) and d.value is not None:
            return normalize_dtype(d.value, label=label)
        if isinstance(d, spec.NoneArg) or d is spec.OMITTED:
            return None
        if isinstance(ty, (types.NumberClass, types.DType)):  # a dtype cuda.coop does not move (bool, ...)
            return normalize_dtype(str(getattr(ty, "instance_type", ty)), label=label)
        raise InvalidArgumentTypeError(f"{call}: {label}={spec.describe(d)} is not a dtype; pass e.g. np.int32 "
                                       "or 'float32'")

    def inferred_dtype(self, call, source):
        """The dtype of a ThreadData without ``dtype=`` from the type of its hidden source (an
        array, the first value written into it, or the NumPy type an output keyword implies)."""
        types = self.types
        if isinstance(source, types.Array):
            dtype = self.describe_type(source).dtype
            if dtype is None:
                raise UnknownDtypeError(
                    f"{call}: the element type {source.dtype} of the array loaded into this payload is not "
                    "supported; pass dtype= explicitly")
            return dtype
        if isinstance(source, types.NumberClass):  # the dtype an output keyword implies
            return self.dtype_of(call, "dtype", source)
        if isinstance(source, types.Literal):
            raise UnknownDtypeError(
                f"{call}: dtype is omitted and the first value written into this payload is the literal "
                f"{source.literal_value!r}, whose width is ambiguous; write a typed value (e.g. np.int32(1)) "
                "or pass dtype=, e.g. coop.ThreadData(4, dtype=np.int32)")
        if isinstance(source, (types.Integer, types.Float)):  # the first value written into it
            dtype = self.describe_type(types.unliteral(source)).dtype
            if dtype is None:
                raise UnknownDtypeError(
                    f"{call}: the first value written into this payload has type {source}, which is not a "
                    "supported payload dtype; pass dtype= explicitly")
            return dtype
        raise UnknownDtypeError(
            f"{call}: dtype is omitted and cannot be inferred (no coop.load() source or coop.store() "
            "destination that is a kernel argument, no value written into it and no aggregate_output= use); "
            "pass dtype=, e.g. coop.ThreadData(4, dtype=np.float32)")

    # ---- the calls ----------------------------------------------------------------------

    def group_factory(self, kind, width):
        """``coop.this_<kind>()``: a compile-time group descriptor."""

        def type_call(args, kws):
            if args or [k for k in kws if k not in self.glue.hidden_keywords]:
                raise InvalidArgumentTypeError(
                    f"coop.this_{kind}(): takes no arguments; the launch configuration defines the group")
            return self.glue.signature(self.glue.coop_types.GroupType(kind, width), args, kws)

        return type_call

    def group_by(self, this, args, kws):
        """``this_warp().group_by(width)`` (logical warps) and ``this_block().group_by(n)``
        (groups of n warps): compile-time descriptors."""
        types, GroupType = self.types, self.glue.coop_types.GroupType
        if this.kind == "block":
            call, label = "coop.this_block().group_by()", "warps_per_group"
            usage = ("takes the number of warps per group and optionally exhaustive=; call group_by(n) or "
                     "group_by(n, exhaustive=False)")
            hint = _CONSTANT_SOURCES
        else:
            call, label = "coop.this_warp().group_by()", "width"
            if this.kind != "warp" or this.width != 32:
                raise _groups.InvalidGroupWidthError(
                    f"{call}: {this.descriptor().label} has no group_by(); call it on coop.this_warp() or "
                    "coop.this_block()")
            usage = ("takes the logical warp width and optionally exhaustive=; call group_by(width) or "
                     "group_by(width, exhaustive=True)")
            hint = f"1, 2, 4, 8, 16 or 32 (or another width from 3 to 31 with exhaustive=False) as {_CONSTANT_SOURCES}"
        if set(kws) - {"exhaustive"} or len(args) != 1:
            raise InvalidArgumentTypeError(f"{call}: {usage}")
        exhaustive = self.literal_flag(call, "exhaustive", kws.get("exhaustive"))
        exhaustive = True if exhaustive is None else exhaustive
        (n,) = args
        if not isinstance(n, types.IntegerLiteral) or isinstance(n, types.BooleanLiteral):
            raise NonConstantArgumentError(
                f"{call}: {label}={self.described(n)} is not known at compile time; pass {hint}")
        if this.kind == "block":
            group = GroupType("warps", _groups.check_warps_per_group(int(n.literal_value)), exhaustive)
        else:
            group = GroupType("warp", _groups.check_warp_width(int(n.literal_value), exhaustive=exhaustive))
        return self.glue.signature(group, args, kws)

    def items_per_thread(self, call, ty, kws):
        types = self.types
        if isinstance(ty, types.IntegerLiteral) and not isinstance(ty, types.BooleanLiteral):
            return check_items_per_thread(int(ty.literal_value))
        if isinstance(ty, types.Integer):
            if self.glue.items_per_thread_is_kernel_argument(kws):
                # A kernel argument: ask the dispatcher to specialize on its value.
                raise self.glue.force_literal_arg({0}, fold_arguments=_fold_items_per_thread)
            raise NonConstantArgumentError(
                f"{call}: items_per_thread is computed in the kernel but must be known at compile time; use "
                "a literal, a module constant, a closure value or a kernel argument (the kernel is then "
                "specialized per value)")
        raise InvalidArgumentTypeError(
            f"{call}: items_per_thread={ty} is not an int; pass a positive int known at compile time")

    def thread_data(self, args, kws):
        call = "coop.ThreadData()"
        coop_types = self.glue.coop_types
        bound = self.bind_stub(call, ThreadData.__init__, args, kws)
        items = self.items_per_thread(call, bound.get("items_per_thread"), kws)
        dtype = self.dtype_of(call, "dtype", bound.get("dtype"))
        if dtype is None:
            dtype = self.inferred_dtype(call, kws.get(DTYPE_FROM))
        alignment = self.literal_int_or_none(call, "alignment", bound.get("alignment"),
                                             lambda a: check_alignment(a, call=call))
        alignas = self.literal_int_or_none(call, "alignas", bound.get("alignas"),
                                           lambda a: check_alignment(a, call=call, label="alignas"))
        alignment = merge_alignas(alignment, alignas)
        check_payload_bytes(items, dtype, call=call)
        restype = coop_types.ThreadDataType(coop_types.numba_type_of_dtype(dtype), items, alignment)
        return self.glue.signature(restype, args, kws)

    def temp_storage(self, args, kws):
        call = "coop.TempStorage()"
        types = self.types
        bound = self.bind_stub(call, TempStorage.__init__, args, kws)
        size = self.literal_int_or_none(call, "size_in_bytes", bound.get("size_in_bytes"),
                                        lambda s: TempStorage(s).size_in_bytes)
        alignment = self.literal_int_or_none(call, "alignment", bound.get("alignment"),
                                             lambda a: check_alignment(a, call=call))
        auto_sync = bound.get("auto_sync")
        if auto_sync is None or isinstance(auto_sync, (types.NoneType, types.Omitted)):
            auto_sync = None
        elif isinstance(auto_sync, types.BooleanLiteral):
            auto_sync = bool(auto_sync.literal_value)
        else:
            raise self.wrong_type_constant(call, "auto_sync", auto_sync, "True, False or None", types.Boolean)
        sharing = bound.get("sharing")
        if sharing is None or isinstance(sharing, types.Omitted):
            sharing = "shared"
        elif isinstance(sharing, types.StringLiteral):
            sharing = TempStorage(sharing=sharing.literal_value).sharing
        else:
            raise self.wrong_type_constant(call, "sharing", sharing, " or ".join(map(repr, SHARING_MODES)),
                                           types.UnicodeType)
        restype = self.glue.coop_types.TempStorageType(self.glue.temp_storage_site(kws), size, alignment,
                                                       auto_sync, sharing)
        return self.glue.signature(restype, args, kws)


def build(glue: CompilerGlue) -> CompilerTyping:
    """The typing templates and typers of one compiler."""
    typer = _Typer(glue)
    types, coop_types = glue.types, glue.coop_types
    plan_call = functools.partial(_planning.plan_call, describe_type=coop_types.describe_type,
                                  hidden_keywords=glue.hidden_keywords)
    reservation_of = functools.partial(_reserve.reservation_of, types=types, as_dtype=glue.as_dtype,
                                       literal_int_or_none=typer.literal_int_or_none,
                                       hidden_keywords=glue.hidden_keywords)

    class CoopTemplate(glue.abstract_template):
        # Literal argument types first: items_per_thread, selectors and flags are only
        # meaningful as literals.
        prefer_literal = True

    def call_template(name, key, type_call):
        """A template of a plain call (``coop.ThreadData(...)``, an operation, ...)."""

        def generic(self, args, kws):
            return typer.located_call(type_call, args, kws)

        return type(name, (CoopTemplate,), {"key": key, "generic": generic})

    def bound_method(name, key, type_method, this):
        """The function type of a method (``group.group_by``) bound to ``this``, a Numba type."""

        located = typer.located_method(type_method)

        def generic(self, args, kws):
            return located(self.this, args, kws)

        return types.BoundFunction(type(name, (CoopTemplate,), {"key": key, "generic": generic, "this": this}),
                                   this)

    def type_reserve(this, args, kws):
        count, dtype, alignment = reservation_of(this, args, kws)
        restype = types.Array(coop_types.numba_type_of_dtype(dtype), 1, "C")
        return glue.signature(restype, args, kws, receiver=this)

    class GroupAttributes(glue.attribute_template):
        key = coop_types.GroupType

        def resolve_group_by(self, ty):
            return bound_method("GroupByBound", GROUP_BY_KEY, typer.group_by, ty)

    class ThreadDataAttributes(glue.attribute_template):
        key = coop_types.ThreadDataType

        def resolve_items_per_thread(self, ty):
            return types.IntegerLiteral(ty.items)

    class TempStorageAttributes(glue.attribute_template):
        key = coop_types.TempStorageType

        def resolve_reserve(self, ty):
            return bound_method("ReserveBound", RESERVE_KEY, type_reserve, ty)

    def op_function_type(op_spec):
        """The Numba function type of one operation's stub (made once, by the backend)."""

        def type_op(args, kws):
            literals = glue.float_literals(kws)
            plan = plan_call(op_spec, args, kws, float_literals=literals)
            if literals:  # converted at the call: the signature has the operand's dtype
                kws = converted_signature_kws(plan, kws, literals, coop_types.numba_type_of_dtype)
            return glue.signature(coop_types.result_type(plan.result), args, kws)

        return types.Function(call_template(f"Coop_{op_spec.name}_Template", op_spec.stub, type_op))

    def function_types():
        """Map each kernel-callable object but the operations to its Numba function type (an
        operation's is made when a kernel first uses it: op_function_type)."""
        mapping = {}
        for factory, kind, width in ((_groups.this_block, "block", 0), (_groups.this_warp, "warp", 32),
                                     (_groups.this_thread, "thread", 0), (_groups.this_grid, "grid", 0),
                                     (_groups.this_cluster, "cluster", 0)):
            template = call_template(f"This{kind.title()}Template", factory, typer.group_factory(kind, width))
            mapping[factory] = types.Function(template)
        mapping[ThreadData] = types.Function(call_template("ThreadDataTemplate", ThreadData, typer.thread_data))
        mapping[TempStorage] = types.Function(call_template("TempStorageTemplate", TempStorage,
                                                            typer.temp_storage))
        return mapping

    return CompilerTyping(GroupAttributes, ThreadDataAttributes, TempStorageAttributes, function_types,
                          op_function_type, plan_call, reservation_of, typer.located_method)
