"""Compile a cuda.coop kernel to cubin for a chosen GPU, on a machine without one.

``compile_cubin(kernel, argtypes, cc=(9, 0), block=128)`` runs the whole
pipeline a launch would run (typing, provider generation, NVRTC, nvJitLink LTO)
and returns the cubin with the post-LTO PTX, so tests and users can inspect the
code with no driver.  Integer "argument types" are literal values: the kernel is
specialized on them, as a launch specializes on an ``items_per_thread`` argument.
"""

from __future__ import annotations

from .._binary import (  # noqa: F401  (KernelBinary, find_nvdisasm: public here)
    KernelBinary,
    compute_capability,
    decorator_options,
    dims3 as _dims3,
    find_nvdisasm,
)
from .._first_compile import before_compile_cubin
from . import _compat as C

__all__ = ["compile_cubin", "KernelBinary", "find_nvdisasm"]


def _argtype(value):
    from ._compat import typeof, types

    if isinstance(value, types.Type):
        return value
    if isinstance(value, bool):
        return types.literal(value)
    if isinstance(value, int):
        return types.literal(value)
    return typeof(value)


_CODEGEN_OPTIONS = ("launch_bounds", "max_registers", "fastmath", "fast_math", "lineinfo", "opt_level",
                    "ptxas_options", "shared_memory_carveout")


def compile_cubin(kernel, argtypes, *, cc=(9, 0), block=128, grid=None, cluster=None, **options) -> KernelBinary:
    """Compile ``kernel`` for compute capability ``cc`` and launch block shape ``block``.

    Parameters
    ----------
    kernel : a ``@cuda.jit`` kernel (numba-cuda-mlir) or its Python function
    argtypes : sequence
        Numba types, example values (NumPy arrays), or ints (literal values the
        kernel is specialized on).
    cc : (major, minor)
        An architecture the toolkit's NVRTC compiles for, e.g. ``(9, 0)`` for sm_90;
        anything else raises InvalidArgumentTypeError (not a pair of ints) or
        UnsupportedComputeCapabilityError (an architecture NVRTC does not target, such
        as sm_70 under CUDA 13), before the compile starts.
    block, grid : int or tuple of up to 3 ints
        The launch shape the kernel is specialized for.  ``block=None`` compiles
        without launch facts, as ``kernel.compile(sig)`` would; cooperative calls
        then raise UnknownBlockDimensionError.  ``grid`` defaults to one cluster
        (one block without ``cluster``).
    cluster : int or tuple of up to 3 ints, optional
        The thread-block cluster shape of the launch (``kernel[grid, block, stream,
        sharedmem, cluster]``), which ``coop.this_cluster()`` operations need.
    options
        numba-cuda-mlir compile options; the decorator's code-generation options
        (``launch_bounds``, ``max_registers``, ``fastmath``, ``lineinfo``, ...) apply
        unless given here.
    """
    pyfunc = getattr(kernel, "py_func", kernel)
    # The decorator's code-generation options (``@cuda.jit(launch_bounds=..., max_registers=...)``)
    # shape the cubin as they do at launch; keywords given here override them.
    options = decorator_options(kernel, _CODEGEN_OPTIONS, options)
    cc = compute_capability(cc)
    if block is not None:
        block = _dims3(block, "block")
    cluster = None if cluster is None else _dims3(cluster, "cluster")
    grid = _dims3(grid, "grid") if grid is not None else (cluster or (1, 1, 1))
    types_ = [_argtype(a) for a in argtypes]
    if not C.compiler_initialized():
        before_compile_cubin(pyfunc, cc)  # the process's first compile: NVRTC's PCH meanwhile
    cres = C.compile_kernel(pyfunc, types_, cc=cc, block=block, grid=grid, cluster=cluster, **options)
    return KernelBinary(cubin=cres.metadata["cubin"], cc=tuple(cc), block=block,
                        name=getattr(pyfunc, "__name__", "kernel"), _compile_result=cres, _reader=C)
