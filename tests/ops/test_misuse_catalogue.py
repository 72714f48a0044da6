"""The misuse catalogue (issue #17 item 4): one broken kernel per case.

Each case must fail at compile time with a named cuda-coop error, at the user's
kernel line (one frame there, none on the next line), with a message that names
the argument and the value given and ends with what to do.
"""

from __future__ import annotations

import pytest

import cuda.coop as coop

from ..error_harness import assert_at_user_line, compile_error, default_argtypes, kernel_types
from ..kernelgen import kernel_module

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

LOAD_STORE = """
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)
"""


def check(info, module, cls, *, names, fix, line):
    """``info`` holds a ``cls``; its message holds every string of ``names`` (argument, value),
    its last clause (before the location) holds ``fix``; it points at the ``line`` snippet."""
    exc = info.value
    assert isinstance(exc, cls), (type(exc), str(exc))
    message = str(exc).split('\n  File "', 1)[0]
    for name in names:
        assert name in message, (name, message)
    assert fix in message.rsplit(";", 1)[-1], (fix, message)
    assert_at_user_line(exc, module, line)


# -- 1. impossible block shapes ------------------------------------------------------------

@pytest.mark.parametrize("block, names", [
    ((32, 64, 1), ["block=(32, 64, 1)", "2048 threads"]),
    ((0, 1, 1), ["block=(0, 1, 1)", "x=0"]),
    ((1, 2000, 1), ["block=(1, 2000, 1)", "y=2000"]),
    ((2, 2, 128), ["block=(2, 2, 128)", "z=128"]),
], ids=["over_1024_threads", "zero_extent", "y_over_1024", "z_over_64"])
def test_impossible_block_shape(block, names):
    info, module = compile_error(LOAD_STORE, block=block)
    check(info, module, coop.UnsupportedBlockShapeError, names=names, fix="launch with",
          line="coop.load(")


# -- 2. absurd items_per_thread --------------------------------------------------------------

def test_items_per_thread_beyond_the_payload_limit():
    info, module = compile_error("""
        items = coop.ThreadData(1 << 20)
        coop.load(coop.this_block(), src, items)
    """)
    check(info, module, coop.InvalidArgumentValueError,
          names=["items_per_thread=1048576", "4194304 bytes", "4096-byte limit"],
          fix="use at most 1024 items per thread", line="coop.ThreadData(1 << 20)")


def test_items_per_thread_beyond_the_payload_limit_from_a_kernel_argument():
    # The kernel is specialized on n; the limit applies to the specialized value.
    info, module = compile_error("""
        items = coop.ThreadData(n, dtype=np.float64)
        coop.load(coop.this_block(), src, items)
    """, argtypes=(kernel_types().float64[::1], kernel_types().float64[::1], 1 << 20))
    check(info, module, coop.InvalidArgumentValueError, names=["items_per_thread=1048576", "float64"],
          fix="use at most 512 items per thread", line="coop.ThreadData(n,")


# -- 3. stores into read-only memory ---------------------------------------------------------

def test_store_into_a_readonly_array():
    types = kernel_types()
    readonly = types.Array(types.int32, 1, "C", readonly=True)
    info, module = compile_error(LOAD_STORE, argtypes=(types.int32[::1], readonly, 4))
    check(info, module, coop.InvalidArgumentTypeError, names=["destination=", "read-only"],
          fix="pass a writable array", line="coop.store(")


def test_store_into_constant_memory():
    info, module = compile_error("""
        table = cuda.const.array_like(TABLE)
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), table, items)
    """, module_code="TABLE = np.arange(512, dtype=np.int32)\n")
    check(info, module, coop.InvalidArgumentTypeError, names=["destination=table", "cuda.const"],
          fix="store into a writable array", line="coop.store(coop.this_block(), table")


# -- 4. an operator whose result is not the values' dtype ------------------------------------

FLOAT_ADD = """
@cuda.jit(device=True)
def float_add(a, b):
    return float(a) + float(b)
"""


@pytest.mark.parametrize("label, call", [
    ("binary_op", "dst[0] = coop.reduce(coop.this_block(), items, binary_op=float_add)"),
    ("scan_op", "coop.store(coop.this_block(), dst, coop.inclusive_scan(coop.this_block(), items, "
                "scan_op=float_add))"),
    ("difference_op", "coop.store(coop.this_block(), dst, coop.adjacent_difference(coop.this_block(), items, "
                      "difference_op=float_add))"),
], ids=["reduce_binary_op", "scan_scan_op", "adjacent_difference_op"])
def test_operator_result_dtype_differs_from_the_values(label, call):
    info, module = compile_error(f"""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        {call}
    """, module_code=FLOAT_ADD)
    check(info, module, coop.DtypeMismatchError,
          names=[f"{label}=device function float_add", "returns float64", "int32"],
          fix="make it return int32", line=f"{label}=float_add")


DIFFERENCE = """
@cuda.jit(device=True)
def minus(a, b):
    return a - b
"""


@pytest.mark.parametrize("label, call", [
    ("compare_op", "coop.store(coop.this_block(), dst, coop.merge_sort_keys(coop.this_block(), items, "
                   "compare_op=minus))"),
    ("flag_op", "coop.store(coop.this_block(), dst, coop.discontinuity(coop.this_block(), items, "
                "flag_op=minus))"),
], ids=["merge_sort_compare_op", "discontinuity_flag_op"])
def test_predicate_that_returns_a_number(label, call):
    # A predicate returning a - b would be read as "not zero": a wrong order, wrong flags.
    info, module = compile_error(f"""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        {call}
    """, module_code=DIFFERENCE)
    check(info, module, coop.DtypeMismatchError,
          names=[f"{label}=device function minus", "returns int64", "must return a bool"],
          fix="return a comparison", line=f"{label}=minus")


# -- 4b. impossible block shapes at the launch line, also for kernels that only query groups ---

QUERY_ONLY = """
@cuda.jit
def kernel(dst):
    dst[cuda.threadIdx.x] = coop.this_block().rank()
    coop.this_block().sync()
"""


@pytest.mark.parametrize("compiler", ["numba-cuda-mlir", "numba-cuda"])
@pytest.mark.parametrize("block, shown", [
    (2048, "block=(2048, 1, 1) has x=2048"), ((32, 32, 2), "block=(32, 32, 2) has 2048 threads"),
    (0, "block=(0, 1, 1) has x=0"), ((1, 1, 65), "z=65"),
], ids=["2048", "32x32x2", "zero", "z65"])
def test_impossible_block_shape_at_the_launch(compiler, block, shown):
    from ..backends_param import kernel_for

    kernel = kernel_for(compiler, QUERY_ONLY).kernel
    with pytest.raises(coop.UnsupportedBlockShapeError) as info:
        kernel[1, block]  # the launch configuration: no device needed, nothing compiled
    message = str(info.value)
    assert message.startswith("kernel[grid, block]: ") and shown in message, message
    assert "launch with" in message.rsplit(";", 1)[-1] or "launch with" in message, message
    tb = info.traceback
    assert any("test_misuse_catalogue.py" in str(entry.path) and "kernel[1, block]" in str(entry.statement)
               for entry in tb), "the error is raised at the launch line"


@pytest.mark.parametrize("compiler", ["numba-cuda-mlir", "numba-cuda"])
def test_a_block_that_is_no_shape_at_the_launch(compiler):
    from ..backends_param import kernel_for

    kernel = kernel_for(compiler, QUERY_ONLY).kernel
    with pytest.raises(coop.InvalidArgumentTypeError, match=r"block=12\.5 is not a block shape; pass an int"):
        kernel[1, 12.5]


def test_a_kernel_without_coop_keeps_the_compilers_launch():
    from ..compiler import cuda

    from cuda.coop.backends._launch_checks import check_launch_block

    @cuda.jit
    def plain(out):
        out[0] = 1

    check_launch_block(plain, 2048)  # not ours to refuse: the compiler's own errors apply


# -- 5. user shared memory plus cooperative scratch ------------------------------------------

def test_user_shared_arrays_over_the_static_limit_next_to_scratch():
    # 52000 bytes of the user's own static arrays: above 48 KiB on their own.  cuda-coop moves
    # its scratch to dynamic shared memory above 48 KiB, but cannot move the user's arrays.
    info, module = compile_error("""
        buf = cuda.shared.array(13000, dtype=np.int32)
        t = cuda.threadIdx.x
        buf[t * 97] = src[t]
        cuda.syncthreads()
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, algorithm="transpose")
        coop.store(coop.this_block(), dst, items)
        dst[t] += buf[(t * 89) % 13000]
    """)
    check(info, module, coop.SharedMemoryLimitError,
          names=["cuda.shared.array arrays need 52000 bytes", "49152-byte static limit", "dynamic shared memory"],
          fix="make the shared arrays smaller", line='algorithm="transpose"')


# -- 6. TempStorage made outside the kernel, constants of the wrong type ---------------------

def test_module_global_temp_storage():
    info, module = compile_error("""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, algorithm="transpose", temp_storage=SCRATCH)
    """, module_code="SCRATCH = coop.TempStorage()\n")
    check(info, module, coop.TempStorageError, names=["temp_storage=SCRATCH", "outside the kernel"],
          fix="construct it inside the kernel", line="temp_storage=SCRATCH")


@pytest.mark.parametrize("args, names, fix", [
    ("4096.0", ["size_in_bytes=4096.0"], "size_in_bytes=4096"),
    ("auto_sync='yes'", ["auto_sync='yes'"], "pass auto_sync=True or auto_sync=False"),
], ids=["float_size", "string_auto_sync"])
def test_temp_storage_constant_of_the_wrong_type(args, names, fix):
    info, module = compile_error(f"""
        scratch = coop.TempStorage({args})
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, algorithm="transpose", temp_storage=scratch)
    """)
    check(info, module, coop.InvalidArgumentTypeError, names=names, fix=fix,
          line=f"coop.TempStorage({args})")


# -- 7. controls: positional, wrong selector types, not-applicable flags ---------------------

def test_algorithm_passed_positionally():
    info, module = compile_error("""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, "transpose")
    """)
    check(info, module, coop.InvalidArgumentTypeError, names=["'transpose'", "keyword-only"],
          fix="e.g. algorithm='transpose'", line='items, "transpose")')


@pytest.mark.parametrize("selector, shown", [
    ("3", "algorithm=3"),
    ("Algo.TRANSPOSE", "algorithm=<Algo enum member>"),
], ids=["int", "enum_member"])
def test_selector_of_the_wrong_type(selector, shown):
    info, module = compile_error(f"""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, algorithm={selector})
    """, module_code="import enum\nclass Algo(enum.Enum):\n    TRANSPOSE = 'transpose'\n")
    check(info, module, coop.InvalidAlgorithmError, names=[shown, "must be a string"],
          fix="choose 'direct'", line=f"algorithm={selector}")


def test_valid_flags_on_an_unflagged_exchange():
    info, module = compile_error("""
        items = coop.ThreadData(4)
        flags = coop.ThreadData(4, dtype=np.int32)
        coop.load(coop.this_block(), src, items)
        coop.load(coop.this_block(), src, flags)
        out = coop.exchange(coop.this_block(), items, mode="blocked_to_striped", valid_flags=flags)
        coop.store(coop.this_block(), dst, out)
    """)
    check(info, module, coop.ConflictingArgumentsError,
          names=["valid_flags=ThreadData(4, int32)", "mode='scatter_to_striped_flagged'"],
          fix="remove it or choose that mode", line="valid_flags=flags")


def test_difference_op_minus_is_the_default_subtraction():
    from ..compiler import compile_cubin

    module = kernel_module("""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        out = coop.adjacent_difference(coop.this_block(), items, difference_op="-")
        coop.store(coop.this_block(), dst, out)
    """)
    assert compile_cubin(module.kernel, default_argtypes(), cc=(9, 0), block=128).cubin


# -- 8. group_by errors carry the kernel line, once ------------------------------------------

@pytest.mark.parametrize("group, names, fix", [
    ("coop.this_block().group_by(0)", ["warps_per_group=0"], "pass an int from 1 to 32"),
    ("coop.this_warp().group_by(3)", ["width=3"], "use one of 1, 2, 4, 8, 16, 32"),
], ids=["block_warps", "warp_width"])
def test_group_by_error_points_at_the_kernel_line(group, names, fix):
    info, module = compile_error(f"""
        group = {group}
        dst[0] = 1
    """)
    check(info, module, coop.InvalidGroupWidthError, names=names, fix=fix, line=group)


# -- 9. backlog ------------------------------------------------------------------------------

def test_alignas_conflicts_with_alignment():
    info, module = compile_error("""
        items = coop.ThreadData(4, alignment=16, alignas=32)
        coop.load(coop.this_block(), src, items)
    """)
    check(info, module, coop.ConflictingArgumentsError, names=["alignment=16", "alignas=32"],
          fix="pass only one of them", line="alignas=32")


def test_group_by_exhaustive_not_constant():
    types = kernel_types()
    info, module = compile_error("""
        group = coop.this_warp().group_by(8, exhaustive=n > 2)
        dst[0] = 1
    """, argtypes=(types.int32[::1], types.int32[::1], types.int64))
    check(info, module, coop.NonConstantArgumentError, names=["exhaustive=bool", "compile time"],
          fix="pass exhaustive=True or exhaustive=False", line="exhaustive=n > 2")


def test_rank_as_with_a_float_dtype():
    info, module = compile_error("""
        dst[0] = coop.this_block().rank_as(np.float32)
    """)
    check(info, module, coop.InvalidArgumentTypeError, names=["rank_as()", "dtype=float32"],
          fix="pass an integer dtype", line="rank_as(np.float32)")


@pytest.mark.parametrize("group", ["coop.this_thread()", "coop.this_block().group_by(2)"],
                         ids=["thread", "warps"])
@pytest.mark.parametrize("control, cls", [
    ("valid_items=3", coop.ConflictingArgumentsError),
    ("algorithm='raking'", coop.UnsupportedAlgorithmForGroupError),
], ids=["valid_items", "algorithm"])
def test_reduce_control_that_the_group_does_not_take(group, control, cls):
    info, module = compile_error(f"""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
        dst[0] = coop.sum({group}, items, {control})
    """)
    check(info, module, cls, names=[control, f"group={group}"], fix="remove it", line=control)
