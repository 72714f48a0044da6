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
# Sorting and selection: merge sort, radix sort / rank, TopK
# ------------------------------------------------------------------------------------------

# Small keys with repeats, so that stability (equal keys keep their tile order) shows.
_SORT_KEYS = np.array([5, 2, 8, 2, 9, 1, 5, 7, 3, 8, 0, 6, 4, 2, 9, 5,
                       7, 1, 3, 6, 0, 8, 2, 4, 9, 3, 5, 1, 6, 7, 4, 0])
_RADIX_KEYS = np.array([45, 12, 63, 7, 28, 12, 50, 33, 1, 58, 22, 40, 17, 9, 36, 61,
                        26, 3, 44, 55, 19, 30, 12, 48, 5, 39, 60, 14, 27, 52, 8, 34], dtype=np.uint8)


def build_merge_sort():
    ref = _reference("merge_sort")
    controls = [
        {"name": "group", "label": "group", "options": [[g, GROUPINGS[g][1]] for g in GROUPINGS]},
        {"name": "op", "label": "operation", "options": [["keys", "merge_sort_keys"], ["pairs", "merge_sort_pairs"]]},
        {"name": "order", "label": "order", "options": [["ascending", "ascending"], ["descending", "descending=True"]]},
        {"name": "items", "label": "items per thread", "options": [[k, str(k)] for k in (1, 2, 3, 4)]},
        {"name": "tile", "label": "tile", "options": [
            ["full", "full tile"], ["partial", "partial (valid_items)"], ["partial_oob", "partial + oob_default=99"]]},
    ]
    scenarios = {}
    for group, op, order, k, tile_mode in itertools.product(
            GROUPINGS, ("keys", "pairs"), ("ascending", "descending"), (1, 2, 3, 4), ("full", "partial", "partial_oob")):
        width = GROUPINGS[group][0]
        gsize = THREADS if width is None else width
        tile = gsize * k
        n = THREADS * k
        keys = _SORT_KEYS[:n].reshape(THREADS, k)
        values = (100 + np.arange(n)).reshape(THREADS, k) if op == "pairs" else None
        desc = order == "descending"
        valid = None if tile_mode == "full" else _partial(tile)
        oob = 99 if tile_mode == "partial_oob" else None
        tokens = np.arange(n).reshape(THREADS, k).tolist()
        in_tile = (np.arange(n) % tile).reshape(THREADS, k)
        stages = [threads_stage("keys (blocked)", keys, tokens,
                                dimmed=None if valid is None else in_tile >= valid)]
        if values is not None:
            stages.append(threads_stage("values", values, tokens))
            stages[-1]["link"] = "none"
        last_keys = 0  # the stage the next keys row comes from
        if valid is None:
            # Merge sort's passes, from the reference: each thread sorts its own run, then runs
            # of 2, 4, ... threads are merged; the last pass is the result (drawn below).
            for label, slots, run in ref.merge_stages(keys, group_width=width, descending=desc)[1:-1]:
                perm_tokens = _sorted_tokens(ref, keys, run, k, desc)
                assert all(keys.reshape(-1)[perm_tokens[t][i]] == slots[t, i]
                           for t in range(THREADS) for i in range(k)), label
                st = threads_stage(label, slots, perm_tokens)
                st["from"] = last_keys
                stages.append(st)
                last_keys = len(stages) - 1
        out_k, out_v, (kdef, vdef) = ref.merge_sort(keys, values, group_width=width, descending=desc,
                                                    valid_items=valid, oob_default=oob)
        src = _sorted_tokens(ref, keys, gsize, k, desc, valid=valid)
        key_tokens = [[src[t][i] if (kdef[t, i] and (valid is None or in_tile[t, i] < valid)) else None
                       for i in range(k)] for t in range(THREADS)]
        st = threads_stage("sorted keys (blocked)", out_k, key_tokens, undefined=~kdef,
                           dimmed=None if oob is None else (in_tile >= valid))
        st["from"] = last_keys
        stages.append(st)
        if values is not None:
            vt = [[key_tokens[t][i] if vdef[t, i] else None for i in range(k)] for t in range(THREADS)]
            st = threads_stage("sorted values", out_v, vt, undefined=~vdef)
            st["link"] = "none"
            stages.append(st)
        gvar = "block" if width is None else "warp"
        args = _kw(descending=True if desc else None, valid_items=valid, oob_default=oob)
        call = (f"keys = coop.merge_sort_keys({gvar}, keys{args})" if op == "keys" else
                f"keys, values = coop.merge_sort_pairs({gvar}, keys, values{args})")
        notes = ["Stable: equal keys keep their tile order (same colour = same original position)."]
        if width is not None:
            notes.append(f"Each {'warp' if width == 4 else 'logical warp'} sorts its own tile of {tile} keys.")
        if valid is not None:
            notes.append(f"valid_items={valid}: only the first {valid} keys of each tile are sorted; "
                         + ("the key slots after them get oob_default, the value slots are undefined."
                            if oob is not None else "the slots after them are undefined."))
        else:
            notes.append("The intermediate rows show merge sort's passes (each a stable sort of longer runs); "
                         "only the last row is the operation's result.")
        scenarios[scenario_key((group, op, order, k, tile_mode))] = {
            "call": call, "groups": group_boxes(width), "notes": notes, "stages": stages}
    return {"family": "merge_sort", "title": "Merge sort", "threads": THREADS, "controls": controls,
            "default": scenario_key(("block", "keys", "ascending", 2, "full")), "scenarios": scenarios}


def _sorted_tokens(ref, keys, run, k, desc, valid=None):
    """Tokens (original positions) of the slots after stably sorting runs of ``run`` threads."""
    out = [[None] * k for _ in range(THREADS)]
    for start in range(0, THREADS, run):
        seg = keys[start:start + run].reshape(-1)
        limit = len(seg) if valid is None else min(valid, len(seg))
        perm = ref.sort_permutation(seg[:limit], descending=desc)
        for p, q in enumerate(perm):
            t, i = divmod(p, k)
            out[start + t][i] = start * k + int(q)
    return out


def build_radix():
    ref = _reference("radix")
    controls = [
        {"name": "op", "label": "operation", "options": [
            ["sort", "radix_sort_keys"], ["striped", "radix_sort_keys(blocked_to_striped=True)"],
            ["rank", "radix_rank"]]},
        {"name": "bits", "label": "radix_bits (bits per pass)", "options": [[b, str(b)] for b in (1, 2, 3, 6)]},
        {"name": "order", "label": "order", "options": [["ascending", "ascending"], ["descending", "descending=True"]]},
        {"name": "items", "label": "items per thread", "options": [[k, str(k)] for k in (1, 2, 3, 4)]},
    ]
    end_bit = 6  # the keys are below 64: sorting their 6 low bits sorts them
    scenarios = {}
    for op, bits, order, k in itertools.product(("sort", "striped", "rank"), (1, 2, 3, 6),
                                                ("ascending", "descending"), (1, 2, 3, 4)):
        n = THREADS * k
        keys = _RADIX_KEYS[:n].reshape(THREADS, k)
        desc = order == "descending"
        tokens = np.arange(n).reshape(THREADS, k).tolist()
        labels = [[f"thread {t} slot {i}: key {keys[t, i]} = 0b{int(keys[t, i]):06b}" for i in range(k)] for t in range(THREADS)]
        stages = [threads_stage("keys (blocked)", keys, tokens, labels=labels)]
        if op == "rank":
            if bits == 6 or bits > 8:
                continue
            ranks = ref.radix_rank(keys, begin_bit=0, radix_bits=bits, descending=desc)
            digit = ref.digits(keys, 0, bits)
            lab = [[f"thread {t} slot {i}: key {keys[t, i]}, digit {int(digit[t, i])} (bits 0-{bits - 1}), rank {ranks[t, i]}"
                    for i in range(k)] for t in range(THREADS)]
            stages.append(threads_stage(f"ranks by the digit of bits 0..{bits - 1}", ranks, tokens, labels=lab))
            tile_keys = np.empty(n, dtype=keys.dtype)
            tile_keys[ranks.reshape(-1)] = keys.reshape(-1)
            tile_tokens = np.empty(n, dtype=np.int64)
            tile_tokens[ranks.reshape(-1)] = np.arange(n)
            mem = memory_stage("tile[rank] = key (what one sort pass scatters)", tile_keys, tile_tokens.tolist())
            mem["from"] = 0
            stages.append(mem)
            call = f"ranks = coop.radix_rank(block, keys, radix_bits={bits}" + (", descending=True" if desc else "") + ")"
            notes = [f"The rank of a key is its position in the tile stably sorted by its digit "
                     f"(bits 0..{bits - 1}); the ranks are a permutation of 0..{n - 1}.",
                     "Hover a key for its bits and digit."]
        else:
            striped = op == "striped"
            passes = ref.radix_passes(keys, begin_bit=0, end_bit=end_bit, radix_bits=bits, descending=desc)
            where = np.arange(n)  # tile position -> original position of the key there
            for j, ((lo, hi), ranks, slots) in enumerate(passes):
                moved = np.empty_like(where)
                moved[ranks.reshape(-1)] = where
                where = moved
                last = j == len(passes) - 1
                tok = where.reshape(THREADS, k)
                if striped and last:
                    slots, _ = ref.radix_sort(keys, begin_bit=0, end_bit=end_bit, descending=desc,
                                              blocked_to_striped=True)
                    tok = where.reshape(k, THREADS).T
                assert (keys.reshape(-1)[tok.reshape(-1)] == slots.reshape(-1)).all()
                lab = [[f"thread {t} slot {i}: key {slots[t, i]} = 0b{int(slots[t, i]):06b}" for i in range(k)] for t in range(THREADS)]
                title = (f"pass {j + 1}: stably sorted by bits {lo}..{hi - 1}" +
                         (f" (so by bits 0..{hi - 1})" if lo else "") if not last else "sorted keys (" + ("striped" if striped else "blocked") + ")")
                stages.append(threads_stage(title, slots, tok.tolist(), labels=lab))
            args = f", end_bit={end_bit}, radix_bits={bits}" + (", descending=True" if desc else "")
            args += ", blocked_to_striped=True" if striped else ""
            call = f"keys = coop.radix_sort_keys(block, keys{args})"
            notes = [f"Least significant digit first: pass j stably sorts by bits "
                     f"{bits}*j .. {bits}*j+{bits - 1}, so after it the keys are sorted by all bits so far. "
                     "Hover a key for its bits.",
                     "end_bit=6: the keys are below 64, so only their 6 low bits need sorting (fewer passes)."]
            if striped:
                notes.append("blocked_to_striped=True: the last pass hands out the sorted tile striped "
                             "(thread t slot i holds sorted position t + i*8), ready for a striped store.")
        scenarios[scenario_key((op, bits, order, k))] = {
            "call": call, "groups": group_boxes(None), "notes": notes, "stages": stages}
    return {"family": "radix", "title": "Radix sort and rank", "threads": THREADS, "controls": controls,
            "default": scenario_key(("sort", 2, "ascending", 2)), "scenarios": scenarios}


def build_topk():
    ref = _reference("topk")
    controls = [
        {"name": "op", "label": "operation", "options": [
            ["min_keys", "topk_min_keys"], ["max_keys", "topk_max_keys"],
            ["min_pairs", "topk_min_pairs"], ["max_pairs", "topk_max_pairs"]]},
        {"name": "k", "label": "k", "options": [[v, str(v)] for v in (1, 3, 5, 8)]},
        {"name": "items", "label": "items per thread", "options": [[v, str(v)] for v in (1, 2, 3, 4)]},
        {"name": "tile", "label": "tile", "options": [["full", "full tile"], ["partial", "partial (valid_items)"]]},
    ]
    scenarios = {}
    for op, kk, k, tile_mode in itertools.product(("min_keys", "max_keys", "min_pairs", "max_pairs"),
                                                  (1, 3, 5, 8), (1, 2, 3, 4), ("full", "partial")):
        n = THREADS * k
        keys = _SORT_KEYS[:n].reshape(THREADS, k)
        pairs = op.endswith("pairs")
        largest = op.startswith("max")
        values = (100 + np.arange(n)).reshape(THREADS, k) if pairs else None
        valid = None if tile_mode == "full" else _partial(n)
        tokens = np.arange(n).reshape(THREADS, k).tolist()
        pos = ref.selected_positions(keys, kk, largest=largest, valid_items=valid)
        chosen = np.zeros(n, bool)
        chosen[pos] = True
        stages = [threads_stage("keys (blocked)", keys, tokens,
                                dimmed=None if valid is None else (np.arange(n) >= valid).reshape(THREADS, k))]
        if pairs:
            stages.append(threads_stage("values", values, tokens))
            stages[-1]["link"] = "none"
        out_k, out_v, defined = ref.topk(keys, values, k=kk, largest=largest, valid_items=valid)
        flat_tok = np.full(n, -1)
        flat_tok[:len(pos)] = pos
        tok = [[int(flat_tok[t * k + i]) if defined[t, i] else None for i in range(k)] for t in range(THREADS)]
        st = threads_stage(f"result: the {kk} {'largest' if largest else 'smallest'} keys first", out_k, tok,
                           undefined=~defined)
        st["from"] = 0
        stages.append(st)
        if pairs:
            st = threads_stage("result values", out_v, tok, undefined=~defined)
            st["link"] = "none"
            stages.append(st)
        name = f"topk_{op}"
        args = f", k={kk}" + (f", valid_items={valid}" if valid is not None else "")
        call = (f"keys = coop.{name}(block, keys{args})" if not pairs else
                f"keys, values = coop.{name}(block, keys, values{args})")
        m = len(pos)
        notes = [f"Tile positions 0..{m - 1} of the result hold the selection; the rest are undefined (?).",
                 "The selection is a set: its order is not part of the contract (this implementation "
                 "happens to return it sorted).  Ties at the k-th key go to earlier tile positions."]
        if valid is not None:
            notes.append(f"valid_items={valid}: only the first {valid} keys compete (dimmed keys do not).")
        scenarios[scenario_key((op, kk, k, tile_mode))] = {
            "call": call, "groups": group_boxes(None), "notes": notes, "stages": stages}
    return {"family": "topk", "title": "TopK", "threads": THREADS, "controls": controls,
            "default": scenario_key(("min_keys", 5, 2, "full")), "scenarios": scenarios}


# ------------------------------------------------------------------------------------------
# Histogram and run-length decode
# ------------------------------------------------------------------------------------------

_SAMPLES = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3,
                     2, 3, 8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5])


def build_histogram():
    ref = _reference("histogram")
    controls = [
        {"name": "bins", "label": "bins", "options": [[b, str(b)] for b in (4, 8, 10, 16)]},
        {"name": "items", "label": "samples per thread", "options": [[k, str(k)] for k in (1, 2, 3, 4)]},
        {"name": "tile", "label": "tile", "options": [["full", "all samples"], ["partial", "partial (valid_items)"]]},
        {"name": "layout", "label": "sample layout", "options": [["blocked", "blocked"], ["striped", "striped"]]},
    ]
    scenarios = {}
    for bins, k, tile_mode, layout in itertools.product((4, 8, 10, 16), (1, 2, 3, 4), ("full", "partial"),
                                                        ("blocked", "striped")):
        n = THREADS * k
        samples = _SAMPLES[:n].reshape(THREADS, k)
        valid = None if tile_mode == "full" else _partial(n)
        bpt = -(-bins // THREADS)
        counted = ref.counted_mask(samples, bins, valid_items=valid, layout=layout)
        t, i = np.meshgrid(np.arange(THREADS), np.arange(k), indexing="ij")
        pos = ref.sample_position(layout, t, i, THREADS, k)
        labels = [[f"thread {a} slot {b}: sample {samples[a, b]} at tile position {pos[a, b]}"
                   + ("" if counted[a, b] else " (not counted)") for b in range(k)] for a in range(THREADS)]
        stages = [threads_stage(f"samples ({layout})", samples, pos.tolist(), dimmed=~counted, labels=labels)]
        counters = ref.histogram(samples, bins, bpt, valid_items=valid, layout=layout)
        tc, ic = np.meshgrid(np.arange(THREADS), np.arange(bpt), indexing="ij")
        which = ref.counter_bin(tc, ic, THREADS)
        tokens = []
        for a in range(THREADS):
            row = []
            for b in range(bpt):
                bin_ = int(which[a, b])
                row.append([int(pos[x, y]) for x in range(THREADS) for y in range(k)
                            if counted[x, y] and samples[x, y] == bin_] if bin_ < bins else None)
            tokens.append(row)
        lab = [[f"thread {a} counter {b}: bin {int(which[a, b])}" + ("" if which[a, b] < bins else " (past bins: 0)")
                for b in range(bpt)] for a in range(THREADS)]
        stages.append(threads_stage("counters (striped: thread t counter i = bin t + 8i)", counters, tokens,
                                    dimmed=which >= bins, labels=lab))
        args = f"bins={bins}" + (f", bins_per_thread={bpt}" if bpt != 1 else "")
        args += f", valid_items={valid}" if valid is not None else ""
        args += ", layout='striped'" if layout == "striped" else ""
        notes = ["Counters are striped: thread t slot i counts bin t + i*8 (store them with "
                 "algorithm='striped'). Click a counter to see the samples it counts.",
                 f"Samples outside [0, {bins}) are not counted (dimmed)."]
        if valid is not None:
            notes.append(f"valid_items={valid}: samples at tile position {valid} or later (in the "
                         f"{layout} layout) are not counted.")
        scenarios[scenario_key((bins, k, tile_mode, layout))] = {
            "call": f"counts = coop.histogram(block, samples, {args})",
            "groups": group_boxes(None), "notes": notes, "stages": stages}
    return {"family": "histogram", "title": "Histogram", "threads": THREADS, "controls": controls,
            "default": scenario_key((10, 2, "full", "blocked")), "scenarios": scenarios}


_RUN_VALUES = np.array([7, 3, 9, 1, 4, 8, 2, 6, 5, 0, 3, 7, 1, 9, 4, 2])
_RUN_LENGTHS = {
    "mixed": np.array([2, 1, 3, 1, 2, 4, 1, 2, 3, 1, 2, 1, 1, 2, 3, 1]),
    "empty_runs": np.array([2, 0, 3, 1, 0, 4, 1, 0, 3, 1, 0, 1, 2, 0, 3, 1]),
}


def build_run_length_decode():
    ref = _reference("run_length")
    controls = [
        {"name": "runs", "label": "runs per thread", "options": [[r, str(r)] for r in (1, 2)]},
        {"name": "decoded", "label": "decoded items per thread", "options": [[d, str(d)] for d in (1, 2, 3, 4)]},
        {"name": "window", "label": "window", "options": [[w, f"window {w}"] for w in (0, 1, 2)]},
        {"name": "lengths", "label": "run lengths", "options": [["mixed", "all positive"],
                                                                 ["empty_runs", "with empty runs"]]},
    ]
    scenarios = {}
    for r, d, w, pattern in itertools.product((1, 2), (1, 2, 3, 4), (0, 1, 2), _RUN_LENGTHS):
        n = THREADS * r
        values = _RUN_VALUES[:n].reshape(THREADS, r)
        lengths = _RUN_LENGTHS[pattern][:n].reshape(THREADS, r)
        offset = w * THREADS * d
        window, _rel, total = ref.decode_window(values, lengths, THREADS, d, window_offset=offset, oob_default=0)
        tc, ic = np.meshgrid(np.arange(THREADS), np.arange(d), indexing="ij")
        pos = ref.window_position(tc, ic, d, offset)
        runs = ref.run_of_position(lengths, pos)
        if w > 0 and offset >= total:
            continue  # a window wholly past the end: nothing to show
        tokens = np.arange(n).reshape(THREADS, r).tolist()
        stages = [threads_stage("run_values (blocked runs)", values, tokens),
                  threads_stage("run_lengths", lengths, tokens, dimmed=lengths <= 0)]
        stages[1]["link"] = "none"
        lab = [[f"thread {a} slot {b}: decoded position {int(pos[a, b])}" +
                (f", run {int(runs[a, b])}" if runs[a, b] >= 0 else " (past the total: oob_default)")
                for b in range(d)] for a in range(THREADS)]
        st = threads_stage(f"decoded window (positions {offset}..{offset + THREADS * d - 1})", window,
                           [[int(runs[a, b]) if runs[a, b] >= 0 else None for b in range(d)] for a in range(THREADS)],
                           dimmed=runs < 0, labels=lab)
        st["from"] = 0
        stages.append(st)
        args = f"decoded_items_per_thread={d}" + (f", decoded_window_offset={offset}" if offset else "")
        notes = [f"The {n} runs decode to {total} items; a window of 8*{d} = {THREADS * d} decoded items is "
                 f"blocked (thread t slot i = decoded position {offset} + t*{d} + i).",
                 "Positions at or past the total get oob_default (0, dimmed). Loop over windows with "
                 "decoded_window_offset, or use run_length_decode_into to write everything to an array."]
        if pattern == "empty_runs":
            notes.append("Runs of length 0 (dimmed) decode to nothing.")
        scenarios[scenario_key((r, d, w, pattern))] = {
            "call": f"window = coop.run_length_decode(block, run_values, run_lengths, {args})",
            "groups": group_boxes(None), "notes": notes, "stages": stages}
    return {"family": "run_length", "title": "Run-length decode", "threads": THREADS, "controls": controls,
            "default": scenario_key((2, 3, 0, "mixed")), "scenarios": scenarios}


# ------------------------------------------------------------------------------------------
# Reductions and scans: provenance from the reference model itself
# ------------------------------------------------------------------------------------------
#
# Which inputs a result combines is computed by running the same reference function with
# one-hot inputs (1 << position) and a union operator (bitwise or, as a Python function, which
# the models accept like a device callback): the bits of each result are its inputs.

PREFIX_BIT, INIT_BIT = 40, 41  # tokens of the prefix_op result and of initial_value


def _union(a, b):
    return a | b


def _onehot(n, k):
    return (np.uint64(1) << np.arange(n, dtype=np.uint64)).reshape(THREADS, k)


def _bits(value) -> list:
    v = int(value)
    return [b for b in range(64) if v >> b & 1]


_REDUCE_VALUES = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3,
                           2, 3, 8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5])
_OP_TEXT = {"sum": "+", "max": "max", "min": "min"}


def build_reduce():
    ref = _reference("reduce")
    controls = [
        {"name": "group", "label": "group", "options": [[g, GROUPINGS[g][1]] for g in GROUPINGS]},
        {"name": "op", "label": "binary_op", "options": [[o, o] for o in ("sum", "max", "min")]},
        {"name": "items", "label": "items per thread", "options": [[k, str(k)] for k in (1, 2, 3, 4)]},
        {"name": "tile", "label": "items", "options": [["full", "all items"], ["partial", "valid_items"]]},
        {"name": "broadcast", "label": "result", "options": [["rank0", "first member (default)"],
                                                              ["broadcast", "broadcast=True"]]},
    ]
    scenarios = {}
    for group, op, k, tile_mode, bc in itertools.product(GROUPINGS, ("sum", "max", "min"), (1, 2, 3, 4),
                                                         ("full", "partial"), ("rank0", "broadcast")):
        width = GROUPINGS[group][0]
        gsize = THREADS if width is None else width
        tile = gsize * k
        n = THREADS * k
        values = _REDUCE_VALUES[:n].reshape(THREADS, k).astype(np.int32)
        valid = None if tile_mode == "full" else _partial(tile)
        broadcast = bc == "broadcast"
        out, defined = ref.reduce(values, op, group_width=width, valid_items=valid, broadcast=broadcast)
        bits, _ = ref.reduce(_onehot(n, k), _union, group_width=width, valid_items=valid, broadcast=broadcast)
        in_tile = (np.arange(n) % tile).reshape(THREADS, k)
        stages = [threads_stage("value (blocked: member r holds items r*K..r*K+K-1)", values,
                                np.arange(n).reshape(THREADS, k).tolist(),
                                dimmed=None if valid is None else in_tile >= valid)]
        tokens = [[_bits(bits[t]) if defined[t] else None] for t in range(THREADS)]
        stages.append(threads_stage("result (one scalar per thread)", out.reshape(THREADS, 1), tokens,
                                    undefined=~defined.reshape(THREADS, 1)))
        gvar = "block" if width is None else "warp"
        fn = "coop.sum" if op == "sum" else "coop.reduce"
        args = (f", binary_op={op!r}" if op != "sum" else "") + _kw(valid_items=valid) + \
            (", broadcast=True" if broadcast else "")
        notes = [f"Every member contributes its {k} item(s); the result is the {op} of the group's tile."]
        notes.append("Every member of the group holds the result." if broadcast else
                     "Only the group's first member holds the result; the others' value is undefined (?), "
                     "though every member must make the call.")
        if valid is not None:
            notes.append(f"valid_items={valid}: only the first {valid} items of each group's tile contribute.")
        scenarios[scenario_key((group, op, k, tile_mode, bc))] = {
            "call": f"total = {fn}({gvar}, items{args})", "groups": group_boxes(width),
            "notes": notes, "stages": stages}
    return {"family": "reduce", "title": "Reduce", "threads": THREADS, "controls": controls,
            "default": scenario_key(("block", "sum", 2, "full", "rank0")), "scenarios": scenarios}


def build_reduce_batched():
    ref = _reference("reduce")
    groups = {g: GROUPINGS[g] for g in ("warp4", "warp2")}
    controls = [
        {"name": "group", "label": "group", "options": [[g, groups[g][1]] for g in groups]},
        {"name": "batches", "label": "batches B (items per lane)", "options": [[b, str(b)] for b in (1, 2, 3, 4, 6)]},
        {"name": "op", "label": "binary_op", "options": [[o, o] for o in ("sum", "max")]},
        {"name": "layout", "label": "output_layout", "options": [["striped", "striped"], ["blocked", "blocked"]]},
    ]
    scenarios = {}
    for group, b, op, layout in itertools.product(groups, (1, 2, 3, 4, 6), ("sum", "max"), ("striped", "blocked")):
        width = groups[group][0]
        n = THREADS * b
        values = _REDUCE_VALUES[:n].reshape(THREADS, b).astype(np.int32) if n <= 32 else \
            np.resize(_REDUCE_VALUES, n).reshape(THREADS, b).astype(np.int32)
        out, defined = ref.reduce_batched(values, op, group_width=width, output_layout=layout)
        bits, _ = ref.reduce_batched(_onehot(n, b), _union, group_width=width, output_layout=layout) \
            if n <= 64 else (None, None)
        per_lane = out.shape[1]
        labels = [[f"lane {t % width} of warp {t // width}, item {j}: batch {j}" for j in range(b)]
                  for t in range(THREADS)]
        stages = [threads_stage("value (slot j of every lane = batch j)", values,
                                np.arange(n).reshape(THREADS, b).tolist(), labels=labels)]
        tokens = [[_bits(bits[t, s]) if defined[t, s] else None for s in range(per_lane)] for t in range(THREADS)]
        lab = [[f"lane {t % width} slot {s}: batch {int(ref.batch_of_slot(t % width, s, width, b, layout))}"
                for s in range(per_lane)] for t in range(THREADS)]
        stages.append(threads_stage(f"result ({layout}: {per_lane} slot(s) per lane)", out, tokens,
                                    undefined=~defined, labels=lab))
        args = f", binary_op={('+' if op == 'sum' else op)!r}"  # required: there is no default operator
        args += f", output_layout={layout!r}" if layout != "striped" else ""
        rule = "lane l slot s holds batch l + s*W" if layout == "striped" else "lane l slot s holds batch l*S + s"
        notes = [f"Batch j is slot j of every lane of a warp: B={b} batches over W={width} lanes give each "
                 f"lane S = ceil(B/W) = {per_lane} result slot(s); {rule}.",
                 "Slots that name no batch are undefined (?). Click a result to see its batch."]
        scenarios[scenario_key((group, b, op, layout))] = {
            "call": f"sums = coop.reduce_batched(warp, items{args})", "groups": group_boxes(width),
            "notes": notes, "stages": stages}
    return {"family": "reduce", "title": "Batched warp reduction", "threads": THREADS, "controls": controls,
            "default": scenario_key(("warp4", 3, "sum", "striped")), "scenarios": scenarios}


def build_scan():
    ref = _reference("scan")
    controls = [
        {"name": "group", "label": "group", "options": [[g, GROUPINGS[g][1]] for g in GROUPINGS]},
        {"name": "mode", "label": "mode", "options": [["inclusive", "inclusive"], ["exclusive", "exclusive"]]},
        {"name": "op", "label": "scan_op", "options": [[o, o] for o in ("sum", "max")]},
        {"name": "items", "label": "items per thread", "options": [[k, str(k)] for k in (1, 2, 3, 4)]},
        {"name": "extra", "label": "extra", "options": [
            ["none", "none"], ["valid", "valid_items (warps)"], ["prefix", "prefix_op (block)"]]},
    ]
    scenarios = {}
    for group, mode, op, k, extra in itertools.product(GROUPINGS, ("inclusive", "exclusive"), ("sum", "max"),
                                                       (1, 2, 3, 4), ("none", "valid", "prefix")):
        width = GROUPINGS[group][0]
        if extra == "valid" and width is None:
            continue
        if extra == "prefix" and width is not None:
            continue
        gsize = THREADS if width is None else width
        tile = gsize * k
        n = THREADS * k
        values = _REDUCE_VALUES[:n].reshape(THREADS, k).astype(np.int32)
        valid = _partial(tile) if extra == "valid" else None
        init = 0 if (mode == "exclusive" and op != "sum" and extra != "prefix") else None
        prefix_value = 100 if op == "sum" else 4  # e.g. the total (or max) of earlier tiles
        prefix = (lambda agg: prefix_value) if extra == "prefix" else None
        out, defined, _agg = ref.scan(values, op, mode=mode, initial_value=init, group_width=width,
                                      valid_items=valid, prefix=prefix)
        seed_bits = None
        if prefix is not None:
            seed_bits = np.uint64(1) << np.uint64(PREFIX_BIT)
        elif mode == "exclusive":
            seed_bits = (np.uint64(1) << np.uint64(INIT_BIT)) if init is not None else np.uint64(0)
        bits, _d, _ = ref.scan(_onehot(n, k), _union, mode=mode, initial_value=seed_bits, group_width=width,
                               valid_items=valid, prefix=(lambda agg: seed_bits) if prefix is not None else None)
        stages = []
        if prefix is not None:
            stages.append(memory_stage("prefix_op(block_aggregate) returns", [prefix_value], [PREFIX_BIT]))
        elif init is not None:
            stages.append(memory_stage("initial_value", [init], [INIT_BIT]))
        in_tile = (np.arange(n) % tile).reshape(THREADS, k)
        stages.append(threads_stage("value (blocked)", values, np.arange(n).reshape(THREADS, k).tolist(),
                                    dimmed=None if valid is None else in_tile >= valid))
        if len(stages) > 1:
            stages[-1]["link"] = "none"
        tokens = [[_bits(bits[t, i]) if defined[t, i] else None for i in range(k)] for t in range(THREADS)]
        st = threads_stage(f"{mode} {op} scan", out, tokens, undefined=~defined)
        st["link"] = "max" if mode == "inclusive" else "all"
        if len(stages) > 1:
            st["from"] = len(stages) - 1
        if mode == "exclusive":
            st["link"] = "max"
        stages.append(st)
        gvar = "block" if width is None else "warp"
        if op == "sum":
            call = f"out = coop.{mode}_sum({gvar}, items"
        else:
            call = f"out = coop.{mode}_scan({gvar}, items, scan_op={op!r}"
            call += f", initial_value={init}" if init is not None else ""
        call += f", valid_items={valid}" if valid is not None else ""
        call += ", prefix_op=prefix" if prefix is not None else ""
        call += ")"
        rule = ("item p receives x[0] op ... op x[p]" if mode == "inclusive" else
                "item p receives init op x[0] op ... op x[p-1] (item 0: init" +
                (", 0 for sums)" if op == "sum" else ")"))
        notes = [f"The scan runs over the group's tile in blocked order: {rule}. Click a result to see "
                 "every item it combines."]
        if width is not None:
            notes.append(f"Each {'warp' if width == 4 else 'logical warp'} scans its own tile of {tile} items.")
        if valid is not None:
            notes.append(f"valid_items={valid}: results past the first {valid} items are undefined (?).")
        if prefix is not None:
            notes.append(f"A block prefix callback's return value (here {prefix_value}, e.g. the running "
                         f"{'total' if op == 'sum' else 'maximum'} of earlier tiles) is combined in front of "
                         "every item; an exclusive scan returns it for item 0.")
        scenarios[scenario_key((group, mode, op, k, extra))] = {
            "call": call, "groups": group_boxes(width), "notes": notes, "stages": stages}
    return {"family": "scan", "title": "Scan", "threads": THREADS, "controls": controls,
            "default": scenario_key(("block", "inclusive", "sum", 2, "none")), "scenarios": scenarios}


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
    "merge_sort": ("Merge sort", "merge_sort", build_merge_sort),
    "radix": ("Radix sort and rank", "radix", build_radix),
    "topk": ("TopK", "topk", build_topk),
    "histogram": ("Histogram", "histogram", build_histogram),
    "run_length_decode": ("Run-length decode", "run_length", build_run_length_decode),
    "reduce": ("Reduce", "reduce", build_reduce),
    "reduce_batched": ("Batched warp reduction", "reduce", build_reduce_batched),
    "scan": ("Scan", "scan", build_scan),
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
