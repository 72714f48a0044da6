"""What ``coop.adjacent_difference`` and ``coop.discontinuity`` compute.

Both see the block's tile in the blocked layout: slots ``[threads, K]``,
thread ``t`` slot ``i`` at tile position ``t*K + i``, and each position is
combined with its neighbour.  :func:`neighbour_positions` says which position
(or tile neighbour item) each one is paired with; the other functions apply the
operator.  Everything is pure NumPy: integer arithmetic wraps in the values'
dtype, as on the device.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PREDECESSOR", "SUCCESSOR", "NONE", "neighbour_positions", "adjacent_difference",
           "discontinuity"]

PREDECESSOR = -2  # paired with tile_predecessor_item
SUCCESSOR = -3  # paired with tile_successor_item
NONE = -1  # no neighbour: copied (differences) or always flagged (discontinuity)


def _valid(valid_items, tile):
    if valid_items is None:
        return tile
    return int(min(max(int(valid_items), 0), tile))


def neighbour_positions(side: str, tile: int, *, valid_items=None, has_neighbour_item=False):
    """For each tile position, the position it is compared with.

    ``side`` is ``"left"`` (predecessor, ``p - 1``) or ``"right"`` (successor,
    ``p + 1``).  Position 0 (left) or the last valid position (right) pairs with
    :data:`PREDECESSOR`/:data:`SUCCESSOR` when the tile neighbour item is given,
    else with :data:`NONE`; positions at or past ``valid_items`` pair with
    :data:`NONE`.  For ``"left"`` the tile neighbour applies at position 0 only
    while position 0 is valid.
    """
    valid = _valid(valid_items, tile)
    p = np.arange(tile)
    if side == "left":
        pair = p - 1
        pair[0] = PREDECESSOR if has_neighbour_item else NONE
    elif side == "right":
        pair = p + 1
        if valid >= 1:
            pair[valid - 1] = SUCCESSOR if has_neighbour_item else NONE
    else:
        raise ValueError(f"unknown side {side!r}")
    pair[p >= valid] = NONE
    return pair


def _combine(tile, pair, neighbour_item, op):
    tile = np.asarray(tile)
    other = np.where(pair >= 0, tile[np.clip(pair, 0, len(tile) - 1)], tile)
    if neighbour_item is not None:
        other = np.where(pair < NONE, tile.dtype.type(neighbour_item), other)
    return other


def _subtract(a, b):
    with np.errstate(over="ignore"):
        return (a - b).astype(a.dtype)


def adjacent_difference(slots, direction: str = "left", *, valid_items=None, tile_predecessor_item=None,
                        tile_successor_item=None, difference_op=None):
    """Slots ``[threads, K]`` after ``coop.adjacent_difference``.

    ``difference_op(current, neighbour)`` (vectorized over NumPy arrays) replaces
    the subtraction; positions without a neighbour are copied unchanged.
    """
    slots = np.asarray(slots)
    tile = slots.ravel()
    item = tile_predecessor_item if direction == "left" else tile_successor_item
    pair = neighbour_positions(direction, len(tile), valid_items=valid_items,
                               has_neighbour_item=item is not None)
    other = _combine(tile, pair, item, None)
    op = difference_op or _subtract
    out = np.where(pair == NONE, tile, np.asarray(op(tile, other)).astype(tile.dtype))
    return out.reshape(slots.shape)


def discontinuity(slots, mode: str = "heads", *, valid_items=None, tile_predecessor_item=None,
                  tile_successor_item=None, flag_op=None):
    """int32 flags ``[threads, K]`` (a tuple ``(heads, tails)`` for ``"heads_and_tails"``).

    ``flag_op(a, b)`` replaces ``a != b``; it receives ``(previous, current)`` for
    heads and ``(current, next)`` for tails.  A position without a neighbour is
    flagged; positions past ``valid_items`` are 0.
    """
    slots = np.asarray(slots)
    tile = slots.ravel()
    valid = _valid(valid_items, len(tile))
    op = flag_op or (lambda a, b: a != b)
    results = []
    if mode in ("heads", "heads_and_tails"):
        pair = neighbour_positions("left", len(tile), valid_items=valid,
                                   has_neighbour_item=tile_predecessor_item is not None)
        other = _combine(tile, pair, tile_predecessor_item, None)
        flags = np.where(pair == NONE, 1, np.asarray(op(other, tile)).astype(np.int32))
        results.append(flags)
    if mode in ("tails", "heads_and_tails"):
        pair = neighbour_positions("right", len(tile), valid_items=valid,
                                   has_neighbour_item=tile_successor_item is not None)
        other = _combine(tile, pair, tile_successor_item, None)
        flags = np.where(pair == NONE, 1, np.asarray(op(tile, other)).astype(np.int32))
        results.append(flags)
    if not results:
        raise ValueError(f"unknown mode {mode!r}")
    invalid = np.arange(len(tile)) >= valid
    results = [np.where(invalid, 0, f).astype(np.int32).reshape(slots.shape) for f in results]
    return tuple(results) if mode == "heads_and_tails" else results[0]
