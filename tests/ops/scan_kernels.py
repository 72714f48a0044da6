"""What tests/ops/test_scan.py shares with tests/ops/test_scan_compile.py: kept here because
test modules do not import each other."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..kernelgen import group_expr, module_from_source, scan_call

# BLOCK, DTYPES and ITEMS are the scan suite's too (test_scan_compile reads them from here).
from .reduce_kernels import (  # noqa: F401
    BLOCK, DTYPES, ITEMS, LOGICAL_WIDTHS, OPERANDS_FROM_SOURCES, USER_OP_SOURCE, user_op,
)

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
{OPERANDS_FROM_SOURCES}    agg = coop.ThreadData(1, dtype=DT)
    state = coop.ThreadData(1, dtype={state_dtype})
    state[0] = {STATE_START}
""" + "".join(lines)
    return module_from_source(source).kernel

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


def load_example():
    spec = importlib.util.spec_from_file_location("coop_example_running_scan", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

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
