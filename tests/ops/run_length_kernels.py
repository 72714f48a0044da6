"""What tests/ops/test_run_length.py shares with tests/ops/test_run_length_compile.py: kept
here because test modules do not import each other."""

from __future__ import annotations

import numpy as np

from ..kernelgen import module_from_source

VALUE_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
LENGTH_DTYPES = ["int32", "uint16", "int64", "int8", "uint32", "int16", "uint64", "uint8", "int32", "int64"]

# (runs per thread, decoded items per thread, relative offsets dtype)
CONFIGS = [(3, 4, "int32"), (1, 5, "uint16")]


def _oob(vdt):
    return "-3.5" if np.dtype(vdt).kind == "f" else ("7" if np.dtype(vdt).kind == "u" else "-3")


def rld_kernel(vdt: str, ldt: str, runs: int, decoded: int, rel: str):
    scalar = """
    t3 = coop.run_length_decode_into(block, v[0], l[0], dst3[b])
""" if runs == 1 else """
    t3 = np.int64(0)
"""
    source = f"""
OOB = np.{vdt}({_oob(vdt)})

@cuda.jit
def kernel(values, lengths, woff, doff, win, rel_out, win0, full, dst, dst2, dst3, totals):
    block = coop.this_block()
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    nthreads = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    b = cuda.blockIdx.x
    v = coop.ThreadData({runs})
    l = coop.ThreadData({runs})
    coop.load(block, values, v, offset=b * nthreads * {runs})
    coop.load(block, lengths, l, offset=b * nthreads * {runs})
    rel = coop.ThreadData({decoded}, dtype=np.{rel})
    w, total = coop.run_length_decode(block, v, l, decoded_items_per_thread={decoded},
                                      decoded_window_offset=woff[b], oob_default=OOB,
                                      relative_offsets=rel, return_total=True)
    w0 = coop.run_length_decode(block, v, l, decoded_items_per_thread={decoded})
    for i in range({decoded}):
        win[b, tid * {decoded} + i] = w[i]
        rel_out[b, tid * {decoded} + i] = rel[i]
        win0[b, tid * {decoded} + i] = w0[i]
    window = nthreads * {decoded}
    start = 0
    while start < total:
        wk = coop.run_length_decode(block, v, l, decoded_items_per_thread={decoded}, decoded_window_offset=start)
        for i in range({decoded}):
            p = start + tid * {decoded} + i
            if p < total:
                full[b, p] = wk[i]
        start += window
    t1 = coop.run_length_decode_into(block, v, l, dst[b], destination_offset=doff[b])
    t2 = coop.run_length_decode_into(block, v, l, dst2[b], decoded_items_per_thread=3)
{scalar}
    if tid == 0:
        totals[b, 0] = total
        totals[b, 1] = t1
        totals[b, 2] = t2
        totals[b, 3] = t3
"""
    return module_from_source(source).kernel


def kernel_argtypes(vdt: str, ldt: str):
    from ..compiler import types

    v, l = getattr(types, vdt), getattr(types, ldt)
    return (v[::1], l[::1], types.int64[::1], types.int64[::1], v[:, ::1], types.int64[:, ::1], v[:, ::1],
            v[:, ::1], v[:, ::1], v[:, ::1], v[:, ::1], types.int64[:, ::1])
