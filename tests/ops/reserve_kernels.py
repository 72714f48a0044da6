"""What tests/ops/test_reserve.py shares with tests/ops/test_reserve_compile.py: kept here
because test modules do not import each other."""

from __future__ import annotations

from ..kernelgen import module_from_source

BLOCK = 128
ITEMS = 4
BLOCKS = 3
SHARINGS = ("shared", "exclusive")
RESERVE_DTYPES = ("int32", "float64", "complex64")


def _value(dtype: str, expr: str) -> str:
    """Kernel text converting the int32 ``expr`` to a reservation element."""
    if dtype.startswith("complex"):
        return f"np.{dtype}(complex({expr}, -2 * ({expr})))"
    return f"np.{dtype}({expr})"


def neighbours_source(sharing: str, dtype: str) -> str:
    return f"""
@cuda.jit
def kernel(src, vals, near, after, scanned, totals):
    tid = cuda.threadIdx.x
    blk = cuda.blockIdx.x
    base = blk * {BLOCK}
    storage = coop.TempStorage(sharing="{sharing}")
    keep = coop.TempStorage(sharing="exclusive", auto_sync=False)
    wide = keep.reserve({2 * BLOCK}, np.{dtype}, alignment=64)
    flags = keep.reserve({BLOCK}, np.uint8)
    mine = storage.reserve({BLOCK}, np.{dtype}, alignment=16)
    v = vals[base + tid]
    wide[2 * tid] = {_value(dtype, "v")}
    wide[2 * tid + 1] = {_value(dtype, "v + 1")}
    flags[tid] = np.uint8(tid % 251)
    mine[tid] = {_value(dtype, "v * 3")}
    cuda.syncthreads()
    near[base * 3 + tid] = wide[(2 * tid + 3) % {2 * BLOCK}]
    near[base * 3 + {BLOCK} + tid] = mine[(tid + 1) % {BLOCK}]
    near[base * 3 + {2 * BLOCK} + tid] = flags[({BLOCK} - 1 - tid)]
    block = coop.this_block()
    items = coop.ThreadData({ITEMS}, dtype=np.int32)
    coop.load(block, src[base * {ITEMS}:], items)
    inc = coop.inclusive_sum(block, items, temp_storage=storage)
    cuda.syncthreads()
    total = coop.sum(block, items, temp_storage=storage)
    cuda.syncthreads()
    for i in range({ITEMS}):
        scanned[(base + tid) * {ITEMS} + i] = inc[i]
    if tid == 0:
        totals[blk] = total
    after[base * 2 + tid] = wide[(2 * tid + 5) % {2 * BLOCK}]
    # `mine` shares its descriptor with the scan and the sum, yet survives them.
    after[base * 2 + {BLOCK} + tid] = mine[(tid + 7) % {BLOCK}]
"""


def neighbours_kernel(sharing, dtype):
    return module_from_source(neighbours_source(sharing, dtype)).kernel

LOOP_SOURCE = f"""
@cuda.jit(device=True)
def rotate_into(dst, src, shift):
    n = len(src)
    t = cuda.threadIdx.x
    dst[t] = src[(t + shift) % n]


@cuda.jit(device=True, inline="always")
def scratch_of(storage):
    alias = storage
    return alias.reserve({BLOCK}, np.float32, alignment=32)


@cuda.jit
def kernel(vals, out, sums, rounds):
    tid = cuda.threadIdx.x
    blk = cuda.blockIdx.x
    storage = coop.TempStorage(sharing="exclusive", auto_sync=False)
    stage = scratch_of(storage)
    for r in range(rounds):
        # One call site: the same array every iteration.
        ring = storage.reserve({BLOCK}, np.float32)
        ring[tid] = vals[(blk * rounds + r) * {BLOCK} + tid]
        cuda.syncthreads()
        rotate_into(stage, ring, r + 1)
        cuda.syncthreads()
        s = coop.reduce(coop.this_block(), stage[tid], binary_op="max", temp_storage=storage)
        cuda.syncthreads()
        out[(blk * rounds + r) * {BLOCK} + tid] = stage[({BLOCK} - 1 - tid)] + len(ring)
        if tid == 0:
            sums[blk * rounds + r] = s
        cuda.syncthreads()
"""


def loop_kernel():
    return module_from_source(LOOP_SOURCE).kernel

ALIAS_SOURCE = f"""
@cuda.jit
def kernel(src, out, totals, rounds):
    t = cuda.threadIdx.x
    blk = cuda.blockIdx.x
    # sharing="shared" overlaps the calls' scratch only: `wide`, `narrow` and the sum's
    # scratch each have bytes of their own.
    storage = coop.TempStorage()
    wide = storage.reserve({2 * BLOCK}, np.int32, alignment=64)
    for r in range(rounds):
        narrow = storage.reserve({BLOCK}, np.int32)  # the same array every round
        row = (blk * rounds + r) * {2 * BLOCK}
        wide[t] = src[row + t]
        wide[{BLOCK} + t] = src[row + {BLOCK} + t]
        narrow[t] = -src[row + t]  # would clobber `wide` if the two overlapped
        cuda.syncthreads()
        value = wide[{BLOCK} - 1 - t] + narrow[(t + 1) % {BLOCK}] + wide[{BLOCK} + (t + 1) % {BLOCK}]
        total = coop.sum(coop.this_block(), value, temp_storage=storage)
        # Read after the sum: its scratch did not reuse the reservations.
        out[(blk * rounds + r) * {BLOCK} + t] = value + wide[(t + 3) % {BLOCK}] + narrow[(t + 5) % {BLOCK}]
        if t == 0:
            totals[blk * rounds + r] = total
        cuda.syncthreads()  # every read is done before the next round writes
"""


def alias_kernel():
    return module_from_source(ALIAS_SOURCE).kernel
