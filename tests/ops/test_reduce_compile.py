"""Reduce / Sum / reduce_batched compile to cubin with CUB inlined, on any machine (no GPU).

Also compiles the GPU test kernels of ``test_reduce.py`` (every dtype, items per
thread 1/4/7 in rotation, every reduce_batched dtype), so a device run finds only
numerical problems.
"""

from __future__ import annotations


import pytest

from cuda.coop.ops.reduce import ALGORITHMS

from ..kernelgen import group_expr, module_from_source
from . import reduce_kernels as gpu
from .cubin_checks import assert_inlined, compile_cubin, numba_types

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


GROUPS = {"block": group_expr("block", None), "warp": group_expr("warp", 32), "logical8": group_expr("warp", 8)}


def op_kernel(op: str, group: str, extra: str = ""):
    value = "items" if op != "reduce_scalar" else "src[gtid]"
    call = {
        "sum": f"coop.sum({GROUPS[group]}, items{extra})",
        "reduce": f'coop.reduce({GROUPS[group]}, items, binary_op="max"{extra})',
        "reduce_scalar": f"coop.reduce({GROUPS[group]}, {value}, binary_op=user_op{extra})",
        "reduce_batched": f'coop.reduce_batched({GROUPS[group]}, items, binary_op="+"{extra})',
    }[op]
    store = "r = " + call + ("\n    for i in range(r.items_per_thread):\n        dst[gtid * 4 + i] = r[i]"
                             if op == "reduce_batched" else "\n    dst[gtid] = r")
    return module_from_source(f"""
{gpu.USER_OP_SOURCE}
@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    items = coop.ThreadData(4, dtype=np.float32)
    for i in range(4):
        items[i] = src[gtid * 4 + i]
    {store}
""").kernel


CASES = [(op, g) for op in ("sum", "reduce", "reduce_scalar") for g in GROUPS] + [
    ("reduce_batched", "warp"), ("reduce_batched", "logical8")]


@pytest.mark.parametrize("cc", [(9, 0), (8, 0)], ids=["sm90", "sm80"])
@pytest.mark.parametrize("op,group", CASES, ids=[f"{o}-{g}" for o, g in CASES])
def test_every_op_and_group_compiles_inlined(op, group, cc, nvdisasm):
    types = numba_types()
    kb = compile_cubin(op_kernel(op, group), (types.float32[::1], types.float32[::1]), cc=cc, block=128)
    assert f".target sm_{cc[0]}{cc[1]}" in kb.ptx
    assert_inlined(kb, nvdisasm=nvdisasm)
    if group == "block":
        # CUB's BlockReduce scratch, placed by the core; one barrier ends the call.
        assert kb.shared_bytes() > 0 and "bar.sync" in kb.ptx
    else:
        # Warp reductions are shuffles only: no scratch, no block barrier.
        assert kb.shared_bytes() == 0 and "bar.sync" not in kb.ptx
        assert "shfl.sync" in kb.ptx


@pytest.mark.parametrize("algorithm", list(ALGORITHMS["block"]))
@pytest.mark.parametrize("dtype", ["int8", "float32", "int64"])
def test_block_algorithms(algorithm, dtype, nvdisasm):
    types = numba_types()
    ty = getattr(types, dtype)
    k = module_from_source(f"""
@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    items = coop.ThreadData(4, dtype=np.{dtype})
    for i in range(4):
        items[i] = src[gtid * 4 + i]
    dst[gtid] = coop.reduce(coop.this_block(), items, binary_op="max", algorithm="{algorithm}")
    dst[gtid] += coop.sum(coop.this_block(), items, algorithm="{algorithm}", valid_items=cuda.blockIdx.x + 1)
""").kernel
    kb = compile_cubin(k, (ty[::1], ty[::1]), cc=(9, 0), block=256)
    assert_inlined(kb, nvdisasm=nvdisasm)


def test_warp_sum_uses_redux_on_sm80_and_later(nvdisasm):
    """CUB's int32 warp sum is one REDUX instruction on sm_80+: the wrapper costs nothing."""
    types = numba_types()
    k = module_from_source("""
@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    dst[gtid] = coop.sum(coop.this_warp(), src[gtid], broadcast=True)
""").kernel
    kb = compile_cubin(k, (types.int32[::1], types.int32[::1]), cc=(9, 0), block=128)
    assert "redux.sync.add.s32" in kb.ptx
    assert_inlined(kb, nvdisasm=nvdisasm)


def test_broadcast():
    types = numba_types()
    src = """
@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    dst[gtid] = coop.reduce({group}, src[gtid], binary_op="min", broadcast={bcast})
"""
    sizes = {}
    for group in ("block", "logical8"):
        for bcast in (False, True):
            k = module_from_source(src.format(group=GROUPS[group], bcast=bcast)).kernel
            kb = compile_cubin(k, (types.float64[::1], types.float64[::1]), cc=(9, 0), block=128)
            assert_inlined(kb)
            sizes[group, bcast] = (kb.ptx.count("bar.sync"), kb.shared_bytes(), kb.ptx.count("shfl.sync.idx"))
    # A block broadcast adds one barrier and a slot next to CUB's scratch.
    assert sizes["block", True][0] == sizes["block", False][0] + 1
    assert sizes["block", True][1] > sizes["block", False][1]
    # A warp broadcast is one indexed shuffle per 32-bit word of the value (a double: 2).
    assert sizes["logical8", True][2] == sizes["logical8", False][2] + 2


@pytest.mark.parametrize("batches,expected", [(32, 31), (64, 62), (40, 62), (7, 7 + 2), (1, 5)])
def test_batched_reduction_takes_o_b_shuffles(batches, expected):
    """B batches over 32 lanes: about B butterfly shuffles, all in registers.

    B > 32: S*32 - S (B padded to S*32); B <= 32: P - 1 + log2(32/P) (P = next power
    of two).  CUB's WarpReduce per batch would take B*log2(32) = 5B.
    """
    types = numba_types()
    k = module_from_source(f"""
@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    items = coop.ThreadData({batches}, dtype=np.int32)
    for i in range({batches}):
        items[i] = src[gtid * {batches} + i]
    r = coop.reduce_batched(coop.this_warp(), items, binary_op="+", output_layout="blocked")
    for s in range(r.items_per_thread):
        dst[gtid * {batches} + s] = r[s]
""").kernel
    kb = compile_cubin(k, (types.int32[::1], types.int32[::1]), cc=(9, 0), block=64)
    assert_inlined(kb)
    assert kb.ptx.count("shfl.sync.bfly") == expected
    assert kb.shared_bytes() == 0 and ".local" not in kb.ptx, "the batches stay in registers"


def test_user_operator_is_inlined_and_identified_by_the_function(nvdisasm):
    """Two device functions with the same signature get two providers and both inline."""
    types = numba_types()
    k = module_from_source("""
@cuda.jit(device=True)
def first(a, b):
    return a * 3 + b

@cuda.jit(device=True)
def second(a, b):
    return a * 5 + b

@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    dst[gtid] = coop.reduce(coop.this_warp(), src[gtid], binary_op=first)
    dst[gtid] += coop.reduce(coop.this_warp(), src[gtid], binary_op=second)
""").kernel
    kb = compile_cubin(k, (types.int32[::1], types.int32[::1]), cc=(9, 0), block=64)
    assert_inlined(kb, nvdisasm=nvdisasm)
    assert "mul.lo.s32" in kb.ptx or "mad.lo.s32" in kb.ptx
    assert kb.ptx.count("mad.lo.s32") + kb.ptx.count("mul.lo.s32") >= 2


def _gpu_argtypes(dtype, ipt):
    types = numba_types()
    ty = getattr(types, dtype)
    return (ty[::1], ty[::1], ty[:, ::1], types.int64[::1], ipt)


# The GPU matrix kernels: every dtype, items per thread in rotation.
SAMPLE = [(d, gpu.ITEMS[i % len(gpu.ITEMS)]) for i, d in enumerate(gpu.DTYPES)]


@pytest.mark.parametrize("dtype,ipt", SAMPLE, ids=[f"{d}-ipt{i}" for d, i in SAMPLE])
def test_gpu_matrix_kernels_compile(dtype, ipt):
    kb = compile_cubin(gpu.reduce_kernel(dtype), _gpu_argtypes(dtype, ipt), cc=(9, 0), block=gpu.BLOCK)
    assert_inlined(kb)


BATCHED_SAMPLE = [(d, gpu.BATCHES[i % len(gpu.BATCHES)]) for i, d in enumerate(gpu.BATCHED_DTYPES)]


@pytest.mark.parametrize("dtype,batches", BATCHED_SAMPLE, ids=[f"{d}-B{b}" for d, b in BATCHED_SAMPLE])
def test_gpu_batched_kernels_compile(dtype, batches):
    ty = getattr(numba_types(), dtype)
    kb = compile_cubin(gpu.batched_kernel(dtype, batches), (ty[::1], ty[:, ::1]), cc=(9, 0), block=gpu.BLOCK)
    assert_inlined(kb)


def test_gpu_block_shape_kernel_compiles():
    kb = compile_cubin(gpu.reduce_kernel("int32", gpu.block_only_cases("int32")), _gpu_argtypes("int32", 4),
                       cc=(9, 0), block=(10, 5, 1))
    assert_inlined(kb)


# -- partial logical warps: group_by(w, exhaustive=False), w = 17..31 ---------------------------

def partial_kernel(width: int, call: str, *, guard: bool = True):
    group = f"coop.this_warp().group_by({width}, exhaustive=False)"
    store = f"dst[gtid] = {call.format(group='group')}"
    body = f"if group.is_member():\n        {store}" if guard else store
    return module_from_source(f"""
{gpu.USER_OP_SOURCE}
@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    group = {group}
    items = coop.ThreadData(4, dtype=np.float32)
    for i in range(4):
        items[i] = src[gtid * 4 + i]
    {body}
""").kernel


PARTIAL_CALLS = {
    "sum": "coop.sum({group}, items)",
    "reduce": 'coop.reduce({group}, items, binary_op="max", valid_items=cuda.blockIdx.x + 1)',
    "reduce_scalar": "coop.reduce({group}, src[gtid], binary_op=user_op, broadcast=False)",
}


def smem_reduce_bytes(width: int, itemsize: int, warps: int) -> int:
    """CUB's WarpReduceSmem<T, width> scratch for ``warps`` warps: 1.5 logical warps of T and
    of one-byte flags (width + 16 of each for widths 17..31), rounded up to T's alignment."""
    elements = width + 16
    per_warp = -(-(elements * itemsize + elements) // itemsize) * itemsize
    return per_warp * warps


@pytest.mark.parametrize("cc", [(9, 0), (8, 0)], ids=["sm90", "sm80"])
@pytest.mark.parametrize("width", [17, 24, 31])
@pytest.mark.parametrize("call", sorted(PARTIAL_CALLS))
def test_partial_logical_warps_compile_to_cub_warp_reduce_smem(call, width, cc, nvdisasm):
    """CUB reduces a 17..31-lane logical warp in shared memory with warp barriers over lanes
    0..width-1: one scratch instance per warp, no block barrier."""
    types = numba_types()
    kb = compile_cubin(partial_kernel(width, PARTIAL_CALLS[call]), (types.float32[::1], types.float32[::1]),
                       cc=cc, block=128)
    assert_inlined(kb, cc, nvdisasm=nvdisasm)
    assert kb.shared_bytes() == smem_reduce_bytes(width, 4, 128 // 32)
    assert "bar.sync" not in kb.ptx and "bar.warp.sync" in kb.ptx
    assert "st.volatile.shared.f32" in kb.ptx and "ld.volatile.shared.f32" in kb.ptx
    # The broadcast (default) is one indexed shuffle from lane 0; broadcast=False needs none.
    assert ("shfl.sync.idx" in kb.ptx) == (call != "reduce_scalar")


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float64"])
def test_partial_logical_warp_scratch_per_dtype(dtype):
    types = numba_types()
    ty = getattr(types, dtype)
    k = module_from_source(f"""
@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    group = coop.this_warp().group_by(20, exhaustive=False)
    if group.is_member():
        dst[gtid] = coop.reduce(group, src[gtid], binary_op="min")
""").kernel
    kb = compile_cubin(k, (ty[::1], ty[::1]), cc=(9, 0), block=256)
    assert_inlined(kb)
    assert kb.shared_bytes() == smem_reduce_bytes(20, ty.bitwidth // 8, 256 // 32)


def test_unguarded_partial_warp_call_compiles():
    """Lanes width..31 may call too: the provider skips the reduction (and the barrier) there."""
    types = numba_types()
    kb = compile_cubin(partial_kernel(24, PARTIAL_CALLS["sum"], guard=False),
                       (types.float32[::1], types.float32[::1]), cc=(9, 0), block=64)
    assert_inlined(kb)


def test_partial_warp_scratch_does_not_overlap_other_warp_calls():
    """Lanes that skip a partial logical warp's call may run ahead into the next warp call: the
    two calls' scratch is laid side by side (sum of sizes), never overlapped (max)."""
    types = numba_types()

    def shared(body):
        k = module_from_source(f"""
@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    group = coop.this_warp().group_by(24, exhaustive=False)
    items = coop.ThreadData(4, dtype=np.int32)
    for i in range(4):
        items[i] = src[gtid * 4 + i]
{body}
""").kernel
        return compile_cubin(k, (types.int32[::1], types.int32[::1]), cc=(9, 0), block=128).shared_bytes()

    reduce_only = shared("""    if group.is_member():
        dst[gtid] = coop.sum(group, items)""")
    exchange_only = shared("""    out = coop.exchange(coop.this_warp(), items, mode="blocked_to_striped")
    dst[gtid] = out[0]""")
    both = shared("""    if group.is_member():
        dst[gtid] = coop.sum(group, items)
    out = coop.exchange(coop.this_warp(), items, mode="blocked_to_striped")
    dst[gtid] += out[0]""")
    assert reduce_only == smem_reduce_bytes(24, 4, 4) and exchange_only > 0
    assert both == reduce_only + exchange_only


def test_gpu_partial_run_ahead_kernel_compiles():
    types = numba_types()
    k = module_from_source(gpu.PARTIAL_RUN_AHEAD_SOURCE.replace("WIDTH", "24")).kernel
    kb = compile_cubin(k, (types.int32[::1], types.int32[:, ::1], types.int32[::1]), cc=(9, 0), block=96)
    assert_inlined(kb)
