"""``cuda.local.array`` payloads in every family, and scalar keys for the ordering families.

A fixed-size 1-D ``cuda.local.array(K, dtype)`` passed to a cooperative call is a
``ThreadData(K, dtype)``: ``coop.load`` writes into it, every other family reads
it.  Scalars sort, rank and merge as one item per thread and come back as
scalars.  Each kernel is compiled here (to cubin, with no call left after LTO)
and run on a GPU against NumPy, with poisoned outputs and random data.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.reference import exchange as ref_exchange
from cuda.coop.reference import radix as ref_radix

from ..backends_param import COMPILERS, compile_for, gpu_for, kernel_for, types_for
from .cubin_checks import assert_inlined

# Every case runs on both compilers (classic numba-cuda: the rewrite in
# backends/numba_cuda/rewrite.py turns such a local array into a ThreadData too).
pytestmark = pytest.mark.parametrize("compiler", COMPILERS)

K = 4
THREADS = 128
NBLOCKS = 3
TILE = THREADS * K

# Local arrays everywhere: load's output, and the input of every other family.
_MOVEMENT = """
K = {K}
DT = np.{dtype}

@cuda.jit
def kernel(src, copy, striped, shifted, scanned, sums, warp_sums, diffs, heads):
    block = coop.this_block()
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * {TILE}
    items = cuda.local.array(K, DT)
    coop.load(block, src, items, offset=base)
    coop.store(block, copy, items, offset=base)
    x = coop.exchange(block, items, mode="blocked_to_striped")
    up = coop.shuffle(block, items, mode="up")
    sc = coop.inclusive_sum(block, items)
    d = coop.adjacent_difference(block, items)
    f = coop.discontinuity(block, items, mode="heads")
    for i in range(K):
        striped[base + t * K + i] = x[i]
        shifted[base + t * K + i] = up[i]
        scanned[base + t * K + i] = sc[i]
        diffs[base + t * K + i] = d[i]
        heads[base + t * K + i] = f[i]
    s = coop.sum(block, items)
    if t == 0:
        sums[cuda.blockIdx.x] = s
    lane = cuda.local.array((K,), dtype=DT)
    for i in range(K):
        lane[i] = items[i]
    ws = coop.sum(coop.this_warp(), lane)
    if t % 32 == 0:
        warp_sums[cuda.blockIdx.x * {WARPS} + t // 32] = ws
"""

_ORDERING = """
K = {K}

@cuda.jit
def kernel(src, merged, radix_keys, radix_values, ranks, top, counts, scalar_sorted, scalar_ranks,
           scalar_pairs):
    block = coop.this_block()
    t = cuda.threadIdx.x
    base = cuda.blockIdx.x * {TILE}
    keys = cuda.local.array(K, np.int32)
    coop.load(block, src, keys, offset=base)
    positions = cuda.local.array(K, np.int32)
    samples = cuda.local.array(K, np.uint8)
    for i in range(K):
        positions[i] = t * K + i
        samples[i] = np.uint8(keys[i] & 255)
    m = coop.merge_sort_keys(block, keys)
    rk, rv = coop.radix_sort_pairs(block, keys, positions)
    r = coop.radix_rank(block, keys, begin_bit=0, radix_bits=4)
    tk = coop.topk_max_keys(block, keys, k=16)
    h = coop.histogram(block, samples, bins=256, bins_per_thread=2)
    for i in range(K):
        merged[base + t * K + i] = m[i]
        radix_keys[base + t * K + i] = rk[i]
        radix_values[base + t * K + i] = rv[i]
        ranks[base + t * K + i] = r[i]
        top[base + t * K + i] = tk[i]
    for i in range(2):
        counts[cuda.blockIdx.x * 256 + t + i * {THREADS}] = h[i] if t + i * {THREADS} < 256 else 0
    key = keys[0]
    scalar_sorted[cuda.blockIdx.x * {THREADS} + t] = coop.radix_sort_keys(block, key)
    scalar_sorted[(cuda.blockIdx.x + {NBLOCKS}) * {THREADS} + t] = coop.merge_sort_keys(block, key)
    scalar_ranks[cuda.blockIdx.x * {THREADS} + t] = coop.radix_rank(block, key, radix_bits=4)
    sk, sv = coop.radix_sort_pairs(block, key, t)
    scalar_pairs[cuda.blockIdx.x * {THREADS} + t] = sv
"""


def _source(template: str, **kw) -> str:
    return template.format(K=K, TILE=TILE, THREADS=THREADS, NBLOCKS=NBLOCKS, WARPS=THREADS // 32, **kw)


def movement_kernel(compiler, dtype: str):
    return kernel_for(compiler, _source(_MOVEMENT, dtype=dtype)).kernel


def ordering_kernel(compiler):
    return kernel_for(compiler, _source(_ORDERING)).kernel


# ----------------------------------------------------------------------------------------
# Compile (no GPU): both kernels reach cubin and LTO leaves no call
# ----------------------------------------------------------------------------------------

@pytest.mark.compile
@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_movement_with_local_arrays_compiles_inlined(dtype, compiler):
    T = types_for(compiler)
    arr = getattr(T, dtype)[::1]
    i32 = T.int32[::1]
    kb = compile_for(compiler, movement_kernel(compiler, dtype), (arr,) * 8 + (i32,), cc=(9, 0), block=THREADS)
    assert_inlined(kb, (9, 0))


@pytest.mark.compile
def test_ordering_with_local_arrays_and_scalars_compiles_inlined(compiler):
    T = types_for(compiler)
    i32 = T.int32[::1]
    kb = compile_for(compiler, ordering_kernel(compiler), (i32,) * 10, cc=(9, 0), block=THREADS)
    assert_inlined(kb, (9, 0))


@pytest.mark.compile
def test_a_local_array_used_only_outside_coop_stays_a_local_array(compiler):
    module = kernel_for(compiler, """
@cuda.jit
def kernel(src, dst):
    items = coop.ThreadData(2)
    coop.load(coop.this_block(), src, items)
    scratch = cuda.local.array((2, 2), np.int32)  # 2-D: never a payload
    plain = cuda.local.array(2, np.int32)
    for i in range(2):
        scratch[i, 0] = items[i]
        plain[i] = scratch[i, 0] * 2
    coop.store(coop.this_block(), dst, items)
    dst[0] = plain[0]
""")
    T = types_for(compiler)
    kb = compile_for(compiler, module.kernel, (T.int32[::1], T.int32[::1]), cc=(9, 0), block=64)
    assert_inlined(kb, (9, 0))


# ----------------------------------------------------------------------------------------
# GPU
# ----------------------------------------------------------------------------------------

def _random(rng, dtype, n):
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(n) * 100).astype(dtype)
    return rng.integers(-1000, 1000, size=n).astype(dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_movement_families_read_and_write_local_arrays(dtype, compiler):
    gpu_for(compiler)

    rng = np.random.default_rng(11)
    n = NBLOCKS * TILE
    src = _random(rng, dtype, n)
    src[5:9] = src[4]  # equal neighbours, so discontinuity sees both flags
    poison = np.dtype(dtype).type(-77)
    outs = [np.full(n, poison, dtype) for _ in range(4)]
    sums = np.full(NBLOCKS, poison, dtype)
    warp_sums = np.full(NBLOCKS * THREADS // 32, poison, dtype)
    diffs = np.full(n, poison, dtype)
    heads = np.full(n, -1, np.int32)
    args = [src, *outs, sums, warp_sums, diffs, heads]
    movement_kernel(compiler, dtype)[NBLOCKS, THREADS](*args)  # host arrays: copied in and back by the launch
    copy, striped, shifted, scanned, sums, warp_sums, diffs, heads = args[1:]
    if np.dtype(dtype).kind == "f":
        close = np.testing.assert_allclose
    else:
        def close(got, expected, rtol):
            np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(copy, src)
    for b in range(NBLOCKS):
        tile = src[b * TILE:(b + 1) * TILE]
        sl = slice(b * TILE, (b + 1) * TILE)
        slots = tile.reshape(THREADS, K)
        expected, _ = ref_exchange.exchange(slots, "blocked_to_striped")
        np.testing.assert_array_equal(striped[sl].reshape(THREADS, K), expected)
        np.testing.assert_array_equal(shifted[sl][1:], tile[:-1])  # slot 0 of the tile is unspecified
        close(scanned[sl], np.cumsum(tile).astype(dtype), rtol=1e-9)
        close(sums[b], tile.sum(dtype=dtype), rtol=1e-9)
        close(warp_sums[b * 4:(b + 1) * 4], tile.reshape(4, 32 * K).sum(axis=1, dtype=dtype), rtol=1e-9)
        np.testing.assert_array_equal(diffs[sl][1:], tile[1:] - tile[:-1])
        assert diffs[sl][0] == tile[0]
        np.testing.assert_array_equal(heads[sl], np.r_[1, (tile[1:] != tile[:-1]).astype(np.int32)])


@pytest.mark.gpu
def test_ordering_families_read_local_arrays_and_scalars(compiler):
    gpu_for(compiler)

    rng = np.random.default_rng(12)
    n = NBLOCKS * TILE
    src = rng.integers(-(2**31), 2**31 - 1, size=n, dtype=np.int64).astype(np.int32)
    src[:64] = src[64:128]  # duplicate keys: the radix sort must stay stable
    names = ("merged", "radix_keys", "radix_values", "ranks", "top")
    outs = {name: np.full(n, -77, np.int32) for name in names}
    counts = np.full(NBLOCKS * 256, -77, np.int32)
    scalar_sorted = np.full(2 * NBLOCKS * THREADS, -77, np.int32)
    scalar_ranks = np.full(NBLOCKS * THREADS, -77, np.int32)
    scalar_pairs = np.full(NBLOCKS * THREADS, -77, np.int32)
    arrays = [src, *outs.values(), counts, scalar_sorted, scalar_ranks, scalar_pairs]
    ordering_kernel(compiler)[NBLOCKS, THREADS](*arrays)  # host arrays: copied in and back by the launch
    got = arrays[1:]
    merged, radix_keys, radix_values, ranks, top, counts, scalar_sorted, scalar_ranks, scalar_pairs = got
    for b in range(NBLOCKS):
        sl = slice(b * TILE, (b + 1) * TILE)
        tile = src[sl]
        order = np.argsort(tile, kind="stable")
        np.testing.assert_array_equal(merged[sl], np.sort(tile))
        np.testing.assert_array_equal(radix_keys[sl], tile[order])
        np.testing.assert_array_equal(radix_values[sl], order)
        np.testing.assert_array_equal(ranks[sl], ref_radix.radix_rank(tile.reshape(THREADS, K), begin_bit=0,
                                                                       radix_bits=4).ravel())
        np.testing.assert_array_equal(np.sort(top[sl][:16]), np.sort(tile)[-16:])
        np.testing.assert_array_equal(counts[b * 256:(b + 1) * 256],
                                      np.bincount((tile & 255).astype(np.uint8), minlength=256))
        firsts = tile.reshape(THREADS, K)[:, 0]
        np.testing.assert_array_equal(scalar_sorted[b * THREADS:(b + 1) * THREADS], np.sort(firsts))
        np.testing.assert_array_equal(scalar_sorted[(b + NBLOCKS) * THREADS:(b + NBLOCKS + 1) * THREADS],
                                      np.sort(firsts))
        np.testing.assert_array_equal(scalar_ranks[b * THREADS:(b + 1) * THREADS],
                                      ref_radix.radix_rank(firsts.reshape(THREADS, 1), radix_bits=4).ravel())
        np.testing.assert_array_equal(scalar_pairs[b * THREADS:(b + 1) * THREADS],
                                      np.argsort(firsts, kind="stable"))
