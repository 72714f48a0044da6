"""Explorer datasets of sorting and selection (merge sort, radix sort/rank, TopK), histogram and run-length decode."""

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
