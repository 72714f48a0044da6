"""``ThreadData`` without ``dtype``: the dtype comes from the first value written into it, or
from the call that fills it as ``aggregate_output=`` (besides a load source / store target)."""

from __future__ import annotations

import numpy as np
import pytest

from ..backends_param import COMPILERS, compile_for, gpu_for, kernel_for, types_for
from .cubin_checks import assert_inlined

# Every case runs on both compilers: numba-cuda-mlir and classic numba-cuda share the
# analysis (backends/_inference.py); each backend only edits its own IR.
pytestmark = pytest.mark.parametrize("compiler", COMPILERS)

_SOURCE = """
@cuda.jit
def kernel(src, dst, aggs):
    block = coop.this_block()
    t = cuda.threadIdx.x
    doubled = coop.ThreadData(4)  # int16: the type of the first value written
    for i in range(4):
        doubled[i] = np.int16(src[t * 4 + i] * 2)
    agg = coop.ThreadData(items_per_thread=1)  # int16: the scanned value's dtype
    out = coop.exclusive_sum(block, doubled, aggregate_output=agg)
    for i in range(4):
        dst[t * 4 + i] = out[i]
    aggs[t] = agg[0]
"""


def kernel(compiler):
    return kernel_for(compiler, _SOURCE).kernel


@pytest.mark.compile
def test_dtype_from_the_first_write_and_from_aggregate_output(compiler):
    T = types_for(compiler)
    kb = compile_for(compiler, kernel(compiler), (T.int16[::1],) * 3, cc=(9, 0), block=64)
    assert_inlined(kb, (9, 0))


@pytest.mark.gpu
def test_inferred_payloads_on_the_device(compiler):
    gpu_for(compiler)

    rng = np.random.default_rng(3)
    src = rng.integers(-100, 100, size=256).astype(np.int16)
    dst = np.full(256, -1, np.int16)
    aggs = np.full(64, -1, np.int16)
    kernel(compiler)[1, 64](src, dst, aggs)  # host arrays: copied in and back by the launch
    doubled = (src * 2).astype(np.int16)
    np.testing.assert_array_equal(dst, np.r_[0, np.cumsum(doubled, dtype=np.int16)[:-1]])
    assert (aggs == doubled.sum(dtype=np.int16)).all()


# coop.load returns None (it writes its output in place), but where its result is read as a
# value it stands for the output payload (NVIDIA's earlier form returned it): the result
# feeds store/sort and is the same storage as the output, whose dtype comes from the source.
_LOAD_RESULT_SOURCE = """
@cuda.jit
def kernel(src, sorted_out, stored, aliased, warp_out):
    block = coop.this_block()
    t = cuda.threadIdx.x
    items = coop.ThreadData(3)  # dtype from the load source
    loaded = coop.load(block, src, items, algorithm="transpose", valid_items=n_valid, oob_default=OOB)
    coop.store(block, stored, loaded, algorithm="striped")
    coop.store(block, sorted_out, coop.radix_sort_keys(block, loaded))
    loaded[0] = loaded[0] + 1  # the result is the output itself: items sees the write
    for i in range(3):
        aliased[t * 3 + i] = items[i]
    w = coop.ThreadData(3, dtype=src.dtype)
    coop.store(coop.this_warp(), warp_out, coop.load(coop.this_warp(), src, w, algorithm="striped"),
               algorithm="striped")
"""

N_VALID, OOB = 181, -5


def load_result_kernel(compiler):
    return kernel_for(compiler, f"n_valid = {N_VALID}\nOOB = {OOB}\n" + _LOAD_RESULT_SOURCE).kernel


@pytest.mark.compile
def test_load_result_compiles_for_block_and_warp(compiler):
    T = types_for(compiler)
    arr = T.int32[::1]
    kb = compile_for(compiler, load_result_kernel(compiler), (arr,) * 5, cc=(9, 0), block=64)
    assert_inlined(kb, (9, 0))


@pytest.mark.gpu
def test_load_result_on_the_device(compiler):
    gpu_for(compiler)

    rng = np.random.default_rng(11)
    src = rng.integers(-1000, 1000, size=192).astype(np.int32)
    outs = [np.full(192, -7, np.int32) for _ in range(4)]
    load_result_kernel(compiler)[1, 64](src, *outs)  # host arrays: copied in and back by the launch
    sorted_out, stored, aliased, warp_out = outs
    tile = np.where(np.arange(192) < N_VALID, src, OOB).astype(np.int32)
    np.testing.assert_array_equal(sorted_out, np.sort(tile))
    # blocked slots stored striped: slot (t, i) lands at t + i*64
    np.testing.assert_array_equal(stored, tile.reshape(64, 3).T.reshape(-1))
    bumped = tile.copy()
    bumped[::3] += 1
    np.testing.assert_array_equal(aliased, bumped)
    np.testing.assert_array_equal(warp_out, src)


# ---- through device helpers: the helper's load/store of its parameter types the payload ----

_HELPERS = """
@cuda.jit(device=True)
def load_into(group, source, items):
    coop.load(group, source, items)


@cuda.jit(device=True, inline="always")
def store_from(group, destination, items):
    coop.store(group, destination, items)


@cuda.jit(device=True)
def load_tile(group, source):
    items = coop.ThreadData(3)  # typed by load_into's coop.load from `source`
    load_into(group, source[0:], items)  # a slice of the argument: the same dtype
    return items


@cuda.jit
def kernel(src, dst, out):
    block = coop.this_block()
    tile = load_tile(block, src)
    coop.store(block, dst, tile)
    doubled = coop.ThreadData(3)  # typed by store_from's coop.store into `out`
    for i in range(3):
        doubled[i] = tile[i] + tile[i]
    store_from(block, out, doubled)
"""


def helpers_kernel(compiler):
    source = _HELPERS
    if compiler == "numba-cuda":
        # Classic numba-cuda compiles a non-inlined device function once for every launch,
        # so its cooperative calls must be inlined (UnknownBlockDimensionError otherwise).
        source = source.replace("@cuda.jit(device=True)\n", '@cuda.jit(device=True, inline="always")\n')
    return kernel_for(compiler, source).kernel


@pytest.mark.compile
@pytest.mark.parametrize("dtype", ["int16", "float64"])
def test_dtype_through_device_helpers(dtype, compiler):
    T = types_for(compiler)
    ty = getattr(T, dtype)[::1]
    compile_for(compiler, helpers_kernel(compiler), (ty, ty, ty), cc=(9, 0), block=96)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int16, np.float64])
def test_dtype_through_device_helpers_on_the_device(dtype, compiler):
    gpu_for(compiler)

    rng = np.random.default_rng(11)
    src = rng.integers(-1000, 1000, size=3 * 96).astype(dtype)
    dst, out = np.full_like(src, 77), np.full_like(src, 55)
    helpers_kernel(compiler)[1, 96](src, dst, out)  # host arrays: copied in and back by the launch
    np.testing.assert_array_equal(dst, src)
    np.testing.assert_array_equal(out, (src + src).astype(dtype))


# ---- run_length_decode outputs: decoded_offset_dtype, else uint32 ----

_DECODE = """
@cuda.jit
def kernel(values, lengths, decoded, offsets, totals):
    block = coop.this_block()
    runs = coop.ThreadData(2)
    sizes = coop.ThreadData(2)
    coop.load(block, values, runs)
    coop.load(block, lengths, sizes)
    relative = coop.ThreadData(4)  # no store: the decoded_offset_dtype (or uint32) it is written as
    total = coop.ThreadData(1)
    out = coop.run_length_decode(block, runs, sizes, decoded_items_per_thread=4, decoded_window_offset=1,
                                 relative_offsets=relative, total_decoded_size=total{extra})
    coop.store(block, decoded, out)
    t = cuda.threadIdx.x
    for i in range(4):
        offsets[t * 4 + i] = relative[i]
    totals[t] = total[0]
"""


def decode_kernel(compiler, offset_dtype):
    extra = "" if offset_dtype is None else f", decoded_offset_dtype=np.{offset_dtype}"
    return kernel_for(compiler, _DECODE.replace("{extra}", extra)).kernel


@pytest.mark.compile
@pytest.mark.parametrize("offset_dtype", [None, "uint32", "uint64"])
def test_run_length_outputs_take_the_decoded_offset_dtype(offset_dtype, compiler):
    # A payload typed otherwise than decoded_offset_dtype= is refused (DtypeMismatchError),
    # and an int32 total_decoded_size too: compiling proves the inferred dtypes.
    T = types_for(compiler)
    compile_for(compiler, decode_kernel(compiler, offset_dtype),
                (T.int32[::1], T.int32[::1], T.int32[::1], T.uint64[::1], T.uint64[::1]), cc=(9, 0), block=64)


@pytest.mark.gpu
@pytest.mark.parametrize("offset_dtype", [None, "uint64"])
def test_run_length_inferred_outputs_on_the_device(offset_dtype, compiler):
    gpu_for(compiler)

    rng = np.random.default_rng(5)
    threads, runs = 64, 128
    values = rng.integers(-50, 50, size=runs).astype(np.int32)
    # Positive lengths: an empty run before a non-empty one traps (run-time checks).
    lengths = rng.integers(1, 4, size=runs).astype(np.int32)
    decoded = np.full(4 * threads, -7, np.int32)
    offsets = np.full(4 * threads, 12345, np.uint64)
    totals = np.full(threads, 999, np.uint64)
    # host arrays: copied in and back by the launch
    decode_kernel(compiler, offset_dtype)[1, threads](values, lengths, decoded, offsets, totals)
    full = np.repeat(values, lengths)
    within = np.concatenate([np.arange(n) for n in lengths]).astype(np.uint64)
    total = full.size
    window = np.arange(1, 1 + 4 * threads)
    inside = window < total
    maximum = np.iinfo(np.uint32 if offset_dtype is None else np.uint64).max
    np.testing.assert_array_equal(decoded, np.where(inside, full[np.minimum(window, total - 1)], 0))
    np.testing.assert_array_equal(offsets,
                                  np.where(inside, within[np.minimum(window, total - 1)], np.uint64(maximum)))
    np.testing.assert_array_equal(totals, np.full(threads, total, np.uint64))


@pytest.mark.compile
def test_helper_loading_from_a_local_array_cannot_type_the_payload(compiler):
    # The helper's source is its own local array, not a parameter: nothing in the caller
    # names the dtype, so the payload's line gets the named error.
    import cuda.coop as coop

    module = kernel_for(compiler, """
@cuda.jit(device=True)
def load_local(group, items):
    scratch = cuda.local.array(3, np.float32)
    coop.load(group, scratch, items)


@cuda.jit
def kernel(dst):
    block = coop.this_block()
    items = coop.ThreadData(3)
    load_local(block, items)
    dst[cuda.threadIdx.x] = items[0]
""")
    T = types_for(compiler)
    with pytest.raises(coop.UnknownDtypeError) as info:
        compile_for(compiler, module.kernel, (T.int32[::1],), cc=(9, 0), block=32)
    msg = str(info.value)
    assert "coop.ThreadData()" in msg and "dtype=" in msg
    assert "items = coop.ThreadData(3)" in msg, msg


# ---- NVIDIA's documented spellings (issue #32): tuple aliases, `dtype` given as None, the
# None that coop.load returns, the payload's extent as a loop bound; root and qualified names ----

def _qualified(compiler):
    return "cuda.coop.numba_mlir" if compiler == "numba-cuda-mlir" else "cuda.coop.numba_cuda"


def _spelled(compiler, spelling, body):
    """``body`` with ``M`` the root ``cuda.coop`` or the compiler's qualified module."""
    header = "M = coop\n" if spelling == "root" else f"import {_qualified(compiler)} as M\n"
    return kernel_for(compiler, header + body).kernel


_TUPLE_ALIAS = """
PROJECTION = {projection}


@cuda.jit
def kernel(source, destination):
    payload = M.ThreadData(2)  # dtype from the load source / store destination, through the tuple
    packed = (payload,)
    alias = packed
    projected = alias[PROJECTION]
    t = cuda.threadIdx.x
    if {load}:
        M.load(M.this_block(), source, projected)
        for i in range(2):
            destination[t * 2 + i] = projected[i]
    else:
        for i in range(2):
            projected[i] = source[t * 2 + i]
        M.store(M.this_block(), destination, projected)
"""


def _tuple_alias_kernel(compiler, spelling, projection, operation):
    return _spelled(compiler, spelling, _TUPLE_ALIAS.format(projection=projection, load=operation == "load"))


@pytest.mark.gpu
@pytest.mark.parametrize("spelling", ["root", "qualified"])
@pytest.mark.parametrize("projection", [0, -1], ids=["first", "last"])
@pytest.mark.parametrize("operation", ["load", "store"])
@pytest.mark.parametrize("dtype", [np.int16, np.float64])
def test_untyped_payload_through_a_tuple_alias(dtype, operation, projection, spelling, compiler):
    gpu_for(compiler)
    rng = np.random.default_rng(21)
    source = rng.integers(-1000, 1000, size=64).astype(dtype)
    destination = np.full_like(source, -77)
    _tuple_alias_kernel(compiler, spelling, projection, operation)[1, 32](source, destination)
    np.testing.assert_array_equal(destination, source)


_LOAD_IN_PLACE = """
DTYPE = {dtype}


@cuda.jit
def kernel(source, destination, returned_none, extents):
    t = cuda.threadIdx.x
    group = {group}
    payload = M.ThreadData(3, DTYPE)  # DTYPE None: inferred from the source
    result = M.load(group, source, payload)
    returned_none[t] = result is None
    for i in range(payload.items_per_thread):
        payload[i] = payload[i] + 1  # mutate the loaded payload in place
    alias = payload
    extents[t] = alias.items_per_thread
    for i in range(alias.items_per_thread):  # the extent of an alias drives a loop
        payload[i] = payload[i] * 2
    M.store(group, destination, payload)
"""

_GROUPS = {"block": "M.this_block()", "warp": "M.this_warp()", "logical-warp": "M.this_warp().group_by(8)"}


@pytest.mark.gpu
@pytest.mark.parametrize("spelling", ["root", "qualified"])
@pytest.mark.parametrize("scope", sorted(_GROUPS))
@pytest.mark.parametrize("dtype", [None, "np.int32"], ids=["inferred", "explicit"])
def test_load_writes_in_place_and_returns_none(dtype, scope, spelling, compiler):
    gpu_for(compiler)
    kernel = _spelled(compiler, spelling, _LOAD_IN_PLACE.format(dtype=dtype, group=_GROUPS[scope]))
    rng = np.random.default_rng(5)
    source = rng.integers(-10**6, 10**6, size=3 * 64).astype(np.int32)
    destination = np.full_like(source, -77)
    returned_none = np.full(64, -1, np.int32)
    extents = np.full(64, -1, np.int32)
    kernel[1, 64](source, destination, returned_none, extents)
    np.testing.assert_array_equal(destination, (source + 1) * 2)
    np.testing.assert_array_equal(returned_none, np.ones(64, np.int32))
    np.testing.assert_array_equal(extents, np.full(64, 3, np.int32))


@pytest.mark.compile
def test_a_load_result_read_as_a_value_is_its_output(compiler):
    # The rename leaves `result is None` reading the call's None, and everything else the
    # output: the kernel compiles with no copy of the payload (one local array).
    T = types_for(compiler)
    kernel = _spelled(compiler, "root", _LOAD_IN_PLACE.format(dtype=None, group="M.this_block()"))
    kb = compile_for(compiler, kernel, (T.int32[::1], T.int32[::1], T.int32[::1], T.int32[::1]), cc=(9, 0),
                     block=64)
    assert_inlined(kb, (9, 0))
