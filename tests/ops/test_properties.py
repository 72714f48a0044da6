"""Property tests (hypothesis) on a device: load/store, scans, radix sort, histogram.

Each test draws one compile-time variant from a short list (dtype, items per
thread, group, 1-D/2-D/3-D block shape, thread counts that are not multiples of
32 where the family allows them; every algorithm of the family is a row of the
variant's one kernel, see ``tests/gpu_kernels.py``) and run-time data freely:
the number of blocks, per-block tile offsets, ``valid_items``, bit ranges,
initial values, ``oob_default``, the value distribution and its seed.  Kernels
are cached per variant (``gpu_kernels.KERNELS``), so a test compiles at most
``len(<FAMILY>_VARIANTS)`` kernels however many examples run.  Outputs are
poisoned first and compared with :mod:`cuda.coop.reference` wherever the model
defines them; integer results must be exact (sums wrap), float sums within
``SUM_RTOL[dtype]`` times the running sum of ``|x|`` (min/max exact).

Example count: ``settings(max_examples=COOP_HYPOTHESIS_EXAMPLES)``, default 25;
``tests/conftest.py`` registers the ``ci`` profile (derandomized, ``print_blob``,
no database), loaded automatically under CI.  Run on a GPU machine with
``python -m pytest -q tests/ops/test_properties.py -m gpu``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pytest

pytest.importorskip("hypothesis", reason="the property tests need hypothesis (the `test` extra)")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cuda.coop.ops.load_store import LOAD_ALGORITHMS  # noqa: E402
from cuda.coop.reference import histogram as href  # noqa: E402
from cuda.coop.reference import load_store as lref  # noqa: E402
from cuda.coop.reference import radix as rref  # noqa: E402
from cuda.coop.reference import scan as sref  # noqa: E402

from ..gpu_kernels import (HISTOGRAM_ROWS, RADIX_ROWS, histogram_kernel, load_store_kernel,  # noqa: E402
                           radix_kernel, scan_kernel, scan_rows)

EXAMPLES = int(os.environ.get("COOP_HYPOTHESIS_EXAMPLES", "25"))
PROPERTY_SETTINGS = settings(max_examples=EXAMPLES, deadline=None)

# Float sums: |got - exact| <= SUM_RTOL * (running sum of |x|) + tiny.  CUB's order of
# summation differs from the reference's; its error is below ~(K + T/32 + 10) ulps of the
# running magnitude (float32: 2**-16 = 128 ulps).  The float64 reference itself is
# sequential, so float64 also allows its error (n <= 1024 items: 2**-40 = 8192 ulps).
SUM_RTOL = {"float32": 2.0**-16, "float64": 2.0**-40}
SPREADS = ("small", "full", "few")


def launch(kernel, nblocks, block, *args):
    from ..compiler import cuda

    kernel[nblocks, block](*args)
    cuda.synchronize()


def random_values(rng, dtype, n, spread):
    """``small``: near zero; ``full``: the dtype's whole range (floats: +-1e3 normal);
    ``few``: three distinct values (ties).  Never all zeros."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        if spread == "few":
            x = rng.choice(np.array([-1.5, 0.25, 3.0]), size=n)
        else:
            x = rng.standard_normal(n) * (1.0 if spread == "small" else 1e3)
    else:
        info = np.iinfo(dt)
        if spread == "full":
            x = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
        elif spread == "few":
            x = rng.choice(np.array([max(info.min, -2), 1, 7], dtype=dt), size=n)
        else:
            x = rng.integers(max(int(info.min), -50), min(int(info.max), 100), size=n, endpoint=True)
    x = np.asarray(x).astype(dt)
    if n and not x.any():
        x[0] = 1
    return x


def poison_value(dtype):
    dt = np.dtype(dtype)
    return dt.type(-12345.5) if dt.kind == "f" else dt.type(np.iinfo(dt).max - 3)


def per_block(strategy):
    """A strategy of ``n -> list of n draws``."""
    return lambda n: st.lists(strategy, min_size=n, max_size=n)


def valid_items_strategy(tile):
    """Partial, empty, negative, exact and oversized tiles."""
    return st.one_of(st.integers(1, max(1, tile - 1)), st.sampled_from([0, -3, tile, tile + 1, 10**9]))


def threads_of(block):
    return int(np.prod(block))


@dataclass(frozen=True)
class GroupVariant:
    """One compiled kernel of a property test: its group, element type, items and block."""

    kind: str  # "block", "warp", "logical"
    width: int | None  # group width (None: the block)
    dtype: str
    ipt: int
    block: tuple


# ======================================================================================
# Load / store
# ======================================================================================

@dataclass(frozen=True)
class LoadStoreVariant(GroupVariant):
    @property
    def algorithms(self):
        table = LOAD_ALGORITHMS["block" if self.kind == "block" else "warp"]
        threads = threads_of(self.block)
        return tuple(a for a, spec in table.items() if not (spec.needs_warp_multiple and threads % 32))


LOAD_STORE_VARIANTS = (
    LoadStoreVariant("block", None, "int32", 4, (128, 1, 1)),
    LoadStoreVariant("block", None, "float64", 7, (16, 6, 1)),  # 2-D, 96 threads
    LoadStoreVariant("block", None, "uint8", 3, (50, 1, 1)),  # not whole warps: no warp_transpose*
    LoadStoreVariant("block", None, "int64", 2, (8, 4, 3)),  # 3-D, 96 threads
    LoadStoreVariant("warp", 32, "float32", 5, (64, 2, 1)),
    LoadStoreVariant("logical", 8, "uint16", 4, (32, 3, 1)),
    LoadStoreVariant("logical", 2, "int16", 1, (16, 2, 3)),
)


@dataclass(frozen=True)
class LoadStoreParams:
    variant: LoadStoreVariant
    load_offsets: list
    store_offsets: list
    valid: list
    spread: str
    seed: int


@st.composite
def load_store_params(draw):
    v = draw(st.sampled_from(LOAD_STORE_VARIANTS))
    tile = threads_of(v.block) * v.ipt
    group_tile = (v.width or threads_of(v.block)) * v.ipt
    n = draw(st.integers(1, 4))
    return LoadStoreParams(v, draw(per_block(st.integers(0, 2 * tile + 7))(n)),
                           draw(per_block(st.integers(0, 2 * tile + 7))(n)),
                           draw(per_block(valid_items_strategy(group_tile))(n)),
                           draw(st.sampled_from(SPREADS)), draw(st.integers(0, 2**32 - 1)))


def make_load_store(p: LoadStoreParams) -> dict:
    v = p.variant
    rng = np.random.default_rng(p.seed)
    threads, k = threads_of(v.block), v.ipt
    tile, n = threads * k, len(p.valid)
    rows = len(v.algorithms)
    row_len = 3 * tile + 8  # each block's store segment: offsets up to 2*tile + 7, then a tile
    poison = poison_value(v.dtype)
    oob = random_values(rng, v.dtype, 1, p.spread)[0]
    if oob == poison:
        oob = np.dtype(v.dtype).type(1)
    data = dict(
        src=random_values(rng, v.dtype, max(p.load_offsets) + tile + int(rng.integers(0, 5)), p.spread),
        si=random_values(rng, v.dtype, n * tile, p.spread),
        loff=np.array(p.load_offsets, dtype=np.int64),
        soff=np.array([b * row_len + o for b, o in enumerate(p.store_offsets)], dtype=np.int64),
        valid=np.array(p.valid, dtype=np.int64),
        params=np.array([oob, poison], dtype=v.dtype),
    )
    for name in ("lo", "ln", "lf"):
        data[name] = np.full((rows, n * tile), poison, dtype=v.dtype)
    for name in ("so", "sf"):
        data[name] = np.full((rows, n * row_len), poison, dtype=v.dtype)
    return data


LOAD_STORE_ARGS = ("src", "si", "loff", "soff", "valid", "params", "lo", "ln", "lf", "so", "sf")


def check_load_store(p: LoadStoreParams, d: dict) -> None:
    v = p.variant
    threads, k = threads_of(v.block), v.ipt
    tile = threads * k
    oob, poison = d["params"]
    for row, algo in enumerate(v.algorithms):
        exp_so = np.full(d["so"].shape[1], poison, dtype=v.dtype)
        exp_sf = exp_so.copy()
        for b in range(len(p.valid)):
            sl = slice(b * tile, (b + 1) * tile)
            kw = dict(group_width=v.width, offset=int(d["loff"][b]))
            vi = int(d["valid"][b])
            label = f"{v} {algo} block#{b} offset={kw['offset']} valid_items={vi}"
            np.testing.assert_array_equal(d["lo"][row, sl].reshape(threads, k),
                                          lref.load(d["src"], algo, threads, k, valid_items=vi, oob_default=oob,
                                                    **kw), err_msg="load+oob_default " + label)
            np.testing.assert_array_equal(d["ln"][row, sl].reshape(threads, k),
                                          lref.load(d["src"], algo, threads, k, valid_items=vi,
                                                    initial=np.full((threads, k), poison), **kw),
                                          err_msg="load (poisoned slots kept) " + label)
            np.testing.assert_array_equal(d["lf"][row, sl].reshape(threads, k),
                                          lref.load(d["src"], algo, threads, k, **kw), err_msg="full load " + label)
            slots = d["si"][sl].reshape(threads, k)
            skw = dict(group_width=v.width, offset=int(d["soff"][b]))
            exp_so = lref.store(exp_so, slots, algo, threads, k, valid_items=vi, **skw)
            exp_sf = lref.store(exp_sf, slots, algo, threads, k, **skw)
        # Whole rows: nothing written outside [offset, offset + valid_items) of each block.
        np.testing.assert_array_equal(d["so"][row], exp_so, err_msg=f"store {v} {algo} valid={p.valid}")
        np.testing.assert_array_equal(d["sf"][row], exp_sf, err_msg=f"full store {v} {algo}")


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@PROPERTY_SETTINGS
@given(p=load_store_params())
def test_load_store_property(p):
    v = p.variant
    d = make_load_store(p)
    kernel = load_store_kernel(v.kind, v.width, v.dtype, v.ipt, v.algorithms)
    launch(kernel, len(p.valid), v.block, *(d[a] for a in LOAD_STORE_ARGS))
    check_load_store(p, d)


# ======================================================================================
# Scans
# ======================================================================================

ScanVariant = GroupVariant


SCAN_VARIANTS = (
    ScanVariant("block", None, "int32", 4, (128, 1, 1)),
    ScanVariant("block", None, "float32", 3, (10, 5, 1)),  # 50 threads: warp_scans falls back to raking
    ScanVariant("block", None, "float64", 1, (8, 4, 4)),  # 3-D
    ScanVariant("block", None, "uint8", 7, (16, 6, 1)),  # 2-D, 96 threads, sums wrap
    ScanVariant("block", None, "int64", 2, (33, 1, 1)),
    ScanVariant("warp", 32, "int16", 3, (64, 2, 1)),
    ScanVariant("logical", 4, "float64", 2, (32, 2, 2)),
    ScanVariant("logical", 16, "uint32", 5, (96, 1, 1)),
)


@dataclass(frozen=True)
class ScanParams:
    variant: ScanVariant
    valid: list  # warp scans' valid_items per block (>= 1)
    spread: str
    seed: int


@st.composite
def scan_params(draw):
    v = draw(st.sampled_from(SCAN_VARIANTS))
    group_tile = (v.width or threads_of(v.block)) * v.ipt
    n = draw(st.integers(1, 4))
    valid = st.one_of(st.integers(1, group_tile), st.sampled_from([1, group_tile + 1, 10**9]))
    return ScanParams(v, draw(per_block(valid)(n)), draw(st.sampled_from(SPREADS)),
                      draw(st.integers(0, 2**32 - 1)))


def make_scan(p: ScanParams) -> dict:
    v = p.variant
    rng = np.random.default_rng(p.seed)
    threads, n = threads_of(v.block), len(p.valid)
    rows = len(scan_rows(v.kind))
    poison = poison_value(v.dtype)
    return dict(
        src=random_values(rng, v.dtype, n * threads * v.ipt, p.spread),
        valid=np.array(p.valid, dtype=np.int64),
        inits=random_values(rng, v.dtype, n, p.spread),
        out=np.full((rows, n * threads * v.ipt), poison, dtype=v.dtype),
        aggs=np.full((rows, n * threads), poison, dtype=v.dtype),
    )


SCAN_ARGS = ("src", "valid", "inits", "out", "aggs")


def assert_within(got, expected, tol, label):
    got = np.asarray(got, dtype=np.float64)
    bad = ~(np.abs(got - expected) <= tol)  # NaN counts as bad
    if bad.any():
        idx = np.argwhere(bad)[:5]
        detail = ", ".join(f"{tuple(i)}: got {got[tuple(i)]!r} expected {expected[tuple(i)]!r} "
                           f"tol {tol[tuple(i)]:.3g}" for i in idx)
        raise AssertionError(f"{label}: {int(bad.sum())} of {bad.size} outside the tolerance; {detail}")


def check_scan(p: ScanParams, d: dict) -> None:
    v = p.variant
    threads, k = threads_of(v.block), v.ipt
    tile = threads * k
    is_float = np.dtype(v.dtype).kind == "f"
    for b in range(len(p.valid)):
        slots = d["src"][b * tile:(b + 1) * tile].reshape(threads, k)
        got_rows = d["out"][:, b * tile:(b + 1) * tile]
        for row, case in enumerate(scan_rows(v.kind)):
            vi = int(d["valid"][b]) if case.valid else None
            init = d["inits"][b] if case.init else None
            label = f"{case} {v} block#{b} valid_items={vi} init={init!r}"
            got = got_rows[row].reshape(threads, k)
            got_agg = d["aggs"][row, b * threads:(b + 1) * threads]
            if is_float and case.op == "sum":
                exp, defined, agg = sref.scan(slots.astype(np.float64), "sum", mode=case.mode,
                                              group_width=v.width, valid_items=vi)
                scale, _, scale_agg = sref.scan(np.abs(slots.astype(np.float64)), "sum", mode="inclusive",
                                                group_width=v.width, valid_items=vi)
                rtol, tiny = SUM_RTOL[v.dtype], float(np.finfo(v.dtype).tiny)
                assert_within(got[defined], exp[defined], rtol * scale[defined] + tiny, label)
                if case.aggregate:
                    assert_within(got_agg, agg, rtol * scale_agg + tiny, label + " (aggregate)")
            else:
                exp, defined, agg = sref.scan(slots, case.op, mode=case.mode, initial_value=init,
                                              group_width=v.width, valid_items=vi)
                np.testing.assert_array_equal(got[defined], exp[defined], err_msg=label)
                if case.aggregate:
                    np.testing.assert_array_equal(got_agg, agg, err_msg=label + " (aggregate)")


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@PROPERTY_SETTINGS
@given(p=scan_params())
def test_scan_property(p):
    v = p.variant
    d = make_scan(p)
    launch(scan_kernel(v.kind, v.width, v.dtype, v.ipt), len(p.valid), v.block, *(d[a] for a in SCAN_ARGS))
    check_scan(p, d)


# ======================================================================================
# Radix sort
# ======================================================================================

@dataclass(frozen=True)
class RadixVariant:
    dtype: str
    ipt: int
    block: tuple
    radix_bits: int = 4


RADIX_VARIANTS = (
    RadixVariant("uint32", 4, (128, 1, 1)),
    RadixVariant("int8", 7, (50, 1, 1)),  # not whole warps
    RadixVariant("float32", 3, (16, 6, 1), radix_bits=5),  # 2-D
    RadixVariant("int64", 2, (8, 4, 3)),  # 3-D
    RadixVariant("float64", 1, (64, 1, 1), radix_bits=6),
    RadixVariant("uint16", 5, (40, 3, 1)),  # 2-D, 120 threads
    RadixVariant("uint64", 3, (32, 1, 1)),
)


@dataclass(frozen=True)
class RadixParams:
    variant: RadixVariant
    begin_bits: list
    end_bits: list
    valid: list
    spread: str
    seed: int


@st.composite
def radix_params(draw):
    v = draw(st.sampled_from(RADIX_VARIANTS))
    nbits = np.dtype(v.dtype).itemsize * 8
    tile = threads_of(v.block) * v.ipt
    n = draw(st.integers(1, 4))
    # Runtime bit ranges are clamped to the key; empty and reversed ranges sort by no bits.
    return RadixParams(v, draw(per_block(st.integers(-2, nbits + 2))(n)),
                       draw(per_block(st.integers(-2, nbits + 4))(n)),
                       draw(per_block(valid_items_strategy(tile))(n)), draw(st.sampled_from(SPREADS)),
                       draw(st.integers(0, 2**32 - 1)))


def random_keys(rng, dtype, n, spread):
    """Keys as :func:`random_values`; floats also get +-0.0 and +-inf (never NaN: NaNs order by bits)."""
    keys = random_values(rng, dtype, n, spread)
    if np.dtype(dtype).kind == "f":
        pick = rng.random(n) < 0.08
        keys[pick] = rng.choice(np.array([-0.0, 0.0, np.inf, -np.inf], dtype=dtype), size=int(pick.sum()))
    return keys


def make_radix(p: RadixParams) -> dict:
    v = p.variant
    rng = np.random.default_rng(p.seed)
    tile, n = threads_of(v.block) * v.ipt, len(p.valid)
    return dict(
        keys=random_keys(rng, v.dtype, n * tile, p.spread),
        begin_bits=np.array(p.begin_bits, dtype=np.int64),
        end_bits=np.array(p.end_bits, dtype=np.int64),
        valid=np.array(p.valid, dtype=np.int64),
        oobs=random_values(rng, v.dtype, n, p.spread),
        out_k=np.full((len(RADIX_ROWS), n * tile), poison_value(v.dtype), dtype=v.dtype),
        out_v=np.full((len(RADIX_ROWS), n * tile), -1, dtype=np.int32),
    )


RADIX_ARGS = ("keys", "begin_bits", "end_bits", "valid", "oobs", "out_k", "out_v")


def check_radix(p: RadixParams, d: dict) -> None:
    v = p.variant
    threads, k = threads_of(v.block), v.ipt
    tile = threads * k
    index = np.arange(tile, dtype=np.int32).reshape(threads, k)
    for b in range(len(p.valid)):
        sl = slice(b * tile, (b + 1) * tile)
        slots = d["keys"][sl].reshape(threads, k)
        for row, case in enumerate(RADIX_ROWS):
            begin, end = (int(d["begin_bits"][b]), int(d["end_bits"][b])) if case.bits else (0, None)
            vi = int(d["valid"][b]) if case.valid else None
            oob = d["oobs"][b] if case.oob else None
            exp_k, exp_v = rref.radix_sort(slots, index if case.pairs else None, begin_bit=begin, end_bit=end,
                                           descending=case.descending, blocked_to_striped=case.striped,
                                           valid_items=vi, oob_default=oob)
            vdef = rref.defined_slots(threads, k, valid_items=vi, blocked_to_striped=case.striped)
            kdef = np.ones_like(vdef) if case.oob else vdef
            label = f"{case} {v} block#{b} bits=[{begin},{end}) valid_items={vi} oob={oob!r}"
            got_k = d["out_k"][row, sl].reshape(threads, k)
            np.testing.assert_array_equal(got_k[kdef], exp_k[kdef], err_msg="keys " + label)
            if row == 0:  # all bits, ascending, blocked: np.sort
                np.testing.assert_array_equal(d["out_k"][row, sl], np.sort(d["keys"][sl]), err_msg="np.sort " + label)
            if case.pairs:
                got_v = d["out_v"][row, sl].reshape(threads, k)
                np.testing.assert_array_equal(got_v[vdef], exp_v[vdef], err_msg="values (stability) " + label)


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@PROPERTY_SETTINGS
@given(p=radix_params())
def test_radix_sort_property(p):
    v = p.variant
    d = make_radix(p)
    launch(radix_kernel(v.dtype, v.ipt, v.radix_bits), len(p.valid), v.block, *(d[a] for a in RADIX_ARGS))
    check_radix(p, d)


# ======================================================================================
# Histogram
# ======================================================================================

@dataclass(frozen=True)
class HistogramVariant:
    dtype: str
    ipt: int
    block: tuple
    bins: int
    bins_per_thread: int
    counter: str


HISTOGRAM_VARIANTS = (
    HistogramVariant("uint8", 16, (128, 1, 1), 256, 2, "int32"),
    HistogramVariant("int32", 4, (50, 1, 1), 37, 1, "uint32"),  # not whole warps
    HistogramVariant("int16", 3, (16, 6, 1), 300, 4, "int64"),  # 2-D
    HistogramVariant("uint64", 1, (8, 4, 3), 64, 1, "uint64"),  # 3-D
    HistogramVariant("int64", 7, (33, 1, 1), 100, 4, "int32"),
    HistogramVariant("uint16", 2, (64, 2, 1), 1000, 8, "uint32"),
)


@dataclass(frozen=True)
class HistogramParams:
    variant: HistogramVariant
    valid: list
    same_value_block: int | None  # this block's samples are all one value (atomic contention)
    seed: int


@st.composite
def histogram_params(draw):
    v = draw(st.sampled_from(HISTOGRAM_VARIANTS))
    tile = threads_of(v.block) * v.ipt
    n = draw(st.integers(1, 4))
    return HistogramParams(v, draw(per_block(valid_items_strategy(tile))(n)),
                           draw(st.one_of(st.none(), st.integers(0, n - 1))), draw(st.integers(0, 2**32 - 1)))


def random_samples(rng, dtype, n, bins):
    """Mostly in ``[-bins/4, 5*bins/4]`` (clipped to the dtype); some dtype extremes (and 2**63 + 3)."""
    info = np.iinfo(np.dtype(dtype))
    lo, hi = max(int(info.min), -(bins // 4) - 1), min(int(info.max), bins + bins // 4)
    values = rng.integers(lo, hi, size=n, endpoint=True).astype(object)
    extremes = [int(info.min), int(info.max)] + ([2**63 + 3] if dtype == "uint64" else [])
    picks = rng.random(n) < 0.03
    values[picks] = rng.choice(np.array(extremes, dtype=object), size=int(picks.sum()))
    values = values.astype(np.dtype(dtype))
    if not values.any():
        values[0] = 1
    return values


def make_histogram(p: HistogramParams) -> dict:
    v = p.variant
    rng = np.random.default_rng(p.seed)
    threads, n = threads_of(v.block), len(p.valid)
    tile = threads * v.ipt
    samples = random_samples(rng, v.dtype, n * tile, v.bins)
    if p.same_value_block is not None:
        b = p.same_value_block
        samples[b * tile:(b + 1) * tile] = samples[b * tile + int(rng.integers(0, tile))]
    info = np.iinfo(np.dtype(v.counter))
    acc = rng.integers(0, 1000, size=(n, threads * v.bins_per_thread)).astype(object)
    acc[:, :2] = int(info.max) - 1  # counters that wrap
    poison = -7 if info.min < 0 else int(info.max) - 6
    return dict(
        samples=samples,
        valid=np.array(p.valid, dtype=np.int64),
        acc_init=acc.astype(v.counter),
        out=np.full((len(HISTOGRAM_ROWS), n, threads * v.bins_per_thread), poison, dtype=v.counter),
    )


HISTOGRAM_ARGS = ("samples", "valid", "acc_init", "out")


def check_histogram(p: HistogramParams, d: dict) -> None:
    v = p.variant
    threads, k, bpt = threads_of(v.block), v.ipt, v.bins_per_thread
    tile = threads * k
    for b in range(len(p.valid)):
        tile_values = d["samples"][b * tile:(b + 1) * tile]
        sb = tile_values.reshape(threads, k)
        ss = tile_values.reshape(k, threads).T
        vi = int(d["valid"][b])
        for row, (algo, (name, _payload, _extra)) in enumerate(HISTOGRAM_ROWS):
            kw = dict(counter_dtype=v.counter)
            if name == "plain":
                expected = href.histogram(sb, v.bins, bpt, **kw)
            elif name == "valid_blocked":
                expected = href.histogram(sb, v.bins, bpt, valid_items=vi, **kw)
            elif name == "valid_striped":
                expected = href.histogram(ss, v.bins, bpt, valid_items=vi, layout="striped", **kw)
            else:
                init = d["acc_init"][b].reshape(bpt, threads).T
                expected = href.histogram(sb, v.bins, bpt, valid_items=vi, accumulate=init, **kw)
            got = d["out"][row, b].reshape(bpt, threads).T
            np.testing.assert_array_equal(got, expected, err_msg=f"{algo} {name} {v} block#{b} valid_items={vi}")


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@PROPERTY_SETTINGS
@given(p=histogram_params())
def test_histogram_property(p):
    v = p.variant
    d = make_histogram(p)
    kernel = histogram_kernel(v.dtype, v.ipt, v.bins, v.bins_per_thread, v.counter)
    launch(kernel, len(p.valid), v.block, *(d[a] for a in HISTOGRAM_ARGS))
    check_histogram(p, d)
