"""What tests/ops/test_shuffle.py shares with tests/ops/test_shuffle_compile.py: kept here
because test modules do not import each other."""

from __future__ import annotations

from ..kernelgen import module_from_source

DTYPES = ["int8", "uint16", "int32", "float32", "int64", "float64"]
ITEMS = [1, 3, 4, 8]

# (mode, distance source): "1"/"3"/"-2" literals, "d" per block, "td" per thread, None = default.
TILE_CASES = [("up", None), ("down", "1"), ("up", "3"), ("down", "-2"), ("up", "d"), ("down", "d"),
              ("up", "td"), ("down", "ts")]
SCALAR_CASES = [("offset", None), ("offset", "-1"), ("offset", "300"), ("offset", "td"), ("offset", "d"),
                ("rotate", None), ("rotate", "-3"), ("rotate", "d"), ("rotate", "td")]


def shuffle_kernel(dtype: str):
    lines = [f"""
DT = np.{dtype}

@cuda.jit
def kernel(src, sv, dist, tdist, tout, sout, items_per_thread):
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    nthreads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    gtid = cuda.blockIdx.x * nthreads + tid
    base = gtid * items_per_thread
    d = dist[cuda.blockIdx.x]
    td = tdist[gtid]
    block = coop.this_block()
    ts = coop.TempStorage()
    x = coop.ThreadData(items_per_thread, dtype=DT)
    for i in range(items_per_thread):
        x[i] = src[base + i]
    s = sv[gtid]
"""]
    for row, (mode, dist) in enumerate(TILE_CASES):
        kw = [f'mode="{mode}"']
        if dist == "ts":
            kw.append("temp_storage=ts")
        elif dist is not None:
            kw.append(f"distance={dist}")
        lines.append(f"    y = coop.shuffle(block, x, {', '.join(kw)})\n")
        lines.append(f"    for i in range(items_per_thread):\n        tout[{row}, base + i] = y[i]\n")
    lines.append(f"    for i in range(items_per_thread):\n        tout[{len(TILE_CASES)}, base + i] = x[i]\n")
    for row, (mode, dist) in enumerate(SCALAR_CASES):
        kw = [f'mode="{mode}"'] + ([f"distance={dist}"] if dist is not None else [])
        lines.append(f"    sout[{row}, gtid] = coop.shuffle(block, s, {', '.join(kw)})\n")
    return module_from_source("".join(lines)).kernel
