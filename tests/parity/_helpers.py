"""Shared helpers for the parity tests."""

from __future__ import annotations

import numpy as np


def poison(like, dtype=None, value=None):
    """An output array filled with a value no correct result holds."""
    dtype = np.dtype(dtype or like.dtype)
    if value is None:
        value = -7 if np.issubdtype(dtype, np.signedinteger) else (np.iinfo(dtype).max if dtype.kind == "u" else np.nan)
    shape = like if isinstance(like, (int, tuple)) else like.shape
    return np.full(shape, value, dtype=dtype)
