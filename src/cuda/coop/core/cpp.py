"""Turn call plans into one C++ translation unit of ``extern "C"`` providers.

Each provider is one call specialization (plan + launch shape).  Its symbol is
``coop_<family>_<op>_<digest>`` where the digest covers the generated C++, so
identical calls in a kernel share one provider.  A provider that needs scratch
also gets ``<symbol>_layout``: a ``{sizeof, alignof}`` global of its TempStorage,
which :mod:`cuda.coop.core.build` reads back from the compiled code.
"""

from __future__ import annotations

import hashlib

from .records import record
from .._dtypes import COMPLEX_CXX_DEFINITIONS, cxx_type
from .spec import CallPlan, CppProvider, LaunchFacts

__all__ = ["Provider", "make_provider", "ends_with_block_barrier", "render_translation_unit", "PROVIDER_ABI_VERSION",
           "COMPAT_HEADER_NAME", "COMPAT_HEADER_SOURCE", "DISCARD_ITERATOR_HEADER_NAME", "DISCARD_ITERATOR_STAND_IN",
           "SPAN_HEADER_NAME", "SPAN_STAND_IN", "MDSPAN_HEADER_NAME", "MDSPAN_STAND_IN",
           "CHECKED_PRELUDE", "check_label", "check_range", "check_item", "check_at_most"]

# Bump when the shape of generated code changes in a way the digest cannot see.
PROVIDER_ABI_VERSION = 3  # 2: per-warp providers take warp_chunk; 3: block barriers in the kernel

# Fixes for CCCL headers under NVRTC, included before any CCCL header.  NVRTC
# receives it as an in-memory header (``core/build.py``), so it costs no file and,
# being an ``#include``, keeps the automatic precompiled header covering the
# whole header prefix (code before the includes would end the PCH there).
COMPAT_HEADER_NAME = "cuda_coop/nvrtc_compat.h"
COMPAT_HEADER_SOURCE = """\
#pragma once
#include <cuda/std/type_traits>
// CCCL 2.8: cub/thread/thread_store.cuh names std::is_pointer (3.0 spells it
// ::cuda::std::is_pointer_v), and NVRTC has no host standard library.  CUB reaches it
// for logical warps that are not a power of two (WarpReduceSmem / WarpScanSmem), e.g.
// the raking warp of a BlockReduce or BlockScan whose block is not a multiple of 32.
// NVRTC resolves the name where the template is defined, so this must precede CUB.
#if defined(CCCL_MAJOR_VERSION) && CCCL_MAJOR_VERSION < 3
namespace std { using ::cuda::std::is_pointer; }
#endif
""" + COMPLEX_CXX_DEFINITIONS

# A stand-in for thrust/iterator/discard_iterator.h, given to NVRTC as an in-memory header
# of that name (core/build.py, ``header_stand_ins``).  CUB's block and warp headers include
# the real one for a single trait (cub/util_type.cuh, ``non_void_value_impl``, which names
# ``thrust::discard_iterator<>::value_type``), and it brings thrust's iterator framework:
# 192 ms of the 1.33 s front end in an NVRTC time trace of every family's headers.  Those
# headers compiled without a PCH in 0.843 s instead of 0.886 s (CUDA 13.0; 0.785 s instead
# of 0.837 s on 12.9; 2-core machine, medians of five).  The stand-in declares what that
# trait names, the same types in the same namespace, and includes what CUB's headers took
# from the real header's includes (``cuda::is_floating_point``).  Only for the CCCL
# versions whose headers were read (build.py): the PTX is the same less unused global
# constants (tests/core/test_nvrtc_options.py).
DISCARD_ITERATOR_HEADER_NAME = "thrust/iterator/discard_iterator.h"
DISCARD_ITERATOR_STAND_IN = """\
#pragma once
// cuda-coop: a stand-in for CCCL's header of this name (cuda/coop/core/cpp.py).
#include <thrust/detail/config.h>
#include <cuda/std/cstddef>
#include <cuda/type_traits>
THRUST_NAMESPACE_BEGIN
namespace detail
{
struct any_assign;
} // namespace detail
template <typename System = void>
class discard_iterator
{
public:
  using value_type = detail::any_assign;
};
THRUST_NAMESPACE_END
"""

# Stand-ins for libcu++'s <cuda/std/span> and <cuda/std/mdspan> (CCCL 3.0 only: 2.8 has no
# forward-declaration headers to build them from).  CUB's cub/detail/type_traits.cuh
# includes both for three trait specializations (``is_fixed_size_random_access_range`` and
# ``static_size`` of a span or a rank-1 mdspan), which need the class templates declared,
# not defined; cuda-coop never passes a span or an mdspan to CUB.  Without the two headers
# the precompiled header of every family builds in 0.899 s of CPU instead of 0.964 s, is
# 107.7 MiB instead of 118.2 MiB, and a compile that loads it takes 0.123 s instead of
# 0.138 s (benchmarks/pch_build.py, 2-core machine, CUDA 13.0, medians of seven).  The
# forward declarations are libcu++'s own (cuda/std/__fwd/), so a header
# that declares them too agrees; mdspan's has no defaults, which a later definition may add.
SPAN_HEADER_NAME = "cuda/std/span"
SPAN_STAND_IN = """\
#pragma once
// cuda-coop: a stand-in for CCCL's header of this name (cuda/coop/core/cpp.py).
#include <cuda/std/__fwd/span.h>
"""
MDSPAN_HEADER_NAME = "cuda/std/mdspan"
MDSPAN_STAND_IN = """\
#pragma once
// cuda-coop: a stand-in for CCCL's header of this name (cuda/coop/core/cpp.py).
#include <cuda/std/__fwd/mdspan.h>
_LIBCUDACXX_BEGIN_NAMESPACE_STD
template <class _ElementType, class _Extents, class _LayoutPolicy, class _AccessorPolicy>
class mdspan;
_LIBCUDACXX_END_NAMESPACE_STD
"""

_GENERATED_HEADER = """\
// Generated by cuda-coop. One translation unit per kernel; one extern "C" provider per call.
"""

# Checked mode (the default; CUDA_COOP_CHECKED=0 turns it off; CallPlan.checked).  One
# copy per translation unit, after the headers (code before an #include would end NVRTC's
# precompiled header there), and only when a provider is checked: a kernel without a
# run-time argument to test compiles exactly the C++ it always did.  The failure paths
# are out of line so that a check costs one comparison and a branch on the fast path.
CHECK_NAMESPACE = "cuda_coop_checked::"

CHECKED_PRELUDE = """\
// cuda-coop run-time argument checks (on unless CUDA_COOP_CHECKED=0): a provider tests
// each run-time argument before narrowing it to CUB's parameter.  On an invalid one, the
// first failing thread of the launch prints one line (the call, its kernel line, the
// argument, its value and what is allowed) and executes PTX `trap;`, NVIDIA's contract:
// the launch fails with an illegal instruction (or launch failure) and the CUDA context
// is unusable afterwards.  A device assertion would report cudaErrorAssert instead.
namespace cuda_coop_checked {
static __device__ unsigned int reporting = 0u;

static __device__ __noinline__ bool claim_report() { return atomicCAS(&reporting, 0u, 1u) == 0u; }

// The other failing threads wait, boundedly, for the reporter's trap to end the launch:
// a trap of theirs could end it before the report is out.
// [[noreturn]]: the code after a failed check's call is unreachable, so the compiler
// needs no reconvergence point around the call and may assume the checked range
// afterwards (a clamp that follows a check folds away).
[[noreturn]] static __device__ __noinline__ void fail(bool reporter) {
  if (reporter) {
    __threadfence_system();
  } else {
    for (int i = 0; i < (1 << 20); ++i) {
#if __CUDA_ARCH__ >= 700
      __nanosleep(1000);
#endif
    }
  }
  __trap();
  __builtin_unreachable();
}

[[noreturn]] static __device__ __noinline__ void range_failed(const char* call, const char* arg, long long value,
                                                 long long lo, long long hi) {
  const bool reporter = claim_report();
  if (reporter) printf("cuda.coop: %s: %s=%lld is outside [%lld, %lld]\\n", call, arg, value, lo, hi);
  fail(reporter);
}

[[noreturn]] static __device__ __noinline__ void item_failed(const char* call, const char* arg, long long index,
                                                long long value, const char* rule) {
  const bool reporter = claim_report();
  if (reporter) printf("cuda.coop: %s: %s[%lld]=%lld %s\\n", call, arg, index, value, rule);
  fail(reporter);
}

[[noreturn]] static __device__ __noinline__ void above_failed(const char* call, const char* what, unsigned long long value,
                                                 unsigned long long limit, const char* rule) {
  const bool reporter = claim_report();
  if (reporter) printf("cuda.coop: %s: %s=%llu is above %llu %s\\n", call, what, value, limit, rule);
  fail(reporter);
}
}  // namespace cuda_coop_checked
"""


def check_label(plan: CallPlan) -> str:
    """How a checked provider names its call in a report:
    ``coop.load(coop.this_block(), ...) at kernel.py:12 in kernel``.

    The site makes providers of identical calls on different lines distinct, which
    only checked mode pays for (one more provider per such line)."""
    label = f"{plan.call[:-1]}{plan.group.label}, ...)"
    site = plan.checked_site
    if not site:
        return label
    filename, line, function = site
    return f"{label} at {filename}:{line}" + (f" in {function}" if function else "")


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def check_range(plan: CallPlan, arg: str, value: str, lo: str, hi: str) -> str:
    """C++ (checked mode): fail unless ``lo <= value <= hi`` (64-bit signed expressions,
    compared before any narrowing).

    With ``lo`` 0 the test is one unsigned comparison (a negative value is above any
    ``hi``), which every ``hi`` given with it (a tile, a length) allows: none is negative."""
    if lo == "0":
        test = f"(unsigned long long)({value}) > (unsigned long long)({hi})"
    else:
        test = f"(long long)({value}) < (long long)({lo}) || (long long)({value}) > (long long)({hi})"
    return (f"if ({test}) "
            f"cuda_coop_checked::range_failed({_c_string(check_label(plan))}, {_c_string(arg)}, "
            f"(long long)({value}), (long long)({lo}), (long long)({hi}));")


def check_item(plan: CallPlan, failed: str, arg: str, index: str, value: str, rule: str) -> str:
    """C++ (checked mode): fail when ``failed``, reporting ``arg[index]=value rule``."""
    return (f"if ({failed}) cuda_coop_checked::item_failed({_c_string(check_label(plan))}, {_c_string(arg)}, "
            f"(long long)({index}), (long long)({value}), {_c_string(rule)});")


def check_at_most(plan: CallPlan, what: str, value: str, limit: str, rule: str) -> str:
    """C++ (checked mode): fail unless ``value <= limit`` (64-bit unsigned expressions)."""
    return (f"if ((unsigned long long)({value}) > (unsigned long long)({limit})) "
            f"cuda_coop_checked::above_failed({_c_string(check_label(plan))}, {_c_string(what)}, "
            f"(unsigned long long)({value}), (unsigned long long)({limit}), {_c_string(rule)});")


@record
class Provider:
    symbol: str
    plan: CallPlan
    launch: LaunchFacts
    cpp: CppProvider
    source: str  # the provider's C++ (namespace + function + layout global)

    @property
    def has_storage(self) -> bool:
        return self.plan.storage is not None

    @property
    def layout_symbol(self) -> str:
        return f"{self.symbol}_layout"

    @property
    def block_barrier_after(self) -> bool:
        """Whether the call ends with a block-wide barrier, which the kernel emits after the
        provider call (see :func:`ends_with_block_barrier`)."""
        return ends_with_block_barrier(self.plan)

    def storage_instances(self) -> int:
        need = self.plan.storage
        if need is None:
            return 0
        if need.per == "block":
            return 1
        return max(1, self.launch.block_threads // need.width)


def _linear_tid(launch: LaunchFacts) -> str:
    x, y, z = launch.block
    if y == 1 and z == 1:
        return "threadIdx.x"
    return f"threadIdx.x + {x}u * (threadIdx.y + {y}u * threadIdx.z)"


def ends_with_block_barrier(plan: CallPlan) -> bool:
    """Whether the call's trailing barrier (``auto_sync``) is block-wide.

    A group of warps shares block-wide scratch; a cluster call's scratch is its block's.
    That barrier is not in the provider: the backend emits it in the kernel right after
    the provider call (``gpu.barrier`` / ``llvm.nvvm.barrier0``, as ``cuda.syncthreads()``),
    so the kernel's own IR shows every barrier that orders the scratch (NVIDIA's tests
    count them there) and the compiler sees it without looking into the linked code.
    Warp barriers, whose masks depend on the lane, stay in the provider.
    """
    return plan.storage is not None and plan.sync and plan.group.kind in ("block", "warps", "cluster")


def _sync(plan: CallPlan, whole_warp: bool = False) -> str:
    if plan.storage is None or not plan.sync or ends_with_block_barrier(plan):
        return ""
    w = plan.group.width
    if plan.group.is_partial_warp:
        # Lanes 0..w-1 only.  The other lanes are not members: they skip the barrier (when
        # they call at all), and a whole-warp barrier would wait for lanes that never come;
        # the scratch of a partial logical warp is its own slice (core.storage), so no other
        # width's call needs this barrier.
        return f"if ((linear_tid % 32u) < {w}u) __syncwarp({(1 << w) - 1:#x}u);"
    if w == 32 or whole_warp:
        # whole_warp: logical warps of other widths reuse these bytes (see core.storage)
        return "__syncwarp();"
    # The exact mask of this logical warp: sibling logical warps may diverge.
    return (f"__syncwarp(((1u << {w}) - 1u) << ((linear_tid % 32u) / {w}u * {w}u));")


def make_provider(plan: CallPlan, launch: LaunchFacts, *, auto_sync: bool = True,
                  callbacks: dict | None = None, whole_warp_barrier: bool = False) -> Provider:
    """The provider of one call; ``callbacks`` maps each callback role to its C symbol.

    A per-warp call gets its hardware warp's scratch chunk size as ``warp_chunk``
    (``core.storage`` decides it after every provider's layout is known), and with
    ``whole_warp_barrier`` ends with ``__syncwarp()`` over all 32 lanes.
    """
    if plan.check_launch is not None:
        plan.check_launch(plan, launch)
    cpp = plan.generate(plan, launch)
    if plan.checked and plan.unchecked is not None and CHECK_NAMESPACE not in cpp.body + cpp.decls:
        # Nothing of this call is tested at run time: the unchecked provider, which names
        # no line and is shared by identical calls (callers use the returned plan's ABI).
        plan = plan.unchecked
        cpp = plan.generate(plan, launch)
    if not auto_sync and plan.sync:
        from dataclasses import replace

        plan = replace(plan, sync=False)
    x, y, z = launch.block
    params = [op.cxx_param() for op in plan.operands]
    if plan.storage is not None:
        params.append("void* temp_base")
        if plan.storage.per != "block":
            params.append("unsigned long long warp_chunk")
    if plan.storage is None:
        temp = ""
    elif plan.storage.per == "block":
        temp = "void* temp = temp_base;"
    else:
        w = plan.storage.width
        temp = (f"void* temp = static_cast<char*>(temp_base) + (linear_tid / 32u) * warp_chunk + "
                f"(linear_tid % 32u / {w}u) * "
                "((sizeof(TempStorage) + alignof(TempStorage) - 1) / alignof(TempStorage) * alignof(TempStorage));")
    callbacks = "\n".join(_callback_decls(plan, callbacks or {}))
    by_reference = "".join(f"\n  const {cxx_type(op.dtype)} {op.name} = *{op.name}_ref;"
                           for op in plan.operands if op.by_reference)
    sync = _sync(plan, whole_warp_barrier)
    sync = f"\n  {sync}" if sync else ""
    template = f"""\
namespace SYMBOL_ns {{
constexpr int BLOCK_X = {x}, BLOCK_Y = {y}, BLOCK_Z = {z};
constexpr int BLOCK_THREADS = {x * y * z};
{callbacks}
{cpp.decls}
}}  // namespace SYMBOL_ns
extern "C" __device__ void SYMBOL({", ".join(params)}) {{
  using namespace SYMBOL_ns;
  const unsigned linear_tid = {_linear_tid(launch)};
  (void)linear_tid;{by_reference}
  {temp}
  {{
{_indent(cpp.body, 4)}
  }}{sync}
}}
"""
    if plan.storage is not None:
        template += ("extern \"C\" __device__ const unsigned long long SYMBOL_layout[2] = "
                     "{sizeof(SYMBOL_ns::TempStorage), alignof(SYMBOL_ns::TempStorage)};\n")
    digest = hashlib.sha256(
        f"{PROVIDER_ABI_VERSION}\n{sorted(set(cpp.headers))}\n{template}".encode()
    ).hexdigest()[:16]
    symbol = f"coop_{plan.family}_{plan.op}_{digest}"
    return Provider(symbol=symbol, plan=plan, launch=launch, cpp=cpp,
                    source=template.replace("SYMBOL", symbol))


def _callback_decls(plan: CallPlan, symbols: dict):
    """Declare each user callback and a forwarding function named by its role.

    The symbol is derived from the function's identity by the backend, so it is
    part of the provider's C++ and of its digest.  The LTO link inlines both the
    forwarding function and the user's code.
    """
    from .spec import PointerTo

    def ctype(t):
        return f"{cxx_type(t.dtype)}*" if isinstance(t, PointerTo) else cxx_type(t)

    for cb in plan.callbacks:
        symbol = symbols.get(cb.role)
        if symbol is None:  # pragma: no cover - a backend that does not compile callbacks
            raise AssertionError(f"no compiled symbol for callback {cb.role!r} of {plan.call}")
        params = [f"{ctype(t)} a{i}" for i, t in enumerate(cb.argtypes)]
        if cb.by_reference:  # Callback.by_reference: every operand and the result by pointer
            rt = cxx_type(cb.restype)
            ptrs = ", ".join([f"{rt}*"] + [f"const {ctype(t)}*" for t in cb.argtypes])
            yield f'extern "C" __device__ void {symbol}({ptrs});'
            addrs = ", ".join(["&r"] + [f"&a{i}" for i in range(len(cb.argtypes))])
            yield (f"__device__ __forceinline__ {rt} {cb.role}({', '.join(params)}) "
                   f"{{ {rt} r; {symbol}({addrs}); return r; }}")
            continue
        args = ", ".join(f"a{i}" for i in range(len(cb.argtypes)))
        rt = cxx_type(cb.restype)
        yield f'extern "C" __device__ {rt} {symbol}({", ".join(ctype(t) for t in cb.argtypes)});'
        yield (f"__device__ __forceinline__ {rt} {cb.role}({', '.join(params)}) "
               f"{{ return {symbol}({args}); }}")


def _indent(text: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + line if line else line for line in text.splitlines())


def render_translation_unit(providers, headers=None) -> str:
    """One TU: the headers (by default the union of the providers'), then each provider once."""
    if headers is None:
        headers = sorted({h for p in providers for h in p.cpp.headers})
    else:
        missing = {h for p in providers for h in p.cpp.headers} - set(headers)
        headers = list(headers) + sorted(missing)
    seen = set()
    parts = [_GENERATED_HEADER, f"#include <{COMPAT_HEADER_NAME}>"]
    parts += [f"#include <{h}>" for h in headers]
    parts.append("")
    if any(p.plan.checked for p in providers):
        parts.append(CHECKED_PRELUDE)
    for p in sorted(providers, key=lambda p: p.symbol):
        if p.symbol in seen:
            continue
        seen.add(p.symbol)
        parts.append(p.source)
    return "\n".join(parts)
