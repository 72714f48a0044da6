"""Adjacent difference and discontinuity: NumPy reference checks (unit) and GPU runs.

GPU matrix: one kernel per (dtype, items_per_thread) runs every direction/mode,
with and without tile neighbour items, ``valid_items`` and a user device
function, over blocks whose ``valid_items`` are full, oversized, empty,
negative, one, and random partial; the tile neighbours are run-time values per
block.  Values come from a small set so that equal neighbours (runs) are common.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.reference import neighbors as ref

from .neighbors_kernels import DIFF_CASES, DTYPES, FLAG_CASES, ITEMS, neighbors_kernel


NUMPY_CALLBACKS = {"twice": lambda a, b: a - b - b, "greater": lambda a, b: a > b,
                   "<=": lambda a, b: a <= b}  # the last one is a built-in operator string


def flag_rows():
    return sum(2 if c[0] == "heads_and_tails" else 1 for c in FLAG_CASES)


def _values(rng, dtype, n):
    """Few distinct values (long runs) plus some extreme ones (wrapping differences)."""
    dt = np.dtype(dtype)
    v = rng.integers(0, 4, size=n).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        extreme = rng.random(n) < 0.1
        v[extreme] = rng.choice([info.min, info.max], size=int(extreme.sum())).astype(dt)
    else:
        v = (v * 1.5 - 2).astype(dt)
    return v


def run_neighbors(dtype, ipt, block=(128, 1, 1), seed=0):
    from ..compiler import cuda

    rng = np.random.default_rng(seed)
    block_threads = int(np.prod(block))
    tile = block_threads * ipt
    valid = np.array([10**12, tile, 0, -5, 1, int(rng.integers(1, tile + 1)), max(tile - 1, 0)], dtype=np.int64)
    nblocks = len(valid)
    n = nblocks * tile
    src = _values(rng, dtype, n)
    neighbours = _values(rng, dtype, 2 * nblocks)
    diffs = np.full((len(DIFF_CASES) + 1, n), 5, dtype=dtype)
    flags = np.full((flag_rows(), n), 7, dtype=np.int32)
    kernel = neighbors_kernel(dtype)
    kernel[nblocks, block](src, neighbours, valid, diffs, flags, ipt)
    cuda.synchronize()
    check = _checker(dtype)
    for b in range(nblocks):
        sl = slice(b * tile, (b + 1) * tile)
        slots = src[sl].reshape(block_threads, ipt)
        pred, succ, vi = neighbours[2 * b], neighbours[2 * b + 1], int(valid[b])
        np.testing.assert_array_equal(diffs[len(DIFF_CASES), sl], src[sl], err_msg="input changed")
        for row, (direction, has_vi, has_nb, op) in enumerate(DIFF_CASES):
            expected = ref.adjacent_difference(
                slots, direction, valid_items=vi if has_vi else None,
                tile_predecessor_item=pred if has_nb and direction == "left" else None,
                tile_successor_item=succ if has_nb and direction == "right" else None,
                difference_op=NUMPY_CALLBACKS.get(op))
            check(diffs[row, sl], expected.ravel(),
                  f"adjacent_difference {DIFF_CASES[row]} {dtype} ipt={ipt} block#{b} valid={vi}")
        row = 0
        for case in FLAG_CASES:
            mode, has_vi, has_pred, has_succ, op = case
            expected = ref.discontinuity(
                slots, mode, valid_items=vi if has_vi else None,
                tile_predecessor_item=pred if has_pred else None,
                tile_successor_item=succ if has_succ else None, flag_op=NUMPY_CALLBACKS.get(op))
            expected = expected if isinstance(expected, tuple) else (expected,)
            for e in expected:
                np.testing.assert_array_equal(flags[row, sl], e.ravel(),
                                              err_msg=f"discontinuity {case} {dtype} ipt={ipt} block#{b} valid={vi}")
                row += 1


def _checker(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        rtol = 1e-6 if dt.itemsize == 4 else 1e-12
        return lambda got, exp, msg: np.testing.assert_allclose(got, exp, rtol=rtol, atol=0, err_msg=msg)
    return lambda got, exp, msg: np.testing.assert_array_equal(got, exp, err_msg=msg)


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("ipt", ITEMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_neighbors_matrix(dtype, ipt):
    run_neighbors(dtype, ipt)


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("block", [(64, 2, 1), (8, 4, 4), (10, 5, 1)], ids=["2d", "3d", "2d-50"])
def test_multidimensional_blocks(block):
    run_neighbors("int32", 3, block=block, seed=1)


# ----------------------------------------------------------------------------------------
# The reference model itself
# ----------------------------------------------------------------------------------------

@pytest.mark.unit
def test_reference_adjacent_difference_is_np_diff_inside_the_tile():
    x = np.array([[3, 5, 9], [1, 1, 4]], dtype=np.int16)
    left = ref.adjacent_difference(x, "left").ravel()
    assert left[0] == 3 and (left[1:] == np.diff(x.ravel())).all()
    right = ref.adjacent_difference(x, "right").ravel()
    assert right[-1] == 4 and (right[:-1] == -np.diff(x.ravel())).all()
    assert ref.adjacent_difference(x, "left", tile_predecessor_item=1).ravel()[0] == 2
    assert ref.adjacent_difference(x, "right", tile_successor_item=10).ravel()[-1] == -6


@pytest.mark.unit
def test_reference_partial_tiles():
    x = np.arange(1, 9, dtype=np.int32).reshape(4, 2) ** 2  # 1 4 9 16 25 36 49 64
    assert ref.adjacent_difference(x, "left", valid_items=3).ravel().tolist() == [1, 3, 5, 16, 25, 36, 49, 64]
    assert ref.adjacent_difference(x, "right", valid_items=3, tile_successor_item=10).ravel().tolist() == \
        [-3, -5, -1, 16, 25, 36, 49, 64]
    assert ref.adjacent_difference(x, "left", valid_items=0, tile_predecessor_item=0).ravel().tolist() == \
        x.ravel().tolist()
    h, t = ref.discontinuity(np.array([[1, 1], [2, 2], [2, 3]]), "heads_and_tails", valid_items=4)
    assert h.ravel().tolist() == [1, 0, 1, 0, 0, 0] and t.ravel().tolist() == [0, 1, 0, 1, 0, 0]


@pytest.mark.unit
def test_reference_integer_differences_wrap():
    x = np.array([[0, 255]], dtype=np.uint8)
    assert ref.adjacent_difference(x, "right").ravel().tolist() == [1, 255]
    x = np.array([[-128, 127]], dtype=np.int8)
    assert ref.adjacent_difference(x, "left").ravel().tolist() == [-128, -1]


@pytest.mark.unit
def test_reference_flag_op_argument_order():
    x = np.array([[5, 3, 3, 8]])
    greater = NUMPY_CALLBACKS["greater"]
    assert ref.discontinuity(x, "heads", flag_op=greater).ravel().tolist() == [1, 1, 0, 0]  # prev > cur
    assert ref.discontinuity(x, "tails", flag_op=greater).ravel().tolist() == [1, 0, 0, 1]  # cur > next
