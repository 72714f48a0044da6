"""The scan family compiles to cubin with CUB inlined, on any machine (no GPU).

Also compiles the GPU test kernels of ``test_scan.py`` (every dtype, items per
thread 1/4/7 in rotation) and the running-scan example.
"""

from __future__ import annotations

import pytest

from ..compiler import SEPARATE_SCRATCH, SOURCE_FILES_FOR_MLIR

from cuda.coop.ops.scan import ALGORITHMS

from ..kernelgen import group_expr, module_from_source
from . import scan_kernels as gpu
from .cubin_checks import assert_inlined, compile_cubin, numba_types

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


GROUPS = {"block": group_expr("block", None), "warp": group_expr("warp", 32), "logical8": group_expr("warp", 8)}
OPS = {
    "scan": 'coop.scan({g}, {v}, mode="inclusive", scan_op="max")',
    "exclusive_scan": 'coop.exclusive_scan({g}, {v}, scan_op="min", initial_value=0)',
    "inclusive_scan": "coop.inclusive_scan({g}, {v}, scan_op=operator.mul)",
    "exclusive_sum": "coop.exclusive_sum({g}, {v})",
    "inclusive_sum": "coop.inclusive_sum({g}, {v})",
}


def op_kernel(op: str, group: str, value: str):
    call = OPS[op].format(g=GROUPS[group], v=value)
    if value == "items":
        store = f"r = {call}\n    for i in range(4):\n        dst[gtid * 4 + i] = r[i]"
    else:
        store = f"dst[gtid] = {call}"
    return module_from_source(f"""
import operator

@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    items = coop.ThreadData(4, dtype=np.int32)
    for i in range(4):
        items[i] = src[gtid * 4 + i]
    {store}
""").kernel


CASES = [(op, g, v) for op in OPS for g in GROUPS for v in ("items", "src[gtid]")]


@pytest.mark.parametrize("cc", [(9, 0), (8, 0)], ids=["sm90", "sm80"])
@pytest.mark.parametrize("op,group,value", CASES,
                         ids=[f"{o}-{g}-{'payload' if v == 'items' else 'scalar'}" for o, g, v in CASES])
def test_every_op_and_group_compiles_inlined(op, group, value, cc, nvdisasm):
    types = numba_types()
    kb = compile_cubin(op_kernel(op, group, value), (types.int32[::1], types.int32[::1]), cc=cc, block=128)
    assert f".target sm_{cc[0]}{cc[1]}" in kb.ptx
    assert_inlined(kb, nvdisasm=nvdisasm)
    assert "coop_scan" not in kb.ptx
    if group == "block":
        assert kb.shared_bytes() > 0 and "bar.sync" in kb.ptx
    else:
        assert kb.shared_bytes() == 0 and "bar.sync" not in kb.ptx and "shfl.sync" in kb.ptx


@pytest.mark.parametrize("algorithm", list(ALGORITHMS["block"]))
@pytest.mark.parametrize("dtype", ["int8", "uint16", "float32", "float64"])
def test_block_algorithms_with_every_kind_of_operator(algorithm, dtype, nvdisasm):
    """Built-in, Python and user operators over 4+ items: CUB's ThreadReduce never traps."""
    types = numba_types()
    ty = getattr(types, dtype)
    k = module_from_source(f"""
import operator

@cuda.jit(device=True)
def user_op(a, b):
    return a + b

@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    items = coop.ThreadData(8, dtype=np.{dtype})
    for i in range(8):
        items[i] = src[gtid * 8 + i]
    a = coop.inclusive_sum(coop.this_block(), items, algorithm="{algorithm}")
    b = coop.exclusive_scan(coop.this_block(), items, scan_op="max", initial_value=0, algorithm="{algorithm}")
    c = coop.inclusive_scan(coop.this_block(), items, scan_op=operator.mul, algorithm="{algorithm}")
    d = coop.exclusive_scan(coop.this_block(), items, scan_op=user_op, initial_value=1, algorithm="{algorithm}")
    e = coop.exclusive_sum(coop.this_block(), items, algorithm="{algorithm}")
    for i in range(8):
        dst[gtid * 8 + i] = a[i] + b[i] + c[i] + d[i] + e[i]
""").kernel
    kb = compile_cubin(k, (ty[::1], ty[::1]), cc=(9, 0), block=128)
    assert_inlined(kb, nvdisasm=nvdisasm)


def test_prefix_callbacks_inline(nvdisasm):
    types = numba_types()
    k = module_from_source("""
@cuda.jit(device=True)
def running(state, block_aggregate):
    old = state[0]
    state[0] = old + block_aggregate
    return old

@cuda.jit(device=True)
def double(block_aggregate):
    return block_aggregate * 2

@cuda.jit
def kernel(src, dst, n):
    state = coop.ThreadData(1, dtype=np.int64)
    state[0] = 0
    items = coop.ThreadData(4, dtype=np.float32)
    for start in range(0, n, 512):
        for i in range(4):
            items[i] = src[start + cuda.threadIdx.x * 4 + i]
        r = coop.inclusive_sum(coop.this_block(), items, prefix_op=running, prefix_state=state)
        s = coop.exclusive_scan(coop.this_block(), items, scan_op="max", prefix_op=double)
        for i in range(4):
            dst[start + cuda.threadIdx.x * 4 + i] = r[i] + s[i]
""").kernel
    kb = compile_cubin(k, (types.float32[::1], types.float32[::1], types.int64), cc=(9, 0), block=128)
    assert_inlined(kb, nvdisasm=nvdisasm)


def test_warp_payload_scan_is_shuffles_only():
    """Several items per lane: one warp scan of the lane totals, no shared memory."""
    types = numba_types()
    k = module_from_source("""
@cuda.jit
def kernel(src, dst):
    gtid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    items = coop.ThreadData(7, dtype=np.int64)
    agg = coop.ThreadData(1, dtype=np.int64)
    for i in range(7):
        items[i] = src[gtid * 7 + i]
    r = coop.inclusive_scan(coop.this_warp(), items, scan_op="max", aggregate_output=agg, valid_items=100)
    for i in range(7):
        dst[gtid * 7 + i] = r[i] + agg[0]
""").kernel
    kb = compile_cubin(k, (types.int64[::1], types.int64[::1]), cc=(9, 0), block=64)
    assert_inlined(kb)
    assert kb.shared_bytes() == 0 and ".local" not in kb.ptx


def _gpu_argtypes(dtype, ipt):
    types = numba_types()
    ty = getattr(types, dtype)
    return (ty[::1], ty[::1], ty[:, ::1], ty[:, ::1], types.int64[::1], ty[::1], ipt)


SAMPLE = [(d, gpu.ITEMS[(i + 1) % len(gpu.ITEMS)]) for i, d in enumerate(gpu.DTYPES)]


@pytest.mark.parametrize("dtype,ipt", SAMPLE, ids=[f"{d}-ipt{i}" for d, i in SAMPLE])
def test_gpu_matrix_kernels_compile(dtype, ipt):
    kb = compile_cubin(gpu.scan_kernel(dtype), _gpu_argtypes(dtype, ipt), cc=(9, 0), block=gpu.BLOCK)
    assert_inlined(kb)


@pytest.mark.parametrize("dtype,ipt,block", [("float64", 7, (16, 4, 2)), ("int32", 4, (10, 5, 1))],
                         ids=["3d", "50-threads"])
def test_gpu_block_shape_kernels_compile(dtype, ipt, block):
    """Also a block that is not whole warps: CUB's raking warp is then not a power of two."""
    cases = [c for c in gpu.scan_cases(dtype) if c.group == "block"]
    kb = compile_cubin(gpu.scan_kernel(dtype, cases), _gpu_argtypes(dtype, ipt), cc=(9, 0), block=block)
    assert_inlined(kb)


@pytest.mark.only_on("numba-cuda-mlir", SOURCE_FILES_FOR_MLIR)
@pytest.mark.parametrize("name", ["running_inclusive_sum", "running_exclusive_sum"])
def test_running_scan_example_compiles(name):
    types = numba_types()
    example = gpu.load_example()
    kb = compile_cubin(getattr(example, name), (types.int32[::1], types.int32[::1], types.int64), cc=(9, 0),
                       block=example.THREADS)
    assert_inlined(kb)
    assert "bar.sync" in kb.ptx


def test_functor_class_prefix_compiles_inlined():
    types = numba_types()
    kernel = module_from_source(gpu.FUNCTOR_SOURCE).kernel
    kb = compile_cubin(kernel, (types.int32[::1], types.int32[::1], types.int64), cc=(9, 0), block=128)
    assert_inlined(kb)


@pytest.mark.xfail_on("numba-cuda", "AssertionError", SEPARATE_SCRATCH)
def test_explicit_temp_storage_layout():
    """shared: one region as large as the largest call; exclusive: one slice per call site."""
    import re

    types = numba_types()
    argtypes = (types.int32[::1], types.int32[:, ::1], types.int32[:, ::1], types.int64)

    def regions(source):
        kb = compile_cubin(module_from_source(source).kernel, argtypes, cc=(9, 0), block=gpu.BLOCK)
        assert_inlined(kb)
        found = re.findall(r"\.shared\s+\.align\s+\d+\s+\.b8\s+cuda_coop_ts(\d+)_\w+\[(\d+)\]", kb.ptx)
        # In constructor order: shared, exclusive, manual.
        return [int(size) for _site, size in sorted(found, key=lambda f: int(f[0]))], kb

    sizes, kb = regions(gpu.TEMP_STORAGE_SOURCE)
    assert len(sizes) == 3 and min(sizes) > 0, sizes
    shared_instead, _ = regions(gpu.TEMP_STORAGE_SOURCE.replace('sharing="exclusive"', 'sharing="shared"'))
    # The same two calls: side by side (exclusive) take more than overlapped (shared).
    assert sizes[1] > shared_instead[1], (sizes, shared_instead)
    # auto_sync=False drops the two calls' trailing barriers; the kernel's own remain.  With
    # auto_sync, each of the two calls is followed at once by the kernel's cuda.syncthreads(),
    # so it adds no barrier of its own either (tests/backends/test_barrier_placement.py).
    manual_auto, kb_auto = regions(gpu.TEMP_STORAGE_SOURCE.replace("TempStorage(auto_sync=False)", "TempStorage()"))
    assert kb_auto.ptx.count("bar.sync") == kb.ptx.count("bar.sync")
