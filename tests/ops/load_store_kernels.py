"""What tests/ops/test_load_store.py shares with tests/ops/test_load_store_compile.py: kept
here because test modules do not import each other."""

from __future__ import annotations

import numpy as np

from cuda.coop.ops.load_store import LOAD_ALGORITHMS

from ..kernelgen import group_expr, module_from_source

LOGICAL_WIDTHS = [1, 2, 4, 8, 16]
BLOCK_ALGOS = list(LOAD_ALGORITHMS["block"])
WARP_ALGOS = list(LOAD_ALGORITHMS["warp"])


def _cases(kind):
    """(group expression, group width or None, algorithm) triples of one kernel."""
    if kind == "block":
        return [(group_expr("block", None), None, a) for a in BLOCK_ALGOS]
    if kind == "warp":
        return [(group_expr("warp", 32), 32, a) for a in WARP_ALGOS]
    return [(group_expr("warp", w), w, a) for w in LOGICAL_WIDTHS for a in WARP_ALGOS]


def load_store_kernel(kind: str, dtype: str, poison: str, oob: str):
    """One kernel that runs every (group, algorithm) case of ``kind``.

    Outputs (rows = cases): ``lo`` load with oob_default, ``ln`` load without it
    (slots start poisoned), ``lf`` load without valid_items, ``so`` store with
    valid_items, ``sf`` store without valid_items.
    """
    lines = []
    for row, (gexpr, _w, algo) in enumerate(_cases(kind)):
        lines.append(f"""
    g = {gexpr}
    a = coop.ThreadData(items_per_thread)
    b = coop.ThreadData(items_per_thread)
    c = coop.ThreadData(items_per_thread)
    for i in range(items_per_thread):
        b[i] = POISON
    coop.load(g, src, a, algorithm="{algo}", offset=base, valid_items=vi, oob_default=OOB)
    coop.load(g, src, b, algorithm="{algo}", offset=base, valid_items=vi)
    coop.load(g, src, c, algorithm="{algo}", offset=base)
    for i in range(items_per_thread):
        lo[{row}, base + tid * items_per_thread + i] = a[i]
        ln[{row}, base + tid * items_per_thread + i] = b[i]
        lf[{row}, base + tid * items_per_thread + i] = c[i]
    p = coop.ThreadData(items_per_thread, dtype=DT)
    for i in range(items_per_thread):
        p[i] = si[base + tid * items_per_thread + i]
    coop.store(g, so[{row}], p, algorithm="{algo}", offset=base, valid_items=vi)
    coop.store(g, sf[{row}], p, algorithm="{algo}", offset=base)
""")
    source = f"""
DT = np.{dtype}
POISON = DT({poison})
OOB = DT({oob})

@cuda.jit
def kernel(src, si, lo, ln, lf, so, sf, valid, items_per_thread):
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    nthreads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    base = cuda.blockIdx.x * nthreads * items_per_thread
    vi = valid[cuda.blockIdx.x]
""" + "".join(lines)
    return module_from_source(source).kernel


def _poison(dtype):
    dt = np.dtype(dtype)
    # numba-cuda-mlir 0.6 cannot lower a uint64 global above 2**63 (arith.constant
    # std::bad_cast), so poison values stay within int64.
    return "-12345.5" if dt.kind == "f" else str(min(np.iinfo(dt).max, np.iinfo(np.int64).max) - 3)


def _oob(dtype):
    dt = np.dtype(dtype)
    return "777.25" if dt.kind == "f" else str(np.iinfo(dt).min + 5 if dt.kind == "i" else 5)

TEMP_STORAGE_KERNELS = """
@cuda.jit
def shared_auto(src, dst, tiles):
    ts = coop.TempStorage()
    block = coop.this_block()
    for t in range(tiles):
        items = coop.ThreadData(4)
        off = (cuda.blockIdx.x * tiles + t) * cuda.blockDim.x * 4
        coop.load(block, src, items, offset=off, algorithm="transpose", temp_storage=ts)
        for i in range(4):
            items[i] = items[i] * 2 + 1
        coop.store(block, dst, items, offset=off, algorithm="warp_transpose", temp_storage=ts)

@cuda.jit
def manual_sync(src, dst, tiles):
    ts = coop.TempStorage(auto_sync=False)
    block = coop.this_block()
    for t in range(tiles):
        items = coop.ThreadData(4)
        off = (cuda.blockIdx.x * tiles + t) * cuda.blockDim.x * 4
        coop.load(block, src, items, offset=off, algorithm="warp_transpose", temp_storage=ts)
        cuda.syncthreads()
        coop.store(block, dst, items, offset=off, algorithm="transpose", temp_storage=ts)
        cuda.syncthreads()

@cuda.jit
def exclusive(src, dst, tiles):
    ts = coop.TempStorage(sharing="exclusive")
    block = coop.this_block()
    for t in range(tiles):
        items = coop.ThreadData(4)
        off = (cuda.blockIdx.x * tiles + t) * cuda.blockDim.x * 4
        coop.load(block, src, items, offset=off, algorithm="transpose", temp_storage=ts)
        coop.store(block, dst, items, offset=off, algorithm="transpose", temp_storage=ts)

@cuda.jit
def scalar_store_and_inferred(src, dst, n):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items, valid_items=n, oob_default=-1)
    coop.store(block, dst, np.int32(items[0] + items[1]), offset=0)
"""
