"""``storage.reserve(count, dtype, alignment=None)``: its validation, for either compiler.

Both compilers' type modules name the same classes (``IntegerLiteral``, ``NumberClass``,
``DType``, ...), so one validation serves both; ``_typing.build`` binds one compiler's
``types``, ``as_dtype`` and literal-int reader (``functools.partial``).  Imports no compiler.
"""

from __future__ import annotations

import numpy as np

from .._errors import InvalidArgumentTypeError, MissingArgumentError, NonConstantArgumentError, TempStorageError
from .._payloads import check_alignment, check_reserve_count, check_reserve_dtype

__all__ = ["RESERVE_KEY", "reservation_of"]

RESERVE_KEY = "cuda.coop.TempStorage.reserve"
CALL = "TempStorage.reserve()"
_NO_VALUE = object()


def _literal_value(types, ty):
    return ty.literal_value if isinstance(ty, types.Literal) else _NO_VALUE


def _reserve_dtype(types, as_dtype, ty):
    """The NumPy dtype a ``dtype`` operand of ``reserve`` names (np.int32, types.int32, 'int32')."""
    if isinstance(ty, types.StringLiteral):
        return check_reserve_dtype(ty.literal_value, call=CALL)
    if isinstance(ty, (types.NumberClass, types.DType)):
        inner = ty.instance_type if isinstance(ty, types.NumberClass) else ty.dtype
        try:
            value = np.dtype(as_dtype(inner))
        except Exception:
            value = str(inner)
        if isinstance(inner, types.Boolean):
            value = bool
        return check_reserve_dtype(value, call=CALL)
    if isinstance(ty, types.Function) and getattr(ty, "typing_key", None) in (int, float, bool):
        return check_reserve_dtype(ty.typing_key, call=CALL)
    value = _literal_value(types, ty)
    shown = repr(value) if value is not _NO_VALUE else str(ty)
    if isinstance(ty, (types.Omitted, types.NoneType)) or ty is None:
        raise MissingArgumentError(f"{CALL}: dtype is missing; pass the element type, e.g. reserve(64, np.float32)")
    raise InvalidArgumentTypeError(
        f"{CALL}: dtype={shown} is not a compile-time scalar type; pass an element type such as "
        "np.float32, np.complex64 or 'int32'")


def reservation_of(this, args, kws, *, types, as_dtype, literal_int_or_none, hidden_keywords=()):
    """Validate a ``storage.reserve(count, dtype, alignment=None)`` call.

    ``this`` is the storage's Numba type (its ``auto_sync``), ``args``/``kws`` the call's
    Numba types.  Returns ``(count, numpy dtype, alignment or None)``; raises cuda-coop errors.
    """
    kws = {k: v for k, v in kws.items() if k not in hidden_keywords}
    names = ("count", "dtype", "alignment")
    if len(args) > 3 or set(kws) - set(names) or any(n in kws for n in names[:len(args)]):
        raise InvalidArgumentTypeError(
            f"{CALL}: takes count, dtype and optionally alignment=; call it as "
            "storage.reserve(count, dtype, alignment=16)")
    bound = dict(zip(names, args))
    bound.update(kws)
    if this.auto_sync is True:
        raise TempStorageError(
            f"{CALL}: reserve requires auto_sync=False, but this coop.TempStorage was constructed with "
            "auto_sync=True; the compiler cannot tell when code outside cuda.coop has finished with a "
            "reserved array, so it cannot place the barriers. Construct the storage with auto_sync=False "
            "(or omit auto_sync) and call cuda.syncthreads() yourself, or reserve from a separate "
            "coop.TempStorage")
    count_ty = bound.get("count")
    if count_ty is None:
        raise MissingArgumentError(f"{CALL}: count is missing; pass the element count, e.g. reserve(64, np.float32)")
    if isinstance(count_ty, types.IntegerLiteral) and not isinstance(count_ty, types.BooleanLiteral):
        count = check_reserve_count(int(count_ty.literal_value), call=CALL)
    else:
        value = _literal_value(types, count_ty)
        shown = f"count={value!r}" if value is not _NO_VALUE else f"count is a {count_ty} value and"
        if value is not _NO_VALUE or isinstance(count_ty, (types.Float, types.Boolean)):
            raise InvalidArgumentTypeError(
                f"{CALL}: {shown} is not a compile-time integer; pass a positive int (a literal, a "
                "module constant or a closure value)")
        raise NonConstantArgumentError(
            f"{CALL}: count={count_ty} is not known at compile time; a reservation's size must be a "
            "compile-time integer (a literal, a module constant or a closure value)")
    dtype = _reserve_dtype(types, as_dtype, bound.get("dtype"))
    alignment = literal_int_or_none(CALL, "alignment", bound.get("alignment"),
                                    lambda a: check_alignment(a, call=CALL))
    return count, dtype, alignment
