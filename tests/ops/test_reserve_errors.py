"""Misuse of TempStorage.reserve(): one broken argument per case, named error, message, user line."""

from __future__ import annotations

import pytest

from ..compiler import SEPARATE_SCRATCH

import cuda.coop as coop

from ..kernelgen import module_from_source
from ..error_harness import assert_at_user_line, compile_error, kernel_types

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

CASES = [
    # (id, kernel body, error class, message fragments, text of the reported line)
    ("auto_sync_true", """
        storage = coop.TempStorage(auto_sync=True)
        values = storage.reserve(64, np.int32)
    """, coop.TempStorageError, ("reserve requires auto_sync=False", "auto_sync=True"), "storage.reserve("),
    ("auto_sync_true_op_first", """
        storage = coop.TempStorage(auto_sync=True)
        total = coop.sum(coop.this_block(), src[cuda.threadIdx.x], temp_storage=storage)
        values = storage.reserve(64, np.int32)
        values[0] = total
    """, coop.TempStorageError, ("reserve requires auto_sync=False",), "storage.reserve("),
    ("count_zero", "v = coop.TempStorage().reserve(0, np.int32)",
     coop.InvalidArgumentValueError, ("count=0 must be positive",), ".reserve(0"),
    ("count_negative", "v = coop.TempStorage().reserve(-1, np.int32)",
     coop.InvalidArgumentValueError, ("count=-1 must be positive",), ".reserve(-1"),
    ("count_float", "v = coop.TempStorage().reserve(1.5, np.int32)",
     coop.InvalidArgumentTypeError, ("compile-time integer",), ".reserve(1.5"),
    ("count_bool", "v = coop.TempStorage().reserve(True, np.int32)",
     coop.InvalidArgumentTypeError, ("count=True", "compile-time integer"), ".reserve(True"),
    ("count_runtime", "v = coop.TempStorage().reserve(n, np.int32)",
     coop.NonConstantArgumentError, ("count=int64", "compile time"), ".reserve(n"),
    ("dtype_bool", "v = coop.TempStorage().reserve(4, np.bool_)",
     coop.UnsupportedDtypeError, ("supported fixed-width", "complex64"), "np.bool_"),
    ("dtype_not_a_type", "v = coop.TempStorage().reserve(4, 3)",
     coop.InvalidArgumentTypeError, ("dtype=3", "compile-time scalar type"), ".reserve(4, 3)"),
    ("dtype_missing", "v = coop.TempStorage().reserve(4)",
     coop.MissingArgumentError, ("dtype is missing",), ".reserve(4)"),
    ("alignment_not_power_of_two", "v = coop.TempStorage().reserve(4, np.int32, alignment=3)",
     coop.InvalidArgumentValueError, ("alignment=3", "power of two"), "alignment=3"),
    ("alignment_zero", "v = coop.TempStorage().reserve(4, np.int32, alignment=0)",
     coop.InvalidArgumentValueError, ("alignment=0", "power of two"), "alignment=0"),
    ("alignment_runtime", "v = coop.TempStorage().reserve(4, np.int32, alignment=n)",
     coop.NonConstantArgumentError, ("alignment=int64", "compile time"), "alignment=n"),
    ("unknown_keyword", "v = coop.TempStorage().reserve(4, np.int32, align=4)",
     coop.InvalidArgumentTypeError, ("takes count, dtype and optionally alignment=",), "align=4"),
    ("explicit_size_too_small", """
        storage = coop.TempStorage(128, sharing="exclusive")
        a = storage.reserve(32, np.int32)
        b = storage.reserve(32, np.int32)
        a[0] = b[0]
    """, coop.TempStorageError, ("size_in_bytes=128 is too small", "TempStorage.reserve()", "need 256"),
     "storage.reserve(32"),
    ("explicit_size_too_small_shared", """
        storage = coop.TempStorage(128)
        a = storage.reserve(32, np.int32)
        b = storage.reserve(32, np.int32)
        a[0] = b[0]
    """, coop.TempStorageError, ("size_in_bytes=128 is too small", "need 256",
                                 "each TempStorage.reserve() array has bytes of its own"),
     "storage.reserve(32"),
    ("above_opt_in_limit", """
        storage = coop.TempStorage()
        big = storage.reserve(60 * 1024, np.int32)
        big[0] = 1
    """, coop.SharedMemoryLimitError, ("245760 bytes", "232448-byte limit of a sm_90", "reserve fewer elements"),
     "storage.reserve(60"),
    ("alignment_above_16_in_dynamic_shared_memory", """
        storage = coop.TempStorage()
        big = storage.reserve(13 * 1024, np.int32, alignment=64)
        big[0] = 1
    """, coop.TempStorageError, ("64-byte alignment", "16-byte aligned", "alignment<=16"), "storage.reserve(13"),
]


@pytest.mark.parametrize("body, error, fragments, line", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_reserve_misuse(body, error, fragments, line):
    types = kernel_types()
    info, module = compile_error(body, argtypes=(types.int32[::1], types.int32[::1], types.int64))
    assert isinstance(info.value, error), info.value
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    assert_at_user_line(info, module, line)


def test_reserve_on_a_module_global_storage():
    from ..compiler import compile_cubin

    types = kernel_types()
    module = module_from_source("""
GLOBAL_STORAGE = coop.TempStorage()

@cuda.jit
def kernel(src, dst, n):
    values = GLOBAL_STORAGE.reserve(4, np.int32)
    values[0] = n
""")
    with pytest.raises(coop.TempStorageError) as info:
        compile_cubin(module.kernel, (types.int32[::1], types.int32[::1], types.int64), cc=(9, 0), block=128)
    assert "GLOBAL_STORAGE is a coop.TempStorage created outside the kernel" in str(info.value)
    assert_at_user_line(info, module, "GLOBAL_STORAGE.reserve(")


@pytest.mark.xfail_on("numba-cuda", "AssertionError", SEPARATE_SCRATCH, ids=("shared-1024",))
@pytest.mark.parametrize("sharing, capacity", [("shared", 512), ("exclusive", 512), ("shared", 1024)])
def test_an_explicit_size_that_fits_every_reservation_compiles(sharing, capacity):
    """Reservations never overlap, whatever the sharing mode: the size is at least their sum;
    a larger one is honoured."""
    from ..compiler import compile_cubin

    types = kernel_types()
    module = module_from_source(f"""
@cuda.jit
def kernel(src, dst, n):
    storage = coop.TempStorage({capacity}, sharing="{sharing}")
    a = storage.reserve(64, np.int32)
    b = storage.reserve(64, np.int32)
    t = cuda.threadIdx.x
    a[t] = n
    b[t] = n + 1
    cuda.syncthreads()
    dst[t] = a[(t + 1) % 64] + b[63 - t]
""")
    kb = compile_cubin(module.kernel, (types.int32[::1], types.int32[::1], types.int64), cc=(9, 0), block=64)
    assert kb.shared_bytes() == capacity
