"""Typing of cuda.coop calls in numba-cuda-mlir kernels.

Operations are typed generically: the call's Numba types become descriptors, the
family's ``plan`` validates them and decides the result, and the template
returns that result's type.  Errors are cuda-coop exceptions raised at the
user's line (they are not NumbaErrors, so numba lets them through unchanged).
"""

from __future__ import annotations

import functools
import inspect

from ... import _groups
from ..._diagnostics import raise_at
from ..._dtypes import normalize_dtype
from ..._errors import (
    CoopError,
    InvalidArgumentTypeError,
    NonConstantArgumentError,
    UnknownDtypeError,
)
from ..._payloads import (
    SHARING_MODES, TempStorage, ThreadData, check_alignment, check_items_per_thread, check_payload_bytes,
    merge_alignas,
)
from .. import _planning, _reserve
from .._reserve import RESERVE_KEY
from ...core import spec
from ._compat import (
    AbstractTemplate, AttributeTemplate, ForceLiteralArg, as_dtype, signature, typing_location, types,
)
from .rewrite import HIDDEN_KEYWORDS, SITES
from .types import GroupType, TempStorageType, ThreadDataType, describe_type, numba_type_of_dtype, result_type

__all__ = ["function_types", "plan_call", "RESERVE_KEY", "reservation_of"]


def _site_of(kws):
    ty = kws.get("_coop_site")
    if isinstance(ty, types.IntegerLiteral):
        return ty.literal_value
    return None


def _raise_located(exc: CoopError, site_id):
    site = SITES.get(site_id)
    if site is None:
        raise exc
    loc = site.loc
    raise_at(exc, getattr(loc, "filename", None), getattr(loc, "line", None), site.function)


def located_method(fn):
    """Run a method typer (no call-site id); re-raise cuda-coop errors at the call's line."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except CoopError as exc:
            loc, function = typing_location()
            raise_at(exc, getattr(loc, "filename", None), getattr(loc, "line", None), function)

    return wrapper


class CoopTemplate(AbstractTemplate):
    # Literal argument types first: items_per_thread, selectors and the hidden
    # call-site id are only meaningful as literals.
    prefer_literal = True


def located(fn):
    """Run a typer; re-raise cuda-coop errors at the call's source line."""

    @functools.wraps(fn)
    def wrapper(self, args, kws):
        site = kws.get("_coop_site")
        if site is not None and not isinstance(site, types.IntegerLiteral):
            # Numba's second, non-literal attempt: the literal attempt already
            # decided (a signature, an error, or a request for a literal argument).
            return None
        try:
            return fn(self, args, kws)
        except CoopError as exc:
            _raise_located(exc, _site_of(kws))

    return wrapper


# ----------------------------------------------------------------------------------------
# Operations (generic over OpSpec)
# ----------------------------------------------------------------------------------------

# Compiler-neutral (backends/_planning.py); this binds numba-cuda-mlir's descriptors.
plan_call = functools.partial(_planning.plan_call, describe_type=describe_type, hidden_keywords=HIDDEN_KEYWORDS)


def _op_template(op_spec):
    class CoopOpTemplate(CoopTemplate):
        key = op_spec.stub

        @located
        def generic(self, args, kws):
            plan = plan_call(op_spec, args, kws)
            return signature(result_type(plan.result), *args, *kws.values())

    CoopOpTemplate.__name__ = f"Coop_{op_spec.name}_Template"
    return CoopOpTemplate


# ----------------------------------------------------------------------------------------
# Groups
# ----------------------------------------------------------------------------------------

class ThisBlockTemplate(CoopTemplate):
    key = _groups.this_block

    @located
    def generic(self, args, kws):
        _no_args("coop.this_block()", args, kws)
        return signature(GroupType("block", 0), *kws.values())


class ThisWarpTemplate(CoopTemplate):
    key = _groups.this_warp

    @located
    def generic(self, args, kws):
        _no_args("coop.this_warp()", args, kws)
        return signature(GroupType("warp", 32), *kws.values())


def _descriptor_template(factory, kind):
    class Template(CoopTemplate):
        key = factory

        @located
        def generic(self, args, kws):
            _no_args(f"coop.this_{kind}()", args, kws)
            return signature(GroupType(kind, 0), *kws.values())

    Template.__name__ = f"This{kind.title()}Template"
    return Template


ThisThreadTemplate = _descriptor_template(_groups.this_thread, "thread")
ThisGridTemplate = _descriptor_template(_groups.this_grid, "grid")
ThisClusterTemplate = _descriptor_template(_groups.this_cluster, "cluster")


def _no_args(call, args, kws):
    extra = [k for k in kws if k not in HIDDEN_KEYWORDS]
    if args or extra:
        raise InvalidArgumentTypeError(f"{call}: takes no arguments; the launch configuration defines the group")


GROUP_BY_KEY = "cuda.coop.WarpGroup.group_by"


class GroupByTemplate(CoopTemplate):
    key = GROUP_BY_KEY

    @located_method
    def generic(self, args, kws):
        this = self.this
        if this.kind == "block":
            return self._warps_within_block(args, kws)
        call = "coop.this_warp().group_by()"
        if this.kind != "warp" or this.width != 32:
            raise _groups.InvalidGroupWidthError(
                f"{call}: {this.descriptor().label} has no group_by(); call it on coop.this_warp() "
                "or coop.this_block()"
            )
        exhaustive = kws.get("exhaustive")
        if set(kws) - {"exhaustive"} or len(args) != 1:
            raise InvalidArgumentTypeError(
                f"{call}: takes the logical warp width and optionally exhaustive=; call "
                "group_by(width) or group_by(width, exhaustive=True)")
        if exhaustive is not None and not isinstance(exhaustive, types.BooleanLiteral):
            raise NonConstantArgumentError(
                f"{call}: exhaustive={spec.describe(describe_type(exhaustive))} is not known at compile "
                "time; pass exhaustive=True or exhaustive=False (a literal or a module constant)")
        (width,) = args
        if not isinstance(width, types.IntegerLiteral):
            raise NonConstantArgumentError(
                f"{call}: width={spec.describe(describe_type(width))} is not known at compile time; pass "
                "1, 2, 4, 8, 16 or 32 (or 17..31 with exhaustive=False) as a literal, a module constant "
                "or a closure value"
            )
        w = _groups.check_warp_width(int(width.literal_value),
                                     exhaustive=True if exhaustive is None else exhaustive.literal_value)
        return signature(GroupType("warp", w), *args, *kws.values())

    def _warps_within_block(self, args, kws):
        call = "coop.this_block().group_by()"
        if set(kws) - {"exhaustive"} or len(args) != 1:
            raise InvalidArgumentTypeError(
                f"{call}: takes the number of warps per group and optionally exhaustive=; call "
                "group_by(n) or group_by(n, exhaustive=False)")
        exhaustive = kws.get("exhaustive")
        if exhaustive is not None and not isinstance(exhaustive, types.BooleanLiteral):
            raise NonConstantArgumentError(
                f"{call}: exhaustive={spec.describe(describe_type(exhaustive))} is not known at compile "
                "time; pass exhaustive=True or exhaustive=False (a literal or a module constant)")
        (warps,) = args
        if not isinstance(warps, types.IntegerLiteral):
            raise NonConstantArgumentError(
                f"{call}: warps_per_group={spec.describe(describe_type(warps))} is not known at compile "
                "time; pass a literal, a module constant or a closure value")
        n = _groups.check_warps_per_group(int(warps.literal_value))
        full = True if exhaustive is None else bool(exhaustive.literal_value)
        return signature(GroupType("warps", n, full), *args, *kws.values())


class GroupAttributes(AttributeTemplate):
    key = GroupType

    def resolve_group_by(self, ty):
        template = type("GroupByBound", (GroupByTemplate,), {"this": ty})
        return types.BoundFunction(template, ty)


# ----------------------------------------------------------------------------------------
# ThreadData and TempStorage
# ----------------------------------------------------------------------------------------

def _bind_stub(call, pyfunc, args, kws):
    kws = {k: v for k, v in kws.items() if k not in HIDDEN_KEYWORDS}
    try:
        return inspect.signature(pyfunc).bind(None, *args, **kws).arguments
    except TypeError as exc:
        params = list(inspect.signature(pyfunc).parameters.values())[1:]
        raise InvalidArgumentTypeError(
            f"{call}: {exc}; call it as {call[:-2]}({', '.join(map(str, params))})") from None


def _literal_value(ty):
    """The constant a literal type holds (``4096.0``, ``'yes'``), else ``_NO_VALUE``."""
    if isinstance(ty, types.Literal):
        return ty.literal_value
    return _NO_VALUE


_NO_VALUE = object()


def _wrong_type_constant(call, label, ty, expected):
    """A constant of the wrong type is a type error that shows it; otherwise a non-constant."""
    value = _literal_value(ty)
    if value is not _NO_VALUE:
        return InvalidArgumentTypeError(f"{call}: {label}={value!r} is not {expected}; pass {expected}")
    if isinstance(ty, (types.Float, types.UnicodeType, types.Boolean)):
        return InvalidArgumentTypeError(
            f"{call}: {label} is a {ty} value, but it must be {expected}; pass {expected}")
    return NonConstantArgumentError(
        f"{call}: {label}={ty} is not known at compile time; pass {expected} (a literal, a module "
        "constant or a closure value)")


def _literal_int_or_none(call, label, ty, check):
    if ty is None or isinstance(ty, (types.NoneType, types.Omitted)):
        return None
    if isinstance(ty, types.IntegerLiteral) and not isinstance(ty, types.BooleanLiteral):
        return check(int(ty.literal_value))
    raise _wrong_type_constant(call, label, ty, "an int or None")


def _dtype_of_type(call, label, ty):
    d = describe_type(ty)
    if isinstance(d, spec.DtypeArg):
        return d.dtype
    if isinstance(d, spec.StringArg) and d.value is not None:
        return normalize_dtype(d.value, label=label)
    if isinstance(d, (spec.NoneArg,)) or d is spec.OMITTED:
        return None
    if isinstance(ty, types.NumberClass) or isinstance(ty, types.DType):
        return normalize_dtype(str(getattr(ty, "instance_type", ty)), label=label)
    raise InvalidArgumentTypeError(
        f"{call}: {label}={spec.describe(d)} is not a dtype; pass e.g. np.int32 or 'float32'"
    )


def _fold_items_per_thread(args, kws):
    """Numba's argument folder for the literal request: index 0 is items_per_thread."""
    kws = dict(kws)
    return (args[0],) if args else (kws["items_per_thread"],)


class ThreadDataTemplate(CoopTemplate):
    key = ThreadData

    @located
    def generic(self, args, kws):
        call = "coop.ThreadData()"
        bound = _bind_stub(call, ThreadData.__init__, args, kws)
        ipt = bound.get("items_per_thread")
        if isinstance(ipt, types.IntegerLiteral):
            items = check_items_per_thread(int(ipt.literal_value))
        elif isinstance(ipt, types.Integer):
            site = SITES.get(_site_of(kws))
            if site is not None and site.items_per_thread_is_arg:
                # A kernel argument: ask the dispatcher to specialize on its value.
                raise ForceLiteralArg({0}, fold_arguments=_fold_items_per_thread)
            raise NonConstantArgumentError(
                f"{call}: items_per_thread is computed in the kernel but must be known at compile "
                "time; use a literal, a module constant, a closure value or a kernel argument "
                "(the kernel is then specialized per value)"
            )
        else:
            raise InvalidArgumentTypeError(
                f"{call}: items_per_thread={ipt} is not an int; pass a positive int known at compile time"
            )
        dtype = _dtype_of_type(call, "dtype", bound.get("dtype"))
        if dtype is None:
            source = kws.get("_dtype_from")
            if isinstance(source, types.Array):
                d = describe_type(source)
                if d.dtype is None:
                    raise UnknownDtypeError(
                        f"{call}: the element type {source.dtype} of the array loaded into this "
                        "payload is not supported; pass dtype= explicitly"
                    )
                dtype = d.dtype
            elif isinstance(source, types.NumberClass):  # the dtype an output keyword implies
                dtype = _dtype_of_type(call, "dtype", source)
            elif isinstance(source, types.Literal):
                raise UnknownDtypeError(
                    f"{call}: dtype is omitted and the first value written into this payload is the "
                    f"literal {source.literal_value!r}, whose width is ambiguous; write a typed value "
                    "(e.g. np.int32(1)) or pass dtype=, e.g. coop.ThreadData(4, dtype=np.int32)"
                )
            elif isinstance(source, (types.Integer, types.Float)):  # the first value written into it
                dtype = describe_type(types.unliteral(source)).dtype
                if dtype is None:
                    raise UnknownDtypeError(
                        f"{call}: the first value written into this payload has type {source}, which "
                        "is not a supported payload dtype; pass dtype= explicitly"
                    )
            else:
                raise UnknownDtypeError(
                    f"{call}: dtype is omitted and cannot be inferred (no coop.load() source or "
                    "coop.store() destination that is a kernel argument, no value written into it and "
                    "no aggregate_output= use); pass "
                    "dtype=, e.g. coop.ThreadData(4, dtype=np.float32)"
                )
        alignment = _literal_int_or_none(call, "alignment", bound.get("alignment"),
                                         lambda a: check_alignment(a, call=call))
        alignas = _literal_int_or_none(call, "alignas", bound.get("alignas"),
                                       lambda a: check_alignment(a, call=call, label="alignas"))
        alignment = merge_alignas(alignment, alignas)
        check_payload_bytes(items, dtype, call=call)
        return signature(ThreadDataType(numba_type_of_dtype(dtype), items, alignment), *args, *kws.values())


class TempStorageTemplate(CoopTemplate):
    key = TempStorage

    @located
    def generic(self, args, kws):
        call = "coop.TempStorage()"
        site = _site_of(kws)
        bound = _bind_stub(call, TempStorage.__init__, args, kws)
        size = _literal_int_or_none(call, "size_in_bytes", bound.get("size_in_bytes"),
                                    lambda s: TempStorage(s).size_in_bytes)
        alignment = _literal_int_or_none(call, "alignment", bound.get("alignment"),
                                         lambda a: check_alignment(a, call=call))
        auto_sync = bound.get("auto_sync")
        if auto_sync is None or isinstance(auto_sync, (types.NoneType, types.Omitted)):
            auto_sync = None
        elif isinstance(auto_sync, types.BooleanLiteral):
            auto_sync = bool(auto_sync.literal_value)
        else:
            raise _wrong_type_constant(call, "auto_sync", auto_sync, "True, False or None")
        sharing = bound.get("sharing")
        if sharing is None or isinstance(sharing, types.Omitted):
            sharing = "shared"
        elif isinstance(sharing, types.StringLiteral):
            sharing = TempStorage(sharing=sharing.literal_value).sharing
        else:
            raise _wrong_type_constant(call, "sharing", sharing, " or ".join(map(repr, SHARING_MODES)))
        return signature(TempStorageType(site, size, alignment, auto_sync, sharing), *args, *kws.values())


class ThreadDataAttributes(AttributeTemplate):
    key = ThreadDataType

    def resolve_items_per_thread(self, ty):
        return types.IntegerLiteral(ty.items)


# The validation is compiler-neutral (backends/_reserve.py); this binds numba-cuda-mlir's types.
reservation_of = functools.partial(_reserve.reservation_of, types=types, as_dtype=as_dtype,
                                   literal_int_or_none=_literal_int_or_none,
                                   hidden_keywords=HIDDEN_KEYWORDS)


class ReserveTemplate(CoopTemplate):
    key = RESERVE_KEY

    @located_method
    def generic(self, args, kws):
        count, dtype, alignment = reservation_of(self.this, args, kws)
        return signature(types.Array(numba_type_of_dtype(dtype), 1, "C"), *args, *kws.values())


class TempStorageAttributes(AttributeTemplate):
    key = TempStorageType

    def resolve_reserve(self, ty):
        template = type("ReserveBound", (ReserveTemplate,), {"this": ty})
        return types.BoundFunction(template, ty)


def op_function_type(op_spec):
    """The Numba function type of one operation's stub (made once, by the backend)."""
    return types.Function(_op_template(op_spec))


def function_types():
    """Map each kernel-callable object but the operations to its Numba function type (an
    operation's is made when a kernel first uses it: op_function_type)."""
    mapping = {}
    mapping[_groups.this_block] = types.Function(ThisBlockTemplate)
    mapping[_groups.this_warp] = types.Function(ThisWarpTemplate)
    mapping[_groups.this_thread] = types.Function(ThisThreadTemplate)
    mapping[_groups.this_grid] = types.Function(ThisGridTemplate)
    mapping[_groups.this_cluster] = types.Function(ThisClusterTemplate)
    mapping[ThreadData] = types.Function(ThreadDataTemplate)
    mapping[TempStorage] = types.Function(TempStorageTemplate)
    return mapping
