"""benchmarks/first_launch_timeline.py: the scripts it runs, and its reading of cuda.coop's log."""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def tool():
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("coop_first_launch_timeline", BENCH / "first_launch_timeline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.unit
@pytest.mark.parametrize("shape", ["reduce", "load_store"])
def test_each_shape_notes_its_launch_just_before_the_timed_first_launch(tool, shape):
    code = tool.script(shape)
    compile(code, f"<{shape}>", "exec")
    lines = code.splitlines()
    mark = lines.index("_launch_at = _time.perf_counter() - _T0")
    assert lines[mark + 1].startswith("t0 = time.perf_counter(); k[") and lines[mark + 1].endswith("first = time.perf_counter() - t0")
    assert code.index("_coop_log.addHandler") < code.index("from cuda import coop")


@pytest.mark.unit
def test_a_compile_that_waited_for_the_header(tool):
    """The logged NVRTC time includes the wait for a header still being built: the timeline
    splits the two (a 2-core machine's process of 2026-12-07, times from its start)."""
    result = {"launch_at": 1.264, "first_launch_s": 1.556, "log": [
        [1.306, "MainThread", "building NVRTC's precompiled header for sm_90 in the background (first compile_cubin)"],
        [1.863, "MainThread", "provider cache miss: 2 providers for sm_90, key 1cc5c255b52636f1"],
        [2.267, "cuda-coop-nvrtc-pch", "NVRTC precompiled header for sm_90 built in the background in 0.961 s"],
        [2.637, "MainThread", "NVRTC compiled 2 providers for sm_90 in 0.773 s (with PCH), key 1cc5c255b52636f1"],
        [2.648, "MainThread", "nvJitLink read 1 layouts in 0.011 s"]]}
    t = tool.timeline(result)
    assert t["build_reason"] == "first compile_cubin" and t["with_pch"] is True
    assert t["build_start"] == pytest.approx(0.042) and t["build"] == pytest.approx(0.961)
    assert t["compile_reached"] == pytest.approx(0.599) and t["waited"] == pytest.approx(0.404)
    assert t["compile"] == pytest.approx(0.370) and t["after_compile"] == pytest.approx(1.556 - 1.373)


@pytest.mark.unit
def test_a_header_started_before_the_launch_and_ready_before_the_compile(tool):
    """The eleventh H100 check's reduce process new-2: started by the definition (NVML),
    ready before the compiler reached cuda-coop's compile: no wait."""
    result = {"launch_at": 4.616, "first_launch_s": 1.251, "log": [
        [4.507, "cuda-coop-gpu-probe",
         "building NVRTC's precompiled header for sm_90 in the background (first cooperative kernel defined)"],
        [5.503, "cuda-coop-nvrtc-pch", "NVRTC precompiled header for sm_90 built in the background in 0.995 s"],
        [5.684, "MainThread", "provider cache miss: 2 providers for sm_90, key 2776eec257cc59d7"],
        [5.813, "MainThread", "NVRTC compiled 2 providers for sm_90 in 0.129 s (with PCH), key 2776eec257cc59d7"]]}
    t = tool.timeline(result)
    assert t["build_start"] == pytest.approx(-0.109) and t["waited"] == 0
    assert t["compile"] == pytest.approx(0.129) and t["build_reason"] == "first cooperative kernel defined"


@pytest.mark.unit
def test_a_process_that_compiled_nothing_is_refused(tool):
    with pytest.raises(ValueError, match="provider cache empty"):
        tool.timeline({"launch_at": 1.0, "first_launch_s": 0.1, "log": []})


@pytest.mark.unit
@pytest.mark.parametrize("argv, named, fix", [
    (["--rounds", "0"], "--rounds 0", "1 or more"),
    (["--base-src", "{tmp}"], "--base-src {tmp}", "give the src/ folder of a cuda-coop tree"),
])
def test_bad_arguments_are_refused_before_any_process_runs(tool, tmp_path, capsys, argv, named, fix):
    argv = [a.format(tmp=tmp_path) for a in argv]
    with pytest.raises(SystemExit):
        tool.main(argv)
    err = capsys.readouterr().err
    assert named.format(tmp=tmp_path) in err and fix in err, err


@pytest.mark.compile
@pytest.mark.only_on("numba-cuda-mlir", "the child compiles with numba-cuda-mlir whatever the suite's compiler")
def test_the_log_of_a_real_cold_compile_reads_as_a_timeline(tool):
    """A fresh process compiles the reduce benchmark's kernel to cubin (no GPU) with the
    header built in the background, the log captured as the tool captures it: the messages
    of core/build.py and core/pch.py must still read as a timeline."""
    pytest.importorskip("numba_cuda_mlir")
    import bench_reduce
    from common import timed_subprocess

    code = tool.LOG_CAPTURE + """
import json, time, numpy as np
from numba_cuda_mlir import cuda
from cuda import coop
from cuda.coop.numba_mlir import compile_cubin
""" + bench_reduce.COOP_KERNEL + """
_launch_at = _time.perf_counter() - _T0
t0 = time.perf_counter(); compile_cubin(k, [np.ones(4096, np.float32), np.zeros(1, np.float32)], cc=(9, 0), block=256); first = time.perf_counter() - t0
""" + tool.REPORT
    result = timed_subprocess(code, {"CUDA_COOP_CACHE_DIR": tempfile.mkdtemp(prefix="coop-timeline-test-"),
                                     "CUDA_COOP_NVRTC_PCH": "early"})
    assert result["build"] and result["build"]["ok"] and result["build"]["used"], json.dumps(result)[:2000]
    assert result["coop_file"].endswith(("cuda/coop/__init__.py", "cuda\\coop\\__init__.py")), result["coop_file"]
    t = tool.timeline(result)
    assert t["build_reason"] == "first compile_cubin" and t["with_pch"] is True, t
    assert 0 <= t["build_start"] < t["build_ready"] and 0 < t["compile_reached"] < t["compile_end"], t
    assert t["waited"] >= 0 and t["compile"] > 0 and t["after_compile"] > 0, t
    assert t["compile_end"] < t["first_launch"], t


@pytest.mark.gpu
@pytest.mark.only_on("numba-cuda-mlir", "the tool times the benchmarks' numba-cuda-mlir processes whatever the suite's compiler")
def test_one_round_on_the_device(tool, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OUT", str(tmp_path))
    tool.main(["--rounds", "1", "--shape", "load_store"])
    report = json.loads((tmp_path / "first_launch_timeline.json").read_text())
    (run,) = report["samples"]["load_store, this tree"]
    assert run["compile"] > 0 and run["first_launch"] > run["compile"], run
    assert "build started by" in capsys.readouterr().out
