"""Histogram on a device, checked against the NumPy reference (``np.bincount``).

One kernel per (sample dtype, items_per_thread) runs both algorithms through
five cases each: 256 bins (CUB's unguarded composite for uint8), ``valid_items``
with blocked and with striped samples, ``accumulate`` over two tiles (int32
counters that wrap), and a scalar sample.  Six blocks per launch give full,
negative, empty, one-item and random partial tiles; one block's samples are all
equal (atomic contention), and every tile holds out-of-range samples (negative,
past ``bins``, dtype extremes).  Outputs are poisoned first.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.reference import histogram as ref

from ..kernelgen import module_from_source
from .histogram_kernels import MANY_TILES_SOURCE, ROWS, SAMPLE_DTYPES, histogram_kernel

ITEMS = [1, 4, 16]
POISON = -7
MAX_BPT = 3


def random_samples(rng, dtype: str, n: int) -> np.ndarray:
    """Mostly in [-20, 330] (clipped to the dtype), plus the dtype's extremes and 2**63 + 3 for uint64."""
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    lo, hi = max(int(info.min), -20), min(int(info.max), 330)
    values = rng.integers(lo, hi, size=n, endpoint=True).astype(object)
    extremes = [int(info.min), int(info.max)] + ([2**63 + 3] if dtype == "uint64" else [])
    picks = rng.choice(n, size=max(1, n // 40), replace=False)
    values[picks] = rng.choice(np.array(extremes, dtype=object), size=len(picks))
    return values.astype(dt)


def run_histogram(dtype: str, items_per_thread: int, block=(128, 1, 1), seed=0):
    from ..compiler import cuda

    rng = np.random.default_rng(seed)
    threads = int(np.prod(block))
    tile = threads * items_per_thread
    valid = np.array([10**9, -3, 0, 1, int(rng.integers(1, tile + 1)), int(rng.integers(1, tile + 1))],
                     dtype=np.int64)
    nblocks = len(valid)
    samples = random_samples(rng, dtype, nblocks * tile)
    samples[tile:2 * tile] = samples[tile]  # block 1: one value everywhere (atomic contention)
    acc_init = rng.integers(0, 1000, size=threads * 2).astype(np.int32)
    acc_init[:3] = np.iinfo(np.int32).max - 2  # counters that wrap
    out = np.full((len(ROWS), nblocks, threads * MAX_BPT), POISON, dtype=np.int64)
    # The int32 accumulators are read back into an int32 array: numba-cuda-mlir 0.6
    # can widen a negative int32 local-array element to int64 with a zero-extending
    # load (ld.local.u32) when storing it into an int64 array.
    acc_out = np.full((len(ROWS), nblocks, threads * MAX_BPT), POISON, dtype=np.int32)
    kernel = histogram_kernel(dtype, items_per_thread)
    kernel[nblocks, block](samples, valid, acc_init, out, acc_out)
    cuda.synchronize()
    for b in range(nblocks):
        tile_values = samples[b * tile:(b + 1) * tile]
        sb = tile_values.reshape(threads, items_per_thread)
        ss = tile_values.reshape(items_per_thread, threads).T
        vi = int(valid[b])
        for row, (algo, (name, bins, bpt, counter, _payload, _extra)) in enumerate(ROWS):
            if name == "plain":
                expected = ref.histogram(sb, bins, bpt, counter_dtype=counter)
            elif name == "valid_blocked":
                expected = ref.histogram(sb, bins, bpt, counter_dtype=counter, valid_items=vi)
            elif name == "valid_striped":
                expected = ref.histogram(ss, bins, bpt, counter_dtype=counter, valid_items=vi, layout="striped")
            elif name == "accumulate":
                init = acc_init.reshape(bpt, threads).T
                first = ref.histogram(sb, bins, bpt, counter_dtype=counter, accumulate=init)
                expected = ref.histogram(ss, bins, bpt, counter_dtype=counter, valid_items=vi, layout="striped",
                                         accumulate=first)
            else:
                expected = ref.histogram(sb[:, :1], bins, bpt, counter_dtype=counter)
            read = acc_out if name == "accumulate" else out
            got = read[row, b, :threads * bpt].reshape(bpt, threads).T
            np.testing.assert_array_equal(
                got, expected.astype(np.int64),
                err_msg=f"{algo} {name} {dtype} ipt={items_per_thread} block#{b} valid={vi} shape={block}")
            assert (read[row, b, threads * bpt:] == POISON).all()


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("items_per_thread", ITEMS)
@pytest.mark.parametrize("dtype", SAMPLE_DTYPES)
def test_histogram_matrix(dtype, items_per_thread):
    run_histogram(dtype, items_per_thread)


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("dtype,items_per_thread", [("int32", 4), ("uint8", 16)])
def test_histogram_multidimensional_block(dtype, items_per_thread):
    run_histogram(dtype, items_per_thread, block=(16, 4, 2), seed=3)


@pytest.mark.gpu
def test_histogram_of_many_tiles_by_adding_payloads():
    """The documented accumulation by adding returned payloads, over a grid-stride loop."""
    from ..compiler import cuda

    module = module_from_source(MANY_TILES_SOURCE)
    rng = np.random.default_rng(5)
    n = 128 * 8 * 37 + 77
    samples = rng.integers(0, 256, size=n).astype(np.uint8)
    out = np.zeros(256, dtype=np.int64)
    module.kernel[5, 128](samples, out, n)
    cuda.synchronize()
    np.testing.assert_array_equal(out, np.bincount(samples, minlength=256))


# --------------------------------------------------------------------------------------
# The reference model itself (what the GPU tests and the docs' explorer rely on)
# --------------------------------------------------------------------------------------

@pytest.mark.unit
def test_reference_matches_bincount_and_ignores_out_of_range():
    slots = np.array([[0, 3, -1], [3, 9, 2]], dtype=np.int8)  # -1 and 9 are out of range for 5 bins
    counts = ref.histogram(slots, 5, 3)
    # Striped: thread t slot i counts bin t + 2*i; bins 5 (thread 1 slot 2) does not exist.
    np.testing.assert_array_equal(counts, [[1, 1, 0], [0, 2, 0]])
    np.testing.assert_array_equal(ref.bin_counts(slots, 5), np.bincount([0, 3, 3, 2], minlength=5))
    big = np.array([[2**63 + 3, 1]], dtype=np.uint64)
    assert ref.bin_counts(big, 4).tolist() == [0, 1, 0, 0]


@pytest.mark.unit
def test_reference_valid_items_follow_the_layout():
    slots = np.arange(6, dtype=np.int32).reshape(2, 3)  # blocked: positions 0..5 are thread-major
    assert ref.counted_mask(slots, 10, valid_items=2).tolist() == [[True, True, False], [False, False, False]]
    assert ref.counted_mask(slots, 10, valid_items=2, layout="striped").tolist() == [[True, False, False],
                                                                                      [True, False, False]]
    assert not ref.counted_mask(slots, 10, valid_items=-4).any()


@pytest.mark.unit
def test_reference_accumulate_wraps_and_keeps_slots_past_bins():
    slots = np.array([[1], [1]], dtype=np.uint8)
    acc = np.array([[2**31 - 1, 7], [5, 9]], dtype=np.int32)
    out = ref.histogram(slots, 3, 2, counter_dtype="int32", accumulate=acc)
    # bin 1 (thread 1, slot 0) gets 2; bin 3 (thread 1, slot 1) does not exist and keeps 9.
    assert out.tolist() == [[2**31 - 1, 7], [7, 9]]
    wrapped = ref.histogram(np.zeros((2, 1), np.uint8), 1, 1, counter_dtype="int32", accumulate=[[2**31 - 1], [0]])
    assert wrapped.tolist() == [[-2**31 + 1], [0]]
