"""Random inputs shared by the family tests (random data over the whole range, never zeros only)."""

from __future__ import annotations

import numpy as np


def full_range(rng, dtype, n):
    """``n`` values of ``dtype``: integers over the type's whole range (both ends included,
    so sign and overflow paths are exercised), floats normal with spread 1000."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.standard_normal(n) * 1000).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
