"""NVRTC's precompiled header built in the background at a process's first compile (core/pch.py).

Each case runs real compiles (NVRTC, nvJitLink; no GPU) in fresh processes, because what
is tested is per process: the first compile, the notes a process leaves in the cache
directory for the next one, and what happens at exit and at fork.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .. import compiler

SRC = str(Path(__file__).resolve().parents[2] / "src")
QUALIFIED = {"numba-cuda-mlir": "cuda.coop.numba_mlir", "numba-cuda": "cuda.coop.numba_cuda"}
# Classic numba-cuda compiles one translation unit per cooperative call, numba-cuda-mlir one
# per kernel: the checks below read "every compile of the process" (with or without the PCH).

pytestmark = pytest.mark.compile

_PRELUDE = r'''
import logging, os, sys
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
logging.getLogger("cuda.coop").addHandler(Keep())
logging.getLogger("cuda.coop").setLevel(logging.DEBUG)
{cuda_import}
from cuda import coop
from {qualified} import compile_cubin
import numpy as np

@cuda.jit
def plain(x):
    x[0] = 1

def coop_kernel(algorithm):
    @cuda.jit
    def kernel(src, dst):
        block = coop.this_block()
        items = coop.ThreadData(4)
        offset = cuda.blockIdx.x * cuda.blockDim.x * 4
        coop.load(block, src, items, offset=offset, algorithm=algorithm)
        coop.store(block, dst, items, offset=offset, algorithm=algorithm)
    return kernel

ARGS = (np.zeros(1, np.int32), np.zeros(1, np.int32))

def report():
    started = [m for m in records if m.startswith("building NVRTC's precompiled header")]
    compiled = [m for m in records if m.startswith("NVRTC compiled")]
    print("STARTED", len(started))
    print("COMPILED", "|".join("with" if "(with PCH)" in m else "without" for m in compiled))
'''


def _run(tmp_path, body: str, **env) -> dict:
    compiler.require()
    pytest.importorskip("cuda.bindings")
    script = tmp_path / "script.py"
    prelude = _PRELUDE.replace("{cuda_import}", compiler.CUDA_IMPORT[compiler.NAME])
    prelude = prelude.replace("{qualified}", QUALIFIED[compiler.NAME])
    script.write_text(prelude + textwrap.dedent(body))
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_COOP_")}
    # "early": the background build whatever the machine's CPUs (the 2-core CI machine's
    # "auto" leaves it out; test_auto_needs_cpus_of_its_own covers that).
    environment.update(PYTHONPATH=SRC, CUDA_COOP_CACHE_DIR=str(tmp_path / "cache"), CUDA_COOP_NVRTC_PCH="early")
    environment.update(env)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=environment,
                         timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    compiled = [c for c in lines.get("COMPILED", "").split("|") if c]
    return {"started": int(lines.get("STARTED", "0")), "compiled": compiled,
            "all_with": bool(compiled) and set(compiled) == {"with"},
            "all_without": bool(compiled) and set(compiled) == {"without"},
            "stdout": out.stdout, "stderr": out.stderr}


def _notes(tmp_path) -> list:
    directory = tmp_path / "cache" / "notes"
    return sorted(p.name.split("-")[0] + ("-unused" if "unused" in p.name else "") for p in directory.iterdir()) \
        if directory.is_dir() else []


def test_prelude_lists_every_familys_headers_in_order():
    from cuda.coop.ops._prelude import PRELUDE_HEADERS
    from cuda.coop.ops._registry import all_headers

    assert PRELUDE_HEADERS == all_headers()


def test_first_compile_of_a_process_with_an_empty_cache_builds_the_pch_in_the_background(tmp_path):
    # The compile latency benchmark's order: a plain kernel first (the compiler's
    # initialization), then the first cooperative kernel, which finds the PCH.
    result = _run(tmp_path, '''
        compile_cubin(plain, ARGS[:1], cc=(9, 0), block=32)
        compile_cubin(coop_kernel("warp_transpose"), ARGS, cc=(9, 0), block=256)
        report()
    ''')
    assert result["started"] == 1 and result["all_with"], result["stdout"]
    assert _notes(tmp_path) == ["compiled"]

    # A later process with that cache: its first compile may well be a cache hit, so
    # nothing starts early; a new kernel compiles without the PCH, as before.
    later = _run(tmp_path, '''
        compile_cubin(coop_kernel("transpose"), ARGS, cc=(9, 0), block=256)
        report()
    ''')
    assert later["started"] == 0 and later["compiled"][0] == "without", later["stdout"]


def test_first_kernel_cooperative_builds_the_pch_and_the_code_is_the_same(tmp_path):
    body = '''
        binary = compile_cubin(coop_kernel("warp_transpose"), ARGS, cc=(9, 0), block=256)
        report()
        print("PTX", binary.ptx.replace("\\n", "~"))
    '''
    early = _run(tmp_path, body)
    assert early["started"] == 1 and early["all_with"], early["stdout"]
    (tmp_path / "reference").mkdir()
    reference = _run(tmp_path / "reference", body, CUDA_COOP_NVRTC_PCH="0")
    assert reference["started"] == 0 and reference["all_without"], reference["stdout"]
    ptx = [next(line for line in r["stdout"].splitlines() if line.startswith("PTX ")) for r in (early, reference)]
    assert "ld.global" in ptx[0] and ptx[0] == ptx[1]


def test_a_process_that_never_compiles_notes_the_pch_unused_and_is_not_charged_again(tmp_path):
    plain_only = '''
        compile_cubin(plain, ARGS[:1], cc=(9, 0), block=32)
        report()
    '''
    first = _run(tmp_path, plain_only)
    # It exits while (or after) the background build runs: the interpreter waits for it.
    assert first["started"] == 1 and first["compiled"] == [], first["stdout"]
    assert _notes(tmp_path) == ["pch-unused"]
    assert _run(tmp_path, plain_only)["started"] == 0
    # A cooperative first kernel still starts it: it will compile unless its cache holds it.
    cooperative = _run(tmp_path, '''
        compile_cubin(coop_kernel("direct"), ARGS, cc=(9, 0), block=128)
        report()
    ''')
    assert cooperative["started"] == 1 and cooperative["all_with"], cooperative["stdout"]


@pytest.mark.parametrize("setting, compiled", [("0", "all_without"), ("1", "all_with")])
def test_the_setting_keeps_its_meaning(tmp_path, setting, compiled):
    result = _run(tmp_path, '''
        compile_cubin(plain, ARGS[:1], cc=(9, 0), block=32)
        compile_cubin(coop_kernel("warp_transpose"), ARGS, cc=(9, 0), block=256)
        report()
    ''', CUDA_COOP_NVRTC_PCH=setting)
    assert result["started"] == 0 and result[compiled], result["stdout"]


@pytest.mark.parametrize("cpus", [1, 4])
def test_auto_needs_cpus_of_its_own(tmp_path, cpus):
    if len(os.sched_getaffinity(0)) < cpus:
        pytest.skip(f"{len(os.sched_getaffinity(0))} usable CPUs here, the case needs {cpus}")
    result = _run(tmp_path, f'''
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:{cpus}])
        compile_cubin(coop_kernel("warp_transpose"), ARGS, cc=(9, 0), block=256)
        report()
    ''', CUDA_COOP_NVRTC_PCH="auto")
    from cuda.coop.core.pch import EARLY_MIN_CPUS

    if cpus >= EARLY_MIN_CPUS:
        assert result["started"] == 1 and result["all_with"], result["stdout"]
    else:  # the first compile without it (classic's second call then builds it inline)
        assert result["started"] == 0 and result["compiled"][0] == "without", result["stdout"]


_DRIVER = {"numba-cuda-mlir": "numba_cuda_mlir.numba_cuda.cudadrv.driver", "numba-cuda": "numba.cuda.cudadrv.driver"}

# The compiler's own Device.get_primary_context, wrapped by cuda.coop, called on a device
# that has no context yet; the original then fails on the stand-in (and without a GPU),
# after the hook ran.
_FIRST_CONTEXT = '''
    from {driver} import Device
    assert getattr(Device.get_primary_context, "_coop_first_compile_hook", False), "no context hook"

    class NoContextYet:
        primary_context = None
        compute_capability = (9, 0)

    try:
        Device.get_primary_context(NoContextYet())
    except Exception:
        pass
    context_started = sum(m.startswith("building NVRTC's precompiled header") for m in records)

    def reasons():
        print("CONTEXT", context_started)
        print("REASONS", "|".join(m.rpartition("(")[2].rstrip(")") for m in records
                                  if m.startswith("building NVRTC's precompiled header")))
'''


def _first_context_then_compile(path) -> str:
    """A process that creates its first context, then compiles a cooperative kernel: its output."""
    body = textwrap.dedent(_FIRST_CONTEXT.replace("{driver}", _DRIVER[compiler.NAME])) + textwrap.dedent('''
        compile_cubin(coop_kernel("warp_transpose"), ARGS, cc=(9, 0), block=256)
        report()
        reasons()
    ''')
    result = _run(path, body)
    assert result["started"] == 1 and result["all_with"], result["stdout"]
    return result["stdout"]


def test_the_first_cuda_context_starts_the_pch_where_the_cache_never_compiled_for_the_device(tmp_path):
    out = _first_context_then_compile(tmp_path)
    assert "CONTEXT 1\nREASONS first CUDA context\n" in out, out

    # Notes for sm_90 (here of another toolchain): the context starts nothing, by file names
    # alone, and the first compile still decides as before (no note of its own toolchain).
    other = tmp_path / "other"
    (other / "cache" / "notes").mkdir(parents=True)
    (other / "cache" / "notes" / "compiled-0123456789abcdef-sm_90").touch()
    out = _first_context_then_compile(other)
    assert "CONTEXT 0\nREASONS first compile_cubin\n" in out, out


# The process's first definition of a kernel that refers to cuda.coop, with the GPUs'
# compute capability given (this machine may have no NVML): backends/_first_compile.py.
_DEFINED = '''
    from cuda.coop.backends import _first_compile
    _first_compile.visible_compute_capability = lambda: (9, 0)  # what NVML tells of an H100

    @cuda.jit
    def plain_too(x):
        x[0] = 2

    assert not _first_compile._definition_probe, "a kernel without cuda.coop started the probe"
    defined = coop_kernel("warp_transpose")
    assert len(_first_compile._definition_probe) == 1, "a cooperative definition started no probe"
    _first_compile._definition_probe[0].join()
    reasons()
'''


def test_the_first_cooperative_definition_starts_the_pch_where_the_cache_never_compiled(tmp_path):
    define = textwrap.dedent(_FIRST_CONTEXT.split("\n    try:", 1)[0].replace("{driver}", _DRIVER[compiler.NAME]))
    define += textwrap.dedent(_FIRST_CONTEXT.split("    context_started = ", 1)[1].split("\n", 1)[1])
    body = define + textwrap.dedent(_DEFINED)
    compiles = body + textwrap.dedent('''
        compile_cubin(coop_kernel("warp_transpose"), ARGS, cc=(9, 0), block=256)
        report()
    ''')
    first = _run(tmp_path, compiles.replace("context_started", "0"))
    assert "REASONS first cooperative kernel defined\n" in first["stdout"], first["stdout"]
    assert first["started"] == 1 and first["all_with"], first["stdout"]
    assert _notes(tmp_path) == ["compiled"]

    # A program that defines its kernels and never compiles: a note, and the next such
    # process starts nothing at the definition.
    defines_only = body.replace("context_started", "0") + "\nreport()\n"
    (tmp_path / "other").mkdir()
    assert _run(tmp_path / "other", defines_only)["started"] == 1
    assert _notes(tmp_path / "other") == ["pch-unused"]
    again = _run(tmp_path / "other", defines_only)
    assert again["started"] == 0 and "REASONS \n" in again["stdout"], again["stdout"]


def test_the_definition_hook_is_installed_and_reads_the_gpus_from_nvml(tmp_path):
    # Whatever this machine has: without NVML or a GPU the probe finds no architecture and
    # starts nothing; with a GPU whose cache never compiled, it builds for that GPU.
    hook = {"numba-cuda-mlir": "numba_cuda_mlir.descriptor import MLIRDispatcher as Dispatcher",
            "numba-cuda": "numba.cuda.dispatcher import CUDADispatcher as Dispatcher"}[compiler.NAME]
    result = _run(tmp_path, f'''
        from {hook}
        from cuda.coop.backends import _first_compile
        assert getattr(Dispatcher.__init__, "_coop_first_compile_hook", False), "no definition hook"
        kernel = coop_kernel("direct")
        assert len(_first_compile._definition_probe) == 1, "a cooperative definition started no probe"
        _first_compile._definition_probe[0].join()
        print("CC", _first_compile.visible_compute_capability())
        report()
    ''')
    cc = result["stdout"].split("CC ", 1)[1].splitlines()[0]
    assert result["started"] == (0 if cc == "None" else 1), result["stdout"]


@pytest.mark.parametrize("visible", ["", "-1", " "])
def test_no_architecture_where_cuda_visible_devices_hides_every_gpu(visible, monkeypatch):
    from cuda.coop.backends._first_compile import visible_compute_capability

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert visible_compute_capability() is None


def test_no_architecture_where_cuda_bindings_has_no_nvml(monkeypatch):
    # cuda-bindings 12.9.1-12.9.5, which the CUDA 12 pins allow, has no nvml module: the
    # definition gives up and the first context starts the build (a GPU run found it).
    import sys

    from cuda.coop.backends._first_compile import visible_compute_capability

    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setitem(sys.modules, "cuda.bindings.nvml", None)  # import raises ImportError
    assert visible_compute_capability() is None


def test_disk_cache_off_reads_and_writes_no_notes(tmp_path):
    body = '''
        compile_cubin(plain, ARGS[:1], cc=(9, 0), block=32)
        report()
    '''
    assert _run(tmp_path, body, CUDA_COOP_CACHE="0")["started"] == 1
    assert _notes(tmp_path) == []  # nothing written where the disk cache is off


def test_fork_during_the_background_build_waits_for_it(tmp_path):
    # The child compiles with NVRTC; had it been forked while the build thread held NVRTC's
    # lock, that compile would never return (its alarm ends it, and the test fails).
    # (NVRTC alone: numba-cuda-mlir's own compile does not survive a fork after a compile.)
    result = _run(tmp_path, '''
        import warnings
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with a thread started
        from cuda.coop.core import build
        from cuda.coop.ops._prelude import PRELUDE_HEADERS
        assert build.start_precompiled_header("sm_90", PRELUDE_HEADERS, cooperative=True, reason="test")
        import time
        time.sleep(0.2)  # the build thread is inside NVRTC now
        pid = os.fork()
        if pid == 0:
            import signal
            signal.alarm(120)  # a hung child dies (the parent then reports it) rather than linger
            source = "#include <cub/block/block_load.cuh>\\n__device__ int x;\\n"
            try:
                build._nvrtc_compile(source, build._pch_options("sm_90"), "fork-child")
                code = 0
            except BaseException:
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        print("CHILD", os.waitstatus_to_exitcode(status))
        report()
    ''')
    assert "CHILD 0" in result["stdout"], result["stdout"] + result["stderr"][-2000:]
    assert result["started"] == 1


@pytest.mark.parametrize("value", ["erly", "2"])
def test_a_setting_that_is_none_of_the_values_is_named_in_the_log_and_auto_applies(value, caplog, monkeypatch):
    import logging

    from cuda.coop.core import pch

    monkeypatch.setenv("CUDA_COOP_NVRTC_PCH", value)
    monkeypatch.setattr(pch, "_reported", set())
    with caplog.at_level(logging.WARNING, logger="cuda.coop"):
        assert pch.setting() == "auto" and pch.setting() == "auto"
    warned = [r.getMessage() for r in caplog.records if "CUDA_COOP_NVRTC_PCH" in r.getMessage()]
    assert warned == [f"CUDA_COOP_NVRTC_PCH={value!r} is not one of auto, early, 1 or 0; auto applies"], warned
