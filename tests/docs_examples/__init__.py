"""The documentation's code examples (docs/examples/*.py), imported and run by the tests.

Every snippet the docs show is cut from these files with ``literalinclude`` and
``# example-begin <name>`` / ``# example-end <name>`` markers, so what readers copy is
what these tests compile (marker ``compile``, no GPU) and run (marker ``gpu``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"


def example_paths() -> list:
    return sorted(p for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


def kernel_example_paths() -> list:
    """Examples with kernels: all but mistakes.py (its own test) and pure-Python ones."""
    out = []
    for p in example_paths():
        if p.name == "mistakes.py" or "PURE_PYTHON = True" in p.read_text():
            continue
        out.append(p)
    return out


def load_example(path: Path):
    """Import ``docs/examples/<name>.py`` as module ``coop_docs_example_<name>`` (once)."""
    name = f"coop_docs_example_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
