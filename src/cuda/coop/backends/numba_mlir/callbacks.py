"""User device functions as operators, compiled by numba-cuda-mlir (see ``backends/_callbacks``)."""

from __future__ import annotations

from .._callbacks import function_fingerprint, resolve_callbacks as _resolve
from . import _compat as C

__all__ = ["resolve_callbacks", "function_fingerprint"]


def resolve_callbacks(plan, cc):
    """Compile a plan's callbacks: ``({role: symbol}, [link items])``."""
    return _resolve(plan, cc, C)
