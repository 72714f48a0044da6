"""What tests/ops/test_radix.py shares with tests/ops/test_radix_compile.py,
tests/ops/test_sorting_reference.py: kept here because test modules do not import each
other."""

from __future__ import annotations

import numpy as np

from cuda.coop.reference import radix as ref

from ..kernelgen import module_from_source
from .merge_sort_kernels import _scalar, gpu_launch, oob_text, other_value_dtype, random_keys

ITEMS = [1, 4, 7]
BLOCK = 128

# The benchmark's sort (benchmarks/bench_radix_sort.py, keys_striped): a tile loaded through a
# warp transpose, sorted, stored striped.  ``{decorator}``: the jit's arguments, e.g.
# "(launch_bounds=(128, 8))" or "".  Its register count on sm_90 is what
# tests/ops/test_radix_compile.py and tests/backends/test_shared_addresses.py check.
TILE_SORT = """
@cuda.jit{decorator}
def kernel(source, destination, items_per_thread):
    block = coop.this_block()
    keys = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, keys, offset=offset, algorithm="warp_transpose")
    out = coop.radix_sort_keys(block, keys, blocked_to_striped=True)
    coop.store(block, destination, out, offset=offset, algorithm="striped")
"""


def static_bits(dtype):
    """A compile-time bit range that is neither empty nor the whole key."""
    nbits = np.dtype(dtype).itemsize * 8
    return (1, nbits - 1) if nbits == 8 else (3, nbits - 5)


# (row, op, kwargs (as source text), values, begin/end for the model ("rt" = runtime array), desc, striped,
#  valid_items, oob_default)
def sort_cases(dtype):
    b, e = static_bits(dtype)
    return [
        (0, "radix_sort_keys", "", None, (0, None), False, False, False, False),
        (1, "radix_sort_keys", "descending=True, blocked_to_striped=True", None, (0, None), True, True, False, False),
        (2, "radix_sort_keys", "radix_bits=7", None, (0, None), False, False, False, False),
        (3, "radix_sort_pairs", "begin_bit=bb, end_bit=eb", "index", ("rt", "rt"), False, False, False, False),
        (4, "radix_sort_pairs", f"begin_bit={b}, end_bit={e}, descending=True", "index", (b, e), True, False, False,
         False),
        (5, "radix_sort_pairs", "begin_bit=bb, end_bit=eb, descending=True, blocked_to_striped=True", "index",
         ("rt", "rt"), True, True, False, False),
        (6, "radix_sort_pairs", "blocked_to_striped=True", "other", (0, None), False, True, False, False),
        (7, "radix_sort_keys", "begin_bit=bb", None, ("rt", None), False, False, False, False),
        (8, "radix_sort_pairs", "begin_bit=bb, end_bit=eb, valid_items=vi, oob_default=OOB", "index", ("rt", "rt"),
         False, False, True, True),
        (9, "radix_sort_keys", "descending=True, blocked_to_striped=True, valid_items=vi", None, (0, None), True,
         True, True, False),
    ]


def rank_cases(dtype):
    """(row, kwargs, begin ("rt" = runtime), radix_bits, descending, digit prefix)."""
    begin = 1 if np.dtype(dtype).itemsize == 1 else 2
    return [
        (0, "", 0, 4, False, False),
        (1, "begin_bit=bb, radix_bits=5, descending=True", "rt", 5, True, False),
        (2, f"begin_bit={begin}, end_bit={begin + 7}, exclusive_digit_prefix=pre", begin, 7, False, True),
    ]


def radix_kernel(dtype: str, prefix_items: int):
    """The kernel of ``dtype``; ``prefix_items``: the digit prefix's items per thread (a constant)."""
    lines = []
    for row, op, kws, vals, _bits, _d, _s, _vi, _oob in sort_cases(dtype):
        kws = ", " + kws if kws else ""
        if op == "radix_sort_keys":
            lines.append(f"""
    r = coop.radix_sort_keys(g, k{kws})
    for i in range(items_per_thread):
        out_k[{row}, base + tid * items_per_thread + i] = r[i]
""")
        else:
            vin, vout = ("v", "out_v") if vals == "index" else ("w", "out_w")
            lines.append(f"""
    r, s = coop.radix_sort_pairs(g, k, {vin}{kws})
    for i in range(items_per_thread):
        out_k[{row}, base + tid * items_per_thread + i] = r[i]
        {vout}[{row}, base + tid * items_per_thread + i] = s[i]
""")
    for row, kws, _b, _r, _d, prefix in rank_cases(dtype):
        kws = ", " + kws if kws else ""
        lines.append(f"""
    q = coop.radix_rank(g, k{kws})
    for i in range(items_per_thread):
        out_r[{row}, base + tid * items_per_thread + i] = q[i]
""")
        if prefix:
            lines.append("""
    for j in range(pre.items_per_thread):
        out_p[cuda.blockIdx.x * nthreads * pre.items_per_thread + tid * pre.items_per_thread + j] = pre[j]
""")
    source = f"""
DT = np.{dtype}
WT = np.{other_value_dtype(dtype)}
OOB = DT({oob_text(dtype)})
PREFIX_ITEMS = {prefix_items}

@cuda.jit
def kernel(keys, out_k, out_v, out_w, out_r, out_p, begin_bits, end_bits, valid, items_per_thread):
    g = coop.this_block()
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    nthreads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    base = cuda.blockIdx.x * nthreads * items_per_thread
    bb = begin_bits[cuda.blockIdx.x]
    eb = end_bits[cuda.blockIdx.x]
    vi = valid[cuda.blockIdx.x]
    k = coop.ThreadData(items_per_thread, dtype=DT)
    v = coop.ThreadData(items_per_thread, dtype=np.int32)
    w = coop.ThreadData(items_per_thread, dtype=WT)
    pre = coop.ThreadData(PREFIX_ITEMS, dtype=np.int32)
    for i in range(items_per_thread):
        k[i] = keys[base + tid * items_per_thread + i]
        v[i] = tid * items_per_thread + i
        w[i] = WT(tid * items_per_thread + i)
""" + "".join(lines)
    return module_from_source(source).kernel


def bit_ranges(dtype):
    """Runtime (begin_bit, end_bit) per block: full, partial, clamped, empty, reversed, top bits."""
    nbits = np.dtype(dtype).itemsize * 8
    pairs = [(0, nbits), (2, nbits - 3), (-5, nbits + 40), (5, 5), (nbits - 1, 2), (nbits - 4, nbits + 1)]
    return np.array([p[0] for p in pairs], dtype=np.int64), np.array([p[1] for p in pairs], dtype=np.int32)


def prefix_items(threads, radix_bits=7):
    return max(1, -(-(1 << radix_bits) // threads))


def run_radix(dtype, ipt, block=(BLOCK, 1, 1), seed=0, launch=gpu_launch):
    """Run the kernel (``launch`` may emulate it, see the unit test) and check every case."""
    rng = np.random.default_rng(seed)
    threads = int(np.prod(block))
    tile = threads * ipt
    begin_bits, end_bits = bit_ranges(dtype)
    nblocks = len(begin_bits)
    n = nblocks * tile
    keys = random_keys(rng, dtype, n)
    if np.dtype(dtype).kind == "f":
        # NaN order is by bits in a radix sort; keep NaNs out of the float comparisons.
        keys[np.isnan(keys)] = 0.5
    wdt = np.dtype(other_value_dtype(dtype))
    oob = _scalar(dtype, oob_text(dtype))
    sorts = sort_cases(dtype)
    out_k = np.zeros((len(sorts), n), dtype=keys.dtype)
    out_v = np.full((len(sorts), n), -1, dtype=np.int32)
    out_w = np.zeros((len(sorts), n), dtype=wdt)
    out_r = np.full((len(rank_cases(dtype)), n), -1, dtype=np.int32)
    pitems = prefix_items(threads)
    out_p = np.full(nblocks * threads * pitems, -1, dtype=np.int32)
    valid = np.array([10**9, tile, 0, -3, int(rng.integers(1, tile)), int(rng.integers(1, tile))], dtype=np.int64)
    kernel = radix_kernel(dtype, pitems) if launch is gpu_launch else (dtype, pitems)
    launch(kernel, nblocks, block, keys, out_k, out_v, out_w, out_r, out_p, begin_bits, end_bits, valid, ipt)
    index = np.arange(tile, dtype=np.int32).reshape(threads, ipt)
    for b in range(nblocks):
        sl = slice(b * tile, (b + 1) * tile)
        slots = keys[sl].reshape(threads, ipt)
        for row, op, _kws, vals, (bb, eb), desc, striped, use_vi, use_oob in sorts:
            begin = int(begin_bits[b]) if bb == "rt" else bb
            end = int(end_bits[b]) if eb == "rt" else eb
            vi = int(valid[b]) if use_vi else None
            values = None if vals is None else (index if vals == "index" else index.astype(wdt))
            exp_k, exp_v = ref.radix_sort(slots, values, begin_bit=begin, end_bit=end, descending=desc,
                                          blocked_to_striped=striped, valid_items=vi,
                                          oob_default=oob if use_oob else None)
            vdef = ref.defined_slots(threads, ipt, valid_items=vi, blocked_to_striped=striped)
            kdef = np.ones_like(vdef) if use_oob else vdef
            label = (f"{op} row={row} {dtype} ipt={ipt} block#{b} bits=[{begin},{end}) desc={desc} "
                     f"striped={striped} valid={vi}")
            got_k = out_k[row, sl].reshape(threads, ipt)
            np.testing.assert_array_equal(got_k[kdef], exp_k[kdef], err_msg="keys " + label)
            if row == 0:  # all bits, ascending, blocked: np.sort
                np.testing.assert_array_equal(out_k[row, sl], np.sort(keys[sl]), err_msg="np.sort " + label)
            if vals is not None:
                got = (out_v if vals == "index" else out_w)[row, sl].reshape(threads, ipt)
                np.testing.assert_array_equal(got[vdef], exp_v[vdef], err_msg="values (stability) " + label)
        for row, _kws, rb, rbits, desc, prefix in rank_cases(dtype):
            begin = int(min(max(begin_bits[b], 0), np.dtype(dtype).itemsize * 8)) if rb == "rt" else rb
            exp = ref.radix_rank(slots, begin_bit=begin, radix_bits=rbits, descending=desc)
            label = f"radix_rank row={row} {dtype} ipt={ipt} block#{b} begin={begin} bits={rbits} desc={desc}"
            np.testing.assert_array_equal(out_r[row, sl].reshape(threads, ipt), exp, err_msg=label)
            if prefix:
                exp_p = ref.exclusive_digit_prefix(slots, threads, begin_bit=begin, radix_bits=rbits,
                                                   descending=desc)
                got_p = out_p[b * threads * pitems:(b + 1) * threads * pitems].reshape(threads, pitems)
                np.testing.assert_array_equal(got_p, exp_p, err_msg="digit prefix " + label)
