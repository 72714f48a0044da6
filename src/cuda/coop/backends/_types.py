"""Numba types of cuda.coop values, and their translation to compiler-neutral descriptors.

Both compilers (numba-cuda-mlir, classic numba-cuda) carry their own copy of Numba's type
system, so the same type classes have to derive from each compiler's own ``types`` module:
``build`` makes them for one compiler from its ``_compat`` module, and each backend's
``types.py`` binds the result to module names (``GroupType``, ``describe_type``, ...).
Nothing here imports a compiler.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from .._dtypes import bfloat16_dtype, is_movable
from ..core import spec

__all__ = ["build", "CompilerTypes"]


class CompilerTypes(NamedTuple):
    """What ``build`` makes for one compiler, bound to names by its ``types.py``."""

    GroupType: type
    ThreadDataType: type
    TempStorageType: type
    StatefulFunctionType: type
    numpy_dtype: Callable  # Numba type -> NumPy dtype, or None
    numba_type_of_dtype: Callable  # NumPy dtype -> Numba type
    describe_type: Callable  # Numba type -> core descriptor
    result_type: Callable  # CallPlan result -> Numba type
    register_group_typeofs: Callable  # (typeof_impl) -> None


def build(module_name: str, compat, *, bfloat16_name: str) -> CompilerTypes:
    """The type classes and descriptor functions for one compiler.

    ``compat`` is the backend's ``_compat`` module: the compiler's ``types``, data models
    (``ArrayModel``, ``OpaqueModel``), ``register_model``, ``as_dtype`` and ``from_dtype``.
    ``bfloat16_name`` is how the compiler prints its bfloat16 type.  The classes take
    ``module_name`` as their module, so Numba's pickling of types finds them as that
    module's attributes.
    """
    types, as_dtype, register_model = compat.types, compat.as_dtype, compat.register_model

    def numba_type_of_dtype(dt: np.dtype):
        # ``from_dtype`` read at the call: a backend may load it with the compiler.
        return compat.from_dtype(np.dtype(dt))

    class GroupType(types.Dummy):
        """A cooperative group descriptor: compile time only, nothing at run time."""

        def __init__(self, kind: str, width: int = 0, exhaustive: bool = True):
            self.kind = kind
            self.width = width
            # False: this_block().group_by(n, exhaustive=False), complete groups of warps only
            self.exhaustive = exhaustive
            label = {"block": "block", "warp": f"warp{width}", "warps": f"warps{width}"}.get(kind, kind)
            if not exhaustive:
                label += ", partial"
            super().__init__(name=f"coop.Group({label})")

        @property
        def key(self):
            return (self.kind, self.width, self.exhaustive)

        def descriptor(self) -> spec.GroupArg:
            return spec.GroupArg(self.kind, self.width, self.exhaustive)


    class ThreadDataType(types.Array):
        """A per-thread payload: a 1-D C-contiguous array whose extent is part of the type."""

        def __init__(self, dtype, items: int, alignment: int | None = None):
            self.items = items
            self.payload_alignment = alignment
            align = "" if alignment is None else f", align={alignment}"
            super().__init__(dtype, 1, "C", name=f"coop.ThreadData({dtype}, {items}{align})")

        @property
        def key(self):
            return (super().key, self.items, self.payload_alignment)

        def unify(self, typingctx, other):
            # One name bound to two different payloads (``items = coop.ThreadData(8)`` in a
            # branch): numba would merge them into a plain array, which the next call then
            # refuses as "not a ThreadData", or fail with a bare "Cannot unify".
            if isinstance(other, ThreadDataType) and other.key != self.key:
                from .._diagnostics import raise_at
                from .._errors import InvalidArgumentTypeError
                from ._upstream import typing_location

                loc, function = typing_location()
                raise_at(InvalidArgumentTypeError(
                    f"one variable holds a coop.ThreadData({self.dtype}, {self.items}) on one path and a "
                    f"coop.ThreadData({other.dtype}, {other.items}) on another; a payload's items and dtype "
                    "are fixed when the kernel compiles, so give the second payload its own name"
                ), getattr(loc, "filename", None), getattr(loc, "line", None), function)
            return super().unify(typingctx, other)

        def copy(self, dtype=None, ndim=1, layout="C", readonly=False):
            # Array operations that derive a new array type (slicing, views) yield plain
            # arrays; only ThreadData(...) makes a payload.
            if dtype is None:
                dtype = self.dtype
            return types.Array(dtype, ndim, layout, readonly=readonly)


    class TempStorageType(types.Dummy):
        """An explicit scratch descriptor; ``site`` identifies its constructor call."""

        def __init__(self, site, size_in_bytes, alignment, auto_sync, sharing):
            self.site = site
            self.size_in_bytes = size_in_bytes
            self.alignment = alignment
            self.auto_sync = auto_sync
            self.sharing = sharing
            super().__init__(name=f"coop.TempStorage(site={site}, size={size_in_bytes}, align={alignment}, "
                                  f"auto_sync={auto_sync}, sharing={sharing})")

        @property
        def key(self):
            return (self.site, self.size_in_bytes, self.alignment, self.auto_sync, self.sharing)

        def descriptor(self):
            return spec.TempStorageArg(self.site, self.size_in_bytes, self.alignment, self.auto_sync, self.sharing)


    class StatefulFunctionType(types.Dummy):
        """A coop.StatefulFunction: its device function and state dtype, compile time only."""

        def __init__(self, function, dispatcher):
            self.function = function
            self.dispatcher = dispatcher
            super().__init__(name=f"coop.StatefulFunction({function.name}, {function.state_dtype.name})")

        @property
        def key(self):
            return (id(self.function), _dispatcher_key(self.dispatcher), self.function.state_dtype)

        def descriptor(self) -> spec.DeviceFunctionArg:
            d = self.dispatcher
            return spec.DeviceFunctionArg(handle=d, key=_dispatcher_key(d), name=self.function.name, device=True,
                                          state_dtype=self.function.state_dtype)


    register_model(GroupType)(compat.OpaqueModel)
    register_model(StatefulFunctionType)(compat.OpaqueModel)
    register_model(TempStorageType)(compat.OpaqueModel)
    register_model(ThreadDataType)(compat.ArrayModel)


    def numpy_dtype(numba_type) -> np.dtype | None:
        if _is_bfloat16(numba_type):
            return bfloat16_dtype()  # the compilers have no NumPy dtype for their bfloat16 type
        try:
            dt = np.dtype(as_dtype(numba_type))
        except Exception:
            return None
        # Complex too: the families check their own dtypes (ops._validate refuses complex in
        # the arithmetic ones with a named message).
        return dt if is_movable(dt) else None


    def _is_bfloat16(numba_type) -> bool:
        return str(numba_type) == bfloat16_name


    def describe_type(ty):
        """Translate a Numba type into the compiler-neutral descriptor the families read."""
        if isinstance(ty, types.Omitted) or ty is None:
            return spec.OMITTED
        if isinstance(ty, GroupType):
            return ty.descriptor()
        if isinstance(ty, (TempStorageType, StatefulFunctionType)):
            return ty.descriptor()
        if isinstance(ty, ThreadDataType):
            return spec.PayloadArg(numpy_dtype(ty.dtype), ty.items, ty.payload_alignment)
        if isinstance(ty, types.Array):
            contiguous = ty.layout in ("C", "F") if ty.ndim == 1 else ty.layout == "C"
            return spec.ArrayArg(numpy_dtype(ty.dtype), ty.ndim, contiguous, str(ty.dtype),
                                 writable=bool(getattr(ty, "mutable", True)))
        if isinstance(ty, types.BooleanLiteral):
            return spec.ScalarArg(None, ty.literal_value, "bool")
        if isinstance(ty, types.Boolean):
            return spec.ScalarArg(None, type_name="bool")
        if isinstance(ty, types.IntegerLiteral):
            return spec.ScalarArg(numpy_dtype(ty.literal_type) or np.dtype("int64"), int(ty.literal_value))
        if (isinstance(ty, (types.Integer, types.Float, types.Complex))
                or (isinstance(ty, types.Number) and _is_bfloat16(ty))):
            return spec.ScalarArg(numpy_dtype(ty), type_name=str(ty))
        if isinstance(ty, types.StringLiteral):
            return spec.StringArg(ty.literal_value)
        if isinstance(ty, types.UnicodeType):
            return spec.StringArg(None)
        if isinstance(ty, types.NoneType):
            return spec.NoneArg()
        if isinstance(ty, (types.NumberClass, types.DType)):
            inner = ty.instance_type if isinstance(ty, types.NumberClass) else ty.dtype
            dt = numpy_dtype(inner)
            return spec.DtypeArg(dt) if dt is not None else spec.UnsupportedArg(str(inner))
        if isinstance(ty, types.Function) and getattr(ty, "typing_key", None) in (int, float):
            # The builtins as dtypes mean 32-bit, as in coop.ThreadData(n, dtype=int) on the host.
            return spec.DtypeArg(np.dtype("int32" if ty.typing_key is int else "float32"))
        if isinstance(ty, types.EnumMember):
            # The member itself is not in the type; name its class (``Algo member``).
            return spec.UnsupportedArg(f"<{ty.instance_class.__name__} enum member>")
        if isinstance(ty, types.Dispatcher):
            dispatcher = ty.dispatcher
            device = bool(getattr(dispatcher, "targetoptions", {}).get("device", False))
            return spec.DeviceFunctionArg(handle=dispatcher, key=_dispatcher_key(dispatcher),
                                          name=getattr(dispatcher, "__name__", str(ty)), device=device)
        if isinstance(ty, types.Function):
            # operator.add, np.maximum, max, ...: stand-ins for built-in operators.
            found = spec.python_operator(getattr(ty, "typing_key", None))
            if found is not None:
                return found
        return spec.UnsupportedArg(str(ty))


    def _dispatcher_key(dispatcher):
        fn = getattr(dispatcher, "py_func", dispatcher)
        code = getattr(fn, "__code__", None)
        return (getattr(fn, "__module__", ""), getattr(fn, "__qualname__", str(fn)),
                hash(code.co_code) if code is not None else id(fn), id(dispatcher))



    def result_type(result):
        """Numba type of a CallPlan result."""
        if result is None:
            return types.none
        if isinstance(result, spec.ScalarResult):
            return numba_type_of_dtype(result.dtype)
        if isinstance(result, spec.PayloadResult):
            return ThreadDataType(numba_type_of_dtype(result.dtype), result.items)
        if isinstance(result, spec.TupleResult):
            return types.Tuple([result_type(r) for r in result.items])
        raise TypeError(f"unknown result {result!r}")

    def register_group_typeofs(typeof_impl):
        """The Numba type of each host group descriptor, registered with the compiler's typeof."""
        from .. import _groups

        typeof_impl.register(_groups.BlockGroup)(lambda val, c: GroupType("block", 0))
        typeof_impl.register(_groups.WarpGroup)(lambda val, c: GroupType("warp", val.width))
        typeof_impl.register(_groups.WarpsGroup)(lambda val, c: GroupType("warps", val.warps, val.exhaustive))
        for cls in (_groups.SingleThreadGroup, _groups.GridGroup, _groups.ClusterGroup):
            typeof_impl.register(cls)(lambda val, c: GroupType(val.kind, 0))

    for cls in (GroupType, ThreadDataType, TempStorageType, StatefulFunctionType):
        cls.__module__ = module_name
        cls.__qualname__ = cls.__name__
    return CompilerTypes(GroupType, ThreadDataType, TempStorageType, StatefulFunctionType, numpy_dtype,
                         numba_type_of_dtype, describe_type, result_type, register_group_typeofs)
