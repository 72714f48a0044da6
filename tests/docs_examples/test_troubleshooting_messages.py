"""The troubleshooting page quotes cuda.coop's error messages exactly.

Each kernel in ``docs/examples/mistakes.py`` has one mistake.  This test compiles them all
in a fresh process (so per-process counters in messages are deterministic) and compares
each message with ``docs/troubleshooting/messages/<name>.txt``, which the page includes.
After changing a message on purpose, regenerate the quotes:

    COOP_DOCS_REGEN=1 python -m pytest tests/docs_examples/test_troubleshooting_messages.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from . import DOCS, ROOT

pytestmark = pytest.mark.compile

pytest.importorskip("numba_cuda_mlir")

MESSAGES = DOCS / "troubleshooting" / "messages"

_RUNNER = textwrap.dedent("""
    import importlib.util, json, sys
    path, root = sys.argv[1], sys.argv[2]
    spec = importlib.util.spec_from_file_location("coop_docs_mistakes", path)
    m = importlib.util.module_from_spec(spec)
    sys.modules["coop_docs_mistakes"] = m
    spec.loader.exec_module(m)
    from cuda import coop
    from cuda.coop.numba_mlir import compile_cubin
    out = {}
    for name, (fn, args, launch, expected) in m.MISTAKES.items():
        try:
            fn() if args is None else compile_cubin(fn, args, cc=(9, 0), **launch)
            out[name] = {"expected": expected, "raised": None, "text": None}
        except coop.CoopError as exc:
            text = f"{type(exc).__name__}: {exc}".replace(root + "/", "")
            out[name] = {"expected": expected, "raised": type(exc).__name__, "text": text}
    print("COOP-MESSAGES " + json.dumps(out))
""")


@pytest.fixture(scope="module")
def messages():
    env = dict(os.environ, CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION="")
    result = subprocess.run([sys.executable, "-c", _RUNNER, str(DOCS / "examples" / "mistakes.py"), str(ROOT)],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    line = [ln for ln in result.stdout.splitlines() if ln.startswith("COOP-MESSAGES ")]
    assert line, result.stdout[-2000:] + result.stderr[-4000:]
    return json.loads(line[-1][len("COOP-MESSAGES "):])


def test_every_mistake_raises_its_error(messages):
    wrong = {n: (m["expected"], m["raised"]) for n, m in messages.items() if m["raised"] != m["expected"]}
    assert not wrong, wrong


def test_quoted_messages_are_current(messages):
    regen = os.environ.get("COOP_DOCS_REGEN", "") not in ("", "0")
    stale = []
    for name, m in messages.items():
        path = MESSAGES / f"{name}.txt"
        text = (m["text"] or "") + "\n"
        if regen:
            MESSAGES.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        elif not path.is_file() or path.read_text() != text:
            stale.append(name)
    extra = sorted(p.stem for p in MESSAGES.glob("*.txt") if p.stem not in messages)
    assert not extra, f"quoted messages without a case in docs/examples/mistakes.py: {extra}"
    assert not stale, (f"docs/troubleshooting/messages differ from the real messages for {stale}; "
                       "rerun with COOP_DOCS_REGEN=1 and review the diff")
