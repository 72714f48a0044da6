"""The classic numba-cuda backend (``from numba import cuda``, package ``numba-cuda`` 0.30).

``activate()`` checks numba-cuda's version (in ``_compat``, before any registry is
touched), then gives cuda.coop's kernel functions their numba-cuda types and installs
the typing templates and the llvmlite lowerings.  Types are registered in numba-cuda's
own ``typeof`` registry, so a kernel compiled by numba-cuda uses this backend even when
numba-cuda-mlir's backend is registered in the same process, and the reverse.
"""

from __future__ import annotations

import threading

__all__ = ["activate", "NumbaCudaBackend"]

_lock = threading.Lock()
_backend = None


class NumbaCudaBackend:
    name = "numba-cuda"

    def __init__(self):
        from ...core import cuda_libraries
        from . import _compat as C

        cuda_libraries.install_pinning()  # NVRTC, nvJitLink and NVVM of one CUDA major
        from . import group_methods, lowering, rewrite, scratch, typing  # noqa: F401  (rewrite registers itself)
        from .types import StatefulFunctionType, register_group_typeofs
        from ..._stateful import StatefulFunction
        from ..._kernel_api import KernelConstructMeta, KernelFunction

        self.version = C.check_version()
        self._function_types = typing.function_types()
        for template in (typing.GroupAttributes, typing.ThreadDataAttributes, typing.TempStorageAttributes):
            C.infer_getattr(template)
        lowering.install()
        group_methods.install()
        from .._launch_checks import check_launch_block

        C.install_coop_launches(check_launch_block)
        C.install_uncached_coop_kernels()
        C.install_post_lower_hook(scratch.finish_function)
        types = self._function_types

        # ThreadData and TempStorage are classes: typeof dispatches on their metaclass.
        @C.typeof_impl.register(KernelConstructMeta)
        def _typeof_construct(val, c):
            return types[val]

        # An explicit registration wins over the ``_numba_type_`` fallback, which answers
        # for the backend registered first: each compiler gets its own types.
        @C.typeof_impl.register(KernelFunction)
        def _typeof_function(val, c):
            return types[val]

        @C.typeof_impl.register(StatefulFunction)
        def _typeof_stateful(val, c):
            # Compiled by this compiler (a numba-cuda-mlir dispatcher is another object).
            dispatcher = getattr(val, "_numba_cuda_dispatcher", None)
            if dispatcher is None:
                op = val.op
                dispatcher = op if isinstance(op, C.CUDADispatcher) else C.cuda.jit(device=True)(
                    getattr(op, "py_func", op))
                val._numba_cuda_dispatcher = dispatcher
            return StatefulFunctionType(val, dispatcher)

        register_group_typeofs(C.typeof_impl)

        C.refresh_registries()

    def numba_type_of(self, obj):
        try:
            return self._function_types[obj]
        except (KeyError, TypeError):
            raise TypeError(f"{obj!r} is not a cuda.coop kernel function") from None


def activate() -> NumbaCudaBackend:
    global _backend
    with _lock:
        if _backend is None:
            _backend = NumbaCudaBackend()
        return _backend
