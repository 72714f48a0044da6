"""Typing of cuda.coop calls in classic numba-cuda kernels.

One template serves every registered operation: the call's Numba types become
``core.spec`` descriptors, are bound through the operation's stub signature
(``core.binding``), and the family's ``plan`` validates them and decides the result,
whose type the template returns.  Nothing here names a family.

Keywords reach the lowering through the signature's ``pysig`` (numba-cuda folds
keyword arguments with it): the operands by position, then each keyword in the order
the call wrote them, so the lowering recovers their names from the signature alone.
"""

from __future__ import annotations

import functools
import inspect
import zlib

from ... import _groups
from ..._diagnostics import raise_at
from ..._dtypes import normalize_dtype
from ..._errors import (
    CoopError, InvalidArgumentTypeError, NonConstantArgumentError,
    UnknownDtypeError,
)
from ..._payloads import TempStorage, ThreadData, check_alignment, check_items_per_thread, merge_alignas
from ..._payloads import check_payload_bytes
from .. import _planning, _reserve
from .._reserve import RESERVE_KEY
from ...core import spec
from . import _compat as C
from .rewrite import DTYPE_FROM
from .types import GroupType, TempStorageType, ThreadDataType, describe_type, numba_type_of_dtype, result_type

types = C.types

__all__ = ["function_types", "plan_call", "keyword_names", "GROUP_BY_KEY", "RESERVE_KEY",
           "reservation_of"]


def located(fn):
    """Run a typer; re-raise cuda-coop errors at the line of the call being typed."""

    @functools.wraps(fn)
    def wrapper(self, args, kws):
        try:
            return fn(self, args, kws)
        except CoopError as exc:
            loc, function = C.typing_location()
            raise_at(exc, getattr(loc, "filename", None), getattr(loc, "line", None), function)

    return wrapper


def with_keywords(restype, args, kws):
    """``restype(*args, *kws)`` whose pysig lets numba-cuda fold the keywords in that order."""
    sig = C.signature(restype, *args, *kws.values())
    # POSITIONAL_OR_KEYWORD throughout: numba-cuda's fold_arguments mis-binds KEYWORD_ONLY.
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [inspect.Parameter(f"{_OPERAND}{i}", kind) for i in range(len(args))]
    params += [inspect.Parameter(name, kind) for name in kws]
    sig = sig.replace(pysig=inspect.Signature(params))
    return sig


def keyword_names(sig) -> tuple:
    """The keyword names of a call typed by :func:`with_keywords`, in argument order."""
    pysig = getattr(sig, "pysig", None)
    if pysig is None:
        return ()
    return tuple(name for name in pysig.parameters if not name.startswith(_OPERAND))


_OPERAND = "_coop_operand"


class CoopTemplate(C.AbstractTemplate):
    # Literal argument types first: items_per_thread and selectors are only meaningful as literals.
    prefer_literal = True


# Compiler-neutral (backends/_planning.py); this binds numba-cuda's descriptors.
plan_call = functools.partial(_planning.plan_call, describe_type=describe_type)


def _op_template(op_spec):
    class CoopOpTemplate(CoopTemplate):
        key = op_spec.stub

        @located
        def generic(self, args, kws):
            plan = plan_call(op_spec, args, kws)
            return with_keywords(result_type(plan.result), args, kws)

    CoopOpTemplate.__name__ = f"Coop_{op_spec.name}_Template"
    return CoopOpTemplate


# ----------------------------------------------------------------------------------------
# Groups
# ----------------------------------------------------------------------------------------

def _group_template(factory, kind, width=0):
    class Template(CoopTemplate):
        key = factory

        @located
        def generic(self, args, kws):
            if args or kws:
                raise InvalidArgumentTypeError(
                    f"coop.this_{kind}(): takes no arguments; the launch configuration defines the group")
            return C.signature(GroupType(kind, width))

    Template.__name__ = f"This{kind.title()}Template"
    return Template


GROUP_BY_KEY = "cuda.coop.Group.group_by"


def _literal_flag(call, kws):
    exhaustive = kws.get("exhaustive")
    if exhaustive is None or isinstance(exhaustive, types.Omitted):
        return None
    if not isinstance(exhaustive, types.BooleanLiteral):
        raise NonConstantArgumentError(
            f"{call}: exhaustive={exhaustive} is not known at compile time; pass exhaustive=True or "
            "exhaustive=False (a literal or a module constant)")
    return bool(exhaustive.literal_value)


class GroupByTemplate(CoopTemplate):
    """``this_warp().group_by(width)`` (logical warps) and ``this_block().group_by(n)`` (groups
    of n warps): compile-time descriptors, as with numba-cuda-mlir."""

    key = GROUP_BY_KEY

    def generic(self, args, kws):
        try:
            return self._generic(args, kws)
        except CoopError as exc:
            loc, function = C.typing_location()
            raise_at(exc, getattr(loc, "filename", None), getattr(loc, "line", None), function)

    def _generic(self, args, kws):
        this = self.this
        kind = "block" if this.kind == "block" else "warp"
        call = f"coop.this_{kind}().group_by()"
        if this.kind not in ("block", "warp") or (this.kind == "warp" and this.width != 32):
            raise _groups.InvalidGroupWidthError(
                f"{call}: {this.descriptor().label} has no group_by(); call it on coop.this_warp() or "
                "coop.this_block()")
        if set(kws) - {"exhaustive"} or len(args) != 1:
            raise InvalidArgumentTypeError(
                f"{call}: takes one int and optionally exhaustive=; call group_by(n) or "
                "group_by(n, exhaustive=...)")
        exhaustive = _literal_flag(call, kws)
        (n,) = args
        if not isinstance(n, types.IntegerLiteral) or isinstance(n, types.BooleanLiteral):
            raise NonConstantArgumentError(
                f"{call}: {n} is not known at compile time; pass a literal, a module constant or a "
                "closure value")
        if this.kind == "block":
            group = GroupType("warps", _groups.check_warps_per_group(int(n.literal_value)),
                              True if exhaustive is None else exhaustive)
        else:
            width = _groups.check_warp_width(int(n.literal_value),
                                             exhaustive=True if exhaustive is None else exhaustive)
            group = GroupType("warp", width)
        return with_keywords(group, args, kws)


class GroupAttributes(C.AttributeTemplate):
    key = GroupType

    def resolve_group_by(self, ty):
        template = type("GroupByBound", (GroupByTemplate,), {"this": ty})
        return types.BoundFunction(template, ty)



# ----------------------------------------------------------------------------------------
# ThreadData and TempStorage
# ----------------------------------------------------------------------------------------

def _literal_int_or_none(call, label, ty, check):
    if ty is None or isinstance(ty, (types.NoneType, types.Omitted)):
        return None
    if isinstance(ty, types.IntegerLiteral) and not isinstance(ty, types.BooleanLiteral):
        return check(int(ty.literal_value))
    raise NonConstantArgumentError(
        f"{call}: {label}={ty} is not known at compile time; pass an int (a literal, a module constant or "
        "a closure value) or None")


def _dtype_of_type(call, ty):
    d = describe_type(ty)
    if isinstance(d, spec.DtypeArg):
        return d.dtype
    if isinstance(d, spec.StringArg) and d.value is not None:
        return normalize_dtype(d.value, label="dtype")
    if isinstance(d, spec.NoneArg) or d is spec.OMITTED:
        return None
    if isinstance(ty, (types.NumberClass, types.DType)):  # a dtype cuda.coop does not move (bool, ...)
        return normalize_dtype(str(getattr(ty, "instance_type", ty)), label="dtype")
    raise InvalidArgumentTypeError(f"{call}: dtype={spec.describe(d)} is not a dtype; pass e.g. np.float32")


def _inferred_dtype(call, source):
    """The dtype of a ThreadData without ``dtype=`` from the type of its hidden source (an
    array, the first value written into it, or the NumPy type an output keyword implies)."""
    if isinstance(source, types.Array):
        dtype = describe_type(source).dtype
        if dtype is None:
            raise UnknownDtypeError(
                f"{call}: the element type {source.dtype} of the array loaded into this payload is not "
                "supported; pass dtype= explicitly")
        return dtype
    if isinstance(source, types.NumberClass):  # the dtype an output keyword implies
        return _dtype_of_type(call, source)
    if isinstance(source, types.Literal):
        raise UnknownDtypeError(
            f"{call}: dtype is omitted and the first value written into this payload is the literal "
            f"{source.literal_value!r}, whose width is ambiguous; write a typed value (e.g. np.int32(1)) "
            "or pass dtype=, e.g. coop.ThreadData(4, dtype=np.int32)")
    if isinstance(source, (types.Integer, types.Float)):  # the first value written into it
        dtype = describe_type(types.unliteral(source)).dtype
        if dtype is None:
            raise UnknownDtypeError(
                f"{call}: the first value written into this payload has type {source}, which is not a "
                "supported payload dtype; pass dtype= explicitly")
        return dtype
    raise UnknownDtypeError(
        f"{call}: dtype is omitted and cannot be inferred (no coop.load() source or coop.store() "
        "destination that is a kernel argument, no value written into it and no aggregate_output= use); "
        "pass dtype=, e.g. coop.ThreadData(4, dtype=np.float32)")


def _item_count_is_kernel_argument(args, kws) -> bool:
    """Whether the items_per_thread being typed is a kernel argument (then it can be made literal)."""
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "propagate" and "constraint" in frame.f_locals:
            constraint, typeinfer = frame.f_locals["constraint"], frame.f_locals.get("typeinfer")
            var = (constraint.args[0] if getattr(constraint, "args", None)
                   else dict(getattr(constraint, "kws", ()) or ()).get("items_per_thread"))
            try:
                return isinstance(typeinfer.func_ir.get_definition(var), C.ir.Arg)
            except Exception:
                return False
        frame = frame.f_back
    return False


def _fold_items_per_thread(args, kws):
    kws = dict(kws)
    return (args[0],) if args else (kws["items_per_thread"],)


class ThreadDataTemplate(CoopTemplate):
    key = ThreadData

    @located
    def generic(self, args, kws):
        call = "coop.ThreadData()"
        source = kws.get(DTYPE_FROM)  # the rewrite's hidden dtype source (see rewrite.py)
        user_kws = {k: v for k, v in kws.items() if k != DTYPE_FROM}
        try:
            bound = inspect.signature(ThreadData.__init__).bind(None, *args, **user_kws).arguments
        except TypeError as exc:
            raise InvalidArgumentTypeError(
                f"{call}: {exc}; call it as coop.ThreadData(items_per_thread, dtype=None, alignment=None)"
            ) from None
        ipt = bound.get("items_per_thread")
        if isinstance(ipt, types.IntegerLiteral) and not isinstance(ipt, types.BooleanLiteral):
            items = check_items_per_thread(int(ipt.literal_value))
        elif isinstance(ipt, types.Integer):
            if _item_count_is_kernel_argument(args, kws):
                raise C.ForceLiteralArg({0}, fold_arguments=_fold_items_per_thread)
            raise NonConstantArgumentError(
                f"{call}: items_per_thread is computed in the kernel but must be known at compile time; use "
                "a literal, a module constant, a closure value or a kernel argument (the kernel is then "
                "specialized per value)")
        else:
            raise InvalidArgumentTypeError(
                f"{call}: items_per_thread={ipt} is not an int; pass a positive int known at compile time")
        dtype = _dtype_of_type(call, bound.get("dtype"))
        if dtype is None:
            dtype = _inferred_dtype(call, source)
        alignment = _literal_int_or_none(call, "alignment", bound.get("alignment"),
                                         lambda a: check_alignment(a, call=call))
        alignas = _literal_int_or_none(call, "alignas", bound.get("alignas"),
                                       lambda a: check_alignment(a, call=call, label="alignas"))
        alignment = merge_alignas(alignment, alignas)
        check_payload_bytes(items, dtype, call=call)
        return with_keywords(ThreadDataType(numba_type_of_dtype(dtype), items, alignment), args, kws)


def _site_here() -> int:
    """An id for the ``coop.TempStorage()`` being typed: its position in the source (the
    numba-cuda-mlir backend numbers sites in a rewrite; this one reads the typing location)."""
    loc, function = C.typing_location()
    key = (getattr(loc, "filename", None), getattr(loc, "line", None), getattr(loc, "col", None), function)
    return zlib.crc32(repr(key).encode())


class TempStorageTemplate(CoopTemplate):
    key = TempStorage

    @located
    def generic(self, args, kws):
        call = "coop.TempStorage()"
        try:
            bound = inspect.signature(TempStorage.__init__).bind(None, *args, **kws).arguments
        except TypeError as exc:
            params = list(inspect.signature(TempStorage.__init__).parameters.values())[1:]
            raise InvalidArgumentTypeError(
                f"{call}: {exc}; call it as coop.TempStorage({', '.join(map(str, params))})") from None
        size = _literal_int_or_none(call, "size_in_bytes", bound.get("size_in_bytes"),
                                    lambda v: TempStorage(v).size_in_bytes)
        alignment = _literal_int_or_none(call, "alignment", bound.get("alignment"),
                                         lambda a: check_alignment(a, call=call))
        auto_sync = bound.get("auto_sync")
        if auto_sync is None or isinstance(auto_sync, (types.NoneType, types.Omitted)):
            auto_sync = None
        elif isinstance(auto_sync, types.BooleanLiteral):
            auto_sync = bool(auto_sync.literal_value)
        else:
            raise NonConstantArgumentError(
                f"{call}: auto_sync={auto_sync} is not known at compile time; pass True, False or None")
        sharing = bound.get("sharing")
        if sharing is None or isinstance(sharing, types.Omitted):
            sharing = "shared"
        elif isinstance(sharing, types.StringLiteral):
            sharing = TempStorage(sharing=sharing.literal_value).sharing
        else:
            raise NonConstantArgumentError(
                f"{call}: sharing={sharing} is not known at compile time; pass 'shared' or 'exclusive'")
        return with_keywords(TempStorageType(_site_here(), size, alignment, auto_sync, sharing), args, kws)


# The validation is compiler-neutral (backends/_reserve.py); this binds numba-cuda's types.
reservation_of = functools.partial(_reserve.reservation_of, types=types, as_dtype=C.as_dtype,
                                   literal_int_or_none=_literal_int_or_none)


class ReserveTemplate(CoopTemplate):
    """``storage.reserve(count, dtype, alignment=None)``: a 1-D C array in shared memory."""

    key = RESERVE_KEY

    @located
    def generic(self, args, kws):
        count, dtype, alignment = reservation_of(self.this, args, kws)
        # The receiver in the signature, as numba's bound_function does: its lowering sees the
        # storage's type (its site, size_in_bytes and sharing).
        return with_keywords(types.Array(numba_type_of_dtype(dtype), 1, "C"), args, kws).replace(recvr=self.this)


class TempStorageAttributes(C.AttributeTemplate):
    key = TempStorageType

    def resolve_reserve(self, ty):
        template = type("ReserveBound", (ReserveTemplate,), {"this": ty})
        return types.BoundFunction(template, ty)


class ThreadDataAttributes(C.AttributeTemplate):
    key = ThreadDataType

    def resolve_items_per_thread(self, ty):
        return types.IntegerLiteral(ty.items)


def op_function_type(op_spec):
    """The Numba function type of one operation's stub (made once, by the backend)."""
    return types.Function(_op_template(op_spec))


def function_types():
    """Map each kernel-callable object but the operations to its Numba function type (an
    operation's is made when a kernel first uses it: op_function_type)."""
    mapping = {}
    mapping[_groups.this_block] = types.Function(_group_template(_groups.this_block, "block"))
    mapping[_groups.this_warp] = types.Function(_group_template(_groups.this_warp, "warp", 32))
    for factory, kind in ((_groups.this_thread, "thread"), (_groups.this_grid, "grid"),
                          (_groups.this_cluster, "cluster")):
        mapping[factory] = types.Function(_group_template(factory, kind))
    mapping[ThreadData] = types.Function(ThreadDataTemplate)
    mapping[TempStorage] = types.Function(TempStorageTemplate)
    return mapping
