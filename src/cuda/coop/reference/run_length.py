"""Which thread holds which decoded item of a block's runs.

Before the call, thread ``t`` of a block of ``threads`` threads holds runs
``t*R .. t*R + R-1`` (``run_values[t, j]``, ``run_lengths[t, j]``); the block's
runs in that (blocked) order decode to ``np.repeat(values, lengths)``, with
negative lengths counted as 0 (:func:`clamped_lengths`).

A window of ``threads * D`` decoded items is blocked: slot ``i`` of thread
``t`` holds decoded position ``window_offset + t*D + i`` (:func:`window_position`);
positions at or past the total hold ``oob_default``.
``decode_into`` puts decoded item ``p`` at ``destination[destination_offset + p]``
when that index is inside the array.
"""

from __future__ import annotations

import bisect

import numpy as np

__all__ = ["clamped_lengths", "run_offsets", "decode", "run_of_position", "window_position",
           "decode_window", "decode_into"]


def clamped_lengths(run_lengths) -> np.ndarray:
    """The run lengths in run order (flattened, blocked), negative ones as 0, as Python-width ints."""
    lengths = np.asarray(run_lengths).reshape(-1).astype(object)
    return np.array([max(int(x), 0) for x in lengths], dtype=object)


def run_offsets(run_lengths):
    """``(offsets, total)``: each run's first decoded position (exclusive sum) and the total."""
    lengths = clamped_lengths(run_lengths)
    ends = np.cumsum(lengths) if len(lengths) else np.array([], dtype=object)
    total = int(ends[-1]) if len(ends) else 0
    return np.concatenate([[0], ends[:-1]]).astype(object) if len(ends) else ends, total


def decode(run_values, run_lengths) -> np.ndarray:
    """The whole decoded sequence (``np.repeat`` of the values by the clamped lengths)."""
    values = np.asarray(run_values).reshape(-1)
    return np.repeat(values, clamped_lengths(run_lengths).astype(np.int64))


def run_of_position(run_lengths, positions):
    """The run index of each decoded position (``-1`` at or past the total)."""
    offsets, total = run_offsets(run_lengths)
    positions = np.asarray(positions, dtype=object)
    lengths = clamped_lengths(run_lengths)
    # The last run with offset <= p that is not empty: the run that holds p.
    nonempty = np.nonzero(lengths > 0)[0]
    starts = [int(offsets[r]) for r in nonempty]  # Python ints: totals may pass 2**63
    flat = np.array([int(p) for p in positions.reshape(-1)], dtype=object)
    out = np.full(flat.shape, -1, dtype=np.int64)
    for n, p in enumerate(flat):
        if 0 <= p < total:
            out[n] = nonempty[bisect.bisect_right(starts, p) - 1]
    return out.reshape(positions.shape)


def window_position(thread, item, decoded_items_per_thread: int, window_offset: int = 0):
    """Decoded position of slot ``item`` of ``thread`` in a window (blocked)."""
    # Python ints: a uint64 window offset near 2**64 is past every total, never wrapped.
    rel = np.asarray(thread).astype(object) * decoded_items_per_thread + np.asarray(item).astype(object)
    return max(int(window_offset), 0) + rel


def decode_window(run_values, run_lengths, threads: int, decoded_items_per_thread: int, *, window_offset=0,
                  oob_default=0, relative_dtype=None):
    """``(window, relative, total)`` of one block.

    ``window`` is ``[threads, D]`` (dtype of the values); ``relative`` is the
    index of each item within its run as ``relative_dtype`` (all bits set past
    the total: the maximum of an unsigned dtype, -1 of a signed one), or None
    when ``relative_dtype`` is None.
    """
    values = np.asarray(run_values).reshape(-1)
    offsets, total = run_offsets(run_lengths)
    d = decoded_items_per_thread
    t, i = np.meshgrid(np.arange(threads), np.arange(d), indexing="ij")
    pos = window_position(t, i, d, window_offset)
    runs = run_of_position(run_lengths, pos)
    inside = runs >= 0
    window = np.full((threads, d), oob_default, dtype=values.dtype)
    window[inside] = values[runs[inside]]
    relative = None
    if relative_dtype is not None:
        rdt = np.dtype(relative_dtype)
        relative = np.full((threads, d), np.iinfo(rdt).max if rdt.kind == "u" else -1, dtype=rdt)
        index = [int(p) - int(offsets[r]) for p, r in zip(pos[inside], runs[inside])]
        # converted as C++ does (modulo 2**bits): an index may pass 2**63 with uint64 lengths
        wrapped = np.array([i % 2**64 for i in index], dtype=np.uint64)
        relative[inside] = wrapped.astype(rdt) if index else []
    return window, relative, total


def decode_into(run_values, run_lengths, destination, *, destination_offset=0):
    """``(destination', total)``: a copy of ``destination`` with the decoded items that fit written."""
    decoded = decode(run_values, run_lengths)
    out = np.array(destination, copy=True)
    if int(destination_offset) >= len(out):  # a uint64 offset up to 2**64 - 1 too: nothing fits
        return out, len(decoded)
    index = int(destination_offset) + np.arange(len(decoded), dtype=np.int64)
    fits = (index >= 0) & (index < len(out))
    out[index[fits]] = decoded[fits]
    return out, len(decoded)
