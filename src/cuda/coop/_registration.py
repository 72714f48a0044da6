"""Backend registration: explicit ``coop.register()`` and the automatic path at import."""

from __future__ import annotations

import os
import sys
import threading
import warnings

from ._env import truthy
from ._errors import CoopError, CudaCoopAutoRegistrationWarning, UnknownBackendError

__all__ = ["register", "active_backend", "maybe_auto_register", "BACKENDS"]

# Public name -> (module that implements it, module whose presence triggers auto-registration)
BACKENDS = {
    "numba-cuda-mlir": ("cuda.coop.backends.numba_mlir", "numba_cuda_mlir"),
}
_ALIASES = {"numba_cuda_mlir": "numba-cuda-mlir", "numba-mlir": "numba-cuda-mlir", "numba_mlir": "numba-cuda-mlir"}

_lock = threading.RLock()
_active = None


def _canonical(name) -> str:
    if not isinstance(name, str):
        raise UnknownBackendError(
            f"coop.register(): backend={name!r} must be a string; use 'numba-cuda-mlir'"
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

    Idempotent and independent of import order.  Raises
    :class:`~cuda.coop.BackendUnavailableError` when the compiler is not installed
    and :class:`~cuda.coop.UnsupportedBackendVersionError` when its version is
    outside the supported range.
    """
    global _active
    key = _canonical(backend)
    with _lock:
        if _active is not None:
            return None
        import importlib

        module = importlib.import_module(BACKENDS[key][0])
        _active = module.activate()
    return None


def active_backend():
    return _active


def maybe_auto_register() -> None:
    """Register backends whose compiler was imported before cuda.coop.

    Never raises: a failure becomes a CudaCoopAutoRegistrationWarning and
    ``import cuda.coop`` still succeeds.
    """
    if truthy(os.environ.get("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION")):
        return
    for name, (_impl, trigger) in BACKENDS.items():
        if trigger not in sys.modules:
            continue
        try:
            register(name)
        except CoopError as exc:
            warnings.warn(
                f"cuda.coop automatic DSL registration: {name} was not registered: {exc}",
                CudaCoopAutoRegistrationWarning,
                stacklevel=3,
            )
