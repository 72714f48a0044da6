"""Misuse of coop.run_length_decode() / run_length_decode_into(): named error, message, user line."""

from __future__ import annotations

import pytest

import cuda.coop as coop

from ..error_harness import assert_at_user_line, compile_error, kernel_types

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

RUNS = """
        v = coop.ThreadData(2, dtype=np.float32)
        l = coop.ThreadData(2)
        coop.load(coop.this_block(), src, l)
        for i in range(2):
            v[i] = 1.0
"""
WINDOW = "coop.run_length_decode()"
INTO = "coop.run_length_decode_into()"


def _fails(body, snippet, cls, call, *parts, **kw):
    types = kernel_types()
    kw.setdefault("argtypes", (types.int32[::1], types.float32[::1], 4))  # src: lengths, dst: values
    info, module = compile_error(RUNS + body, **kw)
    assert isinstance(info.value, cls), repr(info.value)
    msg = str(info.value)
    assert call in msg or cls is coop.SharedMemoryLimitError, msg
    for part in parts:
        assert part in msg, (part, msg)
    assert_at_user_line(info, module, snippet)
    return msg


@pytest.mark.parametrize("op,call", [("run_length_decode(coop.this_warp(), v, l, decoded_items_per_thread=2)", WINDOW),
                                     ("run_length_decode_into(coop.this_warp(), v, l, dst)", INTO)])
def test_warp_group_is_rejected(op, call):
    _fails(f"""
        r = coop.{op}
    """, "coop.this_warp()", coop.InvalidGroupError, call, "coop.this_block()")


def test_float_lengths_are_rejected():
    _fails("""
        r = coop.run_length_decode(coop.this_block(), l, v, decoded_items_per_thread=2)
    """, "coop.run_length_decode(", coop.UnsupportedDtypeError, WINDOW, "run_lengths has dtype float32",
           "integer")


def test_runs_and_lengths_must_pair_up():
    _fails("""
        l3 = coop.ThreadData(3, dtype=np.int32)
        r = coop.run_length_decode(coop.this_block(), v, l3, decoded_items_per_thread=2)
    """, "coop.run_length_decode(", coop.ExtentMismatchError, WINDOW, "2 runs per thread", "run_lengths has 3")


def test_array_run_values_are_rejected():
    _fails("""
        r = coop.run_length_decode_into(coop.this_block(), src, l, dst)
    """, "coop.run_length_decode_into(", coop.InvalidArgumentTypeError, INTO, "run_values=array(int32, 1d)")


def test_decoded_items_per_thread_is_required_for_a_window():
    _fails("""
        r = coop.run_length_decode(coop.this_block(), v, l)
    """, "coop.run_length_decode(", coop.MissingArgumentError, WINDOW, "decoded_items_per_thread=")


def test_decoded_items_per_thread_must_be_known_at_compile_time():
    types = kernel_types()
    _fails("""
        r = coop.run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=n)
    """, "decoded_items_per_thread=n", coop.NonConstantArgumentError, WINDOW, "compile time",
           argtypes=(types.int32[::1], types.float32[::1], types.int64))


@pytest.mark.parametrize("op,call", [("run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=0)", WINDOW),
                                     ("run_length_decode_into(coop.this_block(), v, l, dst, "
                                      "decoded_items_per_thread=0)", INTO)])
def test_decoded_items_per_thread_must_be_positive(op, call):
    _fails(f"""
        r = coop.{op}
    """, "decoded_items_per_thread=0", coop.InvalidArgumentValueError, call, "=0", "[1,")


def test_float_window_offset():
    _fails("""
        r = coop.run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=2, decoded_window_offset=1.5)
    """, "decoded_window_offset=1.5", coop.InvalidArgumentTypeError, WINDOW, "decoded_window_offset=", "integer")


def test_oob_default_of_another_dtype():
    _fails("""
        r = coop.run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=2, oob_default=np.float64(1))
    """, "oob_default", coop.DtypeMismatchError, WINDOW, "oob_default has dtype float64", "float32")


def test_relative_offsets_must_be_integers():
    _fails("""
        rel = coop.ThreadData(2, dtype=np.float32)
        r = coop.run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=2, relative_offsets=rel)
    """, "relative_offsets=rel", coop.InvalidArgumentTypeError, WINDOW, "relative_offsets has dtype float32",
           "integer")


def test_relative_offsets_must_match_the_window():
    _fails("""
        rel = coop.ThreadData(3, dtype=np.int32)
        r = coop.run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=2, relative_offsets=rel)
    """, "relative_offsets=rel", coop.ExtentMismatchError, WINDOW, "3 items per thread",
           "decoded_items_per_thread=2")


@pytest.mark.parametrize("spelling", ["np.int32", '"float32"', "3"])
def test_decoded_offset_dtype_is_uint32_or_uint64(spelling):
    _fails(f"""
        r = coop.run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=2,
                                   decoded_offset_dtype={spelling})
    """, "coop.run_length_decode(", coop.UnsupportedDtypeError, WINDOW, "decoded_offset_dtype=",
           "use np.uint32 or np.uint64")


def test_outputs_must_have_the_decoded_offset_dtype():
    _fails("""
        rel = coop.ThreadData(2, dtype=np.uint64)
        r = coop.run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=2, relative_offsets=rel,
                                   decoded_offset_dtype=np.uint32)
    """, "relative_offsets=rel", coop.DtypeMismatchError, WINDOW, "relative_offsets has dtype uint64",
           "decoded_offset_dtype=uint32", "dtype=np.uint32")


@pytest.mark.parametrize("decl,cls,part", [
    ("coop.ThreadData(2, dtype=np.uint32)", coop.ExtentMismatchError, "one total per thread"),
    # int32/int64 (and uint32/uint64) totals are accepted, as NVIDIA's tests pass them; 16 bits are too few
    ("coop.ThreadData(1, dtype=np.int16)", coop.UnsupportedDtypeError, "32- or 64-bit integer"),
    ("coop.ThreadData(1, dtype=np.float32)", coop.InvalidArgumentTypeError, "integer"),
], ids=["two_items", "narrow", "float"])
def test_total_decoded_size_is_one_wide_integer_item(decl, cls, part):
    _fails(f"""
        tot = {decl}
        r = coop.run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=2, total_decoded_size=tot)
    """, "total_decoded_size=tot", cls, WINDOW, "total_decoded_size", part)


def test_into_relative_offsets_must_have_the_decoded_offset_dtype():
    types = kernel_types()
    _fails("""
        t = coop.run_length_decode_into(coop.this_block(), v, l, dst, relative_offsets=src,
                                        decoded_offset_dtype=np.uint64)
    """, "coop.run_length_decode_into(", coop.DtypeMismatchError, INTO, "relative_offsets has dtype int32",
           "np.uint64", argtypes=(types.int32[::1], types.float32[::1], 4))


def test_return_total_must_be_a_constant():
    types = kernel_types()
    _fails("""
        r = coop.run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=2, return_total=n > 0)
    """, "return_total=", coop.NonConstantArgumentError, WINDOW, "return_total=", "True or False",
           argtypes=(types.int32[::1], types.float32[::1], types.int64))


def test_destination_dtype_must_match_the_values():
    _fails("""
        t = coop.run_length_decode_into(coop.this_block(), v, l, src)
    """, "coop.run_length_decode_into(", coop.DtypeMismatchError, INTO, "destination has dtype int32",
           "run_values has dtype float32")


def test_destination_must_be_one_dimensional():
    types = kernel_types()
    _fails("""
        t = coop.run_length_decode_into(coop.this_block(), v, l, dst)
    """, "coop.run_length_decode_into(", coop.InvalidArgumentTypeError, INTO, "2 dimensions",
           argtypes=(types.int32[::1], types.float32[:, ::1], 4))


def test_float_destination_offset():
    _fails("""
        t = coop.run_length_decode_into(coop.this_block(), v, l, dst, destination_offset=0.5)
    """, "destination_offset=0.5", coop.InvalidArgumentTypeError, INTO, "destination_offset=", "integer")


def test_run_table_beyond_shared_memory():
    types = kernel_types()
    _fails("""
        v16 = coop.ThreadData(16, dtype=np.float64)
        l16 = coop.ThreadData(16, dtype=np.int64)
        t = coop.run_length_decode_into(coop.this_block(), v16, l16, dst)
    """, "coop.run_length_decode_into(", coop.SharedMemoryLimitError, INTO, "262144", "232448",
           argtypes=(types.int32[::1], types.float64[::1], 4), block=1024)


def test_inferred_outputs_with_a_bad_decoded_offset_dtype():
    # The untyped outputs take the default (uint32); the call then names the bad keyword.
    _fails("""
        rel = coop.ThreadData(2)
        tot = coop.ThreadData(1)
        r = coop.run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=2, relative_offsets=rel,
                                   total_decoded_size=tot, decoded_offset_dtype=3)
    """, "coop.run_length_decode(", coop.UnsupportedDtypeError, WINDOW, "decoded_offset_dtype=",
           "use np.uint32 or np.uint64")


def test_inferred_relative_offsets_must_match_the_window():
    # Inference gives the dtype, never the extent.
    _fails("""
        rel = coop.ThreadData(3)
        r = coop.run_length_decode(coop.this_block(), v, l, decoded_items_per_thread=2, relative_offsets=rel)
    """, "relative_offsets=rel", coop.ExtentMismatchError, WINDOW, "3 items per thread",
           "decoded_items_per_thread=2")
