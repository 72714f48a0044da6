"""Compile a cuda.coop kernel written for classic numba-cuda to cubin, without a GPU.

``compile_cubin(kernel, argtypes, cc=(9, 0), block=128)`` types and lowers the kernel
for that block shape (there is no launch to read it from), takes numba-cuda's LTO-IR
of the kernel and of the providers its calls link (``cuda.compile_all``), and links
them with nvJitLink (LTO, so every provider is inlined).  It returns the same
:class:`~cuda.coop.numba_mlir.KernelBinary` as the numba-cuda-mlir backend's.
"""

from __future__ import annotations

import re

from .._binary import KernelBinary, compute_capability, decorator_options, dims3 as _dims3
from .._first_compile import before_compile_cubin
from . import _compat as C

__all__ = ["compile_cubin", "KernelBinary"]


class _Reader:
    """The compile result here is the post-LTO PTX itself."""

    @staticmethod
    def post_lto_ptx(ptx):
        return ptx

    @staticmethod
    def required_dynamic_shared_bytes(ptx):
        # What the lowering recorded for the kernel's function (its PTX entry).
        entry = re.search(r"\.entry\s+(\w+)", ptx)
        return C.DYNAMIC_SCRATCH_BYTES.get(entry.group(1), 0) if entry else 0


# The decorator options numba-cuda's compile_all also takes.
_CODEGEN_OPTIONS = ("launch_bounds", "fastmath", "lineinfo", "opt")


def _argtype(value):
    if isinstance(value, C.types.Type):
        return value
    if isinstance(value, (bool, int)):
        return C.types.literal(value)
    return C.typeof(value)


def compile_cubin(kernel, argtypes, *, cc=(9, 0), block=128, grid=None, cluster=None, **options) -> KernelBinary:
    """Compile ``kernel`` (a numba-cuda ``@cuda.jit`` kernel or its function) for ``cc`` and ``block``.

    ``argtypes``: numba-cuda types, example values, or ints (literal values the kernel
    is specialized on, as a launch specializes on an ``items_per_thread`` argument).
    ``block=None`` compiles without launch facts: cooperative calls then raise
    UnknownBlockDimensionError.  ``cluster``: the thread-block cluster shape of the
    launch (``kernel[grid, block, stream, sharedmem, cluster]``), which
    ``coop.this_cluster()`` operations need; ``grid`` defaults to one cluster (one block
    without ``cluster``).  ``options`` go to ``numba.cuda.compile_all``.
    """
    pyfunc = getattr(kernel, "py_func", kernel)
    # The decorator's code-generation options (``@cuda.jit(launch_bounds=..., fastmath=...)``)
    # shape the cubin as they do at launch; keywords given here override them.
    options = decorator_options(kernel, _CODEGEN_OPTIONS, options)
    cc = compute_capability(cc)
    block = None if block is None else _dims3(block, "block")
    cluster = None if cluster is None else _dims3(cluster, "cluster")
    grid = _dims3(grid, "grid") if grid is not None else (cluster or (1, 1, 1))
    types_ = [_argtype(a) for a in argtypes]
    before_compile_cubin(pyfunc, cc)  # the process's first compile: NVRTC's PCH meanwhile
    cubin, ptx = C.compile_kernel_cubin(pyfunc, types_, cc=tuple(cc), block=block, grid=grid, cluster=cluster,
                                        **options)
    return KernelBinary(cubin=cubin, cc=tuple(cc), block=block, name=getattr(pyfunc, "__name__", "kernel"),
                        _compile_result=ptx, _reader=_Reader)
