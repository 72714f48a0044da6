"""Reduce / Sum / reduce_batched on a device, checked against the NumPy reference.

One generated kernel per (dtype, items_per_thread) runs every case: block
(three algorithms), warp, logical warps 1..16 and partial logical warps of 17,
24 and 31 lanes (``group_by(w, exhaustive=False)``: lanes ``0 .. w-1`` of each
warp, called under ``if group.is_member():``, whose non-member outputs must stay
poisoned; one case calls unguarded); scalar and ThreadData values;
sum, built-in operators, Python operators, NumPy ufuncs and a user device
function; runtime ``valid_items`` (one value per block: full, 1, small and large
partial tiles, exactly a tile) and ``broadcast``.  Outputs are poisoned first;
only the members the reference marks as defined are compared (group rank 0, or
every member with ``broadcast=True``).

Kernels compiled per toolkit: 30 (reduce) + 20 (reduce_batched) + 2 (block shapes).
``tests/ops/test_reduce_compile.py`` compiles a sample of the same kernels on CPU.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np
import pytest

from cuda.coop.reference import reduce as ref

from ..kernelgen import group_expr, module_from_source

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
ITEMS = [1, 4, 7]
BATCHED_DTYPES = ["int32", "float64", "uint8", "int64", "float32"]
BATCHES = [1, 7, 40, 64]
LOGICAL_WIDTHS = [1, 2, 4, 8, 16]
PARTIAL_WIDTHS = [17, 24, 31]  # group_by(w, exhaustive=False): one logical warp of lanes 0..w-1 per warp
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
""" + "".join(lines)
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


# ----------------------------------------------------------------------------------------
# Data and checks
# ----------------------------------------------------------------------------------------

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


def check_reduce(label, got, expected, defined, tile_values, ref_op, dtype):
    got, expected = got[defined], expected[defined]
    if np.dtype(dtype).kind == "f" and ref_op not in ("max", "min", "prod"):
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=0,
                                   atol=sum_tolerance(tile_values, dtype), err_msg=label)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=label)


def valid_items_per_block(rng, ipt, block_threads):
    """Full (oversized), 1, a partial tile of the smallest logical warp, a partial block tile, a whole
    tile, and a partial tile of a 17..31-lane logical warp."""
    return np.array([10**9, 1, int(rng.integers(1, max(2, ipt) + 1)),
                     int(rng.integers(1, block_threads * ipt)), block_threads * ipt,
                     int(rng.integers(ipt + 1, 17 * ipt + 1))], dtype=np.int64)


def run_reduce(dtype, ipt, *, block=(BLOCK, 1, 1), cases=None, seed=0):
    from ..compiler import cuda

    rng = np.random.default_rng(seed)
    cases = reduce_cases(dtype) if cases is None else cases
    block_threads = int(np.prod(block))
    valid = valid_items_per_block(rng, ipt, block_threads)
    nblocks = len(valid)
    n = nblocks * block_threads * ipt
    src = random_values(rng, dtype, n)
    src2 = product_values(rng, dtype, n)
    out = np.full((len(cases), nblocks * block_threads), poison(dtype))
    kernel = reduce_kernel(dtype, cases)
    kernel[nblocks, block](src, src2, out, valid, ipt)
    cuda.synchronize()
    for row, case in enumerate(cases):
        for b in range(nblocks):
            data = src2 if case.value == "items2" else src
            slots = data[b * block_threads * ipt:(b + 1) * block_threads * ipt].reshape(block_threads, ipt)
            if case.value == "scalar":
                slots = slots[:, :1]
            vi = int(valid[b]) if case.valid else None
            expected, defined = ref.reduce(slots, case.ref_op, group_width=case.width, valid_items=vi,
                                           broadcast=case.broadcast is not False)
            got = out[row, b * block_threads:(b + 1) * block_threads]
            label = f"row {row}: {case} {dtype} ipt={ipt} block#{b} valid={valid[b]}"
            check_reduce(label, got, expected, defined, slots, case.ref_op, dtype)
            if case.partial and case.guard:
                # Lanes w..31 skipped the call under `if group.is_member():`: nothing written.
                lanes = np.arange(block_threads) % 32
                np.testing.assert_array_equal(got[lanes >= case.group], poison(dtype), err_msg=label)


def run_batched(dtype, batches, seed=0):
    from ..compiler import cuda

    rng = np.random.default_rng(seed)
    nblocks = 2
    n = nblocks * BLOCK * batches
    src = random_values(rng, dtype, n)
    cases = batched_cases()
    out = np.full((len(cases), n), poison(dtype))
    batched_kernel(dtype, batches)[nblocks, BLOCK](src, out)
    cuda.synchronize()
    slots = src.reshape(nblocks * BLOCK, batches)
    for row, (w, layout, _op, ref_op) in enumerate(cases):
        per_lane = -(-batches // w)
        expected, defined = ref.reduce_batched(slots, ref_op, group_width=w, output_layout=layout)
        got = out[row].reshape(nblocks * BLOCK, batches)[:, :per_lane]
        label = f"reduce_batched w={w} {layout} {ref_op} {dtype} B={batches}"
        check_reduce(label, got, expected, defined, slots[:w], ref_op, dtype)


# ----------------------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------------------

@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("ipt", ITEMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_matrix(dtype, ipt):
    run_reduce(dtype, ipt)


@pytest.mark.gpu
@pytest.mark.parametrize("batches", BATCHES)
@pytest.mark.parametrize("dtype", BATCHED_DTYPES)
def test_reduce_batched_matrix(dtype, batches):
    run_batched(dtype, batches)


def block_only_cases(dtype):
    return [c for c in reduce_cases(dtype) if c.group == "block"]


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("block,dtype,ipt", [((10, 5, 1), "int32", 4), ((16, 4, 2), "float64", 7)],
                         ids=["50-threads", "3d"])
def test_block_shapes(block, dtype, ipt):
    """Block reductions with a thread count that is not a multiple of 32, and a 3-D block."""
    run_reduce(dtype, ipt, block=block, cases=block_only_cases(dtype), seed=3)


PLAIN_OPERATOR_SOURCE = """
def larger(a, b):  # undecorated, as NVIDIA's examples write operators
    return a if a > b else b


@cuda.jit
def kernel(src, block_max, warp_scan):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    m = coop.reduce(coop.this_block(), src[i], binary_op=larger)
    warp_scan[i] = coop.inclusive_scan(coop.this_warp(), src[i], scan_op=larger)
    if cuda.threadIdx.x == 0:
        block_max[cuda.blockIdx.x] = m
"""


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


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_plain_python_operators(dtype):
    from ..compiler import cuda

    blocks = 3
    rng = np.random.default_rng(11)
    src = rng.integers(-1000, 1000, blocks * BLOCK).astype(dtype)
    block_max = cuda.to_device(np.full(blocks, poison(dtype), dtype=dtype))
    warp_scan = cuda.to_device(np.full(blocks * BLOCK, poison(dtype), dtype=dtype))
    module_from_source(PLAIN_OPERATOR_SOURCE).kernel[blocks, BLOCK](cuda.to_device(src), block_max, warp_scan)
    np.testing.assert_array_equal(block_max.copy_to_host(), src.reshape(blocks, BLOCK).max(axis=1))
    np.testing.assert_array_equal(warp_scan.copy_to_host(),
                                  np.maximum.accumulate(src.reshape(-1, 32), axis=1).reshape(-1))


@pytest.mark.gpu
@pytest.mark.parametrize("width", PARTIAL_WIDTHS)
def test_partial_warp_lanes_that_skip_the_call_may_run_ahead(width):
    """A partial logical warp's scratch is its own: lanes width..31, which skip the call, run
    into the next warp-wide call while the members still reduce, and neither call sees the
    other's data (three rounds, three warps per block, two blocks)."""
    from ..compiler import cuda

    threads, blocks = 96, 2
    n = threads * blocks
    rng = np.random.default_rng(width)
    src = rng.integers(-1000, 1000, size=n * 4).astype(np.int32)
    sums = np.full((3, n), poison("int32"), np.int32)
    moved = np.full(n * 4, poison("int32"), np.int32)
    kernel = module_from_source(PARTIAL_RUN_AHEAD_SOURCE.replace("WIDTH", str(width))).kernel
    kernel[blocks, threads](src, sums, moved)
    cuda.synchronize()
    np.testing.assert_array_equal(moved, src)
    per_thread = src.reshape(n, 4)
    lanes = np.arange(n) % 32
    for it in range(3):
        for w in range(0, n, 32):
            expected = per_thread[w:w + width].sum(dtype=np.int32)
            np.testing.assert_array_equal(sums[it, w:w + width], expected, err_msg=f"round {it} warp {w // 32}")
        np.testing.assert_array_equal(sums[it, lanes >= width], poison("int32"))


@pytest.mark.unit
def test_reference_model():
    slots = np.arange(12, dtype=np.int32).reshape(4, 3)
    values, defined = ref.reduce(slots, "sum", group_width=2)
    assert defined.tolist() == [True, False, True, False]
    assert values[0] == 0 + 1 + 2 + 3 + 4 + 5 and values[2] == 6 + 7 + 8 + 9 + 10 + 11
    values, defined = ref.reduce(slots, "max", valid_items=4, broadcast=True)
    assert defined.all() and (values == 3).all()
    out, ok = ref.reduce_batched(np.arange(8, dtype=np.int32).reshape(2, 4), "sum", group_width=2,
                                 output_layout="blocked")
    assert out.tolist() == [[4, 6], [8, 10]] and ok.all()
    out, ok = ref.reduce_batched(np.arange(8, dtype=np.int32).reshape(2, 4), "sum", group_width=2)
    assert out.tolist() == [[4, 8], [6, 10]]
    assert ref.fold(np.array([100, 100], dtype=np.int8), "sum", np.int8) == np.int8(-56)
    assert ref.fold(np.array([1, 2, 3], dtype=np.int32), user_op, np.int32) == 8
    assert ref.combine(operator.add, 1, 2, np.int32) == 3
    # A partial logical warp of 20 lanes: lanes 0..19 of each warp, lanes 20..31 in no group.
    slots = np.arange(64, dtype=np.int64)[:, None]
    values, defined = ref.reduce(slots, "sum", group_width=20, broadcast=True)
    assert defined.tolist() == ([True] * 20 + [False] * 12) * 2
    assert values[0] == sum(range(20)) and values[32] == sum(range(32, 52))
    values, defined = ref.reduce(slots, "max", group_width=20, valid_items=3)
    assert np.flatnonzero(defined).tolist() == [0, 32] and values[32] == 34
