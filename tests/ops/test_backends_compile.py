"""The same kernels on both compiler backends, compiled to cubin with no GPU.

Each case is one cooperative call between a load and a store; it compiles for sm_90
with numba-cuda-mlir and with classic numba-cuda, and on both the provider is inlined
(no call left in the post-LTO PTX) and the shared memory it needs is there.
"""

from __future__ import annotations

import pytest

from cuda.coop import UnknownDtypeError

from ..backends_param import COMPILERS, compile_for, kernel_for, types_for
from .cubin_checks import assert_inlined

# Under --compiler numba-cuda these would only repeat themselves.
pytestmark = [pytest.mark.compile, pytest.mark.only_on("numba-cuda-mlir", "runs each test on both compilers itself (tests/backends_param.py)")]

B = "coop.this_block()"
W = "coop.this_warp()"

# name -> (call producing `r` from the payload `items`, uses shared memory)
CASES = {
    "load_store_direct": (None, False),
    "sum_block": (f"r = coop.sum({B}, items)", True),
    "sum_warp": (f"r = coop.sum({W}, items)", False),
    "reduce_max": (f'r = coop.reduce({B}, items, binary_op="max")', True),
    "reduce_operator": (f"r = coop.reduce({B}, items, binary_op=operator.add)", True),
    "inclusive_sum": (f"r = coop.inclusive_sum({B}, items)", True),
    "exclusive_sum_warp": (f"r = coop.exclusive_sum({W}, items)", False),
    "inclusive_scan_max": (f'r = coop.inclusive_scan({B}, items, scan_op="max")', True),
    "exclusive_scan_min": (f'r = coop.exclusive_scan({B}, items, scan_op="min", initial_value=0)', True),
    "scan_mode": (f'r = coop.scan({B}, items, mode="inclusive", scan_op="max")', True),
    "exchange": (f'r = coop.exchange({B}, items, mode="striped_to_blocked")', True),
    "shuffle_up": (f'r = coop.shuffle({B}, items, mode="up")', True),
    "merge_sort_keys": (f"r = coop.merge_sort_keys({B}, items)", True),
    "radix_sort_keys": (f"r = coop.radix_sort_keys({B}, items)", True),
    "adjacent_difference": (f"r = coop.adjacent_difference({B}, items)", True),
    "topk_max_keys": (f"r = coop.topk_max_keys({B}, items, k=4)", True),
    "device_function_scan_op": (f"r = coop.inclusive_scan({B}, items, scan_op=user_op)", True),
    "device_function_reduce_op": (f"r = coop.reduce({W}, items, binary_op=user_op)", False),
    "logical_warp_scan": ("r = coop.inclusive_sum(coop.this_warp().group_by(8), items)", False),
    "warps_group_sum": ("r = coop.sum(coop.this_block().group_by(2), items)", True),
    "temp_storage": ("r = coop.inclusive_sum(g, items, temp_storage=coop.TempStorage())", True),
}


def _kernel(compiler, call, *, load='algorithm="direct"'):
    store = "coop.store(g, dst, items)" if call is None else (
        "coop.store(g, dst, r)" if "coop.sum" not in call and "coop.reduce" not in call
        else "if cuda.threadIdx.x == 0:\n        dst[cuda.blockIdx.x] = r")
    return kernel_for(compiler, f"""
import operator

@cuda.jit(device=True)
def user_op(a, b):
    return max(a, b)

@cuda.jit
def kernel(src, dst):
    g = coop.this_block()
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(g, src, items, {load})
    {call or ""}
    {store}
""").kernel


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("case", list(CASES))
def test_call_compiles_inlined_on_both_backends(case, compiler, nvdisasm):
    call, shared = CASES[case]
    types = types_for(compiler)
    kb = compile_for(compiler, _kernel(compiler, call), (types.int32[::1], types.int32[::1]), cc=(9, 0), block=128)
    assert_inlined(kb, (9, 0), nvdisasm=nvdisasm)
    if shared:
        assert kb.shared_bytes() > 0
        assert "bar.sync" in kb.ptx or "bar.warp.sync" in kb.ptx or "shfl.sync" in kb.ptx
    else:
        assert kb.shared_bytes() == 0


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("algorithm", ["direct", "striped", "vectorize", "transpose", "warp_transpose"])
def test_load_store_algorithms_on_both_backends(algorithm, compiler):
    types = types_for(compiler)
    kernel = _kernel(compiler, None, load=f'algorithm="{algorithm}"')
    kb = compile_for(compiler, kernel, (types.int32[::1], types.int32[::1]), cc=(9, 0), block=128)
    assert_inlined(kb, (9, 0))
    assert (kb.shared_bytes() > 0) == (algorithm in ("transpose", "warp_transpose"))


@pytest.mark.parametrize("compiler", COMPILERS)
def test_items_per_thread_kernel_argument_specializes(compiler):
    kernel = kernel_for(compiler, """
@cuda.jit
def kernel(src, dst, items_per_thread):
    items = coop.ThreadData(items_per_thread, dtype=np.float32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, coop.inclusive_sum(coop.this_block(), items))
""").kernel
    types = types_for(compiler)
    kb = compile_for(compiler, kernel, (types.float32[::1], types.float32[::1], 8), cc=(9, 0), block=(32, 2))
    assert_inlined(kb, (9, 0))
    assert kb.block == (32, 2, 1)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_error_names_the_user_line_on_both_backends(compiler):
    module = kernel_for(compiler, """
@cuda.jit
def kernel(src, dst):
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(coop.this_block(), src, items, algorithm="nope")  # the bad line
""")
    types = types_for(compiler)
    from cuda.coop import InvalidAlgorithmError

    with pytest.raises(InvalidAlgorithmError, match="algorithm='nope'") as info:
        compile_for(compiler, module.kernel, (types.int32[::1], types.int32[::1]), block=64)
    assert "# the bad line" in str(info.value)


def test_no_block_shape_is_a_named_error_on_classic():
    from cuda.coop import UnknownBlockDimensionError

    module = kernel_for("numba-cuda", """
@cuda.jit
def kernel(src):
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(coop.this_block(), src, items)
""")
    types = types_for("numba-cuda")
    with pytest.raises(UnknownBlockDimensionError, match="kernel\\[grid, block\\]"):
        compile_for("numba-cuda", module.kernel, (types.int32[::1],), block=None)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_payload_dtype_from_the_load_source(compiler):
    # Both compilers infer a ThreadData's dtype (backends/_inference.py); the cases are in
    # test_payload_inference.py.  Here: the int64 load source types the payload, and the
    # int64 destination then matches it (a mismatch is a DtypeMismatchError).
    module = kernel_for(compiler, """
@cuda.jit
def kernel(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, coop.inclusive_sum(coop.this_block(), items))
""")
    types = types_for(compiler)
    compile_for(compiler, module.kernel, (types.int64[::1], types.int64[::1]), block=128)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_payload_dtype_that_nothing_gives_is_a_named_error(compiler):
    module = kernel_for(compiler, """
@cuda.jit
def kernel(dst):
    items = coop.ThreadData(4)  # nothing types it
    dst[cuda.threadIdx.x] = items[0]
""")
    types = types_for(compiler)
    with pytest.raises(UnknownDtypeError, match="cannot be inferred.*pass dtype=") as info:
        compile_for(compiler, module.kernel, (types.int32[::1],), block=128)
    assert "# nothing types it" in str(info.value)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_inlined_device_function_shares_the_kernels_launch(compiler):
    module = kernel_for(compiler, """
@cuda.jit(device=True, inline="always")
def helper(items):
    return coop.sum(coop.this_block(), items)

@cuda.jit
def kernel(src, dst):
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(coop.this_block(), src, items)
    dst[cuda.blockIdx.x] = helper(items)
""")
    types = types_for(compiler)
    kb = compile_for(compiler, module.kernel, (types.int32[::1], types.int32[::1]), cc=(9, 0), block=128)
    assert_inlined(kb, (9, 0))


def test_classic_device_function_compiled_alone_is_refused():
    """numba-cuda compiles a non-inlined device function once per argument types, whatever the
    launch: its block shape would be the first launch's, so the call is refused by name."""
    from cuda.coop import UnknownBlockDimensionError

    module = kernel_for("numba-cuda", """
@cuda.jit(device=True)
def helper(items):
    return coop.sum(coop.this_block(), items)  # in a device function

@cuda.jit
def kernel(src, dst):
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(coop.this_block(), src, items)
    dst[cuda.blockIdx.x] = helper(items)
""")
    types = types_for("numba-cuda")
    with pytest.raises(UnknownBlockDimensionError, match="inline='always'") as info:
        compile_for("numba-cuda", module.kernel, (types.int32[::1], types.int32[::1]), block=128)
    assert "# in a device function" in str(info.value)


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("sharing", ["shared", "exclusive"])
def test_explicit_temp_storage_holds_every_call(compiler, sharing):
    """One TempStorage for load, scan and store: one shared array; "shared" overlaps the calls'
    scratch (the largest call's size), "exclusive" gives each call its own slice (the sum)."""
    import re

    module = kernel_for(compiler, f"""
@cuda.jit
def kernel(src, dst):
    ts = coop.TempStorage(sharing="{sharing}")
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(coop.this_block(), src, items, algorithm="transpose", temp_storage=ts)
    r = coop.inclusive_sum(coop.this_block(), items, temp_storage=ts)
    coop.store(coop.this_block(), dst, r, algorithm="transpose", temp_storage=ts)
""")
    types = types_for(compiler)
    kb = compile_for(compiler, module.kernel, (types.int32[::1], types.int32[::1]), cc=(9, 0), block=128)
    assert_inlined(kb, (9, 0))
    sizes = [int(n) for n in re.findall(r"\.shared\s+\.align\s+\d+\s+\.b8\s+\w+\[(\d+)\]", kb.ptx)]
    assert len(sizes) == 1, sizes
    if sharing == "shared":
        assert 2048 <= sizes[0] < 2 * 2048
    else:
        assert sizes[0] >= 2 * 2048


# Every family, with payload outputs, pairs, callbacks with state and comparators.
FAMILIES = {
    "prefix_op_with_state": "state = coop.ThreadData(1, dtype=np.int64)\n"
                            "state[0] = 0\n"
                            "r = coop.inclusive_sum(b, items, prefix_op=running, prefix_state=state)\n"
                            "coop.store(b, dst, r)",
    "stateful_function": "state = coop.ThreadData(1, dtype=np.int64)\n"
                         "state[0] = 0\n"
                         "r = coop.exclusive_sum(b, items, state, prefix_op=RUNNING)\n"
                         "coop.store(b, dst, r)",
    "histogram": "h = coop.histogram(b, items, bins=16)\ndst[0] = h[0]",
    "discontinuity": "r = coop.discontinuity(b, items, mode='heads')\ncoop.store(b, dst, r)",
    "radix_rank": "r = coop.radix_rank(b, items, begin_bit=0, radix_bits=4)\ncoop.store(b, dst, r)",
    "merge_sort_pairs": "v = coop.ThreadData(4, dtype=np.int32)\nr, s = coop.merge_sort_pairs(b, items, v)\n"
                        "coop.store(b, dst, s)",
    "merge_sort_comparator": "r = coop.merge_sort_keys(b, items, compare_op=less)\ncoop.store(b, dst, r)",
    "radix_sort_pairs": "v = coop.ThreadData(4, dtype=np.int32)\nr, s = coop.radix_sort_pairs(b, items, v)\n"
                        "coop.store(b, dst, s)",
    "topk_min_pairs": "v = coop.ThreadData(4, dtype=np.int32)\nr, s = coop.topk_min_pairs(b, items, v, k=8)\n"
                      "coop.store(b, dst, s)",
    "reduce_batched_warp": "r = coop.reduce_batched(coop.this_warp(), items, binary_op='+')\ncoop.store(b, dst, r)",
    "run_length_decode": "l = coop.ThreadData(4, dtype=np.int32)\n"
                         "x = coop.run_length_decode(b, items, l, decoded_items_per_thread=4)\ncoop.store(b, dst, x)",
    "scalar_sum": "dst[0] = coop.sum(b, items[0])",
    "single_thread_group": "dst[0] = coop.sum(coop.this_thread(), items)",
}


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("case", list(FAMILIES))
def test_every_family_compiles_inlined_on_both_backends(case, compiler):
    import textwrap

    module = kernel_for(compiler, f"""
@cuda.jit(device=True)
def running(state, block_aggregate):
    old = state[0]
    state[0] = old + block_aggregate
    return old

from cuda.coop._stateful import StatefulFunction  # cuda.coop.numba_mlir's and .numba_cuda's
RUNNING = StatefulFunction(running, np.int64)

@cuda.jit(device=True)
def less(a, b):
    return a < b

@cuda.jit
def kernel(src, dst):
    b = coop.this_block()
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(b, src, items)
{textwrap.indent(FAMILIES[case], "    ")}
""")
    types = types_for(compiler)
    kb = compile_for(compiler, module.kernel, (types.int32[::1], types.int32[::1]), cc=(9, 0), block=128)
    assert_inlined(kb, (9, 0))


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("dtype", ["float16", "complex64", "complex128"])
def test_half_and_complex_payloads_on_both_backends(dtype, compiler):
    """16-bit floats and complex values cross the C ABI by pointer (scalars included); a
    complex operator is a device function called through a by-pointer shim."""
    difference = ", difference_op=sub" if dtype.startswith("complex") else ""
    module = kernel_for(compiler, f"""
@cuda.jit(device=True)
def sub(a, b):
    return a - b

@cuda.jit
def kernel(src, dst):
    items = coop.ThreadData(4, dtype=np.{dtype})
    coop.load(coop.this_block(), src, items)
    r = coop.exchange(coop.this_block(), items, mode="striped_to_blocked")
    dst[1] = coop.shuffle(coop.this_block(), items[1], mode="offset", distance=1)
    d = coop.adjacent_difference(coop.this_block(), r{difference})
    coop.store(coop.this_block(), dst, d)
""")
    types = types_for(compiler)
    ty = getattr(types, dtype)[::1]
    kb = compile_for(compiler, module.kernel, (ty, ty), cc=(9, 0), block=128)
    assert_inlined(kb, (9, 0))


@pytest.mark.parametrize("compiler", COMPILERS)
def test_checked_mode_on_both_backends(compiler, monkeypatch):
    """Run-time argument checks are the default (CUDA_COOP_CHECKED, read when the kernel
    compiles): run-time arguments are tested and a bad one traps after a report."""
    monkeypatch.delenv("CUDA_COOP_CHECKED", raising=False)
    module = kernel_for(compiler, """
@cuda.jit
def kernel(src, dst, n):
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(coop.this_block(), src, items, valid_items=n, oob_default=0)
    coop.store(coop.this_block(), dst, coop.inclusive_sum(coop.this_block(), items), valid_items=n)
""")
    types = types_for(compiler)
    kb = compile_for(compiler, module.kernel, (types.int32[::1], types.int32[::1], types.int32), cc=(9, 0),
                     block=128)
    assert "trap;" in kb.ptx and "vprintf" in kb.ptx and "__assertfail" not in kb.ptx
    monkeypatch.setenv("CUDA_COOP_CHECKED", "0")  # the opt-out: clamped, no report
    kb = compile_for(compiler, module.kernel, (types.int32[::1], types.int32[::1], types.int32), cc=(9, 0),
                     block=128)
    assert "trap;" not in kb.ptx and "vprintf" not in kb.ptx


RESERVE_KERNEL = """
@cuda.jit
def kernel(src, dst, out):
    g = coop.this_block()
    storage = coop.TempStorage({storage})
    keep = storage.reserve(128, np.int32, alignment=64)  # the reservation
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(g, src, items)
    keep[cuda.threadIdx.x] = cuda.threadIdx.x * 3
    cuda.syncthreads()
    r = coop.inclusive_sum(g, items, temp_storage=storage)
    cuda.syncthreads()
    coop.store(g, dst, r)
    out[cuda.threadIdx.x] = keep[127 - cuda.threadIdx.x]
"""


@pytest.mark.parametrize("compiler", COMPILERS)
def test_reserve_compiles_on_both_backends(compiler):
    """A reservation beside a call's scratch in one TempStorage: on classic numba-cuda an
    array of its own (512 bytes, 64-byte aligned) next to the storage's scratch array,
    so the scratch reuse cannot overlap it; numba-cuda-mlir places it in the storage's
    region (tests/ops/test_reserve_compile.py checks where)."""
    import re

    module = kernel_for(compiler, RESERVE_KERNEL.format(storage="auto_sync=False"))
    types = types_for(compiler)
    kb = compile_for(compiler, module.kernel, (types.int32[::1],) * 3, cc=(9, 0), block=128)
    assert_inlined(kb, (9, 0))
    arrays = [(int(a), int(n)) for a, n in re.findall(r"\.shared\s+\.align\s+(\d+)\s+\.b8\s+\w+\[(\d+)\]", kb.ptx)]
    if compiler == "numba-cuda":
        assert (64, 512) in arrays, arrays
        assert len(arrays) == 2 and kb.shared_bytes() >= 512 + 16, arrays
    else:
        assert kb.shared_bytes() >= 512


@pytest.mark.parametrize(("storage", "line", "error", "words"), [
    ("auto_sync=True", "keep = storage.reserve(128, np.int32, alignment=64)", "TempStorageError",
     "reserve requires auto_sync=False"),
    ("size_in_bytes=256", "keep = storage.reserve(128, np.int32, alignment=64)", "TempStorageError",
     "size_in_bytes=256 is too small"),
    ("", "keep = storage.reserve(src[0], np.int32)", "NonConstantArgumentError", "count=.* compile time"),
    ("", "keep = storage.reserve(128, 'int3')", "UnsupportedDtypeError", "int3"),
])
def test_reserve_errors_on_classic_name_the_line(storage, line, error, words):
    import cuda.coop as coop

    source = RESERVE_KERNEL.format(storage=storage).replace(
        "keep = storage.reserve(128, np.int32, alignment=64)  # the reservation", line + "  # the reservation")
    module = kernel_for("numba-cuda", source)
    types = types_for("numba-cuda")
    with pytest.raises(getattr(coop, error), match=words) as info:
        compile_for("numba-cuda", module.kernel, (types.int32[::1],) * 3, cc=(9, 0), block=128)
    if error != "TempStorageError" or "auto_sync" in words:
        assert "# the reservation" in str(info.value)
