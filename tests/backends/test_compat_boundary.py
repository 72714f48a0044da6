"""Only each backend's _compat modules may import its compiler's private names:
backends/numba_mlir/_compat*.py for numba_cuda_mlir (_compat.py: typing, lowering, compile;
_compat_launch.py: the launch path), backends/numba_cuda/_compat*.py for
classic numba-cuda (``numba.cuda`` beyond its public ``numba.cuda`` namespace, ``llvmlite``).
Classic's _upstream_names.py (its version check) may import the ``numba_cuda`` package itself."""

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

SRC = Path(__file__).resolve().parents[2] / "src" / "cuda" / "coop"
PUBLIC = {"numba_cuda_mlir", "numba_cuda_mlir.cuda", "numba_cuda_mlir.extending"}


def _private_imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("numba_cuda_mlir"):
            if node.module not in PUBLIC:
                yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("numba_cuda_mlir") and alias.name not in PUBLIC:
                    yield node.lineno, alias.name


def test_private_numba_cuda_mlir_imports_live_in_compat():
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.name.startswith("_compat") and path.parent.name == "numba_mlir":
            continue
        offenders += [f"{path.relative_to(SRC)}:{line} {mod}" for line, mod in _private_imports(path)]
    assert not offenders, "private numba_cuda_mlir imports outside _compat*.py:\n" + "\n".join(offenders)


def test_core_and_ops_never_import_the_compiler():
    for sub in ("core", "ops", "reference"):
        for path in (SRC / sub).rglob("*.py"):
            text = path.read_text()
            assert "numba_cuda_mlir" not in text, f"{path} is compiler-neutral"


# Classic numba-cuda: ``from numba import cuda`` is public; any other numba / llvmlite
# module is the compat module's business.
PUBLIC_CLASSIC = {"numba"}


def _classic_imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            root = node.module.split(".")[0]
            if root in ("numba", "numba_cuda", "llvmlite") and node.module not in PUBLIC_CLASSIC:
                yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("numba", "numba_cuda", "llvmlite"):
                    yield node.lineno, alias.name


def test_private_numba_cuda_imports_live_in_classic_compat():
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.name.startswith("_compat") and path.parent.name == "numba_cuda":
            continue
        found = _classic_imports(path)
        if path.name == "_upstream_names.py" and path.parent.name == "numba_cuda":
            found = [(line, mod) for line, mod in found if mod != "numba_cuda"]  # __version__ only
        offenders += [f"{path.relative_to(SRC)}:{line} {mod}" for line, mod in found]
    assert not offenders, "numba-cuda / llvmlite imports outside backends/numba_cuda/_compat*.py:\n" + "\n".join(
        offenders)


def test_core_and_ops_never_import_classic_numba_cuda():
    for sub in ("core", "ops", "reference"):
        for path in (SRC / sub).rglob("*.py"):
            assert not list(_classic_imports(path)), f"{path} is compiler-neutral"
