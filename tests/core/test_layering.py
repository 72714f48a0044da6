"""The core is compiler-neutral and family-blind: nothing under cuda/coop/core imports the
families (ops/) or a backend; the families build on core.spec (the contract) and
ops/_validate.py; backends sit on top of both."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cuda.coop

pytestmark = pytest.mark.unit

PACKAGE = Path(cuda.coop.__file__).parent


def _imports(path: Path):
    """Absolute module names a file imports (relative imports resolved)."""
    parts = path.relative_to(PACKAGE.parent.parent).with_suffix("").parts
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(parts[:len(parts) - node.level])
                module = f"{base}.{node.module}" if node.module else base
                yield module
                if not node.module:  # from . import x
                    yield from (f"{base}.{alias.name}" for alias in node.names)
            else:
                yield node.module


@pytest.mark.parametrize("path", sorted((PACKAGE / "core").glob("*.py")), ids=lambda p: p.name)
def test_core_imports_neither_families_nor_backends(path):
    bad = [m for m in _imports(path) if m.startswith(("cuda.coop.ops", "cuda.coop.backends"))]
    assert not bad, f"core/{path.name} imports {bad}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "ops").glob("*.py")), ids=lambda p: p.name)
def test_families_import_no_backend(path):
    bad = [m for m in _imports(path) if m.startswith("cuda.coop.backends") or m.startswith("numba")]
    assert not bad, f"ops/{path.name} imports {bad}"
