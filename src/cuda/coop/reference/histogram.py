"""Which samples a block histogram counts, and which thread holds which counter.

Before the call, thread ``t`` of a block of ``threads`` threads holds
``items_per_thread`` samples (``slots[t, i]``).  The samples occupy tile
positions in the payload's ``layout`` (``"blocked"``: ``t*K + i``,
``"striped"``: ``t + i*threads``), which only matters for ``valid_items``.

After the call, thread ``t`` holds ``bins_per_thread`` counters, striped: slot
``i`` counts bin ``t + i*threads`` (:func:`counter_bin`); slots past ``bins``
hold 0 (or keep their value when accumulating).

A sample is counted when its tile position is below ``valid_items`` and
``0 <= sample < bins`` (:func:`counted_mask`); counters wrap modulo the counter
dtype, like the device's integer counters.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sample_position", "counted_mask", "counter_bin", "bin_counts", "histogram"]


def sample_position(layout: str, thread, item, threads: int, items_per_thread: int):
    """Tile position of sample slot ``item`` of ``thread`` (NumPy broadcasting allowed)."""
    if layout == "blocked":
        return np.asarray(thread) * items_per_thread + np.asarray(item)
    if layout == "striped":
        return np.asarray(thread) + np.asarray(item) * threads
    raise ValueError(f"unknown layout {layout!r}")


def counted_mask(slots, bins: int, *, valid_items=None, layout="blocked"):
    """Boolean ``[threads, items_per_thread]``: which samples are counted."""
    slots = np.asarray(slots)
    threads, k = slots.shape
    t, i = np.meshgrid(np.arange(threads), np.arange(k), indexing="ij")
    # Compare as Python-width integers: uint64 samples above 2**63 are out of range too.
    values = slots.astype(object)
    mask = (values >= 0) & (values < bins)
    if valid_items is not None:
        valid = max(int(valid_items), 0)
        mask &= sample_position(layout, t, i, threads, k) < valid
    return mask.astype(bool)


def counter_bin(thread, slot, threads: int):
    """The bin that counter ``slot`` of ``thread`` counts (striped)."""
    return np.asarray(thread) + np.asarray(slot) * threads


def bin_counts(slots, bins: int, *, valid_items=None, layout="blocked") -> np.ndarray:
    """The tile's histogram in bin order (int64, no wrap-around): ``np.bincount`` of the counted samples."""
    slots = np.asarray(slots)
    mask = counted_mask(slots, bins, valid_items=valid_items, layout=layout)
    return np.bincount(slots[mask].astype(np.int64), minlength=bins)[:bins]


def histogram(slots, bins: int, bins_per_thread: int, *, counter_dtype="int32", valid_items=None,
              layout="blocked", accumulate=None):
    """Counters ``[threads, bins_per_thread]`` that every thread holds after the call.

    ``slots`` is ``[threads, items_per_thread]``.  With ``accumulate`` (the
    running counters, same shape) the tile's counts are added to it (a copy is
    returned) and its slots past ``bins`` are kept; otherwise they are 0.
    """
    slots = np.asarray(slots)
    threads = slots.shape[0]
    dtype = np.dtype(counter_dtype)
    counts = bin_counts(slots, bins, valid_items=valid_items, layout=layout)
    t, i = np.meshgrid(np.arange(threads), np.arange(bins_per_thread), indexing="ij")
    b = counter_bin(t, i, threads)
    inside = b < bins
    tile = np.zeros((threads, bins_per_thread), dtype=np.int64)
    tile[inside] = counts[b[inside]]
    if accumulate is None:
        return _wrap(tile, dtype)
    out = np.array(accumulate, dtype=dtype, copy=True).reshape(threads, bins_per_thread)
    out[inside] = _wrap(out[inside].astype(object) + tile[inside].astype(object), dtype)
    return out


def _wrap(values, dtype):
    """Integer values reduced modulo 2**bits into ``dtype`` (as the device's counters)."""
    bits = 8 * np.dtype(dtype).itemsize
    v = np.asarray(values, dtype=object) % (1 << bits)
    if np.dtype(dtype).kind == "i":
        v = np.where(v >= (1 << (bits - 1)), v - (1 << bits), v)
    return np.asarray(v.astype(object), dtype=object).astype(np.int64 if np.dtype(dtype).kind == "i"
                                                             else np.uint64).astype(dtype)
