"""TopK of a block's tile: which keys are selected and where they end up.

Before: thread ``t`` holds tile positions ``t*K .. t*K + K-1`` (blocked).  After:
tile positions ``0 .. m-1`` of the result, ``m = min(k, valid_items)`` (clamped
to ``[0, N]``), hold the ``k`` smallest (or largest) of the first
``valid_items`` keys, position ``p`` in thread ``p // K`` slot ``p % K``; later
positions are unspecified.  The selection is unordered by contract; ties at the
``k``-th key go to earlier tile positions.  Keys compare in radix order
(:func:`cuda.coop.reference.radix.ordered_bits`).
"""

from __future__ import annotations

import numpy as np

from .radix import ordered_bits

__all__ = ["selected_positions", "topk"]


def _clamp(value, n):
    return n if value is None else int(min(max(value, 0), n))


def selected_positions(keys, k, *, largest=False, valid_items=None) -> np.ndarray:
    """Tile positions of the selected keys, best first (ties: earlier position first)."""
    keys = np.asarray(keys).reshape(-1)
    n = len(keys)
    valid = _clamp(valid_items, n)
    count = min(_clamp(k, n), valid)
    order = ordered_bits(keys[:valid])
    if largest:
        order = ~order
    return np.argsort(order, kind="stable")[:count]


def topk(keys, values=None, *, k, largest=False, valid_items=None):
    """The result slots ``[T, K]`` and ``defined`` mask of one block's TopK.

    ``keys``/``values``: slots before the call ``[T, K]``.  Returns
    ``(keys, values, defined)``; undefined slots hold zeros here.
    """
    keys = np.asarray(keys)
    shape = keys.shape
    pos = selected_positions(keys, k, largest=largest, valid_items=valid_items)
    out_k = np.zeros(keys.size, dtype=keys.dtype)
    out_k[: len(pos)] = keys.reshape(-1)[pos]
    out_v = None
    if values is not None:
        values = np.asarray(values)
        out_v = np.zeros(values.size, dtype=values.dtype)
        out_v[: len(pos)] = values.reshape(-1)[pos]
        out_v = out_v.reshape(shape)
    defined = (np.arange(keys.size) < len(pos)).reshape(shape)
    return out_k.reshape(shape), out_v, defined
