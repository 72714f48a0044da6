"""Objects that kernels call: how they behave on the host and how a compiler finds them.

A kernel refers to ``coop.load`` or ``coop.ThreadData`` as module attributes.  When
a backend is registered, the compiler asks each of these objects for its type
through ``_numba_type_``; the active backend answers.  Without a backend the same
lookup raises :class:`BackendNotRegisteredError`, so the user sees what to do
instead of the compiler's "untyped global name".
"""

from __future__ import annotations

import functools
import operator

from ._errors import BackendNotRegisteredError, CoopCompilerContextRequiredError

__all__ = ["KernelFunction", "KernelConstructMeta", "kernel_function", "as_python_int"]

def as_python_int(value):
    """``value`` as a Python ``int`` when it is an integer, else None.

    An integer is anything with ``__index__`` (``int``, ``np.int64(32)``, ``np.uint8(4)``)
    except ``bool``: every integer-valued argument takes NumPy integer scalars wherever it
    takes a Python ``int``, as NVIDIA's cuda.coop does.
    """
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


_REGISTER_HINT = (
    "register it with coop.register('numba-cuda-mlir') before compiling, import "
    "numba_cuda_mlir before cuda.coop, or write `import cuda.coop.numba_mlir as coop`"
)


def _backend_type_of(obj, name: str):
    from . import _registration

    backend = _registration.active_backend()
    if backend is None:
        raise BackendNotRegisteredError(
            f"coop.{name}() is used in a kernel but no cuda.coop compiler backend is "
            f"registered; {_REGISTER_HINT}"
        )
    return backend.numba_type_of(obj)


class KernelFunction:
    """A cuda.coop function that is compiled into kernels.

    ``host`` is what a host call does: ops raise (they only make sense inside a
    kernel), group factories return descriptors.
    """

    def __init__(self, pyfunc, *, host_callable: bool = False):
        functools.update_wrapper(self, pyfunc)
        self._pyfunc = pyfunc
        self._host_callable = host_callable

    @property
    def __signature__(self):
        # Computed on demand (help(), inspect.signature, editors): the stubs are
        # created at import, and inspect is not needed by `import cuda.coop`.
        import inspect

        return inspect.signature(self._pyfunc)

    @property
    def name(self) -> str:
        return self._pyfunc.__name__

    def __call__(self, *args, **kwargs):
        if self._host_callable:
            return self._pyfunc(*args, **kwargs)
        raise CoopCompilerContextRequiredError(
            f"coop.{self.name}() was called on the host, but it is a cooperative operation; "
            "call it inside a @cuda.jit kernel (from numba_cuda_mlir), from every thread of the group"
        )

    def __repr__(self) -> str:
        return f"<cuda.coop function {self.name}>"

    def __reduce__(self):
        # Pickling (e.g. by a kernel cache) refers back to the module attribute:
        # functools.update_wrapper gave this object the stub's __module__ and
        # __qualname__, and every stub is bound under that name in its module.
        return self.__qualname__

    @property
    def _numba_type_(self):
        return _backend_type_of(self, self.name)


def kernel_function(pyfunc=None, *, host_callable=False):
    if pyfunc is None:
        return lambda f: KernelFunction(f, host_callable=host_callable)
    return KernelFunction(pyfunc, host_callable=host_callable)


class KernelConstructMeta(type):
    """Metaclass of ThreadData and TempStorage: the class itself is typed in kernels."""

    @property
    def _numba_type_(cls):
        return _backend_type_of(cls, cls.__name__)
