"""Load/Store: compile checks everywhere, NumPy-checked GPU runs on a device.

GPU matrix: every algorithm x group (block, warp, logical warps 1..16) x dtype x
items_per_thread {1, 2, 4, 7, 16}, with full, partial, empty, negative and
oversized ``valid_items`` in one launch (one value per block), outputs poisoned
first.  Each generated kernel covers all algorithms of its group, so a toolkit
run compiles 150 kernels, not thousands.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.ops.load_store import LOAD_ALGORITHMS
from cuda.coop.reference import load_store as ref

from ..kernelgen import group_expr, module_from_source

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
ITEMS = [1, 2, 4, 7, 16]
GROUPS = [("block", None), ("warp", 32), ("logical", None)]
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


def _random(rng, dtype, n):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.standard_normal(n) * 1000).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)


def _poison(dtype):
    dt = np.dtype(dtype)
    # numba-cuda-mlir 0.6 cannot lower a uint64 global above 2**63 (arith.constant
    # std::bad_cast), so poison values stay within int64.
    return "-12345.5" if dt.kind == "f" else str(min(np.iinfo(dt).max, np.iinfo(np.int64).max) - 3)


def _oob(dtype):
    dt = np.dtype(dtype)
    return "777.25" if dt.kind == "f" else str(np.iinfo(dt).min + 5 if dt.kind == "i" else 5)


def _scalar(dtype, text):
    dt = np.dtype(dtype)
    return dt.type(float(text)) if dt.kind == "f" else dt.type(int(text))


def run_load_store(kind, dtype, ipt, block=(128, 1, 1), seed=0):
    from ..compiler import cuda

    rng = np.random.default_rng(seed)
    block_threads = int(np.prod(block))
    cases = _cases(kind)
    tile_of = [block_threads * ipt if w is None else w * ipt for _g, w, _a in cases]
    # One valid_items per block: full, oversized, empty, negative, two random partials.
    valid = np.array([10**9, -3, 0, 1, None, None], dtype=object)
    nblocks = len(valid)
    n = nblocks * block_threads * ipt
    src = _random(rng, dtype, n)
    si = _random(rng, dtype, n)
    poison = _scalar(dtype, _poison(dtype))
    oob = _scalar(dtype, _oob(dtype))
    smallest_tile = min(tile_of)
    valid[4] = int(rng.integers(1, max(2, smallest_tile)))
    valid[5] = int(rng.integers(1, max(2, block_threads * ipt)))
    valid = valid.astype(np.int64)
    rows = len(cases)
    lo = np.full((rows, n), poison)
    ln = np.full((rows, n), poison)
    lf = np.full((rows, n), poison)
    so = np.full((rows, n), poison)
    sf = np.full((rows, n), poison)
    kernel = load_store_kernel(kind, dtype, _poison(dtype), _oob(dtype))
    kernel[nblocks, block](src, si, lo, ln, lf, so, sf, valid, ipt)
    cuda.synchronize()
    for row, (_g, width, algo) in enumerate(cases):
        for b in range(nblocks):
            base = b * block_threads * ipt
            sl = slice(base, base + block_threads * ipt)
            kw = dict(group_width=width, offset=base, valid_items=int(valid[b]))
            exp_lo = ref.load(src, algo, block_threads, ipt, oob_default=oob, **kw)
            exp_ln = ref.load(src, algo, block_threads, ipt,
                              initial=np.full((block_threads, ipt), poison), **kw)
            exp_lf = ref.load(src, algo, block_threads, ipt, group_width=width, offset=base)
            label = f"{kind} w={width} {algo} {dtype} ipt={ipt} block#{b} valid={valid[b]}"
            np.testing.assert_array_equal(lo[row, sl].reshape(block_threads, ipt), exp_lo, err_msg="load+oob " + label)
            np.testing.assert_array_equal(ln[row, sl].reshape(block_threads, ipt), exp_ln, err_msg="load " + label)
            np.testing.assert_array_equal(lf[row, sl].reshape(block_threads, ipt), exp_lf, err_msg="load full " + label)
            slots = si[sl].reshape(block_threads, ipt)
            exp_so = ref.store(np.full(n, poison), slots, algo, block_threads, ipt, **kw)[sl]
            exp_sf = ref.store(np.full(n, poison), slots, algo, block_threads, ipt, group_width=width,
                               offset=base)[sl]
            np.testing.assert_array_equal(so[row, sl], exp_so, err_msg="store " + label)
            np.testing.assert_array_equal(sf[row, sl], exp_sf, err_msg="store full " + label)


@pytest.mark.xfail_on("numba-cuda", "SharedMemoryLimitError", "no scratch shared between calls (14 x 17 KiB)",
                      ids=("logical-int64-16", "logical-uint64-16", "logical-float64-16"))
@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("ipt", ITEMS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", [g[0] for g in GROUPS])
def test_load_store_matrix(kind, dtype, ipt):
    run_load_store(kind, dtype, ipt)


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("block", [(64, 2, 1), (8, 4, 4), (16, 6, 1)], ids=["2d", "3d", "2d-96"])
@pytest.mark.parametrize("kind", ["block", "warp", "logical"])
def test_load_store_multidimensional_blocks(kind, block):
    run_load_store(kind, "int32", 4, block=block, seed=1)
    run_load_store(kind, "float64", 7, block=block, seed=2)


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


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["shared_auto", "manual_sync", "exclusive"])
def test_explicit_temp_storage_in_a_loop(name):
    from ..compiler import cuda

    kernel = getattr(module_from_source(TEMP_STORAGE_KERNELS), name)
    tiles, blocks, threads = 9, 40, 256
    src = np.random.default_rng(3).integers(-1000, 1000, size=blocks * tiles * threads * 4).astype(np.int32)
    dst = np.full_like(src, -7)
    kernel[blocks, threads](src, dst, tiles)
    cuda.synchronize()
    expected = src * 2 + 1 if name == "shared_auto" else src
    np.testing.assert_array_equal(dst, expected)


@pytest.mark.gpu
def test_scalar_store_and_payload_arithmetic():
    from ..compiler import cuda

    kernel = module_from_source(TEMP_STORAGE_KERNELS).scalar_store_and_inferred
    src = np.arange(256, dtype=np.int32) * 3
    dst = np.full(128, 99, dtype=np.int32)
    kernel[1, 128](src, dst, 200)
    cuda.synchronize()
    items = ref.load(src, "direct", 128, 2, valid_items=200, oob_default=-1)
    np.testing.assert_array_equal(dst, (items[:, 0] + items[:, 1]).astype(np.int32))


CACHE_SCRIPT = """
import glob, json, os, sys, warnings
import numpy as np
{cuda_import}
from cuda import coop
sys.path.insert(0, os.path.dirname(__file__))

@cuda.jit(cache=True)
def cached_copy(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, algorithm="transpose")
    coop.store(block, dst, items, algorithm="transpose")

src = np.arange(512, dtype=np.int32)
dst = np.zeros_like(src)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    cached_copy[1, 128](src, dst)
cuda.synchronize()
index = glob.glob(os.path.join(os.path.dirname(__file__), "__pycache__", "*cached_copy*"))
print(json.dumps({"ok": bool((dst == src).all()), "index_files": index,
                  "warnings": [str(w.message) for w in caught]}))
"""


@pytest.mark.gpu
def test_cache_true_never_reuses_a_coop_kernel(tmp_path):
    """@cuda.jit(cache=True) cannot serve a stale coop kernel after a cuda-coop or CCCL change.

    coop kernels are specialized per launch configuration, which numba-cuda-mlir 0.6
    never writes to its on-disk kernel cache; so nothing can be reused across
    processes (the provider cache, keyed by CCCL identity, makes recompiles fast).
    """
    import json
    import subprocess
    import sys

    script = tmp_path / "cached_kernel.py"
    from ..compiler import CUDA_IMPORT, NAME

    script.write_text(CACHE_SCRIPT.replace("{cuda_import}", CUDA_IMPORT[NAME]))
    for _ in range(2):
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert result["ok"]
        assert not [f for f in result["index_files"] if f.endswith((".nbi", ".nbc"))], result
