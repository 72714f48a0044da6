"""The argument checks of coop.ThreadData, coop.TempStorage, storage.reserve and group_by,
the same on both compilers (backends/_typing.py): one named error, one message, the user's line.

Each case is one the two backends answered differently before their typing was one module
(a float ``alignment=`` was an InvalidArgumentTypeError on numba-cuda-mlir and a
NonConstantArgumentError on classic numba-cuda, ...); each compiles on both.
"""

from __future__ import annotations

import re

import pytest

import cuda.coop as coop

from ..backends_param import COMPILERS, compile_for, kernel_for, types_for

pytestmark = pytest.mark.compile

_STORAGE = "ts = coop.TempStorage(auto_sync=False)\n    "

# name -> (statement, error, words the message holds, in order)
CASES = {
    # A constant or a run-time value of the wrong type is a type error that shows it (it
    # was "not known at compile time" on classic numba-cuda).
    "float_alignment": ("items = coop.ThreadData(4, dtype=np.int32, alignment=16.0)", "InvalidArgumentTypeError",
                        ["alignment is a float64 value", "must be an int or None", "pass an int or None"]),
    "run_time_float_alignment": ("items = coop.ThreadData(4, dtype=np.int32, alignment=src[0] * 1.5)",
                                 "InvalidArgumentTypeError", ["alignment is a float64 value"]),
    "string_alignment": ("items = coop.ThreadData(4, dtype=np.int32, alignment='16')", "InvalidArgumentTypeError",
                         ["alignment='16' is not an int or None"]),
    "bool_alignment": ("items = coop.ThreadData(4, dtype=np.int32, alignment=True)", "InvalidArgumentTypeError",
                       ["alignment=True is not an int or None"]),
    "float_alignas": ("items = coop.ThreadData(4, dtype=np.int32, alignas=16.0)", "InvalidArgumentTypeError",
                      ["alignas is a float64 value"]),
    "float_reserve_alignment": (_STORAGE + "a = ts.reserve(64, np.int32, alignment=16.0)",
                                "InvalidArgumentTypeError",
                                ["TempStorage.reserve(): alignment is a float64 value"]),
    "string_reserve_alignment": (_STORAGE + "a = ts.reserve(64, np.int32, alignment='16')",
                                 "InvalidArgumentTypeError", ["alignment='16' is not an int or None"]),
    # A run-time int is not known at compile time (one wording on both).
    "run_time_alignment": ("items = coop.ThreadData(4, dtype=np.int32, alignment=src[0])",
                           "NonConstantArgumentError",
                           ["alignment=int32 is not known at compile time", "pass an int or None",
                            "a literal, a module constant or a closure value"]),
    "run_time_size": ("ts = coop.TempStorage(src[0])", "NonConstantArgumentError",
                      ["size_in_bytes=int32 is not known at compile time", "pass an int or None"]),
    # A run-time bool or string of the right type is not known at compile time (on
    # numba-cuda-mlir it was a type error: "auto_sync is a bool value, but it must be True,
    # False or None").
    "run_time_auto_sync": ("ts = coop.TempStorage(auto_sync=src[0] > 0)", "NonConstantArgumentError",
                           ["auto_sync=bool is not known at compile time", "pass True, False or None"]),
    "run_time_sharing": ("ts = coop.TempStorage(sharing='shared' if src[0] > 0 else 'exclusive')",
                         "NonConstantArgumentError",
                         ["sharing=unicode_type is not known at compile time", "pass 'shared' or 'exclusive'"]),
    "run_time_string_size": ("ts = coop.TempStorage('a' if src[0] > 0 else 'b')", "InvalidArgumentTypeError",
                             ["size_in_bytes is a unicode_type value, but it must be an int or None"]),
    # The usage names every parameter (classic numba-cuda left out alignas=).
    "thread_data_usage": ("items = coop.ThreadData(4, dtype=np.int32, align=16)", "InvalidArgumentTypeError",
                          ["unexpected keyword argument 'align'",
                           "coop.ThreadData(items_per_thread, dtype=None, alignment=None, alignas=None)"]),
    "dtype_not_a_dtype": ("items = coop.ThreadData(4, dtype=5)", "InvalidArgumentTypeError",
                          ["dtype=5 is not a dtype", "pass e.g. np.int32 or 'float32'"]),
    # group_by names its argument, the value and what to pass.
    "run_time_width": ("g = coop.this_warp().group_by(src[0])", "NonConstantArgumentError",
                       ["coop.this_warp().group_by(): width=int32 is not known at compile time",
                        "pass 1, 2, 4, 8, 16 or 32 (or another width from 3 to 31 with exhaustive=False)"]),
    "run_time_warps": ("g = coop.this_block().group_by(src[0])", "NonConstantArgumentError",
                       ["coop.this_block().group_by(): warps_per_group=int32 is not known at compile time"]),
    "warp_group_by_usage": ("g = coop.this_warp().group_by(4, full=True)", "InvalidArgumentTypeError",
                            ["takes the logical warp width and optionally exhaustive=",
                             "group_by(width, exhaustive=True)"]),
    "block_group_by_usage": ("g = coop.this_block().group_by()", "InvalidArgumentTypeError",
                             ["takes the number of warps per group", "group_by(n, exhaustive=False)"]),
    "int_exhaustive": ("g = coop.this_warp().group_by(4, exhaustive=1)", "NonConstantArgumentError",
                       ["exhaustive=1 is not known", "pass exhaustive=True or exhaustive=False"]),
}


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("case", list(CASES))
def test_misuse_is_one_error_on_both_compilers(case, compiler):
    statement, error, words = CASES[case]
    module = kernel_for(compiler, f"""
@cuda.jit
def kernel(src, dst):
    {statement}  # the misuse
    dst[0] = src[0]
""")
    types = types_for(compiler)
    with pytest.raises(getattr(coop, error)) as info:
        compile_for(compiler, module.kernel, (types.int32[::1], types.int32[::1]), block=128)
    message = str(info.value)
    assert type(info.value) is getattr(coop, error), type(info.value)
    assert re.search(".*".join(map(re.escape, words)), message, re.S), message
    assert "# the misuse" in message
