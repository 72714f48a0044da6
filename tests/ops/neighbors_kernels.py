"""What tests/ops/test_neighbors.py shares with tests/ops/test_neighbors_compile.py: kept here
because test modules do not import each other."""

from __future__ import annotations

from ..kernelgen import module_from_source

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
ITEMS = [1, 2, 3, 8]

# (direction, valid_items, neighbour item, difference_op) per row of ``diffs``.
DIFF_CASES = [
    ("left", False, False, None), ("left", False, True, None), ("left", True, False, None),
    ("left", True, True, None), ("right", False, False, None), ("right", False, True, None),
    ("right", True, False, None), ("right", True, True, None),
    ("left", False, True, "twice"), ("right", True, True, "twice"),
]

# (mode, valid_items, predecessor, successor, flag_op); heads_and_tails fills two rows of ``flags``.
FLAG_CASES = [
    ("heads", False, False, False, None), ("heads", False, True, False, None),
    ("tails", False, False, False, None), ("tails", False, False, True, None),
    ("heads_and_tails", False, False, False, None), ("heads_and_tails", False, True, True, None),
    ("heads", True, False, False, None), ("tails", True, False, True, None),
    ("heads_and_tails", True, True, False, None), ("heads", False, False, False, "greater"),
    ("heads_and_tails", True, True, True, "greater"), ("heads_and_tails", False, True, True, "<="),
]

# The device functions and the NumPy functions they must match.  Both wrap in the
# values' dtype: Numba computes small integers in 64 bits and narrows the result.
CALLBACKS_SOURCE = """
@cuda.jit(device=True)
def twice(a, b):
    return a - b - b

@cuda.jit(device=True)
def greater(a, b):
    return a > b
"""


def _op_source(op):
    return op if op.isidentifier() else repr(op)


def neighbors_kernel(dtype: str):
    lines = [f"""
DT = np.{dtype}
{CALLBACKS_SOURCE}

@cuda.jit
def kernel(src, neighbours, valid, diffs, flags, items_per_thread):
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    nthreads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    base = cuda.blockIdx.x * nthreads * items_per_thread + tid * items_per_thread
    pred = neighbours[2 * cuda.blockIdx.x]
    succ = neighbours[2 * cuda.blockIdx.x + 1]
    vi = valid[cuda.blockIdx.x]
    block = coop.this_block()
    x = coop.ThreadData(items_per_thread, dtype=DT)
    for i in range(items_per_thread):
        x[i] = src[base + i]
"""]

    def write(target, row, var):
        lines.append(f"    for i in range(items_per_thread):\n        {target}[{row}, base + i] = {var}[i]\n")

    for row, (direction, has_vi, has_nb, op) in enumerate(DIFF_CASES):
        kw = [f'direction="{direction}"']
        if has_vi:
            kw.append("valid_items=vi")
        if has_nb:
            kw.append("tile_predecessor_item=pred" if direction == "left" else "tile_successor_item=succ")
        if op:
            kw.append(f"difference_op={_op_source(op)}")
        lines.append(f"    d = coop.adjacent_difference(block, x, {', '.join(kw)})\n")
        write("diffs", row, "d")
    row = 0
    for mode, has_vi, has_pred, has_succ, op in FLAG_CASES:
        kw = [f'mode="{mode}"']
        if has_vi:
            kw.append("valid_items=vi")
        if has_pred:
            kw.append("tile_predecessor_item=pred")
        if has_succ:
            kw.append("tile_successor_item=succ")
        if op:
            kw.append(f"flag_op={_op_source(op)}")
        call = f"coop.discontinuity(block, x, {', '.join(kw)})"
        if mode == "heads_and_tails":
            lines.append(f"    h, t = {call}\n")
            write("flags", row, "h")
            write("flags", row + 1, "t")
            row += 2
        else:
            lines.append(f"    f = {call}\n")
            write("flags", row, "f")
            row += 1
    write("diffs", len(DIFF_CASES), "x")  # the input must be unchanged
    return module_from_source("".join(lines)).kernel
