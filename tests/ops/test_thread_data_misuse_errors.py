"""Misuses of a ``coop.ThreadData`` in the kernel's own code, each an error at compile time
at the kernel line:

- a constant index outside it, or a float one.  A kernel checks no index, so ``items[7]``
  on four items compiled and read or wrote another variable's registers; numba reported a
  float index as a bare TypingError.  Indexes in range, negative ones from the end, and
  run-time ones compile;
- unpacking one into names (backends/_unpacking.py).  ``heads, tails =
  coop.discontinuity(block, items)`` (one payload of four flags) compiled on classic
  numba-cuda into a failing run-time length check, and ended in numba-cuda-mlir's lowering
  with a bare AssertionError.  A call that returns a tuple unpacks as before.

The kernel is ``kernel(src, dst, n)`` with 128 threads (tests/error_harness.py).
"""

from __future__ import annotations

import textwrap

import pytest

import cuda.coop as coop

from .. import kernelgen
from ..backends_param import compile_for, kernel_for
from ..compiler import NAME, require
from ..error_harness import default_argtypes, expect_error

pytestmark = pytest.mark.compile

require()

LOADED = """
items = coop.ThreadData(4)
coop.load(coop.this_block(), src, items)
"""


@pytest.mark.parametrize("line, shown", [
    ("items[7] = 1", "items[7]: index 7"),
    ("dst[0] = items[4]", "items[4]: index 4"),
    ("dst[0] = items[-5]", "items[-5]: index -5"),
    ("alias = items\nalias[9] = 2", "alias[9]: index 9"),
], ids=["store_past_the_end", "read_one_past", "read_before_the_start", "through_an_alias"])
def test_a_constant_index_outside_the_thread_data_is_refused(line, shown):
    message = expect_error(line + "\ncoop.store(coop.this_block(), dst, items)", coop.InvalidArgumentValueError,
                           shown, "outside coop.ThreadData(4)", "0 .. 3", "-4 .. -1",
                           "use an index in that range", at=line.splitlines()[-1], prelude=LOADED)
    assert "registers" in message


def test_a_float_index_is_refused():
    expect_error("items[1.5] = 1\ncoop.store(coop.this_block(), dst, items)", coop.InvalidArgumentTypeError,
                 "items[1.5]", "indexed with an integer", "items[1]", at="items[1.5]", prelude=LOADED)


@pytest.mark.parametrize("line", [
    "items[3] = 1", "items[-4] = 1", "dst[0] = items[0] + items[-1]", "items[n % 4] = 1",
    "for i in range(4):\n    items[i] = i",
], ids=["last", "first_from_the_end", "both_ends", "run_time", "loop"])
def test_indexes_in_range_and_run_time_ones_compile(line):
    body = textwrap.indent(textwrap.dedent(LOADED) + line + "\ncoop.store(coop.this_block(), dst, items)\n", "    ")
    module = kernel_for(kernelgen.DEFAULT_COMPILER, f"@cuda.jit\ndef kernel(src, dst, n):\n{body}\n")
    compile_for(kernelgen.DEFAULT_COMPILER, module.kernel, default_argtypes(n="int64"), cc=(9, 0), block=128)


def test_unpacking_one_payload_into_two_names_is_refused():
    body = "heads, tails = coop.discontinuity(coop.this_block(), items)\ncoop.store(coop.this_block(), dst, heads)"
    expect_error(body, coop.InvalidArgumentTypeError, "coop.discontinuity()", "one coop.ThreadData of 4 items",
                 "unpacked into 2 names", "unpacks into exactly 4 names", at="heads, tails", prelude=LOADED)


def test_unpacking_a_payload_into_its_extent():
    """Classic numba-cuda unpacks an array of the right length; numba-cuda-mlir cannot."""
    body = "a, b, c, d = items\ndst[0] = a + b + c + d"
    if NAME == "numba-cuda":
        module = kernel_for(NAME, "@cuda.jit\ndef kernel(src, dst, n):\n"
                            + textwrap.indent(textwrap.dedent(LOADED) + body + "\n", "    "))
        compile_for(NAME, module.kernel, default_argtypes(), cc=(9, 0), block=128)
    else:
        expect_error(body, coop.InvalidArgumentTypeError, "= items", "unpacked into 4 names",
                     "numba-cuda-mlir cannot unpack an array into names; index it", at="a, b, c, d",
                     prelude=LOADED)


def test_a_call_that_returns_two_payloads_unpacks():
    body = textwrap.indent(textwrap.dedent(LOADED) + "values = coop.ThreadData(4)\n"
                           "coop.load(coop.this_block(), src, values)\n"
                           "k, v = coop.radix_sort_pairs(coop.this_block(), items, values)\n"
                           "coop.store(coop.this_block(), dst, v)\n", "    ")
    module = kernel_for(kernelgen.DEFAULT_COMPILER, f"@cuda.jit\ndef kernel(src, dst, n):\n{body}\n")
    compile_for(kernelgen.DEFAULT_COMPILER, module.kernel, default_argtypes(), cc=(9, 0), block=128)


@pytest.mark.parametrize("other, shown", [
    ("coop.ThreadData(8)", "coop.ThreadData(int32, 8)"),
    ("coop.ThreadData(4, dtype=np.float64)", "coop.ThreadData(float64, 4)"),
], ids=["other_items", "other_dtype"])
def test_one_name_for_two_payloads_is_refused(other, shown):
    """Before: numba merged the two into a plain array ("not a coop.ThreadData payload" at the
    next call) or failed with a bare "Cannot unify"."""
    body = f"if n > 0:\n    items = {other}\n    items[0] = 1\ncoop.store(coop.this_block(), dst, items)"
    expect_error(body, coop.InvalidArgumentTypeError, "one variable holds a coop.ThreadData(int32, 4)", shown,
                 "give the second payload its own name", at="coop.store", prelude=LOADED,
                 argtypes=default_argtypes(n="int64"))
