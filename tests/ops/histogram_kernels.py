"""What tests/ops/test_histogram.py shares with tests/ops/test_histogram_compile.py: kept here
because test modules do not import each other."""

from __future__ import annotations

from ..kernelgen import module_from_source

SAMPLE_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]

ALGORITHMS = ["atomic", "sort"]


# (name, bins, bins_per_thread, counter dtype, samples payload, extra keywords)
CASES = [
    ("plain", 256, 2, "int32", "sb", ""),
    ("valid_blocked", 37, 1, "uint32", "sb", ", counter_dtype=np.uint32, valid_items=vi"),
    ("valid_striped", 300, 3, "int64", "ss", ", counter_dtype='int64', valid_items=vi, layout='striped'"),
    ("accumulate", 200, 2, "int32", None, ""),
    ("scalar", 64, 1, "uint64", "sb[0]", ", counter_dtype=np.uint64"),
]
ROWS = [(algo, case) for algo in ALGORITHMS for case in CASES]


def histogram_kernel(dtype: str, items_per_thread: int):
    """One kernel covering every (algorithm, case); ``out[row, block, bin]``."""
    body = []
    for row, (algo, (name, bins, bpt, _counter, payload, extra)) in enumerate(ROWS):
        if name == "accumulate":
            body.append(f"""
    acc = coop.ThreadData({bpt}, dtype=np.int32)
    for i in range({bpt}):
        acc[i] = acc_init[tid + i * nthreads]
    coop.histogram(block, sb, bins={bins}, accumulate=acc, algorithm="{algo}")
    coop.histogram(block, ss, bins={bins}, accumulate=acc, algorithm="{algo}", valid_items=vi, layout="striped")
    for i in range({bpt}):
        acc_out[{row}, b, tid + i * nthreads] = acc[i]
""")
        else:
            body.append(f"""
    h = coop.histogram(block, {payload}, bins={bins}, bins_per_thread={bpt}, algorithm="{algo}"{extra})
    for i in range({bpt}):
        out[{row}, b, tid + i * nthreads] = h[i]
""")
    source = f"""
@cuda.jit
def kernel(samples, valid, acc_init, out, acc_out):
    block = coop.this_block()
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    nthreads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    b = cuda.blockIdx.x
    base = b * nthreads * {items_per_thread}
    vi = valid[b]
    sb = coop.ThreadData({items_per_thread})
    ss = coop.ThreadData({items_per_thread})
    coop.load(block, samples, sb, offset=base)
    coop.load(block, samples, ss, offset=base, algorithm="striped")
""" + "".join(body)
    return module_from_source(source).kernel


def kernel_argtypes(dtype: str):
    """Numba argument types of :func:`histogram_kernel` (for compile-only tests)."""
    from ..compiler import types

    return (getattr(types, dtype)[::1], types.int64[::1], types.int32[::1], types.int64[:, :, ::1],
            types.int32[:, :, ::1])


# The documented accumulation by adding returned payloads, over a grid-stride loop.
MANY_TILES_SOURCE = """
@cuda.jit
def kernel(samples, out, n):
    block = coop.this_block()
    tid = cuda.threadIdx.x
    tile = cuda.blockDim.x * 8
    acc = coop.ThreadData(2, dtype=np.int64)
    for i in range(2):
        acc[i] = 0
    items = coop.ThreadData(8)
    start = cuda.blockIdx.x * tile
    while start < n:
        valid = min(n - start, tile)  # at most a tile: a larger count traps (run-time checks)
        coop.load(block, samples, items, offset=start, algorithm="striped", valid_items=valid)
        h = coop.histogram(block, items, bins=256, bins_per_thread=2, counter_dtype=np.int64,
                           valid_items=valid, layout="striped")
        for i in range(2):
            acc[i] += h[i]
        start += cuda.gridDim.x * tile
    for i in range(2):
        cuda.atomic.add(out, tid + i * cuda.blockDim.x, acc[i])
"""
