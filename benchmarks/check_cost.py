"""The device cost of the run-time argument checks (on by default; ``CUDA_COOP_CHECKED=0`` off).

    python benchmarks/check_cost.py [--tiles N] [--rounds R]

For the families whose calls take run-time controls (load/store ``valid_items``, block
reduce ``valid_items``, warp scan ``valid_items``, radix sort ``begin_bit``/``end_bit``,
TopK ``k``), the same kernel is compiled twice, with the checks and without (two modules:
a kernel keeps the mode of its first compile), and launched on the same buffers with valid
values (every block one full tile, so the unguarded fast path runs in both).  The two are
timed in alternation, ``--rounds`` times, batched (CUDA events around 10 back-to-back
launches: device time) and per launch, and the table gives the medians and the ratio
checked / unchecked (1.01 = the checks cost 1 %).  Outputs of the two are compared first.
Writes ``bench_checks.json`` (to ``$OUT`` when set); ``python benchmarks/run_all.py check_cost``
runs it with the others.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import current_device_meta, import_source, time_kernel, write_results  # noqa: E402

THREADS = 256

SOURCE = """
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

# checks: {mode}
IPT = {ipt}
TILE = {threads} * IPT


@cuda.jit
def load_store(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(IPT, dtype=np.int32)
    base = cuda.blockIdx.x * TILE
    coop.load(block, src, items, offset=base, valid_items=n, algorithm="vectorize")
    coop.store(block, dst, items, offset=base, valid_items=n, algorithm="vectorize")


@cuda.jit
def block_reduce(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(IPT, dtype=np.int32)
    coop.load(block, src, items, offset=cuda.blockIdx.x * TILE, algorithm="vectorize")
    total = coop.sum(block, items[0], valid_items=n, broadcast=False)
    if cuda.threadIdx.x == 0:
        dst[cuda.blockIdx.x] = total


@cuda.jit
def warp_scan(src, dst, n):
    i = cuda.blockIdx.x * {threads} + cuda.threadIdx.x
    dst[i] = coop.inclusive_sum(coop.this_warp(), src[i], valid_items=n)


@cuda.jit
def radix_sort(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(IPT, dtype=np.int32)
    base = cuda.blockIdx.x * TILE
    coop.load(block, src, items, offset=base, algorithm="vectorize")
    coop.store(block, dst, coop.radix_sort_keys(block, items, begin_bit=n - n, end_bit=n), offset=base)


@cuda.jit
def topk(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(IPT, dtype=np.int32)
    base = cuda.blockIdx.x * TILE
    coop.load(block, src, items, offset=base, algorithm="vectorize")
    coop.store(block, dst, coop.topk_max_keys(block, items, k=n), offset=base)
"""

# name -> (items per thread, the run-time value passed: a full tile / all bits / k, output size per tile)
CASES = {
    "load_store": (8, lambda tile: tile, lambda tile: tile),
    "block_reduce": (8, lambda tile: THREADS, lambda tile: 1),
    "warp_scan": (1, lambda tile: 32, lambda tile: THREADS),
    "radix_sort": (8, lambda tile: 32, lambda tile: tile),
    "topk": (8, lambda tile: 64, lambda tile: tile),
}


def _module(mode: str, ipt: int):
    """The kernels compiled with the checks on (``checked``) or off (``unchecked``)."""
    if mode == "checked":
        os.environ.pop("CUDA_COOP_CHECKED", None)
    else:
        os.environ["CUDA_COOP_CHECKED"] = "0"
    return import_source(SOURCE.format(mode=mode, ipt=ipt, threads=THREADS), f"coop_bench_checks_{mode}_{ipt}")


def main(argv=None) -> int:
    import numpy as np
    from numba_cuda_mlir import cuda

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tiles", type=int, default=132 * 64, help="blocks per launch, one tile each")
    ap.add_argument("--rounds", type=int, default=5, help="alternating checked/unchecked timings")
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    results = {}
    print(f"{'case':<14}{'unchecked ms':>14}{'checked ms':>12}{'ratio':>8}"
          f"{'1-launch unchk':>16}{'1-launch chk':>14}{'ratio':>8}")
    for name in args.cases.split(","):
        ipt, value_of, out_per_tile = CASES[name]
        tile = THREADS * ipt
        src = cuda.to_device(rng.integers(-2**30, 2**30, size=args.tiles * tile, dtype=np.int32))
        value = np.int64(value_of(tile))
        kernels, outs = {}, {}
        for mode in ("unchecked", "checked"):
            kernels[mode] = getattr(_module(mode, ipt), name)
            outs[mode] = cuda.device_array(args.tiles * out_per_tile(tile), dtype=np.int32)
            kernels[mode][args.tiles, THREADS](src, outs[mode], value)  # compile, in this mode
        cuda.synchronize()
        same = np.array_equal(outs["unchecked"].copy_to_host(), outs["checked"].copy_to_host())
        batched = {"unchecked": [], "checked": []}
        single = {"unchecked": [], "checked": []}
        for _ in range(args.rounds):
            for mode in ("unchecked", "checked"):
                t = time_kernel(lambda m=mode: kernels[m][args.tiles, THREADS](src, outs[m], value))
                batched[mode].append(float(t))
                single[mode].append(t.per_launch_ms)
        med = {m: statistics.median(v) for m, v in batched.items()}
        one = {m: statistics.median(v) for m, v in single.items()}
        ratio, ratio1 = med["checked"] / med["unchecked"], one["checked"] / one["unchecked"]
        results[name] = {"unchecked_ms": med["unchecked"], "checked_ms": med["checked"], "ratio": ratio,
                         "per_launch_unchecked_ms": one["unchecked"], "per_launch_checked_ms": one["checked"],
                         "per_launch_ratio": ratio1, "same_output": same, "tiles": args.tiles, "threads": THREADS,
                         "items_per_thread": ipt}
        print(f"{name:<14}{med['unchecked']:>14.4f}{med['checked']:>12.4f}{ratio:>8.3f}"
              f"{one['unchecked']:>16.4f}{one['checked']:>14.4f}{ratio1:>8.3f}" + ("" if same else "  OUTPUTS DIFFER"))
    results["meta"] = current_device_meta(cuda)
    write_results("checks", results)
    return 0 if all(r["same_output"] for name, r in results.items() if name != "meta") else 1


if __name__ == "__main__":
    sys.exit(main())
