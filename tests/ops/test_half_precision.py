"""float16 and bfloat16 payloads on a device, against NumPy.

One kernel per element type runs every family on random data (outputs poisoned first).
Data movement, sorting, selection and differences are exact.  Sums accumulate in the
payload type, as CUB does: on small integers they are exact in both types (checked
exactly); on random reals they are checked against a float64 reference with the
tolerance the type allows (docs/concepts.rst, "Half precision").
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop._dtypes import bfloat16_dtype

BFLOAT16 = bfloat16_dtype()  # None without ml_dtypes

from ..kernelgen import module_from_source

THREADS, ITEMS, BLOCKS = 128, 4, 3
TILE = THREADS * ITEMS

SOURCE = """
import ml_dtypes

@cuda.jit
def kernel(src, moved, striped, sums, scanned, sorted_desc, radix, top, diffs, shuffled, decoded):
    block = coop.this_block()
    b = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    base = b * {TILE}
    items = coop.ThreadData({ITEMS})
    coop.load(block, src[base:], items)
    coop.store(block, moved[base:], items)
    ex = coop.exchange(block, items, mode="blocked_to_striped")
    for i in range({ITEMS}):
        striped[base + tid * {ITEMS} + i] = ex[i]
    total = coop.sum(block, items)
    biggest = coop.reduce(block, items, binary_op="max")
    one = coop.sum(block, src[base + tid])  # a 16-bit scalar operand (by reference)
    if tid == 0:
        sums[b * 3 + 0] = total
        sums[b * 3 + 1] = biggest
        sums[b * 3 + 2] = one
    inc = coop.inclusive_sum(block, items)
    coop.store(block, scanned[base:], inc)
    ms = coop.merge_sort_keys(block, items, descending=True)
    coop.store(block, sorted_desc[base:], ms)
    rs = coop.radix_sort_keys(block, items)
    coop.store(block, radix[base:], rs)
    tk = coop.topk_max_keys(block, items, k=16)
    coop.store(block, top[base:], tk)
    d = coop.adjacent_difference(block, items)
    coop.store(block, diffs[base:], d)
    shuffled[b * {THREADS} + tid] = coop.shuffle(block, src[base + tid], mode="offset", distance=1)
    lengths = coop.ThreadData(2, dtype=np.int32)
    lengths[0] = 1
    lengths[1] = 2
    runs = coop.ThreadData(2, dtype={DT})
    runs[0] = items[0]
    runs[1] = items[1]
    w = coop.run_length_decode(block, runs, lengths, decoded_items_per_thread=3)
    for i in range(3):
        decoded[b * {THREADS} * 3 + tid * 3 + i] = w[i]
"""


def _dtypes():
    out = [pytest.param(np.dtype("float16"), id="float16")]
    out.append(pytest.param(BFLOAT16, id="bfloat16", marks=pytest.mark.skipif(
        BFLOAT16 is None, reason="ml_dtypes is not installed")))
    return out


def _run(dtype, values):
    from ..compiler import cuda

    n = BLOCKS * TILE
    src = values.astype(dtype)
    poison = np.array(-77, dtype=np.float32).astype(dtype)

    # numba-cuda-mlir 0.6 copies host arrays through a buffer, which refuses ml_dtypes'
    # bfloat16 ("cannot include dtype 'E'"): move the 16 bits and view them as bfloat16.
    def to_device(host):
        return cuda.to_device(host.view(np.uint16)).view(dtype)

    def to_host(dev):
        return dev.view(np.uint16).copy_to_host().view(dtype)

    def out(size):
        return to_device(np.full(size, poison, dtype=dtype))

    outs = dict(moved=out(n), striped=out(n), sums=out(BLOCKS * 3), scanned=out(n), sorted_desc=out(n),
                radix=out(n), top=out(n), diffs=out(n), shuffled=out(BLOCKS * THREADS),
                decoded=out(BLOCKS * THREADS * 3))
    spelling = "np.float16" if dtype == np.dtype("float16") else "ml_dtypes.bfloat16"
    source = SOURCE.replace("{DT}", spelling).format(TILE=TILE, ITEMS=ITEMS, THREADS=THREADS)
    kernel = module_from_source(source).kernel
    kernel[BLOCKS, THREADS](to_device(src), *outs.values())
    cuda.synchronize()
    return src, {k: to_host(v) for k, v in outs.items()}


def _f64(a):
    return np.asarray(a).astype(np.float64)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", _dtypes())
def test_every_family_on_small_integers(dtype):
    """Values in -2..2: every result (sums and scans included) is exact in both types."""
    rng = np.random.default_rng(16)
    src, got = _run(dtype, rng.integers(-2, 3, size=BLOCKS * TILE).astype(np.float32))
    np.testing.assert_array_equal(got["moved"], src)
    for b in range(BLOCKS):
        tile = src[b * TILE:(b + 1) * TILE]
        t64 = _f64(tile)
        blocked = tile.reshape(THREADS, ITEMS)
        # blocked_to_striped: thread t's slot i holds item i * THREADS + t of the tile.
        np.testing.assert_array_equal(got["striped"][b * TILE:(b + 1) * TILE].reshape(THREADS, ITEMS),
                                      tile.reshape(ITEMS, THREADS).T, err_msg=f"exchange block {b}")
        assert _f64(got["sums"][b * 3:b * 3 + 3]).tolist() == [t64.sum(), t64.max(),
                                                                _f64(src[b * TILE:b * TILE + THREADS]).sum()]
        np.testing.assert_array_equal(_f64(got["scanned"][b * TILE:(b + 1) * TILE]), np.cumsum(t64),
                                      err_msg=f"inclusive_sum block {b}")
        np.testing.assert_array_equal(_f64(got["sorted_desc"][b * TILE:(b + 1) * TILE]), np.sort(t64)[::-1])
        np.testing.assert_array_equal(_f64(got["radix"][b * TILE:(b + 1) * TILE]), np.sort(t64))
        top = _f64(got["top"][b * TILE:(b + 1) * TILE])
        np.testing.assert_array_equal(np.sort(top[:16])[::-1], np.sort(t64)[::-1][:16], err_msg=f"topk {b}")
        diff = _f64(blocked.reshape(-1))
        expected = np.concatenate([[diff[0]], diff[1:] - diff[:-1]])
        np.testing.assert_array_equal(_f64(got["diffs"][b * TILE:(b + 1) * TILE]), expected)
        row = _f64(src[b * TILE:b * TILE + THREADS])
        np.testing.assert_array_equal(_f64(got["shuffled"][b * THREADS:(b + 1) * THREADS])[:-1], row[1:])
        # run_length_decode: thread t's runs are (item 0, length 1), (item 1, length 2).
        runs = blocked[:, :2].reshape(-1)
        lengths = np.tile([1, 2], THREADS)
        np.testing.assert_array_equal(_f64(got["decoded"][b * THREADS * 3:(b + 1) * THREADS * 3]),
                                      _f64(np.repeat(runs, lengths)), err_msg=f"run_length block {b}")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", _dtypes())
def test_sums_of_reals_accumulate_in_the_payload_type(dtype):
    """The accuracy contract: a 512-item float16 sum is within 1 %, bfloat16 within 4 %, of
    the float64 sum of the same (rounded) values; the max is exact."""
    rng = np.random.default_rng(3)
    src, got = _run(dtype, rng.uniform(0, 1, size=BLOCKS * TILE).astype(np.float32))
    rtol = 0.01 if dtype == np.dtype("float16") else 0.04
    for b in range(BLOCKS):
        t64 = _f64(src[b * TILE:(b + 1) * TILE])
        total, biggest = _f64(got["sums"][b * 3:b * 3 + 2])
        np.testing.assert_allclose(total, t64.sum(), rtol=rtol)
        assert biggest == t64.max()
        np.testing.assert_allclose(_f64(got["scanned"][b * TILE:(b + 1) * TILE]), np.cumsum(t64), rtol=rtol,
                                   atol=0.01)
        np.testing.assert_array_equal(_f64(got["radix"][b * TILE:(b + 1) * TILE]), np.sort(t64))
