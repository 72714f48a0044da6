"""The error tests' one harness: compile a broken kernel, take its cuda-coop error, check
that it points at the user's line.

    info, module = compile_error('''
        x = coop.reduce(coop.this_block(), src[0], binary_op="average")
    ''')
    assert isinstance(info.value, coop.InvalidOperatorError)
    assert_at_user_line(info, module, "average")

or in one call, which also checks fragments of the message and returns it:

    expect_error('''
        x = coop.reduce(coop.this_block(), src[0], binary_op="average")
    ''', coop.InvalidOperatorError, "binary_op='average'", at="average")

The kernel is ``kernel(src, dst, n)`` (``params=`` changes that) running ``prelude`` then
``body``, built by tests/kernelgen.py and compiled for sm_90 by the run's compiler
(``pytest --compiler``; a test that covers both compilers in one run sets
``kernelgen.DEFAULT_COMPILER`` through monkeypatch).  Its argument types default to
``src``, ``dst``: int32 arrays and ``n`` the literal 4 (``n="int64"`` makes it a run-time
integer); ``argtypes=`` replaces them all.
"""

from __future__ import annotations

import textwrap
import traceback

import pytest

import cuda.coop as coop

from . import kernelgen
from .backends_param import compile_for, kernel_for, types_for


def kernel_types():
    """The Numba types of the compiler that compiles the kernels (skips where it is absent)."""
    return types_for(kernelgen.DEFAULT_COMPILER)


def default_argtypes(dtype: str = "int32", n: int | str = 4) -> tuple:
    types = kernel_types()
    element = getattr(types, dtype)
    return (element[::1], element[::1], getattr(types, n) if isinstance(n, str) else n)


def compile_error(body: str, *, params: str = "src, dst, n", argtypes=None, n: int | str = 4, block=128,
                  prelude: str = "", module_code: str = ""):
    """Compile the kernel; return (pytest's ExceptionInfo of the cuda-coop error, the module).
    ``module_code`` goes above the kernel (device functions, constants)."""
    compiler = kernelgen.DEFAULT_COMPILER
    code = textwrap.indent(textwrap.dedent(prelude) + textwrap.dedent(body), "    ")
    module = kernel_for(compiler, f"{textwrap.dedent(module_code)}\n@cuda.jit\ndef kernel({params}):\n{code}\n")
    if argtypes is None:
        argtypes = default_argtypes(n=n)
    with pytest.raises(coop.CoopError) as info:
        compile_for(compiler, module.kernel, argtypes, cc=(9, 0), block=block)
    return info, module


def assert_at_user_line(error, module, snippet: str) -> None:
    """The error's last traceback frame, and its only frame in the kernel's file, is the
    kernel line containing ``snippet``; the message names that file too.  ``error`` is the
    exception or pytest's ExceptionInfo of it."""
    exc = getattr(error, "value", error)
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1]
    assert last.filename == module.__file__, frames[-3:]
    assert snippet in (last.line or ""), last
    in_kernel_file = [f for f in frames if f.filename == module.__file__]
    assert len(in_kernel_file) == 1, in_kernel_file
    assert f'File "{module.__file__}"' in str(exc)


def expect_error(body: str, error_class, *fragments: str, at: str | None = None, **compile_kwargs) -> str:
    """Compile the kernel (``compile_error``'s arguments); check that it raises
    ``error_class`` whose message holds every one of ``fragments``, raised at the kernel
    line holding ``at`` when given; return the message for further checks."""
    info, module = compile_error(body, **compile_kwargs)
    msg = str(info.value)
    assert isinstance(info.value, error_class), (
        f"{type(info.value).__name__} instead of {error_class.__name__}: {msg}")
    missing = [fragment for fragment in fragments if fragment not in msg]
    assert not missing, f"{missing} not in the message: {msg}"
    if at is not None:
        assert_at_user_line(info, module, at)
    return msg


# The movement families' kernels (exchange, shuffle, neighbours) start from two payloads.
PAYLOAD_PRELUDE = """
a = coop.ThreadData(4, dtype=np.int32)
r = coop.ThreadData(4, dtype=np.int32)
for i in range(4):
    a[i] = src[i]
    r[i] = i
"""


def sort_prelude(keys: str, values: str, *extra: tuple) -> str:
    """The sorting families' error kernels start here: ``keys`` and ``vals``, four items of
    dtype ``keys`` / ``values`` filled from ``src`` and the item index; ``extra`` adds
    ``(name, dtype)`` payloads filled with the index too."""
    lines = [f"keys = coop.ThreadData(4, dtype=np.{keys})", f"vals = coop.ThreadData(4, dtype=np.{values})"]
    lines += [f"{name} = coop.ThreadData(4, dtype=np.{dtype})" for name, dtype in extra]
    lines += ["for i in range(4):", "    keys[i] = src[i]", "    vals[i] = i"]
    lines += [f"    {name}[i] = i" for name, _ in extra]
    return "\n".join(lines) + "\n"


def prelude_compiler(prelude: str):
    """``compile_error`` with this prelude before every body (one family's error tests)."""
    def fails(body: str, **kw):
        return compile_error(body, prelude=prelude, **kw)
    return fails
