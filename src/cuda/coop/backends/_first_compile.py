"""A process's first kernel compile: prepare for it in the background (NVRTC's precompiled
header, the backend's installation).

Each backend calls ``before_first_compile`` where it sees a compile coming before its
compiler has initialized (0.5-2 s of typing and target contexts that cuda-coop's NVRTC
compile would otherwise wait behind); core/pch.py decides whether the process is certain
to compile providers and builds the PCH meanwhile.

Earlier still is the process's first CUDA context (``install_on_device``): a program
creates it before its first launch (``cuda.to_device``, or inside that launch), and the
driver takes 0.1-0.5 s over it.  With a provider cache that has never compiled for the
device, the build starts there and runs beside the context's creation, so less of it is
left when the first cooperative compile needs it.

Earliest is the definition of the process's first kernel or device function that refers to
cuda.coop (``install_on_definition``: ``@cuda.jit`` at a module's import), before the
program creates its arrays and with them the context.  The architecture comes from NVML
there, in a thread (``visible_compute_capability``): initializing CUDA's driver instead
would break CUDA in a child the program forks later, which NVML does not.  That thread
first makes the compiler's cuda.coop backend ready (its typing and lowerings), work the
first cooperative compile would otherwise do before its own.
"""

from __future__ import annotations

import logging
import os
import threading

__all__ = ["before_first_compile", "install_on_device", "install_on_definition", "visible_compute_capability"]


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


def at_first_context(cc, reason: str = "first CUDA context") -> bool:
    """The process's first CUDA context, about to be created for a device of compute
    capability ``cc``.  The build starts only where the provider cache shows no compile
    for that architecture at all (a look at file names: a process with a warm cache pays
    nothing more here), and it does not count as the process's first compile: when it
    starts nothing, the first launch decides as before.  Not cooperative: a process that
    built the PCH there and never compiled leaves a note, and the next one does not build
    it again (core/pch.py)."""
    if _asked:
        return False
    try:
        from ..core.pch import arch_for_cc, pch

        if not pch.may_start_early() or pch.seen_architecture(arch_for_cc(cc)):
            return False
    except Exception:  # noqa: BLE001 - never in the way of the context
        return False
    return before_first_compile(tuple(cc), cooperative=False, reason=reason, final=False)


def visible_compute_capability():
    """The compute capability that every GPU of the machine shares, from NVML, or None: no
    NVML (no driver, or cuda-bindings without ``cuda.bindings.nvml``), no GPU, GPUs hidden
    by ``CUDA_VISIBLE_DEVICES``, or GPUs of several architectures (the first context
    decides then: NVML numbers GPUs in PCI order, CUDA fastest first).  NVML, unlike
    ``cuInit``, leaves CUDA usable in a child that the process forks later."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and (not visible.strip() or visible.strip().startswith("-")):
        return None
    try:
        from cuda.bindings import nvml
    except ImportError:
        return None
    try:
        nvml.init_v2()
    except Exception:  # noqa: BLE001 - no driver library or no GPU
        return None
    try:
        handles = [nvml.device_get_handle_by_index_v2(i) for i in range(nvml.device_get_count_v2())]
        capabilities = {tuple(nvml.device_get_cuda_compute_capability(h)) for h in handles}
    except Exception:  # noqa: BLE001 - a GPU NVML cannot read: the first context decides
        return None
    finally:
        try:
            nvml.shutdown()
        except Exception:  # noqa: BLE001
            pass
    return capabilities.pop() if len(capabilities) == 1 else None


_definition_probe: list = []  # the thread, once a cooperative definition started one


def at_definition(pyfunc, backend_name: str) -> bool:
    """``pyfunc`` was just defined as a kernel or device function.  The first one of the
    process that refers to cuda.coop starts a thread that

    1. makes the ``backend_name`` backend ready (``DeferredActivation.ready_elsewhere``):
       its typing and lowering modules and registrations (not the families'), 25-40 ms
       that the kernel's first compile would otherwise spend before its own work.  A program defines its kernels,
       then creates its arrays and with them the CUDA context, in the driver, without
       Python's lock, so the installation is done by the first launch;
    2. asks ``visible_compute_capability`` for the GPUs' compute capability and goes on as
       ``at_first_context`` (where the PCH may start early).

    True when it started the thread; the main thread pays only the look at ``pyfunc``'s names."""
    if _definition_probe:
        return False
    from ..core.pch import pch
    from ._launch_checks import function_refers_to_coop

    probe_gpu = not _asked and pch.may_start_early()
    if not function_refers_to_coop(pyfunc):
        return False

    def probe():
        from .._registration import active_backends

        backend = active_backends().get(backend_name)
        if backend is not None:
            backend.ready_elsewhere()
        if probe_gpu:
            cc = visible_compute_capability()
            if cc is not None:
                at_first_context(cc, reason="first cooperative kernel defined")

    thread = threading.Thread(target=probe, name="cuda-coop-first-definition", daemon=False)
    _definition_probe.append(thread)
    if hasattr(os, "register_at_fork"):
        # The thread imports modules and holds the compile lock, then NVML: a child forked
        # meanwhile must not inherit a lock or NVML state held by a thread it does not have.
        os.register_at_fork(before=thread.join)
    thread.start()
    return True


_HOOKED = "_coop_first_compile_hook"


def _wrap_once(owner, name: str, make_wrapper) -> None:
    """Replace ``owner.<name>`` with ``make_wrapper(original)``, marked so that a second
    install (another backend's activation, a reload) leaves it as it is."""
    original = getattr(owner, name)
    if getattr(original, _HOOKED, False):
        return
    wrapper = make_wrapper(original)
    setattr(wrapper, _HOOKED, True)
    wrapper.__wrapped__ = original
    wrapper.__doc__ = original.__doc__
    setattr(owner, name, wrapper)


def install_on_device(device_class) -> None:
    """Wrap ``device_class.get_primary_context`` (each compiler's driver ``Device``, which
    creates the context the first time it is asked) to call ``at_first_context`` once per
    process, before the context exists.  The backends hand in their own class."""
    seen: list = []

    def make_wrapper(original):
        def get_primary_context(self):
            if not seen and self.primary_context is None:
                seen.append(True)
                try:
                    at_first_context(self.compute_capability)
                except Exception:  # noqa: BLE001 - never in the way of the context
                    pass
            return original(self)

        return get_primary_context

    # Upstream lacks a hook at the creation of a context.
    _wrap_once(device_class, "get_primary_context", make_wrapper)


def install_on_definition(dispatcher_class, backend_name: str) -> None:
    """Wrap ``dispatcher_class.__init__`` (each compiler's kernel dispatcher, which
    ``@cuda.jit`` creates) to call ``at_definition`` with the Python function and the
    backend of that compiler, until the process's first cooperative definition.  The
    backends hand in their own class and name."""

    def make_wrapper(original):
        def __init__(self, py_func, *args, **kwargs):
            original(self, py_func, *args, **kwargs)
            try:
                at_definition(py_func, backend_name)
            except Exception:  # noqa: BLE001 - never in the way of a definition
                pass

        return __init__

    # Upstream lacks a hook at the definition of a kernel.
    _wrap_once(dispatcher_class, "__init__", make_wrapper)
