"""Histogram compiles to cubin with CUB inlined (no GPU), including every GPU test kernel's shape."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ..compiler import SOURCE_FILES_FOR_MLIR

from cuda.coop.backends._binary import remaining_calls

from .histogram_kernels import SAMPLE_DTYPES, histogram_kernel, kernel_argtypes
from .cubin_checks import compile_cubin, sass_calls

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def _no_calls(kb):
    assert kb.cubin[:4] == b"\x7fELF"
    assert not remaining_calls(kb.ptx), "a call survived LTO"
    assert "coop_histogram" not in kb.ptx


@pytest.mark.parametrize("dtype", SAMPLE_DTYPES)
def test_gpu_kernel_compiles(dtype):
    """The GPU matrix kernel (both algorithms, all five cases) for every sample dtype."""
    kb = compile_cubin(histogram_kernel(dtype, 4), kernel_argtypes(dtype), cc=(9, 0), block=128)
    _no_calls(kb)
    assert kb.shared_bytes() > 0
    assert "atom.shared" in kb.ptx or "red.shared" in kb.ptx


@pytest.mark.parametrize("dtype,items,cc,block", [
    ("uint8", 16, (8, 0), 128), ("int64", 1, (9, 0), 128), ("int32", 4, (9, 0), (16, 4, 2)),
])
def test_gpu_kernel_other_shapes(dtype, items, cc, block, nvdisasm):
    kb = compile_cubin(histogram_kernel(dtype, items), kernel_argtypes(dtype), cc=cc, block=block)
    _no_calls(kb)
    if nvdisasm:
        sass = kb.sass()
        # ptxas may branch to a local label around a predicated barrier
        # (``CALL.REL.NOINC `(.L_x_N)``); a call to any named function would be ours.
        calls = sass_calls(sass)
        assert not calls, calls
        assert "ATOMS" in sass


def _single(body, sample="uint8", items=16, block=256):
    from ..compiler import types

    from ..kernelgen import module_from_source

    module = module_from_source(f"""
@cuda.jit
def kernel(samples, out):
    block = coop.this_block()
    s = coop.ThreadData({items})
    coop.load(block, samples, s, algorithm="striped")
{body}
""")
    return compile_cubin(module.kernel, (getattr(types, sample)[::1], types.int32[::1]), cc=(9, 0), block=block)


def test_uint8_256_bins_is_cubs_unguarded_atomic_loop():
    """uint8 samples into 256 bins cannot be out of range: no compare before the atomics."""
    kb = _single("""
    h = coop.histogram(block, s, bins=256)
    coop.store(block, out, h, algorithm="striped")
""")
    _no_calls(kb)
    # 256 x int32 counters, nothing else (the atomic algorithm has no CUB scratch).
    assert kb.shared_bytes() == 1024
    assert len(re.findall(r"atom\.shared\.add|red\.shared\.add", kb.ptx)) >= 16


def test_sort_algorithm_sorts_narrow_keys():
    """int32 samples into 100 bins: the sort runs on 8-bit keys (the bin index plus one spill bin)."""
    from cuda.coop.ops import histogram as h
    from cuda.coop.core.spec import GroupArg, LaunchFacts, PayloadArg, ScalarArg, StringArg

    plan = h.plan_histogram(GroupArg("block"), PayloadArg(np.dtype("int32"), 4), bins=ScalarArg(np.dtype("int64"), 100),
                            algorithm=StringArg("sort"))
    cpp = plan.generate(plan, LaunchFacts(block=(128, 1, 1), cc=(9, 0)))
    assert "using Key = unsigned char;" in cpp.decls and "IBINS = 101" in cpp.decls
    plan = h.plan_histogram(GroupArg("block"), PayloadArg(np.dtype("uint8"), 4), bins=ScalarArg(np.dtype("int64"), 256),
                            algorithm=StringArg("sort"))
    cpp = plan.generate(plan, LaunchFacts(block=(128, 1, 1), cc=(9, 0)))
    assert "using Key = unsigned char;" in cpp.decls and "IBINS = 256" in cpp.decls


def test_accumulate_updates_in_place_and_returns_none():
    kb = _single("""
    acc = coop.ThreadData(1, dtype=np.int32)
    acc[0] = 0
    r = coop.histogram(block, s, bins=200, accumulate=acc, algorithm="sort")
    coop.histogram(block, s, bins=200, accumulate=acc)
    coop.store(block, out, acc, algorithm="striped")
""")
    _no_calls(kb)


def test_explicit_temp_storage_without_barrier_between_atomic_calls():
    kb = _single("""
    ts = coop.TempStorage(auto_sync=False)
    acc = coop.ThreadData(1, dtype=np.int32)
    acc[0] = 0
    for _ in range(4):
        coop.histogram(block, s, bins=256, accumulate=acc, temp_storage=ts)
    cuda.syncthreads()
    coop.store(block, out, acc, algorithm="striped")
""")
    _no_calls(kb)
    assert kb.shared_bytes() == 1024


def test_many_tiles_kernel_compiles():
    """The payload-adding GPU test's kernel, so the device run finds only numbers."""
    from ..compiler import types
    from ..kernelgen import module_from_source
    from . import histogram_kernels as t

    module = module_from_source(t.MANY_TILES_SOURCE)
    kb = compile_cubin(module.kernel, (types.uint8[::1], types.int64[::1], types.int64), cc=(9, 0), block=128)
    _no_calls(kb)


@pytest.mark.parametrize("cc", [(10, 0), (12, 0)], ids=["sm100", "sm120"])
def test_newer_architectures(cc):
    kb = compile_cubin(histogram_kernel("int16", 4), kernel_argtypes("int16"), cc=cc, block=128)
    assert f".target sm_{cc[0]}{cc[1]}" in kb.ptx
    _no_calls(kb)


@pytest.mark.only_on("numba-cuda-mlir", SOURCE_FILES_FOR_MLIR)
@pytest.mark.parametrize("algorithm", ["atomic", "sort"])
def test_benchmark_kernel_compiles(algorithm):
    """benchmarks/bench_histogram.py's kernel, so the device run measures instead of debugging."""
    import importlib.util
    from pathlib import Path

    from ..compiler import types

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_histogram.py"
    spec = importlib.util.spec_from_file_location("bench_histogram_for_test", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    kernel = bench.coop_kernel(algorithm, 256, 32)
    kb = compile_cubin(kernel, (types.uint8[::1], types.uint32[::1], types.int64), cc=(9, 0), block=256)
    _no_calls(kb)
    assert "ld.global.v4" in kb.ptx or "ld.global.nc.v4" in kb.ptx
    if algorithm == "atomic":
        assert kb.shared_bytes() == 1024


def test_builtin_int_means_int32_counters():
    """counter_dtype=int (and ThreadData(dtype=int)) are int32, as on the host."""
    kb = _single("""
    h = coop.histogram(block, s, bins=256, counter_dtype=int)
    acc = coop.ThreadData(1, dtype=int)
    acc[0] = 0
    coop.histogram(block, s, bins=256, accumulate=acc)
    for i in range(1):
        h[i] += acc[i]
    coop.store(block, out, h, algorithm="striped")
""")
    _no_calls(kb)
