"""Kernel builders for the property tests (``tests/ops/test_properties.py``).

Each builder takes only compile-time parameters (dtype, items per thread, group,
algorithms, bins, ...) and returns one kernel that runs every case of its family
as rows of its outputs.  Everything else arrives at run time in arrays: tile
offsets, ``valid_items``, bit ranges, initial values, ``oob_default`` and poison
values, one entry per block.  So one compiled kernel (per launch block shape)
serves every example that hypothesis draws for its compile-time tuple, and
:data:`KERNELS` keeps the kernels per tuple for the whole session.

All kernels number threads linearly (``x + y*Dx + z*Dx*Dy``, CUB's order), so
1-D, 2-D and 3-D blocks of the same thread count hold the same data.
"""

from __future__ import annotations

from dataclasses import dataclass

from .kernelgen import group_expr, module_from_source, scan_call

KERNELS: dict = {}

_PROLOGUE = """
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    nthreads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    b = cuda.blockIdx.x
"""


def _cached(key, source_fn):
    if key not in KERNELS:
        KERNELS[key] = module_from_source(source_fn()).kernel
    return KERNELS[key]


def group_source(kind: str, width: int | None) -> str:
    """``coop.this_block()``, ``coop.this_warp()`` or a logical warp of ``width``."""
    return group_expr("block" if kind == "block" else "warp", width)


# --------------------------------------------------------------------------------------
# Load / store
# --------------------------------------------------------------------------------------

def load_store_kernel(kind: str, width: int | None, dtype: str, ipt: int, algorithms: tuple):
    """Rows = ``algorithms``; per block ``b``: ``loff[b]`` (tile offset in ``src``),
    ``soff[b]`` (tile offset in each flattened store row), ``valid[b]``.

    ``lo`` load with valid_items and ``oob_default=params[0]``; ``ln`` load with
    valid_items only, into slots poisoned with ``params[1]``; ``lf`` load of the
    whole tile; ``so``/``sf`` store of ``si``'s slots with/without valid_items.
    Load outputs are slot-indexed: ``[row, (b*T + tid)*K + i]``.
    """
    def source():
        rows = []
        for row, algo in enumerate(algorithms):
            rows.append(f"""
    g = {group_source(kind, width)}
    a = coop.ThreadData({ipt}, dtype=DT)
    c = coop.ThreadData({ipt}, dtype=DT)
    d = coop.ThreadData({ipt}, dtype=DT)
    p = coop.ThreadData({ipt}, dtype=DT)
    for i in range({ipt}):
        c[i] = poison
        p[i] = si[slot0 + i]
    coop.load(g, src, a, algorithm="{algo}", offset=off, valid_items=vi, oob_default=oob)
    coop.load(g, src, c, algorithm="{algo}", offset=off, valid_items=vi)
    coop.load(g, src, d, algorithm="{algo}", offset=off)
    for i in range({ipt}):
        lo[{row}, slot0 + i] = a[i]
        ln[{row}, slot0 + i] = c[i]
        lf[{row}, slot0 + i] = d[i]
    coop.store(g, so[{row}], p, algorithm="{algo}", offset=soffset, valid_items=vi)
    coop.store(g, sf[{row}], p, algorithm="{algo}", offset=soffset)
""")
        return f"""
DT = np.{dtype}

@cuda.jit
def kernel(src, si, loff, soff, valid, params, lo, ln, lf, so, sf):
{_PROLOGUE}
    slot0 = (b * nthreads + tid) * {ipt}
    off = loff[b]
    soffset = soff[b]
    vi = valid[b]
    oob = params[0]
    poison = params[1]
""" + "".join(rows)

    return _cached(("load_store", kind, width, dtype, ipt, tuple(algorithms)), source)


# --------------------------------------------------------------------------------------
# Scans
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ScanRow:
    call: str  # coop function
    mode: str  # "inclusive" / "exclusive"
    op: str  # reference operator: "sum", "min", "max"
    scan_op: str = ""  # scan_op= text ("" for the sums)
    init: bool = False  # initial_value=init (per block, run time)
    algorithm: str | None = None  # block scans
    aggregate: bool = False
    valid: bool = False  # valid_items=vi (warp scans only)

    def source(self, group: str) -> str:
        return scan_call(self.call, group, "items", scan_op=self.scan_op, init="init" if self.init else "",
                         algorithm=self.algorithm, aggregate=self.aggregate, valid=self.valid)


BLOCK_SCAN_ALGORITHMS = ("raking", "raking_memoize", "warp_scans")


def scan_rows(kind: str) -> tuple:
    """The rows of a scan kernel: sums, a max scan and a min scan (with initial value)."""
    if kind == "block":
        rows = []
        for algo in BLOCK_SCAN_ALGORITHMS:
            rows.append(ScanRow("inclusive_sum", "inclusive", "sum", algorithm=algo, aggregate=True))
            rows.append(ScanRow("exclusive_sum", "exclusive", "sum", algorithm=algo, aggregate=True))
        rows += [
            ScanRow("inclusive_scan", "inclusive", "max", scan_op='"max"', algorithm="raking_memoize",
                    aggregate=True),
            ScanRow("exclusive_scan", "exclusive", "min", scan_op='"min"', init=True, algorithm="warp_scans",
                    aggregate=True),
            ScanRow("inclusive_scan", "inclusive", "min", scan_op='"min"', algorithm="raking"),
            ScanRow("exclusive_scan", "exclusive", "max", scan_op='"max"', init=True, algorithm="raking"),
        ]
        return tuple(rows)
    return (
        ScanRow("inclusive_sum", "inclusive", "sum", aggregate=True, valid=True),
        ScanRow("exclusive_sum", "exclusive", "sum", aggregate=True, valid=True),
        ScanRow("inclusive_scan", "inclusive", "max", scan_op='"max"', aggregate=True, valid=True),
        ScanRow("exclusive_scan", "exclusive", "min", scan_op='"min"', init=True, aggregate=True, valid=True),
        ScanRow("exclusive_scan", "exclusive", "max", scan_op='"max"', init=True),  # whole tiles
    )


def scan_kernel(kind: str, width: int | None, dtype: str, ipt: int):
    """``out[row, gtid*K + i]`` results, ``aggs[row, gtid]`` aggregates; per block ``valid[b]``, ``inits[b]``."""
    rows = scan_rows(kind)

    def source():
        group = group_source(kind, width)
        body = []
        for row, case in enumerate(rows):
            body.append(f"    r = {case.source(group)}\n    for i in range({ipt}):\n"
                        f"        out[{row}, base + i] = r[i]\n")
            if case.aggregate:
                body.append(f"    aggs[{row}, gtid] = agg[0]\n")
        return f"""
DT = np.{dtype}

@cuda.jit
def kernel(src, valid, inits, out, aggs):
{_PROLOGUE}
    gtid = b * nthreads + tid
    base = gtid * {ipt}
    vi = valid[b]
    init = inits[b]
    items = coop.ThreadData({ipt}, dtype=DT)
    for i in range({ipt}):
        items[i] = src[base + i]
    agg = coop.ThreadData(1, dtype=DT)
""" + "".join(body)

    return _cached(("scan", kind, width, dtype, ipt), source)


# --------------------------------------------------------------------------------------
# Radix sort
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RadixRow:
    pairs: bool
    descending: bool = False
    striped: bool = False  # blocked_to_striped
    bits: bool = False  # begin_bit=bb, end_bit=eb (per block, run time)
    valid: bool = False  # valid_items=vi
    oob: bool = False  # oob_default=oob (per block, run time)

    def keywords(self, radix_bits: int) -> str:
        kw = []
        if self.bits:
            kw.append("begin_bit=bb, end_bit=eb")
        if self.descending:
            kw.append("descending=True")
        if self.striped:
            kw.append("blocked_to_striped=True")
        if self.valid:
            kw.append("valid_items=vi")
        if self.oob:
            kw.append("oob_default=oob")
        if radix_bits != 4:
            kw.append(f"radix_bits={radix_bits}")
        return "".join(", " + k for k in kw)


RADIX_ROWS = (
    RadixRow(False),
    RadixRow(False, descending=True, bits=True),
    RadixRow(False, striped=True, bits=True),
    RadixRow(False, bits=True, valid=True, oob=True),
    RadixRow(False, descending=True, striped=True, valid=True),
    RadixRow(True, bits=True),
    RadixRow(True, descending=True, striped=True, bits=True, valid=True, oob=True),
)


def radix_kernel(dtype: str, ipt: int, radix_bits: int):
    """``out_k``/``out_v[row, (b*T + tid)*K + i]``; values are each key's tile position (stability)."""
    def source():
        body = []
        for row, case in enumerate(RADIX_ROWS):
            kws = case.keywords(radix_bits)
            if case.pairs:
                body.append(f"""
    r, s = coop.radix_sort_pairs(g, k, v{kws})
    for i in range({ipt}):
        out_k[{row}, slot0 + i] = r[i]
        out_v[{row}, slot0 + i] = s[i]
""")
            else:
                body.append(f"""
    r = coop.radix_sort_keys(g, k{kws})
    for i in range({ipt}):
        out_k[{row}, slot0 + i] = r[i]
""")
        return f"""
DT = np.{dtype}

@cuda.jit
def kernel(keys, begin_bits, end_bits, valid, oobs, out_k, out_v):
{_PROLOGUE}
    g = coop.this_block()
    slot0 = (b * nthreads + tid) * {ipt}
    bb = begin_bits[b]
    eb = end_bits[b]
    vi = valid[b]
    oob = oobs[b]
    k = coop.ThreadData({ipt}, dtype=DT)
    v = coop.ThreadData({ipt}, dtype=np.int32)
    for i in range({ipt}):
        k[i] = keys[slot0 + i]
        v[i] = tid * {ipt} + i
""" + "".join(body)

    return _cached(("radix", dtype, ipt, radix_bits), source)


# --------------------------------------------------------------------------------------
# Histogram
# --------------------------------------------------------------------------------------

HISTOGRAM_ALGORITHMS = ("atomic", "sort")
# (name, payload, extra keywords); "accumulate" adds to acc_init's counters.
HISTOGRAM_CASES = (
    ("plain", "sb", ""),
    ("valid_blocked", "sb", ", valid_items=vi"),
    ("valid_striped", "ss", ', valid_items=vi, layout="striped"'),
    ("accumulate", "sb", ", valid_items=vi"),
)
HISTOGRAM_ROWS = tuple((algo, case) for algo in HISTOGRAM_ALGORITHMS for case in HISTOGRAM_CASES)


def histogram_kernel(dtype: str, ipt: int, bins: int, bins_per_thread: int, counter: str):
    """``out[row, b, tid + i*T]`` = counter ``i`` of thread ``tid`` (striped bins); ``valid[b]``;
    ``acc_init[b, tid + i*T]`` the accumulate rows' starting counters.  Samples: ``sb`` blocked
    (``samples[b*T*K + tid*K + i]``), ``ss`` striped (``samples[b*T*K + tid + i*T]``)."""
    def source():
        body = []
        for row, (algo, (name, payload, extra)) in enumerate(HISTOGRAM_ROWS):
            if name == "accumulate":
                body.append(f"""
    acc = coop.ThreadData({bins_per_thread}, dtype=np.{counter})
    for i in range({bins_per_thread}):
        acc[i] = acc_init[b, tid + i * nthreads]
    coop.histogram(block, {payload}, bins={bins}, accumulate=acc, algorithm="{algo}"{extra})
    for i in range({bins_per_thread}):
        out[{row}, b, tid + i * nthreads] = acc[i]
""")
            else:
                body.append(f"""
    h = coop.histogram(block, {payload}, bins={bins}, bins_per_thread={bins_per_thread},
                       counter_dtype=np.{counter}, algorithm="{algo}"{extra})
    for i in range({bins_per_thread}):
        out[{row}, b, tid + i * nthreads] = h[i]
""")
        return f"""
DT = np.{dtype}

@cuda.jit
def kernel(samples, valid, acc_init, out):
{_PROLOGUE}
    block = coop.this_block()
    base = b * nthreads * {ipt}
    vi = valid[b]
    sb = coop.ThreadData({ipt}, dtype=DT)
    ss = coop.ThreadData({ipt}, dtype=DT)
    for i in range({ipt}):
        sb[i] = samples[base + tid * {ipt} + i]
        ss[i] = samples[base + tid + i * nthreads]
""" + "".join(body)

    return _cached(("histogram", dtype, ipt, bins, bins_per_thread, counter), source)
