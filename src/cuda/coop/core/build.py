"""Compile a kernel's providers: one NVRTC translation unit to LTO-IR, plus layouts.

Scratch sizes are read from the compiled code, not from a GPU run and not from a
second NVRTC compile: each storage-bearing provider defines a ``{sizeof, alignof}``
global, and nvJitLink turns the LTO-IR alone into PTX (tens of milliseconds) where
those globals appear as initialized constants.
"""

from __future__ import annotations

import hashlib
import logging
import re
import tempfile
import time
from pathlib import Path

from .records import record
from .. import _env
from .._dtypes import BFLOAT16_CXX_NAME as BF16_CXX_NAME  # the name of __nv_bfloat162 contains it
from .._errors import ProviderCompileError
from .._version import __version__
from .cache import SCHEMA, CacheEntry, provider_cache
from .cpp import (COMPAT_HEADER_NAME, COMPAT_HEADER_SOURCE, DISCARD_ITERATOR_HEADER_NAME, DISCARD_ITERATOR_STAND_IN,
                  MDSPAN_HEADER_NAME, MDSPAN_STAND_IN, SPAN_HEADER_NAME, SPAN_STAND_IN,
                  PROVIDER_ABI_VERSION, render_translation_unit)
from .pch import arch_for_cc, pch
from .toolchain import toolchain

__all__ = ["BuildResult", "build_providers", "start_precompiled_header", "NVRTC_OPTIONS", "arch_for_cc"]

ISSUES_URL = "https://github.com/cuda-coop/cuda-coop/issues"

_log = logging.getLogger(__name__)  # "cuda.coop.core.build", under the package's "cuda.coop" logger

# The package logger is silent unless the application configures logging
# (docs/configuration.rst, "Logging").  Its NullHandler is added here, by the only module
# that logs, rather than in cuda/coop/__init__.py, so that `import cuda.coop` does not
# import logging (docs/compile_latency.rst, "Import time").
if not any(isinstance(h, logging.NullHandler) for h in logging.getLogger("cuda.coop").handlers):
    logging.getLogger("cuda.coop").addHandler(logging.NullHandler())

# float16 stays compiled in (CCCL includes cuda_fp16.h itself): with float16 and
# bfloat16 both compiled out, CCCL 2.8/3.0 enable their SIMD ThreadReduce path for every
# type (an #if chain without an #else in thread_reduce.cuh), which reaches an
# assert(false) stub.  bfloat16 is compiled out only of a translation unit that never
# names it (BF16_OFF, below).
#
# _CCCL_META_UNROLL_LIMIT=10: libcu++'s type-list header unrolls its metafunctions
# with preprocessor repetition up to this count, 10 under NVCC and 16 under every
# other compiler, NVRTC included.  NVRTC's preprocessor takes about 0.5 s for the
# 16-way expansion and 0.05 s for the 10-way one (issue #15,
# docs/compile_latency.rst): a third to a half of a cold compile.  The limit only changes
# how the type computations are unrolled, never their results, so the generated code
# is the same (tests/core/test_nvrtc_options.py compares the LTO-IR).
#
# NVFP8 support off: cub/util_type.cuh and libcu++'s numeric_limits otherwise include
# cuda_fp8.h (and with it cuda_fp6.h and cuda_fp4.h) and instantiate their traits in
# every translation unit, about 60 ms of NVRTC's front end on a cold load/store kernel
# (CUDA 13.0), and no cuda.coop dtype is an 8-bit float.  The public macro is CCCL 3's,
# the underscored one CCCL 2.8's.  The PTX loses only those types' numeric_limits and
# trait constants (tests/core/test_nvrtc_options.py compares it line by line).
NVRTC_OPTIONS = (
    "-std=c++17",
    "-rdc=true",
    "-dlto",
    "-D_CCCL_META_UNROLL_LIMIT=10",
    "-DCCCL_DISABLE_NVFP8_SUPPORT",
    "-D_CCCL_DISABLE_NVFP8_SUPPORT",
)


@record
class BuildResult:
    key: str
    ltoir: bytes
    layouts: dict  # provider symbol -> (size, align) of one TempStorage instance
    source: str
    cache: str  # "memory" | "disk" | "compiled"
    nvrtc_seconds: float


# <cuda/ptx> includes a wrapper header for every PTX instruction, and CUB's warp and
# thread headers include <cuda/ptx>; the Blackwell (tcgen05), multimem, tensor-map,
# bulk-async, cluster and ld/st wrappers alone are about a fifth of NVRTC's front end on a
# cold load/store kernel (0.67 s -> 0.54 s, CUDA 13.0, 2-core machine).  No CUB block, warp
# or thread primitive calls them (CUB calls get_sreg, shfl_sync, prmt, bfind, bmsk,
# shl/shr; libcu++'s barrier and memcpy_async headers call mbarrier, fence and
# cp_async_bulk, which stay).  Defining a wrapper's include guard skips it.  Only for the
# CCCL versions whose headers were read and whose every family compiles in the test suite
# (the pins' 2.8 and 3.0): another CCCL compiles every wrapper, as before.  The generated
# code is the same (tests/core/test_nvrtc_options.py compares the PTX).
UNUSED_PTX_WRAPPERS = (
    "TCGEN05_ALLOC", "TCGEN05_COMMIT", "TCGEN05_CP", "TCGEN05_FENCE", "TCGEN05_LD", "TCGEN05_MMA",
    "TCGEN05_MMA_WS", "TCGEN05_SHIFT", "TCGEN05_ST", "TCGEN05_WAIT", "MULTIMEM_LD_REDUCE", "MULTIMEM_RED",
    "MULTIMEM_ST", "TENSORMAP_CP_FENCEPROXY", "TENSORMAP_REPLACE", "ST_ASYNC", "ST_BULK", "RED_ASYNC",
    "CLUSTERLAUNCHCONTROL", "CP_REDUCE_ASYNC_BULK", "CP_REDUCE_ASYNC_BULK_TENSOR", "LD", "ST", "EXIT", "TRAP",
    "GETCTARANK", "BARRIER_CLUSTER",
)
PTX_WRAPPERS_SKIPPED_FOR = ((2, 8), (3, 0))  # CCCL (major, minor)
# (the ``(header name, stand-in source)`` pairs that go together, the CCCL (major, minor)
# versions whose headers were read for them); core/cpp.py says why each one is right.
# span and mdspan go together: CCCL's mdspan header needs its span.
HEADER_STAND_INS = (
    (((DISCARD_ITERATOR_HEADER_NAME, DISCARD_ITERATOR_STAND_IN),), ((2, 8), (3, 0))),
    (((SPAN_HEADER_NAME, SPAN_STAND_IN), (MDSPAN_HEADER_NAME, MDSPAN_STAND_IN)), ((3, 0),)),
)


def skipped_ptx_wrappers(cccl_version) -> tuple:
    """The ``-D`` options that skip UNUSED_PTX_WRAPPERS under this CCCL, or () for another one."""
    if tuple(cccl_version[:2]) not in PTX_WRAPPERS_SKIPPED_FOR:
        return ()
    return tuple(f"-D_CUDA_PTX_{name}_H_" for name in UNUSED_PTX_WRAPPERS)


def header_stand_in_groups(cccl_version) -> tuple:
    """The groups of ``HEADER_STAND_INS`` whose versions name this CCCL's major and minor."""
    version = tuple(cccl_version[:2])
    return tuple(pairs for pairs, versions in HEADER_STAND_INS if version in versions)


def header_stand_ins(cccl_version) -> tuple:
    """The in-memory headers that NVRTC takes in place of CCCL's (``(name, source)`` pairs,
    core/cpp.py says why): every group that applies to this CCCL."""
    return tuple(pair for pairs in header_stand_in_groups(cccl_version) for pair in pairs)


# bfloat16 off where the translation unit never names it: cuda_bf16.h and CUB's and
# libcu++'s bfloat16 traits and operator overloads are about 5 % of NVRTC's front end on a
# cold load/store kernel (0.405 s -> 0.383 s, CUDA 13.0, 2-core machine; the cold first
# compile over a plain kernel went from 0.562 s to 0.525 s there), and a kernel
# without a bfloat16 payload, array or field never instantiates them.  float16 stays
# (see above); NVFP8 is off already.  The same macro in CCCL 2.8 and 3.0.  The code of
# such a unit is the same (tests/core/test_nvrtc_options.py compares the PTX).  The
# precompiled-header compiles keep bfloat16: one prelude serves every kernel of the
# process, bfloat16 or not.
BF16_OFF = ("-DCCCL_DISABLE_BF16_SUPPORT",)


def unused_type_options(source) -> tuple:
    """The ``-D`` options that compile out the extended float types ``source`` never names
    (None: a source not known yet, which keeps them all)."""
    return () if source is None or BF16_CXX_NAME in source else BF16_OFF


def _options(arch: str, include_dirs, cccl_version=(), source=None) -> list:
    return [*NVRTC_OPTIONS, *skipped_ptx_wrappers(cccl_version), *unused_type_options(source),
            f"-arch={arch}", *[f"-I{d}" for d in include_dirs]]


def build_providers(providers, arch: str, *, prelude_headers=None) -> BuildResult:
    """Compile ``providers`` into one LTO-IR for ``arch`` (or take it from the cache).

    ``prelude_headers``: every family's headers, in a fixed order (``ops/_prelude.py``),
    for NVRTC's precompiled header: one PCH then serves every kernel of the process.
    None: the providers' own headers, and no PCH.
    """
    tc = toolchain()
    source = render_translation_unit(providers)
    options = _options(arch, tc.include_dirs, tc.cccl_version, source)
    # Include paths are covered by the toolchain identity (CCCL version and version
    # header digest); leaving them out keeps keys stable across install locations.
    key = hashlib.sha256("\n".join([
        f"schema={SCHEMA}", f"abi={PROVIDER_ABI_VERSION}", f"cuda-coop={__version__}",
        f"arch={arch}", tc.identity(), *(o for o in options if not o.startswith(("-arch=", "-I"))),
        COMPAT_HEADER_SOURCE, *(text for _, text in header_stand_ins(tc.cccl_version)), source,
        # Checked mode shows in the source too; naming it keeps the two apart by design.
        # Unchecked units add nothing here.
        *(["checked=1"] if any(p.plan.checked for p in providers) else []),
    ]).encode()).hexdigest()
    _maybe_dump(key, source)
    cache = provider_cache()
    entry, origin = cache.get(key)
    if entry is not None:
        _log.debug("provider cache hit (%s): %d providers for %s, key %s", origin, len(providers), arch, key[:16])
        return BuildResult(key, entry.payload, entry.layouts, source, origin, entry.nvrtc_seconds)
    _log.debug("provider cache miss: %d providers for %s, key %s", len(providers), arch, key[:16])
    t0 = time.perf_counter()
    ltoir, used_pch = _compile_with_pch(providers, source, options, arch, key, prelude_headers)
    nvrtc_seconds = time.perf_counter() - t0
    _log.info("NVRTC compiled %d providers for %s in %.3f s (%s), key %s", len(providers), arch,
              nvrtc_seconds, "with PCH" if used_pch else "without PCH", key[:16])
    storage_symbols = [p.layout_symbol for p in providers if p.has_storage]
    if storage_symbols:
        t0 = time.perf_counter()
        layouts = _read_layouts(ltoir, arch, storage_symbols)
        _log.debug("nvJitLink read %d layouts in %.3f s", len(storage_symbols), time.perf_counter() - t0)
    else:
        layouts = {}
    layouts = {sym[: -len("_layout")]: v for sym, v in layouts.items()}
    entry = CacheEntry(key=key, payload=ltoir, layouts=layouts, nvrtc_seconds=nvrtc_seconds,
                       meta={"arch": arch, "toolchain": tc.describe()})
    cache.put(entry)
    return BuildResult(key, ltoir, layouts, source, "compiled", nvrtc_seconds)


def _pch_options(arch: str) -> list:
    """The NVRTC options of every PCH compile for ``arch``: bfloat16 kept, so that one
    prelude serves every kernel of the process, bfloat16 or not."""
    tc = toolchain()
    return _options(arch, tc.include_dirs, tc.cccl_version)


def start_precompiled_header(arch: str, prelude_headers, *, cooperative: bool, reason: str) -> bool:
    """At a process's first kernel compile: build NVRTC's precompiled header for ``arch``
    in the background if the process is certain to compile providers (core/pch.py).
    The backends call it before the compiler initializes; True when a build started."""
    options = _pch_options(arch)
    source = render_translation_unit([], headers=prelude_headers) + PCH_PRELUDE_ANCHOR

    def compile_prelude(pch_options):
        _nvrtc_compile(source, [*options, *pch_options], "pch-prelude")

    return pch.start_early(toolchain().identity(), arch, tuple(options), compile_prelude,
                           cooperative=cooperative, reason=reason)


# NVRTC creates the PCH where the first declaration follows the headers; a translation
# unit of headers alone has none.
PCH_PRELUDE_ANCHOR = "\n__device__ int cuda_coop_pch_anchor;\n"


def _compile_with_pch(providers, source: str, options, arch: str, key: str, prelude_headers) -> tuple:
    """(LTO-IR, whether NVRTC's precompiled headers were used)."""
    try:
        pch_options = [o for o in options if o not in BF16_OFF]  # one PCH for every kernel
        if prelude_headers is not None and pch.wanted(tuple(pch_options)):
            pch_source = render_translation_unit(providers, headers=prelude_headers)
            try:
                return _nvrtc_compile(pch_source, [*pch_options, *pch.nvrtc_options()], key), True
            except ProviderCompileError:
                # A prelude header that this CCCL cannot compile under NVRTC: fall back
                # to the kernel's own headers for the rest of the process.
                pch.failed = True
                _log.info("NVRTC precompiled headers failed; compiling without them for this process")
        return _nvrtc_compile(source, options, key), False
    finally:
        pch.compiled(toolchain().identity(), arch)


def _maybe_dump(key: str, source: str) -> None:
    directory = _env.source_dump_dir()
    if directory is None:
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"cuda_coop_{key[:16]}.cu").write_text(source)
    except OSError:
        pass


def _nvrtc_compile(source: str, options, key: str, stand_ins=None) -> bytes:
    """``stand_ins``: the ``(name, source)`` headers that replace CCCL's; None: the
    toolchain's (``header_stand_ins``), as every compile of a process must have the same
    in-memory headers as its precompiled header."""
    # NVRTC through cuda.bindings, not cuda.core's Program: Program takes no in-memory
    # headers (the compat header would have to be written to disk for every process)
    # and no PCH heap size (_PchState sets it), both of which this compile needs.
    from cuda.bindings import nvrtc

    if stand_ins is None:
        stand_ins = header_stand_ins(toolchain().cccl_version)
    headers = ((COMPAT_HEADER_NAME, COMPAT_HEADER_SOURCE), *stand_ins)
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), f"cuda_coop_{key[:16]}.cu".encode(), len(headers),
                                         [text.encode() for _, text in headers],
                                         [name.encode() for name, _ in headers])
    _check(err, "nvrtcCreateProgram")
    try:
        (result,) = nvrtc.nvrtcCompileProgram(prog, len(options), [o.encode() for o in options])
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            err, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            saved = Path(tempfile.gettempdir()) / f"cuda_coop_failed_{key[:16]}.cu"
            try:
                # Self-contained: the in-memory compat header inlined where it is included.
                saved.write_text(source.replace(f"#include <{COMPAT_HEADER_NAME}>", COMPAT_HEADER_SOURCE, 1))
            except OSError:
                saved = Path("<not saved>")
            raise ProviderCompileError(
                "NVRTC rejected the C++ that cuda-coop generated; this is a cuda-coop bug (or an "
                f"unsupported CCCL: {toolchain().describe()}). The source is saved at {saved}; please "
                f"report it at {ISSUES_URL} with this log:\n"
                + log.decode(errors="replace").rstrip("\x00 \n")
            )
        err, size = nvrtc.nvrtcGetLTOIRSize(prog)
        _check(err, "nvrtcGetLTOIRSize")
        buf = b" " * size
        (err,) = nvrtc.nvrtcGetLTOIR(prog, buf)
        _check(err, "nvrtcGetLTOIR")
        return bytes(buf)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _check(err, what):
    from cuda.bindings import nvrtc

    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise ProviderCompileError(f"{what} failed: {err}")


# nvJitLink prints a ``u64[2]`` initializer either as two u64 values or as 16
# little-endian bytes, depending on the values.
_LAYOUT_RE = re.compile(
    r"\.global\s+\.align\s+\d+\s+\.(u64|b8)\s+(\w+_layout)\[(\d+)\]\s*=\s*\{([^}]*)\}"
)


def _parse_layouts(ptx: str) -> dict:
    found = {}
    for m in _LAYOUT_RE.finditer(ptx):
        kind, name, values = m.group(1), m.group(2), [int(v) for v in m.group(4).split(",")]
        if kind == "b8":
            values += [0] * (16 - len(values))
            data = bytes(values[:16])
            values = [int.from_bytes(data[:8], "little"), int.from_bytes(data[8:16], "little")]
        found[name] = (values[0], values[1])
    return found


def _read_layouts(ltoir: bytes, arch: str, symbols) -> dict:
    """Link the LTO-IR alone to PTX and read the ``_layout`` constants."""
    from cuda.core import Linker, LinkerOptions, ObjectCode

    # cuda.core's Linker takes nvJitLink when it is loadable (always, with cuda-coop's
    # pinned toolkit) and asks no driver, so this works on machines without a GPU.
    options = LinkerOptions(arch=arch, link_time_optimization=True, ptx=True)
    try:
        ptx = Linker(ObjectCode.from_ltoir(ltoir, name="cuda_coop"), options=options).link("ptx").code
    except Exception as exc:
        raise ProviderCompileError(
            f"nvJitLink could not read back provider layouts; this is a cuda-coop bug:\n{exc}"
        ) from None
    found = _parse_layouts(ptx.decode(errors="replace"))
    missing = [s for s in symbols if s not in found]
    if missing:
        raise ProviderCompileError(
            f"provider layouts {missing} are missing from the linked PTX; this is a cuda-coop bug"
        )
    return {s: found[s] for s in symbols}

