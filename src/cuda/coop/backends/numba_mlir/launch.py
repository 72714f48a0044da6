"""Launch-time help for cooperative kernels: clear errors where the driver's would not be.

Launching with no CUDA driver (or no device) fails deep in numba-cuda-mlir's driver
layer.  For a kernel that uses cuda.coop that failure becomes one
:class:`~cuda.coop.NoDeviceError` that says what is missing and names
``compile_cubin``, which builds the same cubin without a GPU.  A launch needing more
shared memory than the device lets a block opt in to (scratch in dynamic shared memory
on a GPU the compiler had no limit for, or a launch's own ``sharedmem`` on top) becomes a
:class:`~cuda.coop.SharedMemoryLimitError` naming the bytes, the limit and the fix.
Kernels that do not use cuda.coop keep numba-cuda-mlir's own errors.

A raw DLPack capsule (``torch.utils.dlpack.to_dlpack(t)``) passed to a cooperative
kernel is refused with a named error: a capsule may be consumed once and carries no
``__dlpack__`` method, so Numba cannot type it; the object that made it (or
``torch.from_dlpack(capsule)`` / ``cupy.from_dlpack(capsule)``) can be passed instead.

PyTorch tensors and DLPack-only objects are keyed by their DLPack view when a cached
specialization is reused, and PyTorch bfloat16 tensors are typed like every other bfloat16
array (see ``_compat_launch.install_array_key_fix`` and ``install_torch_bfloat16_typeof``).
"""

from __future__ import annotations

import sys

from ..._errors import NoDeviceError, SharedMemoryLimitError
from .._launch_checks import check_launch_block, refuse_capsules, uses_coop

__all__ = ["install", "no_device_error", "shared_memory_limit_error", "uses_coop", "check_arguments"]


def no_device_error(dispatcher, exc) -> NoDeviceError:
    name = getattr(getattr(dispatcher, "py_func", None), "__name__", "kernel")
    reason = " ".join(str(exc).replace("Error at driver init:", "").replace(":", " ").split()).rstrip(".") or type(exc).__name__
    return NoDeviceError(
        f"cannot launch cooperative kernel {name!r}: no usable CUDA driver or GPU ({reason}). "
        "Compiling needs no GPU: cuda.coop.numba_mlir.compile_cubin(kernel, argtypes, cc=(9, 0), "
        "block=128) returns the cubin; `python -m cuda.coop` shows what cuda-coop found"
    )


def check_arguments(dispatcher, args) -> None:
    from . import _compat_launch as C

    for arg in args:
        if type(arg).__module__.startswith("torch") and not C._torch_typeof_fixed:
            C.install_torch_bfloat16_typeof()
    refuse_capsules(dispatcher, args)


def shared_memory_limit_error(dispatcher, requested: int, static: int, limit: int,
                              required: int | None) -> SharedMemoryLimitError:
    from ...core.storage import launch_limit_error  # only for a refused launch

    name = getattr(getattr(dispatcher, "py_func", None), "__name__", "kernel")
    return launch_limit_error(name, requested, static, limit, required)


def first_launch(dispatcher) -> None:
    """The process's first launch, of any kernel: when it will initialize the compiler, NVRTC's
    precompiled header can be built meanwhile (backends/_first_compile.py)."""
    from . import _compat as C

    if dispatcher is None or C.compiler_initialized():
        return
    from .._first_compile import before_first_compile

    before_first_compile(C.launch_chip(dispatcher), cooperative=uses_coop(dispatcher), reason="first launch")


def install() -> None:
    from . import _compat_launch as C

    C.install_launch_hook(uses_coop, no_device_error, check_arguments, shared_memory_limit_error, first_launch)
    C.install_configure_hook(check_launch_block, uses_coop)  # kernel[grid, block]: the block checked, repeats cheap
    C.install_array_key_fix()  # PyTorch tensors and DLPack objects in cooperative launches
    C.install_context_hook()  # the first CUDA context may start NVRTC's PCH
    C.install_definition_hook()  # so may the first cooperative kernel's definition, earlier
    if "torch" in sys.modules:
        C.install_torch_bfloat16_typeof()
