"""Misuse of load/store: one broken argument per case, named error, message, user line.

Each case runs on both compiler backends (numba-cuda-mlir, classic numba-cuda); the
classic one skips the cases of numba-cuda-mlir itself.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import cuda.coop as coop

from .. import kernelgen
from ..backends_param import COMPILERS, types_for
from ..error_harness import assert_at_user_line, compile_error, expect_error, kernel_types

pytestmark = pytest.mark.compile

# Cases of numba-cuda-mlir itself.
_MLIR_ONLY = {
    "test_backend_not_registered": "numba-cuda-mlir's registration, in a subprocess",
}


@pytest.fixture(autouse=True, params=COMPILERS)
def compiler(request, monkeypatch):
    name = request.param
    reason = _MLIR_ONLY.get(request.node.originalname)
    if name != "numba-cuda-mlir" and (reason or request.node.originalname.startswith("test_host")):
        pytest.skip(reason or "host-side behaviour, compiler-independent")
    types_for(name)  # skips when that compiler is not installed
    monkeypatch.setattr(kernelgen, "DEFAULT_COMPILER", name)  # the harness compiles with it
    return name


def test_non_constant_items_per_thread():
    expect_error("""
        items = coop.ThreadData(n * 2)
        coop.load(coop.this_block(), src, items)
    """, coop.NonConstantArgumentError, "items_per_thread", "compile time", "kernel argument",
        at="coop.ThreadData(n * 2", params="src, dst, n",
        argtypes=(kernel_types().int32[::1], kernel_types().int32[::1], kernel_types().int64))


def test_unsupported_dtype_of_payload():
    expect_error("""
        items = coop.ThreadData(4, dtype=np.bool_)
    """, coop.UnsupportedDtypeError, "bool", "int32", at="np.bool_")


def test_unsupported_dtype_of_array():
    types = kernel_types()
    info, module = compile_error("""
        items = coop.ThreadData(4, dtype=np.int32)
        coop.load(coop.this_block(), src, items)
    """, argtypes=(types.boolean[::1], types.int32[::1], 4))
    assert isinstance(info.value, coop.UnsupportedDtypeError)
    assert "source" in str(info.value) and "bool" in str(info.value)
    assert_at_user_line(info, module, "coop.load(")


def test_dtype_mismatch_between_payload_and_array():
    expect_error("""
        items = coop.ThreadData(4, dtype=np.float32)
        coop.load(coop.this_block(), src, items)
    """, coop.DtypeMismatchError, "float32", "int32", "dtype=np.int32")


def test_unknown_algorithm_lists_the_valid_ones():
    info, module = compile_error("""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, algorithm="transpose_warp")
    """)
    assert isinstance(info.value, coop.InvalidAlgorithmError)
    msg = str(info.value)
    assert "algorithm='transpose_warp'" in msg
    for name in ("'direct'", "'striped'", "'vectorize'", "'transpose'", "'warp_transpose'",
                 "'warp_transpose_timesliced'"):
        assert name in msg
    assert_at_user_line(info, module, "transpose_warp")


def test_algorithm_the_group_does_not_support():
    expect_error("""
        items = coop.ThreadData(4)
        coop.load(coop.this_warp(), src, items, algorithm="warp_transpose")
    """, coop.UnsupportedAlgorithmForGroupError, "warp_transpose", "coop.this_warp()", "'transpose'")


def test_oob_default_without_valid_items():
    expect_error("""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, oob_default=0)
    """, coop.ConflictingArgumentsError, "oob_default", "valid_items", at="oob_default=0")


@pytest.mark.parametrize("control", ["valid_items", "offset"])
def test_float_controls_are_rejected(control):
    expect_error(f"""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, {control}=1.5)
    """, coop.InvalidArgumentTypeError, f"{control}=", "integer")


def test_warp_group_needs_whole_warps():
    expect_error("""
        items = coop.ThreadData(4)
        coop.load(coop.this_warp(), src, items)
    """, coop.UnsupportedBlockShapeError, "multiple of 32", "100", at="coop.load(", block=100)


def test_warp_transpose_needs_whole_warps():
    expect_error("""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, algorithm="warp_transpose")
    """, coop.UnsupportedBlockShapeError, "algorithm='warp_transpose'", "(10, 5, 1)", block=(10, 5))


def test_block_shape_unknown_at_compile_time():
    expect_error("""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items)
    """, coop.UnknownBlockDimensionError, "kernel[grid, block]", "compile_cubin", at="coop.load(", block=None)


def test_bad_group_width():
    expect_error("""
        items = coop.ThreadData(4)
        coop.load(coop.this_warp().group_by(3), src, items)
    """, coop.InvalidGroupWidthError, "width=3", "1, 2, 4, 8, 16, 32")


def test_operand_passed_by_keyword_and_unknown_keyword():
    expect_error("""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, algoritm="direct")
    """, coop.InvalidArgumentTypeError, "algoritm", "algorithm")


def test_store_scalar_of_wrong_dtype():
    info, _ = compile_error("""
        coop.store(coop.this_block(), dst, 1.5)
    """)
    assert isinstance(info.value, coop.InvalidArgumentValueError) or isinstance(
        info.value, coop.DtypeMismatchError)


def test_dtype_cannot_be_inferred():
    expect_error("""
        items = coop.ThreadData(4)
        items[0] = 1
    """, coop.UnknownDtypeError, "dtype=")


def test_temp_storage_rejected_for_warp_groups():
    expect_error("""
        ts = coop.TempStorage()
        items = coop.ThreadData(4)
        coop.load(coop.this_warp(), src, items, algorithm="transpose", temp_storage=ts)
    """, coop.TempStorageError, "temp_storage", "warp")


def test_temp_storage_too_small():
    expect_error("""
        ts = coop.TempStorage(64)
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, algorithm="transpose", temp_storage=ts)
    """, coop.TempStorageError, "size_in_bytes=64", "need")


def _run(code: str, env=None):
    import os

    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full_env)


@pytest.mark.only_on("numba-cuda-mlir", "checks numba-cuda-mlir's own registration")
def test_backend_not_registered():
    result = _run("""
        import numpy as np
        from numba_cuda_mlir import cuda
        from cuda import coop
        from cuda.coop.backends.numba_mlir import _compat as C

        @cuda.jit
        def k(src):
            block = coop.this_block()

        try:
            C.compile_kernel(k.py_func, (C.types.int32[::1],), cc=(9, 0), block=(128, 1, 1))
        except coop.BackendNotRegisteredError as e:
            print("ERR", e)
    """, env={"CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION": "1"})
    assert "ERR coop.this_block()" in result.stdout, result.stderr[-2000:]
    assert "coop.register('numba-cuda-mlir')" in result.stdout


@pytest.mark.parametrize("value, dtype, why", [
    ("src[0] * 0.5", "float32", "Numba computes with Python floats in float64"),
    ("np.int64(3)", "int32", "Numba widens int32 arithmetic to int64"),
], ids=["float_arithmetic_for_float32", "int64_for_int32"])
def test_oob_default_of_a_wider_dtype_says_why(value, dtype, why):
    """The hint names Numba's reason for the wider type that fits the value's kind."""
    types = kernel_types()
    element = getattr(types, dtype)
    message = expect_error(f"""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, valid_items=n, oob_default={value})
    """, coop.DtypeMismatchError, "oob_default", f"np.{dtype}(value)", why, at="oob_default=",
                           argtypes=(element[::1], element[::1], types.int64))
    assert ("int64" in why) == ("int32 arithmetic" in message)
