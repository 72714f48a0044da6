"""Tables of recorded benchmark runs, rendered from the JSON the benchmarks write.

``docs/performance.rst`` and ``docs/compile_latency.rst`` show runs, not hand-copied figures:
each directive here reads a JSON file under ``docs/performance/`` that a script in
``benchmarks/`` wrote on the device and turns it into a table whose caption says where and
when it ran (device, toolkit, commit, date, from the JSON's ``meta``).

* ``coop-benchmark-table:: <run folder> <family>``: one family's cases from
  ``<run folder>/<toolkit>/bench_<family>.json`` for each toolkit folder present (``cu13``,
  ``cu12``): cuda.coop's batched milliseconds and each baseline's time over cuda.coop's
  (CUB built by nvcc, the same C++ built by NVRTC, a family's own columns); ``:per-launch:``
  shows the per-launch figures instead.
* ``coop-launch-overhead:: <run folder>``, ``coop-check-cost:: <run folder>``: the same run's
  ``launch_overhead.py`` and ``check_cost.py`` results.
* ``coop-load-store-benchmark:: <json>``, ``coop-compile-latency:: <json>``: the older
  recorded runs of ``bench_load_store.py`` and ``compile_latency.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils.parsers.rst import directives

from coop_explorers import _GeneratedRst

TOOLKIT_FOLDERS = ("cu13", "cu12")


def _load(env, path: Path) -> dict:
    env.note_dependency(str(path))
    return json.loads(path.read_text())


def _ratio(baseline, coop) -> str:
    return f"{baseline / coop:.2f}" if baseline and coop else "n/a"


def _meta_line(tk: str, meta: dict) -> str:
    command = re.sub(r"\S*/(benchmarks/)", r"\1", meta.get("command", "?"))  # the device's checkout path
    return (f"* {tk}: {meta.get('device', '?')} (sm {meta.get('cc', '?')}), {meta.get('toolkit', '?')}, "
            f"{meta.get('compiler', '?')}; commit {meta.get('commit', '?')}, {meta.get('date', '?')}; "
            f"``{command}``")


def _runs(directive, stem: str) -> dict:
    folder = Path(directive.env.srcdir) / directive.arguments[0]
    runs = {tk: _load(directive.env, folder / tk / f"bench_{stem}.json")
            for tk in TOOLKIT_FOLDERS if (folder / tk / f"bench_{stem}.json").exists()}
    if not runs:
        raise directive.error(f"no bench_{stem}.json under {folder}/{{{','.join(TOOLKIT_FOLDERS)}}}")
    return runs


class CoopBenchmarkTable(_GeneratedRst):
    """``.. coop-benchmark-table:: performance/<run> <family>``: a family's cases, per toolkit."""

    required_arguments = 2
    option_spec = {"per-launch": directives.flag}

    def rst_lines(self):
        runs = _runs(self, self.arguments[1])
        per_launch = "per-launch" in self.options
        first = next(iter(runs.values()))
        table = first["table"]
        header = [table["label"]]
        for tk, run in runs.items():
            header += [f"{tk} cuda.coop ms"] + [f"{tk} {column} / coop" for column in run["table"]["columns"]]
        lines = [f".. list-table:: {table['title']}" + (" (per launch)" if per_launch else ""),
                 "   :header-rows: 1", ""]
        lines += ["   * - " + header[0]] + [f"     - {cell}" for cell in header[1:]]
        for name in table["rows"]:
            cells = [f"``{name}``"]
            for run in runs.values():
                row = run["table"]["rows"].get(name, {})
                values = row.get("per_launch", {}) if per_launch else row
                coop = values.get("coop")
                cells.append(f"{coop:.3f}" if coop else "n/a")
                cells += [_ratio(values.get(column), coop) for column in run["table"]["columns"]]
            lines += ["   * - " + cells[0]] + [f"     - {cell}" for cell in cells[1:]]
        lines.append("")
        lines += [_meta_line(tk, run.get("meta", {})) for tk, run in runs.items()]
        return lines + [""]


class CoopLoadStoreBenchmark(_GeneratedRst):
    """``.. coop-load-store-benchmark:: <json>``: a recorded run of benchmarks/bench_load_store.py."""

    required_arguments = 1

    def rst_lines(self):
        run = _load(self.env, Path(self.env.srcdir) / self.arguments[0])
        meta, coop, cub = run["meta"], run["coop_ms"], run.get("cub_ms", {})
        traffic = 2 * run["bytes"]
        memcpy = cub.get("memcpy")
        lines = [f".. list-table:: {meta['device']}, {run['threads']} threads x "
                 f"{run['items_per_thread']} int32 items per thread, 1 GiB copied",
                 "   :header-rows: 1", "",
                 "   * - algorithm", "     - cuda.coop (ms)", "     - CUB C++ (ms)", "     - CUB time / coop time",
                 "     - GB/s (coop)", "     - % of cudaMemcpy"]
        for algo, ms in coop.items():
            c = cub.get(algo)
            lines += [f"   * - ``{algo}``", f"     - {ms:.3f}", f"     - {c:.3f}" if c else "     - n/a",
                      f"     - {c / ms:.2f}" if c else "     - n/a", f"     - {traffic / (ms * 1e-3) / 1e9:.0f}",
                      f"     - {100 * memcpy / ms:.0f} %" if memcpy else "     - n/a"]
        if memcpy:
            lines += ["   * - ``cudaMemcpy`` device to device", f"     - {memcpy:.3f}", "     -", "     -",
                      f"     - {traffic / (memcpy * 1e-3) / 1e9:.0f}", "     - 100 %"]
        lines += ["", f"Recorded {meta['date']} with ``{meta['benchmark']}``; {meta['toolkit']}; "
                  f"{meta['method']}.", ""]
        return lines


class CoopCompileLatency(_GeneratedRst):
    """``.. coop-compile-latency:: <json>``: a recorded run of benchmarks/compile_latency.py."""

    required_arguments = 1

    def rst_lines(self):
        run = _load(self.env, Path(self.env.srcdir) / self.arguments[0])
        lines = [f".. list-table:: compile_cubin wall time, {run['machine']}", "   :header-rows: 1", "",
                 "   * - scenario", "     - median (s)", "     - best (s)"]
        for key, value in run["median_s"].items():
            lines += [f"   * - {key}", f"     - {value:.2f}", f"     - {run['min_s'][key]:.2f}"]
        lines += ["", f"Recorded {run.get('date', '')} with ``python benchmarks/compile_latency.py --repeat "
                  f"{run['repeat']}``: {run['toolchain']}; numba-cuda-mlir {run['numba_cuda_mlir']}.", ""]
        return lines


class CoopLaunchOverhead(_GeneratedRst):
    """``.. coop-launch-overhead:: performance/<run>``: host microseconds per launch
    (``launch_overhead.py``), cuda.coop against the same kernel without it, per toolkit."""

    required_arguments = 1
    CASES = {"1d": "1-D block of 128", "3d": "3-D block 8x4x4", "ipt_arg": "``items_per_thread`` argument"}

    def rst_lines(self):
        runs = _runs(self, "launch_overhead")
        lines = [".. list-table:: host microseconds per launch (cuda.coop / the same kernel without it)",
                 "   :header-rows: 1", "", "   * - case"] + [f"     - {tk}" for tk in runs]
        for case, title in self.CASES.items():
            lines.append(f"   * - {title}")
            for run in runs.values():
                us = run["us_per_launch"]
                lines.append(f"     - {us[f'coop_{case}']:.1f} / {us[f'plain_{case}']:.1f}")
        lines.append("")
        lines += [_meta_line(tk, run.get("meta", {})) for tk, run in runs.items()]
        return lines + [""]


class CoopCheckCost(_GeneratedRst):
    """``.. coop-check-cost:: performance/<run>``: the run-time checks' device cost
    (``check_cost.py``): checked over unchecked milliseconds, batched and per launch."""

    required_arguments = 1

    def rst_lines(self):
        runs = _runs(self, "checks")
        lines = [".. list-table:: checked ms / unchecked ms (above 1.00: what the checks cost)",
                 "   :header-rows: 1", "", "   * - kernel"]
        for tk in runs:
            lines += [f"     - {tk} unchecked ms", f"     - {tk} batched", f"     - {tk} per launch"]
        first = next(iter(runs.values()))
        for kernel in (k for k in first if k != "meta"):
            lines.append(f"   * - {kernel}")
            for run in runs.values():
                row = run.get(kernel, {})
                lines += [f"     - {row['unchecked_ms']:.4f}", f"     - {row['ratio']:.3f}",
                          f"     - {row['per_launch_ratio']:.3f}"] if row else ["     - n/a"] * 3
        lines.append("")
        lines += [_meta_line(tk, run.get("meta", {})) for tk, run in runs.items()]
        return lines + [""]


def setup(app):
    app.add_directive("coop-benchmark-table", CoopBenchmarkTable)
    app.add_directive("coop-launch-overhead", CoopLaunchOverhead)
    app.add_directive("coop-check-cost", CoopCheckCost)
    app.add_directive("coop-load-store-benchmark", CoopLoadStoreBenchmark)
    app.add_directive("coop-compile-latency", CoopCompileLatency)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
