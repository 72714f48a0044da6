"""User device functions passed as operators: compiled to LTO-IR under a C symbol.

This is the shared callback mechanism of every family (reduce/scan operators,
prefix callbacks, sort comparators, neighbour predicates) and of both backends.  A
family lists the functions its provider calls in ``CallPlan.callbacks`` (role,
function, signature); here each one is compiled by the kernel's compiler (the
backend's ``_compat`` module, passed as ``compiler``: its ``cuda.compile`` with the C
ABI) for that signature and the kernel's compute capability, and linked into the kernel.
The provider's C++ declares the symbol (``core/cpp.py``), and LTO inlines it.

The symbol is ``coop_cb_<digest>`` where the digest covers the function's
identity (module, qualified name, bytecode, constants, closure values, the
globals it reads, recursively for device functions it calls) and the signature.
It is stable across processes, so the provider cache keeps working, and it is
part of the provider's C++, so two different functions never share a provider.
Two distinct function objects that fingerprint alike in one process get
distinct symbols all the same.
"""

from __future__ import annotations

import hashlib
import textwrap
import threading
import types as pytypes

import numpy as np

from .._errors import DtypeMismatchError, InvalidArgumentTypeError
from ..core import spec

__all__ = ["resolve_callbacks", "function_fingerprint"]

_lock = threading.RLock()
_SYMBOLS: dict = {}  # (id(py_func), signature) -> (py_func, symbol); holds py_func alive
_OWNERS: dict = {}  # symbol -> py_func
_LTOIR: dict = {}  # (compiler, symbol, cc) -> LTOIR link item (identity keeps link de-duplication exact)
_RESULT_CHECKED: set = set()  # (compiler, symbol, cc) whose value result passed _check_value_result


def _py_func(function: spec.DeviceFunctionArg):
    handle = function.handle
    return getattr(handle, "py_func", handle)


def _value_token(value, depth: int, seen: set) -> str:
    if isinstance(value, (bool, int, float, complex, str, bytes, type(None), np.generic)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, tuple):
        return "(" + ",".join(_value_token(v, depth, seen) for v in value) + ")"
    if isinstance(value, pytypes.ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, np.ndarray) and value.size <= 4096:
        return f"array:{value.dtype}:{value.shape}:{hashlib.sha256(value.tobytes()).hexdigest()[:16]}"
    py = getattr(value, "py_func", None)
    if isinstance(py, pytypes.FunctionType):
        return "fn:" + _fingerprint(py, depth + 1, seen)
    if isinstance(value, pytypes.FunctionType):
        return "pyfn:" + _fingerprint(value, depth + 1, seen)
    return f"object:{type(value).__module__}.{type(value).__qualname__}"


def _code_token(code, fn, depth: int, seen: set) -> list:
    parts = [code.co_code.hex(), repr(code.co_names), repr(code.co_varnames)]
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            parts += _code_token(const, fn, depth, seen)
        else:
            parts.append(_value_token(const, depth, seen))
    g = getattr(fn, "__globals__", {})
    for name in code.co_names:
        if name in g:
            parts.append(f"{name}={_value_token(g[name], depth, seen)}")
    return parts


def _fingerprint(fn, depth: int, seen: set) -> str:
    if depth > 6 or id(fn) in seen:
        return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '?')}"
    seen = seen | {id(fn)}
    parts = [getattr(fn, "__module__", "") or "", getattr(fn, "__qualname__", "") or ""]
    code = getattr(fn, "__code__", None)
    if code is not None:
        parts += _code_token(code, fn, depth, seen)
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            parts.append(_value_token(cell.cell_contents, depth, seen))
        except ValueError:  # empty cell
            parts.append("<empty>")
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def function_fingerprint(fn) -> str:
    """A digest of what a Python function computes, stable across processes."""
    return _fingerprint(getattr(fn, "py_func", fn), 0, frozenset())


def _signature_text(cb: spec.Callback) -> str:
    def name(t):
        return f"{np.dtype(t.dtype).name}*" if isinstance(t, spec.PointerTo) else np.dtype(t).name

    return f"{np.dtype(cb.restype).name}({', '.join(name(t) for t in cb.argtypes)})"


def _symbol(cb: spec.Callback) -> str:
    py_func = _py_func(cb.function)
    sig = _signature_text(cb)
    with _lock:
        known = _SYMBOLS.get((id(py_func), sig))
        if known is not None and known[0] is py_func:
            return known[1]
        digest = hashlib.sha256(f"{function_fingerprint(py_func)}\n{sig}".encode()).hexdigest()[:16]
        symbol, n = f"coop_cb_{digest}", 1
        while _OWNERS.get(symbol, py_func) is not py_func:
            n += 1
            symbol = f"coop_cb_{digest}_{n}"
        _OWNERS[symbol] = py_func
        _SYMBOLS[(id(py_func), sig)] = (py_func, symbol)
        return symbol


def _numba_type(C, t):
    if isinstance(t, spec.PointerTo):
        return C.types.CPointer(C.from_dtype(np.dtype(t.dtype)))
    return C.from_dtype(np.dtype(t))


def _compile(C, call: str, cb: spec.Callback, symbol: str, cc: tuple):
    key = (C.__name__, symbol, tuple(cc))
    with _lock:
        item = _LTOIR.get(key)
        if item is not None:
            return item
        handle = cb.function.handle
        options = getattr(handle, "targetoptions", {}) or {}
        if cb.by_reference:
            pyfunc = _pointer_shim(handle, len(cb.argtypes))
            ptr = C.types.CPointer
            sig = C.types.void(ptr(_numba_type(C, cb.restype)), *[ptr(_numba_type(C, t)) for t in cb.argtypes])
        else:
            pyfunc = _py_func(cb.function)
            sig = _numba_type(C, cb.restype)(*[_numba_type(C, t) for t in cb.argtypes])
        try:
            ltoir = C.compile_device_function_ltoir(pyfunc, sig, cc=cc, symbol=symbol,
                                                    fastmath=options.get("fastmath", False))
        except Exception as exc:
            detail = textwrap.indent(str(exc).strip(), "    ")
            raise InvalidArgumentTypeError(
                f"{call}: {cb.role}={spec.describe(cb.function)} does not compile for the signature "
                f"this call needs, {_signature_text(cb)}; make it accept and return these types. "
                f"{C.COMPILER_NAME} reported ({type(exc).__name__}):\n{detail}"
            ) from None
        item = C.LTOIR(ltoir, name=f"{symbol}.ltoir")
        _LTOIR[key] = item
        return item


def _pointer_shim(dispatcher, nargs: int):
    """``shim(out, a0, ...)``: ``out[0] = f(a0[0], ...)``, the by-pointer ABI of a callback
    with complex operands (spec.Callback.by_reference).  The user's function is called
    from device code, so it keeps its own compilation (and inlines)."""
    names = [f"a{i}" for i in range(nargs)]
    source = (f"def coop_pointer_shim(out, {', '.join(names)}):\n"
              f"    out[0] = user_function({', '.join(n + '[0]' for n in names)})\n")
    scope = {"user_function": dispatcher}
    exec(compile(source, "<cuda.coop callback shim>", "exec"), scope)
    return scope["coop_pointer_shim"]


def _same_kind(result: np.dtype, expected: np.dtype) -> bool:
    """Whether ``result`` is an acceptable result for a value of ``expected``.

    Results of the same kind pass at any width, converted to the values' dtype
    as CUB's accumulator does: numba widens int32 arithmetic to int64 (narrowing
    back wraps exactly as the C++ operator would), and ``a + b + 1`` on float32
    is float64 in numba (one rounding back to float32 per step).  A float for
    integer values (truncation), a bool, or a complex result is another quantity.
    """
    if expected.kind in "iu":
        return result.kind in "iu"
    if expected.kind == "f":
        return result.kind == "f"
    return result == expected


def _check_value_result(C, call: str, cb: spec.Callback, symbol: str, cc: tuple):
    if not (cb.value_result or cb.predicate) or (C.__name__, symbol, tuple(cc)) in _RESULT_CHECKED:
        return
    argtypes = [_numba_type(C, t) for t in cb.argtypes]
    try:
        restype = C.device_function_restype(_py_func(cb.function), argtypes, cc=cc)
    except Exception:
        return  # does not type for these operands: _compile reports it with numba's words
    try:
        result = np.dtype(C.as_dtype(restype))
    except Exception:
        result = None
    args = ", ".join(np.dtype(t).name for t in cb.argtypes if not isinstance(t, spec.PointerTo))
    if cb.predicate:
        if result is None or result.kind != "b":
            raise DtypeMismatchError(
                f"{call}: {cb.role}={spec.describe(cb.function)} returns {restype} for ({args}) operands, "
                "but it is a predicate and must return a bool (any other value would be read as "
                "'not zero'); return a comparison, e.g. return a < b"
            )
        _RESULT_CHECKED.add((C.__name__, symbol, tuple(cc)))
        return
    expected = np.dtype(cb.restype)
    if result is None or not _same_kind(result, expected):
        raise DtypeMismatchError(
            f"{call}: {cb.role}={spec.describe(cb.function)} returns {restype} for ({args}) operands, "
            f"but its result must be {expected.name} (the values' dtype); make it return "
            f"{expected.name}, e.g. wrap the result in np.{expected.name}(...)"
        )
    _RESULT_CHECKED.add((C.__name__, symbol, tuple(cc)))


def resolve_callbacks(plan: spec.CallPlan, cc: tuple, compiler):
    """Compile a plan's callbacks with ``compiler`` (a backend's ``_compat`` module):
    ``({role: symbol}, [link items])``."""
    symbols, items = {}, []
    for cb in plan.callbacks:
        symbol = _symbol(cb)
        _check_value_result(compiler, plan.call, cb, symbol, cc)
        items.append(_compile(compiler, plan.call, cb, symbol, cc))
        symbols[cb.role] = symbol
    return symbols, items
