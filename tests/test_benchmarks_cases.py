"""Every family benchmark (benchmarks/bench_*.py) built without a GPU.

Each family declares its cases for benchmarks/harness.py; these tests build what a
device run would: every case's cuda.coop kernel (``compile_cubin``, no driver), the
C++ twins built by NVRTC (through cuda.core) and by nvcc (skipped, visibly, without
nvcc), so the device run measures instead of debugging.  Launching and timing need
the H200: ``python benchmarks/run_all.py``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
FAMILIES = sorted(p.stem.removeprefix("bench_") for p in BENCH.glob("bench_*.py"))
# Variants with their own kernels or C++ types (the JSON name takes the suffix).
VARIANTS = [(name, []) for name in FAMILIES] + [("load_store", ["--dtype", "float16"]),
                                                 ("radix_sort", ["--dtype", "float16"])]
IDS = [" ".join([name, *argv]) for name, argv in VARIANTS]


def load(name: str):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"coop_bench_{name}", BENCH / f"bench_{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def family_and_config(name: str, argv=()):
    import harness

    family = load(name).FAMILY
    return family, harness.configure(family, list(argv), device=False)


@pytest.mark.unit
def test_eight_families():
    assert FAMILIES == ["exchange", "histogram", "load_store", "neighbors", "radix_sort", "reduce", "scan", "shuffle"]


@pytest.mark.unit
@pytest.mark.parametrize("name", FAMILIES)
def test_help(name, capsys):
    with pytest.raises(SystemExit) as exc:
        load(name).main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--threads" in out and "--items" in out
    if name in ("load_store", "reduce", "scan"):
        assert "--latency-only" in out


@pytest.mark.unit
def test_warm_first_compile_help(capsys):
    import importlib

    module = importlib.import_module("warm_first_compile")
    with pytest.raises(SystemExit) as exc:
        module.main(["--help"])
    assert exc.value.code == 0 and "--base-src" in capsys.readouterr().out


@pytest.mark.unit
def test_json_names():
    import harness

    for name, argv, expected in [("radix_sort", [], "radix_sort"), ("radix_sort", ["--dtype", "float16"],
                                  "radix_sort_float16"), ("load_store", ["--dtype", "int32"], "load_store"),
                                 ("histogram", ["--blocks-per-sm", "4"], "histogram")]:
        family, cfg = family_and_config(name, argv)
        assert harness.json_name(family, cfg) == expected


@pytest.mark.unit
def test_nest():
    import harness

    assert harness.nest({"a": 1, "u/x": 2, "u/y": 3}) == {"a": 1, "u": {"x": 2, "y": 3}}


def _argtypes(case, specs):
    """What a launch passes, as compile_cubin takes it: an example array per buffer, ints as literals."""
    return [np.zeros(2, dtype=specs[a].dtype) if isinstance(a, str) else a for a in case.args]


@pytest.mark.compile
@pytest.mark.parametrize("name, argv", VARIANTS, ids=IDS)
def test_cases_compile(name, argv):
    """Every case's kernel to cubin for sm_90 at its block size; names line up with the C++ twin."""
    from cuda.coop.numba_mlir import compile_cubin

    family, cfg = family_and_config(name, argv)
    cases = family.cases(cfg)
    specs = family.buffers(cfg)
    names = [case.name for case in cases]
    assert len(set(names)) == len(names), names
    cub_source = family.specialize(family.cub_source, cfg)
    built = {}
    for case in cases:
        assert all(a in specs for a in case.args if isinstance(a, str)), (case.name, case.args)
        if case.cub is not None:  # the nvcc program prints this key (the last part of a nested one)
            assert f'"{case.cub.split("/")[-1]}' in cub_source, case.cub
        if case.twin:
            assert re.search(rf"__global__ void {re.escape(case.twin.split('<')[0])}\(", family.cub_kernels), case.twin
        argtypes = _argtypes(case, specs)
        key = (id(case.kernel), case.block, repr([getattr(a, "dtype", a) for a in argtypes]))
        if key not in built:
            built[key] = compile_cubin(case.kernel, argtypes, cc=(9, 0), block=case.block)
        assert built[key].cubin, case.name


@pytest.mark.compile
@pytest.mark.parametrize("name, argv", [v for v in VARIANTS if load(v[0]).FAMILY.cub_kernels],
                         ids=[i for v, i in zip(VARIANTS, IDS) if load(v[0]).FAMILY.cub_kernels])
def test_nvrtc_twins_compile(name, argv):
    """The C++ twins built by NVRTC with cuda.coop's options, through cuda.core (no GPU needed)."""
    from common import compile_nvrtc

    family, cfg = family_and_config(name, argv)
    expressions = sorted({case.twin for case in family.cases(cfg) if case.twin})
    assert expressions
    code = compile_nvrtc(family.specialize(family.cub_kernels, cfg), expressions, "sm_90")
    assert set(expressions) <= set(code.symbol_mapping), code.symbol_mapping


@pytest.mark.compile
@pytest.mark.parametrize("name, argv", VARIANTS, ids=IDS)
def test_nvcc_twin_compiles(name, argv):
    """The nvcc program (C++ twin + timing prelude) compiles: a device run then only runs it."""
    from common import build_cuda, nvcc_path

    if nvcc_path() is None:
        pytest.skip("nvcc not found (cuda-pathfinder, PATH, /usr/local/cuda): the nvcc twin is not built here")
    from cuda.coop.core.toolchain import toolchain

    nvcc_major = _nvcc_major(nvcc_path())
    if nvcc_major is not None and toolchain().cuda_major != nvcc_major:
        # The twin is built by the machine's nvcc whatever toolkit this venv pins: building
        # it again under the other toolkit's venv checks nothing new (and costs CI minutes).
        pytest.skip(f"nvcc is CUDA {nvcc_major}, this venv's toolkit CUDA {toolchain().cuda_major}: "
                    "the nvcc twins are checked under the matching venv")
    import harness

    family, cfg = family_and_config(name, argv)
    assert build_cuda(family.specialize(family.cub_source, cfg), harness.json_name(family, cfg), cfg.arch,
                      compile_only=True).stat().st_size > 0


def _nvcc_major(nvcc):
    import re
    import subprocess

    out = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True).stdout
    match = re.search(r"release (\d+)\.", out)
    return int(match.group(1)) if match else None


@pytest.mark.unit
def test_radix_sort_rows_find_their_baselines(capsys):
    """The launch-bounded sort and TopK select compare with the C++ kernels they share (once timed)."""
    import harness
    from common import Timing

    family, cfg = family_and_config("radix_sort")
    cases = family.cases(cfg)
    nvcc = {"keys_striped": Timing(0.5, 0.6), "keys_blocked": Timing(0.4, 0.5), "keys_descending_striped":
            Timing(0.5, 0.6), "pairs_striped": Timing(0.8, 0.9), "topk_min_16": Timing(0.25, 0.3)}
    twins = {"keys_striped": Timing(0.55, 0.65), "keys_blocked": Timing(0.45, 0.55), "keys_descending_striped":
             Timing(0.55, 0.65), "pairs_striped": Timing(0.85, 0.95), "topk_min_16": Timing(0.3, 0.35)}
    report = {"coop_ms": {case.name: Timing(1.0, 1.5) for case in cases},
              "coop_first_launch_s": {case.name: 2.0 for case in cases}, "cub_ms": nvcc, "cub_nvrtc_ms": twins}
    harness.print_tables(family, cfg, cases, report)
    batched, per_launch = capsys.readouterr().out.split("\nper launch")
    rows = {line.split()[0]: line.split()[1:] for line in batched.splitlines() if line.strip()}
    # coop ms, CUB ms, ratio, NVRTC ms, ratio, GB/s, Gitems/s, first launch s
    assert rows["keys_striped_launch_bounds"][:5] == ["1.000", "0.500", "0.500", "0.550", "0.550"]
    assert rows["topk_min_16_select"][:5] == ["1.000", "0.250", "0.250", "0.300", "0.300"]
    assert rows["keys_striped"][-1] == "2.00"
    # what the twins' runs would time: each C++ kernel once, under its first case's name
    keys = {}
    for case in cases:
        keys.setdefault(case.twin_key(), case.name)
    assert sorted(keys.values()) == sorted(twins)
    assert report["per_launch_ms"]["cub_nvrtc"] == {k: v.per_launch_ms for k, v in twins.items()}
    # the same rows as data, for the documentation's coop-benchmark-table
    table = json.loads(json.dumps(report["table"]))
    assert table["columns"] == ["CUB C++", "NVRTC"]
    assert table["rows"]["keys_striped_launch_bounds"] == {
        "coop": 1.0, "CUB C++": 0.5, "NVRTC": 0.55, "per_launch": {"coop": 1.5, "CUB C++": 0.6, "NVRTC": 0.65}}
    assert table["rows"]["topk_min_16_select"]["per_launch"] == {"coop": 1.5, "CUB C++": 0.3, "NVRTC": 0.35}


@pytest.mark.unit
def test_histogram_rows_nest_and_add_the_idiom_column(capsys):
    import harness
    from common import Timing

    family, cfg = family_and_config("histogram")
    cases = family.cases(cfg)
    assert [case.name for case in cases] == ["uniform/atomic", "uniform/sort", "constant/atomic", "constant/sort"]
    report = {"coop_ms": harness.nest({case.name: Timing(1.0, 1.2) for case in cases}),
              "cub_ms": {d: {f"{k}_{a}": Timing(0.5 if k == "per_tile" else 0.25, 0.7)
                             for k in ("per_tile", "composite") for a in ("atomic", "sort")}
                         for d in ("uniform", "constant")},
              "cub_nvrtc_ms": harness.nest({case.name: Timing(0.8, 0.9) for case in cases})}
    harness.print_tables(family, cfg, cases, report)
    batched, per_launch = capsys.readouterr().out.split("\nper launch")
    row = next(line for line in batched.splitlines() if line.startswith("constant/sort"))
    assert row.split()[1:8] == ["1.000", "0.500", "0.500", "0.250", "0.250", "0.800", "0.800"]
    assert report["per_launch_ms"]["coop"]["constant/sort"] == 1.2


@pytest.mark.compile
def test_nvbench_compare_builds():
    """benchmarks/nvbench_compare.py: every cuda.coop kernel and the NVRTC-built C++ (no GPU)."""
    from cuda.coop.numba_mlir import compile_cubin

    module = _load_script("nvbench_compare")
    namespace: dict = {}
    exec(compile(module.COOP_SOURCE, "nvbench_compare_kernels", "exec"), namespace)  # noqa: S102
    ints, samples, bins = np.zeros(8, np.int32), np.zeros(8, np.uint8), np.zeros(8, np.uint32)
    kernels = [(namespace["copy"](algorithm), (ints, ints), module.COPY_THREADS, module.COPY_ITEMS)
               for algorithm in module.COPY_ALGORITHMS]
    kernels += [(namespace["block_sum"], (ints, ints), module.COPY_THREADS, module.COPY_ITEMS),
                (namespace["inclusive_sum"], (ints, ints), module.SCAN_THREADS, module.SCAN_ITEMS),
                (namespace["histogram"], (samples, bins), module.COPY_THREADS, module.COPY_ITEMS),
                (namespace["radix_sort_keys"], (bins, bins), module.SORT_THREADS, module.SORT_ITEMS)]
    for kernel, arrays, threads, items in kernels:
        assert compile_cubin(kernel, (*arrays, items), block=threads).cubin
    assert module._nvrtc_cubin(module.CUB_SOURCE, "sm_90")


@pytest.mark.compile
def test_radix_register_options_nvrtc_builds():
    """benchmarks/radix_register_options.py: the NVRTC build with cuda.coop's options, and the
    32-bit shared-address option that libNVVM refuses (the table says so)."""
    module = _load_script("radix_register_options")
    label, bounds, extra = module.NVRTC_VARIANTS[0]
    assert module._nvrtc_cubin(bounds, extra, "sm_90")
    label, bounds, extra = module.NVRTC_VARIANTS[-1]
    assert "short-ptr" in label
    with pytest.raises(RuntimeError, match="nvptx-short-ptr"):
        module._nvrtc_cubin(bounds, extra, "sm_90")


@pytest.mark.compile
def test_pch_build_benchmark_shows_the_stand_ins_shrink_the_precompiled_header(tmp_path, monkeypatch):
    """benchmarks/pch_build.py, one round: the PCH with cuda-coop's header stand-ins is
    smaller than with CCCL's own headers (under CCCL 2.8 and 3.0, which have stand-ins), and
    the parse without a PCH is reported beside the build."""
    pytest.importorskip("numba_cuda_mlir")  # its child pins the toolkit through that backend
    import subprocess

    monkeypatch.setenv("OUT", str(tmp_path))
    subprocess.run([sys.executable, str(BENCH / "pch_build.py"), "--rounds", "1"], check=True,
                   capture_output=True, text=True, timeout=600)
    report = json.loads((tmp_path / "pch_build.json").read_text())
    assert report["stand_ins"], "no stand-ins for the pinned CCCL"
    median = report["median"]
    assert set(median) == {"stand-ins", "cccl-headers", *(f"without {' + '.join(g)}" for g in report["stand_ins"])}
    assert median["stand-ins"]["pch_mib"] < median["cccl-headers"]["pch_mib"], median
    for group in report["stand_ins"]:
        assert median["stand-ins"]["pch_mib"] < median[f"without {' + '.join(group)}"]["pch_mib"], (group, median)
    # The parse without a PCH (the floor of a first compile): the shared base alone costs
    # something, and writing the PCH costs more than reading the base.
    ours = median["stand-ins"]
    assert 0 < ours["parse_base_cpu_s"] and 0 < ours["parse_all_cpu_s"], ours
    assert ours["build_cpu_s"] > ours["parse_base_cpu_s"], ours


@pytest.mark.unit
@pytest.mark.parametrize("argv, named, fix", [
    (["--rounds", "0"], "--rounds 0", "1 or more"),
    (["--arch", "sm90"], "--arch sm90", "such as sm_90"),
])
def test_pch_build_refuses_bad_arguments_before_any_process_runs(argv, named, fix, capsys):
    module = _load_script("pch_build")
    with pytest.raises(SystemExit):
        module.main(argv)
    err = capsys.readouterr().err
    assert named in err and fix in err, err


def _load_script(name: str):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"coop_script_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
