"""A process's first kernel compile: start NVRTC's precompiled header in the background.

Each backend calls ``before_first_compile`` where it sees a compile coming before its
compiler has initialized (0.5-2 s of typing and target contexts that cuda-coop's NVRTC
compile would otherwise wait behind); core/pch.py decides whether the process is certain
to compile providers and builds the PCH meanwhile.

Earlier still is the process's first CUDA context (``install_on_device``): a program
creates it before its first launch (``cuda.to_device``, or inside that launch), and the
driver takes 0.1-0.5 s over it.  With a provider cache that has never compiled for the
device, the build starts there and runs beside the context's creation, so less of it is
left when the first cooperative compile needs it.
"""

from __future__ import annotations

import logging

__all__ = ["before_first_compile", "install_on_device"]


_asked: list = []  # one entry once a backend asked: only a process's first compile may start it


def before_first_compile(target, *, cooperative: bool, reason: str, final: bool = True) -> bool:
    """``target``: the architecture (``"sm_90a"``) or compute capability (``(9, 0)``) the
    compile is for, or None where it is unknown.  True when a background build started;
    never raises (the compile reports any problem).  Only the first call of a process does
    anything, or the first with ``final`` (the default) when earlier ones started nothing."""
    if _asked or target is None:
        return False
    if final:
        _asked.append(reason)
    started = _start(target, cooperative=cooperative, reason=reason)
    if started and not final:
        _asked.append(reason)
    return started


def _start(target, *, cooperative: bool, reason: str) -> bool:
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


def at_first_context(cc) -> bool:
    """The process's first CUDA context, about to be created for a device of compute
    capability ``cc``.  The build starts only where the provider cache shows no compile
    for that architecture at all (a look at file names: a process with a warm cache pays
    nothing more here), and it does not count as the process's first compile: when it
    starts nothing, the first launch decides as before."""
    if _asked:
        return False
    try:
        from ..core.pch import arch_for_cc, pch

        if not pch.may_start_early() or pch.seen_architecture(arch_for_cc(cc)):
            return False
    except Exception:  # noqa: BLE001 - never in the way of the context
        return False
    return before_first_compile(tuple(cc), cooperative=False, reason="first CUDA context", final=False)


_HOOKED = "_coop_first_context"


def install_on_device(device_class) -> None:
    """Wrap ``device_class.get_primary_context`` (each compiler's driver ``Device``, which
    creates the context the first time it is asked) to call ``at_first_context`` once per
    process, before the context exists.  The backends hand in their own class."""
    original = device_class.get_primary_context
    if getattr(original, _HOOKED, False):
        return
    seen: list = []

    def get_primary_context(self):
        if not seen and self.primary_context is None:
            seen.append(True)
            try:
                at_first_context(self.compute_capability)
            except Exception:  # noqa: BLE001 - never in the way of the context
                pass
        return original(self)

    setattr(get_primary_context, _HOOKED, True)
    get_primary_context.__wrapped__ = original
    get_primary_context.__doc__ = original.__doc__
    # Upstream lacks a hook at the creation of a context.
    device_class.get_primary_context = get_primary_context
