"""What tests/ops/test_reduce_errors.py shares with tests/ops/test_scan_errors.py: kept here
because test modules do not import each other."""

from __future__ import annotations

from ..error_harness import kernel_types

PRELUDE = """
items = coop.ThreadData(4, dtype=np.int32)
for i in range(4):
    items[i] = src[i]
"""


def body(text: str) -> str:
    return PRELUDE + text


def float_args():
    types = kernel_types()
    return (types.float32[::1], types.float32[::1], 4)

HELPERS = """
import math
import operator

def plain_function(a, b):
    return a + b

import types as _types_module
operators_module = _types_module.SimpleNamespace(plain_function=plain_function)
max_lambda = lambda a, b: a if a > b else b  # noqa: E731

@cuda.jit
def other_kernel(x):
    pass

@cuda.jit(device=True)
def takes_an_array(a, b):
    return a[0] + b
"""
