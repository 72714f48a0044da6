"""Who holds which tile item before and after ``coop.exchange``.

A group of ``threads`` threads with ``K`` items each holds a tile of
``threads * K`` items.  A *layout* maps slot ``i`` of thread ``t`` to a tile
position (:func:`tile_positions`); an exchange reads the tile in the mode's
source layout and hands it back in its target layout.  Scatter modes place
item ``(t, i)`` at tile position ``ranks[t, i]`` instead.

Slots are arrays of shape ``[threads, K]`` (row = thread).  Functions that
return results also return a boolean ``defined`` mask of the same shape:
``False`` where the operation leaves a slot unspecified (a scatter hole, or a
tile position several items were scattered to).
"""

from __future__ import annotations

import numpy as np

__all__ = ["MODE_LAYOUTS", "tile_positions", "to_tile", "from_tile", "exchange_sources", "exchange"]

WARP_THREADS = 32

# mode -> (source layout, target layout); "ranked" = positions come from ranks.
MODE_LAYOUTS = {
    "striped_to_blocked": ("striped", "blocked"),
    "blocked_to_striped": ("blocked", "striped"),
    "warp_striped_to_blocked": ("warp_striped", "blocked"),
    "blocked_to_warp_striped": ("blocked", "warp_striped"),
    "scatter_to_blocked": ("ranked", "blocked"),
    "scatter_to_striped": ("ranked", "striped"),
    "scatter_to_striped_guarded": ("ranked", "striped"),
    "scatter_to_striped_flagged": ("ranked", "striped"),
}


def tile_positions(layout: str, threads: int, items_per_thread: int) -> np.ndarray:
    """``[threads, K]`` array: the tile position slot ``i`` of thread ``t`` holds.

    ``blocked``: ``t*K + i``; ``striped``: ``t + i*threads``; ``warp_striped``:
    warp ``w = t // 32`` owns ``32*K`` consecutive positions and lane ``l`` holds
    ``w*32*K + i*32 + l`` (a block smaller than a warp counts as one warp).
    """
    k = items_per_thread
    t, i = np.meshgrid(np.arange(threads), np.arange(k), indexing="ij")
    if layout == "blocked":
        return t * k + i
    if layout == "striped":
        return t + i * threads
    if layout == "warp_striped":
        warp_threads = min(threads, WARP_THREADS)
        w, lane = t // warp_threads, t % warp_threads
        return w * warp_threads * k + i * warp_threads + lane
    raise ValueError(f"unknown layout {layout!r}")


def to_tile(slots, layout: str) -> np.ndarray:
    """The tile (1-D, in position order) that ``slots`` hold in ``layout``."""
    slots = np.asarray(slots)
    threads, k = slots.shape
    tile = np.empty(threads * k, dtype=slots.dtype)
    tile[tile_positions(layout, threads, k)] = slots
    return tile


def from_tile(tile, layout: str, threads: int) -> np.ndarray:
    """Slots ``[threads, K]`` that hold ``tile`` in ``layout``."""
    tile = np.asarray(tile)
    return tile[tile_positions(layout, threads, len(tile) // threads)]


def _group_sources(mode, threads, k, ranks, valid_flags):
    """Source slot (flat index ``t*K + i``) of each output slot of one group, or -1."""
    source, target = MODE_LAYOUTS[mode]
    tile_items = threads * k
    if source != "ranked":
        src_of_pos = np.empty(tile_items, dtype=np.int64)
        src_of_pos[tile_positions(source, threads, k).ravel()] = np.arange(tile_items)
        return src_of_pos[tile_positions(target, threads, k)], np.ones((threads, k), dtype=bool)
    ranks = np.asarray(ranks).reshape(threads, k).astype(np.int64, copy=False)
    keep = (ranks >= 0) & (ranks < tile_items)  # out-of-tile ranks are dropped, for every mode
    if mode == "scatter_to_striped_flagged":
        keep &= np.asarray(valid_flags).reshape(threads, k) != 0
    writers = np.zeros(tile_items, dtype=np.int64)
    src_of_pos = np.full(tile_items, -1, dtype=np.int64)
    flat = np.arange(tile_items).reshape(threads, k)
    np.add.at(writers, ranks[keep], 1)
    src_of_pos[ranks[keep]] = flat[keep]
    src_of_pos[writers != 1] = -1  # holes and collisions are unspecified
    out = src_of_pos[tile_positions(target, threads, k)]
    return out, out >= 0


def exchange_sources(mode: str, threads: int, items_per_thread: int, *, group_width=None, ranks=None,
                     valid_flags=None):
    """For each output slot ``(t, i)``: the input slot ``(t', i')`` it receives.

    Returns an int array ``[threads, K, 2]`` holding ``(t', i')``, ``(-1, -1)``
    for an unspecified slot.  ``group_width=None`` is a block; otherwise every
    logical warp of that many threads exchanges its own tile.  ``ranks`` and
    ``valid_flags`` are ``[threads, K]`` arrays, ranks relative to the group's tile.
    """
    k = items_per_thread
    width = threads if group_width is None else group_width
    result = np.full((threads, k, 2), -1, dtype=np.int64)
    for start in range(0, threads, width):
        rows = slice(start, start + width)
        sub_ranks = None if ranks is None else np.asarray(ranks).reshape(threads, k)[rows]
        sub_flags = None if valid_flags is None else np.asarray(valid_flags).reshape(threads, k)[rows]
        src, defined = _group_sources(mode, width, k, sub_ranks, sub_flags)
        result[rows, :, 0] = np.where(defined, start + src // k, -1)
        result[rows, :, 1] = np.where(defined, src % k, -1)
    return result


def exchange(slots, mode: str, *, group_width=None, ranks=None, valid_flags=None):
    """``(out, defined)``: every thread's slots after ``coop.exchange(..., mode=mode)``.

    ``slots`` is ``[threads, K]``; undefined output slots hold 0.
    """
    slots = np.asarray(slots)
    threads, k = slots.shape
    src = exchange_sources(mode, threads, k, group_width=group_width, ranks=ranks, valid_flags=valid_flags)
    defined = src[..., 0] >= 0
    out = np.zeros_like(slots)
    out[defined] = slots[src[..., 0][defined], src[..., 1][defined]]
    return out, defined
