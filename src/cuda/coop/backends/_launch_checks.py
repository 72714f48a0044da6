"""Launch-time checks both backends make before a cooperative kernel is typed.

``uses_coop`` tells a kernel that uses cuda.coop from one that does not (whose launches
keep the compiler's own errors).  ``refuse_capsules``: a raw DLPack capsule
(``torch.utils.dlpack.to_dlpack(t)``) may be consumed once and has no ``__dlpack__``
method, so no compiler can type it; the error names the object to pass instead.
"""

from __future__ import annotations

import types as _pytypes

from .._errors import InvalidArgumentTypeError

__all__ = ["uses_coop", "refuse_capsules", "is_coop_object"]


def is_coop_object(value, names=()) -> bool:
    """Whether ``value`` is a cuda.coop module or object (``names``: the attribute names the
    code reads, for the ``cuda`` namespace package itself)."""
    if isinstance(value, _pytypes.ModuleType):
        name = value.__name__
        if name == "cuda.coop" or name.startswith("cuda.coop."):
            return True
        return name == "cuda" and "coop" in names  # ``import cuda.coop`` ... ``cuda.coop.load``
    module = getattr(value, "__module__", None) or getattr(type(value), "__module__", "") or ""
    return module == "cuda.coop" or module.startswith("cuda.coop.")


def _code_names(code, out):
    out.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, _pytypes.CodeType):
            _code_names(const, out)
    return out


def uses_coop(dispatcher) -> bool:
    """Whether a kernel's Python function refers to cuda.coop (globals and closure cells)."""
    pyfunc = getattr(dispatcher, "py_func", None)
    code = getattr(pyfunc, "__code__", None)
    if code is None:
        return False
    names = _code_names(code, set())
    scope = getattr(pyfunc, "__globals__", {})
    values = [scope[n] for n in names if n in scope]
    for cell in getattr(pyfunc, "__closure__", None) or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    return any(is_coop_object(v, names) for v in values)


def refuse_capsules(dispatcher, args) -> None:
    """A named error for a DLPack capsule passed to a cooperative kernel."""
    for index, arg in enumerate(args):
        if type(arg).__name__ == "PyCapsule" and uses_coop(dispatcher):
            name = getattr(getattr(dispatcher, "py_func", None), "__name__", "kernel")
            raise InvalidArgumentTypeError(
                f"cannot launch cooperative kernel {name!r}: argument {index} is a DLPack capsule, which "
                "a kernel cannot take (it may be consumed only once and has no __dlpack__ method); pass the "
                "array that produced it (CuPy arrays, PyTorch tensors and other objects with __dlpack__ or "
                "__cuda_array_interface__ work), or torch.from_dlpack(capsule) / cupy.from_dlpack(capsule)")
