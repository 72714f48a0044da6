"""The classic numba-cuda backend (``from numba import cuda``, package ``numba-cuda`` 0.30).

Types are registered in numba-cuda's own ``typeof`` registry, so a kernel compiled by
numba-cuda uses this backend even when numba-cuda-mlir's backend is registered in the same
process, and the reverse.  Activated in two steps (backends/_deferred.py):

- ``activate()`` checks numba-cuda's version (in ``_compat``, before any registry is
  touched) and every private name of ``_compat.UPSTREAM`` (UnsupportedBackendVersionError
  naming what is gone), pins the CUDA libraries and installs ``hooks.py``'s hooks: first-use
  typeof functions, the payload-dtype rewrites, the literal-argument retry and the launches
  numba-cuda cannot make.
- ``ready()`` gives cuda.coop's kernel functions their numba-cuda types and installs the
  typing templates, the llvmlite lowerings and the group methods, the first time a compile
  meets cuda.coop.
"""

from __future__ import annotations

from .._deferred import DeferredActivation

__all__ = ["activate", "NumbaCudaBackend"]

class NumbaCudaBackend(DeferredActivation):
    name = "numba-cuda"
    package = __name__  # its whole UPSTREAM is checked at registration: ``import numba.cuda`` loaded it

    def _compile_lock(self):
        from . import _compat as C

        return C.global_compiler_lock

    def _install(self):
        from . import _compat as C

        C.check_upstream_names()  # done at registration: a dictionary lookup per entry now
        from . import group_methods, lowering, scratch, typing
        from .._deferred import install_typeofs
        from .types import StatefulFunctionType, register_group_typeofs

        self._function_types.update(typing.function_types())  # an operation's: _install_operation
        for template in (typing.GroupAttributes, typing.ThreadDataAttributes, typing.TempStorageAttributes):
            C.infer_getattr(template)
        lowering.install()
        C.install_final_link()  # 32-bit shared addresses; an earlier process's cubin from disk
        group_methods.install()
        C.install_post_lower_hook(scratch.finish_function)

        # A numba-cuda-mlir dispatcher is another compiler's object: compile its Python function.
        install_typeofs(C.typeof_impl, self, stateful_type=StatefulFunctionType, register_group_typeofs=register_group_typeofs,
                        device_dispatcher=lambda op: op if isinstance(op, C.CUDADispatcher) else C.cuda.jit(device=True)(
                            getattr(op, "py_func", op)))

        # Each numba-cuda compile refreshes its contexts when it starts; this one is already
        # running (the rewrite or typeof that called ready() is part of it).
        C.refresh_registries()

    def _install_operation(self, op_spec):
        from . import _compat as C
        from . import lowering, typing

        lowering.register_operation(op_spec)
        C.refresh_registries()  # the compile under way is typing: lowering comes next
        return typing.op_function_type(op_spec)


activate = NumbaCudaBackend.activate
