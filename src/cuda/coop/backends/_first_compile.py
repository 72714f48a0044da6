"""A process's first kernel compile: start NVRTC's precompiled header in the background.

Each backend calls ``before_first_compile`` where it sees a compile coming before its
compiler has initialized (0.5-2 s of typing and target contexts that cuda-coop's NVRTC
compile would otherwise wait behind); core/pch.py decides whether the process is certain
to compile providers and builds the PCH meanwhile.
"""

from __future__ import annotations

import logging

__all__ = ["before_first_compile"]


_asked: list = []  # one entry once a backend asked: only a process's first compile may start it


def before_first_compile(target, *, cooperative: bool, reason: str) -> bool:
    """``target``: the architecture (``"sm_90a"``) or compute capability (``(9, 0)``) the
    compile is for, or None where it is unknown.  True when a background build started;
    never raises (the compile reports any problem).  Only the first call of a process does
    anything."""
    if _asked or target is None:
        return False
    _asked.append(reason)
    try:
        from ..core.pch import pch

        if not pch.may_start_early():  # before core/build.py and the toolchain (~35 ms)
            return False
        from ..core.build import arch_for_cc, start_precompiled_header
        from ..ops._prelude import PRELUDE_HEADERS

        arch = target if isinstance(target, str) else arch_for_cc(target)
        return start_precompiled_header(arch, PRELUDE_HEADERS, cooperative=cooperative, reason=reason)
    except Exception as exc:  # noqa: BLE001 - e.g. no CCCL: the compile itself names it
        logging.getLogger("cuda.coop.core.build").debug("no early precompiled header: %r", exc)
        return False


def before_compile_cubin(kernel, cc) -> bool:
    """What both backends' ``compile_cubin`` call first: ``kernel`` (a dispatcher or its
    Python function) compiled for ``cc``."""
    if _asked:
        return False
    from types import SimpleNamespace

    from ._launch_checks import uses_coop

    pyfunc = getattr(kernel, "py_func", kernel)
    return before_first_compile(tuple(cc), cooperative=uses_coop(SimpleNamespace(py_func=pyfunc)),
                                reason="first compile_cubin")
