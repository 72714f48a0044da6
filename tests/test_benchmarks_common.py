"""benchmarks/common.py: the per-launch figures next to the batched ones (no GPU needed)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def common():
    spec = importlib.util.spec_from_file_location("coop_bench_common", BENCH / "common.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.unit
def test_nvcc_results_carry_per_launch_twins(common):
    merged = common._with_per_launch({"memcpy": 0.5, "uniform": {"per_tile_atomic": 0.2}},
                                     {"memcpy": 0.53, "uniform": {"per_tile_atomic": 0.26}})
    assert merged == {"memcpy": 0.5, "uniform": {"per_tile_atomic": 0.2}}
    assert merged["uniform"]["per_tile_atomic"].per_launch_ms == 0.26
    assert common.per_launch(merged) == {"memcpy": 0.53, "uniform": {"per_tile_atomic": 0.26}}


@pytest.mark.unit
def test_per_launch_table_records_every_side_and_the_floor(common, capsys):
    T = common.Timing
    report = {
        "coop_ms": {"uniform": {"atomic": T(0.21, 0.31), "sort": T(1.1, 1.2)}, "torch.sum": None,
                    "launch_overhead_us": 20.0},
        "cub_ms": {"uniform": {"per_tile_atomic": T(0.2, 0.25)}},
        "cub_nvrtc_ms": {"uniform": {"atomic": T(0.2, 0.27)}},
        "plain_ms": {"copy": T(0.5, 0.56)},
    }
    common.per_launch_table(report, "case", rename={"cub_ms": lambda k: k.replace("/", "/per_tile_")})
    assert report["per_launch_ms"] == {
        "coop": {"uniform/atomic": 0.31, "uniform/sort": 1.2},
        "cub": {"uniform/per_tile_atomic": 0.25},
        "cub_nvrtc": {"uniform/atomic": 0.27},
        "plain": {"copy": 0.56},
    }
    assert set(report["methods"]) == {"batched", "per_launch"}
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("uniform/atomic"))
    assert row.split()[1:] == ["0.310", "0.250", "0.806", "0.270", "0.871"]
    assert "0.560 ms per launch, 0.500 ms batched" in out
    # The batched figures stay what the JSON (and docs/_ext's renderer) reads.
    assert json.loads(json.dumps(report))["coop_ms"]["uniform"] == {"atomic": 0.21, "sort": 1.1}


@pytest.mark.compile
def test_timing_prelude_compiles_with_nvcc(common, tmp_path):
    """The C++ median_ms (batched, and COOP_BENCH_BATCH=1 per launch) that every baseline uses."""
    nvcc = common.nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    source = tmp_path / "prelude.cu"
    source.write_text(common.TIMING_CPP + r"""
__global__ void k(int* p) { p[threadIdx.x] = 1; }
float run(int* p) { return coop_bench::median_ms([&] { k<<<1, 32>>>(p); }, 15); }
""")
    out = subprocess.run([nvcc, "-std=c++17", "-arch=sm_90", "-c", "-o", str(tmp_path / "prelude.o"), str(source)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


@pytest.mark.unit
def test_compile_latency_rounds_get_their_own_cache_and_report_medians(common, monkeypatch):
    # Each process counts what the earlier processes of its round left in the provider cache
    # directory: cold sees nothing, warm sees the cold run, the plain kernel sees both.
    monkeypatch.delenv("COOP_BENCH_SKIP_LATENCY", raising=False)
    template = (
        "import json, os, pathlib\n{coop_import}\n{kernel}\n"
        "d = pathlib.Path(os.environ['CUDA_COOP_CACHE_DIR']); n = len(list(d.iterdir()))\n"
        "(d / f'run{{n}}').write_text('')\n"
        "print(json.dumps({{'first_launch_s': v + n, 'second_launch_s': 0.0}}))\n"
    )
    lat = common.compile_latency(template, "v = 2.0", "v = 0.5", repeat=3)
    assert lat["cold"]["first_launch_samples_s"] == [2.0, 2.0, 2.0]
    assert lat["warm_disk_cache"]["first_launch_s"] == 3.0
    assert lat["without_coop"]["first_launch_s"] == 2.5
    assert common.latency_over_plain(lat) == {"cold": -0.5, "warm_disk_cache": 0.5}


@pytest.mark.unit
def test_latency_children_use_bytecode_as_an_installed_package_does(common, monkeypatch, tmp_path):
    # A development shell that sets PYTHONDONTWRITEBYTECODE would otherwise make every fresh
    # process compile cuda.coop from source (~45 ms of an H100's warm first launch).
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    (tmp_path / "probe_module.py").write_text("VALUE = 1\n")
    code = (f"import json, sys; sys.path.insert(0, {str(tmp_path)!r}); import probe_module\n"
            "print(json.dumps({'dont_write_bytecode': sys.flags.dont_write_bytecode}))\n")
    assert common.timed_subprocess(code)["dont_write_bytecode"] == 0
    assert list((tmp_path / "__pycache__").glob("probe_module.*.pyc"))


@pytest.mark.unit
def test_for_compiler_swaps_the_compiler_import_or_refuses(common):
    source = "import numpy\nfrom numba_cuda_mlir import cuda\n@cuda.jit\ndef k(): pass\n"
    assert common.for_compiler(source, "numba-cuda-mlir") == source
    swapped = common.for_compiler(source, "numba-cuda")
    assert "from numba import cuda\n" in swapped and "numba_cuda_mlir" not in swapped
    with pytest.raises(ValueError, match="no 'from numba_cuda_mlir import cuda' line"):
        common.for_compiler("from numba import cuda\n", "numba-cuda")


@pytest.mark.compile
def test_kernels_of_a_classic_run_are_compiled_by_numba_cuda(common):
    """``--compiler numba-cuda``: import_source builds classic numba-cuda dispatchers, which
    compile a cuda.coop kernel to cubin without a GPU."""
    from .backends_param import require

    require("numba-cuda")
    import numpy as np

    source = ("import numpy as np\nfrom numba_cuda_mlir import cuda\nfrom cuda import coop\n\n"
              "@cuda.jit\ndef k(src, dst):\n    items = coop.ThreadData(4, dtype=np.int32)\n"
              "    coop.load(coop.this_block(), src, items)\n    coop.store(coop.this_block(), dst, items)\n")
    common.use_compiler("numba-cuda")
    try:
        module = common.import_source(source, "bench_classic_probe")
    finally:
        common.use_compiler("numba-cuda-mlir")
    assert type(module.k).__module__.startswith("numba.cuda")
    from numba.cuda import types

    from cuda.coop.numba_cuda import compile_cubin

    binary = compile_cubin(module.k, (types.int32[::1], types.int32[::1]), block=128)
    assert len(binary.cubin) > 1000
    with pytest.raises(ValueError, match="expected one of"):
        common.use_compiler("numba")


@pytest.mark.compile
@pytest.mark.parametrize("mode", ["checked", "unchecked"])
def test_check_cost_kernels_compile_in_both_modes(mode, monkeypatch):
    """benchmarks/check_cost.py's kernels, as a device run builds them (cubin, no GPU)."""
    monkeypatch.setenv("CUDA_COOP_CHECKED", "1")  # restored after the test: _module() sets it
    import importlib.util
    import sys
    from pathlib import Path

    import numpy as np

    bench = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(bench))
    spec = importlib.util.spec_from_file_location("coop_check_cost", bench / "check_cost.py")
    check_cost = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_cost)
    from cuda.coop.numba_mlir import compile_cubin

    for name, (ipt, value_of, _out) in check_cost.CASES.items():
        kernel = getattr(check_cost._module(mode, ipt), name)
        a = np.zeros(1, np.int32)
        kb = compile_cubin(kernel, [a, a, np.int64(7)], cc=(9, 0), block=check_cost.THREADS)
        assert ("trap;" in kb.ptx) == (mode == "checked"), name


@pytest.mark.unit
def test_run_meta_names_the_run(common, monkeypatch):
    """What a rendered table says of its run: device, toolkit versions, commit, date, command."""
    monkeypatch.setenv("COOP_BENCH_COMMIT", "abc1234")
    meta = common.run_meta("NVIDIA H200", (9, 0))
    assert meta["device"] == "NVIDIA H200" and meta["cc"] == "9.0" and meta["commit"] == "abc1234"
    assert meta["toolkit"].startswith("NVRTC ") and ", CCCL " in meta["toolkit"] and "/" not in meta["toolkit"]
    assert meta["date"].endswith(" UTC") and meta["compiler"].startswith("numba-cuda-mlir")
    monkeypatch.delenv("COOP_BENCH_COMMIT")
    assert common.run_meta("x", (8, 0))["commit"]  # git's, or "unknown" outside a checkout
    assert common.run_meta("x", (8, 0), "numba-cuda")["compiler"].startswith("numba-cuda")


@pytest.mark.unit
def test_run_meta_marks_files_that_differ_from_head(common, tmp_path):
    """A copy of a working tree with an older ``.git`` (the device's) must not name that HEAD
    as the commit of what ran."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("no git on this machine")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f.txt").write_text("one")
    subprocess.run([*git, "add", "f.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert common._git_commit(tmp_path) == head
    (tmp_path / "untracked.txt").write_text("not the tree's")
    assert common._git_commit(tmp_path) == head
    (tmp_path / "f.txt").write_text("two")
    assert common._git_commit(tmp_path) == f"{head}-modified"



@pytest.mark.unit
@pytest.mark.parametrize("family", ["load_store", "reduce", "scan"])
def test_latency_scripts_take_a_first_launch_profile(common, family, tmp_path, capsys):
    """``--latency-profile``: each family's latency script (either compiler) gets cProfile
    around its first launch only, and a script without that line is refused."""
    import sys

    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"coop_bench_latency_{family}", BENCH / f"bench_{family}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    code_template, coop_kernel, _plain = module.FAMILY.latency
    path = tmp_path / "first.prof"
    for compiler in ("numba-cuda-mlir", "numba-cuda"):
        script = common.for_compiler(code_template, compiler).format(coop_import="from cuda import coop",
                                                                     kernel=coop_kernel)
        profiled = common.with_first_launch_profile(script, path)
        compile(profiled, f"<{family}>", "exec")
        lines = profiled.splitlines()
        launch = next(i for i, line in enumerate(lines) if line.startswith("t0 = time.perf_counter(); k["))
        assert lines[launch - 1].endswith("_profile.enable()")
        assert lines[launch + 1] == f"_profile.disable(); _profile.dump_stats({str(path)!r})"
    with pytest.raises(ValueError, match="first launch"):
        common.with_first_launch_profile("print('no launch')", path)
    with pytest.raises(SystemExit) as exc:
        module.main(["--help"])
    assert exc.value.code == 0 and "--latency-profile" in capsys.readouterr().out
