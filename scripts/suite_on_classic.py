#!/usr/bin/env python3
"""A test suite compiled by classic numba-cuda instead of numba-cuda-mlir.

    python scripts/suite_on_classic.py {parity,ops} [--only-generate] [pytest args...]

``parity`` (tests/parity: the calls of NVIDIA's cuda.coop tests and documentation) and
``ops`` (tests/ops: every family's compile, error and GPU tests) are written for
numba-cuda-mlir.  This writes a copy of the suite under ``tests/_<suite>_numba_cuda/``
(ignored by git and by a plain ``pytest``) whose only changes are the compiler's import
lines (``from numba import cuda``, ``cuda.coop.numba_cuda``, ...) and, in its conftest,
the compiler of kernels built from source text (``tests/kernelgen.py``), then runs pytest
on the copy (``-m gpu`` on a machine with a GPU; add ``-p gpu_compile_only`` with
``ci/pytest_plugins`` on ``PYTHONPATH`` to compile without one).  A line that names
numba-cuda-mlir in any other way stops the copy, so the suites cannot drift apart
silently.  What classic numba-cuda does not do is marked xfail(strict=True) in the copy,
by test and exception class, so a refusal that starts working, or a test failing for
another reason, is reported.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each numba-cuda-mlir line of the suites and its classic numba-cuda equivalent.
SWAPS = {
    "from numba_cuda_mlir import cuda, types": "from numba import cuda\nfrom numba.cuda import types",
    "from numba_cuda_mlir import cuda": "from numba import cuda",
    "import cuda.coop.numba_mlir as numba_coop": "import cuda.coop.numba_cuda as numba_coop",
    "from numba_cuda_mlir.numba_cuda import types": "from numba.cuda import types",
    "from numba_cuda_mlir.numba_cuda.types import bfloat16": "from numba.cuda.types import bfloat16",
    "from numba_cuda_mlir.numba_cuda.types import bfloat16 as element":
        "from numba.cuda.types import bfloat16 as element",
    "from cuda.coop.numba_mlir import compile_cubin": "from cuda.coop.numba_cuda import compile_cubin",
    "from cuda.coop.numba_mlir import compile_cubin as compile_":
        "from cuda.coop.numba_cuda import compile_cubin as compile_",
    "import cuda.coop.numba_mlir": "import cuda.coop.numba_cuda",
    "import cuda.coop.numba_mlir as coop": "import cuda.coop.numba_cuda as coop",
    "import cuda.coop.numba_mlir as qualified": "import cuda.coop.numba_cuda as qualified",
    "import cuda.coop.numba_mlir as ncoop": "import cuda.coop.numba_cuda as ncoop",
    "import cuda.coop.numba_mlir as _qualified": "import cuda.coop.numba_cuda as _qualified",
    # A test of a numba-cuda-mlir internal has nothing to check on classic numba-cuda.
    "from numba_cuda_mlir import descriptor": 'pytest.skip("checks a numba-cuda-mlir internal")',
    'nb = pytest.importorskip("numba_cuda_mlir")': 'nb = pytest.importorskip("numba_cuda")',
    'pytest.importorskip("numba_cuda_mlir")': 'pytest.importorskip("numba_cuda")',
    'pytest.importorskip("numba_cuda_mlir", reason="numba-cuda-mlir is not installed")':
        'pytest.importorskip("numba_cuda", reason="numba-cuda is not installed")',
}
# What classic numba-cuda does not do (docs/choosing_a_compiler.rst), per suite.
PARITY_EXPECTED = {
    "test_device_helpers.py::test_block_and_warp_sums_in_helpers": (
        "UnknownBlockDimensionError", "cooperative calls in a device function that is not inlined"),
    "test_device_helpers.py::test_thread_data_returned_from_a_helper": (
        "TypingError", "numba-cuda cannot return a local array from a device function"),
    "test_groups.py::test_cluster_queries": (
        "TypeError", "numba-cuda 0.30 launches take no cluster shape"),
}
OPS_EXPECTED: dict = {}
# Tests of numba-cuda-mlir itself (its internals, its registration), left out of the copy.
MLIR_ONLY = {"ops": (
    "test_load_store_errors.py::test_backend_not_registered",
)}
# Files not copied: they already run each test on both compilers (tests/backends_param.py).
SKIPPED = {"ops": ("test_backends_compile.py", "test_backends_gpu.py", "test_dynamic_shared.py",
                   "test_dynamic_shared_compile.py")}
CONFTEST_TAIL = """

# Added by scripts/suite_on_classic.py: kernels built from source text use classic
# numba-cuda, and the refusals of classic numba-cuda are expected, by name.
import pytest as _pytest

from tests import kernelgen as _kernelgen

_kernelgen.DEFAULT_COMPILER = "numba-cuda"
EXPECTED_FAILURES = {expected!r}


def pytest_collection_modifyitems(config, items):
    for item in items:
        key = item.path.name + "::" + item.name.split("[")[0]
        if key in EXPECTED_FAILURES:
            error, why = EXPECTED_FAILURES[key]
            item.add_marker(_pytest.mark.xfail(
                strict=True, reason=f"classic numba-cuda: {{why}} ({{error}})",
                raises=_named_exception(error)))


def _named_exception(name):
    import builtins

    import cuda.coop as coop
    from numba.cuda.core import errors

    return getattr(coop, name, None) or getattr(errors, name, None) or getattr(builtins, name)
"""
HEADER = "# Generated by scripts/suite_on_classic.py from tests/{suite}/{name}: edit that file instead.\n"


def _names_the_mlir_compiler(code: str) -> bool:
    """An import of numba-cuda-mlir or cuda.coop.numba_mlir, or an attribute read through one
    (docstrings that quote NVIDIA's numba_mlir test paths do not count)."""
    stripped = code.strip()
    if stripped.startswith(("import ", "from ")):
        return "numba_cuda_mlir" in stripped or "numba_mlir" in stripped
    return re.search(r"\bnumba_cuda_mlir\.\w", stripped) is not None


def _without(text: str, tests) -> str:
    """``text`` without the top-level test functions named in ``tests`` (decorators too)."""
    import ast

    drop = set()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name in tests:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            drop.update(range(first, node.end_lineno + 1))
    return "\n".join(line for number, line in enumerate(text.splitlines(), 1) if number not in drop)


def convert(text: str, suite: str, name: str) -> str:
    text = _without(text, {key.split("::")[1] for key in MLIR_ONLY.get(suite, ()) if key.startswith(name + "::")})
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        head, sep, comment = line.partition("  #")
        swapped = SWAPS.get(head.strip())
        if swapped is not None:
            indent = head[: len(head) - len(head.lstrip())]
            line = "\n".join(indent + part for part in swapped.split("\n")) + (sep + comment if sep else "")
        elif _names_the_mlir_compiler(head):
            raise SystemExit(f"tests/{suite}/{name}:{number}: no classic numba-cuda equivalent known for "
                             f"{line.strip()!r}; add one to SWAPS in {Path(__file__).name}")
        lines.append(line)
    return HEADER.format(suite=suite, name=name) + "\n".join(lines) + "\n"


SUITES = {"parity": PARITY_EXPECTED, "ops": OPS_EXPECTED}


def generate(suite: str) -> Path:
    source, target = ROOT / "tests" / suite, ROOT / "tests" / f"_{suite}_numba_cuda"
    expected = SUITES[suite]
    if target.exists():
        shutil.rmtree(target)
    target.mkdir()
    for path in sorted(source.glob("*.py")):
        if path.name in SKIPPED.get(suite, ()):
            continue
        text = convert(path.read_text(), suite, path.name)
        (target / path.name).write_text(text)
    conftest = target / "conftest.py"
    base = conftest.read_text() if conftest.exists() else "import pytest\n"
    conftest.write_text(base + CONFTEST_TAIL.format(expected=expected))
    names = {p.name + "::" + n for p in source.glob("test_*.py")
             for n in re.findall(r"^def (test_\w+)", p.read_text(), re.M)}
    stale = sorted(set(expected) - names)
    if stale:
        raise SystemExit(f"the expected failures name tests that tests/{suite} no longer has: {stale}")
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("--only-generate", action="store_true", help="write the copy, run nothing")
    args, rest = parser.parse_known_args(argv)
    target = generate(args.suite)
    print(f"{args.suite} suite for classic numba-cuda written to {target.relative_to(ROOT)}", flush=True)
    if args.only_generate:
        return 0
    return subprocess.call([sys.executable, "-m", "pytest", str(target.relative_to(ROOT)), *rest], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
