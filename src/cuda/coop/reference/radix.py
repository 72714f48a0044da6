"""Radix sort and radix rank of a block's tile: who owns which key before and after.

Before: thread ``t`` of the block holds tile positions ``t*K .. t*K + K-1`` (the
blocked layout).  After a sort, sorted position ``p`` belongs to thread
``p // K`` slot ``p % K`` (blocked), or with ``blocked_to_striped`` to thread
``p % T`` slot ``p // T`` (striped, ``T`` threads).

Keys compare through an order-preserving map to unsigned bits
(:func:`ordered_bits`); ``begin_bit``/``end_bit`` select bits of that map.  The
sort and the ranks are stable: keys with equal selected bits keep their tile
order, in both directions.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ordered_bits", "digits", "sort_permutation", "radix_sort", "radix_rank", "exclusive_digit_prefix",
           "clamp_bits", "radix_passes", "defined_slots"]


def ordered_bits(keys) -> np.ndarray:
    """Unsigned integers (uint64) whose order is the radix order of ``keys``.

    Unsigned keys as they are; signed keys with the sign bit flipped; floats
    with the sign bit flipped when positive and all bits flipped when negative,
    after mapping -0.0 to +0.0.  NaNs land by their bits: positive NaNs above
    +inf, negative NaNs below -inf.
    """
    keys = np.asarray(keys)
    nbits = keys.dtype.itemsize * 8
    u = keys.view(f"u{keys.dtype.itemsize}").astype(np.uint64)
    sign = np.uint64(1 << (nbits - 1))
    ones = np.uint64((1 << nbits) - 1)
    if keys.dtype.kind == "u":
        return u
    if keys.dtype.kind == "i":
        return u ^ sign
    u = np.where(u == sign, np.uint64(0), u)
    return np.where(u & sign, u ^ ones, u | sign)


def clamp_bits(begin_bit, end_bit, key_bits):
    """The bit range a runtime ``begin_bit``/``end_bit`` pair selects (clamped to the key)."""
    begin = 0 if begin_bit is None else int(min(max(begin_bit, 0), key_bits))
    end = key_bits if end_bit is None else int(min(max(end_bit, 0), key_bits))
    return begin, end


def digits(keys, begin_bit, nbits) -> np.ndarray:
    """Bits ``[begin_bit, begin_bit + nbits)`` of :func:`ordered_bits` (bits past the key read as 0)."""
    keys = np.asarray(keys)
    if nbits <= 0 or begin_bit >= keys.dtype.itemsize * 8:
        return np.zeros(keys.shape, dtype=np.uint64)
    mask = np.uint64((1 << nbits) - 1)
    return (ordered_bits(keys) >> np.uint64(begin_bit)) & mask


def sort_permutation(keys, *, begin_bit=0, end_bit=None, descending=False) -> np.ndarray:
    """Tile positions in the stable radix order of bits ``[begin_bit, end_bit)``."""
    keys = np.asarray(keys).reshape(-1)
    begin, end = clamp_bits(begin_bit, end_bit, keys.dtype.itemsize * 8)
    d = digits(keys, begin, end - begin)
    if descending:
        d = ~d  # reverses the order of the selected bits; equal digits stay equal
    return np.argsort(d, kind="stable")


def _arrange(tile, threads, k, blocked_to_striped):
    """Sorted tile order -> slots ``[T, K]`` (blocked, or striped)."""
    tile = np.asarray(tile).reshape(-1)
    return tile.reshape(k, threads).T.copy() if blocked_to_striped else tile.reshape(threads, k).copy()


def radix_sort(keys, values=None, *, begin_bit=0, end_bit=None, descending=False, blocked_to_striped=False,
               valid_items=None, oob_default=None):
    """Slots ``[T, K]`` of every thread of the block after a radix sort.

    ``keys``/``values``: the slots before the call, ``[T, K]`` (blocked).  Returns
    ``(keys, values)`` slots after the call (``values`` None for keys only).  With
    ``valid_items`` only that prefix of the tile is sorted into sorted positions
    ``0 .. valid_items - 1``; the keys at later positions are ``oob_default``, or
    undefined (see :func:`defined_slots`; here they keep the tile's other keys).
    """
    keys = np.asarray(keys)
    threads, k = keys.shape
    n = threads * k
    valid = n if valid_items is None else int(min(max(valid_items, 0), n))
    flat_keys = keys.reshape(-1)
    perm = sort_permutation(flat_keys[:valid], begin_bit=begin_bit, end_bit=end_bit, descending=descending)
    perm = np.concatenate([perm, np.arange(valid, n)])
    sorted_keys = flat_keys[perm]
    if oob_default is not None:
        sorted_keys[valid:] = oob_default
    out_values = None
    if values is not None:
        out_values = _arrange(np.asarray(values).reshape(-1)[perm], threads, k, blocked_to_striped)
    return _arrange(sorted_keys, threads, k, blocked_to_striped), out_values


def defined_slots(threads, k, *, valid_items=None, blocked_to_striped=False) -> np.ndarray:
    """``[T, K]`` bools: the slots that hold sorted positions below ``valid_items``."""
    n = threads * k
    valid = n if valid_items is None else int(min(max(valid_items, 0), n))
    return _arrange(np.arange(n) < valid, threads, k, blocked_to_striped)


def radix_rank(keys, *, begin_bit=0, radix_bits=4, descending=False) -> np.ndarray:
    """Ranks ``[T, K]`` (int32): the position of each key in the tile stably sorted by its digit."""
    keys = np.asarray(keys)
    d = digits(keys.reshape(-1), begin_bit, radix_bits)
    if descending:
        d = ~d
    order = np.argsort(d, kind="stable")
    ranks = np.empty(len(order), dtype=np.int32)
    ranks[order] = np.arange(len(order), dtype=np.int32)
    return ranks.reshape(keys.shape)


def exclusive_digit_prefix(keys, threads, *, begin_bit=0, radix_bits=4, descending=False) -> np.ndarray:
    """``[T, B]`` int32: slot ``j`` of thread ``t`` is the first rank of digit ``t*B + j``.

    ``B = max(1, ceil(2**radix_bits / T))``; digits past the last get the tile size.
    """
    keys = np.asarray(keys).reshape(-1)
    n_digits = 1 << radix_bits
    b = max(1, -(-n_digits // threads))
    d = digits(keys, begin_bit, radix_bits).astype(np.int64)
    counts = np.bincount(d, minlength=n_digits)
    if descending:
        before = np.concatenate([np.cumsum(counts[::-1])[::-1][1:], [0]])  # keys with a larger digit
    else:
        before = np.concatenate([[0], np.cumsum(counts)[:-1]])
    out = np.full(threads * b, len(keys), dtype=np.int32)
    out[:n_digits] = before
    return out.reshape(threads, b)


def radix_passes(keys, *, begin_bit=0, end_bit=None, radix_bits=4, descending=False):
    """How a radix sort gets there: one entry per pass, least significant digit first.

    Returns ``[(bits, ranks, slots)]``: the pass's bit range ``(lo, hi)``, the rank
    of each key by that digit (``[T, K]``, where each key goes), and the slots after
    the pass's scatter (blocked).  After the last pass the slots are the sorted tile.
    """
    keys = np.asarray(keys)
    threads, k = keys.shape
    begin, end = clamp_bits(begin_bit, end_bit, keys.dtype.itemsize * 8)
    tile = keys.reshape(-1).copy()
    passes = []
    lo = begin
    while lo < end:
        hi = min(lo + radix_bits, end)
        ranks = radix_rank(tile.reshape(threads, k), begin_bit=lo, radix_bits=hi - lo, descending=descending)
        moved = np.empty_like(tile)
        moved[ranks.reshape(-1)] = tile
        tile = moved
        passes.append(((lo, hi), ranks, tile.reshape(threads, k).copy()))
        lo = hi
    return passes
