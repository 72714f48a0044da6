"""Shared helpers for the device benchmarks: CUDA C++ baselines built with nvcc, event timing.

Each benchmark compares a cuda.coop kernel with the same kernel written in CUDA
C++ against CUB and built by nvcc (using the toolkit's CUB, i.e. the same CCCL
version the Python side uses), and with the device's copy bandwidth.  Results
are printed as a table and written as JSON (to ``$OUT`` when set).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["nvcc_path", "build_cuda", "build_nvrtc_kernels", "nvcc_baseline_ms", "specialize", "run_json",
           "time_kernel", "print_ratio_table", "write_results", "cccl_include", "compile_latency"]


def nvcc_path() -> str | None:
    for cand in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc", "/usr/local/cuda-13.0/bin/nvcc"):
        if cand and os.path.exists(cand):
            return cand
    return None


def cccl_include() -> str:
    """The CCCL headers cuda.coop compiles against, so both sides use one CUB."""
    from cuda.coop.core.toolchain import toolchain

    return toolchain().cccl_include_dirs[0]


# Prepended to every C++ baseline: the timing method of ``time_kernel`` on the C++ side.
TIMING_CPP = r"""
#include <cuda_runtime.h>
namespace coop_bench {
// Median device milliseconds per launch: 3 warm-up launches, then `samples` CUDA-event
// pairs around 10 back-to-back launches each (as benchmarks/common.py time_kernel).
template <class F>
float median_ms(F launch, int samples = 15) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) launch();
  float ms[64];
  samples = samples > 64 ? 64 : samples;
  for (int r = 0; r < samples; ++r) {
    cudaEventRecord(a);
    for (int k = 0; k < 10; ++k) launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms[r], a, b);
    ms[r] /= 10;
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


def build_cuda(source: str, name: str, arch: str = "sm_90") -> Path:
    """Compile a CUDA C++ program (with ``TIMING_CPP`` prepended) with nvcc -O3."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise FileNotFoundError("nvcc not found (CUDA toolkit needed for the C++ baseline)")
    work = Path(tempfile.mkdtemp(prefix=f"coop-bench-{name}-"))
    (work / f"{name}.cu").write_text(TIMING_CPP + source)
    exe = work / name
    cmd = [nvcc, "-O3", "-std=c++17", f"-arch={arch}", f"-I{cccl_include()}", "-o", str(exe), str(work / f"{name}.cu")]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return exe


def specialize(source: str, threads: int, items: int) -> str:
    """A C++ baseline's source for one tile shape (it spells the shape THREADS and ITEMS)."""
    return source.replace("THREADS", str(threads)).replace("ITEMS", str(items))


def nvcc_baseline_ms(source: str, name: str, *args, arch: str = "sm_90") -> dict:
    """Build a C++ baseline with nvcc, run it with ``args``, return the JSON it prints ({} without nvcc)."""
    if nvcc_path() is None:
        return {}
    return run_json(build_cuda(source, name, arch=arch), *args)


def build_nvrtc_kernels(source: str, expressions) -> dict:
    """Build CUDA C++ kernels with NVRTC, the compiler cuda.coop uses, and load them.

    The nvcc baseline measures CUB as C++ users get it.  This one isolates the
    compiler: the same kernel source compiled by NVRTC with cuda.coop's options
    and headers (same CCCL, same CUDA headers), so ``coop / NVRTC-CUB`` is what
    cuda.coop itself costs and ``NVRTC-CUB / nvcc-CUB`` is what the runtime
    compiler costs (NVRTC's NVVM addresses shared memory with 64-bit registers
    where nvcc's uses 32-bit ones, so shared-memory-heavy kernels need more
    registers).  ``source`` must hold device code only; ``expressions`` are
    kernel names or template instantiations (``"sort_tile<0>"``).

    Returns ``{expression: launch}`` where ``launch(grid, block, *args)`` takes
    device arrays and Python ints (passed as 64-bit integers).
    """
    import ctypes

    from cuda.bindings import driver, nvrtc
    from numba_cuda_mlir import cuda

    from cuda.coop.core.build import NVRTC_OPTIONS
    from cuda.coop.core.toolchain import toolchain

    cuda.current_context()  # the primary context numba-cuda-mlir launches in
    cc = cuda.get_current_device().compute_capability
    options = [o for o in NVRTC_OPTIONS if o not in ("-rdc=true", "-dlto")]
    options += [f"-arch=sm_{cc[0]}{cc[1]}", *[f"-I{d}" for d in toolchain().include_dirs]]
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"baseline.cu", 0, [], [])
    for expr in expressions:
        nvrtc.nvrtcAddNameExpression(prog, expr.encode())
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), [o.encode() for o in options])
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise RuntimeError("NVRTC baseline failed:\n" + log.decode(errors="replace"))
    _, size = nvrtc.nvrtcGetCUBINSize(prog)
    cubin = b" " * size
    nvrtc.nvrtcGetCUBIN(prog, cubin)
    err, module = driver.cuModuleLoadData(cubin)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuModuleLoadData: {err}")
    launches = {}
    for expr in expressions:
        _, lowered = nvrtc.nvrtcGetLoweredName(prog, expr.encode())
        err, function = driver.cuModuleGetFunction(module, lowered)
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuModuleGetFunction({expr}): {err}")

        def launch(grid, block, *args, _function=function):
            values, types = [], []
            for a in args:
                if hasattr(a, "__cuda_array_interface__"):
                    values.append(a.__cuda_array_interface__["data"][0])
                    types.append(ctypes.c_void_p)
                else:
                    values.append(int(a))
                    types.append(ctypes.c_longlong)
            (err,) = driver.cuLaunchKernel(_function, grid, 1, 1, block, 1, 1, 0, 0,
                                           (tuple(values), tuple(types)), 0)
            if err != driver.CUresult.CUDA_SUCCESS:
                raise RuntimeError(f"cuLaunchKernel: {err}")

        launches[expr] = launch
    nvrtc.nvrtcDestroyProgram(prog)
    launches["_module"] = module  # keeps the module referenced
    return launches


def run_json(exe: Path, *args) -> dict:
    out = subprocess.run([str(exe), *map(str, args)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def time_kernel(launch, *, warmup: int = 3, repeat: int = 15, batch: int = 10) -> float:
    """Median GPU milliseconds per ``launch()``, from CUDA events around ``batch`` launches.

    Back-to-back launches keep the GPU busy while the host prepares the next one,
    so the figure is the kernel's device time (plus the ~1 us gap between kernels)
    and not the host's launch overhead; the C++ baselines are timed the same way.
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
    return statistics.median(samples)


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


def print_ratio_table(label: str, coop_ms: dict, baselines: dict, bytes_moved) -> None:
    """One row per case: cuda.coop ms, then for each baseline its ms and the ratio
    baseline ms / coop ms (above 1: cuda.coop is faster), then GB/s.

    ``baselines`` maps a column name ("CUB C++", "NVRTC") to ``{case: ms}``; a missing
    case prints n/a.  ``bytes_moved(case)`` is the bytes read plus written per launch.
    """
    width = max([len(label), *map(len, coop_ms)]) + 2
    head = f"{label:{width}s} {'coop ms':>9s}"
    for column in baselines:
        head += f" {column + ' ms':>{max(9, len(column) + 3)}s} {'coop/' + column.split()[0]:>10s}"
    print(head + f" {'GB/s':>8s}")
    for name, ms in coop_ms.items():
        row = f"{name:{width}s} {ms:9.3f}"
        for column, results in baselines.items():
            b = results.get(name)
            w = max(9, len(column) + 3)
            row += f" {b:{w}.3f} {b / ms:10.3f}" if b else f" {'n/a':>{w}s} {'n/a':>10s}"
        print(row + f" {bytes_moved(name) / (ms * 1e-3) / 1e9:8.0f}")
    print("coop/X = X ms / coop ms; CUB C++ is built by nvcc, NVRTC is the same C++ built by NVRTC "
          "(cuda.coop's compiler)" if "NVRTC" in baselines else "coop/X = X ms / coop ms (CUB C++ built by nvcc)")


def write_results(name: str, results) -> None:
    out = Path(os.environ.get("OUT", ".")) / f"bench_{name}.json"
    out.write_text(json.dumps(results, indent=2))
    print(f"results written to {out}")


def import_source(source: str, name: str):
    """Import ``source`` as a module from a real file (numba-cuda-mlir reads kernel source)."""
    import importlib.util

    path = Path(tempfile.mkdtemp(prefix="coop-bench-src-")) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def timed_subprocess(code: str, env=None) -> dict:
    """Run ``code`` as a script in a fresh interpreter; it prints one JSON line last."""
    full = dict(os.environ)
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


def compile_latency(code_template: str, coop_kernel: str, plain_kernel: str) -> dict:
    """First-launch latency in fresh processes: empty provider cache, warm cache, no cuda.coop.

    ``code_template`` is a script with ``{coop_import}`` and ``{kernel}`` fields that
    prints one JSON line; the three runs share one temporary provider cache.
    """
    env = {"CUDA_COOP_CACHE_DIR": tempfile.mkdtemp(prefix="coop-bench-cache-")}
    coop = "from cuda import coop"
    cold = timed_subprocess(code_template.format(coop_import=coop, kernel=coop_kernel), env)
    warm = timed_subprocess(code_template.format(coop_import=coop, kernel=coop_kernel), env)
    plain = timed_subprocess(code_template.format(coop_import="", kernel=plain_kernel), env)
    return {"cold": cold, "warm_disk_cache": warm, "without_coop": plain}
