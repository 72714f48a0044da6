"""What the ``*_compile`` tests share: compile to cubin with no GPU, and check that
link-time optimization left no call into a cuda-coop provider or user callback."""

from __future__ import annotations

import re


def numba_types():
    from ..compiler import types

    return types


def compile_cubin(kernel, argtypes, **kw):
    from ..compiler import compile_cubin as compile_

    return compile_(kernel, argtypes, **kw)


def sass_calls(sass: str) -> list:
    """CALL instructions into other functions.

    ptxas implements __syncwarp on sm_70..sm_80 with an internal subroutine
    (``__cuda_sm70_warpsync``) and some sm_80 loops with ``CALL.REL.NOINC`` to a
    label of the same function (``.L_x_N``): neither is a call into a provider, nor is the
    out-of-line report of a failed run-time check: the calls into ``cuda_coop_checked::*``
    and the calls inside those subroutines (``vprintf``, through a register).
    """
    calls, in_report = [], False
    for line in sass.splitlines():
        stripped = line.strip()
        if stripped.endswith(":") and not stripped.startswith(".L_x_"):  # a function's label
            in_report = "cuda_coop_checked" in stripped
        if ("CALL" in line and not in_report and "__cuda_sm" not in line and "cuda_coop_checked" not in line
                and not re.search(r"CALL\.REL\.NOINC `\(\.L_x_\d+\)", line)):
            calls.append(line)
    return calls


def assert_inlined(kb, cc=None, *, nvdisasm=None):
    """A cubin for ``cc`` (when given) whose post-LTO PTX calls nothing and names no
    provider (``coop_<family>_...``), provider layout global or callback (``coop_cb_...``);
    with ``nvdisasm``, its SASS has no CALL into another function either."""
    assert kb.cubin[:4] == b"\x7fELF"
    if cc is not None:
        assert f".target sm_{cc[0]}{cc[1]}" in kb.ptx
    from cuda.coop.backends._binary import remaining_calls

    calls = remaining_calls(kb.ptx)  # the run-time checks' out-of-line report is not a wrapper
    assert not calls, f"a call survived LTO: {calls}"
    leftovers = sorted(set(re.findall(r"\bcoop_\w+", kb.ptx)))
    assert not leftovers, f"cuda-coop symbols survived LTO: {leftovers}"
    if nvdisasm:
        assert not sass_calls(kb.sass())
