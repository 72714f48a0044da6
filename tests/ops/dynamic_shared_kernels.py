"""What tests/ops/test_dynamic_shared.py shares with tests/ops/test_dynamic_shared_compile.py:
kept here because test modules do not import each other."""

from __future__ import annotations

from ..backends_param import kernel_for

BLOCK = 256
BLOCKS = 3

MINE = 2048  # int32 elements of the kernel's own static shared array (8 KiB)
HIST_BINS = 16384
HIST_BPT = HIST_BINS // BLOCK
HIST_ITEMS = 16
SORT_ITEMS = 32
RESERVE_COUNT = 16384  # float32: 64 KiB
SCAN_ITEMS = 4
_KEEP = f"""
    mine = cuda.shared.array({MINE}, np.int32)
    for j in range(tid, {MINE}, {BLOCK}):
        mine[j] = j * 7 + b
    cuda.syncthreads()
"""
_KEPT = f"""
    cuda.syncthreads()
    for j in range(tid, {MINE}, {BLOCK}):
        kept[b * {MINE} + j] = mine[({MINE} - 1 - j)]
"""


def histogram_source() -> str:
    return f"""
@cuda.jit
def kernel(samples, valid, out, kept):
    tid = cuda.threadIdx.x
    b = cuda.blockIdx.x
{_KEEP}
    block = coop.this_block()
    s = coop.ThreadData({HIST_ITEMS}, dtype=np.uint16)
    coop.load(block, samples, s, offset=b * {BLOCK * HIST_ITEMS})
    h = coop.histogram(block, s, bins={HIST_BINS}, bins_per_thread={HIST_BPT}, valid_items=valid[b])
    for i in range({HIST_BPT}):
        out[b, tid + i * {BLOCK}] = h[i]
{_KEPT}
"""


def sort_source() -> str:
    return f"""
@cuda.jit
def kernel(keys, out, kept):
    tid = cuda.threadIdx.x
    b = cuda.blockIdx.x
{_KEEP}
    block = coop.this_block()
    k = coop.ThreadData({SORT_ITEMS}, dtype=np.uint64)
    coop.load(block, keys, k, offset=b * {BLOCK * SORT_ITEMS})
    r = coop.radix_sort_keys(block, k)
    for i in range({SORT_ITEMS}):
        out[b * {BLOCK * SORT_ITEMS} + tid * {SORT_ITEMS} + i] = r[i]
{_KEPT}
"""


def reserve_source(count: int = RESERVE_COUNT) -> str:
    """``count`` float32 reserved (other counts: the compile tests' limit errors)."""
    return f"""
@cuda.jit
def kernel(vals, src, back, scanned, kept):
    tid = cuda.threadIdx.x
    b = cuda.blockIdx.x
{_KEEP}
    storage = coop.TempStorage(sharing="exclusive", auto_sync=False)
    big = storage.reserve({count}, np.float32, alignment=16)
    for j in range(tid, {count}, {BLOCK}):
        big[j] = vals[b * {count} + j]
    cuda.syncthreads()
    block = coop.this_block()
    items = coop.ThreadData({SCAN_ITEMS}, dtype=np.int32)
    coop.load(block, src, items, offset=b * {BLOCK * SCAN_ITEMS})
    inc = coop.inclusive_sum(block, items, temp_storage=storage)
    cuda.syncthreads()
    for i in range({SCAN_ITEMS}):
        scanned[b * {BLOCK * SCAN_ITEMS} + tid * {SCAN_ITEMS} + i] = inc[i]
    for j in range(tid, {count}, {BLOCK}):
        back[b * {count} + j] = big[{count} - 1 - j]
{_KEPT}
"""

LATE_ITEMS = 16  # uint64 sort scratch of 256 x 16 keys: 32 KiB, within 48 KiB alone
LATE_ARRAY = 6144  # int32: the kernel's own 24 KiB array, declared after the sort
USER_ARRAY_AFTER = f"""
@cuda.jit
def kernel(src, out, kept):
    tid = cuda.threadIdx.x
    b = cuda.blockIdx.x
    block = coop.this_block()
    k = coop.ThreadData({LATE_ITEMS}, dtype=np.uint64)
    coop.load(block, src, k, offset=b * {BLOCK * LATE_ITEMS})
    r = coop.radix_sort_keys(block, k)
    for i in range({LATE_ITEMS}):
        out[b * {BLOCK * LATE_ITEMS} + tid * {LATE_ITEMS} + i] = r[i]
    mine = cuda.shared.array({LATE_ARRAY}, np.int32)
    for j in range(tid, {LATE_ARRAY}, {BLOCK}):
        mine[j] = j * 3 + b
    cuda.syncthreads()
    for j in range(tid, {LATE_ARRAY}, {BLOCK}):
        kept[b * {LATE_ARRAY} + j] = mine[{LATE_ARRAY} - 1 - j]
"""


def histogram_kernel(compiler="numba-cuda-mlir"):
    return kernel_for(compiler, histogram_source()).kernel


def sort_kernel(compiler="numba-cuda-mlir"):
    return kernel_for(compiler, sort_source()).kernel


def reserve_kernel(count: int = RESERVE_COUNT, compiler="numba-cuda-mlir"):
    return kernel_for(compiler, reserve_source(count)).kernel
