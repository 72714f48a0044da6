"""The one skeleton of the family benchmarks: a family declares its cases and its CUB twin.

A benchmark module (``bench_<family>.py``) holds its cuda.coop kernels, the same kernels
in CUDA C++ against CUB, and a :class:`Family`: the device buffers it needs
(:class:`In`, :class:`Out`), its :class:`Case` rows (kernel, launch shape, arguments,
the check of its output, the C++ twin and the bytes/items it moves) and how to name the
results.  ``main(family)`` does the rest the same way for every family:

1. the command line (``--threads``, ``--items``, the family's own options; ``--latency-only``
   where the family measures compile latency);
2. per case: poison the outputs, launch once (the first launch, compile included, is
   timed), check the output, then ``time_kernel`` (batched and per launch);
3. the C++ twin built by nvcc (its own program, timed by ``median_ms`` in C++) and the same
   kernels built by NVRTC with cuda.coop's options (``common.build_nvrtc_kernels``,
   through cuda.core), checked and timed like the cuda.coop kernels on the same buffers;
4. the table (ms, baseline/coop ratios, GB/s, items/s, first-launch seconds), the
   per-launch table, and ``bench_<name>.json`` (to ``$OUT`` when set).

Nothing here needs a GPU until ``main`` runs the cases, so the CPU tests
(tests/test_benchmarks_cases.py) build every case's kernel with ``compile_cubin``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable

import common  # KERNEL_COMPILER, read at run time
from common import (
    COMPILER_IMPORTS, _flat, build_nvrtc_kernels, compile_latency, compiler_cuda, device_name, latency_over_plain,
    nvcc_baseline_ms, per_launch_table, print_ratio_table, run_meta, specialize, time_kernel, use_compiler,
    write_results,
)

__all__ = ["In", "Out", "Case", "Reference", "Family", "Data", "configure", "main", "nest"]

# A configuration for machines without a device (tests, --help): an H200's figures.
NO_DEVICE = SimpleNamespace(sms=132, cc=(9, 0), name="(no device)")


@dataclass(frozen=True)
class In:
    """A device input of ``size`` items of ``dtype``; ``make()`` builds its host array (on first use)."""

    dtype: Any
    size: int
    make: Callable[[], Any]


@dataclass(frozen=True)
class Out:
    """A device output; every byte is set to ``fill`` before each checked launch, so a kernel
    that writes nothing (or a twin that reuses the previous kernel's output) fails its check.
    Accumulating outputs (histogram counters) use ``fill=0``."""

    dtype: Any
    size: int
    fill: int = 0xAB


_SAME = object()


@dataclass
class Case:
    """One row: ``kernel[grid, block](*args)``; a ``str`` argument names a buffer of the family.

    ``check(data)`` reads the outputs after the first launch and raises when they are
    wrong (a number it returns is recorded under ``Family.check_field``).  ``cub`` is the
    key of this case in the nvcc program's JSON (default ``name``; ``None``: no C++
    counterpart); ``twin`` the NVRTC name expression of the same C++ kernel, launched with
    ``twin_args`` (default ``args``).  Cases sharing a twin and its arguments time it once.
    ``bytes`` (read + written) and ``items`` per launch give GB/s and items/s.  ``repeat``
    and ``batch`` are ``time_kernel``'s, for long kernels.  ``into="plain_ms"``: the same
    work without cuda.coop, the floor numba-cuda-mlir sets.
    """

    name: str
    kernel: Any
    grid: int
    block: int
    args: tuple
    check: Callable | None = None
    cub: Any = _SAME
    twin: str | None = None
    twin_args: tuple | None = None
    bytes: int | None = None
    items: int | None = None
    repeat: int = 15
    batch: int = 10
    into: str = "coop_ms"

    def __post_init__(self):
        if self.cub is _SAME:
            self.cub = self.name

    def twin_key(self):
        return None if self.twin is None else (self.twin, tuple(map(repr, self.twin_args or self.args)))


@dataclass(frozen=True)
class Reference:
    """A figure for scale that is not a cuda.coop kernel (``torch.sum`` of the whole array):
    ``make()`` returns its ``launch()``; timed like a case, unchecked, None when it fails."""

    name: str
    make: Callable
    bytes: int | None = None
    items: int | None = None


@dataclass
class Family:
    """What a family benchmark declares; ``main(family)`` runs it.

    ``buffers(cfg)`` and ``cases(cfg)`` build the buffer specs and the cases for a
    configuration (``cfg``: the parsed options, ``threads``, ``items``, and the device's
    ``sms``, ``cc``, ``name``).  ``cub_source`` is the nvcc program (it prints the JSON of
    its timings), ``cub_kernels`` its device code alone for NVRTC; ``cxx(source, cfg)``
    specializes either (default: THREADS and ITEMS); ``cub_args(cfg)`` are the program's
    arguments.  ``options`` are extra ``argparse`` arguments as ``(flags, kwargs)``;
    ``suffix`` names an option whose non-default value suffixes the JSON name
    (``radix_sort_float16``).  ``references(cfg, data)`` returns :class:`Reference` rows.
    ``columns`` adds nvcc baselines per case (``{title: case -> key}``); ``note`` (a string,
    or ``note(report)``) is printed under the table.  ``extra(report,
    cfg, data, cases)`` adds the family's own figures; ``latency`` is ``(script, coop
    kernel, plain kernel)`` for ``common.compile_latency``.
    """

    name: str
    doc: str
    buffers: Callable
    cases: Callable
    title: Callable
    cub_source: str | None = None
    cub_kernels: str | None = None
    cxx: Callable = None
    cub_args: Callable = lambda cfg: ()
    threads: int = 256
    items: int = 16
    options: tuple = ()
    suffix: str | None = None
    header: Callable = lambda cfg: {}
    label: str = "case"
    references: Callable | None = None
    columns: dict = field(default_factory=dict)
    check_field: str | None = None
    note: Any = None
    extra: Callable | None = None
    latency: tuple | None = None

    def specialize(self, source: str, cfg) -> str:
        return self.cxx(source, cfg) if self.cxx else specialize(source, cfg.threads, cfg.items)

    def main(self, argv=None) -> dict:
        """The benchmark's entry point (``bench_<name>.main``): :func:`main` of this family."""
        return main(self, argv)


class Data:
    """The family's buffers, built on first use: host arrays of inputs, device arrays of both."""

    def __init__(self, specs: dict):
        self.specs = specs
        self._host, self._device, self._derived = {}, {}, {}

    def derived(self, key: str, make: Callable):
        """``make()``, computed once: a reference result the checks of several cases share."""
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]

    def host(self, name: str):
        if name not in self._host:
            self._host[name] = self.specs[name].make()
        return self._host[name]

    def dev(self, name: str):
        if name not in self._device:
            from numba_cuda_mlir import cuda

            spec = self.specs[name]
            array = (cuda.to_device(self.host(name)) if isinstance(spec, In)
                     else cuda.device_array(spec.size, dtype=spec.dtype))
            if common.KERNEL_COMPILER == "numba-cuda":
                # Classic numba-cuda takes other arrays through their CUDA array interface on
                # every launch; its own view of the same memory, made once, keeps that
                # conversion (and its stream sync) out of the timed launches.
                array = compiler_cuda("numba-cuda").as_cuda_array(array, sync=False)
            self._device[name] = array
        return self._device[name]

    def resolve(self, args) -> tuple:
        return tuple(self.dev(a) if isinstance(a, str) else a for a in args)

    def poison(self, args) -> None:
        """Fill every output among ``args`` with its ``fill`` byte."""
        from cuda.bindings import driver

        for a in args:
            if isinstance(a, str) and isinstance(self.specs[a], Out):
                array = self.dev(a)
                (err,) = driver.cuMemsetD8(array.__cuda_array_interface__["data"][0], self.specs[a].fill,
                                           array.size * array.dtype.itemsize)
                if err != driver.CUresult.CUDA_SUCCESS:
                    raise RuntimeError(f"cuMemsetD8({a}): {err}")


def nest(flat: dict) -> dict:
    """``{"uniform/atomic": x}`` -> ``{"uniform": {"atomic": x}}`` (the JSON keeps nested results)."""
    out = {}
    for key, value in flat.items():
        *outer, last = key.split("/")
        node = out
        for part in outer:
            node = node.setdefault(part, {})
        node[last] = value
    return out


def parser(family: Family) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=family.doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=family.threads, help="threads per block")
    ap.add_argument("--items", type=int, default=family.items, help="items per thread")
    ap.add_argument("--compiler", choices=sorted(COMPILER_IMPORTS), default="numba-cuda-mlir",
                    help="the compiler of the cuda.coop kernels and the kernels without it (the C++ "
                         "twins are CUB built by nvcc and NVRTC either way)")
    for flags, kwargs in family.options:
        ap.add_argument(*flags, **kwargs)
    if family.latency:
        ap.add_argument("--latency-only", action="store_true", help="only the compile-latency figures")
        ap.add_argument("--latency-repeat", type=int, default=1,
                        help="rounds of the three fresh processes (cold, warm, without cuda.coop); medians")
        ap.add_argument("--latency-profile", metavar="DIR",
                        help="also profile one warm first launch and one without cuda.coop (cProfile) into DIR")

    return ap


def configure(family: Family, argv=None, device=True):
    """The parsed options plus the device's ``sms``, ``cc`` and ``name`` (an H200's without one)."""
    cfg = parser(family).parse_args(argv)
    use_compiler(cfg.compiler)
    info = NO_DEVICE
    if device:
        from numba_cuda_mlir import cuda

        dev = cuda.get_current_device()
        info = SimpleNamespace(sms=dev.MULTIPROCESSOR_COUNT, cc=tuple(dev.compute_capability),
                               name=device_name(dev))
    cfg.sms, cfg.cc, cfg.device = info.sms, info.cc, info.name
    cfg.arch = f"sm_{cfg.cc[0]}{cfg.cc[1]}"
    return cfg


def json_name(family: Family, cfg) -> str:
    if family.suffix is None:
        return family.name
    value = getattr(cfg, family.suffix)
    default = parser(family).get_default(family.suffix)
    return family.name if value == default else f"{family.name}_{value}"


def _compiler_suffix(cfg) -> str:
    return "" if cfg.compiler == "numba-cuda-mlir" else "_" + cfg.compiler.replace("-", "_")


def _first_launch(data: Data, args, launch) -> float:
    """Poison the outputs, launch once and wait: seconds (a coop kernel's first launch compiles it)."""
    from numba_cuda_mlir import cuda

    data.poison(args)
    cuda.synchronize()
    t0 = time.perf_counter()
    launch()
    cuda.synchronize()
    return time.perf_counter() - t0


def run_cases(family: Family, cases: list, data: Data) -> dict:
    """Check and time every case's cuda.coop kernel: ``{into: {name: Timing}}``, first-launch
    seconds and the checks' recorded values."""
    results = {"coop_ms": {}, "plain_ms": {}}
    first, checked = {}, {}
    for case in cases:
        args = data.resolve(case.args)

        def launch(kernel=case.kernel, grid=case.grid, block=case.block, args=args):
            kernel[grid, block](*args)

        first[case.name] = _first_launch(data, case.args, launch)
        value = case.check(data) if case.check else None
        if value is not None:
            checked[case.name] = value
        results.setdefault(case.into, {})[case.name] = time_kernel(launch, repeat=case.repeat, batch=case.batch)
    return {"results": results, "first_launch_s": first, "checked": checked}


def run_twins(family: Family, cfg, cases: list, data: Data) -> dict:
    """The C++ twins built by NVRTC (cuda.coop's compiler), checked and timed like the coop kernels."""
    source = family.specialize(family.cub_kernels, cfg)
    expressions = sorted({case.twin for case in cases if case.twin})
    launches = build_nvrtc_kernels(source, expressions)
    results, done = {}, set()
    for case in cases:
        key = case.twin_key()
        if key is None or key in done:
            continue
        done.add(key)
        twin_args = case.twin_args or case.args
        launch = launches[case.twin].prepare(case.grid, case.block, *data.resolve(twin_args))
        _first_launch(data, twin_args, launch)
        if case.check:
            case.check(data)
        results[case.name] = time_kernel(launch, repeat=case.repeat, batch=case.batch)
    return results


def _print_latency(lat: dict) -> None:
    for key, val in lat.items():
        rest = ", ".join(f"{k.removesuffix('_s')} {v:.2f}" for k, v in val.items()
                         if k not in ("first_launch_s", "second_launch_s") and isinstance(v, (int, float)))
        print(f"  {key:16s} first launch {val['first_launch_s']:.3f}  second {val['second_launch_s']:.4f}  ({rest})")
    for key, extra in latency_over_plain(lat).items():
        rounds = len(lat[key].get("first_launch_samples_s", [None]))
        print(f"  {key} first launch over the kernel without cuda.coop: {extra:+.3f} s (median of {rounds})")


def latency_only(family: Family, cfg, report: dict) -> dict:
    report["latency"] = compile_latency(*family.latency, cfg.latency_repeat, compiler=cfg.compiler,
                                        profile_dir=cfg.latency_profile)
    print(f"compiler: {cfg.compiler}")
    print("compile latency (seconds): first launch (compile + launch) and the second, in fresh processes")
    _print_latency(report["latency"])
    write_results(f"{family.name}_latency{_compiler_suffix(cfg)}", report)
    return report


def print_tables(family: Family, cfg, cases: list, report: dict) -> None:
    """The batched table (one row per case and reference), then the per-launch one."""
    coop = _flat(report["coop_ms"])
    rows = {row.name: row for row in cases if getattr(row, "into", "coop_ms") == "coop_ms"}
    cases = [row for row in cases if isinstance(row, Case)]
    by_name = {n: row for n, row in rows.items() if isinstance(row, Case)}
    cub = _flat(report.get("cub_ms", {}))
    nvrtc = _flat(report.get("cub_nvrtc_ms", {}))
    twin_of = {}
    for case in cases:
        twin_of.setdefault(case.twin_key(), case.name)
    cub_key = {n: (c.cub or "") for n, c in by_name.items()}
    nvrtc_key = {n: twin_of[c.twin_key()] if c.twin else "" for n, c in by_name.items()}
    baselines = {}
    if family.cub_source:
        baselines["CUB C++"] = {n: cub.get(k) for n, k in cub_key.items()}
    for title, key_of in family.columns.items():
        baselines[title] = {n: cub.get(key_of(c)) for n, c in by_name.items()}
    if "cub_nvrtc_ms" in report:
        baselines["NVRTC"] = {n: nvrtc.get(k) for n, k in nvrtc_key.items()}
    print(f"\n{family.title(cfg)}")
    timed = {n: ms for n, ms in coop.items() if ms}
    print_ratio_table(
        family.label, timed, baselines,
        (lambda n: rows[n].bytes) if any(r.bytes for r in rows.values()) else None,
        items=(lambda n: rows[n].items) if any(r.items for r in rows.values()) else None,
        first_launch=report.get("coop_first_launch_s"))
    for name in coop.keys() - timed.keys():
        print(f"{name}: not timed")
    if family.note:
        print(family.note(report) if callable(family.note) else family.note)
    per_launch_table(report, family.label,
                     rename={"cub_ms": lambda n: cub_key.get(n, n), "cub_nvrtc_ms": lambda n: nvrtc_key.get(n, n)})
    record_table(report, family.label, family.title(cfg), timed, baselines,
                 {"coop": report["per_launch_ms"]["coop"],
                  "CUB C++": {n: report["per_launch_ms"].get("cub", {}).get(k) for n, k in cub_key.items()},
                  "NVRTC": {n: report["per_launch_ms"].get("cub_nvrtc", {}).get(k) for n, k in nvrtc_key.items()}})


def record_table(report: dict, label: str, title: str, coop: dict, baselines: dict, per_launch: dict) -> None:
    """The printed table as data, ``report["table"]``: one row per case with cuda.coop's and each
    baseline's batched milliseconds, and the per-launch ones, so the documentation renders the
    run's table from its JSON (``coop-benchmark-table``) instead of copying figures by hand."""
    rows = {}
    for name, ms in coop.items():
        row = {"coop": ms, **{column: values.get(name) for column, values in baselines.items()}}
        single = {column: values.get(name) for column, values in per_launch.items() if values.get(name)}
        rows[name] = {**row, "per_launch": single}
    report["table"] = {"label": label, "title": title, "columns": list(baselines), "rows": rows}


def main(family: Family, argv=None) -> dict:
    """Run ``family``: check and time its cases, its C++ twins, print the tables, write the JSON."""
    cfg = configure(family, argv)
    report = {"compiler": cfg.compiler, "threads": cfg.threads, "items_per_thread": cfg.items,
              **family.header(cfg)}
    if getattr(cfg, "device", None) is not None:
        report["meta"] = run_meta(cfg.device, cfg.cc)
    if getattr(cfg, "latency_only", False):
        return latency_only(family, cfg, report)
    cases = family.cases(cfg)
    data = Data(family.buffers(cfg))
    ran = run_cases(family, cases, data)
    coop = ran["results"]["coop_ms"]
    references = family.references(cfg, data) if family.references else []
    for ref in references:
        try:
            coop[ref.name] = time_kernel(ref.make())
        except Exception as exc:  # torch missing or without CUDA
            coop[ref.name] = None
            print(f"{ref.name} not timed: {exc}")
    report["coop_ms"] = nest(coop)
    if family.check_field:
        report[family.check_field] = nest(ran["checked"])
    if ran["results"]["plain_ms"]:
        report["plain_ms"] = nest(ran["results"]["plain_ms"])
    report["coop_first_launch_s"] = ran["first_launch_s"]
    if family.cub_source:
        report["cub_ms"] = nvcc_baseline_ms(family.specialize(family.cub_source, cfg), json_name(family, cfg),
                                            *family.cub_args(cfg), arch=cfg.arch)
    if family.cub_kernels and any(case.twin for case in cases):
        report["cub_nvrtc_ms"] = nest(run_twins(family, cfg, cases, data))
    if family.extra:
        family.extra(report, cfg, data, cases)
    if family.latency:
        report["latency"] = compile_latency(*family.latency, cfg.latency_repeat, compiler=cfg.compiler)
    print_tables(family, cfg, cases + references, report)
    if report.get("latency"):
        print("\ncompile latency of the first kernel (seconds; fresh processes: empty provider cache, "
              "warm disk cache, without cuda.coop)")
        _print_latency(report["latency"])
    write_results(json_name(family, cfg) + _compiler_suffix(cfg), report)
    return report
