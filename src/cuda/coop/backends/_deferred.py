"""A backend's activation in two steps, the same for both compilers.

Registering a backend (``import cuda.coop`` beside its compiler, or ``coop.register()``) must
stay cheap (docs/compile_latency.rst, "Import time"): the typing templates, lowerings and group
methods import the family modules, the C++ generation and, on numba-cuda-mlir, the
compiler's lowering stack, and refresh the compiler's registries (0.7 s on the 2-core
machine for numba-cuda-mlir).  Registering installs only the hooks below; the backend's
``ready()`` installs the rest the first time a compile meets cuda.coop, which one of them
detects:

- The before-inference rewrite.  A function whose untyped IR reads a cuda.coop object (a
  global or closure value, or an attribute of one: ``coop.load``, ``cuda.coop.load``,
  ``mylib.coop.load``) makes the backend ready, then the backend's own call-site rewrite
  runs on it.  The usual trigger: nothing of that compile is typed yet, so the refreshed
  registries serve all of its typing.  A device helper that uses cuda.coop triggers it
  while the kernel calling it is being typed; the refresh only adds entries, which that
  typing then also sees.
- typeof.  The compiler asks the type of a cuda.coop object no rewrite saw: a group
  descriptor or StatefulFunction passed as an argument (typed before the compile), or a
  cuda.coop function reached through a value the rewrite does not follow (an item of a
  global tuple), during typing.  ``ready()`` registers the real typeof functions over
  these first-use ones.

A function that reads no cuda.coop object gets nothing from the backend, so a process that
compiles only such kernels never pays for it.
"""

from __future__ import annotations

import contextlib
import threading
import types

from .._errors import BackendNotRegisteredError
from ._launch_checks import is_coop_object

__all__ = ["DeferredActivation", "function_classes", "stateful_class", "group_classes", "refers_to_coop",
           "install_typeof_hooks", "rewrite_proxy"]

_DEPTH = 8  # attribute chains followed (``a.b.c.load``)
_NOTHING = object()


class DeferredActivation:
    """``ready()``: run the subclass's ``_install()`` once, thread-safely.

    A call made while the installation runs on the same thread returns at once (nothing it
    installs compiles a kernel); a failed installation is raised again by every later call
    rather than half-redone.

    ``_install`` fills ``_function_types`` (the groups, ThreadData, TempStorage); an
    operation's type is made, and its lowering registered, by ``_install_operation`` when a
    kernel first uses it, so a compile imports only the families it calls
    (``ops/_lookup.py``).
    """

    _instance = None  # per backend class: its one instance in the process (activate())
    # One lock for every backend, re-entrant: a backend whose construction registers the
    # other compiler's (an import hook firing inside it) must not wait for itself.
    _instance_lock = threading.RLock()

    @classmethod
    def activate(cls):
        """The process's one instance of this backend, made by the first call (under a lock):
        registering a compiler twice, from two threads, gives one backend."""
        with DeferredActivation._instance_lock:
            if cls.__dict__.get("_instance") is None:
                backend = cls()
                backend._register()  # a refused registration leaves no instance behind
                cls._instance = backend
            return cls._instance

    #: The backend's package: its ``_compat`` (version, private names) and ``hooks`` modules.
    package: str = ""
    #: Registration checks only the private names of the modules the compiler's import has
    #: loaded (``ready()`` checks all of them): for a compiler whose other modules are costly.
    check_loaded_names_only = False

    def __init__(self):
        self._ready = False
        self._activating = False
        self._failure = None
        self._ready_lock = threading.RLock()
        self._function_types: dict = {}

    def _register(self):
        """What registering any backend does before its compiler compiles: pin the CUDA
        libraries (NVRTC, nvJitLink and NVVM of one CUDA major), check the compiler's version
        and private names (UnsupportedBackendVersionError naming what is gone, before a hook
        patches anything), then install the backend's hooks."""
        from importlib import import_module

        from ..core import cuda_libraries

        compat = import_module("._compat", self.package)
        cuda_libraries.install_pinning()
        self.version = compat.check_version()
        compat.check_upstream_names(loaded_only=self.check_loaded_names_only)
        import_module(".hooks", self.package).install(self)

    @property
    def is_ready(self) -> bool:
        return self._ready

    def _compile_lock(self):
        """The compiler's compile lock (each backend's), taken before ``_ready_lock``.

        Compiles meet ``ready()`` holding the compile lock (the rewrite), and the
        installation may take it itself (a registry refresh); typeof and a helper
        thread (``ready_elsewhere``) call ``ready()`` without it.  Taking it first
        everywhere gives one lock order, so no two threads can each hold the lock the
        other waits for."""
        return contextlib.nullcontext()

    def ready(self) -> None:
        if self._ready:
            return
        with self._compile_lock(), self._ready_lock:
            if self._ready or self._activating:
                return
            if self._failure is not None:
                raise self._failure
            self._activating = True
            try:
                self._install()
                self._ready = True
            except Exception as exc:
                self._failure = exc
                raise
            finally:
                self._activating = False

    def ready_elsewhere(self) -> None:
        """``ready()`` on a helper thread (backends/_first_compile.py), ahead of the compile
        that needs it.  A failure is not kept: that compile runs ``ready()`` again and
        reports what goes wrong on its own thread, at the user's kernel."""
        try:
            self.ready()
        except Exception:  # noqa: BLE001 - the compile reports it
            with self._ready_lock:
                self._failure = None

    def _install(self):  # pragma: no cover - each backend's
        raise NotImplementedError

    def _install_operation(self, op_spec):  # pragma: no cover - each backend's
        """Register ``op_spec``'s lowering; return its stub's function type."""
        raise NotImplementedError

    def _type_of(self, obj):
        """The function type of a cuda.coop kernel function or construct (KeyError: none)."""
        ty = self._function_types.get(obj)
        return ty if ty is not None else self._operation_type(obj)

    def _operation_type(self, stub):
        from ..ops._lookup import spec_of

        op_spec = spec_of(stub)
        if op_spec is None:
            raise KeyError(stub)
        with self._compile_lock(), self._ready_lock:
            ty = self._function_types.get(stub)
            if ty is None:
                ty = self._install_operation(op_spec)
                self._function_types[stub] = ty
        return ty

    def numba_type_of(self, obj):
        """What ``_kernel_api``'s ``_numba_type_`` answers for the backend registered first."""
        self.ready()
        try:
            return self._type_of(obj)
        except (KeyError, TypeError):
            raise TypeError(f"{obj!r} is not a cuda.coop kernel function") from None


def function_classes() -> tuple:
    """Types whose instances a compiler types as cuda.coop functions (ThreadData and
    TempStorage are classes: typeof dispatches on their metaclass)."""
    from .._kernel_api import KernelConstructMeta, KernelFunction

    return (KernelFunction, KernelConstructMeta)


def stateful_class():
    from .._stateful import StatefulFunction

    return StatefulFunction


def group_classes() -> tuple:
    """The host group descriptors (``_types.register_group_typeofs`` types each)."""
    from .. import _groups

    return (_groups.BlockGroup, _groups.WarpGroup, _groups.WarpsGroup, _groups.SingleThreadGroup,
            _groups.GridGroup, _groups.ClusterGroup)


def _attribute(base, name):
    """``base.name`` when ``base`` is a module, a class or a (named) tuple, else ``_NOTHING``.

    A chain that reaches cuda.coop goes through such values (``coop.load``,
    ``cuda.coop.load``, ``mylib.coop.load``, ``OPS.load`` of a namedtuple); reading another
    object's attribute could run a user's property while a kernel that never uses cuda.coop
    compiles.
    """
    if not isinstance(base, (types.ModuleType, type, tuple)):
        return _NOTHING
    try:
        return getattr(base, name, _NOTHING)
    except Exception:  # a module whose lazy attribute fails: the compile reports it, not this
        return _NOTHING


def _value_of(ir, func_ir, var, depth=0):
    """The Python object ``var`` holds when it is a global or closure value or an attribute
    chain from one (``_attribute``), else ``_NOTHING``."""
    try:
        d = func_ir.get_definition(var)
    except Exception:  # several definitions, or none
        return _NOTHING
    if isinstance(d, (ir.Global, ir.FreeVar)):
        return d.value
    if depth >= _DEPTH:
        return _NOTHING
    if isinstance(d, ir.Var):
        return _value_of(ir, func_ir, d, depth + 1)
    if isinstance(d, ir.Expr) and d.op == "getattr":
        return _attribute(_value_of(ir, func_ir, d.value, depth + 1), d.attr)
    return _NOTHING


def _is_coop(obj) -> bool:
    try:
        return obj is not _NOTHING and is_coop_object(obj)
    except Exception:  # an object whose __module__ cannot be read is not cuda.coop's
        return False


def refers_to_coop(ir, func_ir) -> bool:
    """Whether a function's untyped IR (of the compiler whose IR module is ``ir``) reads a
    cuda.coop object, directly or as an attribute (``_attribute``).  Everything the call-site rewrites
    act on is one (the calls they tag, the methods called on what those return, the local
    arrays passed to them); a cuda.coop object reached otherwise (an item of a global
    tuple, an attribute of a user's object) is typed through ``install_typeof_hooks``."""
    for block in func_ir.blocks.values():
        for inst in block.body:
            if not isinstance(inst, ir.Assign):
                continue
            value = inst.value
            if isinstance(value, (ir.Global, ir.FreeVar)):
                obj = value.value
            elif isinstance(value, ir.Expr) and value.op == "getattr":
                obj = _attribute(_value_of(ir, func_ir, value.value), value.attr)
            else:
                continue
            if _is_coop(obj):
                return True
    return False


def install_typeof_hooks(typeof_impl, backend) -> None:
    """Register first-use typeof functions for every cuda.coop class: each makes ``backend``
    ready, whose ``_install`` registers the real ones over them, and answers through those."""

    def typeof_first_use(val, c):
        backend.ready()
        impl = typeof_impl.dispatch(type(val))
        if impl is typeof_first_use:  # only while ready() runs on this thread, which types nothing
            raise BackendNotRegisteredError(
                f"cuda.coop's {backend.name} backend was asked the type of {val!r} while it was being installed")
        return impl(val, c)

    for cls in (*function_classes(), stateful_class(), *group_classes()):
        typeof_impl.register(cls)(typeof_first_use)


def install_typeofs(typeof_impl, backend, *, stateful_type, device_dispatcher, register_group_typeofs) -> None:
    """Register the real typeof functions, over :func:`install_typeof_hooks`' first-use ones.

    An explicit registration wins over the ``_numba_type_`` fallback, which answers for the
    backend registered first: with both compilers' backends registered, each compiler still
    gets its own types.  A StatefulFunction's op is compiled once per compiler
    (``device_dispatcher(op)``), its dispatcher kept on the object under the backend's name:
    one compiler's dispatcher is not the other's.
    """
    attribute = "_" + backend.name.replace("-", "_") + "_dispatcher"

    def typeof_function(val, c):
        return backend._type_of(val)

    def typeof_stateful(val, c):
        dispatcher = getattr(val, attribute, None)
        if dispatcher is None:
            dispatcher = device_dispatcher(val.op)
            setattr(val, attribute, dispatcher)
        return stateful_type(val, dispatcher)

    for cls in function_classes():
        typeof_impl.register(cls)(typeof_function)
    typeof_impl.register(stateful_class())(typeof_stateful)
    register_group_typeofs(typeof_impl)


def rewrite_proxy(name, rewrite_base, ir, backend, load_impl):
    """A rewrite class to register in place of the backend's own: it runs ``load_impl()``'s
    (that rewrite class, imported by ``ready()``) once the backend is ready; until then a
    function that does not refer to cuda.coop is left alone, and one that does makes the
    backend ready."""

    class CoopRewrite(rewrite_base):
        def __init__(self, state=None):
            super().__init__(state)
            self.state = state
            self._impl = None
            self._skip = False  # the registry makes one instance per function and pass

        def match(self, func_ir, block, typemap, calltypes):
            if self._impl is None:
                if self._skip:
                    return False
                if not backend.is_ready:
                    if not refers_to_coop(ir, func_ir):
                        self._skip = True
                        return False
                    backend.ready()
                self._impl = load_impl()(self.state)
            return self._impl.match(func_ir, block, typemap, calltypes)

        def apply(self):
            return self._impl.apply()

    CoopRewrite.__name__ = CoopRewrite.__qualname__ = name
    return CoopRewrite
