"""The scan family on a device, checked against the NumPy reference.

One generated kernel per (dtype, items_per_thread) runs every case: block scans
(three algorithms; scalar and ThreadData; inclusive/exclusive sums and scans with
built-in operators, Python operators, NumPy ufuncs and a user device function;
initial values; aggregates; stateless and stateful prefix callbacks, the stateful
one over two consecutive tiles), warp and logical-warp scans (1..16) with
aggregates and runtime ``valid_items`` (one value per block).  Outputs are
poisoned first; results the reference marks undefined (items past
``valid_items``) are not compared.

Kernels compiled per toolkit: 30 (matrix) + 2 (block shapes) + 2 (example) + 1 (explicit
TempStorage: shared, exclusive and manual-sync storage reused by reductions and scans in a loop).
``tests/ops/test_scan_compile.py`` compiles a sample of the same kernels on CPU.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from cuda.coop.reference import scan as ref

from ..kernelgen import group_expr, module_from_source, scan_call
from .test_reduce import (BLOCK, DTYPES, ITEMS, LOGICAL_WIDTHS, USER_OP_SOURCE, poison, product_values,
                          random_values, sum_tolerance, user_op)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "running_scan.py"

PREFIX_SOURCE = """
@cuda.jit(device=True)
def add_three(block_aggregate):
    return block_aggregate + 3

@cuda.jit(device=True)
def running(state, block_aggregate):
    old = state[0]
    state[0] = old + block_aggregate
    return old
"""
STATE_START = 5


def add_three(aggregate):
    return aggregate + 3


@dataclass(frozen=True)
class Case:
    group: object  # "block" or a warp width
    call: str  # the coop function
    mode: str  # "inclusive" / "exclusive"
    ref_op: object  # canonical operator name or Python function
    op: str = ""  # scan_op spelling in the kernel ("" for sums)
    value: str = "items"  # "items", "scalar", "items2"
    init: str | None = None  # initial_value expression in the kernel (a module constant)
    algorithm: str | None = None
    aggregate: bool = False
    valid: bool = False
    prefix: str | None = None  # None, "stateless", "stateful"
    extra: str = ""  # extra keyword text (e.g. mode= for coop.scan)

    def source(self, group_src: str) -> str:
        prefix = {None: "", "stateless": "prefix_op=add_three",
                  "stateful": "prefix_op=running, prefix_state=state"}[self.prefix]
        return scan_call(self.call, group_src, self.value, extra=self.extra, scan_op=self.op, init=self.init or "",
                         algorithm=self.algorithm, aggregate=self.aggregate, valid=self.valid, prefix=prefix)

    @property
    def width(self):
        return None if self.group == "block" else self.group


def init_values(dtype):
    """The initial values the kernels use, by name (identity elements for min/max)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        big = dt.type(np.finfo(dt).max)
        return {"INIT": dt.type(7), "INIT_MIN": big, "INIT_MAX": dt.type(-big), "ZERO": dt.type(0)}
    info = np.iinfo(dt)
    return {"INIT": dt.type(7), "INIT_MIN": dt.type(info.max), "INIT_MAX": dt.type(info.min), "ZERO": dt.type(0)}


def scan_cases(dtype: str):
    integer = np.dtype(dtype).kind in "iu"
    B = "block"
    cases = [
        Case(B, "inclusive_sum", "inclusive", "sum"),
        Case(B, "exclusive_sum", "exclusive", "sum", algorithm="warp_scans", aggregate=True),
        Case(B, "inclusive_sum", "inclusive", "sum", value="scalar", algorithm="raking_memoize", aggregate=True),
        Case(B, "exclusive_sum", "exclusive", "sum", value="scalar"),
        Case(B, "inclusive_scan", "inclusive", "max", op='"max"', algorithm="warp_scans", aggregate=True),
        Case(B, "exclusive_scan", "exclusive", "min", op='"min"', init="INIT_MIN", algorithm="raking_memoize"),
        Case(B, "inclusive_scan", "inclusive", "prod", op='"*"', value="items2"),
        Case(B, "exclusive_scan", "exclusive", user_op, op="user_op", init="INIT", aggregate=True),
        Case(B, "scan", "inclusive", user_op, op="user_op", algorithm="warp_scans", extra='mode="inclusive"'),
        Case(B, "exclusive_scan", "exclusive", "sum", op='"+"', init="INIT", algorithm="raking_memoize",
             aggregate=True),
        Case(B, "scan", "exclusive", "max", op="np.maximum", value="scalar", init="INIT_MAX"),
        Case(B, "inclusive_sum", "inclusive", "sum", prefix="stateless", algorithm="warp_scans"),
        Case(B, "exclusive_scan", "exclusive", "max", op="operator.or_" if integer else '"max"',
             prefix="stateless"),
        Case(B, "exclusive_sum", "exclusive", "sum", prefix="stateful"),
        Case(B, "exclusive_sum", "exclusive", "sum", prefix="stateful"),  # the next tile: carried state
        Case(B, "inclusive_scan", "inclusive", user_op, op="user_op", value="scalar", prefix="stateless",
             algorithm="raking_memoize"),
        Case(32, "inclusive_sum", "inclusive", "sum", aggregate=True, valid=True),
        Case(32, "exclusive_sum", "exclusive", "sum", value="scalar", aggregate=True),
        Case(32, "inclusive_scan", "inclusive", "max", op='"max"', value="scalar", valid=True, aggregate=True),
        Case(32, "exclusive_scan", "exclusive", "min", op='"minimum"', init="INIT_MIN", aggregate=True),
        Case(32, "inclusive_scan", "inclusive", user_op, op="user_op", aggregate=True, valid=True),
        Case(32, "exclusive_scan", "exclusive", user_op, op="user_op", value="scalar", init="INIT"),
        Case(32, "inclusive_scan", "inclusive", "prod", op="operator.mul", value="items2"),
        Case(32, "exclusive_scan", "exclusive", "sum", op='"+"', init="INIT", valid=True, aggregate=True),
        Case(B, "exclusive_scan", "exclusive", user_op, op="user_op", value="scalar", init="3",
             algorithm="warp_scans"),
    ]
    if integer:
        # operator.or_ above stands for "|"; its reference is bit_or.
        cases[12] = Case(B, "exclusive_scan", "exclusive", "bit_or", op="operator.or_", init=None,
                         prefix="stateless")
        cases += [
            Case(B, "inclusive_scan", "inclusive", "bit_and", op='"&"', algorithm="raking_memoize",
                 aggregate=True),
            Case(B, "exclusive_scan", "exclusive", "bit_xor", op='"bit_xor"', init="ZERO", algorithm="warp_scans"),
            Case(32, "inclusive_scan", "inclusive", "bit_or", op="np.bitwise_or", aggregate=True, valid=True),
        ]
    for i, w in enumerate(LOGICAL_WIDTHS):
        cases.append(Case(w, "inclusive_sum", "inclusive", "sum", value="scalar" if i % 2 else "items",
                          aggregate=True, valid=True))
        cases.append(Case(w, "exclusive_scan", "exclusive", user_op if i % 2 else "max",
                          op="user_op" if i % 2 else '"max"', init="INIT" if i % 2 else "INIT_MAX",
                          aggregate=bool(i % 2), valid=not i % 2))
    return cases


def _group_source(group) -> str:
    return group_expr("block", None) if group == "block" else group_expr("warp", group)


def scan_kernel(dtype: str, cases=None):
    """One kernel for every case: ``out[row, gtid * K + i]`` results, ``aggs[row, gtid]`` aggregates."""
    cases = scan_cases(dtype) if cases is None else cases
    state_dtype = "np.float64" if np.dtype(dtype).kind == "f" else "np.int64"
    # Initial values arrive at run time (``inits``): numba-cuda-mlir 0.6 cannot lower a
    # uint64 module constant above the int64 range (``arith.constant`` bad_cast).
    consts = "\n".join(f"    {name} = inits[{i}]" for i, name in enumerate(init_values(dtype)))
    lines = []
    for row, case in enumerate(cases):
        call = case.source(_group_source(case.group))
        if case.value == "scalar":
            lines.append(f"    out[{row}, gtid * items_per_thread] = {call}\n")
        else:
            lines.append(f"    r = {call}\n    for i in range(items_per_thread):\n"
                         f"        out[{row}, gtid * items_per_thread + i] = r[i]\n")
        if case.aggregate:
            lines.append(f"    aggs[{row}, gtid] = agg[0]\n")
    source = f"""
import operator
DT = np.{dtype}
{USER_OP_SOURCE}
{PREFIX_SOURCE}
@cuda.jit
def kernel(src, src2, out, aggs, valid, inits, items_per_thread):
{consts}
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    nthreads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    gtid = cuda.blockIdx.x * nthreads + tid
    base = gtid * items_per_thread
    vi = valid[cuda.blockIdx.x]
    items = coop.ThreadData(items_per_thread, dtype=DT)
    items2 = coop.ThreadData(items_per_thread, dtype=DT)
    for i in range(items_per_thread):
        items[i] = src[base + i]
        items2[i] = src2[base + i]
    scalar = src[base]
    agg = coop.ThreadData(1, dtype=DT)
    state = coop.ThreadData(1, dtype={state_dtype})
    state[0] = {STATE_START}
""" + "".join(lines)
    return module_from_source(source).kernel


# ----------------------------------------------------------------------------------------
# Checks
# ----------------------------------------------------------------------------------------

def _expected(case, slots, dtype, vi, inits, state):
    """Reference results for one block; ``state`` is the stateful prefix's running value."""
    init = (inits[case.init] if case.init in inits else int(case.init)) if case.init else None
    prefix = None
    if case.prefix == "stateless":
        prefix = add_three
    elif case.prefix == "stateful":
        def prefix(aggregate, _state=state):
            old = _state[0]
            _state[0] = old + aggregate
            return old
    return ref.scan(slots, case.ref_op, mode=case.mode, initial_value=init, group_width=case.width,
                    valid_items=vi, prefix=prefix)


def check_scan(label, got, expected, defined, slots, case, dtype):
    got, expected = got[defined], expected[defined]
    dt = np.dtype(dtype)
    if dt.kind == "f" and case.ref_op not in ("max", "min", "prod"):
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=0,
                                   atol=sum_tolerance(slots, dtype) + 8 * np.finfo(dt).eps * 1e3, err_msg=label)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=label)


def valid_items_per_block(rng, ipt):
    """Warp tiles: whole (oversized), 1, a random partial tile of the smallest warp, of the hardware warp."""
    return np.array([10**9, 1, int(rng.integers(1, max(2, ipt) + 1)), int(rng.integers(1, 32 * ipt)),
                     32 * ipt], dtype=np.int64)


def run_scan(dtype, ipt, *, block=(BLOCK, 1, 1), cases=None, seed=0):
    from ..compiler import cuda

    rng = np.random.default_rng(seed)
    cases = scan_cases(dtype) if cases is None else cases
    block_threads = int(np.prod(block))
    valid = valid_items_per_block(rng, ipt)
    nblocks = len(valid)
    n = nblocks * block_threads * ipt
    src = random_values(rng, dtype, n)
    src2 = product_values(rng, dtype, n)
    out = np.full((len(cases), n), poison(dtype))
    aggs = np.full((len(cases), nblocks * block_threads), poison(dtype))
    kernel = scan_kernel(dtype, cases)
    inits = np.array(list(init_values(dtype).values()), dtype=dtype)
    kernel[nblocks, block](src, src2, out, aggs, valid, inits, ipt)
    cuda.synchronize()
    inits = init_values(dtype)
    state_type = np.float64 if np.dtype(dtype).kind == "f" else np.int64
    for b in range(nblocks):
        state = [state_type(STATE_START)]  # thread 0's state, carried from call to call
        threads = slice(b * block_threads, (b + 1) * block_threads)
        for row, case in enumerate(cases):
            data = src2 if case.value == "items2" else src
            slots = data[b * block_threads * ipt:(b + 1) * block_threads * ipt].reshape(block_threads, ipt)
            if case.value == "scalar":
                slots = slots[:, :1]
            vi = int(valid[b]) if case.valid else None
            expected, defined, aggregate = _expected(case, slots, dtype, vi, inits, state)
            rows = out[row, b * block_threads * ipt:(b + 1) * block_threads * ipt].reshape(block_threads, ipt)
            got = rows[:, :1] if case.value == "scalar" else rows
            label = f"row {row}: {case} {dtype} ipt={ipt} block#{b} valid={valid[b]}"
            check_scan(label, got, expected.reshape(got.shape), defined.reshape(got.shape), slots, case, dtype)
            if case.aggregate:
                check_scan(label + " (aggregate)", aggs[row, threads], aggregate,
                           np.ones(block_threads, dtype=bool), slots, case, dtype)


# ----------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------

@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("ipt", ITEMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_scan_matrix(dtype, ipt):
    run_scan(dtype, ipt)


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("block,dtype,ipt", [((10, 5, 1), "int32", 4), ((16, 4, 2), "float64", 7)],
                         ids=["50-threads", "3d"])
def test_block_shapes(block, dtype, ipt):
    """Block scans with a thread count that is not a multiple of 32 (warp_scans falls back), and 3-D."""
    run_scan(dtype, ipt, block=block, cases=[c for c in scan_cases(dtype) if c.group == "block"], seed=3)


TEMP_STORAGE_SOURCE = """
@cuda.jit
def kernel(src, sums, scans, n_tiles):
    block = coop.this_block()
    tid = cuda.threadIdx.x
    shared = coop.TempStorage()
    exclusive = coop.TempStorage(sharing="exclusive")
    manual = coop.TempStorage(auto_sync=False)
    items = coop.ThreadData(4, dtype=np.int32)
    for t in range(n_tiles):
        tile = cuda.blockIdx.x * n_tiles + t
        base = (tile * cuda.blockDim.x + tid) * 4
        for i in range(4):
            items[i] = src[base + i]
        # Two collectives on one region (each ends with a barrier), then one slice per call,
        # then a region whose barriers are ours.
        total = coop.sum(block, items, temp_storage=shared, broadcast=True)
        inc = coop.inclusive_sum(block, items, temp_storage=shared)
        top = coop.reduce(block, items, binary_op="max", temp_storage=exclusive)
        exc = coop.exclusive_sum(block, items, temp_storage=exclusive, algorithm="warp_scans")
        low = coop.reduce(block, items, binary_op="min", temp_storage=manual, algorithm="raking")
        cuda.syncthreads()
        run = coop.inclusive_scan(block, items, scan_op="max", temp_storage=manual)
        cuda.syncthreads()
        row = tile * cuda.blockDim.x + tid
        sums[row, 0] = total
        sums[row, 1] = top
        sums[row, 2] = low
        for i in range(4):
            scans[0, base + i] = inc[i]
            scans[1, base + i] = exc[i]
            scans[2, base + i] = run[i]
"""


def temp_storage_kernel():
    return module_from_source(TEMP_STORAGE_SOURCE).kernel


@pytest.mark.gpu
def test_temp_storage_shared_exclusive_and_manual_sync_in_a_loop():
    """Reductions and scans reuse explicit storage across loop iterations correctly."""
    from ..compiler import cuda

    rng = np.random.default_rng(11)
    blocks, tiles = 3, 4
    n = blocks * tiles * BLOCK * 4
    src = rng.integers(-1000, 1000, size=n).astype(np.int32)
    sums = np.full((blocks * tiles * BLOCK, 3), -7, dtype=np.int32)
    scans = np.full((3, n), -7, dtype=np.int32)
    temp_storage_kernel()[blocks, BLOCK](src, sums, scans, tiles)
    cuda.synchronize()
    for tile in range(blocks * tiles):
        slots = src[tile * BLOCK * 4:(tile + 1) * BLOCK * 4].reshape(BLOCK, 4)
        rows = sums[tile * BLOCK:(tile + 1) * BLOCK]
        assert (rows[:, 0] == slots.sum(dtype=np.int32)).all(), tile
        assert rows[0, 1] == slots.max() and rows[0, 2] == slots.min(), tile
        flat = slots.reshape(-1)
        sl = slice(tile * BLOCK * 4, (tile + 1) * BLOCK * 4)
        np.testing.assert_array_equal(scans[0, sl], np.cumsum(flat, dtype=np.int32))
        np.testing.assert_array_equal(scans[1, sl], np.concatenate([[0], np.cumsum(flat, dtype=np.int32)[:-1]]))
        np.testing.assert_array_equal(scans[2, sl], np.maximum.accumulate(flat))


def load_example():
    spec = importlib.util.spec_from_file_location("coop_example_running_scan", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 511, 512, 1_000_003])
def test_running_scan_example(n):
    """The tile-loop example: one block scans a whole array through a stateful prefix callback."""
    example = load_example()
    values, inclusive, exclusive = example.main(n=n, seed=n)
    np.testing.assert_array_equal(inclusive, ref.running_scan(values, "inclusive"))
    np.testing.assert_array_equal(exclusive, ref.running_scan(values, "exclusive"))


FUNCTOR_SOURCE = """
from tests.compiler import qualified as numba_coop


class RunningTotal:
    # NVIDIA's class form: never instantiated; self is the one-item state array.
    def __call__(self, block_aggregate):
        previous = self[0]
        self[0] += block_aggregate
        return np.int32(previous)


RUNNING = numba_coop.StatefulFunction(RunningTotal, np.int64)


@cuda.jit
def kernel(values, out, n):
    block = coop.this_block()
    items = coop.ThreadData(4)
    state = cuda.local.array(1, np.int64)
    state[0] = 7
    for start in range(0, n, cuda.blockDim.x * 4):
        valid = min(n - start, cuda.blockDim.x * 4)
        coop.load(block, values, items, offset=start, valid_items=valid, oob_default=0)
        scanned = coop.exclusive_sum(block, items, state, prefix_op=RUNNING)
        coop.store(block, out, scanned, offset=start, valid_items=valid)
"""


@pytest.mark.gpu
@pytest.mark.parametrize("n", [5, 512, 3001])
def test_functor_class_prefix_with_a_wider_state(n):
    """A class-form StatefulFunction (int64 state, int32 scan) carries a running total over tiles."""
    from ..compiler import cuda

    rng = np.random.default_rng(n)
    values = rng.integers(-50, 50, n, dtype=np.int32)
    out = cuda.to_device(np.full(n, -99, dtype=np.int32))
    module_from_source(FUNCTOR_SOURCE).kernel[1, 128](cuda.to_device(values), out, n)
    expected = 7 + np.concatenate([[0], np.cumsum(values.astype(np.int64))[:-1]])
    np.testing.assert_array_equal(out.copy_to_host(), expected.astype(np.int32))


@pytest.mark.unit
def test_reference_model():
    slots = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], dtype=np.int32)
    out, ok, agg = ref.scan(slots, "sum", mode="inclusive")
    assert out.reshape(-1).tolist() == np.cumsum(np.arange(1, 9)).tolist() and ok.all()
    assert (agg == 36).all()
    out, ok, agg = ref.scan(slots, "max", mode="exclusive", initial_value=-1, group_width=2)
    assert out.reshape(-1).tolist() == [-1, 1, 2, 3, -1, 5, 6, 7] and (agg == [4, 4, 8, 8]).all()
    out, ok, agg = ref.scan(slots, "sum", mode="inclusive", group_width=2, valid_items=3)
    assert ok.reshape(-1).tolist() == [True, True, True, False] * 2 and (agg == [6, 6, 18, 18]).all()
    out, ok, _ = ref.scan(slots, "sum", mode="exclusive", prefix=lambda a: 100)
    assert out.reshape(-1)[:3].tolist() == [100, 101, 103]
    out, ok, _ = ref.scan(slots[:, 0], user_op, mode="inclusive")
    assert out.tolist() == [1, 5, 11, 19]
    assert ref.running_scan(np.array([1, 2, 3], dtype=np.int32), "exclusive").tolist() == [0, 1, 3]
