"""Exchange: NumPy reference checks (unit) and NumPy-checked GPU runs.

GPU matrix: one kernel per (group kind, dtype, items_per_thread) runs every mode
of that group (block: each mode with and without warp time slicing, one call
with an explicit TempStorage; warp: both modes for every logical width), on
several blocks whose ranks are a permutation, a permutation with out-of-tile
ranks, and random ranks with collisions.  Outputs start poisoned; unspecified
slots (scatter holes and collisions) are masked by the reference.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.ops.exchange import MODES
from cuda.coop.reference import exchange as ref

from ..values import full_range
from .exchange_kernels import BLOCK_DTYPES, FLAG_DTYPES, ITEMS, RANK_DTYPES, WARP_DTYPES, exchange_kernel


def make_ranks(rng, rank_dtype, tile, nblocks, colliding=True):
    """Per block: a permutation; one with out-of-tile ranks; random ranks (collisions, holes).

    ``colliding=False`` replaces the random ranks by a permutation: two threads
    writing one slot is a write-write race by design, which racecheck reports.
    """
    dt = np.dtype(rank_dtype)
    info = np.iinfo(dt)
    blocks = []
    for b in range(nblocks):
        kind = b % 3
        if kind == 0 or (kind == 2 and not colliding):
            r = rng.permutation(tile).astype(np.int64)
        elif kind == 1:
            r = rng.permutation(tile).astype(np.int64)
            bad = rng.choice(tile, size=max(1, tile // 8), replace=False)
            outside = [tile, tile + 7, int(info.max)] + ([-1, int(info.min)] if dt.kind == "i" else [])
            if dt.itemsize == 8:
                outside.append(2**32 + 3)  # wraps into the tile if narrowed to int before the check
            r[bad] = rng.choice(outside, size=len(bad))
        else:
            r = rng.integers(0, tile, size=tile)
        blocks.append(r.astype(dt))
    return np.concatenate(blocks)


def run_exchange(kind, dtype, ipt, block=(128, 1, 1), seed=0, warp_multiple=True, colliding_ranks=True):
    from ..compiler import cuda

    rng = np.random.default_rng(seed)
    block_threads = int(np.prod(block))
    tile = block_threads * ipt
    nblocks = 3
    n = nblocks * tile
    src = full_range(rng, dtype, n)
    ranks = make_ranks(rng, RANK_DTYPES[dtype], tile, nblocks, colliding=colliding_ranks)
    flags = rng.integers(0, 2, size=n).astype(FLAG_DTYPES[dtype])
    kernel, cases = exchange_kernel(kind, dtype, warp_multiple)
    poison = np.dtype(dtype).type(7)
    out = np.full((len(cases) + 1, n), poison, dtype=dtype)
    kernel[nblocks, block](src, ranks, flags, out, ipt)
    cuda.synchronize()
    for b in range(nblocks):
        sl = slice(b * tile, (b + 1) * tile)
        slots = src[sl].reshape(block_threads, ipt)
        rk = ranks[sl].reshape(block_threads, ipt)
        fl = flags[sl].reshape(block_threads, ipt)
        np.testing.assert_array_equal(out[len(cases), sl], src[sl], err_msg="the input payload changed")
        for row, case in enumerate(cases):
            if kind == "block":
                mode, width = case[0], None
            else:
                width, mode = case
            expected, defined = ref.exchange(slots, mode, group_width=width, ranks=rk, valid_flags=fl)
            got = out[row, sl].reshape(block_threads, ipt)
            label = f"{kind} {case} {dtype} ipt={ipt} block={block} block#{b}"
            np.testing.assert_array_equal(got[defined], expected[defined], err_msg=label)


@pytest.mark.gpu
@pytest.mark.parametrize("ipt", ITEMS)
@pytest.mark.parametrize("dtype", BLOCK_DTYPES)
def test_block_exchange(dtype, ipt):
    run_exchange("block", dtype, ipt)


@pytest.mark.gpu
@pytest.mark.parametrize("ipt", ITEMS)
@pytest.mark.parametrize("dtype", WARP_DTYPES)
def test_warp_exchange(dtype, ipt):
    run_exchange("warp", dtype, ipt)


@pytest.mark.gpu
@pytest.mark.parametrize("block", [(16, 6, 1), (8, 4, 4)], ids=["2d-96", "3d-128"])
def test_multidimensional_blocks(block):
    run_exchange("block", "int32", 4, block=block, seed=1)
    run_exchange("warp", "float64", 3, block=block, seed=2)


@pytest.mark.gpu
def test_block_not_a_multiple_of_32():
    """Warp-striped modes need whole warps; every other block mode takes any shape."""
    run_exchange("block", "float32", 3, block=(10, 5, 1), seed=3, warp_multiple=False)


# ----------------------------------------------------------------------------------------
# The reference model itself
# ----------------------------------------------------------------------------------------

@pytest.mark.unit
def test_reference_layouts_round_trip():
    for layout in ("blocked", "striped", "warp_striped"):
        pos = ref.tile_positions(layout, 64, 3)
        assert sorted(pos.ravel()) == list(range(64 * 3)), layout
        tile = np.arange(64 * 3)
        np.testing.assert_array_equal(ref.to_tile(ref.from_tile(tile, layout, 64), layout), tile)


@pytest.mark.unit
def test_reference_matches_cub_documentation():
    # CUB's BlockExchange example: striped {[0,128,256,384], [1,129,...]} -> blocked {[0,1,2,3], ...}
    striped = ref.from_tile(np.arange(512), "striped", 128)
    assert striped[1].tolist() == [1, 129, 257, 385]
    out, defined = ref.exchange(striped, "striped_to_blocked")
    assert defined.all() and out[1].tolist() == [4, 5, 6, 7]
    # Warp-striped: lane l of warp w holds w*32*K + i*32 + l.
    assert ref.tile_positions("warp_striped", 64, 2)[33].tolist() == [65, 97]


@pytest.mark.unit
def test_reference_scatter_drops_out_of_tile_ranks_and_marks_collisions():
    slots = np.arange(8).reshape(4, 2)
    ranks = np.array([[7, 6], [-1, 4], [3, 100], [1, 1]])
    out, defined = ref.exchange(slots, "scatter_to_blocked", ranks=ranks)
    assert out.ravel()[[3, 4, 6, 7]].tolist() == [4, 3, 1, 0]
    assert defined.ravel().tolist() == [False, False, False, True, True, False, True, True]
    flags = np.array([[1, 0], [1, 1], [1, 1], [0, 1]])
    out, defined = ref.exchange(slots, "scatter_to_striped_flagged", ranks=ranks, valid_flags=flags)
    # striped: thread t slot i shows position t + 4*i
    assert defined.ravel().tolist() == [False, True, True, False, False, False, True, True]


@pytest.mark.unit
def test_reference_modes_match_the_op_table():
    for name, mode in MODES.items():
        assert ref.MODE_LAYOUTS[name] == (mode.source, mode.target), name
