"""What tests/ops/test_exchange.py shares with tests/ops/test_exchange_compile.py: kept here
because test modules do not import each other."""

from __future__ import annotations

from cuda.coop.ops.exchange import MODES

from ..kernelgen import group_expr, module_from_source

BLOCK_DTYPES = ["int8", "uint16", "int32", "float32", "int64", "float64"]
WARP_DTYPES = ["int8", "int32", "float32", "float64"]
ITEMS = [1, 3, 4, 8]  # 8: CUB pads shared memory for power-of-two K > 4
LOGICAL_WIDTHS = [1, 2, 4, 8, 16, 32]

# Rank and flag dtypes vary with the payload dtype, so every kind is covered
# without more kernels.
RANK_DTYPES = {"int8": "int16", "uint16": "int32", "int32": "int64", "float32": "uint16",
               "int64": "int32", "float64": "uint32"}
FLAG_DTYPES = {"int8": "int8", "uint16": "int32", "int32": "uint8", "float32": "int64",
               "int64": "int32", "float64": "int16"}


def block_cases(warp_multiple=True):
    """(mode, warp_time_slicing, explicit TempStorage) of one block kernel."""
    cases = []
    for m in MODES.values():
        if m.needs_warp_multiple and not warp_multiple:
            continue
        cases.append((m.name, False, False))
        if m.time_slicing:
            cases.append((m.name, True, False))
    cases.append(("blocked_to_striped", False, True))
    return cases


def warp_cases():
    """(width, mode) of one warp kernel."""
    return [(w, m) for w in LOGICAL_WIDTHS for m in ("striped_to_blocked", "blocked_to_striped")]

_PROLOGUE = """
DT = np.{dtype}
RT = np.{rank_dtype}
FT = np.{flag_dtype}

@cuda.jit
def kernel(src, ranks, flags, out, items_per_thread):
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    nthreads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    base = cuda.blockIdx.x * nthreads * items_per_thread + tid * items_per_thread
    a = coop.ThreadData(items_per_thread, dtype=DT)
    r = coop.ThreadData(items_per_thread, dtype=RT)
    f = coop.ThreadData(items_per_thread, dtype=FT)
    for i in range(items_per_thread):
        a[i] = src[base + i]
        r[i] = ranks[base + i]
        f[i] = flags[base + i]
"""
_WRITE = """    for i in range(items_per_thread):
        out[{row}, base + i] = {var}[i]
"""


def exchange_kernel(kind: str, dtype: str, warp_multiple: bool = True):
    """One kernel: every case of ``kind`` writes row ``case`` of ``out``; the last row is the input."""
    rank_dtype, flag_dtype = RANK_DTYPES[dtype], FLAG_DTYPES[dtype]
    lines = [_PROLOGUE.format(dtype=dtype, rank_dtype=rank_dtype, flag_dtype=flag_dtype)]
    if kind == "block":
        cases = block_cases(warp_multiple)
        lines.append("    ts = coop.TempStorage()\n")
        for row, (mode, sliced, explicit) in enumerate(cases):
            kw = [f'mode="{mode}"']
            if MODES[mode].ranks:
                kw.append("ranks=r")
            if MODES[mode].flags:
                kw.append("valid_flags=f")
            if sliced:
                kw.append("warp_time_slicing=True")
            if explicit:
                kw.append("temp_storage=ts")
            lines.append(f"    x = coop.exchange(coop.this_block(), a, {', '.join(kw)})\n")
            lines.append(_WRITE.format(row=row, var="x"))
    else:
        cases = warp_cases()
        for row, (width, mode) in enumerate(cases):
            lines.append(f'    x = coop.exchange({group_expr("warp", width)}, a, mode="{mode}")\n')
            lines.append(_WRITE.format(row=row, var="x"))
    lines.append(_WRITE.format(row=len(cases), var="a"))
    return module_from_source("".join(lines)).kernel, cases
