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
             "u": [undefined cell indices], "d": [dimmed cell indices], "lab": [cell labels]}

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
# Registry and export
# ------------------------------------------------------------------------------------------

# explorer id -> (title, reference module, builder)
EXPLORERS = {
    "load_store": ("Load and store", "load_store", build_load_store),
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
