"""Explorer datasets of data movement: load/store, exchange, shuffle, adjacent difference and discontinuity."""

from __future__ import annotations

import itertools

import numpy as np

from coop_explorer_stages import (
    GROUPINGS,
    THREADS,
    _display,
    _kw,
    _partial,
    _reference,
    group_boxes,
    memory_stage,
    scenario_key,
    threads_stage,
)

# ------------------------------------------------------------------------------------------
# Load / store
# ------------------------------------------------------------------------------------------

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
