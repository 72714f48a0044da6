"""cuda.coop.numba_mlir's own names: the local/shared memory namespaces and the payload protocols."""

from __future__ import annotations

import numpy as np
import pytest

from cuda import coop

from ..kernelgen import module_from_source

nb = pytest.importorskip("numba_cuda_mlir")


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
    from numba_cuda_mlir import cuda

    import cuda.coop.numba_mlir as qualified

    assert qualified.local is cuda.local and qualified.shared is cuda.shared
    assert {"local", "shared", "ThreadDataLike", "TempStorageLike"} <= set(qualified.__all__)


@pytest.mark.compile
def test_kernel_written_against_the_qualified_module_alone():
    """local.array payloads (with alignment) and a shared.array, all through one import."""
    from cuda.coop.numba_mlir import compile_cubin

    module = module_from_source("""
import cuda.coop.numba_mlir as ncoop

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
