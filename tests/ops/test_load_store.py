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

from cuda.coop.reference import load_store as ref

from ..kernelgen import module_from_source
from ..values import full_range
from .load_store_kernels import TEMP_STORAGE_KERNELS, _cases, _oob, _poison, load_store_kernel

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
ITEMS = [1, 2, 4, 7, 16]
GROUPS = [("block", None), ("warp", 32), ("logical", None)]


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
    src = full_range(rng, dtype, n)
    si = full_range(rng, dtype, n)
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
