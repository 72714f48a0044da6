"""Element types accepted in cooperative payloads and memory operands."""

from __future__ import annotations

import numpy as np

from ._errors import UnsupportedDtypeError

__all__ = ["SUPPORTED_DTYPES", "BFLOAT16", "normalize_dtype", "cxx_type", "is_integer", "is_float", "is_half",
           "dtype_names"]


def _bfloat16():
    """NumPy's bfloat16 is ml_dtypes' (what numba-cuda-mlir types as ``__nv_bfloat16``);
    None without ml_dtypes, an optional dependency."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


BFLOAT16: np.dtype | None = _bfloat16()

# The common contract: fixed-width integers and IEEE float16/32/64, and bfloat16 where
# ml_dtypes is installed.  bool, complex and structured types are rejected before NVRTC.
SUPPORTED_DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(n)
    for n in (
        "int8", "int16", "int32", "int64",
        "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64",
    )
) + ((BFLOAT16,) if BFLOAT16 is not None else ())

_CXX = {
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "unsigned long long",
    "float16": "__half",
    "bfloat16": "__nv_bfloat16",
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
    if isinstance(value, str) and value.strip().lower() == "bfloat16" and BFLOAT16 is None:
        raise UnsupportedDtypeError(
            f"{label}='bfloat16' needs the ml_dtypes package (NumPy's bfloat16): pip install ml_dtypes"
        )
    if isinstance(value, str) and value.strip().lower() == "bfloat16":
        return BFLOAT16
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
    dt = np.dtype(dt)
    return dt.kind == "f" or (BFLOAT16 is not None and dt == BFLOAT16)


def is_half(dt: np.dtype) -> bool:
    """float16 or bfloat16: CUDA's __half / __nv_bfloat16, C++ classes rather than
    built-in types, so they never cross the extern "C" boundary by value."""
    return is_float(dt) and np.dtype(dt).itemsize == 2
