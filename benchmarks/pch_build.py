"""NVRTC's precompiled header: its build, its size, and a compile that loads it.

    python benchmarks/pch_build.py [--rounds N] [--arch sm_90]

No GPU needed.  Each round runs fresh processes, alternated: one with cuda-coop's header
stand-ins (core/cpp.py, ``core/build.py``'s ``HEADER_STAND_INS``: what this CCCL gets),
one without each group of stand-ins in turn (CCCL's headers of those names instead), and
one with CCCL's own headers only.  Each process builds the PCH of every family's headers
(``ops/_prelude.py``), as the background build of a process's first cooperative compile
does, and then compiles one unit that uses it.  Reported per variant, medians over the
rounds: the build's CPU seconds (NVRTC runs on the calling thread, so CPU time is less
disturbed by a shared machine than wall time), the PCH's size in MiB, and the wall seconds
of the compile that loads it.  Then the same process parses without a PCH (CPU seconds):
every family's headers, and the first family's header alone (``cub/block/block_load.cuh``),
which brings in the CUB and libcu++ base that every family shares.  The build less the
first parse is what writing the PCH adds; the second parse is what any family's first
compile must read, PCH or not (docs/compile_latency.rst, "Where the cold compile's floor
is").  Writes ``pch_build.json`` (to ``$OUT`` when set).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import json, pathlib, sys, time
import cuda.coop.numba_mlir  # noqa: F401  (pins the toolkit)
from cuda.coop.core import build
from cuda.coop.core.cpp import render_translation_unit
from cuda.coop.core.pch import pch
from cuda.coop.core.toolchain import toolchain
from cuda.coop.ops._prelude import PRELUDE_HEADERS

left_out, arch = sys.argv[1], sys.argv[2]  # the group left out: "" none, "*" all, or its index
groups = build.header_stand_in_groups(toolchain().cccl_version)
kept = () if left_out == "*" else [g for i, g in enumerate(groups) if str(i) != left_out]
stand_ins = tuple(pair for group in kept for pair in group)
source = render_translation_unit([], headers=PRELUDE_HEADERS) + build.PCH_PRELUDE_ANCHOR
options = [*build._pch_options(arch), *pch.nvrtc_options()]
t = time.process_time()
build._nvrtc_compile(source, options, "pch-prelude", stand_ins)
build_cpu = time.process_time() - t
size = sum(f.stat().st_size for f in pathlib.Path(pch.directory).iterdir())
t = time.perf_counter()
build._nvrtc_compile(source.replace("cuda_coop_pch_anchor", "cuda_coop_unit"), options, "unit", stand_ins)
use_s = time.perf_counter() - t
plain = build._pch_options(arch)  # no --pch: NVRTC parses every header


def parse_cpu(headers):
    t = time.process_time()
    build._nvrtc_compile(render_translation_unit([], headers=headers) + build.PCH_PRELUDE_ANCHOR, plain,
                         "parse", stand_ins)
    return time.process_time() - t


parse_all_cpu = parse_cpu(PRELUDE_HEADERS)
parse_base_cpu = parse_cpu(PRELUDE_HEADERS[:1])
print(json.dumps({"build_cpu_s": build_cpu, "pch_mib": size / 2**20, "use_s": use_s,
                  "parse_all_cpu_s": parse_all_cpu, "parse_base_cpu_s": parse_base_cpu,
                  "stand_ins": [[name for name, _ in group] for group in groups],
                  "toolchain": toolchain().describe()}))
'''


def _run(left_out: str, arch: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, left_out, arch], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: give 1 or more rounds of fresh processes")
    if not re.fullmatch(r"sm_\d+[a-z]?", args.arch):
        parser.error(f"--arch {args.arch}: give an NVRTC architecture such as sm_90, sm_90a or sm_100")
    first = _run("", args.arch)
    # variant name -> the group of stand-ins left out ("" none, "*" all, or its index)
    variants = {"stand-ins": ""}
    variants.update({f"without {' + '.join(names)}": str(i) for i, names in enumerate(first["stand_ins"])})
    variants["cccl-headers"] = "*"
    samples = {v: [] for v in variants}
    for _ in range(args.rounds):
        for variant, left_out in variants.items():
            samples[variant].append(_run(left_out, args.arch))
    report = {"arch": args.arch, "rounds": args.rounds, "toolchain": first["toolchain"],
              "stand_ins": first["stand_ins"], "median": {}, "samples": samples}
    names = [name for group in report["stand_ins"] for name in group]
    print(f"{report['toolchain']}\nstand-ins: {', '.join(names) or 'none for this CCCL'}")
    width = max(map(len, variants))
    columns = {"build_cpu_s": ("build (CPU s)", ".3f"), "pch_mib": ("PCH (MiB)", ".1f"),
               "use_s": ("unit with it (s)", ".3f"), "parse_all_cpu_s": ("parse, all (CPU s)", ".3f"),
               "parse_base_cpu_s": ("parse, base (CPU s)", ".3f")}
    print(f"{'':<{width}}" + "".join(f"{title:>21}" for title, _ in columns.values()))
    for variant in variants:
        median = {k: statistics.median(s[k] for s in samples[variant]) for k in columns}
        report["median"][variant] = median
        print(f"{variant:<{width}}" + "".join(f"{median[k]:>21{fmt}}" for k, (_, fmt) in columns.items()))
    path = Path(os.environ.get("OUT", ".")) / "pch_build.json"
    path.write_text(json.dumps(report, indent=1))
    print(f"results written to {path}")


if __name__ == "__main__":
    main()
