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


import numpy as np
import pytest

from cuda.coop.reference import scan as ref

from ..kernelgen import module_from_source
from .reduce_kernels import (BLOCK, DTYPES, ITEMS, poison, product_values,
                          random_values, sum_tolerance, user_op)
from .scan_kernels import FUNCTOR_SOURCE, STATE_START, TEMP_STORAGE_SOURCE, init_values, load_example, scan_cases, scan_kernel


def add_three(aggregate):
    return aggregate + 3


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


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 511, 512, 1_000_003])
def test_running_scan_example(n):
    """The tile-loop example: one block scans a whole array through a stateful prefix callback."""
    example = load_example()
    values, inclusive, exclusive = example.main(n=n, seed=n)
    np.testing.assert_array_equal(inclusive, ref.running_scan(values, "inclusive"))
    np.testing.assert_array_equal(exclusive, ref.running_scan(values, "exclusive"))


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
