"""An exclusive TempStorage reused by a call site in a loop (issue #32, NVIDIA's
test_exclusive_storage_reused_by_a_looped_call_site_stays_ordered).

Each call site of an ``sharing="exclusive"`` storage has its own slice, but the next
iteration of a loop reuses it: with ``auto_sync=True`` the call ends with one block
barrier of ours, emitted in the kernel after the provider call; with ``auto_sync=False``
none of ours, the user's ``cuda.syncthreads()`` orders the iterations.  Both compilers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ..backends_param import COMPILERS, compile_for, gpu_for, kernel_for, types_for

THREADS, IPT, TILES = 1024, 4, 8
TILE = THREADS * IPT

_SOURCE = """
THREADS, IPT, TILES = {THREADS}, {IPT}, {TILES}
TILE = THREADS * IPT


@cuda.jit
def kernel(destination):
    thread = cuda.threadIdx.x
    storage = coop.TempStorage(sharing="exclusive", auto_sync={auto_sync})
    payload = coop.ThreadData(IPT, dtype=np.int32)
    for tile in range(TILES):
        offset = tile * TILE
        for item in range(IPT):
            payload[item] = offset + thread * IPT + item
        coop.store(coop.this_block(), destination, payload, algorithm="transpose", offset=offset,
                   temp_storage=storage)
        if {user_sync}:
            cuda.syncthreads()
"""

VARIANTS = {"auto-sync": (True, False), "manual-sync": (False, True), "no-sync": (False, False)}


def _kernel(compiler, variant):
    auto_sync, user_sync = VARIANTS[variant]
    source = _SOURCE.format(THREADS=THREADS, IPT=IPT, TILES=TILES, auto_sync=auto_sync, user_sync=user_sync)
    return kernel_for(compiler, source).kernel


def _binary(compiler, variant):
    T = types_for(compiler)
    return compile_for(compiler, _kernel(compiler, variant), (T.int32[::1],), cc=(9, 0), block=THREADS)


def _ptx_barriers(ptx: str) -> int:
    return len(re.findall(r"\b(?:bar|barrier)(?:\.cta)?\.sync(?:\.aligned)?\b", ptx))


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS)
def test_one_barrier_of_ours_per_iteration_with_auto_sync_none_without(compiler):
    counts = {variant: _ptx_barriers(_binary(compiler, variant).ptx) for variant in VARIANTS}
    # CUB's transpose store has barriers of its own; ours, one per iteration, is where the
    # user's cuda.syncthreads() is (LLVM may copy the loop body, so both appear as often).
    assert counts["auto-sync"] == counts["manual-sync"] > counts["no-sync"], counts


@pytest.mark.compile
@pytest.mark.parametrize("variant", ["auto-sync", "manual-sync"])
def test_the_kernel_ir_holds_exactly_one_block_barrier(variant):
    # What NVIDIA's test reads: the kernel's MLIR (numba-cuda-mlir), before the provider is linked.
    module = _binary("numba-cuda-mlir", variant)._compile_result.metadata["mlir_module_str"]
    assert module.count("gpu.barrier") == 1


@pytest.mark.gpu
@pytest.mark.parametrize("variant", ["auto-sync", "manual-sync"])
@pytest.mark.parametrize("compiler", COMPILERS)
def test_looped_exclusive_storage_stays_ordered(compiler, variant):
    gpu_for(compiler)
    destination = np.full(TILES * TILE, -1, np.int32)
    _kernel(compiler, variant)[1, THREADS](destination)
    np.testing.assert_array_equal(destination, np.arange(TILES * TILE, dtype=np.int32))
