"""Explorer datasets of reductions and scans (provenance from the reference model itself)."""

from __future__ import annotations

import itertools

import numpy as np

from coop_explorer_stages import (
    GROUPINGS,
    THREADS,
    _kw,
    _partial,
    _reference,
    group_boxes,
    memory_stage,
    scenario_key,
    threads_stage,
)

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
