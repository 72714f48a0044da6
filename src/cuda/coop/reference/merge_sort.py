"""Merge sort: which thread owns which key (and value) before and after the sort.

Before: thread ``t`` of a group of ``G`` threads holds tile positions
``t*K .. t*K + K-1`` of its group's tile (the blocked layout).  After: the same
slots hold the sorted tile, again blocked, so sorted position ``p`` belongs to
thread ``p // K``, slot ``p % K``.  A block is one group; with
``group_width=w`` each logical warp of ``w`` threads sorts its own tile.

Order: the keys' ``<``, with NaN after every number (as ``np.sort``) and -0.0
equal to +0.0; ``descending`` reverses it.  Stable: equal keys keep their tile
order.  With ``valid_items`` only that prefix of the tile is sorted; the
slots past it hold ``oob_default`` (or are undefined: ``None`` in ``defined``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["sort_permutation", "sort_tile", "merge_sort", "merge_stages"]


def _dense_rank(keys: np.ndarray) -> np.ndarray:
    """Rank of each key among the distinct keys (NaNs last and equal, -0.0 == +0.0)."""
    _unique, inverse = np.unique(keys, return_inverse=True)
    return inverse.reshape(-1)


def sort_permutation(keys, *, descending: bool = False, sort_key=None) -> np.ndarray:
    """Tile positions in sorted order: ``keys[perm]`` is the stably sorted tile.

    ``sort_key`` (a vectorized function of the keys) stands for a ``compare_op``
    that compares ``sort_key(a) < sort_key(b)``.
    """
    keys = np.asarray(keys).reshape(-1)
    rank = _dense_rank(keys if sort_key is None else np.asarray(sort_key(keys)))
    return np.argsort(-rank if descending else rank, kind="stable")


def sort_tile(keys, values=None, *, descending=False, valid_items=None, oob_default=None, sort_key=None):
    """Sort one group's tile (1-D, tile order); returns ``(keys, values, defined)``.

    ``defined`` marks result positions the operation specifies: all of them for a
    full tile; with ``valid_items`` the sorted prefix, plus the keys past it when
    ``oob_default`` is given (values past it are never defined).
    """
    keys = np.asarray(keys).reshape(-1)
    n = len(keys)
    valid = n if valid_items is None else int(min(max(valid_items, 0), n))
    perm = sort_permutation(keys[:valid], descending=descending, sort_key=sort_key)
    out_keys = keys.copy()
    out_keys[:valid] = keys[:valid][perm]
    key_defined = np.arange(n) < valid
    if oob_default is not None and valid < n:
        out_keys[valid:] = oob_default
        key_defined[:] = True
    out_values = None
    value_defined = np.arange(n) < valid
    if values is not None:
        values = np.asarray(values).reshape(-1)
        out_values = values.copy()
        out_values[:valid] = values[:valid][perm]
    return out_keys, out_values, (key_defined, value_defined)


def merge_sort(keys, values=None, *, group_width=None, descending=False, valid_items=None, oob_default=None,
               sort_key=None):
    """Slots ``[block_threads, K]`` of every thread of one block after the sort.

    ``keys`` (and ``values``) are the slots before the call, ``[block_threads, K]``.
    ``group_width=None`` sorts the block's tile; otherwise each logical warp of that
    width sorts its own tile and ``valid_items`` applies to each warp's tile.
    Returns ``(keys, values, (key_defined, value_defined))`` with the same shape.
    """
    keys = np.asarray(keys)
    threads, k = keys.shape
    width = threads if group_width is None else group_width
    out_k = np.empty_like(keys)
    out_v = None if values is None else np.empty_like(np.asarray(values))
    kdef = np.zeros(keys.shape, dtype=bool)
    vdef = np.zeros(keys.shape, dtype=bool)
    for g in range(threads // width):
        rows = slice(g * width, (g + 1) * width)
        tile_v = None if values is None else np.asarray(values)[rows].reshape(-1)
        sk, sv, (dk, dv) = sort_tile(keys[rows].reshape(-1), tile_v, descending=descending,
                                     valid_items=valid_items, oob_default=oob_default, sort_key=sort_key)
        out_k[rows] = sk.reshape(width, k)
        kdef[rows] = dk.reshape(width, k)
        vdef[rows] = dv.reshape(width, k)
        if out_v is not None:
            out_v[rows] = sv.reshape(width, k)
    return out_k, out_v, (kdef, vdef)


def merge_stages(keys, *, group_width=None, descending=False, sort_key=None):
    """How the sort gets there: the slots ``[threads, K]`` after each step.

    Returns ``[(label, slots, run_threads)]``: the input, each thread's own items
    sorted, then after each merge round runs of 2, 4, ... threads (within each
    group) sorted, the last being the result.  ``run_threads`` is the number of
    threads whose items form one sorted run at that step.
    """
    keys = np.asarray(keys)
    threads, k = keys.shape
    width = threads if group_width is None else group_width
    stages = [("input", keys.copy(), 0)]
    run = 1
    while True:
        out = np.empty_like(keys)
        for start in range(0, threads, run):
            rows = slice(start, start + run)
            tile = keys[rows].reshape(-1)
            out[rows] = tile[sort_permutation(tile, descending=descending, sort_key=sort_key)].reshape(-1, k)
        label = "each thread sorts its items" if run == 1 else f"merge: runs of {run} threads"
        stages.append((label, out, run))
        if run >= width:
            return stages
        run *= 2
