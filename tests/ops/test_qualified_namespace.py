"""cuda.coop.numba_mlir's own names: the local/shared memory namespaces and the payload protocols."""

from __future__ import annotations

import numpy as np
import pytest

from cuda import coop

from ..kernelgen import module_from_source

from ..compiler import require  # noqa: E402

require()


@pytest.mark.unit
def test_protocols_match_the_descriptors():
    assert isinstance(coop.ThreadData(4, dtype=np.int32), coop.ThreadDataLike)
    assert isinstance(coop.TempStorage(), coop.TempStorageLike)
    assert not isinstance(np.zeros(4), coop.ThreadDataLike)  # no items_per_thread
    assert not isinstance(coop.ThreadData(4), coop.TempStorageLike)


@pytest.mark.unit
def test_thread_data_items_exist_only_in_a_kernel():
    items = coop.ThreadData(4, dtype=np.int32)
    with pytest.raises(coop.CoopCompilerContextRequiredError, match=r"inside a @cuda.jit kernel"):
        items[0]
    with pytest.raises(coop.CoopCompilerContextRequiredError, match=r"written on the host"):
        items[1] = 3


@pytest.mark.unit
def test_memory_namespaces_are_the_compilers():
    from ..compiler import cuda

    from ..compiler import qualified

    assert qualified.local is cuda.local and qualified.shared is cuda.shared
    assert {"local", "shared", "ThreadDataLike", "TempStorageLike"} <= set(qualified.__all__)


@pytest.mark.compile
def test_kernel_written_against_the_qualified_module_alone():
    """local.array payloads (with alignment) and a shared.array, all through one import."""
    from ..compiler import compile_cubin

    module = module_from_source("""
from tests.compiler import qualified as ncoop

@cuda.jit
def kernel(src, dst):
    items = ncoop.local.array(4, np.int32, alignment=16)
    ncoop.load(ncoop.this_block(), src, items, algorithm="transpose")
    total = ncoop.sum(ncoop.this_block(), items)
    seen = ncoop.shared.array(128, np.int32, alignment=16)
    seen[cuda.threadIdx.x] = total
    cuda.syncthreads()
    for i in range(4):
        items[i] += seen[(cuda.threadIdx.x + 1) % 128]
    ncoop.store(ncoop.this_block(), dst, items, algorithm="transpose")
""")
    kb = compile_cubin(module.kernel, (np.zeros(512, np.int32), np.zeros(512, np.int32)), cc=(9, 0), block=128)
    assert kb.calls() == 0
    assert "bar.sync" in kb.ptx


# ---- NVIDIA's algorithm enums and its block_prefix_callback_op= spelling, on both compilers ----

from ..backends_param import COMPILERS, compile_for, gpu_for, kernel_for, types_for  # noqa: E402

_ENUMS_SOURCE = """
import {qualified} as M


@cuda.jit(device=True)
def running_prefix(aggregate):
    return aggregate - aggregate + 1000


@cuda.jit
def kernel(source, copied, scanned, prefixed, counts, total, warp_copy):
    block = M.this_block()
    t = cuda.threadIdx.x
    items = M.ThreadData(4)
    M.load(block, source, items, algorithm=M.BlockLoadAlgorithm.TRANSPOSE)
    M.store(block, copied, items, algorithm=M.BlockStoreAlgorithm.WARP_TRANSPOSE)
    sums = M.exclusive_sum(block, items, algorithm=M.BlockScanAlgorithm.RAKING_MEMOIZE)
    M.store(block, scanned, sums)
    shifted = M.inclusive_sum(block, items, block_prefix_callback_op=running_prefix,
                              algorithm=M.BlockScanAlgorithm.WARP_SCANS)
    M.store(block, prefixed, shifted)
    histogram = M.histogram(block, items, bins=64, algorithm=M.BlockHistogramAlgorithm.SORT)
    counts[t] = histogram[0]
    whole = M.sum(block, items, broadcast=False, algorithm=M.BlockReduceAlgorithm.RAKING)
    if t == 0:
        total[0] = whole
    lane_items = M.ThreadData(2)
    M.load(M.this_warp(), source, lane_items, algorithm=M.WarpLoadAlgorithm.STRIPED)
    M.store(M.this_warp(), warp_copy, lane_items, algorithm=M.WarpStoreAlgorithm.STRIPED)
"""


def _enums_kernel(compiler):
    qualified = "cuda.coop.numba_mlir" if compiler == "numba-cuda-mlir" else "cuda.coop.numba_cuda"
    return kernel_for(compiler, _ENUMS_SOURCE.format(qualified=qualified)).kernel


@pytest.mark.unit
def test_the_qualified_namespaces_export_nvidias_algorithm_enums():
    import cuda.coop._enums as enums

    names = {"BlockLoadAlgorithm", "BlockStoreAlgorithm", "WarpLoadAlgorithm", "WarpStoreAlgorithm",
             "BlockScanAlgorithm", "BlockHistogramAlgorithm"}  # NVIDIA's qualified __all__
    assert names <= set(enums.__all__)
    assert int(enums.BlockScanAlgorithm.WARP_SCANS) == 2 and int(enums.BlockHistogramAlgorithm.ATOMIC) == 1
    assert str(enums.BlockLoadAlgorithm.WARP_TRANSPOSE) == "::cub::BLOCK_LOAD_WARP_TRANSPOSE"
    from ..compiler import qualified

    assert names <= set(qualified.__all__)
    assert qualified.BlockScanAlgorithm is enums.BlockScanAlgorithm


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS)
def test_enum_members_and_the_prefix_alias_compile(compiler):
    T = types_for(compiler)
    arr = T.int32[::1]
    compile_for(compiler, _enums_kernel(compiler), (arr,) * 7, cc=(9, 0), block=64)


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", COMPILERS)
def test_enum_members_and_the_prefix_alias_on_the_device(compiler):
    gpu_for(compiler)
    rng = np.random.default_rng(7)
    source = rng.integers(0, 64, size=256).astype(np.int32)
    copied, scanned, prefixed, warp_copy = (np.full_like(source, -1) for _ in range(4))
    counts = np.full(64, -1, np.int32)
    total = np.full(1, -1, np.int32)
    _enums_kernel(compiler)[1, 64](source, copied, scanned, prefixed, counts, total, warp_copy)
    np.testing.assert_array_equal(copied, source)
    np.testing.assert_array_equal(scanned, np.r_[0, np.cumsum(source)[:-1]])
    np.testing.assert_array_equal(prefixed, np.cumsum(source) + 1000)
    np.testing.assert_array_equal(counts, np.bincount(source, minlength=64))
    assert total[0] == source.sum()
    # warp-striped over each warp's 64 items: the same layout back
    np.testing.assert_array_equal(warp_copy[:128], source[:128])


@pytest.mark.compile
def test_prefix_op_and_its_alias_together_are_refused():
    from ..compiler import compile_cubin, types

    module = module_from_source("""
@cuda.jit(device=True)
def prefix(aggregate):
    return aggregate


@cuda.jit
def kernel(src, dst):
    out = coop.exclusive_sum(coop.this_block(), src[cuda.threadIdx.x], prefix_op=prefix,
                             block_prefix_callback_op=prefix)
    dst[cuda.threadIdx.x] = out
""")
    with pytest.raises(coop.ConflictingArgumentsError, match="block_prefix_callback_op= and prefix_op="):
        compile_cubin(module.kernel, (types.int32[::1],) * 2, cc=(9, 0), block=64)


# ---- the qualified storage constructors in kernels (NVIDIA's test_storage_foundation and
# test_thread_data): keyword extents, alignas=, and a TempStorage indexed as bytes ----

_STORAGE_SOURCE = """
import {qualified} as M


@cuda.jit
def kernel(output, source):
    t = cuda.threadIdx.x
    canonical = M.ThreadData(items_per_thread=2, dtype=np.int32)
    aligned = M.ThreadData(2, np.int32, alignas=16)
    scratch = M.TempStorage(64, alignment=16)
    canonical[0] = 3
    canonical[1] = 5
    aligned[0] = 7
    aligned[1] = 11
    scratch[t] = source[t]  # bytes of the storage's own, shared by the block
    cuda.syncthreads()
    output[t] = canonical[0] + canonical[1] + aligned[0] + aligned[1] + scratch[63 - t]
"""


def _storage_kernel(compiler):
    qualified = "cuda.coop.numba_mlir" if compiler == "numba-cuda-mlir" else "cuda.coop.numba_cuda"
    return kernel_for(compiler, _STORAGE_SOURCE.format(qualified=qualified)).kernel


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS)
def test_qualified_storage_constructors_compile(compiler):
    T = types_for(compiler)
    compile_for(compiler, _storage_kernel(compiler), (T.int32[::1], T.uint8[::1]), cc=(9, 0), block=64)


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", COMPILERS)
def test_qualified_storage_constructors_on_the_device(compiler):
    gpu_for(compiler)
    source = np.random.default_rng(2).integers(0, 256, size=64).astype(np.uint8)
    output = np.full(64, -1, np.int32)
    _storage_kernel(compiler)[1, 64](output, source)
    np.testing.assert_array_equal(output, 26 + source[::-1].astype(np.int32))


@pytest.mark.compile
def test_indexing_a_storage_needs_its_size():
    from ..compiler import compile_cubin, types

    module = module_from_source("""
@cuda.jit
def kernel(out):
    scratch = coop.TempStorage(alignment=16)
    scratch[0] = 1
    out[0] = scratch[0]
""")
    with pytest.raises(coop.TempStorageError, match=r"indexed as bytes.*size_in_bytes") as info:
        compile_cubin(module.kernel, (types.int32[::1],), cc=(9, 0), block=32)
    assert "scratch[0] = 1" in str(info.value) or "line" in str(info.value)
