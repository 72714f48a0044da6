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

import numpy as np
import pytest

from cuda.coop.reference import reduce as ref

from ..kernelgen import module_from_source
from .reduce_kernels import BATCHED_DTYPES, BATCHES, BLOCK, DTYPES, ITEMS, PARTIAL_RUN_AHEAD_SOURCE, batched_cases, batched_kernel, block_only_cases, poison, product_values, random_values, reduce_cases, reduce_kernel, sum_tolerance, user_op

PARTIAL_WIDTHS = [17, 24, 31]  # group_by(w, exhaustive=False): one logical warp of lanes 0..w-1 per warp


# ----------------------------------------------------------------------------------------
# Data and checks
# ----------------------------------------------------------------------------------------


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
