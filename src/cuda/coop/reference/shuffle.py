"""Where each value comes from after ``coop.shuffle``.

Tile modes move items along a block's blocked tile: slots ``[threads, K]``,
thread ``t`` slot ``i`` at position ``t*K + i``.  ``"up"`` gives position ``p``
the item of ``p - distance``, ``"down"`` the item of ``p + distance``.  Scalar
modes move one value per thread: ``"offset"`` gives thread ``t`` the value of
thread ``t + distance``, ``"rotate"`` of ``(t + distance) mod threads``.

A slot or thread whose source is outside the tile or block keeps its own value,
so every result is defined.  ``distance`` may be one integer or one per thread.
"""

from __future__ import annotations

import numpy as np

__all__ = ["shuffle_sources", "shift_tile", "offset", "rotate", "shuffle"]


def _per_thread(distance, threads):
    """One Python int per thread (no overflow for any 64-bit distance)."""
    if np.ndim(distance) == 0:
        return [int(distance)] * threads
    return [int(x) for x in np.asarray(distance).reshape(threads)]


def shuffle_sources(mode: str, threads: int, items_per_thread: int = 1, distance=1) -> np.ndarray:
    """For each output slot ``(t, i)``, the input slot ``(t', i')`` it receives: ``[threads, K, 2]``.

    For the scalar modes ``K`` is 1.
    """
    k = items_per_thread
    dist = _per_thread(distance, threads)
    out = np.empty((threads, k, 2), dtype=np.int64)
    tile = threads * k
    for t in range(threads):
        for i in range(k):
            d = dist[t]
            if mode in ("up", "down"):
                src = t * k + i + (-d if mode == "up" else d)
                src = src if 0 <= src < tile else t * k + i
                out[t, i] = (src // k, src % k)
            elif mode == "offset":
                src = t + d
                out[t, i] = (src if 0 <= src < threads else t, i)
            elif mode == "rotate":
                out[t, i] = ((t + d) % threads, i)
            else:
                raise ValueError(f"unknown mode {mode!r}")
    return out


def shift_tile(slots, mode: str, distance=1) -> np.ndarray:
    """Slots ``[threads, K]`` after ``coop.shuffle(block, slots, mode="up"|"down")``."""
    slots = np.asarray(slots)
    threads, k = slots.shape
    src = shuffle_sources(mode, threads, k, distance)
    return slots[src[..., 0], src[..., 1]]


def offset(values, distance=1) -> np.ndarray:
    """One value per thread after ``mode="offset"``."""
    values = np.asarray(values)
    src = shuffle_sources("offset", len(values), 1, distance)
    return values[src[:, 0, 0]]


def rotate(values, distance=1) -> np.ndarray:
    """One value per thread after ``mode="rotate"``."""
    values = np.asarray(values)
    src = shuffle_sources("rotate", len(values), 1, distance)
    return values[src[:, 0, 0]]


def shuffle(value, mode: str, distance=1) -> np.ndarray:
    """Dispatch on ``mode``: ``value`` is ``[threads, K]`` for up/down, ``[threads]`` otherwise."""
    if mode in ("up", "down"):
        return shift_tile(value, mode, distance)
    return offset(value, distance) if mode == "offset" else rotate(value, distance)
