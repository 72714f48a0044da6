"""Validators shared by the operation families.

Each takes the call's name (``"coop.load()"``) and the argument's label, so the
message can name the call, the argument, its value, what is allowed and the fix.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import dtype_names, is_bfloat16, is_complex, is_half, is_integer, is_movable, is_supported
from .._errors import (
    ConflictingArgumentsError,
    DtypeMismatchError,
    ExtentMismatchError,
    InvalidAlgorithmError,
    InvalidArgumentTypeError,
    InvalidArgumentValueError,
    InvalidGroupError,
    InvalidGroupWidthError,
    InvalidOperatorError,
    MissingArgumentError,
    NonConstantArgumentError,
    NotADeviceFunctionError,
    TempStorageError,
    UnknownDtypeError,
    UnsupportedAlgorithmForGroupError,
    UnsupportedBlockShapeError,
    UnsupportedDtypeError,
)
from ..core.spec import (
    OMITTED,
    AlgorithmSpec,
    ArrayArg,
    DeviceFunctionArg,
    DtypeArg,
    GroupArg,
    NoneArg,
    OperatorArg,
    PayloadArg,
    ScalarArg,
    StringArg,
    TempStorageArg,
    UnsupportedArg,
    describe,
)

__all__ = [
    "is_given", "require_group", "choose", "choose_algorithm", "require_array", "require_payload",
    "resolve_payload_dtype", "require_payload_or_scalar", "optional_int_operand", "optional_scalar_of_dtype", "require_literal_bool",
    "optional_temp_storage", "require_given_together", "require_literal_int", "optional_literal_int",
    "require_numeric_operand", "require_device_function", "choose_operator", "require_launch_block",
    "optional_dtype_choice",
]

# CUDA's limits on a thread block (every GPU since compute capability 2.0).
MAX_BLOCK_THREADS = 1024
MAX_BLOCK_EXTENTS = (1024, 1024, 64)


def is_given(arg) -> bool:
    return arg is not OMITTED and not isinstance(arg, NoneArg)


def _choices(names) -> str:
    names = [repr(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def require_group(call: str, group, kinds=("block", "warp"), *, partial_warps: bool = False) -> GroupArg:
    """The group operand, of one of ``kinds``.

    ``partial_warps``: the operation takes a partial logical warp
    (``group_by(w, exhaustive=False)``, ``w`` from 17 to 31); only reduce and sum do.
    """
    if not isinstance(group, GroupArg):
        raise InvalidGroupError(
            f"{call}: group={describe(group)} is not a cooperative group; pass "
            "coop.this_block(), coop.this_warp() or coop.this_warp().group_by(width) "
            "as the first argument"
        )
    if group.kind not in kinds:
        allowed = {"block": "coop.this_block()", "warp": "coop.this_warp() (or a logical warp)",
                   "thread": "coop.this_thread()", "warps": "coop.this_block().group_by(n)",
                   "cluster": "coop.this_cluster()"}
        why = _GROUP_LIMITS.get(group.kind, "")
        raise InvalidGroupError(
            f"{call}: group={group.label} is not supported{why}; use "
            + " or ".join(allowed[k] for k in kinds)
        )
    if group.is_partial_warp and not partial_warps:
        raise InvalidGroupWidthError(
            f"{call}: group={group.label} is a non-power-of-two logical warp, which only coop.reduce() "
            "and coop.sum() take, at widths 17 to 31 (CUB's WarpReduce is the one warp collective that "
            "runs a partial logical warp); use a logical warp width of 1, 2, 4, 8, 16 or 32"
        )
    if group.is_partial_warp and group.width < 17:
        raise InvalidGroupWidthError(
            f"{call}: group={group.label} puts {32 // group.width} logical warps in each warp, which "
            "CUB's non-power-of-two WarpReduce does not support (it runs one logical warp of lanes "
            "0..width-1 per warp); use a width from 17 to 31, or 1, 2, 4, 8, 16 or 32"
        )
    return group


_GROUP_LIMITS = {
    "grid": " (no cooperative operation runs over a whole grid: it would need a grid-wide barrier "
            "and workspace; work per block and combine the block results, e.g. with cuda.atomic.add)",
    "cluster": " (of the operations, only coop.reduce() and coop.sum() run over a thread-block "
               "cluster)",
    "thread": " (one thread has nothing to cooperate on here; reduce/sum fold its own items)",
    "warps": " (groups of warps are taken by reduce and sum only)",
}


def choose(call: str, label: str, arg, choices, default=None) -> str:
    """Normalize a lowercase string selector and check it is one of ``choices``."""
    if not is_given(arg):
        if default is None:
            raise MissingArgumentError(f"{call}: {label} is required; choose {_choices(choices)}")
        return default
    if not isinstance(arg, StringArg):
        raise InvalidAlgorithmError(
            f"{call}: {label}={describe(arg)} must be a string; choose {_choices(choices)}"
        )
    if arg.value is None:
        raise NonConstantArgumentError(
            f"{call}: {label} must be a compile-time constant string; choose {_choices(choices)}"
        )
    value = arg.value.strip().lower().replace("-", "_")
    if value not in choices:
        raise InvalidAlgorithmError(
            f"{call}: {label}={arg.value!r} is not a valid {label}; choose {_choices(choices)}"
        )
    return value


def choose_algorithm(call: str, arg, group: GroupArg, tables: dict, default: str) -> AlgorithmSpec:
    """Pick an AlgorithmSpec from ``tables[group.kind]``, reporting algorithms of other groups."""
    table = tables[group.kind]
    every = {}
    for t in tables.values():
        every.update(t)
    if not is_given(arg):
        return table[default]
    if isinstance(arg, StringArg) and arg.value is not None:
        value = arg.value.strip().lower().replace("-", "_")
        if value not in table and value in every:
            kind = "block" if group.kind == "block" else "warp"
            raise UnsupportedAlgorithmForGroupError(
                f"{call}: algorithm={arg.value!r} is not a {kind} algorithm for group={group.label}; "
                f"choose {_choices(table)}"
            )
    return table[choose(call, "algorithm", arg, tuple(table), default)]


# The families that only move values (load/store, exchange, shuffle, neighbours) take
# complex payloads; the rest combine or order values, which complex numbers do not admit.
COMPLEX_OPS = ("coop.load()", "coop.store()", "coop.exchange()", "coop.shuffle()",
               "coop.adjacent_difference() and coop.discontinuity() with a device-function operator")


def refuse_complex(call: str, what: str, dtype) -> None:
    """A named refusal of complex64/complex128 in a family that combines or orders values."""
    if is_complex(dtype):
        part = "float32" if np.dtype(dtype).name == "complex64" else "float64"
        raise UnsupportedDtypeError(
            f"{call}: {what} {np.dtype(dtype).name}, which this operation does not take: it combines or "
            f"orders values, and complex payloads are moved only ({', '.join(COMPLEX_OPS)}). Work on the "
            f"real and imaginary parts as {part} values (z.real, z.imag) and recombine them"
        )


def _accepts(dtype, movement: bool) -> bool:
    return is_movable(dtype) if movement else is_supported(dtype)


def require_array(call: str, label: str, arg, *, written: bool = False, movement: bool = False) -> ArrayArg:
    if not isinstance(arg, ArrayArg):
        raise InvalidArgumentTypeError(
            f"{call}: {label}={describe(arg)} is not an array; pass a 1-D contiguous array (a "
            "kernel array argument or a slice of one)"
        )
    if arg.ndim != 1:
        raise InvalidArgumentTypeError(
            f"{call}: {label}={describe(arg)} has {arg.ndim} dimensions; pass a 1-D array "
            "(e.g. a flattened view or a row slice)"
        )
    if not arg.contiguous:
        raise InvalidArgumentTypeError(
            f"{call}: {label}={describe(arg)} is not contiguous; pass a C-contiguous array"
        )
    if not _accepts(arg.dtype, movement):
        refuse_complex(call, f"{label} has element type", arg.dtype)
        raise UnsupportedDtypeError(
            f"{call}: {label} has element type {arg.type_name or arg.dtype}, which is not supported; "
            f"use one of {dtype_names()}"
        )
    if written and not arg.writable:
        raise InvalidArgumentTypeError(
            f"{call}: {label}={describe(arg)} is read-only (a cuda.const array, a module-global "
            "array or a readonly argument type) and this call writes it; pass a writable array, "
            "e.g. a kernel argument or a cuda.shared.array"
        )
    return arg


def require_payload(call: str, label: str, arg, *, allow_scalar=False, movement: bool = False):
    """``movement``: the family only moves values, so complex payloads are accepted."""
    if isinstance(arg, PayloadArg):
        if arg.dtype is not None and not _accepts(arg.dtype, movement):
            refuse_complex(call, f"{label} has dtype", arg.dtype)
            raise UnsupportedDtypeError(
                f"{call}: {label} has dtype {arg.dtype}, which is not supported; use one of {dtype_names()}"
            )
        return arg
    if allow_scalar and isinstance(arg, ScalarArg):
        require_numeric_operand(call, label, arg, movement=movement)
        return arg
    what = "a coop.ThreadData payload" + (" or a scalar" if allow_scalar else "")
    raise InvalidArgumentTypeError(
        f"{call}: {label}={describe(arg)} is not {what}; create one with coop.ThreadData(n, dtype=...)")


def require_payload_or_scalar(call: str, label: str, arg, *, movement: bool = False):
    """A payload, or a numeric scalar taken as a payload of one item (``PayloadArg.scalar``)."""
    payload = require_payload(call, label, arg, allow_scalar=True, movement=movement)
    if isinstance(payload, ScalarArg):
        return PayloadArg(payload.dtype, 1, scalar=True)
    return payload


def resolve_payload_dtype(call: str, payload_label: str, payload, array_label: str, array: ArrayArg):
    """The payload's dtype, inferred from the array when the payload has none."""
    if payload.dtype is None:
        return array.dtype
    if payload.dtype != array.dtype:
        raise DtypeMismatchError(
            f"{call}: {payload_label} has dtype {payload.dtype.name} but {array_label} has "
            f"dtype {array.dtype.name}; they must match: create the payload with "
            f"coop.ThreadData(n, dtype=np.{array.dtype.name}) or omit dtype to infer it"
        )
    return payload.dtype


def require_known_dtype(call: str, label: str, payload: PayloadArg):
    if payload.dtype is None:
        raise UnknownDtypeError(
            f"{call}: {label} is a coop.ThreadData without a dtype, and no coop.load() source or "
            "coop.store() destination defines it; pass dtype= to coop.ThreadData()"
        )
    return payload.dtype


def require_numeric_operand(call: str, label: str, arg, *, movement: bool = False) -> ScalarArg:
    if not isinstance(arg, ScalarArg) or arg.dtype is None:
        raise InvalidArgumentTypeError(
            f"{call}: {label}={describe(arg)} is not a number; pass a scalar of {dtype_names()}"
        )
    if not _accepts(arg.dtype, movement):
        refuse_complex(call, f"{label} has type", arg.dtype)
        raise UnsupportedDtypeError(
            f"{call}: {label} has type {arg.dtype.name}, which is not supported; use one of {dtype_names()}"
        )
    return arg


def optional_int_operand(call: str, label: str, arg, *, hint: str = "",
                         allow_uint64: bool = False) -> ScalarArg | None:
    """A runtime or literal integer control (``valid_items``, ``offset``) or None.

    ``allow_uint64``: the caller passes a uint64 value on as uint64 (not as int64)."""
    if not is_given(arg):
        return None
    if not isinstance(arg, ScalarArg) or arg.dtype is None or not is_integer(arg.dtype):
        raise InvalidArgumentTypeError(
            f"{call}: {label}={describe(arg)} must be an integer{hint}; convert it with int(...)"
        )
    if arg.dtype == np.dtype("uint64") and not allow_uint64:
        raise InvalidArgumentTypeError(
            f"{call}: {label} is uint64, which does not convert to int64 losslessly; pass a "
            "signed integer (e.g. np.int64(...))"
        )
    return arg


def literal_int(arg) -> int | None:
    """The value of an integer operand given as a compile-time constant; None for a run-time
    value, an omitted operand or a bool."""
    if isinstance(arg, ScalarArg) and arg.is_literal and isinstance(arg.literal, int) \
            and not isinstance(arg.literal, bool):
        return int(arg.literal)
    return None


def optional_scalar_of_dtype(call: str, label: str, arg, dtype: np.dtype, *,
                             target: str = "the payload") -> ScalarArg | None:
    """A scalar that must have ``dtype``; literals must be representable in it.

    Complex scalars are accepted when ``dtype`` is complex (only movement families get
    there: a complex scalar for a real payload is a dtype mismatch, below)."""
    if not is_given(arg):
        return None
    require_numeric_operand(call, label, arg, movement=True)
    if arg.is_literal:
        value = arg.literal
        if isinstance(value, bool):
            raise InvalidArgumentTypeError(
                f"{call}: {label}={value!r} is not a number; pass a number of dtype {dtype.name}")
        if is_integer(dtype):
            if isinstance(value, float) and not value.is_integer():
                raise InvalidArgumentValueError(
                    f"{call}: {label}={value!r} is not representable in {dtype.name}; pass a whole number"
                )
            info = np.iinfo(dtype)
            if not info.min <= int(value) <= info.max:
                raise InvalidArgumentValueError(
                    f"{call}: {label}={value!r} is outside the range of {dtype.name} "
                    f"[{info.min}, {info.max}]; pass a value in that range"
                )
        elif isinstance(value, float) and np.isfinite(value):
            largest = _largest_finite(dtype)
            if largest is not None and abs(value) > largest:
                # A finite literal that would become infinity: a mistake, never an intent.
                raise InvalidArgumentValueError(
                    f"{call}: {label}={value!r} is outside the range of {dtype.name} "
                    f"(largest finite {largest:g}); pass a value in that range, or math.inf"
                )
        return arg
    if arg.dtype != dtype:
        # Why the value has the wider type, where Numba is the cause.
        why = ""
        if is_integer(dtype) and is_integer(arg.dtype):
            why = " (Numba widens int32 arithmetic to int64)"
        elif dtype.kind == "f" and arg.dtype == np.float64:
            why = (" (Numba computes with Python floats in float64, so x * 0.5 is float64; a float literal "
                   "passed directly, such as 0.5, is converted)")
        raise DtypeMismatchError(
            f"{call}: {label} has dtype {arg.dtype.name} but {target} has dtype {dtype.name}; "
            f"convert it, e.g. np.{dtype.name}(value){why}"
        )
    return arg


def _largest_finite(dtype: np.dtype) -> float | None:
    """The largest finite value of a floating ``dtype`` (bfloat16 included), or None."""
    if dtype.kind == "f":
        return float(np.finfo(dtype).max)
    if is_bfloat16(dtype):  # ml_dtypes is loaded: the dtype is its
        import ml_dtypes

        return float(ml_dtypes.finfo(dtype).max)
    return None


def optional_dtype_choice(call: str, label: str, arg, allowed, *, kind: str, hint: str):
    """A dtype control (``np.uint32`` or its canonical name) among ``allowed``; None when omitted.

    Only canonical names are accepted as strings: ``np.dtype("int")`` would be
    int64, while a builtin ``int`` means int32 in a kernel.
    """
    if not is_given(arg):
        return None
    if isinstance(arg, DtypeArg):
        dt = arg.dtype
    elif isinstance(arg, StringArg) and arg.value is not None:
        dt = {d.name: d for d in allowed}.get(arg.value.strip().lower())
    else:
        dt = None
    if dt not in allowed:
        raise UnsupportedDtypeError(
            f"{call}: {label}={describe(arg)} is not {kind}; use {hint}"
        )
    return dt


def require_literal_bool(call: str, label: str, arg, default: bool) -> bool:
    if not is_given(arg):
        return default
    if isinstance(arg, ScalarArg) and arg.is_literal and isinstance(arg.literal, bool):
        return arg.literal
    raise NonConstantArgumentError(
        f"{call}: {label}={describe(arg)} is not a compile-time True or False; pass a literal True or False"
    )


def require_literal_int(call: str, label: str, arg, *, minimum=None, maximum=None) -> int:
    if not isinstance(arg, ScalarArg) or arg.dtype is None or not is_integer(arg.dtype):
        raise InvalidArgumentTypeError(f"{call}: {label}={describe(arg)} is not an integer; pass an int")
    if not arg.is_literal:
        raise NonConstantArgumentError(
            f"{call}: {label} must be known at compile time; use a literal, a module constant, "
            "a closure value or a kernel argument (specialized per value)"
        )
    value = int(arg.literal)
    if minimum is not None and value < minimum or maximum is not None and value > maximum:
        rng = f"[{minimum if minimum is not None else '-inf'}, {maximum if maximum is not None else 'inf'}]"
        raise InvalidArgumentValueError(f"{call}: {label}={value} is outside {rng}; pass a value in that range")
    return value


def optional_literal_int(call, label, arg, *, minimum=None, maximum=None):
    if not is_given(arg):
        return None
    return require_literal_int(call, label, arg, minimum=minimum, maximum=maximum)


def optional_temp_storage(call: str, arg, group: GroupArg, *, warp_allowed=False) -> TempStorageArg | None:
    if not is_given(arg):
        return None
    if not isinstance(arg, TempStorageArg):
        raise InvalidArgumentTypeError(
            f"{call}: temp_storage={describe(arg)} is not a coop.TempStorage; pass one created in the "
            "kernel, e.g. temp_storage=coop.TempStorage()"
        )
    # A cluster reduction's scratch is block scratch: each block holds its own copy.
    if group.kind not in ("block", "cluster") and not warp_allowed:
        raise TempStorageError(
            f"{call}: temp_storage= is not accepted for group={group.label}; warp operations own "
            "their scratch (one slice per warp); remove temp_storage="
        )
    return arg


def require_given_together(call: str, first: str, first_arg, second: str, second_arg):
    if is_given(second_arg) and not is_given(first_arg):
        raise ConflictingArgumentsError(
            f"{call}: {second} was given without {first}; {second} fills the slots past "
            f"{first}, so pass both (or neither)"
        )


def require_device_function(call: str, label: str, arg) -> DeviceFunctionArg:
    if not isinstance(arg, DeviceFunctionArg) or not arg.device:
        raise NotADeviceFunctionError(
            f"{call}: {label}={describe(arg)} is not a device function; pass a function decorated "
            "with @cuda.jit(device=True)"
        )
    return arg


def choose_operator(call: str, label: str, arg, aliases: dict, *, default=None, callables=True,
                    what: str = "operator"):
    """An operator given as a string, a Python operator/ufunc, or a device function.

    ``aliases`` maps every accepted spelling to its canonical name (the
    :class:`OperatorArg` spellings ``"+"``, ``"*"``, ``"min"``, ``"max"``, ``"&"``,
    ``"|"``, ``"^"``, ``"<"``, ... are looked up there too).  Returns the canonical
    name, or the :class:`DeviceFunctionArg` when ``callables`` allows one.
    """
    spellings = _choices(list(dict.fromkeys(aliases)))
    fix = f"use one of {spellings}" + (" or a @cuda.jit(device=True) function" if callables else "")
    if not is_given(arg):
        if default is None:
            raise MissingArgumentError(f"{call}: {label} is required; {fix}")
        return default
    if isinstance(arg, DeviceFunctionArg):
        if not callables:
            raise InvalidOperatorError(f"{call}: {label}={describe(arg)} is not accepted here; use one of {spellings}")
        return require_device_function(call, label, arg)
    if isinstance(arg, OperatorArg):
        if arg.name in aliases:
            return aliases[arg.name]
        raise InvalidOperatorError(f"{call}: {label}={arg.label} is not a supported {what}; {fix}")
    if isinstance(arg, StringArg):
        if arg.value is None:
            raise NonConstantArgumentError(f"{call}: {label} must be a compile-time constant; {fix}")
        # Symbols first: "-" is an operator, not a separator to normalize ("heads-and-tails").
        value = arg.value.strip().lower()
        if value not in aliases:
            value = value.replace("-", "_")
        if value in aliases:
            return aliases[value]
        raise InvalidOperatorError(f"{call}: {label}={arg.value!r} is not a supported {what}; {fix}")
    if isinstance(arg, UnsupportedArg) and arg.type_name.startswith("Function("):
        raise NotADeviceFunctionError(
            f"{call}: {label}={arg.type_name} is neither a supported {what} nor a device function; {fix}"
        )
    raise InvalidOperatorError(f"{call}: {label}={describe(arg)} is not a valid {what}; {fix}")


def require_integer_payload(call: str, label: str, arg, *, purpose: str = "") -> PayloadArg:
    """A ThreadData of integer dtype (ranks, flags); ``purpose`` completes the message."""
    if not isinstance(arg, PayloadArg):
        raise InvalidArgumentTypeError(
            f"{call}: {label}={describe(arg)} is not a coop.ThreadData of integers{purpose}; create it "
            "with e.g. coop.ThreadData(n, dtype=np.int32)"
        )
    dtype = require_known_dtype(call, label, arg)
    if not is_integer(dtype):
        raise InvalidArgumentTypeError(
            f"{call}: {label} has dtype {dtype.name}, but it must be an integer ThreadData{purpose}; "
            "create it with e.g. coop.ThreadData(n, dtype=np.int32)"
        )
    return arg


def require_same_items(call: str, label: str, arg: PayloadArg, ref_label: str, ref: PayloadArg):
    """``arg`` must have as many items per thread as ``ref``."""
    if arg.items != ref.items:
        raise ExtentMismatchError(
            f"{call}: {label} has {arg.items} items per thread but {ref_label} has {ref.items}; "
            f"they pair up item by item, so create {label} with coop.ThreadData({ref.items}, ...)"
        )
    return arg


def forbid(call: str, label: str, arg, why: str):
    """``label`` must not be given here; ``why`` says when it applies."""
    if is_given(arg):
        raise ConflictingArgumentsError(f"{call}: {label}={describe(arg)} {why}")


def require_launch_block(call: str, block) -> tuple:
    """The launch block shape must be one CUDA can launch; checked before any code is generated."""
    shape = tuple(block)
    for axis, extent, limit in zip("xyz", shape, MAX_BLOCK_EXTENTS):
        if extent < 1:
            raise UnsupportedBlockShapeError(
                f"{call}: block={shape} has {axis}={extent}; every extent of a thread block must be at "
                "least 1, so launch with e.g. block=(128, 1, 1)"
            )
        if extent > limit:
            raise UnsupportedBlockShapeError(
                f"{call}: block={shape} has {axis}={extent}, above CUDA's limit of {limit} on {axis}; "
                f"launch with {axis} <= {limit} (and at most {MAX_BLOCK_THREADS} threads in all)"
            )
    threads = shape[0] * shape[1] * shape[2]
    if threads > MAX_BLOCK_THREADS:
        raise UnsupportedBlockShapeError(
            f"{call}: block={shape} has {threads} threads, above CUDA's limit of {MAX_BLOCK_THREADS} per "
            f"block; launch with at most {MAX_BLOCK_THREADS} threads per block and more blocks"
        )
    return shape


def require_no_half_callback(call: str, label: str, dtype) -> None:
    """Device-function operators on float16/bfloat16 are refused (for now) with the way out.

    A 16-bit float crosses the C ABI between the user's function and CUB by value,
    where the compiler's ``f16`` and C++'s ``__half`` class do not match (see
    ``AbiOperand.by_reference``): the call would stay un-inlined with garbage arguments.
    """
    if dtype is not None and is_half(dtype):
        raise UnsupportedDtypeError(
            f"{call}: {label}= is a device function, but the values are {np.dtype(dtype).name}; device-function "
            "operators on float16/bfloat16 values are not supported yet (a 16-bit float cannot cross the C ABI "
            f"by value). Use a built-in operator (e.g. {label}='+', 'min' or 'max') or convert the values to "
            "float32 first"
        )
