"""Stage and scenario helpers of the explorer datasets (see coop_explorer_data.py for the
format): the teaching block, its groupings, references to cuda.coop.reference, and the
threads/memory stage builders every family's explorer uses."""

from __future__ import annotations

import importlib

import numpy as np

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


def _partial(tile: int) -> int:
    """The valid_items of a scenario's partial tile: about two thirds of it."""
    return tile - max(1, tile // 3)
