"""The numba-cuda-mlir backend: typing, lowering and launch facts for cuda.coop calls.

``activate()`` checks the numba-cuda-mlir version (in ``_compat``, before any
registry is touched), then installs the typing templates, the lowerings and the
call-site rewrite, and refreshes the compiler's registries.
"""

from __future__ import annotations

import threading

__all__ = ["activate", "NumbaMlirBackend"]

_lock = threading.Lock()
_backend = None


class NumbaMlirBackend:
    name = "numba-cuda-mlir"

    def __init__(self):
        from ...core import cuda_libraries
        from . import _compat as C

        # Before anything compiles: NVRTC, nvJitLink and NVVM of one CUDA major.
        cuda_libraries.install_pinning()
        from . import group_methods, lowering, rewrite, typing  # noqa: F401  (rewrite registers itself)
        from .types import StatefulFunctionType, register_group_typeofs
        from ..._stateful import StatefulFunction

        self.version = C.check_version()
        self._function_types = typing.function_types()
        for template in (typing.GroupAttributes, typing.ThreadDataAttributes, typing.TempStorageAttributes):
            C.typing_registry.register_attr(template)
        lowering.install()
        group_methods.install()
        from . import launch

        launch.install()  # NoDeviceError instead of the driver's traceback for coop kernels

        from ..._kernel_api import KernelConstructMeta, KernelFunction

        # ThreadData and TempStorage are classes: typeof dispatches on their
        # metaclass, so the _numba_type_ property of KernelConstructMeta is not
        # consulted; register the metaclass instead.
        @C.typeof_impl.register(KernelConstructMeta)
        def _typeof_construct(val, c):
            return self._function_types[val]

        # An explicit registration wins over the ``_numba_type_`` fallback, which answers
        # for the backend registered first: with classic numba-cuda's backend registered
        # too, each compiler still gets its own types.
        @C.typeof_impl.register(KernelFunction)
        def _typeof_function(val, c):
            return self._function_types[val]

        @C.typeof_impl.register(StatefulFunction)
        def _typeof_stateful(val, c):
            dispatcher = getattr(val, "_numba_mlir_dispatcher", None)
            if dispatcher is None:
                op = val.op
                dispatcher = op if hasattr(op, "py_func") else C.cuda.jit(device=True)(op)
                val._numba_mlir_dispatcher = dispatcher
            return StatefulFunctionType(val, dispatcher)

        register_group_typeofs(C.typeof_impl)

        C.refresh_registries_if_needed()

    def numba_type_of(self, obj):
        try:
            return self._function_types[obj]
        except (KeyError, TypeError):
            raise TypeError(f"{obj!r} is not a cuda.coop kernel function") from None


def activate() -> NumbaMlirBackend:
    global _backend
    with _lock:
        if _backend is None:
            _backend = NumbaMlirBackend()
        return _backend


# Import the compiler here, after activate() exists: if cuda.coop's import hook is
# waiting for numba_cuda_mlir, it activates the backend now, while no backend module
# is half-initialized.  Otherwise a first import of a backend module (e.g. ``compile``)
# would import numba_cuda_mlir from inside ``_compat`` and the activation would meet
# ``_compat`` half-built.
try:
    import numba_cuda_mlir  # noqa: F401
except ImportError:  # reported by _compat.check_version() when the backend is used
    pass
