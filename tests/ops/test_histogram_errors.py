"""Misuse of coop.histogram(): one broken argument per case, named error, message, user line."""

from __future__ import annotations

import pytest

import cuda.coop as coop

from ..error_harness import assert_at_user_line, compile_error, kernel_types

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

LOAD = """
        s = coop.ThreadData(4)
        coop.load(coop.this_block(), src, s)
"""


def _fails(body, snippet, cls, *parts, **kw):
    info, module = compile_error(LOAD + body, **kw)
    assert isinstance(info.value, cls), repr(info.value)
    msg = str(info.value)
    assert "coop.histogram()" in msg or cls is coop.SharedMemoryLimitError, msg
    for part in parts:
        assert part in msg, (part, msg)
    assert_at_user_line(info, module, snippet)
    return msg


def test_warp_group_is_rejected():
    _fails("""
        h = coop.histogram(coop.this_warp(), s, bins=16)
    """, "coop.histogram(", coop.InvalidGroupError, "coop.this_warp()", "coop.this_block()")


def test_float_samples_are_rejected():
    types = kernel_types()
    _fails("""
        h = coop.histogram(coop.this_block(), s, bins=16)
    """, "coop.histogram(", coop.UnsupportedDtypeError, "float32", "bin indices", "uint8",
           argtypes=(types.float32[::1], types.int32[::1], 4))


def test_array_samples_are_rejected():
    _fails("""
        h = coop.histogram(coop.this_block(), src, bins=16)
    """, "coop.histogram(", coop.InvalidArgumentTypeError, "samples=array(int32, 1d)", "ThreadData")


def test_bins_is_required():
    _fails("""
        h = coop.histogram(coop.this_block(), s)
    """, "coop.histogram(", coop.MissingArgumentError, "bins=", "bins=256")


def test_bins_must_be_known_at_compile_time():
    types = kernel_types()
    _fails("""
        h = coop.histogram(coop.this_block(), s, bins=n)
    """, "bins=n", coop.NonConstantArgumentError, "bins", "compile time",
           argtypes=(types.int32[::1], types.int32[::1], types.int64))


@pytest.mark.parametrize("control", ["bins=0", "bins=16, bins_per_thread=0"])
def test_counts_must_be_positive(control):
    _fails(f"""
        h = coop.histogram(coop.this_block(), s, {control})
    """, "coop.histogram(", coop.InvalidArgumentValueError, "=0", "[1,")


def test_block_too_small_for_the_bins():
    _fails("""
        h = coop.histogram(coop.this_block(), s, bins=300)
    """, "bins=300", coop.UnsupportedBlockShapeError, "bins=300", "bins_per_thread=1", "(128, 1, 1)",
           "bins_per_thread=3")


@pytest.mark.parametrize("dtype", ["np.float32", "np.int8", "'uint16'"])
def test_counter_dtype_outside_the_counter_types(dtype):
    _fails(f"""
        h = coop.histogram(coop.this_block(), s, bins=16, counter_dtype={dtype})
    """, "counter_dtype", coop.UnsupportedDtypeError, "counter_dtype=", "int32, uint32, int64, uint64")


def test_unknown_algorithm():
    _fails("""
        h = coop.histogram(coop.this_block(), s, bins=16, algorithm="radix")
    """, "radix", coop.InvalidAlgorithmError, "algorithm='radix'", "'atomic'", "'sort'")


def test_unknown_layout():
    _fails("""
        h = coop.histogram(coop.this_block(), s, bins=16, valid_items=n, layout="warp_striped")
    """, "warp_striped", coop.InvalidAlgorithmError, "layout='warp_striped'", "'blocked'", "'striped'")


def test_float_valid_items():
    _fails("""
        h = coop.histogram(coop.this_block(), s, bins=16, valid_items=2.5)
    """, "valid_items=2.5", coop.InvalidArgumentTypeError, "valid_items=", "integer")


def test_accumulate_must_be_a_payload():
    _fails("""
        h = coop.histogram(coop.this_block(), s, bins=16, accumulate=dst)
    """, "accumulate=dst", coop.InvalidArgumentTypeError, "accumulate=", "running")


def test_accumulate_of_float_counters():
    _fails("""
        acc = coop.ThreadData(1, dtype=np.float32)
        coop.histogram(coop.this_block(), s, bins=16, accumulate=acc)
    """, "accumulate=acc", coop.UnsupportedDtypeError, "accumulate has dtype float32", "int32")


def test_accumulate_and_counter_dtype_disagree():
    _fails("""
        acc = coop.ThreadData(1, dtype=np.int64)
        coop.histogram(coop.this_block(), s, bins=16, accumulate=acc, counter_dtype=np.int32)
    """, "accumulate=acc", coop.DtypeMismatchError, "counter_dtype=int32", "int64", "omit counter_dtype")


def test_accumulate_and_bins_per_thread_disagree():
    _fails("""
        acc = coop.ThreadData(2, dtype=np.int32)
        coop.histogram(coop.this_block(), s, bins=16, accumulate=acc, bins_per_thread=1)
    """, "accumulate=acc", coop.ConflictingArgumentsError, "bins_per_thread=1", "2 items per thread")


def test_controls_are_keyword_only():
    _fails("""
        h = coop.histogram(coop.this_block(), s, 16)
    """, "coop.histogram(", coop.InvalidArgumentTypeError, "positional", "keyword", "bins=")


def test_temp_storage_must_be_a_descriptor():
    _fails("""
        h = coop.histogram(coop.this_block(), s, bins=16, temp_storage=dst)
    """, "temp_storage=dst", coop.InvalidArgumentTypeError, "temp_storage=", "coop.TempStorage")


def test_counters_beyond_shared_memory():
    _fails("""
        h = coop.histogram(coop.this_block(), s, bins=30000, bins_per_thread=235, counter_dtype=np.int64)
    """, "coop.histogram(", coop.SharedMemoryLimitError, "240000", "232448")


def test_counters_that_cannot_fit_are_reported_before_nvrtc():
    msg = _fails("""
        h = coop.histogram(coop.this_block(), s, bins=2147483647, bins_per_thread=65536)
    """, "coop.histogram(", coop.SharedMemoryLimitError, "bins=2147483647", "at most 58112")
    assert "NVRTC" not in msg
