"""What ``python -m cuda.coop demo`` does: compile, describe and (with a GPU) run demo kernels.

Everything a step finds goes into one JSON-serializable dict per kernel (``--json`` prints
them as they are); the text output is rendered from those dicts.  A compile or run that
fails is recorded in its dict, so ``--all`` reports every family before the exit status
says that one failed.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import statistics
import sys
import time
import traceback

from ..core.pch import arch_for_cc
from . import FAMILIES

# The GPU run: CUDA events around BATCH back-to-back launches, REPEAT times; the median,
# divided by BATCH, is the time per launch (benchmarks/common.py times kernels the same way).
WARMUP, REPEAT, BATCH = 3, 15, 10


def run(args, parser, probe_gpu) -> int:
    families = FAMILIES if args.all else (args.family,)
    if args.family not in FAMILIES:
        parser.error(f"--family {args.family!r} is not an operation family; pick one of: "
                     f"{', '.join(FAMILIES)} (or --all for every family)")
    if args.items_per_thread < 1:
        parser.error(f"--items-per-thread {args.items_per_thread} must be at least 1, e.g. 4")
    if args.blocks < 1:
        parser.error(f"--blocks {args.blocks} must be at least 1, e.g. 1024")
    asked = _parse_target(args, parser)
    as_json = getattr(args, "json", False)

    try:
        env = _environment()
    except Exception as exc:  # noqa: BLE001  (missing compiler, missing or mismatched toolkit)
        return _fail("cannot compile: " + _named(exc) + "\n(python -m cuda.coop says what it found; "
                     "install with: python -m pip install -e \".[cu13]\", or [cu12])", exc, args)
    gpu = probe_gpu()
    device_cc = tuple(gpu["devices"][0]["cc"]) if gpu["devices"] else None
    cc = asked or device_cc or (9, 0)
    if _cc_number(cc) not in env["nvrtc_archs"]:
        given = (f"--arch {args.arch}" if args.arch else f"--cc {args.cc}" if args.cc else
                 f"{arch_for_cc(cc)}, the GPU's architecture,")
        parser.error(f"{given} is not an architecture NVRTC {env['nvrtc']} compiles for; pick one "
                     f"of: {', '.join(f'sm_{a}' for a in env['nvrtc_archs'])} (with --arch)")
    target_note = ("the GPU's" if asked is None and device_cc else
                   "no GPU: the default; --arch picks another" if asked is None else
                   "--arch" if args.arch else "--cc")

    from .kernels import DEMOS

    if not as_json:
        if args.all:
            print(f"cuda-coop demo --all: one kernel of each of {len(families)} families, "
                  f"{arch_for_cc(cc)} ({target_note}), block 128, {args.items_per_thread} items per thread")
        else:
            print(f"cuda-coop demo: {args.family}: {DEMOS[args.family].about}")
        sys.stdout.flush()  # before the progress line on stderr, also when stdout is a pipe
    progress = _Progress(len(families)) if args.all else None
    results = []
    for i, family in enumerate(families):
        if progress:
            progress.step(i, f"{family}: compiling")
        result = compile_one(DEMOS[family], cc, args.items_per_thread, want_sass=args.sass)
        if gpu["devices"] and "error" not in result:
            if progress:
                progress.step(i, f"{family}: running")
            result["run"] = run_one(DEMOS[family], args.blocks, args.items_per_thread, args.seed)
        results.append(result)
    if progress:
        progress.done()

    run_skipped = None if gpu["devices"] else f"skipped: no GPU ({gpu.get('reason', 'none found')})"
    report = {"target": arch_for_cc(cc), "target_chosen_by": target_note, "toolchain": env["versions"],
              "gpu": gpu, "run_skipped": run_skipped, "kernels": results}
    if as_json:
        if not args.verbose:  # tracebacks are for --verbose; the named error stays
            for r in results:
                r.pop("traceback", None)
                r.get("run", {}).pop("traceback", None)
        print(json.dumps(report, indent=2))
    elif args.all:
        print(render_table(report))
    else:
        print(render_one(report, results[0], target_note))
    if args.verbose:
        for r in results:
            for tb in (r.get("traceback"), r.get("run", {}).get("traceback")):
                if tb:
                    print(tb, file=sys.stderr)
    failed = [r for r in results if "error" in r or r.get("run", {}).get("passed") is False]
    for r in failed:  # on stderr, also with --json: the exit status is 1
        what = r.get("error") or r["run"].get("error") or r["run"]["detail"]
        print(f"cuda-coop demo: {r['family']} ({r['kernel']}) failed: {what}", file=sys.stderr)
    if not args.verbose and any("error" in r or "error" in r.get("run", {}) for r in failed):
        print("(--verbose prints the traceback)", file=sys.stderr)
    return 1 if failed else 0


# -- arguments ------------------------------------------------------------------------


def _parse_target(args, parser):
    """(major, minor) from --arch sm_XY / --cc X.Y, or None where neither was given."""
    if args.arch:
        m = re.fullmatch(r"(?:sm_?|compute_)?(\d{1,2})(\d)", args.arch.strip().lower())
        if not m:
            parser.error(f"--arch {args.arch!r} is not an architecture; write sm_ and the compute "
                         f"capability's digits, e.g. --arch sm_80 or --arch sm_90 (arch-specific "
                         f"variants such as sm_90a are not offered)")
        return int(m.group(1)), int(m.group(2))
    if args.cc:
        m = re.fullmatch(r"(\d{1,2})\.(\d)", args.cc.strip())
        if not m:
            parser.error(f"--cc {args.cc!r} is not a compute capability; write major.minor, e.g. --cc 8.0")
        return int(m.group(1)), int(m.group(2))
    return None


def _cc_number(cc) -> int:
    return cc[0] * 10 + cc[1]


# -- the toolchain ---------------------------------------------------------------------


def _environment() -> dict:
    """The versions the output names, and the architectures NVRTC compiles for (raises when the
    compiler or the toolkit is missing: the caller reports that)."""
    import numba_cuda_mlir

    from .._version import __version__
    from ..core.toolchain import nvrtc_architectures, toolchain

    t = toolchain()
    dotted = ".".join
    versions = {"cuda_coop": __version__, "numba_cuda_mlir": numba_cuda_mlir.__version__,
                "cccl": t.cccl_version_str, "nvrtc": dotted(map(str, t.nvrtc_version)),
                "nvjitlink": dotted(map(str, t.nvjitlink_version))}
    return {"versions": versions, "nvrtc": versions["nvrtc"], "nvrtc_archs": list(nvrtc_architectures())}


# -- compile ---------------------------------------------------------------------------


def compile_one(demo, cc, items_per_thread, *, want_sass=False) -> dict:
    """Compile ``demo.kernel`` for ``cc`` and describe the cubin; a failure is recorded, not raised."""
    import numpy as np

    from ..core.cache import provider_cache
    from ..numba_mlir import compile_cubin
    from .kernels import THREADS

    pyfunc = demo.kernel.py_func
    lines, first = inspect.getsourcelines(pyfunc)
    case = demo.case(np.random.default_rng(0), 1, items_per_thread)  # example values: their types count
    result = {"family": demo.family, "kernel": pyfunc.__name__, "about": demo.about,
              "file": inspect.getsourcefile(pyfunc), "line": first, "source": "".join(lines),
              "arguments": _arguments(pyfunc, case.args), "block": [THREADS, 1, 1],
              "python": _python_call(pyfunc.__name__, case.args, cc)}
    stats = provider_cache().stats
    misses = stats.misses
    start = time.perf_counter()
    try:
        binary = compile_cubin(demo.kernel, case.args, cc=cc, block=THREADS)
        calls = binary.calls()
    except Exception as exc:  # noqa: BLE001  (cuda-coop's named errors, and whatever else a compile raises)
        result.update(error=_named(exc), traceback=traceback.format_exc())
        return result
    result.update(
        compile_seconds=round(time.perf_counter() - start, 3), nvrtc_compiles=stats.misses - misses,
        registers=binary.registers, shared_bytes=binary.shared_bytes(),
        dynamic_shared_bytes=binary.dynamic_shared_bytes(), calls_left=calls, cubin_bytes=len(binary.cubin))
    result.update(_sass(binary, want_sass))
    return result


def _sass(binary, want_text) -> dict:
    """The SASS size, read from the cubin's code sections (no tool needed), and with ``--sass``
    its text from nvdisasm."""
    from ..backends._binary import cubin_code_bytes

    code = cubin_code_bytes(binary.cubin)
    # Every instruction is 16 bytes from Volta on, which is all that CUDA 12.9 and 13 target;
    # tests/test_demo.py checks the count against nvdisasm's listing where nvdisasm is installed.
    out = {"sass_instructions": None if code is None else code // 16, "sass_bytes": code}
    if not want_text:
        return out
    from ..backends.numba_mlir.compile import find_nvdisasm

    if find_nvdisasm() is None:
        out["sass_missing"] = ("--sass needs nvdisasm: python -m pip install -e \".[sass]\" (CUDA 13 "
                               "environments; it installs nvidia-cuda-nvdisasm)")
        return out
    try:
        out["sass"] = binary.sass()
    except Exception as exc:  # noqa: BLE001  (an nvdisasm too old for the target, say)
        out["sass_missing"] = f"--sass: nvdisasm failed: {_named(exc)}"
    return out


def _arguments(pyfunc, args) -> list:
    names = list(inspect.signature(pyfunc).parameters)
    return [f"{name}={value}" if isinstance(value, int) else f"{name}: {value.dtype}[:]"
            for name, value in zip(names, args)]


def _python_call(name, args, cc) -> str:
    """The same compile as a line of Python (the README's "Without a GPU" block)."""
    shown = [repr(v) if isinstance(v, int) else f"np.zeros(1, np.{v.dtype})" for v in args]
    return f"compile_cubin({name}, [{', '.join(shown)}], cc={tuple(cc)}, block=128)"


# -- run -------------------------------------------------------------------------------


def run_one(demo, blocks, items_per_thread, seed) -> dict:
    """Launch the kernel on seeded random data, compare with NumPy, time it; never raises."""
    import numpy as np
    from numba_cuda_mlir import cuda

    from .kernels import THREADS

    try:
        case = demo.case(np.random.default_rng(seed), blocks, items_per_thread)
        dargs = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in case.args]

        def launch():
            demo.kernel[blocks, THREADS](*dargs)

        start = time.perf_counter()
        launch()  # the first launch compiles for the device
        cuda.synchronize()
        first = time.perf_counter() - start
        got = dargs[case.output].copy_to_host()
        if case.normalize is not None:
            got = case.normalize(got)
        passed, detail = _compare(got, case.expected)
        out = {"blocks": blocks, "threads": THREADS, "seed": seed, "first_launch_seconds": round(first, 3),
               "passed": passed, "detail": detail}
        if passed:
            out["us_per_launch"] = round(_time_per_launch(launch) * 1000, 2)
            out["timing"] = (f"median of {REPEAT} samples, each CUDA events around {BATCH} "
                             f"back-to-back launches")
        return out
    except Exception as exc:  # noqa: BLE001  (a launch error fails the run, the others still run)
        return {"passed": False, "error": _named(exc), "traceback": traceback.format_exc()}


def _compare(got, expected):
    import numpy as np

    expected = np.asarray(expected)
    if got.shape != expected.shape:
        return False, f"FAIL: the result has shape {got.shape}, NumPy's {expected.shape}"
    wrong = np.flatnonzero(got.ravel() != expected.ravel())
    if wrong.size == 0:
        return True, f"PASS: equal to NumPy ({expected.size} values)"
    i = wrong[0]
    return False, (f"FAIL: {wrong.size} of {expected.size} values differ from NumPy; the first at "
                   f"index {i}: kernel {got.ravel()[i]}, NumPy {expected.ravel()[i]}")


def _time_per_launch(launch) -> float:
    """Median milliseconds per launch."""
    from numba_cuda_mlir import cuda

    for _ in range(WARMUP):
        launch()
    cuda.synchronize()
    samples = []
    for _ in range(REPEAT):
        start, stop = cuda.event(), cuda.event()
        start.record()
        for _ in range(BATCH):
            launch()
        stop.record()
        stop.synchronize()
        samples.append(cuda.event_elapsed_time(start, stop) / BATCH)
    return statistics.median(samples)


# -- output ----------------------------------------------------------------------------


def _named(exc) -> str:
    """``cuda.coop.NameOfError: message`` for cuda-coop's errors (they are public there)."""
    from .._errors import CoopError

    cls = type(exc)
    module = "cuda.coop" if isinstance(exc, CoopError) else cls.__module__
    name = cls.__name__ if module == "builtins" else f"{module}.{cls.__name__}"
    return f"{name}: {exc}"


def _fail(message, exc, args) -> int:
    if args.verbose:
        traceback.print_exception(exc)
    print(f"cuda-coop demo: {message}", file=sys.stderr)
    return 1


def _shared(r) -> str:
    dynamic = f" + {r['dynamic_shared_bytes']} B dynamic" if r["dynamic_shared_bytes"] else ""
    return f"{r['shared_bytes']} B static{dynamic}"


def _calls(r) -> str:
    return ("no calls left: every CUB wrapper was inlined" if r["calls_left"] == 0 else
            f"{r['calls_left']} calls left: a CUB wrapper was not inlined (please report it)")


def _sass_text(r) -> str:
    if r["sass_instructions"] is None:
        return "unknown: the cubin's code sections could not be read"
    return f"{r['sass_instructions']} instructions, {r['sass_bytes']} B (--sass prints them)"


def _nvrtc_text(r) -> str:
    n = r["nvrtc_compiles"]
    return ("CUB code from the provider cache, NVRTC not run" if n == 0 else
            f"NVRTC compiled {n} translation unit{'s' if n > 1 else ''}: the provider cache had none")


def _toolchain_text(v) -> str:
    return (f"CCCL {v['cccl']}, NVRTC {v['nvrtc']}, nvJitLink {v['nvjitlink']}, "
            f"numba-cuda-mlir {v['numba_cuda_mlir']}, cuda-coop {v['cuda_coop']}")


def _run_lines(r) -> list:
    run = r["run"]
    if "error" in run:
        return [f"  check            FAIL: the launch raised {run['error']}"]
    lines = [f"  first launch     {run['first_launch_seconds']:.2f} s (compiles for the device)",
             f"  check            {run['detail']}"]
    if run["passed"]:
        lines.append(f"  time per launch  {run['us_per_launch']:.2f} us ({run['timing']})")
    return lines


def render_one(report, r, target_note) -> str:
    where = os.path.relpath(r["file"]) if not os.path.relpath(r["file"]).startswith("..") else r["file"]
    lines = ["", f"# {where}:{r['line']}", r["source"].rstrip(), ""]
    if "error" in r:
        lines.append(f"{r['kernel']} did not compile for {report['target']}.")
        return "\n".join(lines)
    lines += [
        f"compiled {r['kernel']}({', '.join(r['arguments'])})",
        f"  target           {report['target']} ({target_note})",
        f"  block            {'x'.join(map(str, r['block']))}",
        f"  registers        {r['registers']} per thread",
        f"  shared memory    {_shared(r)}",
        f"  CUB calls        {_calls(r)}",
        f"  cubin            {r['cubin_bytes']} B",
        f"  SASS             {_sass_text(r)}",
        f"  compile time     {r['compile_seconds']:.2f} s ({_nvrtc_text(r)})",
        f"  toolchain        {_toolchain_text(report['toolchain'])}",
        f"  from Python      {r['python']}",
    ]
    if report["run_skipped"]:
        lines.append(f"run: {report['run_skipped']}")
    else:
        gpu = report["gpu"]["devices"][0]
        run = r["run"]
        size = f", {run['blocks']} blocks x {run['threads']} threads, seed {run['seed']}" if "blocks" in run else ""
        lines.append(f"run on GPU {gpu['id']}: {gpu['name']} ({arch_for_cc(gpu['cc'])}){size}")
        lines += _run_lines(r)
    if "sass" in r:
        lines += ["", r["sass"].rstrip()]
    elif "sass_missing" in r:
        lines.append(r["sass_missing"])
    lines += ["", "next: python -m cuda.coop demo --all (a kernel of every family), --family NAME, --sass;",
              "      the README shows this kernel launched from Python, and compile_cubin"]
    return "\n".join(lines)


def render_table(report) -> str:
    head = ("family", "kernel", "registers", "shared B", "calls", "cubin B", "SASS instr", "compile s", "run")
    rows = []
    for r in report["kernels"]:
        if "error" in r:
            rows.append((r["family"], r["kernel"], "FAILED: " + r["error"].split(":")[0], *[""] * 6))
            continue
        run = r.get("run")
        run_text = ("skipped" if run is None else
                    f"PASS {run['us_per_launch']:.2f} us" if run.get("passed") else "FAIL")
        rows.append((r["family"], r["kernel"], str(r["registers"]),
                     str(r["shared_bytes"] + r["dynamic_shared_bytes"]),
                     "none" if r["calls_left"] == 0 else str(r["calls_left"]), str(r["cubin_bytes"]),
                     "?" if r["sass_instructions"] is None else str(r["sass_instructions"]),
                     f"{r['compile_seconds']:.2f}", run_text))
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    numeric = {2, 3, 4, 5, 6, 7}

    def line(row):
        cells = [c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        return "  ".join(cells).rstrip()

    ok = [r for r in report["kernels"] if "error" not in r]
    out = [line(head), *map(line, rows), "",
           "calls: none = no calls left, every CUB wrapper was inlined",
           f"toolchain: {_toolchain_text(report['toolchain'])}"]
    out += sorted({r["sass_missing"] for r in ok if "sass_missing" in r})
    if report["run_skipped"]:
        out.append(f"run: {report['run_skipped']}")
    else:
        out.append(f"run: on {report['gpu']['devices'][0]['name']}, time per launch "
                   f"(median of {REPEAT} samples of {BATCH} back-to-back launches, CUDA events)")
    failed = len(report["kernels"]) - len(ok)
    out.append(f"{len(ok)} of {len(report['kernels'])} kernels compiled" + (f", {failed} failed" if failed else ""))
    for r in ok:  # --sass
        if "sass" in r:
            out += ["", f"# SASS of {r['kernel']} ({r['family']})", r["sass"].rstrip()]
    return "\n".join(out)


class _Progress:
    """A dependency-free progress line on stderr: redrawn in place on a terminal, one line per
    step elsewhere (CI logs, pipes), so a slow family shows while it compiles."""

    WIDTH = 22

    def __init__(self, total, stream=None):
        self.total, self.stream = total, stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.last = ""

    def step(self, done, what):
        filled = self.WIDTH * done // self.total
        text = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{self.total} {what}"
        if self.tty:
            self.stream.write("\r" + text.ljust(len(self.last)))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self.last = text

    def done(self):
        text = f"[{'#' * self.WIDTH}] {self.total}/{self.total} done"
        self.stream.write(("\r" + text.ljust(len(self.last)) if self.tty else text) + "\n")
        self.stream.flush()
