"""Which member holds what after ``coop.reduce``/``coop.sum`` and ``coop.reduce_batched``.

A block of ``threads`` threads holds ``slots[t, i]``: slot ``i`` of thread ``t``
(a scalar per thread is one slot).  Payloads contribute in blocked order:
thread ``t`` holds tile items ``t*K .. t*K+K-1``.  A group is the whole block
(``group_width=None``) or each run of ``group_width`` consecutive threads (a
logical warp); member ``r`` of a group is its ``r``-th thread.  A
``group_width`` from 17 to 31 (``group_by(w, exhaustive=False)``) is a partial
logical warp: lanes ``0 .. w-1`` of each 32-lane warp; lanes ``w .. 31`` belong
to no group and their results are never defined.

Results come with a ``defined`` mask: where it is False the kernel's value is
unspecified (``reduce`` without ``broadcast`` defines only each group's first
member; ``reduce_batched`` leaves slots that name no batch undefined).
"""

from __future__ import annotations

import numpy as np

__all__ = ["OPERATORS", "combine", "fold", "reduce", "reduce_batched", "batch_of_slot"]

# Canonical operator names (cuda.coop.ops.reduce.OPERATORS maps every alias to one).
OPERATORS = {
    "sum": np.add,
    "prod": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
    "bit_and": np.bitwise_and,
    "bit_or": np.bitwise_or,
    "bit_xor": np.bitwise_xor,
}


def combine(op, a, b, dtype):
    """``a op b`` in ``dtype`` (integers wrap, as on the device).

    ``op`` is a canonical name or a Python function of two scalars (the
    ``py_func`` of a user device function).
    """
    dt = np.dtype(dtype)
    with np.errstate(all="ignore"):
        if isinstance(op, str):
            return dt.type(OPERATORS[op](dt.type(a), dt.type(b), dtype=dt))
        return dt.type(op(dt.type(a), dt.type(b)))


def fold(values, op, dtype):
    """``values[0] op values[1] op ...`` from the left (``values`` non-empty)."""
    values = np.asarray(values, dtype=dtype).reshape(-1)
    if isinstance(op, str) and op in OPERATORS:
        with np.errstate(all="ignore"):
            return np.dtype(dtype).type(OPERATORS[op].reduce(values, dtype=dtype))
    acc = values[0]
    for x in values[1:]:
        acc = combine(op, acc, x, dtype)
    return acc


def _groups(threads: int, group_width):
    width = threads if group_width is None else group_width
    if group_width is not None and 32 % group_width:
        # One partial logical warp per warp: its first group_width lanes.
        return width, [(w, w + width) for w in range(0, threads, 32)]
    return width, [(g, g + width) for g in range(0, threads, width)]


def reduce(slots, op, *, group_width=None, valid_items=None, broadcast=False):
    """Per-thread results of one block: ``(values[threads], defined[threads])``.

    Each group folds the first ``valid_items`` items of its tile (all when
    ``None`` or at least the tile size).  The result is defined in the group's
    first member, or in every member with ``broadcast``; never in a lane that
    is a member of no group (lanes ``w .. 31`` of a partial logical warp).
    """
    slots = np.asarray(slots)
    if slots.ndim == 1:
        slots = slots[:, None]
    threads, k = slots.shape
    width, groups = _groups(threads, group_width)
    values = np.zeros(threads, dtype=slots.dtype)
    defined = np.zeros(threads, dtype=bool)
    for start, stop in groups:
        tile = slots[start:stop].reshape(-1)
        n = len(tile) if valid_items is None else max(1, min(int(valid_items), len(tile)))
        result = fold(tile[:n], op, slots.dtype)
        if broadcast:
            values[start:stop] = result
            defined[start:stop] = True
        else:
            values[start] = result
            defined[start] = True
    return values, defined


def batch_of_slot(lane, slot, width: int, batches: int, output_layout: str):
    """The batch that slot ``slot`` of lane ``lane`` holds after ``reduce_batched``."""
    per_lane = -(-batches // width)
    if output_layout == "striped":
        return np.asarray(lane) + np.asarray(slot) * width
    if output_layout == "blocked":
        return np.asarray(lane) * per_lane + np.asarray(slot)
    raise ValueError(f"unknown output_layout {output_layout!r}")


def reduce_batched(slots, op, *, group_width: int, output_layout: str = "striped"):
    """``(out[threads, S], defined[threads, S])`` with ``S = ceil(B / group_width)``.

    Batch ``j`` of a (logical) warp is slot ``j`` of all its lanes; lane ``l``'s
    output slot ``s`` holds batch :func:`batch_of_slot` ``(l, s)`` when that is
    below ``B``.
    """
    slots = np.asarray(slots)
    threads, batches = slots.shape
    per_lane = -(-batches // group_width)
    out = np.zeros((threads, per_lane), dtype=slots.dtype)
    defined = np.zeros((threads, per_lane), dtype=bool)
    for start in range(0, threads, group_width):
        warp = slots[start:start + group_width]
        for lane in range(group_width):
            for s in range(per_lane):
                j = int(batch_of_slot(lane, s, group_width, batches, output_layout))
                if j < batches:
                    out[start + lane, s] = fold(warp[:, j], op, slots.dtype)
                    defined[start + lane, s] = True
    return out, defined
