"""Shuffle: NumPy reference checks (unit) and NumPy-checked GPU runs.

GPU matrix: one kernel per (dtype, items_per_thread) runs the tile modes with
CUB's unit shift, literal and run-time distances (per block and per thread,
negative, past the tile, and the int64 extremes) and the scalar modes likewise.
Every result slot is defined: slots without a source keep their own value.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.reference import shuffle as ref

from ..values import full_range
from .shuffle_kernels import DTYPES, ITEMS, SCALAR_CASES, TILE_CASES, shuffle_kernel


INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


def _distance(case_dist, block_d, thread_d):
    if case_dist in (None, "ts"):
        return 1
    if case_dist == "d":
        return block_d
    if case_dist == "td":
        return thread_d
    return int(case_dist)


def run_shuffle(dtype, ipt, block=(128, 1, 1), seed=0):
    from ..compiler import cuda

    rng = np.random.default_rng(seed)
    bt = int(np.prod(block))
    tile = bt * ipt
    dist = np.array([0, 1, 5, -3, tile - 1, tile, tile + 7, 2**40, INT64_MIN, INT64_MAX], dtype=np.int64)
    nblocks = len(dist)
    n = nblocks * tile
    src = full_range(rng, dtype, n)
    sv = full_range(rng, dtype, nblocks * bt)
    tdist = rng.integers(-bt - 3, bt + 3, size=nblocks * bt).astype(np.int64)
    special = rng.choice(nblocks * bt, size=nblocks * 4, replace=False)
    tdist[special] = rng.choice([INT64_MIN, INT64_MAX, 2**62, -tile, tile], size=len(special))
    poison = np.dtype(dtype).type(9)
    tout = np.full((len(TILE_CASES) + 1, n), poison, dtype=dtype)
    sout = np.full((len(SCALAR_CASES), nblocks * bt), poison, dtype=dtype)
    shuffle_kernel(dtype)[nblocks, block](src, sv, dist, tdist, tout, sout, ipt)
    cuda.synchronize()
    for b in range(nblocks):
        sl, ts = slice(b * tile, (b + 1) * tile), slice(b * bt, (b + 1) * bt)
        slots = src[sl].reshape(bt, ipt)
        np.testing.assert_array_equal(tout[len(TILE_CASES), sl], src[sl], err_msg="input changed")
        for row, (mode, case_dist) in enumerate(TILE_CASES):
            distance = _distance(case_dist, int(dist[b]), tdist[ts])
            expected = ref.shift_tile(slots, mode, distance)
            np.testing.assert_array_equal(tout[row, sl].reshape(bt, ipt), expected,
                                          err_msg=f"{mode} {case_dist} {dtype} ipt={ipt} block#{b} d={dist[b]}")
        for row, (mode, case_dist) in enumerate(SCALAR_CASES):
            distance = _distance(case_dist, int(dist[b]), tdist[ts])
            expected = ref.shuffle(sv[ts], mode, distance)
            np.testing.assert_array_equal(sout[row, ts], expected,
                                          err_msg=f"{mode} {case_dist} {dtype} block#{b} d={dist[b]}")


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("ipt", ITEMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_shuffle_matrix(dtype, ipt):
    run_shuffle(dtype, ipt)


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("block", [(8, 4, 4), (10, 5, 1)], ids=["3d", "2d-50"])
def test_multidimensional_blocks(block):
    run_shuffle("int32", 3, block=block, seed=1)


# ----------------------------------------------------------------------------------------
# The reference model itself
# ----------------------------------------------------------------------------------------

@pytest.mark.unit
def test_reference_unit_shift_matches_cub():
    # BlockShuffle::Up: prev[i] = input[i-1] across the blocked tile; thread 0 slot 0
    # has no source and keeps its value.
    x = np.arange(12).reshape(4, 3)
    assert ref.shift_tile(x, "up").ravel().tolist() == [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert ref.shift_tile(x, "down").ravel().tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 11]


@pytest.mark.unit
def test_reference_distances():
    x = np.arange(8).reshape(4, 2)
    assert ref.shift_tile(x, "up", -2).ravel().tolist() == ref.shift_tile(x, "down", 2).ravel().tolist()
    assert ref.shift_tile(x, "down", 2**63 - 1).ravel().tolist() == list(range(8))
    assert ref.offset(np.arange(4), [1, -1, 9, -2**63]).tolist() == [1, 0, 2, 3]
    assert ref.rotate(np.arange(5), -2**63).tolist() == np.roll(np.arange(5), 2**63 % 5).tolist()
    assert ref.rotate(np.arange(4), 5).tolist() == [1, 2, 3, 0]


@pytest.mark.unit
def test_reference_sources_are_always_defined():
    src = ref.shuffle_sources("up", 4, 3, distance=[0, 1, 12, -1])
    assert (src >= 0).all()
    assert src[1, 0].tolist() == [0, 2] and src[2, 0].tolist() == [2, 0] and src[3, 2].tolist() == [3, 2]
