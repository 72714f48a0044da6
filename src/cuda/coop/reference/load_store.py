"""Who owns which item after a load, and where a store puts each item.

A group of ``threads`` threads (a block, or one (logical) warp) moves a tile of
``threads * items_per_thread`` items.  ``owner_index(layout, t, i)`` is the tile
position that thread ``t``'s slot ``i`` corresponds to.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LAYOUT_OF_ALGORITHM", "tile_position", "load_tile", "store_tile", "load", "store"]

LAYOUT_OF_ALGORITHM = {
    "direct": "blocked",
    "striped": "striped",
    "vectorize": "blocked",
    "transpose": "blocked",
    "warp_transpose": "blocked",
    "warp_transpose_timesliced": "blocked",
}


def tile_position(layout: str, thread, item, threads: int, items_per_thread: int):
    """Tile position of slot ``item`` of ``thread`` (NumPy broadcasting allowed)."""
    if layout == "blocked":
        return np.asarray(thread) * items_per_thread + np.asarray(item)
    if layout == "striped":
        return np.asarray(thread) + np.asarray(item) * threads
    raise ValueError(f"unknown layout {layout!r}")


def _valid(valid_items, tile):
    if valid_items is None:
        return tile
    return int(min(max(valid_items, 0), tile))


def load_tile(tile_values, algorithm, threads, items_per_thread, *, valid_items=None,
              oob_default=None, initial=None):
    """Per-thread slots ``[threads, items_per_thread]`` after loading one tile.

    Slots past ``valid_items`` hold ``oob_default`` if given, else ``initial``
    (their previous contents).
    """
    tile = threads * items_per_thread
    layout = LAYOUT_OF_ALGORITHM[algorithm]
    t, i = np.meshgrid(np.arange(threads), np.arange(items_per_thread), indexing="ij")
    pos = tile_position(layout, t, i, threads, items_per_thread)
    valid = _valid(valid_items, tile)
    values = np.asarray(tile_values)
    if initial is None:
        out = np.zeros((threads, items_per_thread), dtype=values.dtype)
    else:
        out = np.array(initial, dtype=values.dtype, copy=True).reshape(threads, items_per_thread)
    mask = pos < valid
    safe = np.where(mask, pos, 0)
    src = values[safe] if len(values) else np.zeros_like(out)
    out[mask] = src[mask]
    if oob_default is not None:
        out[~mask] = oob_default
    return out


def store_tile(slots, algorithm, threads, items_per_thread, *, valid_items=None, initial_tile):
    """The tile after each thread stores its ``slots`` (positions past ``valid_items`` untouched)."""
    tile = threads * items_per_thread
    layout = LAYOUT_OF_ALGORITHM[algorithm]
    t, i = np.meshgrid(np.arange(threads), np.arange(items_per_thread), indexing="ij")
    pos = tile_position(layout, t, i, threads, items_per_thread)
    valid = _valid(valid_items, tile)
    out = np.array(initial_tile, copy=True)
    slots = np.asarray(slots).reshape(threads, items_per_thread)
    mask = pos < valid
    out[pos[mask]] = slots[mask]
    return out


def _positions(algorithm, block_threads, items_per_thread, group_width, offset):
    """For every (thread, slot) of a block: its group's tile start and its tile position."""
    width = block_threads if group_width is None else group_width
    k = items_per_thread
    t, i = np.meshgrid(np.arange(block_threads), np.arange(k), indexing="ij")
    group, lane = t // width, t % width
    pos = tile_position(LAYOUT_OF_ALGORITHM[algorithm], lane, i, width, k)
    return offset + group * width * k, pos, width * k


def load(source, algorithm, block_threads, items_per_thread, *, group_width=None, offset=0,
         valid_items=None, oob_default=None, initial=None):
    """Slots ``[block_threads, items_per_thread]`` of every thread of one block.

    ``group_width=None`` is the block; otherwise each logical warp of that width
    loads its own tile, warp ``w`` starting at ``offset + w * width * K``.  Items
    past the end of ``source`` are never valid.
    """
    source = np.asarray(source)
    start, pos, tile = _positions(algorithm, block_threads, items_per_thread, group_width, offset)
    index = start + pos
    mask = (pos < _valid(valid_items, tile)) & (index < len(source))
    if initial is None:
        out = np.zeros(pos.shape, dtype=source.dtype)
    else:
        out = np.array(initial, dtype=source.dtype, copy=True).reshape(pos.shape)
    out[mask] = source[index[mask]]
    if oob_default is not None:
        out[~mask] = oob_default
    return out


def store(destination, slots, algorithm, block_threads, items_per_thread, *, group_width=None,
          offset=0, valid_items=None):
    """``destination`` after one block stores ``slots`` (a copy; the input is not modified)."""
    out = np.array(destination, copy=True)
    start, pos, tile = _positions(algorithm, block_threads, items_per_thread, group_width, offset)
    index = start + pos
    mask = (pos < _valid(valid_items, tile)) & (index < len(out))
    out[index[mask]] = np.asarray(slots).reshape(pos.shape)[mask]
    return out
