"""Cooperative scratch above 48 KiB compiles to dynamic shared memory (no GPU), and the limits.

Compiles the GPU test kernels of ``test_dynamic_shared.py`` and checks, from the PTX and
the compile result: one ``.extern .shared`` backing (16-byte aligned) holds the scratch,
the launch reserves its bytes, and the static shared memory is only the kernel's own
array.  Then the errors: scratch above the target GPU's opt-in limit at compile time (at
the user's line, naming bytes, limit and fix), a dynamic ``cuda.shared.array`` next to
dynamic scratch, and the launch-time message for a GPU with a smaller limit.  The kernel
tests run on both compiler backends (classic numba-cuda lowers one call at a time and
decides static or dynamic after each; its errors point at the call that crossed the limit).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from cuda import coop

from ..backends_param import COMPILERS, compile_for, kernel_for, types_for
from ..error_harness import assert_at_user_line
from . import dynamic_shared_kernels as gpu
from .cubin_checks import assert_inlined

# Under --compiler numba-cuda these would only repeat themselves.
pytestmark = pytest.mark.only_on("numba-cuda-mlir", "runs each test on both compilers itself (tests/backends_param.py)")

EXTERN = re.compile(r"\.extern\s+\.shared\s+\.align\s+(\d+)\s+\.b8\s+(cuda_coop_dynamic_\w+)\[\]")
MINE_BYTES = gpu.MINE * 4
both = pytest.mark.parametrize("compiler", COMPILERS)


def _argtypes(which, compiler):
    t = types_for(compiler)
    return {
        "histogram": (t.uint16[::1], t.int64[::1], t.int32[:, ::1], t.int32[::1]),
        "sort": (t.uint64[::1], t.uint64[::1], t.int32[::1]),
        "reserve": (t.float32[::1], t.int32[::1], t.float32[::1], t.int32[::1], t.int32[::1]),
    }[which]


def _kernel(which, compiler, count=gpu.RESERVE_COUNT):
    return {"histogram": gpu.histogram_kernel, "sort": gpu.sort_kernel,
            "reserve": lambda c: gpu.reserve_kernel(count, c)}[which](compiler)


@pytest.mark.compile
@both
@pytest.mark.parametrize("which, least", [("histogram", gpu.HIST_BINS * 4), ("sort", gpu.BLOCK * gpu.SORT_ITEMS * 8),
                                          ("reserve", gpu.RESERVE_COUNT * 4)])
def test_scratch_above_48_kib_is_one_dynamic_backing(compiler, which, least):
    kb = compile_for(compiler, _kernel(which, compiler), _argtypes(which, compiler), cc=(9, 0), block=gpu.BLOCK,
                     grid=gpu.BLOCKS)
    assert_inlined(kb, (9, 0))
    externs = EXTERN.findall(kb.ptx)
    assert len(externs) == 1 and externs[0][0] == "16", externs
    dynamic = kb.dynamic_shared_bytes()
    assert least <= dynamic <= 232448 - MINE_BYTES and dynamic % 16 == 0, dynamic
    # Static shared memory: the kernel's own array only (no static cooperative region).
    assert kb.shared_bytes() == MINE_BYTES, kb.summary()
    assert f"+ {dynamic} B dynamic" in kb.summary()


@pytest.mark.compile
@both
def test_scratch_within_48_kib_stays_static(compiler):
    kb = compile_for(compiler, _kernel("reserve", compiler, 2048), _argtypes("reserve", compiler), cc=(9, 0),
                     block=gpu.BLOCK)
    assert not EXTERN.search(kb.ptx) and kb.dynamic_shared_bytes() == 0
    assert kb.shared_bytes() >= MINE_BYTES + 2048 * 4


@pytest.mark.compile
@both
def test_a_smaller_gpu_takes_the_same_kernel_within_its_limit(compiler):
    kb = compile_for(compiler, _kernel("histogram", compiler), _argtypes("histogram", compiler), cc=(8, 6),
                     block=gpu.BLOCK)
    assert EXTERN.search(kb.ptx) and kb.dynamic_shared_bytes() >= gpu.HIST_BINS * 4


@pytest.mark.compile
@both
@pytest.mark.parametrize("cc, limit", [((9, 0), 232448), ((8, 6), 101376)])
def test_scratch_above_the_targets_limit_is_a_named_error_at_the_first_cooperative_call(compiler, cc, limit):
    count = (limit - MINE_BYTES) // 4 + 64  # past the limit, with the kernel's own 8 KiB
    kernel = _kernel("reserve", compiler, count)
    with pytest.raises(coop.SharedMemoryLimitError) as info:
        compile_for(compiler, kernel, _argtypes("reserve", compiler), cc=cc, block=gpu.BLOCK)
    msg = str(info.value)
    for part in (f"{limit}-byte limit of a sm_{cc[0]}{cc[1]} thread block", f"({MINE_BYTES} bytes)",
                 "dynamic shared memory", "reserve fewer elements", "make the shared arrays smaller"):
        assert part in msg, (part, msg)
    module = kernel_for(compiler, gpu.reserve_source(count))
    # Classic lowers one call at a time: the reservation is what crosses the limit there.
    assert_at_user_line(info.value, module, "coop.inclusive_sum(" if compiler == "numba-cuda-mlir" else ".reserve(")


DYNAMIC_ARRAY = f"""
@cuda.jit
def kernel(src, out):
    extra = cuda.shared.array(0, np.int32)
    block = coop.this_block()
    k = coop.ThreadData({gpu.SORT_ITEMS}, dtype=np.uint64)
    coop.load(block, src, k)
    r = coop.radix_sort_keys(block, k)
    extra[cuda.threadIdx.x] = 1
    out[cuda.threadIdx.x] = r[0]
"""


DYNAMIC_ARRAY_AFTER = DYNAMIC_ARRAY.replace("    extra = cuda.shared.array(0, np.int32)\n", "").replace(
    "    extra[cuda.threadIdx.x] = 1\n", "    extra = cuda.shared.array(0, np.int32)\n    extra[cuda.threadIdx.x] = 1\n")


@pytest.mark.compile
@both
def test_a_dynamic_shared_array_next_to_dynamic_scratch_is_refused(compiler):
    t = types_for(compiler)
    module = kernel_for(compiler, DYNAMIC_ARRAY)
    with pytest.raises(coop.DynamicSharedArrayError) as info:
        compile_for(compiler, module.kernel, (t.uint64[::1], t.uint64[::1]), cc=(9, 0), block=gpu.BLOCK)
    msg = str(info.value)
    for part in ("cuda.shared.array(0, ...)", "coop.radix_sort_keys", "dynamic shared memory",
                 "cuda.shared.array(N, dtype)", "reserve(N, dtype)"):
        assert part in msg, (part, msg)
    # Classic sees the array when it lowers the call that moves the scratch to dynamic memory.
    assert_at_user_line(info.value, module,
                        "cuda.shared.array(0" if compiler == "numba-cuda-mlir" else "coop.radix_sort_keys(")


@pytest.mark.compile
def test_a_dynamic_shared_array_after_the_last_call_is_refused_on_classic():
    """Lowered after the last cooperative call, no call sees the array: the check once the
    kernel's body is lowered does, and names the kernel's ``def`` line."""
    t = types_for("numba-cuda")
    module = kernel_for("numba-cuda", DYNAMIC_ARRAY_AFTER)
    assert DYNAMIC_ARRAY_AFTER.index("shared.array(0") > DYNAMIC_ARRAY_AFTER.index("radix_sort_keys")
    with pytest.raises(coop.DynamicSharedArrayError) as info:
        compile_for("numba-cuda", module.kernel, (t.uint64[::1], t.uint64[::1]), cc=(9, 0), block=gpu.BLOCK)
    msg = str(info.value)
    for part in ("kernel 'kernel'", "_cudapy_smem", "coop.radix_sort_keys", "cuda.shared.array(N, dtype)"):
        assert part in msg, (part, msg)
    assert_at_user_line(info.value, module, "def kernel(")


@pytest.mark.compile
def test_a_static_array_after_the_last_call_moves_classic_scratch_to_dynamic_memory():
    """32 KiB of sort scratch fits in 48 KiB alone; the kernel's own 24 KiB array, lowered
    after the call, tips the kernel over, and the scratch moves once the body is lowered
    (numba-cuda-mlir plans the whole kernel and does the same)."""
    t = types_for("numba-cuda")
    module = kernel_for("numba-cuda", gpu.USER_ARRAY_AFTER)
    kb = compile_for("numba-cuda", module.kernel, (t.uint64[::1], t.uint64[::1], t.int32[::1]), cc=(9, 0),
                     block=gpu.BLOCK)
    assert kb.shared_bytes() == gpu.LATE_ARRAY * 4, kb.summary()
    assert kb.dynamic_shared_bytes() >= gpu.BLOCK * gpu.LATE_ITEMS * 8, kb.summary()
    assert len(EXTERN.findall(kb.ptx)) == 1


@pytest.mark.unit
def test_launch_refusal_becomes_a_named_error():
    """The native launcher's ValueError (a GPU whose opt-in limit is below the compile's)
    is read back and reworded with the bytes, the limit and the fix."""
    from cuda.coop.backends.numba_mlir import _compat_launch as C
    from cuda.coop.backends.numba_mlir.launch import shared_memory_limit_error

    exc = ValueError("Requested dynamic shared memory (200000 bytes) plus the kernel's static shared memory "
                     "(8192 bytes) exceeds the device maximum opt-in shared memory per block (101376 bytes)")
    assert C.optin_refusal(exc) == (200000, 8192, 101376)
    assert C.optin_refusal(ValueError("something else")) is None
    assert C.optin_refusal(RuntimeError(str(exc))) is None

    def kernel():
        pass

    class Dispatcher:
        py_func = kernel

    err = shared_memory_limit_error(Dispatcher(), 200000, 8192, 101376, 200000)
    assert isinstance(err, coop.SharedMemoryLimitError)
    msg = str(err)
    for part in ("'kernel'", "200000 bytes of dynamic shared memory", "200000 bytes for its cooperative scratch",
                 "8192 bytes of static", "limit of 101376 bytes", "fewer items per thread"):
        assert part in msg, (part, msg)
    assert "without that sharedmem" not in msg
    msg = str(shared_memory_limit_error(Dispatcher(), 210000, 0, 101376, 200000))
    assert "10000 more asked for by the launch's sharedmem" in msg and "without that sharedmem" in msg, msg


@pytest.mark.unit
def test_opt_in_limits_per_architecture():
    from cuda.coop.core.storage import MAX_SHARED_LIMIT, optin_shared_limit

    assert optin_shared_limit((9, 0)) == 227 * 1024 == MAX_SHARED_LIMIT
    assert optin_shared_limit((8, 0)) == 163 * 1024
    assert optin_shared_limit(None) is None and optin_shared_limit((42, 0)) is None
    assert np.dtype(np.float32).itemsize * gpu.RESERVE_COUNT > 48 * 1024  # the GPU tests really are above 48 KiB


@pytest.mark.compile
@both
def test_alignment_above_16_in_dynamic_shared_memory_is_a_named_error(compiler):
    """Dynamic shared memory is 16-byte aligned: a 32-byte aligned reservation in a kernel
    whose scratch moves there is refused, naming the fix (on classic numba-cuda at the
    reservation's line, the region that crosses the limit)."""
    source = gpu.reserve_source().replace("alignment=16", "alignment=32")
    module = kernel_for(compiler, source)
    with pytest.raises(coop.TempStorageError) as info:
        compile_for(compiler, module.kernel, _argtypes("reserve", compiler), cc=(9, 0), block=gpu.BLOCK)
    msg = str(info.value)
    for part in ("32-byte alignment", "16-byte aligned", "alignment<=16"):
        assert part in msg, (part, msg)
    if compiler == "numba-cuda":
        assert_at_user_line(info.value, module, ".reserve(")
