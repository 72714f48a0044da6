"""Element types accepted in cooperative payloads and memory operands."""

from __future__ import annotations

import numpy as np

from ._errors import UnsupportedDtypeError

__all__ = ["SUPPORTED_DTYPES", "normalize_dtype", "cxx_type", "is_integer", "is_float", "dtype_names"]

# The common contract: fixed-width integers and IEEE float32/float64.  bool,
# float16/bfloat16, complex and structured types are rejected before NVRTC.
SUPPORTED_DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(n)
    for n in (
        "int8", "int16", "int32", "int64",
        "uint8", "uint16", "uint32", "uint64",
        "float32", "float64",
    )
)

_CXX = {
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "unsigned long long",
    "float32": "float",
    "float64": "double",
}


def dtype_names() -> str:
    return ", ".join(d.name for d in SUPPORTED_DTYPES)


def normalize_dtype(value, *, label: str) -> np.dtype:
    """Return the NumPy dtype for ``value`` or raise UnsupportedDtypeError.

    Accepts NumPy dtypes and scalar types, dtype names, and the builtins ``int``
    and ``float``, which mean 32-bit (the anchor's convention for payloads).
    """
    if value is int:
        return np.dtype("int32")
    if value is float:
        return np.dtype("float32")
    if value is bool:
        raise UnsupportedDtypeError(
            f"{label}=bool is not supported; use {dtype_names()} (store flags as int8 or int32)"
        )
    try:
        dt = np.dtype(value)
    except TypeError:
        # A compiler's scalar type (numba's types.int64) names its NumPy dtype.
        name = str(value)
        if name in {d.name for d in SUPPORTED_DTYPES}:
            return np.dtype(name)
        raise UnsupportedDtypeError(
            f"{label}={value!r} is not a dtype; use one of {dtype_names()}"
        ) from None
    if dt not in SUPPORTED_DTYPES:
        raise UnsupportedDtypeError(
            f"{label}={dt.name} is not supported; use one of {dtype_names()}"
        )
    return dt


def cxx_type(dt: np.dtype) -> str:
    return _CXX[np.dtype(dt).name]


def is_integer(dt: np.dtype) -> bool:
    return np.dtype(dt).kind in "iu"


def is_float(dt: np.dtype) -> bool:
    return np.dtype(dt).kind == "f"
