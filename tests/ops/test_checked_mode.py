"""Run-time argument checks on the GPU: by default an out-of-range run-time argument
ends the launch after a report naming the call and its kernel line, with the PTX trap
NVIDIA's tests expect (CUDA_ERROR_ILLEGAL_INSTRUCTION or CUDA_ERROR_LAUNCH_FAILED, not a
device assertion); with ``CUDA_COOP_CHECKED=0`` it is clamped to a defined result.

A failed check leaves the CUDA context unusable, so each mode runs in a child
process (``checked_kernels.py``), which first launches the call with a valid value
and then with the bad one.  The kernels' compilation in both modes is covered by
test_checked_mode_compile.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from . import checked_kernels as ck

pytestmark = pytest.mark.gpu

CHILD_TIMEOUT_S = 300  # import, compile and two launches; a hang must not stall the suite
POISON = -77777


def _ref_load(src, n):
    out = np.full_like(src, -1)  # oob_default
    m = max(0, min(n, src.size))
    out[:m] = src[:m]
    return out, np.ones(src.size, bool)


def _ref_reduce(src, n):
    m = max(1, min(n, 32))
    sums = src.astype(np.int64).reshape(-1, 32)[:, :m].sum(axis=1).astype(np.int32)
    return np.repeat(sums, 32), np.ones(src.size, bool)


def _ref_shuffle(src, d):
    t = np.arange(src.size)
    return src[(t + d) % src.size], np.ones(src.size, bool)


def _ref_topk(src, k):
    m = max(0, min(k, src.size))
    out = np.sort(src)[::-1].copy()
    defined = np.arange(src.size) < m
    return out, defined


def _ref_run_length(src, length):
    decoded = np.repeat(src[:ck.RLD_RUNS], length)
    out = np.full(ck.RLD_ROOM, POISON, np.int64)
    m = min(decoded.size, ck.RLD_ROOM)
    out[:m] = decoded[:m]
    total = np.full(ck.THREADS, decoded.size, np.int64)
    return np.concatenate([out, total]), np.ones(ck.RLD_ROOM + ck.THREADS, bool)


def _ref_run_length_window(src, length):
    """The first window of run 0 (``length`` items of src[0]) then run 1 (one src[1]); the
    rest of the tile is past the total (0, the default)."""
    position = np.arange(ck.TILE, dtype=np.uint64)
    out = np.where(position < length, src[0], np.where(position == length, src[1], 0))
    return out, np.ones(ck.TILE, bool)


# case -> (valid value, bad value, reference(src, value) -> (expected, defined mask),
#          the checked report's text: the kernel, then the argument, its value and range)
CASES = {
    "load": (300, 1000, _ref_load, "in load_kernel", "valid_items=1000 is outside [0, 512]"),
    "store": (300, -1, None, "in store_kernel", "valid_items=-1 is outside [0, 512]"),
    "reduce": (20, 40, _ref_reduce, "in reduce_kernel", "valid_items=40 is outside [1, 32]"),
    "scan": (7, 0, None, "in scan_kernel", "valid_items=0 is outside [1, 32]"),
    "shuffle": (5, -1, _ref_shuffle, "in shuffle_kernel", "distance=-1 is outside [1, 127]"),
    "topk": (10, 600, _ref_topk, "in topk_kernel", "k=600 is outside [0, 512]"),
    "merge_sort": (100, 513, None, "in merge_sort_kernel", "valid_items=513 is outside [0, 512]"),
    "neighbors": (500, -5, None, "in neighbors_kernel", "valid_items=-5 is outside [0, 512]"),
    "radix": (4, 40, None, "in radix_kernel", "begin_bit=40 is outside [0, 31]"),
    "run_length": (2, 3, _ref_run_length, "in run_length_kernel",
                   "total decoded size=150 is above 100 (the room in destination after destination_offset)"),
    "run_length_window": (3, 2**32 - 1, _ref_run_length_window, "in run_length_window_kernel",
                          "total decoded size=4294967296 is above 4294967295 (the largest uint32, "
                          "decoded_offset_dtype)"),
}
TRAP_ERRORS = ("CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_LAUNCH_FAILED")


def _run_child(case: str, checked: bool, tmp_path):
    good, bad = CASES[case][:2]
    env = dict(os.environ)
    env.pop("CUDA_COOP_CHECKED", None)  # checked: the default
    if not checked:
        env["CUDA_COOP_CHECKED"] = "0"
    # A module of the tests package (it takes the compiler from tests/compiler.py, which reads
    # the run's --compiler from the environment): run it with -m from the repository root.
    repo = Path(ck.__file__).resolve().parents[2]
    env["PYTHONPATH"] = os.pathsep.join([str(repo), *(os.path.abspath(p) for p in sys.path if p)])
    args = [sys.executable, "-m", ck.__name__, case, str(good), str(bad)]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, env=env,
                              cwd=tmp_path)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the child ({'checked' if checked else 'unchecked'} {case}) ran past {CHILD_TIMEOUT_S} s; "
                    f"output so far:\n{exc.stdout}\n{exc.stderr}")
    output = proc.stdout + proc.stderr
    results = [json.loads(line[len("RESULT "):]) for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    return proc.returncode, results, output


def _check_result(case: str, result: dict):
    reference = CASES[case][2]
    if reference is None:  # cases whose clamped result the family suites check already
        return
    src = np.asarray(result["src"])
    expected, defined = reference(src, result["value"])
    out = np.asarray(result["out"])
    np.testing.assert_array_equal(out[defined], expected[defined], err_msg=f"{case} with {result['value']}")


@pytest.fixture(autouse=True)
def _needs_device():
    from ..compiler import cuda

    if not cuda.is_available():
        pytest.skip("launches its kernels in a child process on a CUDA device; "
                    "test_checked_mode_compile.py compiles them without one")


@pytest.mark.parametrize("case", sorted(CASES))
def test_unchecked_clamps(case, tmp_path):
    rc, results, output = _run_child(case, False, tmp_path)
    assert rc == 0, output
    assert [r["value"] for r in results] == list(CASES[case][:2]), output
    for result in results:  # the bad value gives the clamped result
        _check_result(case, result)
    assert not [line for line in output.splitlines() if line.startswith("cuda.coop: ")], output


@pytest.mark.parametrize("case", sorted(CASES))
def test_checked_reports_and_fails(case, tmp_path):
    good, _bad, _ref, site, rule = CASES[case]
    rc, results, output = _run_child(case, True, tmp_path)
    assert rc != 0, f"the launch with the bad value did not fail:\n{output}"
    # The valid launch ran and was right; the bad one never returned.
    assert [r["value"] for r in results] == [good], output
    _check_result(case, results[0])
    # One report: the call, where it is written, the argument, its value and range.
    reports = [line for line in output.splitlines() if line.startswith("cuda.coop: ")]
    assert len(reports) == 1, output
    assert "at checked_kernels.py:" in reports[0] and site in reports[0], reports
    assert reports[0].endswith(rule), reports
    # NVIDIA's contract: a trap (an illegal instruction, or the general launch failure),
    # not a device assertion (CUDA_ERROR_ASSERT).
    assert any(error in output for error in TRAP_ERRORS), output
    assert "CUDA_ERROR_ASSERT" not in output, output
