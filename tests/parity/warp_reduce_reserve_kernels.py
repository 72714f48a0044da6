"""What tests/parity/test_warp_reduce_reserve.py shares with tests/ops/test_reserve_compile.py:
kept here because test modules do not import each other."""

from __future__ import annotations

from cuda import coop

from ..compiler import cuda, types
from ..compiler import qualified as numba_coop


def _reserve_kernel(sharing, dtype, count, alignment):
    @cuda.jit
    def kernel(source, scanned, kept, prefix, items_per_thread):
        storage = coop.TempStorage(sharing=sharing)
        small = storage.reserve(3, types.uint8)
        values = storage.reserve(count, dtype, alignment=alignment)
        t = cuda.threadIdx.x
        if t < 3:
            small[t] = 201 + t
        for i in range(t, count, cuda.blockDim.x):
            values[i] = i + 0.5
        cuda.syncthreads()
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread)
        coop.load(block, source, items, algorithm="transpose", temp_storage=storage)
        cuda.syncthreads()
        result = coop.exclusive_sum(block, items, temp_storage=storage)
        cuda.syncthreads()
        coop.store(block, scanned, result, algorithm="transpose", temp_storage=storage)
        cuda.syncthreads()
        for i in range(t, count, cuda.blockDim.x):
            kept[i] = values[(i + 1) % count]
        if t < 3:
            prefix[t] = small[t]

    return kernel


@cuda.jit(device=True, inline="always")
def _allocate(storage):
    alias = storage
    return alias.reserve(33, types.float64, alignment=1)


@cuda.jit
def _reserve_in_helper(output, facts):
    storage = numba_coop.TempStorage()
    prefix = storage.reserve(3, types.uint8)
    alias = storage
    values = _allocate(alias)
    t = cuda.threadIdx.x
    if t < 3:
        prefix[t] = 200 + t
    for i in range(t, 33, cuda.blockDim.x):
        values[i] = i + 0.5
    cuda.syncthreads()
    for i in range(t, 33, cuda.blockDim.x):
        output[i] = values[32 - i]
    if t == 0:
        facts[0] = values.shape[0]
        facts[1] = prefix[2]
