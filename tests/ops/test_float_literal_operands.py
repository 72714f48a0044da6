"""Python float literals as scalar operands (backends/_float_literals.py), on both compilers.

NVIDIA's cuda.coop converts a Python literal passed as ``oob_default=`` or ``initial_value=``
to the payload's dtype after a range check.  Numba types ``0.5`` as float64, so cuda-coop
reads the literal from the kernel's IR: a constant (``-1.5``), a negated one, ``math.inf``
and a module or closure float are converted; a NumPy scalar or a float64 the kernel computed
must still have the payload's dtype (DtypeMismatchError).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import cuda.coop as coop

from .. import kernelgen
from ..backends_param import COMPILERS, compile_for, gpu_for, kernel_for, types_for
from ..error_harness import expect_error, kernel_types

THREADS, ITEMS = 128, 4

_SOURCE = """
import math

FILL = -1.5
LOWEST = -math.inf


@cuda.jit
def fill_and_scan(source, loaded, scanned, count):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, source, items, valid_items=count, oob_default=FILL)
    coop.store(block, loaded, items)
    running = coop.exclusive_scan(block, items, scan_op="max", initial_value=LOWEST)
    coop.store(block, scanned, running)


@cuda.jit
def literal_spellings(source, loaded, scanned, count):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, source, items, valid_items=count, oob_default=-1.5)
    coop.store(block, loaded, items)
    running = coop.exclusive_scan(block, items, scan_op="max", initial_value=-math.inf)
    coop.store(block, scanned, running)
"""

# The PTX spelling of -1.5 and of -inf per payload dtype: the conversion happened at compile time.
_CONSTANTS = {"float32": ("0fBFC00000", "0fFF800000"), "float64": ("0dBFF8000000000000", "0dFFF0000000000000")}


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("kernel_name", ["fill_and_scan", "literal_spellings"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_literals_become_constants_of_the_payload_dtype(compiler, kernel_name, dtype):
    T = types_for(compiler)
    array = getattr(T, dtype)[::1]
    kernel = getattr(kernel_for(compiler, _SOURCE), kernel_name)
    binary = compile_for(compiler, kernel, (array, array, array, T.int32), cc=(9, 0), block=THREADS)
    fill, lowest = _CONSTANTS[dtype]
    if compiler == "numba-cuda-mlir" or dtype == "float64":
        # Classic numba-cuda converts the float64 at run time (a cvt of the f64 constant).
        assert fill in binary.ptx and lowest in binary.ptx, (fill, lowest)
    assert binary.calls() == 0


@pytest.fixture
def compiler(request, monkeypatch):
    name = request.param
    types_for(name)
    monkeypatch.setattr(kernelgen, "DEFAULT_COMPILER", name)
    return name


def _argtypes(dtype):
    types = kernel_types()
    element = getattr(types, dtype)
    return (element[::1], element[::1], types.int64)


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS, indirect=True)
@pytest.mark.parametrize("dtype, value", [("int32", "-3.0"), ("float16", "0.25"), ("complex64", "-1.0"),
                                          ("int8", "127.0")])
def test_other_numeric_payloads_take_float_literals_in_range(compiler, dtype, value):
    module = kernel_for(compiler, f"""
@cuda.jit
def kernel(src, dst, n):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, valid_items=n, oob_default={value})
    coop.store(coop.this_block(), dst, items)
""")
    assert compile_for(compiler, module.kernel, _argtypes(dtype), cc=(9, 0), block=THREADS).calls() == 0


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS, indirect=True)
@pytest.mark.parametrize("dtype, value, fragments", [
    ("int32", "2.5", ("oob_default=2.5", "not representable in int32", "whole number")),
    ("int8", "300.0", ("oob_default=300.0", "outside the range of int8", "[-128, 127]")),
    ("float32", "1e39", ("oob_default=1e+39", "outside the range of float32", "math.inf")),
    ("float16", "-70000.0", ("oob_default=-70000.0", "outside the range of float16", "65504")),
    ("bfloat16", "-1e39", ("oob_default=-1e+39", "outside the range of bfloat16", "math.inf")),
], ids=["fraction_for_int32", "int8_overflow", "float32_overflow", "float16_overflow", "bfloat16_overflow"])
def test_float_literals_out_of_range_are_named(compiler, dtype, value, fragments):
    expect_error(f"""
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, valid_items=n, oob_default={value})
    """, coop.InvalidArgumentValueError, *fragments, at="oob_default=", argtypes=_argtypes(dtype))


@pytest.mark.compile
@pytest.mark.parametrize("compiler", COMPILERS, indirect=True)
@pytest.mark.parametrize("value", ["np.float64(0.5)", "src[0] * 0.5", "fill"],
                         ids=["numpy_scalar", "computed", "reassigned_name"])
def test_typed_float64_values_still_need_the_payload_dtype(compiler, value):
    # A NumPy scalar is typed; a computed value and a name with two definitions are not literals.
    expect_error(f"""
        fill = 0.5
        if n > 1:
            fill = 0.25
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), src, items, valid_items=n, oob_default={value})
    """, coop.DtypeMismatchError, "oob_default has dtype float64", "np.float32(value)", at="oob_default=",
        argtypes=_argtypes("float32"))


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("kernel_name", ["fill_and_scan", "literal_spellings"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_float_literals_on_the_device(compiler, kernel_name, dtype):
    gpu_for(compiler)
    kernel = getattr(kernel_for(compiler, _SOURCE), kernel_name)
    count = THREADS * ITEMS - 77  # a partial tile: the last 77 slots take oob_default
    source = np.random.default_rng(7).standard_normal(THREADS * ITEMS).astype(dtype)
    loaded = np.full_like(source, np.nan)  # poisoned: NaN equals nothing
    scanned = np.full_like(source, np.nan)
    kernel[1, THREADS](source, loaded, scanned, np.int32(count))  # host arrays: copied back
    expected = source.copy()
    expected[count:] = -1.5
    np.testing.assert_array_equal(loaded, expected)
    running = np.maximum.accumulate(np.concatenate([[-math.inf], expected[:-1]])).astype(dtype)
    np.testing.assert_array_equal(scanned, running)
