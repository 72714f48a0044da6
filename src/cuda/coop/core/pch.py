"""NVRTC's precompiled header (PCH) in this process: when it is built, and which compiles use it.

Parsing the CUB headers is most of an NVRTC compile: a cold load/store translation unit
takes 0.47 s on the 2-core machine, 0.16 s with a PCH.  NVRTC cannot reuse a PCH made by
another process (it records the address of its PCH heap, which differs per process:
warning 20282-D), and building one costs about 0.7 s.  Every PCH compile uses one canonical
prelude (every family's headers, in a fixed order: ``ops/_prelude.py``), so one PCH serves
every kernel of the process.

The PCH is built in one of two ways:

* **In the background, at the first kernel compile of a process that will compile**
  (``start_early``).  A process's first kernel compile, cooperative or not, spends
  0.35-0.5 s (the 2-core machine, a quiet H100 host) to 1.3-2 s (busier hosts) initializing
  the compiler's typing and target contexts before it reaches cuda-coop's NVRTC compile;
  NVRTC releases the GIL, so the PCH is built on another core meanwhile and the first
  cooperative compile finds it ready, or waits for the rest of it.  Only where a compile
  is likely: the provider cache holds nothing for this toolchain and architecture (a fresh
  install, a CI job, a cleared cache), and the first kernel is cooperative or an earlier
  process's PCH was not left unused (``_Notes``).
  With a warm cache nothing starts: a re-run finds its LTO-IR there.  Nor with fewer than
  ``EARLY_MIN_CPUS`` usable CPUs (``CUDA_COOP_NVRTC_PCH=early`` starts it anyway).
* **Inline**, in the second NVRTC compile of a process (``auto``) or the first (``1``).

NVRTC compiles one program at a time per process (two threads' compiles take turns), so a
compile that finds a background build of its options still running waits for it: no
other order is faster.  A background build for other options (another architecture) is
waited for by NVRTC itself, and not used.  The build thread is not a daemon: an interpreter
that exits while it runs waits for NVRTC rather than unload it under a running compile, and
``os.fork`` waits for it too (a child must not inherit NVRTC's lock held by a thread it
does not have).
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import shutil
import tempfile
import threading
import time

from .. import _env

__all__ = ["PrecompiledHeader", "PCH_HEAP_BYTES", "pch", "arch_for_cc"]

_log = logging.getLogger("cuda.coop.core.build")

# The default 256 MiB heap is too small for every family's CUB headers (#639-D).
PCH_HEAP_BYTES = 512 << 20


def arch_for_cc(cc) -> str:
    """The architecture name of compute capability ``cc`` (``(9, 0)`` -> ``"sm_90"``), as
    NVRTC, nvJitLink and the provider cache's notes spell it.  Here rather than in
    core/build.py because the first CUDA context asks for it before anything imports that."""
    major, minor = cc
    return f"sm_{major}{minor}"


def setting() -> str:
    """``CUDA_COOP_NVRTC_PCH``: "auto" (default), "early" (auto, and the background build
    whatever the number of CPUs), "on" or "off"."""
    raw = os.environ.get("CUDA_COOP_NVRTC_PCH", "auto")
    value = raw.strip().lower()
    if value in ("0", "false", "no", "off"):
        return "off"
    if value in ("1", "true", "yes", "on"):
        return "on"
    if value in ("early", "auto", ""):
        return value or "auto"
    if raw not in _reported:
        # A typo must not break compiles (as with every CUDA_COOP_ variable): auto applies,
        # and the log says so once.
        _reported.add(raw)
        _log.warning("CUDA_COOP_NVRTC_PCH=%r is not one of auto, early, 1 or 0; auto applies", raw)
    return "auto"


_reported: set = set()


# The background build needs a core of its own beside the compiler's initialization.  On
# the 2-core machine a cooperative first kernel came out 0.09 s slower with it (compiler
# initialization 0.37 s, the build 0.7 s: the compile waits, on shared cores); on the
# 16-core H100 host it was 0.07-0.12 s faster.
EARLY_MIN_CPUS = 4


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _BackgroundBuild:
    def __init__(self, options: tuple, arch: str, reason: str):
        self.options = options  # the NVRTC options of the compiles it serves
        self.arch = arch
        self.reason = reason
        self.ok = False
        self.used = False
        self.seconds = 0.0
        self.thread: threading.Thread | None = None


class _Notes:
    """Files in the cache directory that tell a new process whether its first compile
    will need NVRTC: ``compiled-<toolchain>-<arch>`` once cuda-coop compiled anything for
    that toolchain and architecture, ``pch-unused-<toolchain>-<arch>`` when a process
    built a PCH early and never compiled (one that imports cuda.coop but launches only
    plain kernels: it is not started again for them).  None of it where the disk cache is
    off."""

    @staticmethod
    def _path(kind: str, identity: str, arch: str):
        if not _env.cache_enabled():
            return None
        digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
        return _env.cache_dir() / "notes" / f"{kind}-{digest}-{arch}"

    @classmethod
    def has(cls, kind: str, identity: str, arch: str) -> bool:
        path = cls._path(kind, identity, arch)
        return path is not None and path.exists()

    @staticmethod
    def any_for(arch: str) -> bool:
        """Whether a note of any kind and toolchain names ``arch`` (file names only: no
        toolchain identity, which costs the import of core/build.py)."""
        if not _env.cache_enabled():
            return False
        try:
            return any((_env.cache_dir() / "notes").glob(f"*-{arch}"))
        except OSError:
            return False

    @classmethod
    def write(cls, kind: str, identity: str, arch: str) -> None:
        path = cls._path(kind, identity, arch)
        if path is None or path.exists():
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        except OSError:
            pass


class PrecompiledHeader:
    """The PCH state of this process (one instance: ``pch``, below)."""

    def __init__(self):
        self.compiles = 0  # NVRTC compiles of providers (not the background build)
        self.directory = None
        self.failed = False
        self.heap_set = False
        self.background: _BackgroundBuild | None = None
        self._lock = threading.Lock()

    def nvrtc_options(self) -> list:
        """The options that make an NVRTC compile create or use the PCH (and its heap)."""
        from cuda.bindings import nvrtc

        if self.directory is None:
            self.directory = tempfile.mkdtemp(prefix="cuda-coop-pch-")
            atexit.register(shutil.rmtree, self.directory, True)
        if not self.heap_set:
            nvrtc.nvrtcSetPCHHeapSize(PCH_HEAP_BYTES)
            self.heap_set = True
        return ["--pch", f"--pch-dir={self.directory}", "--pch-messages=false"]

    # -- the compiles -----------------------------------------------------------------
    def wanted(self, options: tuple) -> bool:
        """Whether a compile with ``options`` (its PCH options) uses the PCH; waits for a
        background build of the same options."""
        mode = setting()
        if self.failed or mode == "off":
            return False
        build = self.background
        if build is not None and build.options == options:
            if build.thread is not None:
                build.thread.join()
            if build.ok:
                build.used = True
                return True
            return False
        return mode == "on" or self.compiles >= 1

    def compiled(self, identity: str, arch: str) -> None:
        """Record an NVRTC compile (for ``wanted`` and for later processes' ``start_early``)."""
        self.compiles += 1
        _Notes.write("compiled", identity, arch)

    # -- the background build ---------------------------------------------------------
    def may_start_early(self) -> bool:
        """The checks of ``start_early`` that need neither the toolchain nor the cache."""
        mode = setting()
        if mode not in ("auto", "early") or self.failed or self.background is not None or self.compiles:
            return False
        return mode == "early" or usable_cpus() >= EARLY_MIN_CPUS

    def seen_architecture(self, arch: str) -> bool:
        """Whether this cache directory's notes name ``arch``: some process compiled for it
        (any toolchain), or built a PCH for it and never compiled."""
        return _Notes.any_for(arch)

    def start_early(self, identity: str, arch: str, options: tuple, compile_prelude, *,
                    cooperative: bool, reason: str) -> bool:
        """Start building the PCH for ``options`` in a background thread if this process is
        certain to compile (see the module's docstring).  ``compile_prelude(pch_options)``
        runs the NVRTC compile.  True when a build started."""
        if not self.may_start_early():
            return False
        with self._lock:
            if self.background is not None or self.compiles:
                return False
            if _Notes.has("compiled", identity, arch):
                return False
            if not cooperative and _Notes.has("pch-unused", identity, arch):
                return False
            build = self.background = _BackgroundBuild(options, arch, reason)
        pch_options = self.nvrtc_options()  # the heap is set here, before any NVRTC compile

        def run():
            t0 = time.perf_counter()
            try:
                compile_prelude(pch_options)
                build.ok = True
            except Exception as exc:  # noqa: BLE001 - a failed build only means compiling without it
                self.failed = True
                _log.info("NVRTC precompiled header failed in the background (%s); compiling without it",
                          type(exc).__name__)
            build.seconds = time.perf_counter() - t0
            _log.debug("NVRTC precompiled header for %s built in the background in %.3f s",
                       arch, build.seconds)

        def note_unused():
            if build.ok and not build.used and not self.compiles:
                _Notes.write("pch-unused", identity, arch)

        # Registered after the directory's removal, so it runs first (atexit is LIFO).
        atexit.register(note_unused)
        build.thread = threading.Thread(target=run, name="cuda-coop-nvrtc-pch", daemon=False)
        if hasattr(os, "register_at_fork"):
            # A child forked while NVRTC compiles would inherit NVRTC's lock held by a thread
            # it does not have, and its first compile would wait forever.
            os.register_at_fork(before=build.thread.join)
        build.thread.start()
        _log.info("building NVRTC's precompiled header for %s in the background (%s)", arch, reason)
        return True


pch = PrecompiledHeader()  # the process's (core/build.py compiles with it)
