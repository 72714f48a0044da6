"""What tests/ops/test_merge_sort.py shares with tests/ops/radix_kernels.py,
tests/ops/test_merge_sort_compile.py, tests/ops/test_radix.py,
tests/ops/test_radix_compile.py, tests/ops/test_sorting_reference.py,
tests/ops/test_topk.py, tests/ops/test_topk_compile.py, tests/ops/topk_kernels.py: kept here
because test modules do not import each other."""

from __future__ import annotations

import numpy as np

from cuda.coop.reference import merge_sort as ref

from ..kernelgen import group_expr, module_from_source

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
ITEMS = [1, 3, 4]
BLOCK = 128
GROUPS = [("block", None), ("warp", 32), ("warp", 1), ("warp", 2), ("warp", 4), ("warp", 8), ("warp", 16)]

# (op, descending, valid_items, oob_default): four calls per group.
VARIANTS = [
    ("merge_sort_keys", False, True, True),
    ("merge_sort_keys", True, False, False),
    ("merge_sort_pairs", False, False, False),
    ("merge_sort_pairs", True, True, False),
]


def other_value_dtype(dtype: str) -> str:
    """The value dtype of the extra pairs case: every dtype appears across the kernels."""
    return DTYPES[(DTYPES.index(dtype) + 3) % len(DTYPES)]


def cases(block_only=False):
    """(row, group kind, width, op, descending, valid_items, oob_default, values, compare_op) of one kernel.

    ``values`` is "index" (tile positions, int32) or "other" (another dtype);
    ``compare_op`` is None or "custom" (the device function ``by_custom``).
    """
    out = []
    groups = GROUPS[:1] if block_only else GROUPS
    for kind, width in groups:
        for op, desc, vi, oob in VARIANTS:
            out.append((len(out), kind, width, op, desc, vi, oob, "index", None))
    out.append((len(out), "block", None, "merge_sort_pairs", False, True, True, "other", None))
    out.append((len(out), "block", None, "merge_sort_pairs", False, True, False, "index", "custom"))
    if not block_only:
        out.append((len(out), "warp", 8, "merge_sort_keys", True, False, False, "index", "custom"))
    return out


def custom_comparator(dtype: str) -> str:
    """``by_custom``: integers by their two low bits (many ties), floats largest first (NaN first)."""
    if np.dtype(dtype).kind == "f":
        # math.isnan, not ``a != a``: numba-cuda-mlir 0.6 lowers float ``!=`` as an
        # ordered comparison, so ``a != a`` folds to False even for NaN.
        return "return a > b or (math.isnan(a) and not math.isnan(b))"
    return "return (a & DT(3)) < (b & DT(3))"


def custom_reference(dtype: str, descending: bool):
    """(sort_key, descending) of the NumPy model for ``by_custom`` (+ ``descending``)."""
    if np.dtype(dtype).kind == "f":
        return None, not descending
    return (lambda k: k & np.dtype(dtype).type(3)), descending


# The opening of the merge-sort and TopK matrix kernels: the thread's linear number (CUB's
# order), the block's valid_items, and the keys ``k`` (read blocked from ``keys``) with two
# value payloads, ``v`` (int32) and ``w`` (WT), both holding each item's index.
KEYS_AND_VALUES = '''\
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    nthreads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    base = cuda.blockIdx.x * nthreads * items_per_thread
    vi = valid[cuda.blockIdx.x]
    k = coop.ThreadData(items_per_thread, dtype=DT)
    v = coop.ThreadData(items_per_thread, dtype=np.int32)
    w = coop.ThreadData(items_per_thread, dtype=WT)
    for i in range(items_per_thread):
        k[i] = keys[base + tid * items_per_thread + i]
        v[i] = tid * items_per_thread + i
        w[i] = WT(tid * items_per_thread + i)
'''


def merge_sort_kernel(dtype: str, oob: str, block_only=False):
    lines = []
    for row, kind, width, op, desc, vi, oob_flag, vt, cmp in cases(block_only):
        kw = []
        if cmp:
            kw.append("compare_op=by_custom")
        if desc:
            kw.append("descending=True")
        if vi:
            kw.append("valid_items=vi")
        if oob_flag:
            kw.append("oob_default=OOB")
        kws = ", ".join(kw)
        kws = ", " + kws if kws else ""
        g = group_expr(kind, width)
        if op == "merge_sort_keys":
            lines.append(f"""
    r = coop.merge_sort_keys({g}, k{kws})
    for i in range(items_per_thread):
        out_k[{row}, base + tid * items_per_thread + i] = r[i]
""")
        else:
            vals = "v" if vt == "index" else "w"
            vout = "out_v" if vt == "index" else "out_w"
            lines.append(f"""
    r, s = coop.merge_sort_pairs({g}, k, {vals}{kws})
    for i in range(items_per_thread):
        out_k[{row}, base + tid * items_per_thread + i] = r[i]
        {vout}[{row}, base + tid * items_per_thread + i] = s[i]
""")
    source = f"""
DT = np.{dtype}
WT = np.{other_value_dtype(dtype)}
OOB = DT({oob})

@cuda.jit(device=True)
def by_custom(a, b):
    {custom_comparator(dtype)}

@cuda.jit
def kernel(keys, out_k, out_v, out_w, valid, items_per_thread):
{KEYS_AND_VALUES}""" + "".join(lines)
    return module_from_source(source).kernel


def random_keys(rng, dtype, n):
    """Keys with many repeats (stability), extremes, and for floats NaN, +-0.0 and +-inf."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        keys = rng.choice(np.array([-2.5, -1.0, 0.0, 1.0, 3.5], dtype=dt), size=n)
        wide = (rng.standard_normal(n) * 1000).astype(dt)
        keys = np.where(rng.random(n) < 0.5, wide, keys)
        special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf], dtype=dt)
        pick = rng.random(n) < 0.08
        keys[pick] = rng.choice(special, size=int(pick.sum()))
        return keys
    info = np.iinfo(dt)
    wide = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
    small = rng.integers(0, 6, size=n).astype(dt)
    keys = np.where(rng.random(n) < 0.5, wide, small)
    keys[rng.random(n) < 0.03] = info.max
    keys[rng.random(n) < 0.03] = info.min
    return keys


def oob_text(dtype):
    dt = np.dtype(dtype)
    return "-7.25" if dt.kind == "f" else str(np.iinfo(dt).min + 1)


def _scalar(dtype, text):
    dt = np.dtype(dtype)
    return dt.type(float(text)) if dt.kind == "f" else dt.type(int(text))


def valid_per_block(rng, tile_min, tile_max):
    """Full, oversized, empty, negative and two partial tiles: one launch covers them all."""
    return np.array([10**9, tile_max, 0, -4, int(rng.integers(1, max(2, tile_min))),
                     int(rng.integers(1, tile_max))], dtype=np.int64)


def gpu_launch(kernel, nblocks, block, *args):
    from ..compiler import cuda

    kernel[nblocks, block](*args)
    cuda.synchronize()


def run_merge_sort(dtype, ipt, block=(BLOCK, 1, 1), seed=0, block_only=False, launch=gpu_launch):
    """Run the kernel (``launch`` may emulate it, see the unit test) and check every case."""
    rng = np.random.default_rng(seed)
    threads = int(np.prod(block))
    tile = threads * ipt
    valid = valid_per_block(rng, ipt, tile)
    nblocks = len(valid)
    n = nblocks * tile
    keys = random_keys(rng, dtype, n)
    wdt = np.dtype(other_value_dtype(dtype))
    the_cases = cases(block_only)
    rows = len(the_cases)
    poison_k = _scalar(dtype, "99" if np.dtype(dtype).kind != "f" else "-12345.5")
    out_k = np.full((rows, n), poison_k)
    out_v = np.full((rows, n), -1, dtype=np.int32)
    out_w = np.full((rows, n), wdt.type(7), dtype=wdt)
    oob = _scalar(dtype, oob_text(dtype))
    kernel = merge_sort_kernel(dtype, oob_text(dtype), block_only) if launch is gpu_launch else the_cases
    launch(kernel, nblocks, block, keys, out_k, out_v, out_w, valid, ipt)
    index = np.arange(tile, dtype=np.int32).reshape(threads, ipt)
    for row, kind, width, op, desc, use_vi, use_oob, vt, cmp in the_cases:
        sort_key, ref_desc = custom_reference(dtype, desc) if cmp else (None, desc)
        for b in range(nblocks):
            sl = slice(b * tile, (b + 1) * tile)
            slots = keys[sl].reshape(threads, ipt)
            values = index if vt == "index" else index.astype(wdt)
            exp_k, exp_v, (kdef, vdef) = ref.merge_sort(
                slots, values if op == "merge_sort_pairs" else None,
                group_width=None if kind == "block" else width, descending=ref_desc, sort_key=sort_key,
                valid_items=int(valid[b]) if use_vi else None, oob_default=oob if use_oob else None)
            label = (f"{op} {kind} w={width} desc={desc} compare_op={cmp} {dtype} ipt={ipt} block#{b} "
                     f"valid={valid[b] if use_vi else None}")
            got_k = out_k[row, sl].reshape(threads, ipt)
            np.testing.assert_array_equal(got_k[kdef], exp_k[kdef], err_msg="keys " + label)
            if kind == "block" and not use_vi and not cmp:
                # The model is np.sort's order (NaN last), reversed when descending.
                expected = np.sort(slots.reshape(-1))
                np.testing.assert_array_equal(got_k.reshape(-1), expected[::-1] if desc else expected,
                                              err_msg="np.sort " + label)
            if op == "merge_sort_pairs":
                got_v = (out_v if vt == "index" else out_w)[row, sl].reshape(threads, ipt)
                np.testing.assert_array_equal(got_v[vdef], exp_v[vdef], err_msg="values (stability) " + label)
