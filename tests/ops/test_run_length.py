"""Run-length decode on a device, checked against the NumPy reference (``np.repeat``).

One kernel per (value dtype, lengths dtype, runs per thread, decoded items per
thread) runs: a window at a runtime offset with ``oob_default``, relative
offsets and the total; a window at offset 0; the whole sequence decoded by a
loop of windows; ``run_length_decode_into`` at a runtime destination offset
(default window depth) and at offset 0 (depth 3); with one run per thread also
scalar runs.  Six blocks per launch cover random runs with interior zero (and
negative) lengths, an empty block, one long run between empty ones, the
dtype's largest lengths, all-ones, and destinations that truncate, start
before the array (negative offset) or lie past its end.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.reference import run_length as ref

from ..kernelgen import module_from_source
from .run_length_kernels import CONFIGS, LENGTH_DTYPES, VALUE_DTYPES, _oob, rld_kernel

NBLOCKS = 6
THREADS = 128


def config_cases():
    """(value dtype, lengths dtype, runs, decoded, relative dtype) of every GPU kernel."""
    cases = []
    for vdt, ldt in zip(VALUE_DTYPES, LENGTH_DTYPES):
        for runs, decoded, rel in CONFIGS:
            cases.append((vdt, ldt, runs, decoded, rel))
    return cases


def make_runs(rng, vdt: str, ldt: str, threads: int, runs: int):
    """Per-block (values, lengths), ``[NBLOCKS, threads, runs]``, covering the cases in the module doc."""
    vd, ld = np.dtype(vdt), np.dtype(ldt)
    n = threads * runs
    lmax = int(np.iinfo(ld).max)
    lmin = -3 if ld.kind == "i" else 0
    values = np.empty((NBLOCKS, n), dtype=vd)
    lengths = np.zeros((NBLOCKS, n), dtype=ld)
    for b in range(NBLOCKS):
        if vd.kind == "f":
            values[b] = (rng.standard_normal(n) * 100).astype(vd)
        else:
            info = np.iinfo(vd)
            values[b] = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=vd)
    lengths[0] = rng.integers(lmin, min(lmax, 6), size=n, endpoint=True)          # interior zeros (negatives)
    lengths[1] = np.where(rng.random(n) < 0.5, lmin, 0)                            # empty block
    lengths[2, n // 3] = min(lmax, 3000)                                            # one long run, empty around it
    big = min(lmax, 300)
    lengths[3] = np.where(rng.random(n) < 0.1, big, rng.integers(0, 3, size=n))   # the dtype's largest lengths
    lengths[4] = 1
    lengths[5] = rng.integers(0, min(lmax, 4), size=n, endpoint=True)
    return values.reshape(NBLOCKS, threads, runs), lengths.reshape(NBLOCKS, threads, runs)


def run_rld(vdt, ldt, runs, decoded, rel, block=(THREADS, 1, 1), seed=0):
    from ..compiler import cuda

    rng = np.random.default_rng(seed)
    threads = int(np.prod(block))
    values, lengths = make_runs(rng, vdt, ldt, threads, runs)
    totals_ref = [ref.run_offsets(lengths[b])[1] for b in range(NBLOCKS)]
    cap = max(totals_ref) + 16
    window = threads * decoded
    woff = np.array([0, 5, -7, max(totals_ref[3] - 3, 0), 10**12, window + 1], dtype=np.int64)
    doff = np.array([0, 3, -5, cap - totals_ref[3] + 10, 0, cap + 5], dtype=np.int64)
    vd = np.dtype(vdt)
    poison = vd.type(99)
    oob = vd.type(float(_oob(vdt))) if vd.kind == "f" else vd.type(int(_oob(vdt)))
    win = np.full((NBLOCKS, window), poison, dtype=vd)
    # In the relative offsets' own dtype: numba-cuda-mlir 0.6 zero-extends an int32 local element
    # stored into an int64 array (tests/backends/test_upstream_issues.py), which would turn the
    # -1 past the total into 4294967295.
    rel_out = np.full((NBLOCKS, window), 77, dtype=np.dtype(rel))
    win0 = np.full((NBLOCKS, window), poison, dtype=vd)
    full = np.full((NBLOCKS, cap), poison, dtype=vd)
    dst = np.full((NBLOCKS, cap), poison, dtype=vd)
    dst2 = np.full((NBLOCKS, cap), poison, dtype=vd)
    dst3 = np.full((NBLOCKS, cap), poison, dtype=vd)
    totals = np.full((NBLOCKS, 4), -1, dtype=np.int64)
    kernel = rld_kernel(vdt, ldt, runs, decoded, rel)
    kernel[NBLOCKS, block](values.reshape(-1), lengths.reshape(-1), woff, doff, win, rel_out, win0, full,
                           dst, dst2, dst3, totals)
    cuda.synchronize()
    for b in range(NBLOCKS):
        vals, lens = values[b], lengths[b]
        label = f"{vdt}/{ldt} R={runs} D={decoded} block#{b} shape={block}"
        total = totals_ref[b]
        w, r, t = ref.decode_window(vals, lens, threads, decoded, window_offset=int(woff[b]), oob_default=oob,
                                    relative_dtype=rel)
        np.testing.assert_array_equal(win[b].reshape(threads, decoded), w, err_msg="window " + label)
        np.testing.assert_array_equal(rel_out[b].reshape(threads, decoded), r.astype(np.dtype(rel)),
                                      err_msg="relative offsets " + label)
        w0, _, _ = ref.decode_window(vals, lens, threads, decoded)
        np.testing.assert_array_equal(win0[b].reshape(threads, decoded), w0, err_msg="window at 0 " + label)
        expected_full = np.full(cap, poison, dtype=vd)
        expected_full[:total] = ref.decode(vals, lens)
        np.testing.assert_array_equal(full[b], expected_full, err_msg="window loop " + label)
        e1, t1 = ref.decode_into(vals, lens, np.full(cap, poison, dtype=vd), destination_offset=int(doff[b]))
        np.testing.assert_array_equal(dst[b], e1, err_msg="into at offset " + label)
        e2, _ = ref.decode_into(vals, lens, np.full(cap, poison, dtype=vd))
        np.testing.assert_array_equal(dst2[b], e2, err_msg="into depth 3 " + label)
        if runs == 1:
            np.testing.assert_array_equal(dst3[b], e2, err_msg="into with scalar runs " + label)
        assert totals[b].tolist() == [total, total, total, total if runs == 1 else 0], label


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("vdt,ldt,runs,decoded,rel", config_cases(),
                         ids=[f"{c[0]}-{c[1]}-R{c[2]}-D{c[3]}" for c in config_cases()])
def test_run_length_decode_matrix(vdt, ldt, runs, decoded, rel):
    run_rld(vdt, ldt, runs, decoded, rel)


def qualified_kernel(odt: str):
    """NVIDIA's qualified outputs: total_decoded_size and relative offsets of decoded_offset_dtype."""
    return module_from_source(f"""
@cuda.jit
def kernel(values, lengths, woff, win, rel_out, tot_out, dst, into_rel, into_tot):
    block = coop.this_block()
    tid = cuda.threadIdx.x
    nthreads = cuda.blockDim.x
    b = cuda.blockIdx.x
    v = coop.ThreadData(2)
    l = coop.ThreadData(2)
    coop.load(block, values, v, offset=b * nthreads * 2)
    coop.load(block, lengths, l, offset=b * nthreads * 2)
    rel = coop.ThreadData(3, dtype=np.{odt})
    tot = coop.ThreadData(1, dtype=np.{odt})
    w = coop.run_length_decode(block, v, l, decoded_items_per_thread=3, decoded_window_offset=woff[b],
                               relative_offsets=rel, total_decoded_size=tot, decoded_offset_dtype=np.{odt})
    for i in range(3):
        win[b, tid * 3 + i] = w[i]
        rel_out[b, tid * 3 + i] = rel[i]
    tot_out[b, tid] = tot[0]
    into_tot[b, tid] = coop.run_length_decode_into(block, v, l, dst[b], relative_offsets=into_rel[b],
                                                   destination_offset=woff[b] - 5, decoded_offset_dtype=np.{odt})
""").kernel


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("odt", ["uint32", "uint64"])
def test_total_decoded_size_and_decoded_offset_dtype(odt):
    from ..compiler import cuda

    rng = np.random.default_rng(7)
    values, lengths = make_runs(rng, "int32", "int32", THREADS, 2)
    totals_ref = [ref.run_offsets(lengths[b])[1] for b in range(NBLOCKS)]
    cap = max(totals_ref) + 8
    woff = np.array([0, 5, 1000, 2, 10**12, 7], dtype=np.int64)
    win = np.full((NBLOCKS, THREADS * 3), 99, dtype=np.int32)
    rel_out = np.full((NBLOCKS, THREADS * 3), 5, dtype=odt)
    tot_out = np.full((NBLOCKS, THREADS), 3, dtype=odt)
    dst = np.full((NBLOCKS, cap), 99, dtype=np.int32)
    into_tot = np.full((NBLOCKS, THREADS), 3, dtype=odt)
    into_rel = np.full((NBLOCKS, cap - 100), 77, dtype=odt)  # shorter than dst: its own bounds apply
    qualified_kernel(odt)[NBLOCKS, THREADS](values.reshape(-1), lengths.reshape(-1), woff, win, rel_out, tot_out,
                                            dst, into_rel, into_tot)
    cuda.synchronize()
    for b in range(NBLOCKS):
        label = f"{odt} block#{b}"
        w, r, _ = ref.decode_window(values[b], lengths[b], THREADS, 3, window_offset=int(woff[b]),
                                    relative_dtype=odt)
        np.testing.assert_array_equal(win[b].reshape(THREADS, 3), w, err_msg="window " + label)
        np.testing.assert_array_equal(rel_out[b].reshape(THREADS, 3), r, err_msg="relative offsets " + label)
        assert (tot_out[b] == totals_ref[b]).all(), label  # every thread, also for an empty window
        assert (into_tot[b] == totals_ref[b]).all() and into_tot.dtype == np.dtype(odt), label
        off = int(woff[b]) - 5
        e, _ = ref.decode_into(values[b], lengths[b], np.full(cap, 99, dtype=np.int32), destination_offset=off)
        np.testing.assert_array_equal(dst[b], e, err_msg="into " + label)
        index_in_run = np.concatenate([np.arange(max(int(n), 0)) for n in lengths[b].reshape(-1)] + [[]])
        expected_rel = np.full(cap - 100, 77, dtype=odt)
        for p, r in enumerate(index_in_run.astype(np.int64)):
            if 0 <= off + p < len(expected_rel):
                expected_rel[off + p] = r
        np.testing.assert_array_equal(into_rel[b], expected_rel, err_msg="into relative offsets " + label)


def wide_kernel():
    """Outputs in the run lengths' dtype (NVIDIA's tests): relative offsets, total, window offset."""
    return module_from_source("""
@cuda.jit
def kernel(values, lengths, woff, win, rel_out, tot_out):
    block = coop.this_block()
    tid = cuda.threadIdx.x
    b = cuda.blockIdx.x
    v = coop.ThreadData(2, dtype=values.dtype)
    l = coop.ThreadData(2, dtype=lengths.dtype)
    coop.load(block, values, v, offset=b * cuda.blockDim.x * 2)
    coop.load(block, lengths, l, offset=b * cuda.blockDim.x * 2)
    rel = coop.ThreadData(3, dtype=lengths.dtype)
    tot = coop.ThreadData(1, dtype=lengths.dtype)
    w = coop.run_length_decode(block, v, l, decoded_items_per_thread=3, decoded_window_offset=woff[b],
                               relative_offsets=rel, total_decoded_size=tot)
    for i in range(3):
        win[b, tid * 3 + i] = w[i]
        rel_out[b, tid * 3 + i] = rel[i]
    tot_out[b, tid] = tot[0]
""").kernel


@pytest.mark.gpu
@pytest.mark.parametrize("ldt", ["int32", "int64", "uint32", "uint64"])
def test_window_offset_total_and_relative_offsets_in_the_lengths_dtype(ldt):
    """Signed totals/relative offsets (-1 past the total) and a window offset of the lengths' dtype,
    uint64 included: block 0 has ordinary runs, block 1 one run of the dtype's maximum length
    (a window at its very end), and for uint64 offsets near 2**64 that must not wrap around.
    Checked mode (the default): every offset here is valid, uint64 ones above 2**63 included
    (NVIDIA's tests window there), so none may trap."""
    from ..compiler import cuda

    ld = np.dtype(ldt)
    lmax = int(np.iinfo(ld).max)
    threads, rng = 64, np.random.default_rng(5)
    values = rng.integers(1, 200, size=(4, threads * 2)).astype(np.uint8)
    lengths = np.zeros((4, threads * 2), dtype=ld)
    lengths[0, :9] = rng.integers(1, 5, size=9)
    lengths[1:, 0] = lmax
    woff = np.array([4, lmax - 5, lmax - 1, lmax], dtype=ld)
    if ldt == "uint64":
        woff[2] = 2**64 - 5  # 5 short of the end: block 0's window would wrap without saturation
        lengths[2, 0] = 3
    win = np.full((4, threads * 3), 77, dtype=np.uint8)
    rel_out = np.zeros((4, threads * 3), dtype=ld)
    tot_out = np.zeros((4, threads), dtype=ld)
    wide_kernel()[4, threads](values.reshape(-1), lengths.reshape(-1), woff, win, rel_out, tot_out)
    cuda.synchronize()
    for b in range(4):
        runs_b = lengths[b].reshape(threads, 2)
        w, r, total = ref.decode_window(values[b].reshape(threads, 2), runs_b, threads, 3,
                                        window_offset=int(woff[b]), relative_dtype=ldt)
        label = f"{ldt} block#{b} offset={int(woff[b])}"
        np.testing.assert_array_equal(win[b].reshape(threads, 3), w, err_msg="window " + label)
        np.testing.assert_array_equal(rel_out[b].reshape(threads, 3), r, err_msg="relative " + label)
        assert (tot_out[b] == min(total, lmax)).all(), label


def uint64_offset_kernel():
    return module_from_source("""
@cuda.jit
def kernel(values, lengths, doff, dst, totals):
    block = coop.this_block()
    b = cuda.blockIdx.x
    v = coop.ThreadData(2, dtype=values.dtype)
    l = coop.ThreadData(2, dtype=lengths.dtype)
    coop.load(block, values, v, offset=b * cuda.blockDim.x * 2)
    coop.load(block, lengths, l, offset=b * cuda.blockDim.x * 2)
    totals[b, cuda.threadIdx.x] = coop.run_length_decode_into(block, v, l, dst[b], destination_offset=doff[b])
""").kernel


@pytest.mark.gpu
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked"])
def test_into_takes_a_uint64_destination_offset(checked, monkeypatch):
    """NVIDIA's run-length offsets go up to uint64: a uint64 ``destination_offset`` is compared
    with the destination's length before it narrows.  Checked mode (the default): offsets up
    to an exact fit decode as the reference does.  Unchecked: offsets at or past the end,
    2**63 + 1 and 2**64 - 1 among them (int64 -1 if narrowed first), write nothing."""
    from ..compiler import cuda

    if not checked:
        monkeypatch.setenv("CUDA_COOP_CHECKED", "0")
    rng = np.random.default_rng(17)
    values = rng.integers(-1000, 1000, size=(NBLOCKS, THREADS * 2)).astype(np.int16)
    lengths = rng.integers(1, 4, size=(NBLOCKS, THREADS * 2)).astype(np.uint32)
    lengths[1, 100:] = 0  # trailing empty runs
    totals_ref = [int(lengths[b].sum()) for b in range(NBLOCKS)]
    cap = max(totals_ref) + 40
    if checked:
        doff = [0, 1, 7, cap - totals_ref[3], 40, 2]
    else:
        doff = [2**63 + 1, 2**64 - 1, cap + 5, cap, 2**63 - 1, 3]
    doff = np.array(doff, dtype=np.uint64)
    dst = np.full((NBLOCKS, cap), -7, dtype=np.int16)
    totals = np.full((NBLOCKS, THREADS), -1, dtype=np.int64)
    uint64_offset_kernel()[NBLOCKS, THREADS](values.reshape(-1), lengths.reshape(-1), doff, dst, totals)
    cuda.synchronize()
    for b in range(NBLOCKS):
        expected, total = ref.decode_into(values[b].reshape(THREADS, 2), lengths[b].reshape(THREADS, 2),
                                          np.full(cap, -7, dtype=np.int16), destination_offset=int(doff[b]))
        np.testing.assert_array_equal(dst[b], expected, err_msg=f"block#{b} destination_offset={int(doff[b])}")
        assert total == totals_ref[b] and (totals[b] == total).all(), b


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
def test_run_length_decode_multidimensional_block():
    run_rld("float32", "int32", 3, 4, "int32", block=(8, 4, 2), seed=4)


# --------------------------------------------------------------------------------------
# The reference model itself
# --------------------------------------------------------------------------------------

@pytest.mark.unit
def test_reference_is_np_repeat_with_clamped_lengths():
    values = np.array([[10, 20], [30, 40]], dtype=np.int16)
    lengths = np.array([[2, 0], [-3, 3]], dtype=np.int8)
    np.testing.assert_array_equal(ref.decode(values, lengths), np.repeat([10, 20, 30, 40], [2, 0, 0, 3]))
    offsets, total = ref.run_offsets(lengths)
    assert offsets.tolist() == [0, 2, 2, 2] and total == 5
    # Empty runs never own a position: position 2 is run 3's first item.
    assert ref.run_of_position(lengths, [0, 1, 2, 4, 5]).tolist() == [0, 0, 3, 3, -1]


@pytest.mark.unit
def test_reference_window_is_blocked_with_defaults_past_the_end():
    values = np.array([[1], [2]], dtype=np.float32)
    lengths = np.array([[3], [2]], dtype=np.int32)
    w, rel, total = ref.decode_window(values, lengths, 2, 2, window_offset=2, oob_default=-1,
                                      relative_dtype="uint16")
    assert total == 5
    assert w.tolist() == [[1, 2], [2, -1]]  # positions 2, 3 | 4, 5
    assert rel.tolist() == [[2, 0], [1, 65535]]
    assert ref.decode_window(values, lengths, 2, 2, window_offset=-9)[0].tolist() == [[1, 1], [1, 2]]


@pytest.mark.unit
def test_reference_signed_relative_offsets_and_huge_window_offsets():
    values = np.array([[1], [2]], dtype=np.uint8)
    lengths = np.array([[2**64 - 1], [0]], dtype=np.uint64)
    w, rel, total = ref.decode_window(values, lengths, 2, 2, window_offset=2**64 - 3, relative_dtype="int64")
    assert total == 2**64 - 1
    assert w.tolist() == [[1, 1], [0, 0]]  # positions 2**64-3, -2 | -1 (past the total), 2**64
    assert rel.tolist() == [[-3, -2], [-1, -1]]  # index 2**64-3 as int64 is -3; past the total: -1
    _, rel, _ = ref.decode_window(values, np.array([[1], [0]], np.int32), 2, 2, relative_dtype="int32")
    assert rel.tolist() == [[0, -1], [-1, -1]]


@pytest.mark.unit
def test_reference_into_writes_only_what_fits():
    values = np.array([[5], [6]], dtype=np.int64)
    lengths = np.array([[2], [2]], dtype=np.int64)
    out, total = ref.decode_into(values, lengths, np.zeros(3, np.int64), destination_offset=-1)
    assert total == 4 and out.tolist() == [5, 6, 6]
    out, total = ref.decode_into(values, lengths, np.zeros(3, np.int64), destination_offset=2)
    assert total == 4 and out.tolist() == [0, 0, 5]
