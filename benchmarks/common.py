"""Shared helpers for the device benchmarks: CUDA C++ baselines built with nvcc, event timing.

Each benchmark compares a cuda.coop kernel with the same kernel written in CUDA
C++ against CUB and built by nvcc (using the toolkit's CUB, i.e. the same CCCL
version the Python side uses), and with the device's copy bandwidth.  Results
are printed as a table and written as JSON (to ``$OUT`` when set).

benchmarks/harness.py is the skeleton every family benchmark runs through; this
module holds its parts: the nvcc build of the C++ program (cuda.core compiles device
code only, and the baseline has a host ``main``), the NVRTC build and launch of the
same kernels through cuda.core, the event timing (numba-cuda-mlir's events on the
default stream, for the cuda.coop kernels and the NVRTC twins alike) and the tables.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["nvcc_path", "build_cuda", "build_nvrtc_kernels", "compile_nvrtc", "nvcc_baseline_ms", "specialize",
           "run_json", "time_kernel", "time_single_launch", "Timing", "per_launch",
           "per_launch_table", "print_ratio_table", "write_results", "cccl_include", "compile_latency",
           "around_first_launch"]


def nvcc_path() -> str | None:
    """nvcc as cuda-pathfinder finds it (the toolkit's wheels in this environment first, so the
    C++ baseline uses the toolkit cuda.coop uses), else PATH and /usr/local/cuda."""
    try:
        from cuda import pathfinder

        found = pathfinder.find_nvidia_binary_utility("nvcc")
        if found:
            return str(found)
    except Exception:  # an older cuda-pathfinder without binary utilities: the fallbacks below
        pass
    for cand in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if cand and os.path.exists(cand):
            return cand
    return None


def cccl_include() -> str:
    """The CCCL headers cuda.coop compiles against, so both sides use one CUB."""
    from cuda.coop.core.toolchain import toolchain

    return toolchain().cccl_include_dirs[0]


# Prepended to every C++ baseline: the timing methods of ``time_kernel`` and
# ``time_single_launch`` on the C++ side.  ``nvcc_baseline_ms`` runs each program twice:
# batched (default), then with COOP_BENCH_BATCH=1 for the per-launch figures.
TIMING_CPP = r"""
#include <cstdlib>
#include <cuda_runtime.h>
namespace coop_bench {
// Median milliseconds per launch: 3 warm-up launches, then `samples` CUDA-event pairs
// around `batch` back-to-back launches each.  batch = 10 (default) is the device time, as
// benchmarks/common.py time_kernel; COOP_BENCH_BATCH=1 times ONE launch per event pair,
// synchronized, as a user times a single launch (common.py time_single_launch).
template <class F>
float median_ms(F launch, int samples = 15) {
  const char* env = std::getenv("COOP_BENCH_BATCH");
  const int batch = env && std::atoi(env) > 0 ? std::atoi(env) : 10;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) launch();
  cudaDeviceSynchronize();
  float ms[64];
  if (batch == 1 && samples < 20) samples = 20;  // per launch: 20 samples, as time_single_launch
  samples = samples > 64 ? 64 : samples;
  for (int r = 0; r < samples; ++r) {
    cudaEventRecord(a);
    for (int k = 0; k < batch; ++k) launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms[r], a, b);
    ms[r] /= batch;
  }
  for (int i = 0; i < samples; ++i)
    for (int j = i + 1; j < samples; ++j)
      if (ms[j] < ms[i]) { float t = ms[i]; ms[i] = ms[j]; ms[j] = t; }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return samples % 2 ? ms[samples / 2] : 0.5f * (ms[samples / 2 - 1] + ms[samples / 2]);
}
}  // namespace coop_bench
"""

# What the two figures of every benchmark mean; written into each results JSON.
METHODS = {
    "batched": "median of 15 samples (some C++ baselines 20, long kernels fewer), each CUDA events around "
               "10 back-to-back launches (long kernels 2), divided by their number, after 3 warm-up "
               "launches: the kernel's device time, host launch cost hidden",
    "per_launch": "median of 20 samples, each CUDA events around ONE launch followed by a "
                  "synchronize, after 3 warm-up launches: what a user timing a single launch sees, host "
                  "launch cost included",
}


def build_cuda(source: str, name: str, arch: str = "sm_90", compile_only: bool = False) -> Path:
    """Compile a CUDA C++ program (with ``TIMING_CPP`` prepended) with nvcc -O3 (``compile_only``:
    to an object file, no link; what the CPU tests build).

    cuda.core compiles device code only (NVRTC, NVVM, nvJitLink); a baseline is a whole
    program with a host ``main``, so nvcc builds it."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise FileNotFoundError("nvcc not found (CUDA toolkit needed for the C++ baseline)")
    work = Path(tempfile.mkdtemp(prefix=f"coop-bench-{name}-"))
    (work / f"{name}.cu").write_text(TIMING_CPP + source)
    exe = work / (f"{name}.o" if compile_only else name)
    cmd = [nvcc, "-O3", "-std=c++17", f"-arch={arch}", f"-I{cccl_include()}", *(["-c"] if compile_only else []),
           "-o", str(exe), str(work / f"{name}.cu")]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"nvcc failed on {name}.cu:\n{out.stderr[-4000:]}")
    return exe


def specialize(source: str, threads: int, items: int) -> str:
    """A C++ baseline's source for one tile shape (it spells the shape THREADS and ITEMS)."""
    return source.replace("THREADS", str(threads)).replace("ITEMS", str(items))


def nvcc_baseline_ms(source: str, name: str, *args, arch: str = "sm_90") -> dict:
    """Build a C++ baseline with nvcc and run it with ``args``: the JSON it prints ({} without nvcc).

    The program runs twice, batched and then per launch (``COOP_BENCH_BATCH=1``); each
    number of the batched JSON comes back as a ``Timing`` carrying its per-launch twin.
    """
    if nvcc_path() is None:
        return {}
    exe = build_cuda(source, name, arch=arch)
    return _with_per_launch(run_json(exe, *args), run_json(exe, *args, env={"COOP_BENCH_BATCH": "1"}))


def _with_per_launch(batched, single):
    if isinstance(batched, dict):
        return {k: _with_per_launch(v, (single or {}).get(k)) for k, v in batched.items()}
    return Timing(batched, per_launch_ms=single) if isinstance(batched, (int, float)) else batched


def build_nvrtc_kernels(source: str, expressions) -> dict:
    """Build CUDA C++ kernels with NVRTC, the compiler cuda.coop uses, through cuda.core.

    The nvcc baseline measures CUB as C++ users get it.  This one isolates the
    compiler: the same kernel source compiled by NVRTC with cuda.coop's options
    and headers (same CCCL, same CUDA headers), so ``coop / NVRTC-CUB`` is what
    cuda.coop itself costs and ``NVRTC-CUB / nvcc-CUB`` is what the runtime
    compiler costs (NVRTC's NVVM addresses shared memory with 64-bit registers
    where nvcc's uses 32-bit ones, so shared-memory-heavy kernels need more
    registers).  ``source`` must hold device code only; ``expressions`` are
    kernel names or template instantiations (``"sort_tile<0>"``).

    Returns ``{expression: Twin}``: ``twin.prepare(grid, block, *args)`` is a
    ``launch()`` on the legacy default stream, the stream numba-cuda-mlir launches
    and records its events on, so both sides are timed alike.
    """
    from cuda.core import Device
    from numba_cuda_mlir import cuda

    cuda.current_context()  # the primary context numba-cuda-mlir launches in; cuda.core uses it too
    device = Device(cuda.get_current_device().id)
    device.set_current()
    cc = device.compute_capability
    code = compile_nvrtc(source, expressions, f"sm_{cc.major}{cc.minor}")
    stream = device.default_stream  # the legacy default stream (no per-thread default stream set)
    return {expr: Twin(code.get_kernel(expr), stream) for expr in expressions}


def nvrtc_options(arch: str):
    """cuda.coop's NVRTC options as cuda.core ``ProgramOptions``, without ``-rdc``/``-dlto``
    (a whole-program cubin, as nvcc builds).  ProgramOptions takes typed fields, not
    command-line flags, so each flag of ``NVRTC_OPTIONS`` is mapped here; a flag this
    does not know stops the benchmark rather than being dropped silently."""
    from cuda.core import ProgramOptions

    from cuda.coop.core.build import NVRTC_OPTIONS
    from cuda.coop.core.toolchain import toolchain

    known = {"-std=c++17": {"std": "c++17"}, "-rdc=true": {}, "-dlto": {}}
    macros = [tuple(o[2:].split("=", 1)) if "=" in o else o[2:] for o in NVRTC_OPTIONS if o.startswith("-D")]
    unknown = [o for o in NVRTC_OPTIONS if o not in known and not o.startswith("-D")]
    if unknown:
        raise RuntimeError(f"benchmarks/common.py: map cuda.coop's NVRTC options {unknown} to ProgramOptions")
    fields = {k: v for o in NVRTC_OPTIONS for k, v in known.get(o, {}).items()}
    if macros:
        fields["define_macro"] = macros
    return ProgramOptions(arch=arch, include_path=list(toolchain().include_dirs), **fields)


def compile_nvrtc(source: str, expressions, arch: str):
    """``source`` compiled by NVRTC for ``arch`` into a cubin (cuda.core ``ObjectCode``,
    its ``symbol_mapping`` naming each of ``expressions``); no GPU needed."""
    from cuda.core import Program

    try:
        return Program(source, "c++", nvrtc_options(arch)).compile("cubin", name_expressions=tuple(expressions))
    except Exception as exc:  # cuda.core raises with NVRTC's log in the message
        raise RuntimeError(f"NVRTC baseline failed: {exc}") from exc


class Twin:
    """An NVRTC-built C++ kernel, launched through cuda.core."""

    def __init__(self, kernel, stream):
        self.kernel, self.stream = kernel, stream

    def prepare(self, grid: int, block: int, *args):
        """``launch()`` of ``kernel<<<grid, block>>>(args)``: device arrays pass their
        pointer, ints as 64-bit integers (cuda.core takes a bare Python int as a pointer)."""
        import numpy as np
        from cuda.core import LaunchConfig, launch

        config = LaunchConfig(grid=grid, block=block)
        values = tuple(a.__cuda_array_interface__["data"][0] if hasattr(a, "__cuda_array_interface__")
                       else np.int64(a) if isinstance(a, int) else a for a in args)
        return lambda: launch(self.stream, config, self.kernel, *values)

    def __call__(self, grid: int, block: int, *args) -> None:
        self.prepare(grid, block, *args)()


def run_json(exe: Path, *args, env=None) -> dict:
    out = subprocess.run([str(exe), *map(str, args)], check=True, capture_output=True, text=True,
                         env={**os.environ, **env} if env else None)
    return json.loads(out.stdout)


class Timing(float):
    """Batched milliseconds per launch (the float itself) with the per-launch figure of the
    same kernel in ``per_launch_ms``, so result dicts keep their shape and JSON (batched)."""

    def __new__(cls, ms, per_launch_ms=None):
        self = super().__new__(cls, ms)
        self.per_launch_ms = per_launch_ms
        return self


def time_kernel(launch, *, warmup: int = 3, repeat: int = 15, batch: int = 10, per_launch: bool = True) -> float:
    """Median GPU milliseconds per ``launch()``, from CUDA events around ``batch`` launches.

    Back-to-back launches keep the GPU busy while the host prepares the next one,
    so the figure is the kernel's device time (plus the ~1 us gap between kernels)
    and not the host's launch overhead; the C++ baselines are timed the same way.
    The result is a ``Timing``: with ``per_launch`` it also carries
    ``time_single_launch(launch)``, what a user timing one launch sees.
    """
    from numba_cuda_mlir import cuda

    for _ in range(warmup):
        launch()
    cuda.synchronize()
    samples = []
    for _ in range(repeat):
        start, stop = cuda.event(), cuda.event()
        start.record()
        for _ in range(batch):
            launch()
        stop.record()
        stop.synchronize()
        samples.append(cuda.event_elapsed_time(start, stop) / batch)
    return Timing(statistics.median(samples), time_single_launch(launch) if per_launch else None)


def time_single_launch(launch, samples: int = 20, warmup: int = 3) -> float:
    """Median milliseconds of ONE ``launch()`` between two CUDA events, synchronized after
    each, as a user times a single launch: the device idles while the host launches, so the
    host's launch cost (Python dispatch, argument handling) counts, unlike ``time_kernel``."""
    from numba_cuda_mlir import cuda

    for _ in range(warmup):
        launch()
    cuda.synchronize()
    times = []
    for _ in range(samples):
        start, stop = cuda.event(), cuda.event()
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        times.append(cuda.event_elapsed_time(start, stop))
    return statistics.median(times)


def per_launch(results):
    """The per-launch figures of a (nested) dict of ``Timing`` values, same keys; others dropped."""
    if isinstance(results, dict):
        picked = {k: per_launch(v) for k, v in results.items()}
        return {k: v for k, v in picked.items() if v is not None and v != {}}
    return getattr(results, "per_launch_ms", None)


def _flat(results: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in results.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}/"))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def per_launch_table(report: dict, label: str = "case", rename=None) -> None:
    """The second table of a benchmark: per-launch milliseconds (``time_single_launch``) of
    the cuda.coop kernels and of the baselines in ``report`` (``cub_ms``, ``cub_nvrtc_ms``),
    recorded in ``report["per_launch_ms"]`` next to the batched figures.

    Nested results print as ``outer/inner``; ``rename[key](name)`` gives a baseline's name
    for a coop case where they differ.  ``report["plain_ms"]``, where a benchmark has one,
    is the same kind of kernel without cuda.coop: the floor numba-cuda-mlir itself sets.
    """
    rename = rename or {}
    coop = _flat(per_launch(report["coop_ms"]))
    recorded = {"coop": coop}
    baselines = {}
    for column, key in (("CUB C++", "cub_ms"), ("NVRTC", "cub_nvrtc_ms")):
        if key in report:
            flat = _flat(per_launch(report[key]))
            recorded[key.removesuffix("_ms")] = flat
            baselines[column] = {name: flat.get(rename.get(key, str)(name)) for name in coop}
    plain = _flat(per_launch(report.get("plain_ms", {})))
    if plain:
        recorded["plain"] = plain
    report["per_launch_ms"] = recorded
    report["methods"] = METHODS
    print("\nper launch (one launch between two CUDA events, synchronized; median of 20): what a user "
          "timing one launch sees, host launch cost included")
    print_ratio_table(label, coop, baselines, None)
    batched = _flat(report.get("plain_ms", {}))
    for name, ms in plain.items():
        print(f"floor, {name} without cuda.coop ({report.get('compiler', 'numba-cuda-mlir')} alone): "
              f"{ms:.3f} ms per launch, "
              f"{batched[name]:.3f} ms batched")


def launch_overhead_us(launch, count: int = 200) -> float:
    """Host microseconds per launch of ``launch()`` (wall clock, synchronized at the end)."""
    from numba_cuda_mlir import cuda

    launch()
    cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(count):
        launch()
    cuda.synchronize()
    return (time.perf_counter() - t0) / count * 1e6


def print_ratio_table(label: str, coop_ms: dict, baselines: dict, bytes_moved, *, items=None,
                      first_launch=None) -> None:
    """One row per case: cuda.coop ms, then for each baseline its ms and the ratio
    baseline ms / coop ms (above 1: cuda.coop is faster), then GB/s (none when
    ``bytes_moved`` is None), G items/s (with ``items``) and the first launch's seconds
    (with ``first_launch``, ``{case: s}``: the compile included).

    ``baselines`` maps a column name ("CUB C++", "NVRTC") to ``{case: ms}``; a missing
    case prints n/a.  ``bytes_moved(case)`` is the bytes read plus written per launch,
    ``items(case)`` the items processed per launch (None: blank).
    """
    def rate(count, ms, scale, width):
        return f" {count / (ms * 1e-3) / 1e9:{width}.{scale}f}" if count else f" {'':>{width}s}"

    width = max([len(label), *map(len, coop_ms)]) + 2
    head = f"{label:{width}s} {'coop ms':>9s}"
    for column in baselines:
        head += f" {column + ' ms':>{max(9, len(column) + 3)}s} {'coop/' + column.split()[0]:>10s}"
    head += f" {'GB/s':>8s}" if bytes_moved else ""
    head += f" {'Gitems/s':>8s}" if items else ""
    print(head + (f" {'first launch s':>14s}" if first_launch else ""))
    for name, ms in coop_ms.items():
        row = f"{name:{width}s} {ms:9.3f}"
        for column, results in baselines.items():
            b = results.get(name)
            w = max(9, len(column) + 3)
            row += f" {b:{w}.3f} {b / ms:10.3f}" if b else f" {'n/a':>{w}s} {'n/a':>10s}"
        row += rate(bytes_moved(name), ms, 0, 8) if bytes_moved else ""
        row += rate(items(name), ms, 2, 8) if items else ""
        s = (first_launch or {}).get(name)
        print(row + ((f" {s:14.2f}" if s is not None else f" {'':>14s}") if first_launch else ""))
    print("coop/X = X ms / coop ms; CUB C++ is built by nvcc, NVRTC is the same C++ built by NVRTC "
          "(cuda.coop's compiler)" if "NVRTC" in baselines else "coop/X = X ms / coop ms (CUB C++ built by nvcc)")


def toolkit_line(tc) -> str:
    """``NVRTC 13.0, nvJitLink 13.0, CCCL 3.0.1``: the versions of a toolchain, without its paths."""
    return (f"NVRTC {'.'.join(map(str, tc.nvrtc_version))}, nvJitLink {'.'.join(map(str, tc.nvjitlink_version))}, "
            f"CCCL {tc.cccl_version_str}")


def current_device_meta(cuda, compiler: str | None = None) -> dict:
    """:func:`run_meta` of ``cuda``'s current device (either compiler's ``cuda`` module)."""
    device = cuda.get_current_device()
    return run_meta(device_name(device), tuple(device.compute_capability), compiler)


def device_name(device) -> str:
    """A device's name as text (numba-cuda-mlir and classic numba-cuda give bytes or str)."""
    return device.name.decode() if isinstance(device.name, bytes) else str(device.name)


def run_meta(device: str, cc, compiler: str | None = None) -> dict:
    """Where and when a benchmark ran, recorded in its JSON as ``meta`` so a table rendered
    from it (docs/_ext, ``coop-benchmark-table``) can say so: UTC date, device, toolkit,
    compiler, the commit (``COOP_BENCH_COMMIT``, else git's HEAD, marked ``-modified`` where
    tracked files differ from it; a device's copy of the tree may have no ``.git`` or a stale
    one) and the command line."""
    import datetime
    import importlib.metadata

    from cuda.coop.core.toolchain import toolchain

    commit = os.environ.get("COOP_BENCH_COMMIT") or _git_commit()
    compiler = compiler or KERNEL_COMPILER
    try:
        compiler += " " + importlib.metadata.version(compiler)
    except importlib.metadata.PackageNotFoundError:
        pass
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "device": device, "cc": f"{cc[0]}.{cc[1]}", "toolkit": toolkit_line(toolchain()),
            "compiler": compiler, "commit": commit or "unknown",
            "command": " ".join(["python", _relative(sys.argv[0]), *sys.argv[1:]])}


def _git_commit(where: Path | None = None) -> str | None:
    """HEAD of the checkout, with ``-modified`` when tracked files differ from it: a copy of
    a working tree (the device's) can carry a ``.git`` whose HEAD is older than its files."""
    here = where or Path(__file__).parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=here, timeout=10).stdout.strip()
        if not head:
            return None
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                 text=True, cwd=here, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}-modified" if changed else head


def _relative(path: str) -> str:
    """``benchmarks/bench_scan.py`` rather than the checkout's absolute path."""
    try:
        return str(Path(path).resolve().relative_to(Path(__file__).resolve().parents[1]))
    except ValueError:
        return path


def write_results(name: str, results) -> None:
    out = Path(os.environ.get("OUT", ".")) / f"bench_{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)  # OUT may name a folder not made yet
    out.write_text(json.dumps(results, indent=2))
    print(f"results written to {out}")


def import_source(source: str, name: str):
    """Import ``source`` as a module from a real file (numba-cuda-mlir reads kernel source),
    its compiler import swapped for ``KERNEL_COMPILER``'s."""
    import importlib.util

    if COMPILER_IMPORTS["numba-cuda-mlir"] in source:
        source = for_compiler(source, KERNEL_COMPILER)

    path = Path(tempfile.mkdtemp(prefix="coop-bench-src-")) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def timed_subprocess(code: str, env=None) -> dict:
    """Run ``code`` as a script in a fresh interpreter; it prints one JSON line last.

    The child may read and write bytecode whatever this process's ``PYTHONDONTWRITEBYTECODE``
    says: an installed cuda.coop has its bytecode (pip and conda compile it), and a child
    that compiles cuda.coop's modules from source pays ~45 ms more on a first launch (the
    H100 profile of 2026-12-06: 27 modules, 50 ms in ``compile``) that no user pays.
    """
    full = dict(os.environ)
    full.pop("PYTHONDONTWRITEBYTECODE", None)
    full.update(env or {})
    script = Path(tempfile.mkdtemp(prefix="coop-bench-script-")) / "latency.py"
    script.write_text(code)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=full)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - t0
    return result


# The line every kernel source and latency script imports its compiler with, and what it
# becomes under ``--compiler`` (classic numba-cuda: ``numba.cuda`` from package numba-cuda).
COMPILER_IMPORTS = {"numba-cuda-mlir": "from numba_cuda_mlir import cuda", "numba-cuda": "from numba import cuda"}


def for_compiler(source: str, compiler: str) -> str:
    """``source`` with its numba-cuda-mlir import swapped for ``compiler``'s."""
    default = COMPILER_IMPORTS["numba-cuda-mlir"]
    if compiler == "numba-cuda-mlir":
        return source
    if default not in source:
        raise ValueError(f"no {default!r} line to swap for {compiler!r}")
    return source.replace(default, COMPILER_IMPORTS[compiler])


# The compiler of the kernels import_source builds (harness.py's ``--compiler``).
KERNEL_COMPILER = "numba-cuda-mlir"


def use_compiler(compiler: str) -> None:
    """Build the benchmark kernels of this process with ``compiler`` from now on."""
    global KERNEL_COMPILER
    if compiler not in COMPILER_IMPORTS:
        raise ValueError(f"compiler {compiler!r}: expected one of {sorted(COMPILER_IMPORTS)}")
    KERNEL_COMPILER = compiler


def compiler_cuda(compiler: str):
    """The ``cuda`` module of ``compiler`` (``numba.cuda`` or ``numba_cuda_mlir.cuda``)."""
    namespace: dict = {}
    exec(COMPILER_IMPORTS[compiler], namespace)
    return namespace["cuda"]


# The line every latency script times its first launch with (bench_load_store.py,
# bench_reduce.py, bench_scan.py): ``t0 = ...; <launch>; cuda.synchronize(); first = ...``.
_FIRST_LAUNCH = re.compile(r"^t0 = time\.perf_counter\(\); .+; first = time\.perf_counter\(\) - t0$", re.M)


def around_first_launch(code: str, before: str, after: str) -> str:
    """``code`` (a latency script) with ``before`` and ``after`` (lines of code) around the
    line that times its first launch."""
    placed, count = _FIRST_LAUNCH.subn(lambda match: f"{before}\n{match.group(0)}\n{after}", code)
    if count != 1:
        raise ValueError(f"a latency script times its first launch on one 't0 = ...; first = ...' line; found {count}")
    return placed


def with_first_launch_profile(code: str, path) -> str:
    """``code`` (a latency script) with its first launch run under cProfile, the profile
    dumped to ``path``: only that line, not the imports or the data set-up."""
    return around_first_launch(code, "import cProfile; _profile = cProfile.Profile(); _profile.enable()",
                               f"_profile.disable(); _profile.dump_stats({str(path)!r})")


def profile_listings(path, lines: int = 45) -> dict:
    """A dumped profile's listings by cumulative and by own time."""
    import io
    import pstats

    out = {}
    for order in ("cumulative", "tottime"):
        text = io.StringIO()
        pstats.Stats(str(path), stream=text).sort_stats(order).print_stats(lines)
        out[order] = text.getvalue()
    return out


def compile_latency(code_template: str, coop_kernel: str, plain_kernel: str, repeat: int = 1,
                    compiler: str = "numba-cuda-mlir", profile_dir=None) -> dict:
    """First-launch latency in fresh processes: empty provider cache, warm cache, no cuda.coop.

    ``code_template`` is a script with ``{coop_import}`` and ``{kernel}`` fields that
    prints one JSON line.  Each of ``repeat`` rounds runs three processes in turn (cold
    with a new empty provider cache, warm with the cache the cold one filled, then the
    kernel without cuda.coop), so a drift of the machine's speed touches all three alike;
    every figure is the median over the rounds, and ``first_launch_samples_s`` keeps each
    round's first launch.  With ``profile_dir``, two more processes of the last round's
    cache run their first launch under cProfile, the warm cuda.coop one and the one without
    cuda.coop: ``first_launch_{warm_disk_cache,without_coop}.prof`` and their listings
    (``*_cumulative.txt``, ``*_tottime.txt``) show where a warm first launch's time goes.
    Empty when ``COOP_BENCH_SKIP_LATENCY`` is set
    (``run_all.py --skip-compile-latency``): the fresh processes take tens of seconds
    and measure the host, not the kernel.
    """
    if os.environ.get("COOP_BENCH_SKIP_LATENCY"):
        return {}
    coop = "from cuda import coop"
    code_template = for_compiler(code_template, compiler)
    # Untimed: writes the bytecode of cuda.coop and the compiler, so the first timed child
    # (cold) does not pay for it either (see timed_subprocess).
    timed_subprocess(code_template.format(coop_import=coop, kernel=coop_kernel),
                     {"CUDA_COOP_CACHE_DIR": tempfile.mkdtemp(prefix="coop-bench-cache-")})
    rounds: dict = {"cold": [], "warm_disk_cache": [], "without_coop": []}
    for _ in range(max(1, repeat)):
        env = {"CUDA_COOP_CACHE_DIR": tempfile.mkdtemp(prefix="coop-bench-cache-")}
        rounds["cold"].append(timed_subprocess(code_template.format(coop_import=coop, kernel=coop_kernel), env))
        rounds["warm_disk_cache"].append(
            timed_subprocess(code_template.format(coop_import=coop, kernel=coop_kernel), env))
        rounds["without_coop"].append(
            timed_subprocess(code_template.format(coop_import="", kernel=plain_kernel), env))
    if profile_dir is not None:
        folder = Path(profile_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for name, (coop_import, kernel) in {"warm_disk_cache": (coop, coop_kernel),
                                            "without_coop": ("", plain_kernel)}.items():
            path = folder / f"first_launch_{name}.prof"
            script = code_template.format(coop_import=coop_import, kernel=kernel)
            timed_subprocess(with_first_launch_profile(script, path), env)
            for order, text in profile_listings(path).items():
                (folder / f"first_launch_{name}_{order}.txt").write_text(text)
    import statistics

    out = {}
    for name, runs in rounds.items():
        out[name] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        out[name]["first_launch_samples_s"] = [r["first_launch_s"] for r in runs]
    return out


def latency_over_plain(latency: dict) -> dict:
    """Median first launch of the cold and warm runs minus the kernel without cuda.coop (s)."""
    if not latency:
        return {}
    plain = latency["without_coop"]["first_launch_s"]
    return {name: latency[name]["first_launch_s"] - plain for name in ("cold", "warm_disk_cache")}
