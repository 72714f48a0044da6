"""Element types accepted in cooperative payloads and memory operands."""

from __future__ import annotations

import sys

import numpy as np

from ._errors import UnsupportedDtypeError

__all__ = ["SUPPORTED_DTYPES", "COMPLEX_DTYPES", "bfloat16_dtype", "is_bfloat16", "is_supported", "is_complex",
           "is_movable", "normalize_dtype", "cxx_type", "dtype_fields", "is_integer", "is_float", "is_half", "dtype_names",
           "COMPLEX_CXX_DEFINITIONS"]


# The common contract: fixed-width integers and IEEE float16/32/64, plus bfloat16 (NumPy's
# bfloat16 is ml_dtypes'; numba-cuda-mlir types it as ``__nv_bfloat16``).  bool, complex
# and structured types are rejected before NVRTC, and complex64/complex128 are accepted
# by the data-movement families only (COMPLEX_DTYPES below).  bfloat16 is not in this tuple: importing
# ml_dtypes costs most of a second, so it is never imported to check a dtype (a bfloat16
# dtype object can only exist once ml_dtypes is loaded); use is_supported().
SUPPORTED_DTYPES: tuple[np.dtype, ...] = tuple(
    np.dtype(n)
    for n in (
        "int8", "int16", "int32", "int64",
        "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64",
    )
)


# complex64/complex128: payloads that are moved, never combined or ordered (load/store,
# exchange, shuffle, and neighbours with a device-function operator).  ThreadData and
# array dtypes accept them; is_supported() does not, so every arithmetic family refuses
# them through ops._validate with a message naming the call and the way out.
COMPLEX_DTYPES: tuple[np.dtype, ...] = (np.dtype("complex64"), np.dtype("complex128"))


def bfloat16_dtype(*, load: bool = True) -> np.dtype | None:
    """NumPy's bfloat16 dtype; None without ml_dtypes (or, with ``load=False``, when
    ml_dtypes is not imported yet)."""
    module = sys.modules.get("ml_dtypes")
    if module is None and load:
        try:
            import ml_dtypes as module
        except ImportError:
            return None
    return None if module is None else np.dtype(module.bfloat16)


def is_bfloat16(dt) -> bool:
    bf16 = bfloat16_dtype(load=False)
    return bf16 is not None and np.dtype(dt) == bf16


def is_supported(dt) -> bool:
    """An element type every family accepts (the arithmetic contract; complex is not)."""
    return dt is not None and (np.dtype(dt) in SUPPORTED_DTYPES or is_bfloat16(dt))


def is_complex(dt) -> bool:
    return dt is not None and np.dtype(dt) in COMPLEX_DTYPES


def is_movable(dt) -> bool:
    """An element type the data-movement families accept: is_supported() or complex."""
    return is_supported(dt) or is_complex(dt)


BFLOAT16_CXX_NAME = "__nv_bfloat16"  # also what the translation units are searched for (core/build.py)

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
    "bfloat16": BFLOAT16_CXX_NAME,
    "float32": "float",
    "float64": "double",
    "complex64": "cuda_coop_complex64",
    "complex128": "cuda_coop_complex128",
}

# The C++ side of numba's complex numbers: two floats (doubles) with the alignment of one,
# the layout of numba's complex64/complex128 ({float, float} / {double, double}).  Not
# cuda::std::complex (alignas(2 * sizeof(T))) nor float2/double2 (align 8/16): a payload or
# array the compiler aligns to the component only would then be misaligned for the
# vector accesses those types allow.  Defined in the in-memory compat header
# (core/cpp.py), so every translation unit has it once.  Nothing here does arithmetic.
COMPLEX_CXX_DEFINITIONS = """\
struct alignas(4) cuda_coop_complex64 { float re, im; };
struct alignas(8) cuda_coop_complex128 { double re, im; };
static_assert(sizeof(cuda_coop_complex64) == 8 && alignof(cuda_coop_complex64) == 4, "numba complex64");
static_assert(sizeof(cuda_coop_complex128) == 16 && alignof(cuda_coop_complex128) == 8, "numba complex128");
"""


def dtype_names() -> str:
    """For messages (rare): lists bfloat16 where ml_dtypes is installed."""
    names = [d.name for d in SUPPORTED_DTYPES]
    return ", ".join(names + (["bfloat16"] if bfloat16_dtype() is not None else []))


def normalize_dtype(value, *, label: str) -> np.dtype:
    """Return the NumPy dtype for ``value`` or raise UnsupportedDtypeError.

    Accepts NumPy dtypes and scalar types, dtype names, and the builtins ``int``
    and ``float``, which mean 32-bit (the anchor's convention for payloads).
    """
    if value is int:
        return np.dtype("int32")
    if value is float:
        return np.dtype("float32")
    if isinstance(value, str) and value.strip().lower() == "bfloat16":
        bf16 = bfloat16_dtype()
        if bf16 is None:
            raise UnsupportedDtypeError(
                f"{label}='bfloat16' needs the ml_dtypes package (NumPy's bfloat16): pip install ml_dtypes"
            )
        return bf16
    if value is bool:
        raise UnsupportedDtypeError(
            f"{label}=bool is not supported; use {dtype_names()} (store flags as int8 or int32)"
        )
    try:
        dt = np.dtype(value)
    except TypeError:
        # A compiler's scalar type (numba's types.int64) names its NumPy dtype.
        name = str(value)
        if name in {d.name for d in SUPPORTED_DTYPES + COMPLEX_DTYPES}:
            return np.dtype(name)
        raise UnsupportedDtypeError(
            f"{label}={value!r} is not a dtype; use one of {dtype_names()}"
        ) from None
    if not is_movable(dt):
        raise UnsupportedDtypeError(
            f"{label}={dt.name} is not supported; use one of {dtype_names()} (or complex64/complex128 "
            "for load/store, exchange, shuffle and neighbours)"
        )
    return dt


def cxx_type(dt: np.dtype) -> str:
    return _CXX[np.dtype(dt).name]


def is_integer(dt: np.dtype) -> bool:
    return np.dtype(dt).kind in "iu"


def is_float(dt: np.dtype) -> bool:
    dt = np.dtype(dt)
    return dt.kind == "f" or is_bfloat16(dt)


def is_half(dt: np.dtype) -> bool:
    """float16 or bfloat16: CUDA's __half / __nv_bfloat16, C++ classes rather than
    built-in types, so they never cross the extern "C" boundary by value."""
    return is_float(dt) and np.dtype(dt).itemsize == 2


def dtype_fields(record, *names: str) -> None:
    """Make the named fields of a frozen params record NumPy dtypes (None stays None), in its
    ``__post_init__``: the family's generator reads them as dtypes and renders their C++
    names with :func:`cxx_type`, never re-parsing a name."""
    for name in names:
        value = getattr(record, name)
        if value is not None and not isinstance(value, np.dtype):
            object.__setattr__(record, name, np.dtype(value))
