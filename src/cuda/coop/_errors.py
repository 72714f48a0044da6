"""Exceptions and warnings raised by cuda-coop.

Every misuse has its own class, derived from :class:`CoopError` and from the
builtin exception it resembles, so ``except ValueError`` keeps working.  The
messages follow one form: the call, ``argument=value``, what is wrong, what is
allowed, and how to fix it.

None of these classes derives from Numba's ``NumbaError``: the compiler collects
those into a generic "No implementation of function" report, while any other
exception raised by a typing template reaches the user unchanged.
"""

from __future__ import annotations

__all__ = [
    "CoopError",
    "CoopCompilerContextRequiredError",
    "BackendNotRegisteredError",
    "BackendUnavailableError",
    "UnsupportedBackendVersionError",
    "UnknownBackendError",
    "CudaCoopAutoRegistrationWarning",
    "InvalidGroupError",
    "InvalidGroupWidthError",
    "NonConstantArgumentError",
    "UnknownBlockDimensionError",
    "UnsupportedBlockShapeError",
    "ClusterLaunchRequiredError",
    "UnsupportedClusterShapeError",
    "UnsupportedComputeCapabilityError",
    "UnsupportedDtypeError",
    "DtypeMismatchError",
    "UnknownDtypeError",
    "InvalidAlgorithmError",
    "UnsupportedAlgorithmForGroupError",
    "InvalidArgumentTypeError",
    "InvalidArgumentValueError",
    "MissingArgumentError",
    "ConflictingArgumentsError",
    "ExtentMismatchError",
    "TempStorageError",
    "InvalidOperatorError",
    "NotADeviceFunctionError",
    "HeaderResolutionError",
    "ToolkitMismatchError",
    "ProviderCompileError",
    "SharedMemoryLimitError",
    "DynamicSharedArrayError",
    "NoDeviceError",
    "BackendFeatureUnsupportedError",
]


class CoopError(Exception):
    """Base class of every cuda-coop error."""


class CoopCompilerContextRequiredError(CoopError, RuntimeError):
    """A cooperative operation was called outside a compiled kernel."""


class BackendNotRegisteredError(CoopError, RuntimeError):
    """A kernel uses cuda.coop but no compiler backend has been registered."""


class BackendUnavailableError(CoopError, ImportError):
    """The compiler package a backend needs is not installed."""


class UnsupportedBackendVersionError(CoopError, ImportError):
    """The installed compiler package has a version this release does not support."""


class UnknownBackendError(CoopError, ValueError):
    """``coop.register()`` was given a name that is not a known backend."""


class CudaCoopAutoRegistrationWarning(UserWarning):
    """Automatic backend registration at ``import cuda.coop`` did not happen."""


class InvalidGroupError(CoopError, TypeError):
    """The group operand is not a cooperative group descriptor."""


class InvalidGroupWidthError(CoopError, ValueError):
    """A logical warp width is not one of 1, 2, 4, 8, 16, 32."""


class NonConstantArgumentError(CoopError, TypeError):
    """An argument that shapes the specialization is not a compile-time constant."""


class UnknownBlockDimensionError(CoopError, RuntimeError):
    """The thread block shape is not known when the kernel is compiled."""


class UnsupportedBlockShapeError(CoopError, ValueError):
    """The launch block shape does not meet an operation's requirement."""


class ClusterLaunchRequiredError(CoopError, RuntimeError):
    """A cluster operation is compiled for a launch without a thread-block cluster shape."""


class UnsupportedClusterShapeError(CoopError, ValueError):
    """The launch's cluster shape does not fit the grid or the portable cluster size."""


class UnsupportedComputeCapabilityError(CoopError, ValueError):
    """An operation needs a newer GPU than the compile target (e.g. clusters need 9.0)."""


class UnsupportedDtypeError(CoopError, TypeError):
    """A payload or array element type is not supported."""


class DtypeMismatchError(CoopError, TypeError):
    """Two operands that must share an element type do not."""


class UnknownDtypeError(CoopError, TypeError):
    """A ThreadData element type could not be inferred."""


class InvalidAlgorithmError(CoopError, ValueError):
    """An algorithm or mode selector is not one of the known strings."""


class UnsupportedAlgorithmForGroupError(CoopError, ValueError):
    """A known algorithm that the given group kind does not support."""


class InvalidArgumentTypeError(CoopError, TypeError):
    """An argument has a type the operation does not accept."""


class InvalidArgumentValueError(CoopError, ValueError):
    """An argument has a value outside the allowed range."""


class MissingArgumentError(CoopError, TypeError):
    """A required argument is missing."""


class ConflictingArgumentsError(CoopError, ValueError):
    """Two arguments cannot be combined (e.g. ``oob_default`` without ``valid_items``)."""


class ExtentMismatchError(CoopError, ValueError):
    """Payloads that must have the same ``items_per_thread`` do not (e.g. items and ranks)."""


class TempStorageError(CoopError, ValueError):
    """An explicit TempStorage is too small, misaligned or misused."""


class InvalidOperatorError(CoopError, ValueError):
    """An operator (``binary_op``, ``scan_op``, ...) is not one the operation accepts."""


class NotADeviceFunctionError(CoopError, TypeError):
    """A callable passed as an operator is not a ``@cuda.jit(device=True)`` function."""


class HeaderResolutionError(CoopError, RuntimeError):
    """The CCCL or CUDA headers could not be located."""


class ToolkitMismatchError(CoopError, RuntimeError):
    """NVRTC, the CUDA headers and the CCCL headers come from different toolkits."""


class ProviderCompileError(CoopError, RuntimeError):
    """NVRTC rejected generated C++: a cuda-coop bug or an unsupported CCCL."""


class SharedMemoryLimitError(CoopError, ValueError):
    """The kernel's shared memory exceeds what a thread block can have.

    Raised at compile time when the cooperative scratch (plus the kernel's own static
    shared arrays) exceeds the target GPU's opt-in limit, and at launch when the GPU's
    driver reports a smaller limit than the compiler knew.
    """


class DynamicSharedArrayError(CoopError, ValueError):
    """A kernel with cooperative scratch also declares a dynamic ``cuda.shared.array``.

    numba-cuda-mlir 0.6 places dynamic (size 0 or run-time sized) shared arrays over the
    kernel's static shared memory (numba-cuda-mlir PR #312), so they would overwrite the
    scratch, or be overwritten by it.
    """


class NoDeviceError(CoopError, RuntimeError):
    """A cooperative kernel was launched where no CUDA driver or GPU is usable.

    Compiling needs neither: ``cuda.coop.numba_mlir.compile_cubin`` builds the cubin.
    """


class BackendFeatureUnsupportedError(CoopError, NotImplementedError):
    """A kernel uses a cuda.coop feature that its compiler's backend does not implement yet.

    The classic numba-cuda backend (``coop.register("numba-cuda")``) covers a subset of
    what the numba-cuda-mlir backend does; docs/choosing_a_compiler.rst lists it.  The
    message names the feature and the fix (usually: compile this kernel with
    numba-cuda-mlir).
    """
