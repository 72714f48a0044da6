"""32-bit shared-memory addresses in the final link of a kernel that calls cuda.coop.

nvcc compiles CUDA C++ with 32-bit shared-memory addresses.  NVRTC, and the libNVVM
both compilers generate a kernel's code with, use 64-bit ones: every shared-memory
access of the CUB code then takes a register pair for its address.  In a CUB block
radix sort of 128 threads x 16 keys that is 91-93 registers where nvcc's build of the
same C++ takes 75-80 (sm_90), so five blocks fit on an SM instead of six.  Neither NVRTC nor nvJitLink takes
an option for it: both refuse ``-nvptx-short-ptr`` (libNVVM: "unsupported option").

What decides the width is the data layout of the module libNVVM generates code for
(``p3:32:32:32``: pointers into address space 3, shared memory, are 32 bits; libNVVM
lists such layouts among those it accepts).  nvJitLink's link-time optimization links
every LTO-IR input into one module, which takes the data layout of the first input.
numba-cuda-mlir and numba-cuda both put the kernel's own LTO-IR first, with their
64-bit layout.  So a cuda.coop link puts an empty module in front of it, compiled by
libNVVM to LTO-IR with the layout below: the linked kernel, its Python part included,
then addresses shared memory with 32 bits, as nvcc's code does.  The module defines
nothing, so it changes no symbol; its layout is numba-cuda-mlir's own
(``NVPTX64_DATALAYOUT``) with ``p3`` narrowed.  Shared memory is at most 228 KiB per
block, so no shared address needs more than 32 bits.

Which kernels get it (``CUDA_COOP_SHARED_ADDRESS_BITS``, read at each link): measured on
an H100 (CUDA 13.0, 2026-12-07), the same kernels with 32-bit and with 64-bit addresses
against the same C++ built by nvcc, the radix sorts ran 2-3 % faster (keys 0.976-0.989 ->
0.999-1.005 of nvcc's; pairs within 1.5 % either way) and TopK 2 % faster; the block
histograms ran up to 5 % slower (constant input, atomic algorithm: 0.993 -> 0.945; the
same instructions, scheduled differently by ptxas) and the shuffles, exchanges, scans,
reductions, copies and neighbour operations the same.  So a family declares
``SHARED_ADDRESS_BITS = 32`` in its module when its kernels are faster so (radix sort,
TopK), and ``auto``, the default, gives 32-bit addresses to a kernel that calls such a
family and leaves every other kernel with the compilers' 64-bit ones; ``32`` gives them to
every kernel that calls cuda.coop, ``64`` to none.

The module costs about 2 ms to build, once per architecture in a process
(cuda-bindings' libNVVM, the one ``core.cuda_libraries`` pins beside NVRTC and
nvJitLink, so nvJitLink reads what it writes).  If libNVVM cannot build it, the kernel
links as the compiler would have linked it, and :func:`status` says why.
"""

from __future__ import annotations

import threading

__all__ = ["DATA_LAYOUT", "wants_32_bits", "layout_module", "is_layout_module", "status",
           "LAYOUT_MODULE_NAME"]

# numba-cuda-mlir's layout (NVPTX64_DATALAYOUT) with 32-bit pointers into shared memory
# (address space 3); libNVVM accepts this exact string.
DATA_LAYOUT = ("e-p:64:64:64-p3:32:32:32-p6:32:32:32-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64"
               "-i128:128:128-f32:32:32-f64:64:64-f128:128:128-v16:16:16-v32:32:32-v64:64:64"
               "-v128:128:128-n16:32:64-a:8:8")
LAYOUT_MODULE_NAME = "cuda_coop_shared_address_layout"

_lock = threading.Lock()
_built: dict[str, bytes | None] = {}  # virtual architecture -> LTO-IR (None: libNVVM refused)
_failures: dict[str, str] = {}


def wants_32_bits(preferred: bool) -> bool:
    """Whether a kernel links with 32-bit shared addresses; ``preferred``: one of its cuda.coop
    calls is of a family that declares ``SHARED_ADDRESS_BITS = 32``
    (``CUDA_COOP_SHARED_ADDRESS_BITS``: auto, 32 or 64)."""
    from .. import _env

    setting = _env.shared_address_bits()
    return preferred if setting == "auto" else setting == "32"


def _virtual_arch(arch: str) -> str:
    """``compute_90a`` for a link's ``sm_90a`` (or ``compute_90a``)."""
    return "compute_" + arch.split("_", 1)[1] if "_" in arch else arch


def _module_text(ir_version) -> bytes:
    major, minor, debug_major, debug_minor = ir_version
    return (f'target datalayout = "{DATA_LAYOUT}"\n'
            'target triple = "nvptx64-nvidia-cuda"\n'
            "!nvvmir.version = !{!0}\n"
            f"!0 = !{{i32 {major}, i32 {minor}, i32 {debug_major}, i32 {debug_minor}}}\n").encode()


def _build(virtual_arch: str) -> bytes:
    from cuda.bindings import nvvm

    text = _module_text(nvvm.ir_version())
    program = nvvm.create_program()
    try:
        nvvm.add_module_to_program(program, text, len(text), LAYOUT_MODULE_NAME)
        options = [f"-arch={virtual_arch}", "-gen-lto"]
        try:
            nvvm.compile_program(program, len(options), options)
        except nvvm.nvvmError as exc:
            log = bytearray(nvvm.get_program_log_size(program))
            nvvm.get_program_log(program, log)
            raise RuntimeError(f"{exc}: {bytes(log).rstrip(bytes(1)).decode(errors='replace').strip()}") from None
        result = bytearray(nvvm.get_compiled_result_size(program))
        nvvm.get_compiled_result(program, result)
        return bytes(result)
    finally:
        nvvm.destroy_program(program)


def layout_module(arch: str) -> bytes | None:
    """The empty LTO-IR module that gives a link 32-bit shared addresses, for ``arch``
    (``sm_90``, ``sm_90a``, ``compute_100``); None when libNVVM could not build it
    (:func:`status` says why)."""
    virtual_arch = _virtual_arch(arch)
    with _lock:
        if virtual_arch not in _built:
            try:
                _built[virtual_arch] = _build(virtual_arch)
            except Exception as exc:  # linking as the compiler would is always correct
                _built[virtual_arch] = None
                _failures[virtual_arch] = f"{type(exc).__name__}: {exc}"
        return _built[virtual_arch]


def is_layout_module(code) -> bool:
    """Whether ``code`` (bytes) is one of the layout modules this process built."""
    return any(module is not None and (code is module or code == module) for module in list(_built.values()))


def status(preferred: bool, arch: str = "sm_90") -> str:
    """How a kernel for ``arch`` addresses shared memory, in words (``preferred`` as for
    :func:`wants_32_bits`)."""
    from .. import _env

    setting = f"CUDA_COOP_SHARED_ADDRESS_BITS={_env.shared_address_bits()}"
    if not wants_32_bits(preferred):
        return f"64-bit ({setting})"
    if layout_module(arch) is None:
        return f"64-bit (libNVVM could not build the layout module: {_failures.get(_virtual_arch(arch))})"
    return f"32-bit, as nvcc ({setting})"
