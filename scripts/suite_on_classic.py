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
}
_LAYOUT = ("AssertionError", "each call's scratch is a region of its own, never overlapped across the kernel, so "
           "the shared-memory sizes and offsets the test reads from numba-cuda-mlir's plan differ")
_ONE_UNIT = ("ValueError", "one generated C++ unit per call, not one per kernel (the test expects one)")
OPS_EXPECTED = {
    # 14 calls of 17 KiB each exceed 227 KiB without overlap (see _LAYOUT).
    **{f"test_load_store.py::test_load_store_matrix[logical-{t}-16]": (
        "SharedMemoryLimitError", "no scratch shared between calls (14 x 17 KiB)")
       for t in ("int64", "uint64", "float64")},
    **{f"test_checked_mode_compile.py::test_family_compiles_in_both_modes[{f}]": _ONE_UNIT for f in (
        "adjacent_difference", "block_reduce", "discontinuity", "load_store", "merge_sort", "radix_rank",
        "radix_sort", "run_length_window", "shuffle_up", "topk_select", "topk_sort", "warp_load")},
    "test_checked_mode_compile.py::test_histogram_compiles_in_both_modes": _ONE_UNIT,
    "test_checked_mode_compile.py::test_gpu_test_kernels_compile_in_both_modes[load_kernel]": _ONE_UNIT,
    "test_checked_mode_compile.py::test_gpu_test_kernels_compile_in_both_modes[topk_kernel]": _ONE_UNIT,
    "test_exchange_compile.py::test_gpu_test_kernels_compile[block-int64-ipt8]": _LAYOUT,
    "test_exchange_compile.py::test_gpu_test_kernels_compile[block-float64-ipt8]": _LAYOUT,
    "test_neighbors_compile.py::test_gpu_test_kernels_compile": _LAYOUT,
    **{f"test_merge_sort_compile.py::test_gpu_kernels_compile[{p}]": _LAYOUT
       for p in ("int32-ipt4", "uint16-ipt4", "uint64-ipt3", "float32-ipt4")},
    "test_reserve_compile.py::test_neighbour_kernels_place_reservations_in_their_regions": _LAYOUT,
    "test_reserve_compile.py::test_alignment_is_honoured_in_an_exclusive_region": _LAYOUT,
    "test_reserve_compile.py::test_ops_on_a_descriptor_with_reservations_leave_synchronization_to_the_caller": _LAYOUT,
    "test_reserve_compile.py::test_shared_reservations_add_up_and_precede_the_scratch": (
        "ValueError", _LAYOUT[1]),
    "test_reserve_compile.py::test_loop_helper_and_device_function_kernel": ("ValueError", _LAYOUT[1]),
    "test_scan_compile.py::test_explicit_temp_storage_layout": _LAYOUT,
    "test_reserve_errors.py::test_an_explicit_size_that_fits_every_reservation_compiles[shared-1024]": _LAYOUT,
    "test_load_store_compile.py::test_device_function_helpers_are_specialized_with_their_kernel": (
        "UnknownBlockDimensionError", "cooperative calls in a device function that is not inlined"),
    "test_load_store_compile.py::test_device_function_compiled_on_its_own_is_refused": (
        "AssertionError", "the refusal names inline='always' (the test looks for inline='never')"),
}

# Tests of numba-cuda-mlir itself (its internals, its registration), left out of the copy.
MLIR_ONLY = {"ops": (
    "test_load_store_errors.py::test_backend_not_registered",
    # These compile source files written for numba-cuda-mlir (benchmarks/, examples/,
    # tests/examples_src/, tests/parity/), which the copy does not convert.
    "test_histogram_compile.py::test_benchmark_kernel_compiles",
    "test_load_store_compile.py::test_newer_architectures",
    "test_load_store_compile.py::test_vectorize_emits_128_bit_accesses",
    "test_load_store_compile.py::test_issue_example_compiles_exactly_as_written",
    "test_reserve_compile.py::test_parity_reservations_come_before_the_scratch",
    "test_reserve_compile.py::test_parity_reservation_through_an_alias_in_an_inlined_helper",
    "test_scan_compile.py::test_running_scan_example_compiles",
)}
# Files not copied: they already run each test on both compilers (tests/backends_param.py).
SKIPPED = {"ops": ("test_backends_compile.py", "test_backends_gpu.py", "test_cluster_reduce.py",
                   "test_dynamic_shared.py", "test_dynamic_shared_compile.py")}
CONFTEST_TAIL = """

# Added by scripts/suite_on_classic.py: kernels built from source text use classic
# numba-cuda, and the refusals of classic numba-cuda are expected, by name.
import pytest as _pytest

from tests import kernelgen as _kernelgen

_kernelgen.DEFAULT_COMPILER = "numba-cuda"
EXPECTED_FAILURES = {expected!r}


def pytest_collection_modifyitems(config, items):
    for item in items:
        # A key names a test, or one of its parameter sets.
        key = item.path.name + "::" + item.name
        if key not in EXPECTED_FAILURES:
            key = key.split("[")[0]
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
    stale = sorted(key for key in expected if key.split("[")[0] not in names)
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
