"""complex64/complex128 payloads in the data-movement families, checked against NumPy.

NVIDIA's runtime tests (``test_common_root_{load_store,exchange,shuffle,
adjacent_discontinuity}.py``) move complex128 through load/store, exchange, shuffle and
neighbours with value-level device functions; these cover both complex widths, random
values with nonzero imaginary parts, poisoned outputs and partial tiles.  The companion
``test_complex_payloads_compile.py`` builds these kernels on any machine and checks that
nothing is left un-inlined.
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda

from .complex_payloads_kernels import IPT, THREADS, _neighbours, _shuffle, _warp_load_store, exchange_kernel, load_store_kernel

pytestmark = pytest.mark.gpu

TILE = THREADS * IPT
VALID = TILE - 9  # a partial tile
POISON = complex(-999.0, 777.0)
BLOCK_ALGORITHMS = ("direct", "striped", "vectorize", "transpose", "warp_transpose")


def random_complex(dtype, n, seed=11):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype)


def layout(values, algorithm):
    """Thread t's slot i holds item (t*IPT+i) in the blocked layout, (t+i*THREADS) striped."""
    if algorithm != "striped":
        return values.copy()
    return values.reshape(IPT, THREADS).T.reshape(-1)


@pytest.mark.parametrize("dtype,algorithm", [("complex128", a) for a in BLOCK_ALGORITHMS]
                         + [("complex64", "transpose"), ("complex64", "vectorize")])
def test_block_load_store(dtype, algorithm):
    values = random_complex(dtype, TILE)
    full, partial, loaded = (np.full(TILE, POISON, dtype) for _ in range(3))
    load_store_kernel(dtype, algorithm)[1, THREADS](values, full, partial, loaded, VALID)
    cuda.synchronize()
    np.testing.assert_array_equal(full, values)
    expected_partial = np.full(TILE, POISON, dtype)
    expected_partial[:VALID] = values[:VALID]
    np.testing.assert_array_equal(partial, expected_partial)
    padded = np.full(TILE, values[1], dtype)
    padded[:VALID] = values[:VALID]
    np.testing.assert_array_equal(loaded, layout(padded, algorithm))


def test_warp_load_store_partial_with_offsets():
    values = random_complex("complex128", TILE + 8)
    out = np.full(TILE + 8, POISON, np.complex128)
    loaded = np.full(TILE, POISON, np.complex128)
    valid = 32 * IPT - 5
    _warp_load_store[1, THREADS](values, out, loaded, valid)
    cuda.synchronize()
    warp_tile = 32 * IPT
    expected_out = np.full(TILE + 8, POISON, np.complex128)
    expected_loaded = np.full(TILE, values[0], np.complex128)
    for w in range(THREADS // 32):
        begin = w * warp_tile
        expected_loaded[begin:begin + valid] = values[begin + 3:begin + 3 + valid]
        expected_out[begin + 5:begin + 5 + valid] = values[begin + 3:begin + 3 + valid]
    np.testing.assert_array_equal(out, expected_out)
    np.testing.assert_array_equal(loaded, expected_loaded)


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_exchange_block_and_warp(dtype):
    values = random_complex(dtype, TILE)
    out = np.full((3, TILE), POISON, dtype)
    exchange_kernel(dtype)[1, THREADS](values, out)
    cuda.synchronize()
    np.testing.assert_array_equal(out[0], values.reshape(THREADS, IPT).T.reshape(-1))
    np.testing.assert_array_equal(out[1], values.reshape(IPT, THREADS).T.reshape(-1))
    warp = 32 * IPT
    expected = np.concatenate([values[b:b + warp].reshape(32, IPT).T.reshape(-1) for b in range(0, TILE, warp)])
    np.testing.assert_array_equal(out[2], expected)


def test_shuffle_tile_and_scalar():
    values = random_complex("complex128", TILE)
    scalars = random_complex("complex128", THREADS, seed=5)
    down, up = (np.full(TILE, POISON, np.complex128) for _ in range(2))
    rotated = np.full(THREADS, POISON, np.complex128)
    _shuffle[1, THREADS](values, scalars, down, up, rotated)
    cuda.synchronize()
    expected_down = values.copy()  # a slot without a source keeps its input
    expected_down[:-1] = values[1:]
    expected_up = values.copy()
    expected_up[3:] = values[:-3]
    np.testing.assert_array_equal(down, expected_down)
    np.testing.assert_array_equal(up, expected_up)
    np.testing.assert_array_equal(rotated, np.roll(scalars, -5))


def test_neighbours_with_complex_callbacks():
    values = random_complex("complex128", TILE)
    values[10] = values[9]  # equal neighbours: a zero difference and no flag
    values[40] = values[41]
    predecessor, successor = np.complex128(-13.5 + 7.25j), np.complex128(29.0 - 11.5j)
    left = np.full(TILE, POISON, np.complex128)
    heads, tails = (np.full(TILE, -99, np.int32) for _ in range(2))
    _neighbours[1, THREADS](values, left, heads, tails, VALID, predecessor, successor)
    cuda.synchronize()
    expected_left = np.empty_like(values)
    expected_left[0] = values[0] - predecessor
    expected_left[1:] = values[1:] - values[:-1]
    expected_left[VALID:] = values[VALID:]  # positions past valid_items are copied unchanged
    np.testing.assert_array_equal(left, expected_left)
    expected_heads = np.empty(TILE, np.int32)
    expected_heads[0] = values[0] != predecessor
    expected_heads[1:] = values[1:] != values[:-1]
    expected_tails = np.empty(TILE, np.int32)
    expected_tails[:-1] = values[:-1] != values[1:]
    expected_tails[-1] = values[-1] != successor
    np.testing.assert_array_equal(heads, expected_heads)
    np.testing.assert_array_equal(tails, expected_tails)
