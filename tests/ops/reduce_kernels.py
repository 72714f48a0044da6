"""What tests/ops/test_reduce.py shares with tests/ops/scan_kernels.py,
tests/ops/test_reduce_compile.py, tests/ops/test_scan.py: kept here because test modules do
not import each other."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernelgen import group_expr, module_from_source

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
ITEMS = [1, 4, 7]
BATCHED_DTYPES = ["int32", "float64", "uint8", "int64", "float32"]
BATCHES = [1, 7, 40, 64]
LOGICAL_WIDTHS = [1, 2, 4, 8, 16]

BLOCK = 128


def user_op(a, b):
    """The user operator of the tests: associative and commutative, unlike any built-in."""
    return a + b + 1

USER_OP_SOURCE = """
@cuda.jit(device=True)
def user_op(a, b):
    return a + b + 1
"""


@dataclass(frozen=True)
class Case:
    group: object  # "block", or a warp width (32 = hardware warp)
    call: str  # "sum" or "reduce"
    op: str  # spelling in the kernel: '"max"', 'np.maximum', 'user_op', ...
    ref_op: object  # canonical name or Python function for the reference
    value: str = "items"  # "items", "scalar" or "items2" (the product data)
    algorithm: str | None = None
    valid: bool = False
    broadcast: bool | None = False  # None: omitted, which means True
    guard: bool = True  # a partial logical warp: call under `if group.is_member():`

    def source(self, kernel_group: str) -> str:
        kw = []
        if self.call == "reduce" and self.op:  # no op: binary_op defaults to sum
            kw.append(f"binary_op={self.op}")
        if self.algorithm:
            kw.append(f'algorithm="{self.algorithm}"')
        if self.valid:
            kw.append("valid_items=vi")
        if self.broadcast is not None:
            kw.append(f"broadcast={self.broadcast}")
        return f"coop.{self.call}({kernel_group}, {self.value}, {', '.join(kw)})"

    @property
    def width(self):
        return None if self.group == "block" else self.group

    @property
    def partial(self) -> bool:
        return self.group != "block" and 32 % self.group != 0

    def line(self, row: int) -> str:
        """The kernel statement that stores this case's result in row ``row``."""
        group = _group_source(self.group)
        store = f"out[{row}, gtid] = {self.source(group)}\n"
        if self.partial and self.guard:
            return f"    if {group}.is_member():\n        {store}"
        return f"    {store}"


def reduce_cases(dtype: str):
    integer = np.dtype(dtype).kind in "iu"
    cases = [
        Case("block", "sum", "", "sum"),
        Case("block", "sum", "", "sum", algorithm="raking", valid=True, broadcast=True),
        Case("block", "sum", "", "sum", value="scalar", algorithm="raking_commutative_only", valid=True),
        Case("block", "reduce", '"max"', "max", algorithm="raking_commutative_only", broadcast=True),
        Case("block", "reduce", '"minimum"', "min", valid=True),
        Case("block", "reduce", '"*"', "prod", value="items2", algorithm="raking"),
        Case("block", "reduce", "user_op", user_op, algorithm="raking", valid=True, broadcast=True),
        Case("block", "reduce", "user_op", user_op, value="scalar"),
        Case("block", "reduce", "np.maximum", "max", valid=True),
        Case(32, "sum", "", "sum"),
        Case(32, "sum", "", "sum", value="scalar", valid=True, broadcast=True),
        Case(32, "reduce", '"max"', "max", valid=True),
        Case(32, "reduce", "operator.mul", "prod", value="items2", broadcast=True),
        Case(32, "reduce", "user_op", user_op, valid=True, broadcast=True),
    ]
    cases += [  # the defaults: binary_op sum, result broadcast to every member
        Case("block", "reduce", "", "sum", broadcast=None),
        Case(32, "reduce", "", "sum", value="scalar", broadcast=None),
        Case(8, "sum", "", "sum", valid=True, broadcast=None),
    ]
    if integer:
        cases += [
            Case("block", "reduce", '"&"', "bit_and", algorithm="warp_reductions", valid=True),
            Case("block", "reduce", '"bit_or"', "bit_or", algorithm="raking", broadcast=True),
            Case("block", "reduce", "operator.xor", "bit_xor", algorithm="raking_commutative_only"),
            Case(32, "reduce", "np.bitwise_or", "bit_or", valid=True, broadcast=True),
        ]
    for i, w in enumerate(LOGICAL_WIDTHS):
        cases.append(Case(w, "sum", "", "sum", valid=True, broadcast=True))
        if i % 2:
            cases.append(Case(w, "reduce", '"min"', "min", value="scalar", valid=True))
        else:
            cases.append(Case(w, "reduce", "user_op", user_op, broadcast=bool(i % 4)))
    cases += [  # partial logical warps: lanes 0..w-1 of each warp
        Case(17, "sum", "", "sum", valid=True, broadcast=True),
        Case(17, "reduce", "np.maximum", "max", value="scalar", broadcast=None),
        Case(24, "reduce", "user_op", user_op, valid=True),
        Case(24, "reduce", '"*"', "prod", value="items2", broadcast=True),
        Case(24, "sum", "", "sum", value="scalar", broadcast=True, guard=False),  # non-members call too
        Case(31, "reduce", '"min"', "min", value="scalar", valid=True, broadcast=True),
        Case(31, "sum", "", "sum", broadcast=None),
    ]
    if integer:
        cases.append(Case(31, "reduce", '"^"', "bit_xor", valid=True))
    return cases


# The opening of the reduce and scan matrix kernels: the thread's linear number (CUB's
# order, so 1-D, 2-D and 3-D blocks hold the same data), the block's valid_items, and the
# operands the cases name: ``items`` and ``items2`` (from src and src2) and ``scalar``.
OPERANDS_FROM_SOURCES = '''\
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
'''


def _group_source(group) -> str:
    return group_expr("block", None) if group == "block" else group_expr("warp", group)


def reduce_kernel(dtype: str, cases=None):
    """One kernel computing every case; row ``r`` of ``out`` holds case ``r``'s per-thread results."""
    cases = reduce_cases(dtype) if cases is None else cases
    lines = [case.line(row) for row, case in enumerate(cases)]
    source = f"""
import operator
DT = np.{dtype}
{USER_OP_SOURCE}
@cuda.jit
def kernel(src, src2, out, valid, items_per_thread):
{OPERANDS_FROM_SOURCES}""" + "".join(lines)
    return module_from_source(source).kernel


def batched_cases():
    cases = []
    for w in [32, 16, 8, 4, 2, 1]:
        for layout in ("striped", "blocked"):
            cases.append((w, layout, '"+"' if w % 4 else None, "sum"))  # None: the default (sum)
            cases.append((w, layout, "user_op", user_op))
    return cases


def batched_kernel(dtype: str, batches: int):
    """Every (width, layout, operator) of reduce_batched; results at ``out[row, gtid * S + s]``."""
    lines = []
    for row, (w, layout, op, _ref) in enumerate(batched_cases()):
        per_lane = -(-batches // w)
        op_kw = "" if op is None else f", binary_op={op}"
        lines.append(f"""    r = coop.reduce_batched({group_expr('warp', w)}, items{op_kw}, output_layout="{layout}")
    for s in range({per_lane}):
        out[{row}, gtid * {batches} + s] = r[s]
""")
    source = f"""
DT = np.{dtype}
{USER_OP_SOURCE}
@cuda.jit
def kernel(src, out):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    items = coop.ThreadData({batches}, dtype=DT)
    for i in range({batches}):
        items[i] = src[gtid * {batches} + i]
""" + "".join(lines)
    return module_from_source(source).kernel


def random_values(rng, dtype, n):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.standard_normal(n) * 10).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, 100, size=n).astype(dt)
    return rng.integers(-50, 51, size=n).astype(dt)


def product_values(rng, dtype, n):
    """Values whose products stay exact: +-1 (signed), 1 and 3 (unsigned wrap exactly), 2**k floats."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        # Powers of two with a mean exponent of 0: every partial product is exact and in range.
        return rng.choice(np.array([1, 1, 1, 1, -1, -1, 2, 0.5], dtype=dt), size=n)
    if dt.kind == "u":
        return rng.choice(np.array([1, 3, 1, 1], dtype=dt), size=n)
    return rng.choice(np.array([1, -1], dtype=dt), size=n)


def poison(dtype):
    dt = np.dtype(dtype)
    return dt.type(-12345.5) if dt.kind == "f" else dt.type(np.iinfo(dt).max - 3)


def sum_tolerance(values, dtype):
    """A bound on float reordering error: n * eps * sum(|x|) (the order of a sum is CUB's)."""
    dt = np.dtype(dtype)
    if dt.kind != "f":
        return 0.0
    values = np.abs(np.asarray(values, dtype=np.float64))
    return float((len(values) + 2) * np.finfo(dt).eps * values.sum() * 2 + np.finfo(dt).tiny)


def block_only_cases(dtype):
    return [c for c in reduce_cases(dtype) if c.group == "block"]

PARTIAL_RUN_AHEAD_SOURCE = """
@cuda.jit
def kernel(src, sums, moved):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    group = coop.this_warp().group_by(WIDTH, exhaustive=False)
    items = coop.ThreadData(4, dtype=np.int32)
    for i in range(4):
        items[i] = src[gtid * 4 + i]
    for it in range(3):
        if group.is_member():
            sums[it, gtid] = coop.sum(group, items)
        # Lanes WIDTH..31 skipped the sum and reach these warp exchanges first: their
        # scratch must not overlap the sum's, which lanes 0..WIDTH-1 may still be using.
        striped = coop.exchange(coop.this_warp(), items, mode="blocked_to_striped")
        items = coop.exchange(coop.this_warp(), striped, mode="striped_to_blocked")
    for i in range(4):
        moved[gtid * 4 + i] = items[i]
"""
