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

import json
from pathlib import Path

from coop_explorer_collectives import build_reduce, build_reduce_batched, build_scan
from coop_explorer_movement import (
    build_adjacent_difference,
    build_discontinuity,
    build_exchange,
    build_load_store,
    build_shuffle,
)
from coop_explorer_sorting import (
    build_histogram,
    build_merge_sort,
    build_radix,
    build_run_length_decode,
    build_topk,
)
from coop_explorer_stages import GROUPINGS, THREADS, MissingReference, scenario_key

__all__ = [
    "THREADS", "GROUPINGS", "EXPLORERS", "MissingReference", "build", "available", "export",
    "scenario_key", "validate_dataset",
]


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
