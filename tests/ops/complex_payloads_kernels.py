"""What tests/ops/test_complex_payloads.py shares with
tests/ops/test_complex_payloads_compile.py: kept here because test modules do not import
each other."""

from __future__ import annotations

import numpy as np

from ..compiler import cuda, types
from ..compiler import qualified as coop

THREADS = 64
IPT = 2


def numba_complex(dtype):
    return types.complex64 if np.dtype(dtype) == np.complex64 else types.complex128


def load_store_kernel(dtype, algorithm):
    ty = numba_complex(dtype)

    @cuda.jit
    def kernel(src, full_out, partial_out, loaded, n):
        block = coop.this_block()
        items = coop.ThreadData(IPT, dtype=ty)
        coop.load(block, src, items, algorithm=algorithm)
        coop.store(block, full_out, items, algorithm=algorithm)
        part = coop.ThreadData(IPT, dtype=ty)
        coop.load(block, src, part, algorithm=algorithm, valid_items=n, oob_default=src[1])
        coop.store(block, partial_out, part, algorithm=algorithm, valid_items=n)
        t = cuda.threadIdx.x
        for i in range(IPT):
            loaded[t * IPT + i] = part[i]

    return kernel


@cuda.jit
def _warp_load_store(src, out, loaded, n):
    warp = coop.this_warp()
    items = coop.ThreadData(IPT, dtype=types.complex128)
    coop.load(warp, src, items, algorithm="transpose", valid_items=n, oob_default=src[0], offset=3)
    coop.store(warp, out, items, algorithm="transpose", valid_items=n, offset=5)
    t = cuda.threadIdx.x
    for i in range(IPT):
        loaded[t * IPT + i] = items[i]


def exchange_kernel(dtype):
    ty = numba_complex(dtype)

    @cuda.jit
    def kernel(src, out):
        t = cuda.threadIdx.x
        items = coop.ThreadData(IPT, dtype=ty)
        for i in range(IPT):
            items[i] = src[t * IPT + i]
        blocked = coop.exchange(coop.this_block(), items)
        striped = coop.exchange(coop.this_block(), items, mode="blocked_to_striped")
        warp = coop.exchange(coop.this_warp(), items)
        for i in range(IPT):
            out[0, t * IPT + i] = blocked[i]
            out[1, t * IPT + i] = striped[i]
            out[2, t * IPT + i] = warp[i]

    return kernel


@cuda.jit
def _shuffle(src, scalars, down, up, offset):
    t = cuda.threadIdx.x
    items = coop.ThreadData(IPT, dtype=types.complex128)
    for i in range(IPT):
        items[i] = src[t * IPT + i]
    d = coop.shuffle(coop.this_block(), items, mode="down")
    u = coop.shuffle(coop.this_block(), items, mode="up", distance=3)
    for i in range(IPT):
        down[t * IPT + i] = d[i]
        up[t * IPT + i] = u[i]
    offset[t] = coop.shuffle(coop.this_block(), scalars[t], mode="rotate", distance=5)


@cuda.jit(device=True)
def complex_difference(a, b):
    return a - b


@cuda.jit(device=True)
def complex_differs(a, b):
    return a.real != b.real or a.imag != b.imag


@cuda.jit
def _neighbours(src, left, heads, tails, n, predecessor, successor):
    t = cuda.threadIdx.x
    items = coop.ThreadData(IPT, dtype=types.complex128)
    for i in range(IPT):
        items[i] = src[t * IPT + i]
    block = coop.this_block()
    storage = coop.TempStorage()
    diff = coop.adjacent_difference(block, items, valid_items=n, tile_predecessor_item=predecessor,
                                    difference_op=complex_difference, temp_storage=storage)
    h, tl = coop.discontinuity(block, items, mode="heads_and_tails", tile_predecessor_item=predecessor,
                               tile_successor_item=successor, flag_op=complex_differs, temp_storage=storage)
    for i in range(IPT):
        left[t * IPT + i] = diff[i]
        heads[t * IPT + i] = h[i]
        tails[t * IPT + i] = tl[i]
