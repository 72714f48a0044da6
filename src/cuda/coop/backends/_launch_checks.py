"""Launch-time checks both backends make before a cooperative kernel is typed.

``uses_coop`` tells a kernel that uses cuda.coop from one that does not (whose launches
keep the compiler's own errors).  ``check_launch_block``: the block shape of a cooperative
kernel's launch (``kernel[grid, block]``) is checked where it is written, so an impossible
one (over 1024 threads, an extent of 0, z over 64) is a named error at the launch line,
also for a kernel that only queries or synchronizes its groups, which would otherwise
compile silently and fail in the driver.  ``refuse_capsules``: a raw DLPack capsule
(``torch.utils.dlpack.to_dlpack(t)``) may be consumed once and has no ``__dlpack__``
method, so no compiler can type it; the error names the object to pass instead.
"""

from __future__ import annotations

import types as _pytypes

from .._errors import InvalidArgumentTypeError

__all__ = ["uses_coop", "function_refers_to_coop", "refuse_capsules", "is_coop_object", "check_launch_block"]


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
    known = getattr(dispatcher, "__dict__", {}).get("_coop_uses")
    if known is not None:
        return known
    found = _refers_to_coop(dispatcher)
    try:
        dispatcher.__dict__["_coop_uses"] = found  # launches ask again: once per dispatcher
    except AttributeError:
        pass
    return found


def _refers_to_coop(dispatcher) -> bool:
    return function_refers_to_coop(getattr(dispatcher, "py_func", None))


def function_refers_to_coop(pyfunc) -> bool:
    """Whether a Python function refers to cuda.coop now (globals and closure cells): not
    cached, since a global it names may be bound later."""
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


_CHECKED_BLOCKS = 64  # valid block shapes remembered per kernel (a loop over shapes stays bounded)


def check_launch_block(dispatcher, blockdim) -> None:
    """A named error for an impossible block shape in a cooperative kernel's launch."""
    memo = dispatcher.__dict__.get("_coop_good_blocks")
    try:
        if memo is not None and blockdim in memo:
            return
    except TypeError:  # an unhashable shape (a list): checked every time
        pass
    if not uses_coop(dispatcher):
        return
    from .._errors import InvalidArgumentTypeError as TypeErr
    from .._kernel_api import as_python_int
    from ..ops._validate import require_launch_block

    name = getattr(getattr(dispatcher, "py_func", None), "__name__", "kernel")
    dims = (blockdim,) if as_python_int(blockdim) is not None else blockdim
    try:
        shape = tuple(as_python_int(d) for d in dims)
    except TypeError:
        shape = (None,)
    if not 1 <= len(shape) <= 3 or None in shape:
        raise TypeErr(
            f"{name}[grid, block]: block={blockdim!r} is not a block shape; pass an int or a tuple of "
            "1 to 3 ints, e.g. 128 or (32, 4)") from None
    require_launch_block(f"{name}[grid, block]", shape + (1,) * (3 - len(shape)))
    memo = dispatcher.__dict__.setdefault("_coop_good_blocks", set())
    if len(memo) < _CHECKED_BLOCKS:
        try:
            memo.add(blockdim)
        except TypeError:  # an unhashable shape (a list): checked every time
            pass
