"""Where a warm first launch goes: cuda.coop's reduce kernel as a process's first kernel,
its caches filled, against the same process with a kernel that does not use cuda.coop.

    python benchmarks/warm_first_profile.py [--rounds 7] [--profile-dir DIR]
                                            [--compiler numba-cuda-mlir|numba-cuda]

One process compiles the cuda.coop kernel into a new cache (untimed).  Then ``--rounds``
pairs of fresh processes alternate, the cuda.coop kernel and the plain one
(``bench_reduce.py``'s latency kernels), each timing its first launch (compile included,
both caches warm), so a drift of the machine touches both alike.  Then one more process of
each runs its first launch under cProfile; ``--profile-dir`` (default ``$OUT`` or ``.``)
receives the two profiles and their listings by cumulative and by own time.  The JSON
(``bench_warm_first_profile.json``) keeps every round and the medians.

Issue #31's target for a warm first launch is +0.05 s over the kernel without cuda.coop;
docs/performance.rst (the eighth H100 spot check) quotes a run.  ``bench_reduce.py
--latency-only`` measures the same in rounds of three processes (cold, warm, plain).
"""

from __future__ import annotations

import argparse
import io
import os
import pstats
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_reduce import COOP_KERNEL, PLAIN_KERNEL  # noqa: E402
from common import for_compiler, run_meta, timed_subprocess, write_results  # noqa: E402

CHILD = '''
import json, time
import numpy as np
from numba_cuda_mlir import cuda
{coop_import}
{kernel}
src = cuda.to_device(np.ones(256 * 16 * 4, dtype=np.float32))
total = cuda.to_device(np.zeros(1, np.float32))
cuda.synchronize()
profile = {profile!r}
if profile:
    import cProfile
    profiler = cProfile.Profile()
    profiler.enable()
t0 = time.perf_counter()
k[4, 256](src, total)
cuda.synchronize()
first = time.perf_counter() - t0
if profile:
    profiler.disable()
    profiler.dump_stats(profile)
device = cuda.get_current_device()
name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
print(json.dumps({{"first_launch_s": first, "device": name, "cc": list(device.compute_capability)}}))
'''


def child(kind: str, compiler: str, profile: str = "") -> str:
    """The script of one fresh process: ``kind`` is ``"coop"`` or ``"plain"``."""
    coop = kind == "coop"
    code = CHILD.format(coop_import="from cuda import coop" if coop else "",
                        kernel=COOP_KERNEL if coop else PLAIN_KERNEL, profile=profile)
    return for_compiler(code, compiler)


def listing(path: Path, order: str, lines: int = 45) -> str:
    text = io.StringIO()
    pstats.Stats(str(path), stream=text).sort_stats(order).print_stats(lines)
    return text.getvalue()


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7, help="alternating cuda.coop / plain process pairs")
    ap.add_argument("--profile-dir", help="where the profiles go (default: $OUT, else .)")
    ap.add_argument("--compiler", default="numba-cuda-mlir", choices=["numba-cuda-mlir", "numba-cuda"])
    args = ap.parse_args(argv)
    env = {"CUDA_COOP_CACHE_DIR": tempfile.mkdtemp(prefix="coop-warm-first-")}
    filled = timed_subprocess(child("coop", args.compiler), env)
    rounds = {"coop": [], "plain": []}
    for _ in range(max(1, args.rounds)):
        for kind in rounds:
            rounds[kind].append(timed_subprocess(child(kind, args.compiler), env)["first_launch_s"])
    medians = {kind: statistics.median(times) for kind, times in rounds.items()}
    report = {"compiler": args.compiler, "cold_first_launch_s": filled["first_launch_s"],
              "first_launch_s": rounds, "median_s": medians,
              "warm_over_plain_s": medians["coop"] - medians["plain"],
              "meta": run_meta(filled["device"], tuple(filled["cc"]), args.compiler)}
    folder = Path(args.profile_dir or os.environ.get("OUT", "."))
    folder.mkdir(parents=True, exist_ok=True)
    for kind in rounds:
        path = folder / f"warm_first_{kind}.prof"
        timed_subprocess(child(kind, args.compiler, str(path)), env)
        for order in ("cumulative", "tottime"):
            (folder / f"warm_first_{kind}_{order}.txt").write_text(listing(path, order))
    for kind, times in rounds.items():
        print(f"{kind:6} first launch, warm caches: median {medians[kind]:.4f} s "
              f"({', '.join(f'{t:.3f}' for t in sorted(times))})")
    print(f"cuda.coop over the plain kernel: {report['warm_over_plain_s']:+.4f} s "
          f"(median of {len(rounds['coop'])} rounds); profiles in {folder}")
    write_results("warm_first_profile" + ("" if args.compiler == "numba-cuda-mlir" else "_numba_cuda"), report)
    return report


if __name__ == "__main__":
    main()
