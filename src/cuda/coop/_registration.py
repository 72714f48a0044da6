"""Backend registration: explicit ``coop.register()`` and the automatic path at import."""

from __future__ import annotations

import os
import sys
import threading
import warnings

from ._env import truthy
from ._errors import CoopError, CudaCoopAutoRegistrationWarning, UnknownBackendError

__all__ = ["register", "active_backend", "active_backends", "maybe_auto_register", "call_after_import", "BACKENDS"]

# Public name -> (module that implements it, module whose presence triggers auto-registration).
# Several may be active at once: each compiler types cuda.coop's functions through its own
# ``typeof`` registry, so each kernel uses the backend of the compiler that compiles it.
BACKENDS = {
    "numba-cuda-mlir": ("cuda.coop.backends.numba_mlir", "numba_cuda_mlir"),
    "numba-cuda": ("cuda.coop.backends.numba_cuda", "numba.cuda"),
}
_ALIASES = {"numba_cuda_mlir": "numba-cuda-mlir", "numba-mlir": "numba-cuda-mlir", "numba_mlir": "numba-cuda-mlir",
            "numba_cuda": "numba-cuda", "numba.cuda": "numba-cuda", "classic": "numba-cuda"}

_lock = threading.RLock()
_active: dict = {}  # name -> backend object, in registration order
_registering: set = set()


def _canonical(name) -> str:
    if not isinstance(name, str):
        raise UnknownBackendError(
            f"coop.register(): backend={name!r} must be a string; use 'numba-cuda-mlir' or 'numba-cuda'"
        )
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in BACKENDS:
        raise UnknownBackendError(
            f"coop.register(): backend={name!r} is not a known backend; use "
            + ", ".join(repr(b) for b in BACKENDS)
        )
    return key


def register(backend: str = "numba-cuda-mlir") -> None:
    """Activate a compiler backend so kernels can call cuda.coop operations.

    ``backend`` is ``"numba-cuda-mlir"`` (default) or ``"numba-cuda"`` (classic
    numba-cuda, ``from numba import cuda``); both may be registered at once.
    Idempotent and independent of import order.  Raises
    :class:`~cuda.coop.BackendUnavailableError` when the compiler is not installed
    and :class:`~cuda.coop.UnsupportedBackendVersionError` when its version is
    outside the supported range.
    """
    key = _canonical(backend)
    with _lock:
        if key in _active or key in _registering:
            # Already active, or this is the import hook firing while the backend
            # itself imports the compiler (re-entrant call on this thread).
            return None
        _registering.add(key)
        try:
            import importlib

            module = importlib.import_module(BACKENDS[key][0])
            _active[key] = module.activate()
        finally:
            _registering.discard(key)
    return None


def active_backend():
    """The first registered backend (it answers ``_numba_type_`` lookups), or None."""
    return next(iter(_active.values()), None)


def active_backends() -> dict:
    """Every registered backend, by name."""
    return dict(_active)


def _auto_disabled() -> bool:
    return truthy(os.environ.get("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION"))


def _try_register(name: str, stacklevel: int) -> None:
    try:
        register(name)
    except CoopError as exc:
        warnings.warn(
            f"cuda.coop automatic DSL registration: {name} was not registered: {exc}",
            CudaCoopAutoRegistrationWarning,
            stacklevel=stacklevel,
        )


def maybe_auto_register() -> None:
    """Register the backends whose compiler is imported, now or later.

    A compiler already imported is registered at once.  For one imported later, an
    import hook registers it right after its top-level module has run, so the
    import order of ``cuda.coop`` and ``numba_cuda_mlir`` does not matter.
    ``CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION`` turns both paths off.  Never
    raises: a failure becomes a CudaCoopAutoRegistrationWarning.
    """
    if _auto_disabled():
        return
    for name, (_impl, trigger) in BACKENDS.items():
        if trigger in sys.modules:
            _try_register(name, stacklevel=4)
        else:
            call_after_import(trigger, _register_after_import(name))


def _register_after_import(name: str):
    def callback():
        if not _auto_disabled():
            _try_register(name, stacklevel=3)

    return callback


def call_after_import(module: str, callback) -> None:
    """Call ``callback()`` once ``module`` is imported: now if it is, else right after the
    module's code has run (a backend installs a hook into a compiler module this way
    without importing that module itself)."""
    with _lock:
        if module not in sys.modules:
            for hook in _hooks:
                if hook.module == module:
                    hook.callbacks.append(callback)
                    return
            hook = _AfterImport(module, callback)
            _hooks.append(hook)
            sys.meta_path.insert(0, hook)
            return
    callback()


class _AfterImport:
    """Wraps the loader of one module to call its callbacks after the module ran.

    A meta path finder only needs ``find_spec`` (the import system and
    ``importlib.invalidate_caches`` look methods up, not the type); not deriving from
    ``importlib.abc.MetaPathFinder`` keeps ``importlib.abc``, and the
    ``importlib.resources`` it imports, out of ``import cuda.coop``.
    """

    def __init__(self, module: str, callback):
        self.module = module
        self.callbacks = [callback]

    def find_spec(self, fullname, path, target=None):
        if fullname != self.module:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        hook = self

        class _Loader:
            # Everything but exec_module is the original loader's (resource
            # readers, get_data, ...), so the module sees no difference.
            def __getattr__(self, name):
                return getattr(loader, name)

            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                module.__spec__.loader = loader
                module.__loader__ = loader
                loader.exec_module(module)
                _remove_hook(hook)
                for callback in hook.callbacks:
                    try:
                        callback()
                    except Exception as exc:  # never fail the compiler's own import
                        warnings.warn(f"cuda.coop: after importing {fullname}: {type(exc).__name__}: {exc}",
                                      CudaCoopAutoRegistrationWarning, stacklevel=2)

        spec.loader = _Loader()
        return spec


_hooks: list = []


def _remove_hook(hook) -> None:
    with _lock:
        if hook in _hooks:
            _hooks.remove(hook)
        if hook in sys.meta_path:
            sys.meta_path.remove(hook)
