"""The complex-payload GPU kernels compile to cubin with every provider and callback
inlined (no GPU needed), and the arithmetic families refuse complex by name."""

from __future__ import annotations

from functools import partial

import pytest

import cuda.coop as coop

from .cubin_checks import assert_inlined, compile_cubin
from .. import error_harness
from ..error_harness import PAYLOAD_PRELUDE, assert_at_user_line

# The kernels start from two int32 payloads, a and r; n is a run-time integer.
compile_error = partial(error_harness.compile_error, prelude=PAYLOAD_PRELUDE, n="int64")


pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def _arr(dtype, ndim=1):
    from ..compiler import types

    ty = getattr(types, dtype)
    return ty[::1] if ndim == 1 else ty[:, ::1]


@pytest.mark.parametrize("dtype,algorithm", [("complex128", "vectorize"), ("complex128", "transpose"),
                                             ("complex64", "striped")])
def test_load_store_inlined(dtype, algorithm):
    from ..compiler import types

    from .complex_payloads_kernels import THREADS, load_store_kernel

    kb = compile_cubin(load_store_kernel(dtype, algorithm), (_arr(dtype),) * 4 + (types.int64,),
                       cc=(9, 0), block=THREADS)
    assert_inlined(kb, (9, 0))
    if dtype == "complex128":
        assert "ld.global.f64" in kb.ptx or "ld.global.v2.f64" in kb.ptx


def test_exchange_and_shuffle_inlined():
    from .complex_payloads_kernels import THREADS, _shuffle, exchange_kernel

    for dtype in ("complex128", "complex64"):
        kb = compile_cubin(exchange_kernel(dtype), (_arr(dtype), _arr(dtype, 2)), cc=(9, 0), block=THREADS)
        assert_inlined(kb, (9, 0))
    kb = compile_cubin(_shuffle, (_arr("complex128"),) * 5, cc=(9, 0), block=THREADS)
    assert_inlined(kb, (9, 0))


def test_warp_load_store_inlined():
    from ..compiler import types

    from .complex_payloads_kernels import THREADS, _warp_load_store

    kb = compile_cubin(_warp_load_store, (_arr("complex128"),) * 3 + (types.int64,), cc=(9, 0), block=THREADS)
    assert_inlined(kb, (9, 0))


def test_neighbour_callbacks_inlined():
    """Complex callback operands cross the C ABI by pointer: by value the call stayed."""
    from ..compiler import types

    from .complex_payloads_kernels import THREADS, _neighbours

    c = types.complex128
    kb = compile_cubin(_neighbours, (c[::1], c[::1], types.int32[::1], types.int32[::1], types.int64, c, c),
                       cc=(9, 0), block=THREADS)
    assert_inlined(kb, (9, 0))


_COMPLEX_PRELUDE = """
a = coop.ThreadData(2, dtype=np.complex128)
coop.load(coop.this_block(), src, a)
"""


def _complex_error(body):
    from ..compiler import types

    return compile_error(body, prelude=_COMPLEX_PRELUDE,
                         argtypes=(types.complex128[::1], types.complex128[::1], types.int64))


@pytest.mark.parametrize("call,snippet", [
    ("coop.sum", "x = coop.sum(coop.this_block(), a)\n"),
    ("coop.reduce", 'x = coop.reduce(coop.this_warp(), src[0], binary_op="max")\n'),
    ("coop.inclusive_sum", "x = coop.inclusive_sum(coop.this_block(), a)\n"),
    ("coop.radix_sort_keys", "coop.radix_sort_keys(coop.this_block(), a)\n"),
    ("coop.merge_sort_keys", 'coop.merge_sort_keys(coop.this_block(), a, compare_op="<")\n'),
    ("coop.topk_max_keys", "x = coop.topk_max_keys(coop.this_block(), a, 4)\n"),
    ("coop.histogram", "x = coop.histogram(coop.this_block(), a, bins=16)\n"),
    ("coop.run_length_decode", "l = coop.ThreadData(2, dtype=np.int32)\n"
     "x = coop.run_length_decode(coop.this_block(), a, l, decoded_items_per_thread=4)\n"),
])
def test_arithmetic_families_refuse_complex(call, snippet):
    info, module = _complex_error(snippet)
    msg = str(info.value)
    assert isinstance(info.value, coop.UnsupportedDtypeError), msg
    # histogram's samples are bin indices: its own message asks for integers.
    fix = ("bin indices", "int32") if call == "coop.histogram" else ("float64 values (z.real, z.imag)",
                                                                      "coop.exchange()")
    for part in (f"{call}()", "complex128", *fix):
        assert part in msg, (part, msg)
    assert_at_user_line(info, module, call + "(")


def test_builtin_neighbour_operator_refuses_complex():
    info, module = _complex_error("x = coop.adjacent_difference(coop.this_block(), a)\n")
    msg = str(info.value)
    assert isinstance(info.value, coop.UnsupportedDtypeError), msg
    for part in ("coop.adjacent_difference()", "difference_op='-' (the default)", "complex128",
                 "@cuda.jit(device=True)"):
        assert part in msg, (part, msg)
    assert_at_user_line(info, module, "coop.adjacent_difference(")


def test_complex_scalar_for_a_real_payload_is_a_mismatch():
    from ..compiler import types

    info, _ = compile_error(
        "b = coop.ThreadData(2, dtype=np.float64)\n"
        "coop.load(coop.this_block(), dst, b, valid_items=n, oob_default=src[0])\n",
        prelude="", argtypes=(types.complex128[::1], types.float64[::1], types.int64))
    assert isinstance(info.value, coop.DtypeMismatchError), str(info.value)
    assert "complex128" in str(info.value)
