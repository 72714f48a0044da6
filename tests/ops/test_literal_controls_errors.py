"""A run-time control written as a constant (``valid_items=600``, ``distance=0``) out of the
range its run-time check allows: an error at compile time, at the kernel line
(docs/concepts.rst, "Out-of-range runtime values").  The shuffle's distance is the exception:
a constant one is taken modulo the block (rotate) or moves nothing in past the tile.  Before, such a kernel compiled and its
provider trapped on every launch (checked mode) or clamped the value.

The kernel is ``kernel(src, dst, n)`` with 128 threads and a 4-item payload: a block tile of
512 items, a warp tile of 128.
"""

from __future__ import annotations

import textwrap

import pytest

import cuda.coop as coop

from .. import kernelgen
from ..backends_param import compile_for, kernel_for
from ..error_harness import default_argtypes, expect_error

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

LOADED = """
items = coop.ThreadData(4)
coop.load(coop.this_block(), src, items)
"""
RUNS = LOADED + """
lens = coop.ThreadData(4)
coop.load(coop.this_block(), src, lens)
"""

# case -> (the call, what the message names: the argument, its value, the range)
OUT_OF_RANGE = {
    "load_negative": ("coop.load(coop.this_block(), src, items, valid_items=-1)",
                      ["valid_items=-1", "0 .. 512", "128 threads x 4 items"]),
    "store_above_tile": ("coop.store(coop.this_block(), dst, items, valid_items=100000)",
                         ["valid_items=100000", "0 .. 512"]),
    "warp_store_above_warp_tile": ("coop.store(coop.this_warp(), dst, items, valid_items=129)",
                                   ["valid_items=129", "0 .. 128", "32 lanes x 4 items"]),
    "merge_sort": ("k = coop.merge_sort_keys(coop.this_block(), items, valid_items=513)",
                   ["valid_items=513", "0 .. 512"]),
    "radix_sort": ("k = coop.radix_sort_keys(coop.this_block(), items, valid_items=-3)",
                   ["valid_items=-3", "0 .. 512"]),
    "topk": ("k = coop.topk_max_keys(coop.this_block(), items, 4, valid_items=1000)",
             ["valid_items=1000", "0 .. 512"]),
    "histogram": ("h = coop.histogram(coop.this_block(), items, bins=128, valid_items=-3)",
                  ["valid_items=-3", "0 .. 512"]),
    "adjacent_difference": ("r = coop.adjacent_difference(coop.this_block(), items, valid_items=-3)",
                            ["valid_items=-3", "0 .. 512"]),
    "discontinuity": ("r = coop.discontinuity(coop.this_block(), items, valid_items=600)",
                      ["valid_items=600", "0 .. 512"]),
}

# A shuffle's constant distance is not in this list: it has its own documented meaning (a
# rotation modulo the block, a shift past the tile moves nothing in), unlike a run-time one.
IN_RANGE = {
    "shuffle_up_past_the_tile": 'r = coop.shuffle(coop.this_block(), items, mode="up", distance=100000)',
    "shuffle_rotate_negative": 'x = coop.shuffle(coop.this_block(), src[0], mode="rotate", distance=-3)',
    "store_whole_tile": "coop.store(coop.this_block(), dst, items, valid_items=512)",
    "store_empty": "coop.store(coop.this_block(), dst, items, valid_items=0)",
    "warp_store_whole_warp_tile": "coop.store(coop.this_warp(), dst, items, valid_items=128)",
    "decode_into_offset": ("t = coop.run_length_decode_into(coop.this_block(), items, lens, dst, "
                           "decoded_items_per_thread=4, destination_offset=3)"),
}


@pytest.mark.parametrize("case", sorted(OUT_OF_RANGE))
def test_a_constant_out_of_range_is_refused_at_the_kernel_line(case):
    call, names = OUT_OF_RANGE[case]
    message = expect_error(call, coop.InvalidArgumentValueError, *names, "pass a value in that range",
                           at=call.rsplit(", ", 1)[-1].rstrip(")"), prelude=LOADED)
    assert message.startswith("coop."), message


@pytest.mark.parametrize("call, name, meaning", [
    ("r = coop.run_length_decode(coop.this_block(), items, lens, decoded_items_per_thread=4, "
     "decoded_window_offset=-5)", "decoded_window_offset=-5", "first decoded item of the window"),
    ("t = coop.run_length_decode_into(coop.this_block(), items, lens, dst, decoded_items_per_thread=4, "
     "destination_offset=-1)", "destination_offset=-1", "where in destination"),
], ids=["window_offset", "destination_offset"])
def test_a_negative_constant_run_length_offset_is_refused(call, name, meaning):
    expect_error(call, coop.InvalidArgumentValueError, name, meaning, "pass 0 or more",
                 at="run_length_decode", prelude=RUNS)


@pytest.mark.parametrize("case", sorted(IN_RANGE))
def test_a_constant_in_range_compiles(case):
    body = textwrap.indent(textwrap.dedent(RUNS) + IN_RANGE[case] + "\n", "    ")
    module = kernel_for(kernelgen.DEFAULT_COMPILER, f"@cuda.jit\ndef kernel(src, dst, n):\n{body}\n")
    compile_for(kernelgen.DEFAULT_COMPILER, module.kernel, default_argtypes(), cc=(9, 0), block=128)


def test_a_run_time_value_still_compiles_and_is_checked_at_run_time():
    """The same call with ``n`` a run-time int64: no compile-time value to test."""
    body = textwrap.indent(textwrap.dedent(LOADED) + "coop.store(coop.this_block(), dst, items, valid_items=n)\n",
                           "    ")
    module = kernel_for(kernelgen.DEFAULT_COMPILER, f"@cuda.jit\ndef kernel(src, dst, n):\n{body}\n")
    compile_for(kernelgen.DEFAULT_COMPILER, module.kernel, default_argtypes(n="int64"), cc=(9, 0), block=128)
