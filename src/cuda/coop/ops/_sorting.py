"""Pieces shared by the ordering families: merge sort, radix sort/rank and TopK.

Not a family (no ``SPECS``): C++ snippets for key orderings and payload copies,
and the planning helpers the three families use the same way.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import cxx_type, is_float
from . import _validate as v
from ..core.spec import AbiOperand, PayloadArg, PayloadResult, ScalarResult

__all__ = [
    "key_dtype", "value_dtype", "key_value_operands", "ordering_functor", "copy_in", "copy_out",
    "bit_ordering", "sentinel_bits", "sentinel_decl", "result_like",
]


def key_dtype(call: str, label: str, keys) -> tuple[PayloadArg, np.dtype]:
    """The keys payload and its dtype (it must be known: a loaded or typed ThreadData, or a
    scalar, which sorts as a payload of one item per thread and yields a scalar)."""
    payload = v.require_payload_or_scalar(call, label, keys)
    return payload, v.require_known_dtype(call, label, payload)


def value_dtype(call: str, keys: PayloadArg, values) -> tuple[PayloadArg, np.dtype]:
    """The values payload of a pairs operation: any dtype, the keys' items_per_thread."""
    payload = v.require_payload_or_scalar(call, "values", values)
    dtype = v.require_known_dtype(call, "values", payload)
    v.require_same_items(call, "values", payload, "keys", keys)
    return payload, dtype


def result_like(dtype: np.dtype, payload: PayloadArg):
    """The result of an operation on ``payload``: a scalar for a scalar, else a fresh payload."""
    return ScalarResult(dtype) if payload.scalar else PayloadResult(dtype, payload.items)


def key_value_operands(kdt: np.dtype, vdt: np.dtype | None, keys: PayloadArg | None = None,
                       values: PayloadArg | None = None) -> list:
    """The ABI operands of a keys (``vdt`` None) or pairs operation, in provider order.

    Keys-only calls return one ThreadData (``result``); pairs calls return a tuple
    (``result.0`` keys, ``result.1`` values).  Callers append their controls.  A
    scalar key or value reaches the provider as a one-item array.
    """
    def passing(p):
        return "scalar_in" if p is not None and p.scalar else "payload"

    operands = [AbiOperand("keys", passing(keys), kdt, "in_keys")]
    if vdt is not None:
        operands.append(AbiOperand("values", passing(values), vdt, "in_values"))
    operands.append(AbiOperand("result" if vdt is None else "result.0", "out", kdt, "out_keys"))
    if vdt is not None:
        operands.append(AbiOperand("result.1", "out", vdt, "out_values"))
    return operands


def ordering_functor(name: str, dtype: np.dtype, descending: bool) -> str:
    """A C++ strict weak ordering over keys of ``dtype``.

    Floating-point keys order NaN after every number (as ``np.sort`` does) and
    treat -0.0 and +0.0 as equal; a plain ``a < b`` is not a strict weak
    ordering once NaN appears, and merge sort would then scramble the tile.
    ``descending`` reverses the order (NaN first).
    """
    t = cxx_type(dtype)
    if is_float(dtype):
        less = "a < b || (b != b && a == a)"
        greater = "b < a || (a != a && b == b)"
    else:
        less, greater = "a < b", "b < a"
    body = greater if descending else less
    return (f"struct {name} {{\n"
            f"  __device__ __forceinline__ bool operator()(const {t}& a, const {t}& b) const "
            f"{{ return {body}; }}\n}};")


def copy_in(dst: str, src: str, t: str) -> str:
    """Declare ``t dst[IPT]`` and copy a payload into it (CUB sorts in place; inputs are kept)."""
    return f"{t} {dst}[IPT];\n#pragma unroll\nfor (int i = 0; i < IPT; ++i) {dst}[i] = {src}[i];"


def copy_out(dst: str, src: str) -> str:
    return f"#pragma unroll\nfor (int i = 0; i < IPT; ++i) {dst}[i] = {src}[i];"


def bit_ordering(name: str, dtype: np.dtype) -> str:
    """C++ ``name::Bits`` (the unsigned type of a key) and ``name::to(key)``.

    ``to`` maps a key to unsigned bits whose unsigned order is the key order that
    CUB's radix sort uses: unsigned keys unchanged, signed keys with the sign bit
    flipped, floats with the sign bit flipped when positive and every bit flipped
    when negative, -0.0 mapped to +0.0 (CUB sorts them as equal).  NaNs order by
    their bits: positive NaNs above +inf, negative NaNs below -inf.
    """
    t = cxx_type(dtype)
    size = np.dtype(dtype).itemsize
    bits = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}[size]
    sign = f"(({bits})1 << {size * 8 - 1})"
    if np.dtype(dtype).kind == "u":
        conv = "return b;"
    elif np.dtype(dtype).kind == "i":
        conv = f"return ({bits})(b ^ {sign});"
    else:
        conv = (f"if (b == {sign}) b = 0;  // -0.0 sorts as +0.0\n"
                f"    return (b & {sign}) ? ({bits})~b : ({bits})(b | {sign});")
    return (f"struct {name} {{\n"
            f"  using Bits = {bits};\n"
            f"  static constexpr int BITS = {size * 8};\n"
            f"  static __device__ __forceinline__ Bits to({t} key) {{\n"
            f"    Bits b = reinterpret_cast<const Bits&>(key);\n"
            f"    {conv}\n  }}\n}};")


def sentinel_bits(dtype: np.dtype, largest: bool) -> int:
    """Raw bits of a key that orders last in a radix sort (a descending one if ``largest``).

    Ascending: the largest transformed key (all ones in every bit range): the
    maximum of an integer type, or the positive NaN with every payload bit set.
    Descending: the smallest (all zeros): 0, the minimum of a signed type, or the
    negative NaN with every payload bit set.  A stable sort keeps a valid key
    equal to the sentinel before every sentinel placed after it.
    """
    dt = np.dtype(dtype)
    bits = dt.itemsize * 8
    ones, sign = (1 << bits) - 1, 1 << (bits - 1)
    if dt.kind == "u":
        return 0 if largest else ones
    if dt.kind == "i":
        return sign if largest else ones ^ sign
    return ones if largest else ones ^ sign


def sentinel_decl(name: str, dtype: np.dtype, largest: bool) -> str:
    """C++ that declares ``const K name``: the key of :func:`sentinel_bits` (inside a body)."""
    ubits = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}[
        np.dtype(dtype).itemsize]
    return (f"const {ubits} {name}_bits = {sentinel_bits(dtype, largest):#x}ull;\n"
            f"const K {name} = reinterpret_cast<const K&>({name}_bits);")
