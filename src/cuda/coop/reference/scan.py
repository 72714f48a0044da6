"""What each member holds after a scan, and the running scan of a tile loop.

Layout as in :mod:`cuda.coop.reference.reduce`: ``slots[t, i]`` is slot ``i`` of
thread ``t``; a group's tile is its members' slots in blocked order (member
``r`` holds items ``r*K .. r*K+K-1``), and each member gets back the scan
results of its own items.

- inclusive: item ``i`` receives ``x[0] op ... op x[i]``;
- exclusive: item ``i`` receives ``init op x[0] op ... op x[i-1]`` (item 0:
  ``init``; sums default to 0);
- a block prefix ``p`` (from a prefix callback) is combined in front of every
  item: exclusive item 0 is ``p``.
"""

from __future__ import annotations

import numpy as np

from .reduce import combine, fold

__all__ = ["scan", "running_scan"]


def _scan_tile(tile, op, mode, seed, dtype):
    """Scan one group's tile; ``seed`` (or None) is combined in front of every item."""
    out = np.zeros(len(tile), dtype=dtype)
    defined = np.ones(len(tile), dtype=bool)
    acc = seed
    for i, x in enumerate(tile):
        if mode == "exclusive":
            if acc is None:
                defined[i] = False
            else:
                out[i] = acc
        acc = x if acc is None else combine(op, acc, x, dtype)
        if mode == "inclusive":
            out[i] = acc
    return out, defined


def scan(slots, op, *, mode, initial_value=None, group_width=None, valid_items=None, prefix=None):
    """Scan every group of one block.

    Parameters
    ----------
    slots : array ``[threads, K]`` (or ``[threads]`` for one scalar per thread)
    op : canonical operator name (``"sum"``, ``"max"``, ...) or a Python function
    mode : ``"exclusive"`` or ``"inclusive"``
    initial_value : exclusive scans' item-0 value (sums default to 0)
    group_width : None for the block, else the logical warp width
    valid_items : warp groups: only the first ``valid_items`` items are valid;
        later results are undefined and the aggregate covers the valid ones
    prefix : callable ``prefix(aggregate) -> seed`` (a block prefix callback);
        called once per group, in group order

    Returns
    -------
    ``(out, defined, aggregate)``: ``out``/``defined`` shaped like ``slots``;
    ``aggregate[threads]``, each member's copy of its group's aggregate
    (excluding ``initial_value``).
    """
    slots = np.asarray(slots)
    scalar = slots.ndim == 1
    if scalar:
        slots = slots[:, None]
    threads, k = slots.shape
    dtype = slots.dtype
    width = threads if group_width is None else group_width
    out = np.zeros_like(slots)
    defined = np.zeros(slots.shape, dtype=bool)
    aggregate = np.zeros(threads, dtype=dtype)
    for start in range(0, threads, width):
        tile = slots[start:start + width].reshape(-1)
        n = len(tile) if valid_items is None else max(1, min(int(valid_items), len(tile)))
        agg = fold(tile[:n], op, dtype)
        if prefix is not None:
            with np.errstate(all="ignore"):
                seed = prefix(agg)
        elif mode == "exclusive":
            seed = initial_value if initial_value is not None else (0 if op == "sum" else None)
        else:
            seed = None
        if seed is not None:
            # The device converts the callback's result to the scan's type (integers wrap).
            with np.errstate(all="ignore"):
                seed = np.asarray(seed).astype(dtype)[()]
        res, ok = _scan_tile(tile, op, mode, seed, dtype)
        ok[n:] = False
        out[start:start + width] = res.reshape(-1, k)
        defined[start:start + width] = ok.reshape(-1, k)
        aggregate[start:start + width] = agg
    if scalar:
        return out[:, 0], defined[:, 0], aggregate
    return out, defined, aggregate


def running_scan(values, mode="inclusive", initial_value=0):
    """The scan of a whole array that a tile loop with a stateful prefix produces."""
    values = np.asarray(values)
    with np.errstate(all="ignore"):
        inclusive = np.cumsum(values, dtype=values.dtype)
    if mode == "inclusive":
        return inclusive + values.dtype.type(initial_value)
    out = np.empty_like(values)
    out[:1] = initial_value
    out[1:] = inclusive[:-1] + values.dtype.type(initial_value)
    return out
