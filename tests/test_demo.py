"""``python -m cuda.coop demo``: the first command after install (README, "Quick start").

The compile tests run the command as a user does, in a subprocess, and check what it prints;
the GPU test also runs the kernels and checks them against NumPy (skipped with the reason
where there is no GPU).  The unit tests cover the arguments it refuses and its helpers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuda.coop._demo import DEFAULT_FAMILY, FAMILIES

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _demo(*args, code=None, cache=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    if cache is not None:
        env["CUDA_COOP_CACHE_DIR"] = str(cache)
    cmd = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "cuda.coop", "demo", *args]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, env=env, timeout=300)


def _gpu_available():
    try:
        from numba_cuda_mlir import cuda

        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001  (no driver at all)
        return False


# -- compile: no GPU needed ------------------------------------------------------------


@pytest.mark.compile
def test_demo_compiles_the_readme_kernel_and_describes_it(tmp_path):
    pytest.importorskip("numba_cuda_mlir")
    out = _demo(cache=tmp_path / "cache")  # a cold provider cache: NVRTC runs, as after an install
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for needle in ("cuda-coop demo: reduce:", "def tile_sums(source, sums, items_per_thread):",
                   "coop.sum(block, items, broadcast=False)", "kernels.py:",
                   "compiled tile_sums(source: int32[:], sums: int32[:], items_per_thread=4)",
                   "  target           sm_", "  block            128x1x1", " per thread",
                   "  shared memory    ", " B static", "no calls left: every CUB wrapper was inlined",
                   "  cubin            ", "  SASS             ", "NVRTC compiled 1 translation unit",
                   "CCCL ", "NVRTC 1", "nvJitLink 1", "numba-cuda-mlir 0.",
                   "compile_cubin(tile_sums, [np.zeros(1, np.int32), np.zeros(1, np.int32), 4]"):
        assert needle in text, f"{needle!r} missing from:\n{text}"
    if _gpu_available():
        assert "check            PASS" in text, text
    else:
        # One line says the run was skipped, and why; the exit status is still 0.
        skipped = [line for line in text.splitlines() if line.startswith("run: skipped: no GPU (")]
        assert len(skipped) == 1, text
        assert "sm_90 (no GPU: the default" in text
    assert "Traceback" not in out.stderr

    # Warm: the CUB code comes from the provider cache the first run filled.
    warm = _demo("--json", cache=tmp_path / "cache")
    assert warm.returncode == 0, warm.stderr
    report = json.loads(warm.stdout)
    (kernel,) = report["kernels"]
    assert kernel["family"] == DEFAULT_FAMILY and kernel["kernel"] == "tile_sums"
    assert kernel["nvrtc_compiles"] == 0 and kernel["calls_left"] == 0
    assert kernel["registers"] > 0 and kernel["cubin_bytes"] > 1000 and kernel["shared_bytes"] > 0
    assert set(report["toolchain"]) == {"cuda_coop", "numba_cuda_mlir", "cccl", "nvrtc", "nvjitlink"}
    assert (report["run_skipped"] is None) == _gpu_available()


@pytest.mark.compile
def test_demo_family_and_arch_pick_the_kernel_and_target():
    pytest.importorskip("numba_cuda_mlir")
    out = _demo("--family", "radix", "--arch", "sm_80")
    assert out.returncode == 0, out.stderr
    assert "cuda-coop demo: radix:" in out.stdout and "def radix_sort_tiles(" in out.stdout
    assert "  target           sm_80 (--arch)" in out.stdout
    assert "no calls left" in out.stdout
    out = _demo("--family", "histogram", "--cc", "12.0", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["target"] == "sm_120" and report["kernels"][0]["kernel"] == "tile_histograms"


@pytest.mark.compile
def test_demo_all_compiles_one_kernel_of_every_family():
    pytest.importorskip("numba_cuda_mlir")
    out = _demo("--all")
    assert out.returncode == 0, out.stdout + out.stderr
    rows = {line.split()[0]: line for line in out.stdout.splitlines() if line.split()[:1] and line.split()[0] in FAMILIES}
    assert list(rows) == list(FAMILIES), out.stdout
    for family, row in rows.items():
        assert " none " in row, row  # no calls left
    assert f"{len(FAMILIES)} of {len(FAMILIES)} kernels compiled" in out.stdout
    # The progress line goes to stderr: one line per step when stderr is not a terminal.
    assert f"] 0/{len(FAMILIES)} {FAMILIES[0]}: compiling" in out.stderr
    assert f"] {len(FAMILIES)}/{len(FAMILIES)} done" in out.stderr


@pytest.mark.compile
def test_demo_compile_failure_names_the_error_and_exits_1():
    pytest.importorskip("numba_cuda_mlir")
    out = _demo("--items-per-thread", "3000")  # more than a thread's registers can hold
    assert out.returncode == 1
    assert "cuda-coop demo: reduce (tile_sums) failed: cuda.coop.InvalidArgumentValueError: " \
           "coop.ThreadData(): items_per_thread=3000" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and "--verbose prints the traceback" in out.stderr
    out = _demo("--items-per-thread", "3000", "--verbose")
    assert out.returncode == 1 and "Traceback (most recent call last)" in out.stderr


@pytest.mark.compile
def test_demo_refuses_an_architecture_nvrtc_cannot_compile_for():
    pytest.importorskip("numba_cuda_mlir")
    # sm_30: below every CUDA 12 and 13 NVRTC's list (CUDA 12 still compiles for sm_50, 13 does not).
    out = _demo("--arch", "sm_30")
    assert out.returncode == 2
    assert "--arch sm_30 is not an architecture NVRTC" in out.stderr and "sm_90" in out.stderr, out.stderr


@pytest.mark.compile
def test_demo_kernels_cover_every_family_in_the_listed_order():
    pytest.importorskip("numba_cuda_mlir")
    import numpy as np

    from cuda.coop._demo.kernels import DEMOS

    assert tuple(DEMOS) == FAMILIES
    for family, demo in DEMOS.items():
        # What the GPU run compares: the output array as the kernel leaves it (normalized) has
        # the shape of NumPy's result, so a mismatch is about values, never about layout.
        case = demo.case(np.random.default_rng(1), 3, 4)
        out = case.args[case.output]
        got = case.normalize(out) if case.normalize else out
        assert got.shape == np.asarray(case.expected).shape, family
        assert case.args[-1] == 4 and isinstance(case.args[-1], int), family  # items_per_thread, a literal


@pytest.mark.compile
def test_sass_size_from_the_cubin_is_nvdisasms_count(nvdisasm):
    """The demo reads the SASS size from the cubin's code sections, with no tool: it must be
    what nvdisasm lists, padding included."""
    pytest.importorskip("numba_cuda_mlir")
    if nvdisasm is None:
        pytest.skip("nvdisasm not installed (the sass extra)")
    import re

    from cuda.coop._demo.command import compile_one
    from cuda.coop._demo.kernels import DEMOS

    for family in ("reduce", "radix", "run_length"):
        for cc in ((8, 0), (9, 0)):
            result = compile_one(DEMOS[family], cc, 4, want_sass=True)
            listed = len(re.findall(r"^\s*/\*[0-9a-f]{4,}\*/", result["sass"], re.MULTILINE))
            assert result["sass_instructions"] == listed > 0, (family, cc)
            assert result["sass_bytes"] == 16 * listed


@pytest.mark.compile
@pytest.mark.parametrize("passed", [True, False])
def test_demo_with_a_gpu_prints_the_check_and_the_time(monkeypatch, capsys, passed):
    """The text a GPU run prints, on a machine without one: the GPU probe and the run are
    stand-ins (the gpu test below runs the real ones); the compile is real."""
    pytest.importorskip("numba_cuda_mlir")
    import cuda.coop.__main__ as cli
    from cuda.coop._demo import command

    gpu = {"devices": [{"id": 0, "name": "NVIDIA H200", "cc": [9, 0]}]}
    monkeypatch.setattr(cli, "_gpu", lambda: gpu)
    detail = "PASS: equal to NumPy (1024 values)" if passed else "FAIL: 1 of 1024 values differ from NumPy"

    def fake_run(demo, blocks, items_per_thread, seed):
        out = {"blocks": blocks, "threads": 128, "seed": seed, "first_launch_seconds": 0.5,
               "passed": passed, "detail": detail}
        if passed:
            out.update(us_per_launch=5.25, timing="median of 15 samples")
        return out

    monkeypatch.setattr(command, "run_one", fake_run)
    assert cli.main(["demo"]) == (0 if passed else 1)
    text = capsys.readouterr()
    assert "  target           sm_90 (the GPU's)" in text.out
    assert "run on GPU 0: NVIDIA H200 (sm_90), 1024 blocks x 128 threads, seed 0" in text.out
    assert f"  check            {detail}" in text.out
    assert ("  time per launch  5.25 us (median of 15 samples)" in text.out) == passed
    assert ("cuda-coop demo: reduce (tile_sums) failed: FAIL: 1 of 1024" in text.err) != passed

    if passed:  # the table's run column (one compile of every family: once is enough)
        assert cli.main(["demo", "--all"]) == 0
        table = capsys.readouterr().out
        assert table.count("PASS 5.25 us") == len(FAMILIES), table
        assert "run: on NVIDIA H200, time per launch" in table


# -- gpu: runs the kernels -------------------------------------------------------------


@pytest.mark.gpu
def test_demo_runs_every_family_and_matches_numpy():
    out = _demo("--all", "--json", "--blocks", "64")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["run_skipped"] is None and report["target"].startswith("sm_")
    for kernel in report["kernels"]:
        run = kernel["run"]
        assert run["passed"], kernel
        assert run["us_per_launch"] > 0 and run["detail"].startswith("PASS"), kernel
    out = _demo()
    assert out.returncode == 0, out.stderr
    assert "check            PASS: equal to NumPy (1024 values)" in out.stdout
    assert "time per launch  " in out.stdout and " us (median of 15 samples" in out.stdout


# -- unit: arguments and helpers ---------------------------------------------------------


@pytest.mark.unit
def test_unknown_family_exits_2_listing_the_families():
    out = _demo("--family", "sorting")
    assert out.returncode == 2
    assert "--family 'sorting' is not an operation family; pick one of: " + ", ".join(FAMILIES) in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.unit
@pytest.mark.parametrize("args, message", [
    (("--arch", "sm90a"), "--arch 'sm90a' is not an architecture; write sm_ and"),
    (("--cc", "9"), "--cc '9' is not a compute capability; write major.minor"),
    (("--items-per-thread", "0"), "--items-per-thread 0 must be at least 1"),
    (("--all", "--family", "radix"), "not allowed with argument"),
])
def test_wrong_arguments_exit_2(args, message):
    out = _demo(*args)
    assert out.returncode == 2 and message in out.stderr, out.stderr


@pytest.mark.unit
def test_help_is_plain_text():
    for args in ((), ("demo",)):
        out = subprocess.run([sys.executable, "-m", "cuda.coop", *args, "--help"], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=SRC), timeout=120)
        assert out.returncode == 0, out.stderr
        assert "``" not in out.stdout and ":func:" not in out.stdout, out.stdout
    assert "demo" in out.stdout and ", ".join(FAMILIES[:4]) in out.stdout.replace("\n", " ")


@pytest.mark.unit
def test_demo_without_numba_cuda_mlir_says_how_to_install():
    code = ("import sys; sys.modules['numba_cuda_mlir'] = None\n"
            "import warnings; warnings.simplefilter('ignore')\n"
            "from cuda.coop.__main__ import main; sys.exit(main(['demo']))")
    out = _demo(code=code)
    assert out.returncode == 1
    assert "cuda-coop demo: cannot compile: ModuleNotFoundError" in out.stderr and "pip install" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.unit
def test_families_are_the_registry_families():
    from cuda.coop.ops._registry import FAMILIES as MODULES

    assert sorted(FAMILIES) == sorted(m.__name__.rsplit(".", 1)[1] for m in MODULES)
    assert DEFAULT_FAMILY == FAMILIES[0] == "reduce"


@pytest.mark.unit
def test_compare_names_the_first_difference():
    import numpy as np

    from cuda.coop._demo.command import _compare

    assert _compare(np.arange(4), np.arange(4)) == (True, "PASS: equal to NumPy (4 values)")
    ok, text = _compare(np.array([0, 1, 5, 7]), np.arange(4))
    assert not ok and text == ("FAIL: 2 of 4 values differ from NumPy; the first at index 2: kernel 5, NumPy 2")
    assert _compare(np.arange(3), np.arange(4))[1].startswith("FAIL: the result has shape (3,)")


@pytest.mark.unit
def test_progress_line_without_a_terminal_writes_one_line_per_step():
    import io

    from cuda.coop._demo.command import _Progress

    stream = io.StringIO()
    progress = _Progress(2, stream)
    progress.step(0, "reduce: compiling")
    progress.step(1, "scan: compiling")
    progress.done()
    assert stream.getvalue().splitlines() == [
        "[......................] 0/2 reduce: compiling",
        "[###########...........] 1/2 scan: compiling",
        "[######################] 2/2 done",
    ]
