"""The data the documentation's interactive explorers draw, computed by the reference models.

Every picture in an explorer is produced here by calling ``cuda.coop.reference.<family>``,
the NumPy models that the test suite checks kernels against, for 8 teaching threads
(one block of 8, two warps of 4 lanes, or four logical warps of 2 lanes) over every
option the explorer offers.  Nothing here re-implements an operation: it chooses inputs,
calls the model, and records who owns which value at each stage, so the pictures
cannot drift from tested behaviour.

Pure Python + NumPy (no Sphinx, no compiler): the Sphinx extension
(``coop_explorers.py``) exports these datasets as JSON at build time, and
``tests/docs/test_explorer_data.py`` checks them without building the docs.

Dataset format (also read by ``_static/coop-explorers/coop-explorer.js``)::

    {"family", "title", "threads": 8, "controls": [{"name", "label", "options": [[value, text]]}],
     "default": key, "scenarios": {key: scenario}}
    key = "|".join(the value of each control, in control order)
    scenario = {"call": str, "groups": [[first_thread, end_thread, label]], "notes": [str],
                "stages": [stage]}
    stage = {"title", "kind": "memory" | "threads", "k": slots per thread (threads only),
             "segments": [[start, end, label]] (memory only),
             "v": [display value per cell], "t": [token(s) per cell or None],
             "u": [undefined cell indices], "d": [dimmed cell indices], "lab": [cell labels],
             "link": "all" | "max" | "none" (lines from the linked stage), "from": index of
             the stage whose cells the lines (and the movement) come from (default: previous)}

Threads stages are flattened thread-major (cell ``t*k + i`` is slot ``i`` of thread
``t``).  Tokens identify where a value came from: clicking a cell highlights every
cell, in every stage, that shares one of its tokens.
"""

from __future__ import annotations

import importlib
import itertools
import json
from pathlib import Path

import numpy as np

__all__ = [
    "THREADS", "GROUPINGS", "EXPLORERS", "MissingReference", "build", "available", "export",
    "scenario_key", "validate_dataset",
]

THREADS = 8  # teaching threads; real warps have 32 lanes

# grouping id -> (logical warp width or None for the block, label, group-kind label)
GROUPINGS = {
    "block": (None, "one block of 8 threads"),
    "warp4": (4, "two warps of 4 lanes"),
    "warp2": (2, "four logical warps of 2 lanes"),
}


class MissingReference(LookupError):
    """The family's reference model (``cuda.coop.reference.<family>``) does not exist yet."""


def _reference(module: str):
    try:
        return importlib.import_module(f"cuda.coop.reference.{module}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("cuda.coop.reference"):
            raise MissingReference(module) from None
        raise


def scenario_key(values) -> str:
    return "|".join(str(v) for v in values)


# ------------------------------------------------------------------------------------------
# Stage and scenario helpers
# ------------------------------------------------------------------------------------------

def _display(value) -> str:
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return str(int(f)) if f.is_integer() else f"{f:g}"
    return str(int(value)) if isinstance(value, (int, np.integer, bool, np.bool_)) else str(value)


def _token(tok):
    if tok is None:
        return None
    if isinstance(tok, (list, tuple, set, frozenset)):
        toks = sorted(int(t) for t in tok)
        if not toks:
            return None
        return toks[0] if len(toks) == 1 else toks
    return int(tok)


def threads_stage(title, values, tokens, *, undefined=None, dimmed=None, labels=None, caption=""):
    """A stage drawn as 8 threads, each with ``k`` slots; arrays are ``[threads, k]``."""
    values = np.asarray(values)
    if values.ndim == 1:
        values = values.reshape(-1, 1)
    threads, k = values.shape
    flat_tokens = [tokens[t][i] for t in range(threads) for i in range(k)]
    undef = np.zeros((threads, k), bool) if undefined is None else np.asarray(undefined, bool).reshape(threads, k)
    dim = np.zeros((threads, k), bool) if dimmed is None else np.asarray(dimmed, bool).reshape(threads, k)
    stage = {
        "title": title,
        "kind": "threads",
        "k": int(k),
        "v": ["?" if undef[t, i] else _display(values[t, i]) for t in range(threads) for i in range(k)],
        "t": [None if undef.flat[n] else _token(tok) for n, tok in enumerate(flat_tokens)],
        "u": [int(n) for n in np.flatnonzero(undef)],
        "d": [int(n) for n in np.flatnonzero(dim)],
    }
    if labels is not None:
        stage["lab"] = [labels[t][i] for t in range(threads) for i in range(k)]
    if caption:
        stage["caption"] = caption
    return stage


def memory_stage(title, values, tokens, *, undefined=None, dimmed=None, segments=(), labels=None,
                 shown=None, caption=""):
    """A stage drawn as a row of memory cells; ``shown`` replaces the displayed text."""
    n = len(values)
    undef = np.zeros(n, bool) if undefined is None else np.asarray(undefined, bool)
    dim = np.zeros(n, bool) if dimmed is None else np.asarray(dimmed, bool)
    stage = {
        "title": title,
        "kind": "memory",
        "segments": [list(s) for s in segments],
        "v": [("?" if undef[j] else (shown[j] if shown is not None else _display(values[j]))) for j in range(n)],
        "t": [None if undef[j] else _token(tokens[j]) for j in range(n)],
        "u": [int(j) for j in np.flatnonzero(undef)],
        "d": [int(j) for j in np.flatnonzero(dim)],
    }
    if labels is not None:
        stage["lab"] = list(labels)
    if caption:
        stage["caption"] = caption
    return stage


def group_boxes(width):
    """``[first, end, label]`` for each group of the 8 teaching threads."""
    if width is None:
        return [[0, THREADS, "block (threads 0-7)"]]
    kind = "warp" if width == 4 else "logical warp"
    return [[w * width, (w + 1) * width, f"{kind} {w} (lanes 0-{width - 1})"] for w in range(THREADS // width)]


def _group_expr(width):
    if width is None:
        return "coop.this_block()"
    return f"coop.this_warp().group_by({width})"


def _kw(**kw) -> str:
    parts = []
    for name, value in kw.items():
        if value is None:
            continue
        parts.append(f"{name}={value!r}")
    return (", " + ", ".join(parts)) if parts else ""


# ------------------------------------------------------------------------------------------
# Load / store
# ------------------------------------------------------------------------------------------

def _partial(tile: int) -> int:
    return tile - max(1, tile // 3)


def build_load_store():
    ref = _reference("load_store")
    from cuda.coop.ops.load_store import LOAD_ALGORITHMS, STORE_ALGORITHMS

    block_algos = list(LOAD_ALGORITHMS["block"])
    warp_algos = list(LOAD_ALGORITHMS["warp"])
    assert list(STORE_ALGORITHMS["block"]) == block_algos and list(STORE_ALGORITHMS["warp"]) == warp_algos
    controls = [
        {"name": "op", "label": "operation", "options": [["load", "coop.load"], ["store", "coop.store"]]},
        {"name": "group", "label": "group", "options": [[g, GROUPINGS[g][1]] for g in GROUPINGS]},
        {"name": "algorithm", "label": "algorithm", "options": [[a, a] for a in block_algos]},
        {"name": "items", "label": "items per thread", "options": [[k, str(k)] for k in (1, 2, 3, 4)]},
        {"name": "tile", "label": "tile", "options": [
            ["full", "full tile"], ["partial", "partial (valid_items)"],
            ["partial_oob", "partial + oob_default=-1"]]},
    ]
    scenarios = {}
    for op, group, algo, k, tile_mode in itertools.product(
            ("load", "store"), GROUPINGS, block_algos, (1, 2, 3, 4), ("full", "partial", "partial_oob")):
        width = GROUPINGS[group][0]
        if width is not None and algo not in warp_algos:
            continue
        if op == "store" and tile_mode == "partial_oob":
            continue
        gsize = THREADS if width is None else width
        tile = gsize * k
        valid = None if tile_mode == "full" else _partial(tile)
        oob = -1 if tile_mode == "partial_oob" else None
        n = THREADS * k
        starts = range(0, n, tile)
        segments = [[s, s + tile, "block tile" if width is None else f"tile of warp {s // tile}"]
                    for s in starts]
        layout = ref.LAYOUT_OF_ALGORITHM[algo]
        gvar = "block" if width is None else "warp"
        call_kw = _kw(algorithm=algo, valid_items=valid, oob_default=oob)
        notes = [_layout_note(layout, gsize, k)]
        if width is not None:
            notes.append(f"Each {'warp' if width == 4 else 'logical warp'} moves its own tile of "
                         f"{gsize}*{k} = {tile} items; warp w starts at w*{tile}.")
        if op == "load":
            source = np.arange(n)
            poison = np.full((THREADS, k), -999)
            slots = ref.load(source, algo, THREADS, k, group_width=width, valid_items=valid,
                             oob_default=oob, initial=poison)
            in_tile = np.arange(n) % tile
            mem = memory_stage(
                "src (global memory)", source, list(range(n)), segments=segments,
                dimmed=[valid is not None and p >= valid for p in in_tile])
            undef = slots == -999
            oob_mask = (slots == -1) & (oob is not None)
            tokens = [[None if (undef[t, i] or oob_mask[t, i]) else int(slots[t, i]) for i in range(k)]
                      for t in range(THREADS)]
            thr = threads_stage("items after coop.load", slots, tokens, undefined=undef, dimmed=oob_mask)
            call = f"coop.load({gvar}, src, items{call_kw})"
            if valid is not None:
                notes.append(f"valid_items={valid}: only the first {valid} items of each tile are read" +
                             (" (dimmed cells); the other slots get oob_default." if oob is not None else
                              "; the other slots keep their previous (here uninitialized) contents: ?."))
            stages = [mem, thr]
        else:
            register = np.arange(n).reshape(THREADS, k)  # thread-major register order
            tokens = register.tolist()
            thr = threads_stage("items (thread t slot i holds t*K+i)", register, tokens)
            before = np.full(n, -1)
            after = ref.store(before, register, algo, THREADS, k, group_width=width, valid_items=valid)
            untouched = after == -1
            mem = memory_stage(
                "dst after coop.store", after,
                [None if untouched[j] else int(after[j]) for j in range(n)],
                dimmed=untouched, segments=segments,
                shown=["·" if untouched[j] else _display(after[j]) for j in range(n)])
            call = f"coop.store({gvar}, dst, items{call_kw})"
            if valid is not None:
                notes.append(f"valid_items={valid}: only the first {valid} items of each tile are "
                             "written; the rest of dst is untouched (·).")
            stages = [thr, mem]
        scenarios[scenario_key((op, group, algo, k, tile_mode))] = {
            "call": call, "groups": group_boxes(width), "notes": notes, "stages": stages,
        }
    return {
        "family": "load_store",
        "title": "Load and store",
        "threads": THREADS,
        "controls": controls,
        "default": scenario_key(("load", "block", "striped", 2, "full")),
        "scenarios": scenarios,
    }


def _layout_note(layout, gsize, k):
    if layout == "blocked":
        return (f"Blocked layout: thread t owns tile items t*{k} .. t*{k}+{k - 1} "
                "(consecutive items per thread).")
    return (f"Striped layout: thread t owns tile items t, t+{gsize}, ... "
            f"(slot i holds item t + i*{gsize}).")


# ------------------------------------------------------------------------------------------
# Exchange
# ------------------------------------------------------------------------------------------

_RANK_PATTERNS = {
    "reverse": "ranks: reversed tile",
    "holes": "ranks: one hole, one collision, one outside the tile",
}


def _exchange_ranks(pattern, width, k, guarded):
    """Ranks ``[8, k]`` relative to each group's tile (the reference's convention)."""
    tile = width * k
    ranks = np.empty((THREADS, k), dtype=np.int64)
    for g in range(THREADS // width):
        flat = np.arange(tile)
        r = tile - 1 - flat  # reversed
        if pattern == "holes":
            r = r.copy()
            r[1] = r[0]  # a collision: two items to one position, one position left empty
            r[-1] = -1 if guarded else tile + 5  # dropped (outside the tile)
        ranks[g * width:(g + 1) * width] = r.reshape(width, k)
    return ranks


def build_exchange():
    ref = _reference("exchange")
    from cuda.coop.ops.exchange import MODES

    modes = list(MODES)
    controls = [
        {"name": "group", "label": "group", "options": [[g, GROUPINGS[g][1]] for g in GROUPINGS]},
        {"name": "mode", "label": "mode", "options": [[m, m] for m in modes]},
        {"name": "items", "label": "items per thread", "options": [[k, str(k)] for k in (1, 2, 3, 4)]},
        {"name": "ranks", "label": "ranks (scatter modes)",
         "options": [[p, text] for p, text in _RANK_PATTERNS.items()]},
    ]
    scenarios = {}
    for group, mode, k, pattern in itertools.product(GROUPINGS, modes, (1, 2, 3, 4), _RANK_PATTERNS):
        spec = MODES[mode]
        width = GROUPINGS[group][0]
        if width is not None and "warp" not in spec.groups:
            continue
        if not spec.ranks and pattern != "reverse":
            continue
        gsize = THREADS if width is None else width
        tile = gsize * k
        source, target = ref.MODE_LAYOUTS[mode]
        ranks = flags = None
        if spec.ranks:
            # Items are numbered in register order; ranks say where each one goes.
            values = np.arange(THREADS * k).reshape(THREADS, k)
            ranks = _exchange_ranks(pattern, gsize, k, guarded=mode.endswith("guarded"))
            if spec.flags:
                flags = ((np.arange(THREADS * k) % 3) != 2).astype(np.int32).reshape(THREADS, k)
        else:
            values = np.concatenate([
                g * tile + ref.tile_positions(source, gsize, k) for g in range(THREADS // gsize)])
        out, defined = ref.exchange(values, mode, group_width=width, ranks=ranks, valid_flags=flags)
        in_tokens = values.tolist()
        stages = [threads_stage(f"value ({_layout_name(source)})", values, in_tokens)]
        if ranks is not None:
            dropped = (ranks < 0) | (ranks >= tile)
            if flags is not None:
                dropped |= flags == 0
            stages.append(threads_stage("ranks (tile position of each item)", ranks, in_tokens,
                                        dimmed=dropped))
            stages[-1]["link"] = "none"
            if flags is not None:
                stages.append(threads_stage("valid_flags (0 = drop the item)", flags, in_tokens,
                                            dimmed=flags == 0))
                stages[-1]["link"] = "none"
        # The tile as it sits in shared memory between the two halves of the exchange.
        tile_vals, tile_def = [], []
        for g in range(THREADS // gsize):
            rows = slice(g * gsize, (g + 1) * gsize)
            tile_vals.append(ref.to_tile(out[rows], target))
            tile_def.append(ref.to_tile(defined[rows].astype(np.int8), target).astype(bool))
        tile_vals, tile_def = np.concatenate(tile_vals), np.concatenate(tile_def)
        segments = [[g * tile, (g + 1) * tile, "block tile" if width is None else f"tile of warp {g}"]
                    for g in range(THREADS // gsize)]
        mem = memory_stage("tile (shared memory, by position)", tile_vals,
                           [int(v) if d else None for v, d in zip(tile_vals, tile_def)],
                           undefined=~tile_def, segments=segments)
        mem["from"] = 0
        stages.append(mem)
        result = threads_stage(f"result ({_layout_name(target)})", out,
                               [[int(out[t, i]) if defined[t, i] else None for i in range(k)]
                                for t in range(THREADS)], undefined=~defined)
        stages.append(result)
        gvar = "block" if width is None else "warp"
        extra = ", ranks=ranks" if spec.ranks else ""
        extra += ", valid_flags=flags" if spec.flags else ""
        notes = [f"{_layout_name(source).capitalize()} in, {_layout_name(target)} out; the input "
                 "payload is not modified and the result is fresh."]
        if spec.ranks:
            notes.append("Values are numbered in register order (thread t slot i holds t*K+i); "
                         "ranks are positions in the group's tile.")
            if pattern == "holes":
                notes.append("A position no item reaches, or that two items reach, is unspecified (?); "
                             "an item ranked outside the tile" +
                             (" (here negative)" if mode.endswith("guarded") else "") + " is dropped.")
            if spec.flags:
                notes.append("Items whose valid_flags entry is 0 are dropped as well.")
        if "warp_striped" in (source, target):
            notes.append("With 8 teaching threads the block is one warp, so warp-striped equals striped "
                         "here; in a block of 128 threads each 32-lane warp stripes its own 32*K items.")
        scenarios[scenario_key((group, mode, k, pattern))] = {
            "call": f"result = coop.exchange({gvar}, items, mode={mode!r}{extra})",
            "groups": group_boxes(width), "notes": notes, "stages": stages,
        }
    return {"family": "exchange", "title": "Exchange", "threads": THREADS, "controls": controls,
            "default": scenario_key(("block", "striped_to_blocked", 2, "reverse")), "scenarios": scenarios}


def _layout_name(layout):
    return {"blocked": "blocked", "striped": "striped", "warp_striped": "warp-striped",
            "ranked": "any order (ranked)"}[layout]


# ------------------------------------------------------------------------------------------
# Shuffle
# ------------------------------------------------------------------------------------------

def build_shuffle():
    ref = _reference("shuffle")
    controls = [
        {"name": "mode", "label": "mode", "options": [[m, m] for m in ("up", "down", "offset", "rotate")]},
        {"name": "items", "label": "items per thread (up/down)", "options": [[k, str(k)] for k in (1, 2, 3, 4)]},
        {"name": "distance", "label": "distance", "options": [[d, str(d)] for d in (1, 2, 3, -1)]},
    ]
    scenarios = {}
    for mode, k, dist in itertools.product(("up", "down", "offset", "rotate"), (1, 2, 3, 4), (1, 2, 3, -1)):
        scalar = mode in ("offset", "rotate")
        if scalar and k != 1:
            continue
        values = np.arange(THREADS * k).reshape(THREADS, k) * 10
        src = ref.shuffle_sources(mode, THREADS, k, dist)
        if scalar:
            out = ref.shuffle(values[:, 0], mode, dist).reshape(THREADS, 1)
        else:
            out = ref.shuffle(values, mode, dist)
        flat_src = src[..., 0] * k + src[..., 1]
        kept = flat_src == np.arange(THREADS * k).reshape(THREADS, k)
        tokens_in = (np.arange(THREADS * k).reshape(THREADS, k)).tolist()
        stages = [
            threads_stage("value" + (" (blocked tile)" if not scalar else " (one per thread)"), values, tokens_in),
            threads_stage("result", out, flat_src.tolist(), dimmed=kept if mode != "rotate" else None),
        ]
        notes = {
            "up": f"Position p receives the item of position p-{dist}" if dist > 0 else
                  f"Position p receives the item of position p+{-dist}",
            "down": f"Position p receives the item of position p+{dist}" if dist > 0 else
                    f"Position p receives the item of position p-{-dist}",
            "offset": f"Thread t receives the value of thread t{dist:+d}",
            "rotate": f"Thread t receives the value of thread (t{dist:+d}) mod 8",
        }[mode]
        notes = [notes + " (blocked tile order: thread t slot i is position t*K+i)." if not scalar else notes + "."]
        if mode != "rotate":
            notes.append("A slot whose source lies outside the " + ("block" if scalar else "tile") +
                         " keeps its own value (dimmed): every result is defined.")
        dist_text = "" if dist == 1 else f", distance={dist}"
        scenarios[scenario_key((mode, k, dist))] = {
            "call": f"result = coop.shuffle(block, {'x' if scalar else 'items'}, mode={mode!r}{dist_text})",
            "groups": group_boxes(None), "notes": notes, "stages": stages,
        }
    return {"family": "shuffle", "title": "Shuffle", "threads": THREADS, "controls": controls,
            "default": scenario_key(("up", 2, 1)), "scenarios": scenarios}


# ------------------------------------------------------------------------------------------
# Adjacent difference and discontinuity (family "neighbors")
# ------------------------------------------------------------------------------------------

NEIGHBOUR_TOKEN = 10_000  # token of the tile_predecessor_item / tile_successor_item cell
_NEIGHBOUR_VALUES = np.array([4, 4, 7, 9, 9, 9, 2, 5, 5, 1, 8, 8, 8, 8, 3, 6,
                              6, 0, 2, 2, 7, 7, 7, 4, 9, 1, 1, 5, 3, 3, 8, 8])


def _pair_tokens(pair, position):
    ref = _reference("neighbors")
    toks = [position]
    if pair >= 0:
        toks.append(int(pair))
    elif pair in (ref.PREDECESSOR, ref.SUCCESSOR):
        toks.append(NEIGHBOUR_TOKEN)
    return toks


def _neighbour_stage(item, name):
    st = memory_stage(name, [item], [NEIGHBOUR_TOKEN])
    return st


def build_adjacent_difference():
    ref = _reference("neighbors")
    controls = [
        {"name": "direction", "label": "direction", "options": [["left", "left"], ["right", "right"]]},
        {"name": "items", "label": "items per thread", "options": [[k, str(k)] for k in (1, 2, 3, 4)]},
        {"name": "tile", "label": "tile", "options": [["full", "full tile"], ["partial", "partial (valid_items)"]]},
        {"name": "neighbour", "label": "tile neighbour item", "options": [["none", "none"], ["given", "given (= 5)"]]},
    ]
    scenarios = {}
    for direction, k, tile_mode, neighbour in itertools.product(("left", "right"), (1, 2, 3, 4),
                                                                 ("full", "partial"), ("none", "given")):
        n = THREADS * k
        values = _NEIGHBOUR_VALUES[:n].reshape(THREADS, k)
        valid = None if tile_mode == "full" else _partial(n)
        item = 5 if neighbour == "given" else None
        kw = {"tile_predecessor_item": item} if direction == "left" else {"tile_successor_item": item}
        out = ref.adjacent_difference(values, direction, valid_items=valid, **kw)
        pair = ref.neighbour_positions(direction, n, valid_items=valid, has_neighbour_item=item is not None)
        copied = (pair == ref.NONE).reshape(THREADS, k)
        tokens = [[_pair_tokens(pair[t * k + i], t * k + i) for i in range(k)] for t in range(THREADS)]
        stages = []
        name = "tile_predecessor_item" if direction == "left" else "tile_successor_item"
        if item is not None:
            stages.append(_neighbour_stage(item, name))
        stages.append(threads_stage("values (blocked)", values, np.arange(n).reshape(THREADS, k).tolist(),
                                    dimmed=None if valid is None else (np.arange(n) >= valid).reshape(THREADS, k)))
        stages[-1]["link"] = "none"
        res = threads_stage("result", out, tokens, dimmed=copied)
        res["from"] = len(stages) - 1
        stages.append(res)
        sign = "x[p] - x[p-1]" if direction == "left" else "x[p] - x[p+1]"
        notes = [f"Position p gets {sign} in the values' dtype; a position without a neighbour is copied "
                 "unchanged (dimmed)."]
        if valid is not None:
            notes.append(f"valid_items={valid}: positions from {valid} on are copied unchanged" +
                         ("; the last valid position pairs with the tile_successor_item." if direction == "right"
                          and item is not None else "."))
        if item is not None:
            notes.append(f"{name}={item} stands for the item just outside the tile (click it to follow it).")
        args = _kw(direction=direction if direction != "left" else None, valid_items=valid,
                   **{name: item})
        scenarios[scenario_key((direction, k, tile_mode, neighbour))] = {
            "call": f"result = coop.adjacent_difference(block, items{args})",
            "groups": group_boxes(None), "notes": notes, "stages": stages,
        }
    return {"family": "neighbors", "title": "Adjacent difference", "threads": THREADS, "controls": controls,
            "default": scenario_key(("left", 2, "full", "none")), "scenarios": scenarios}


def build_discontinuity():
    ref = _reference("neighbors")
    controls = [
        {"name": "mode", "label": "mode", "options": [[m, m] for m in ("heads", "tails", "heads_and_tails")]},
        {"name": "items", "label": "items per thread", "options": [[k, str(k)] for k in (1, 2, 3, 4)]},
        {"name": "tile", "label": "tile", "options": [["full", "full tile"], ["partial", "partial (valid_items)"]]},
        {"name": "neighbour", "label": "tile neighbour items", "options": [["none", "none"], ["given", "given (= 4 and 8)"]]},
    ]
    scenarios = {}
    for mode, k, tile_mode, neighbour in itertools.product(("heads", "tails", "heads_and_tails"), (1, 2, 3, 4),
                                                            ("full", "partial"), ("none", "given")):
        n = THREADS * k
        values = _NEIGHBOUR_VALUES[:n].reshape(THREADS, k)
        valid = None if tile_mode == "full" else _partial(n)
        kw = {}
        if neighbour == "given":
            if mode != "tails":
                kw["tile_predecessor_item"] = 4
            if mode != "heads":
                kw["tile_successor_item"] = 8
        flags = ref.discontinuity(values, mode, valid_items=valid, **kw)
        flags = flags if isinstance(flags, tuple) else (flags,)
        kinds = ["heads", "tails"] if mode == "heads_and_tails" else [mode]
        stages = []
        for name in ("tile_predecessor_item", "tile_successor_item"):
            if name in kw:
                stages.append(_neighbour_stage(kw[name], name))
        stages.append(threads_stage("values (blocked)", values, np.arange(n).reshape(THREADS, k).tolist(),
                                    dimmed=None if valid is None else (np.arange(n) >= valid).reshape(THREADS, k)))
        stages[-1]["link"] = "none"
        values_stage = len(stages) - 1
        for kind, f in zip(kinds, flags):
            side = "left" if kind == "heads" else "right"
            has_item = ("tile_predecessor_item" if kind == "heads" else "tile_successor_item") in kw
            pair = ref.neighbour_positions(side, n, valid_items=valid, has_neighbour_item=has_item)
            tokens = [[_pair_tokens(pair[t * k + i], t * k + i) if (valid is None or t * k + i < valid)
                       else t * k + i for i in range(k)] for t in range(THREADS)]
            st = threads_stage(f"{kind} flags", f, tokens,
                               dimmed=None if valid is None else (np.arange(n) >= valid).reshape(THREADS, k))
            st["from"] = values_stage
            stages.append(st)
        notes = []
        if "heads" in kinds:
            notes.append("Heads: position p is flagged (1) when x[p-1] != x[p], the first item of each run.")
        if "tails" in kinds:
            notes.append("Tails: position p is flagged when x[p] != x[p+1], the last item of each run.")
        notes.append("Without a tile neighbour item the first position is always a head and the last "
                     "(valid) position always a tail." if not kw else
                     "The tile neighbour items stand for the items just outside the tile.")
        if valid is not None:
            notes.append(f"valid_items={valid}: flags from position {valid} on are 0 (dimmed).")
        args = _kw(mode=mode if mode != "heads" else None, valid_items=valid, **kw)
        target = "heads, tails" if mode == "heads_and_tails" else "flags"
        scenarios[scenario_key((mode, k, tile_mode, neighbour))] = {
            "call": f"{target} = coop.discontinuity(block, items{args})",
            "groups": group_boxes(None), "notes": notes, "stages": stages,
        }
    return {"family": "neighbors", "title": "Discontinuity", "threads": THREADS, "controls": controls,
            "default": scenario_key(("heads", 2, "full", "none")), "scenarios": scenarios}


# ------------------------------------------------------------------------------------------
# Registry and export
# ------------------------------------------------------------------------------------------

# explorer id -> (title, reference module, builder)
EXPLORERS = {
    "load_store": ("Load and store", "load_store", build_load_store),
    "exchange": ("Exchange", "exchange", build_exchange),
    "shuffle": ("Shuffle", "shuffle", build_shuffle),
    "adjacent_difference": ("Adjacent difference", "neighbors", build_adjacent_difference),
    "discontinuity": ("Discontinuity", "neighbors", build_discontinuity),
}


def build(name: str) -> dict:
    """The dataset of one explorer; MissingReference when its reference model is absent."""
    return EXPLORERS[name][2]()


def available() -> dict:
    """Explorer id -> dataset, for every explorer whose reference model exists."""
    out = {}
    for name in EXPLORERS:
        try:
            out[name] = build(name)
        except MissingReference:
            continue
    return out


def export(directory, datasets=None) -> list:
    """Write ``<id>.json`` and ``<id>.js`` (the same data, loadable from file://)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    datasets = available() if datasets is None else datasets
    written = []
    for name, data in datasets.items():
        text = json.dumps(data, separators=(",", ":"))
        (directory / f"{name}.json").write_text(text)
        (directory / f"{name}.js").write_text(
            "(window.CoopExplorerData = window.CoopExplorerData || {})"
            f"[{json.dumps(name)}] = {text};\n")
        written.append(name)
    return written


def validate_dataset(data: dict) -> None:
    """Structural checks (used by the unit tests): every key resolves and every stage is whole."""
    names = [c["name"] for c in data["controls"]]
    assert data["default"] in data["scenarios"], data["default"]
    for key, sc in data["scenarios"].items():
        values = key.split("|")
        assert len(values) == len(names), key
        for c, v in zip(data["controls"], values):
            assert v in {str(o[0]) for o in c["options"]}, (key, c["name"], v)
        assert sc["stages"], key
        covered = sorted(t for g in sc["groups"] for t in range(g[0], g[1]))
        assert covered == list(range(data["threads"])), key
        for st in sc["stages"]:
            n = len(st["v"])
            assert len(st["t"]) == n, (key, st["title"])
            assert all(0 <= i < n for i in st["u"] + st["d"]), (key, st["title"])
            if st["kind"] == "threads":
                assert n == data["threads"] * st["k"], (key, st["title"])
            for i in st["u"]:
                assert st["v"][i] == "?" and st["t"][i] is None, (key, st["title"], i)
