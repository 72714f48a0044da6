"""The numba-cuda-mlir backend: typing, lowering and launch facts for cuda.coop calls.

Activated in two steps (backends/_deferred.py), so that registering it (``import cuda.coop``
beside numba_cuda_mlir, or ``coop.register()``) stays cheap:

- ``activate()`` checks the numba-cuda-mlir version (in ``_compat``, before any registry is
  touched) and the private names of ``_compat.UPSTREAM`` in the modules already imported,
  pins the CUDA libraries and installs ``hooks.py``'s hooks: first-use typeof functions, the
  call-site rewrites and the launch hook.  It imports no module of numba-cuda-mlir that
  ``import numba_cuda_mlir`` has not.
- ``ready()`` checks every private name of ``_compat.UPSTREAM`` (UnsupportedBackendVersionError
  naming what is gone), installs the rest (typing templates, lowerings, group methods, the
  real typeof functions) and refreshes the compiler's registries, the first time a compile
  meets cuda.coop.
"""

from __future__ import annotations

from .._deferred import DeferredActivation

__all__ = ["activate", "NumbaMlirBackend"]

class NumbaMlirBackend(DeferredActivation):
    name = "numba-cuda-mlir"
    package = __name__
    # Registration imports no module ``import numba_cuda_mlir`` did not; the launch hook
    # checks descriptor's names, ready() all of them.
    check_loaded_names_only = True

    def _compile_lock(self):
        from . import _compat as C

        return C.global_compiler_lock

    def _install(self):
        from . import _compat as C

        C.check_upstream_names()  # every private name, before ready() patches or registers anything
        C.load_compiler()
        from . import group_methods, lowering, typing
        from .._deferred import install_typeofs
        from .types import StatefulFunctionType, register_group_typeofs

        self._function_types.update(typing.function_types())  # an operation's: _install_operation
        for template in (typing.GroupAttributes, typing.ThreadDataAttributes, typing.TempStorageAttributes):
            C.typing_registry.register_attr(template)
        lowering.install()
        C.install_final_link()  # 32-bit shared addresses; an earlier process's cubin from disk
        with C.one_registry_refresh():  # one refresh below, not one per group method
            group_methods.install()

        install_typeofs(C.typeof_impl, self, stateful_type=StatefulFunctionType, register_group_typeofs=register_group_typeofs,
                        device_dispatcher=lambda op: op if hasattr(op, "py_func") else C.cuda.jit(device=True)(op))

        C.refresh_registries_if_needed()

    def _install_operation(self, op_spec):
        from . import _compat as C
        from . import lowering, typing

        lowering.register_operation(op_spec)
        # Typing is under way: the lowering must be in the target context before this
        # kernel is lowered.
        C.refresh_registries_if_needed(typing=False)
        return typing.op_function_type(op_spec)


activate = NumbaMlirBackend.activate


# Import the compiler here, after activate() exists: if cuda.coop's import hook is
# waiting for numba_cuda_mlir, it activates the backend now, while no backend module
# is half-initialized.  Otherwise a first import of a backend module (e.g. ``compile``)
# would import numba_cuda_mlir from inside ``_compat`` and the activation would meet
# ``_compat`` half-built.
try:
    import numba_cuda_mlir  # noqa: F401
except ImportError:  # reported by _compat.check_version() when the backend is used
    pass
