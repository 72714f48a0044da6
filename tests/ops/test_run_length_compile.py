"""Run-length decode compiles to cubin with its provider inlined (no GPU), including the GPU test kernels."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cuda.coop.backends._binary import remaining_calls

from .run_length_kernels import CONFIGS, LENGTH_DTYPES, VALUE_DTYPES, kernel_argtypes, rld_kernel
from .cubin_checks import compile_cubin, sass_calls

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def _no_calls(kb):
    assert kb.cubin[:4] == b"\x7fELF"
    assert not remaining_calls(kb.ptx), "a call survived LTO"
    assert "coop_run_length" not in kb.ptx


@pytest.mark.parametrize("vdt,ldt", list(zip(VALUE_DTYPES, LENGTH_DTYPES)))
def test_gpu_kernel_compiles(vdt, ldt):
    """The GPU matrix kernel (three-run config: windows, window loop, both _into forms) per value dtype."""
    runs, decoded, rel = CONFIGS[0]
    kb = compile_cubin(rld_kernel(vdt, ldt, runs, decoded, rel), kernel_argtypes(vdt, ldt), cc=(9, 0), block=128)
    _no_calls(kb)
    assert kb.shared_bytes() > 0


@pytest.mark.parametrize("vdt,ldt,cc,block", [
    ("int8", "uint16", (8, 0), 128), ("float64", "int64", (9, 0), 128), ("float32", "int32", (9, 0), (8, 4, 2)),
])
def test_gpu_kernel_other_configs(vdt, ldt, cc, block, nvdisasm):
    runs, decoded, rel = CONFIGS[1] if block == 128 else CONFIGS[0]
    kb = compile_cubin(rld_kernel(vdt, ldt, runs, decoded, rel), kernel_argtypes(vdt, ldt), cc=cc, block=block)
    _no_calls(kb)
    if nvdisasm:
        sass = kb.sass()
        calls = sass_calls(sass)
        assert not calls, calls


def _plan_into(vdt="float32", ldt="int32", runs=2, decoded=None):
    from cuda.coop.ops import run_length as rl
    from cuda.coop.core.spec import ArrayArg, GroupArg, PayloadArg, ScalarArg

    kw = {} if decoded is None else {"decoded_items_per_thread": ScalarArg(np.dtype("int64"), decoded)}
    return rl.plan_run_length_decode_into(GroupArg("block"), PayloadArg(np.dtype(vdt), runs),
                                          PayloadArg(np.dtype(ldt), runs), ArrayArg(np.dtype(vdt), 1, True), **kw)


@pytest.mark.parametrize("odt", ["uint32", "uint64"])
def test_total_decoded_size_is_written(odt):
    """total_decoded_size= reaches the provider and its body writes the total (GPU-found bug:
    the dtype once filled the wrong params field and the output was never written)."""
    from cuda.coop.ops import run_length as rl
    from cuda.coop.core.spec import DtypeArg, GroupArg, LaunchFacts, PayloadArg, ScalarArg

    dt = np.dtype(odt)
    plan = rl.plan_run_length_decode(GroupArg("block"), PayloadArg(np.dtype("int32"), 2),
                                     PayloadArg(np.dtype("int32"), 2),
                                     decoded_items_per_thread=ScalarArg(np.dtype("int64"), 3),
                                     total_decoded_size=PayloadArg(dt, 1), decoded_offset_dtype=DtypeArg(dt))
    assert plan.params.total_payload == odt and not plan.params.into_relative
    body = plan.generate(plan, LaunchFacts(block=(128, 1, 1), cc=(9, 0))).body
    assert "total_item[0] =" in body


def test_destination_length_is_an_operand():
    """The provider receives the destination's length (the generic "extent" operand)."""
    plan = _plan_into()
    extents = [op for op in plan.operands if op.passing == "extent"]
    assert len(extents) == 1 and extents[0].source == "destination"
    assert extents[0].cxx_param() == "long long dst_len"


@pytest.mark.parametrize("vdt,expected", [("int8", 16), ("float32", 4), ("float64", 2)])
def test_default_window_depth_is_16_bytes(vdt, expected):
    assert _plan_into(vdt).params.decoded == expected


def test_offsets_are_32_bit_only_when_no_total_can_overflow():
    from cuda.coop.ops.run_length import offset_dtype

    assert offset_dtype("uint16", 1024, 4) == np.dtype("uint32")
    assert offset_dtype("int8", 128, 1) == np.dtype("uint32")
    assert offset_dtype("int32", 128, 1) == np.dtype("uint64")
    assert offset_dtype("uint16", 1024, 128) == np.dtype("uint64")


def test_into_vectorizes_whole_windows():
    """A float32 destination gets 128-bit stores for whole aligned windows."""
    from ..compiler import types

    from ..kernelgen import module_from_source

    module = module_from_source("""
@cuda.jit
def kernel(values, lengths, out, total):
    block = coop.this_block()
    v = coop.ThreadData(2)
    l = coop.ThreadData(2)
    coop.load(block, values, v)
    coop.load(block, lengths, l)
    t = coop.run_length_decode_into(block, v, l, out)
    if cuda.threadIdx.x == 0:
        total[0] = t
""")
    kb = compile_cubin(module.kernel, (types.float32[::1], types.uint16[::1], types.float32[::1], types.int64[::1]),
                       cc=(9, 0), block=256)
    _no_calls(kb)
    assert "st.global.v4" in kb.ptx
    # The run table: 512 runs x (4-byte value + 4-byte offset), no more.
    assert kb.shared_bytes() == 512 * 8


@pytest.mark.parametrize("cc", [(10, 0), (12, 0)], ids=["sm100", "sm120"])
def test_newer_architectures(cc):
    kb = compile_cubin(rld_kernel("uint32", "uint32", 1, 5, "uint16"), kernel_argtypes("uint32", "uint32"), cc=cc,
                       block=128)
    assert f".target sm_{cc[0]}{cc[1]}" in kb.ptx
    _no_calls(kb)


# --------------------------------------------------------------------------------------
# The decode walk, run on the host: the generated provider body compiled by g++ with
# the block emulated one thread at a time (the run table is filled from the NumPy
# model, standing in for cub::BlockScan).  Finds logic errors without a GPU.
# --------------------------------------------------------------------------------------

_HOST_PRELUDE = r"""
#include <cstdio>
#include <cstring>
#define __device__
#define __forceinline__ inline
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
static unsigned long long g_total;
"""


def _host_program(plan, threads, vcxx):
    from cuda.coop.core.spec import LaunchFacts

    cpp = plan.generate(plan, LaunchFacts(block=(threads, 1, 1), cc=(9, 0)))
    decls = re.sub(r"using Scan = [^;]*;", "struct Scan { struct TempStorage { int unused; }; };", cpp.decls)
    decls = decls[:decls.index("__device__ __forceinline__ Off prepare")] + decls[decls.index("// The last run"):]
    body = cpp.body.replace("prepare(ts, values, lengths, linear_tid)", "g_total")
    window = plan.params.op == "window"
    run = (r"""
    long long window_offset = arg; V decoded[D]; int relative[D]; long long totv; long long* total_out = &totv;
    { BODY }
    for (int i = 0; i < D; ++i) printf("%.17g %d\n", (double)decoded[i], relative[i]);""" if window else r"""
    DST_OFFSET dst_offset = (DST_OFFSET)arg; long long dst_len = cap; V* out_dst = dst; long long totv; long long* total_out = &totv;
    { BODY }""").replace("BODY", body).replace(
        "DST_OFFSET", "unsigned long long" if plan.params.offset_unsigned else "long long")
    tail = "" if window else r'for (long long i = 0; i < cap; ++i) printf("%.17g\n", (double)dst[i]);'
    return _HOST_PRELUDE + f"constexpr int BLOCK_THREADS = {threads};\n" + decls + r"""
alignas(16) static V dst[1 << 16];
int main() {
  int cases; scanf("%d", &cases);
  while (cases--) {
    static TempStorage tsx;
    long long arg, cap; scanf("%llu %lld %lld", &g_total, &arg, &cap);
    for (int i = 0; i < RUNS; ++i) { double v; unsigned long long o; scanf("%lf %llu", &v, &o);
                                     tsx.runs.values[i] = V(v); tsx.runs.offsets[i] = Off(o); }
    for (long long i = 0; i < cap; ++i) dst[i] = V(123);
    long long totals[BLOCK_THREADS];
    for (unsigned linear_tid = 0; linear_tid < BLOCK_THREADS; ++linear_tid) {
      void* temp = &tsx;""" + run + r"""
      totals[linear_tid] = totv;
    }
    """ + tail + r"""
    printf("T %lld\n", totals[0]);
  }
}
"""


@pytest.mark.parametrize("op,vdt,ldt,runs,decoded,threads", [
    ("window", "float32", "int32", 3, 4, 8), ("window", "int8", "uint16", 1, 5, 6),
    # a uint64 window offset (NVIDIA's uint64 lengths): offsets near 2**64 never wrap around
    ("window_u64", "uint8", "uint64", 2, 3, 8),
    ("into", "float64", "int8", 2, 1, 5), ("into", "uint8", "int64", 3, 16, 4), ("into", "int16", "uint8", 2, 3, 7),
    # a uint64 destination offset: compared with the length before it narrows (2**64 - 1 is not -1)
    ("into_u64", "int16", "uint32", 2, 3, 7),
])
def test_decode_walk_on_the_host(op, vdt, ldt, runs, decoded, threads, tmp_path):
    import shutil
    import subprocess

    from cuda.coop._dtypes import cxx_type
    from cuda.coop.ops import run_length as rl
    from cuda.coop.core.spec import ArrayArg, GroupArg, PayloadArg, ScalarArg
    from cuda.coop.reference import run_length as ref

    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    i64, vd, ld = np.dtype("int64"), np.dtype(vdt), np.dtype(ldt)
    d = ScalarArg(i64, decoded)
    unsigned_offset = op.endswith("_u64")
    op = op.removesuffix("_u64")
    if op == "window":
        woff_t = np.dtype("uint64") if unsigned_offset else i64
        plan = rl.plan_run_length_decode(GroupArg("block"), PayloadArg(vd, runs), PayloadArg(ld, runs),
                                         decoded_items_per_thread=d, decoded_window_offset=ScalarArg(woff_t),
                                         relative_offsets=PayloadArg(np.dtype("int32"), decoded),
                                         return_total=ScalarArg(None, True, "bool"))
    else:
        plan = rl.plan_run_length_decode_into(GroupArg("block"), PayloadArg(vd, runs), PayloadArg(ld, runs),
                                              ArrayArg(vd, 1, True), decoded_items_per_thread=d,
                                              destination_offset=ScalarArg(np.dtype("uint64") if unsigned_offset
                                                                           else i64))
    source = tmp_path / "walk.cpp"
    source.write_text(_host_program(plan, threads, cxx_type(vd)))
    exe = tmp_path / "walk"
    subprocess.run(["g++", "-O1", "-std=c++17", "-w", "-o", str(exe), str(source)], check=True)
    rng = np.random.default_rng(7)
    cases, expected = [], []
    window = threads * decoded
    for trial in range(8):
        lengths = rng.integers(-3 if ld.kind == "i" else 0, 6, size=threads * runs)
        if trial == 0:
            lengths[:] = 0
        elif trial == 1:
            lengths[:] = 0
            lengths[len(lengths) // 2] = 40
        elif trial == 2:
            lengths[:] = 1
        lengths = lengths.astype(ld).reshape(threads, runs)
        if unsigned_offset and op == "window" and trial == 3:
            lengths[:] = 0
            lengths[0, 0] = np.iinfo(ld).max  # the largest total: a window at its end
        values = rng.integers(1, 100, size=threads * runs).astype(vd).reshape(threads, runs)
        offsets, total = ref.run_offsets(lengths)
        table = " ".join(f"{float(v)} {int(o)}" for v, o in zip(values.reshape(-1), offsets))
        if op == "window":
            offsets_tried = (0, 3, -5, total - 2, total + 7, window, 10**12)
            if unsigned_offset:
                offsets_tried = (0, 3, max(total - 2, 0), total + 7, total - 6, 2**63 + 1, 2**64 - 5, 2**64 - 1)
            for woff in offsets_tried:
                woff %= 2**64 if unsigned_offset else 2**128
                # the harness reads a long long: a uint64 offset travels as its bit pattern
                cases.append(f"{total} {woff - 2**64 if woff >= 2**63 else woff} 0 {table}")
                expected.append(ref.decode_window(values, lengths, threads, decoded, window_offset=woff,
                                                  relative_dtype="int32") + (None,))
        else:
            tried = ((0, total + 5), (3, total), (-4, total + 3), (2, 1), (total + 3, total), (0, 0),
                     (-10**15, total), (1, 2 * window + 3))
            if unsigned_offset:
                tried = ((0, total + 5), (3, total), (2, 1), (total + 3, total), (0, 0), (1, 2 * window + 3),
                         (2**63 - 1, total), (2**63 + 1, total + 3), (2**64 - 1, total + 3))
            for doff, cap in tried:
                # the harness reads a long long: a uint64 offset travels as its bit pattern
                cases.append(f"{total} {doff - 2**64 if doff >= 2**63 else doff} {max(cap, 0)} {table}")
                expected.append(ref.decode_into(values, lengths, np.full(max(cap, 0), 123, dtype=vd),
                                                destination_offset=doff))
    out = subprocess.run([str(exe)], input=f"{len(cases)}\n" + "\n".join(cases), capture_output=True, text=True,
                         check=True).stdout.split("\n")
    pos = 0
    for exp in expected:
        if op == "window":
            w, r, total, _ = exp
            rows = [out[pos + k].split() for k in range(threads * decoded)]
            pos += threads * decoded
            np.testing.assert_array_equal(np.array([float(a) for a, _ in rows]).reshape(threads, decoded),
                                          w.astype(float))
            np.testing.assert_array_equal(np.array([int(b) for _, b in rows]).reshape(threads, decoded), r)
        else:
            dst, total = exp
            got = np.array([float(x) for x in out[pos:pos + len(dst)]])
            pos += len(dst)
            np.testing.assert_array_equal(got, dst.astype(float))
        assert out[pos] == f"T {min(total, 2**63 - 1)}"  # the int64 total saturates
        pos += 1
