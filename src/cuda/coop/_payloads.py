"""Per-thread payloads (ThreadData) and explicit scratch descriptors (TempStorage)."""

from __future__ import annotations

# numpy (and ._dtypes, which imports it) is imported by the functions that need it, not
# here: `import cuda.coop` does not need numpy (docs/compile_latency.rst, "Import time").
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (PEP 781)
if TYPE_CHECKING:
    import numpy as np

    RESERVE_DTYPES: tuple[np.dtype, ...]
from ._errors import (
    CoopCompilerContextRequiredError,
    ConflictingArgumentsError,
    InvalidArgumentTypeError,
    InvalidArgumentValueError,
    UnsupportedDtypeError,
)
from ._kernel_api import KernelConstructMeta, as_python_int

__all__ = ["ThreadData", "TempStorage", "SHARING_MODES", "MAX_PAYLOAD_BYTES", "DTYPE_FROM",
           "check_items_per_thread", "check_payload_bytes", "check_alignment", "RESERVE_DTYPES",
           "check_reserve_count", "check_reserve_dtype"]

SHARING_MODES = ("shared", "exclusive")

# A thread has at most 255 32-bit registers (1020 bytes).  A larger payload spills
# to local memory, which still works, but CUB unrolls every per-item loop, so code
# size and compile time grow with the item count (measured: 2048 int32 items
# compile in ~10 s, 32768 in ~60 s, 1 << 20 would take many minutes).  The limit
# is four register files: room for legitimate spilling payloads (512 float64),
# refused up front well before compiles take tens of seconds.
MAX_PAYLOAD_BYTES = 4096

# The hidden keyword both backends' rewrites add to a ``coop.ThreadData()`` without dtype=:
# the array, value or NumPy type its dtype is inferred from (backends/_inference.py).  Here,
# beside ThreadData, because the backends' activation hooks (light) and their typing and
# rewrites (loaded on first use) all name it.
DTYPE_FROM = "_dtype_from"


def check_items_per_thread(value, *, call: str = "coop.ThreadData()") -> int:
    if as_python_int(value) is None:
        raise InvalidArgumentTypeError(
            f"{call}: items_per_thread={value!r} is not an int; pass a positive int known at compile time"
        )
    value = as_python_int(value)
    if value < 1:
        raise InvalidArgumentValueError(
            f"{call}: items_per_thread={value} is below 1; pass at least 1"
        )
    return value


def check_payload_bytes(items: int, dtype, *, call: str = "coop.ThreadData()") -> int:
    """``items`` slots of ``dtype`` must fit a thread's register file (:data:`MAX_PAYLOAD_BYTES`)."""
    size = items * dtype.itemsize
    if size > MAX_PAYLOAD_BYTES:
        fit = MAX_PAYLOAD_BYTES // dtype.itemsize
        raise InvalidArgumentValueError(
            f"{call}: items_per_thread={items} of {dtype.name} is {size} bytes per thread, above the "
            f"{MAX_PAYLOAD_BYTES}-byte limit (four times a thread's 255 4-byte registers; CUB unrolls "
            f"every item, so larger payloads spill and take minutes to compile); use at most {fit} items per thread "
            "and loop over tiles"
        )
    return items


def check_alignment(value, *, call: str, label: str = "alignment"):
    if value is None:
        return None
    if as_python_int(value) is None:
        raise InvalidArgumentTypeError(f"{call}: {label}={value!r} is not an int; pass None or a power of two, e.g. 16")
    value = as_python_int(value)
    if value < 1 or value & (value - 1) or value > 256:
        raise InvalidArgumentValueError(
            f"{call}: {label}={value} is not a power of two from 1 to 256; pass e.g. {label}=16"
        )
    return value


def merge_alignas(alignment, alignas):
    """``alignas=`` is another spelling of ``alignment=`` (NVIDIA's qualified API used it)."""
    if alignas is None:
        return alignment
    if alignment is not None and alignment != alignas:
        raise ConflictingArgumentsError(
            f"coop.ThreadData(): alignment={alignment} and alignas={alignas} disagree (alignas= is "
            "another spelling of alignment=); pass only one of them"
        )
    return alignas


class ThreadData(metaclass=KernelConstructMeta):
    """A fixed-size array of ``items_per_thread`` values owned by each thread.

    Parameters
    ----------
    items_per_thread : int
        Compile-time item count: a literal, a module constant, a closure value or a
        kernel argument (the kernel is specialized per value).
    dtype : optional
        Element type. When omitted it is taken from the first ``coop.load`` source
        or ``coop.store`` destination that uses the payload.
    alignment : int, optional
        Minimum alignment in bytes of the payload storage (a power of two);
        ``alignas=`` is accepted as another spelling.

    A payload holds at most :data:`MAX_PAYLOAD_BYTES` (4096) bytes per thread, four
    times a thread's 255 registers; larger ones are refused when the kernel is compiled.

    Slots start uninitialized.  Inside a kernel the payload indexes like an array
    (``items[i]``) and ``items.items_per_thread`` is a compile-time constant.
    """

    def __init__(self, items_per_thread, dtype=None, *, alignment=None, alignas=None):
        self.items_per_thread = check_items_per_thread(items_per_thread)
        if dtype is None:
            self.dtype = None
        else:
            from ._dtypes import normalize_dtype

            self.dtype = normalize_dtype(dtype, label="dtype")
        if self.dtype is not None:
            check_payload_bytes(self.items_per_thread, self.dtype)
        self.alignment = check_alignment(merge_alignas(alignment, alignas), call="coop.ThreadData()")

    def __getitem__(self, index):
        raise CoopCompilerContextRequiredError(
            f"{self!r}[{index!r}] was read on the host, but a payload's items exist only in a "
            "kernel; index it inside a @cuda.jit kernel (from numba_cuda_mlir)"
        )

    def __setitem__(self, index, value):
        raise CoopCompilerContextRequiredError(
            f"{self!r}[{index!r}] was written on the host, but a payload's items exist only in a "
            "kernel; write it inside a @cuda.jit kernel (from numba_cuda_mlir)"
        )

    def __repr__(self):
        dt = "" if self.dtype is None else f", dtype={self.dtype.name}"
        return f"coop.ThreadData({self.items_per_thread}{dt})"


class TempStorage(metaclass=KernelConstructMeta):
    """Explicit shared-memory scratch for cooperative operations.

    Construct it inside the kernel and pass it as ``temp_storage=`` to operations.

    Parameters
    ----------
    size_in_bytes : int, optional
        At least the largest need of the calls using it; inferred when omitted.
    alignment : int, optional
        Minimum alignment (power of two); the providers' own alignment always applies.
    auto_sync : bool, optional
        ``True`` (the default) makes every call that used the storage end with a
        barrier (``__syncthreads`` for blocks, ``__syncwarp`` for warps), so the
        next call may reuse it.  ``False`` leaves the barrier to you: call
        ``cuda.syncthreads()`` before the storage is reused.  A storage with
        reservations (:meth:`reserve`) refuses ``True`` and treats an omitted
        ``auto_sync`` as ``False``.
    sharing : {"shared", "exclusive"}
        ``"shared"``: all calls overlap one region (size = the largest need).
        ``"exclusive"``: each call site gets its own slice (size = the sum).
        Reservations (:meth:`reserve`) never overlap anything, in either mode.
    """

    def __init__(self, size_in_bytes=None, alignment=None, *, auto_sync=None, sharing="shared"):
        call = "coop.TempStorage()"
        if size_in_bytes is not None:
            if as_python_int(size_in_bytes) is None:
                raise InvalidArgumentTypeError(
                    f"{call}: size_in_bytes={size_in_bytes!r} is not an int; pass a non-negative int "
                    f"(e.g. size_in_bytes={_int_hint(size_in_bytes)}) or omit it to infer the size"
                )
            size_in_bytes = as_python_int(size_in_bytes)
            if size_in_bytes < 0:
                raise InvalidArgumentValueError(
                    f"{call}: size_in_bytes={size_in_bytes} is negative; pass a size >= 0 or omit it "
                    "to infer the size")
        self.size_in_bytes = size_in_bytes
        self.alignment = check_alignment(alignment, call=call)
        if auto_sync is not None and not isinstance(auto_sync, bool):
            raise InvalidArgumentTypeError(
                f"{call}: auto_sync={auto_sync!r} is not a bool; pass auto_sync=True or auto_sync=False")
        self.auto_sync = auto_sync
        self.sharing = normalize_sharing(sharing)

    def reserve(self, count, dtype, alignment=None):
        """Carve a shared array of ``count`` elements of ``dtype`` out of this storage.

        Inside a kernel, returns an ordinary 1-D shared-memory array (indexing,
        ``len``, ``shape``, passing to device functions and device libraries
        such as cuFFTDx or NVSHMEM all work) placed in this storage's region,
        whose inferred size grows to hold it.

        Parameters
        ----------
        count : int
            Number of elements, a positive compile-time constant.
        dtype
            Element type: int8..int64, uint8..uint64, float16, float32, float64,
            complex64 or complex128 (``int``/``float`` mean 32-bit).
        alignment : int, optional
            Minimum alignment in bytes, a power of two up to 256; at least the
            element size is always used (``alignment=1`` for float64 gives 8).

        Whatever the sharing mode, each reservation has bytes of its own: it
        overlaps neither another reservation nor the scratch of the calls using
        this storage, which is placed after the reservations, so its contents
        survive those calls.  A call site executed again (in a loop) returns the
        same array; a reservation made in an inlined helper, through an alias of
        the storage, is laid out with the others.  The storage adds no barriers
        once it has a reservation: ``auto_sync=True`` is a
        :class:`~cuda.coop.TempStorageError`.  Called on the host, the arguments
        are checked and :class:`~cuda.coop.CoopCompilerContextRequiredError` is
        raised, since there is no shared memory to return.
        """
        call = "TempStorage.reserve()"
        check_reserve_count(count, call=call)
        check_reserve_dtype(dtype, call=call)
        check_alignment(alignment, call=call)
        raise CoopCompilerContextRequiredError(
            f"{call} was called on the host, but it returns shared memory; call it inside a "
            "@cuda.jit kernel (from numba_cuda_mlir) on a coop.TempStorage constructed there"
        )

    def __repr__(self):
        return (f"coop.TempStorage({self.size_in_bytes}, alignment={self.alignment}, "
                f"auto_sync={self.auto_sync}, sharing={self.sharing!r})")


def _int_hint(value) -> str:
    try:
        return str(int(value))
    except (TypeError, ValueError, OverflowError):
        return "4096"


def normalize_sharing(sharing) -> str:
    if not isinstance(sharing, str) or sharing.strip().lower() not in SHARING_MODES:
        from ._errors import InvalidAlgorithmError

        raise InvalidAlgorithmError(
            f"coop.TempStorage(): sharing={sharing!r} is not a sharing mode; choose "
            + " or ".join(repr(m) for m in SHARING_MODES)
        )
    return sharing.strip().lower()


# Element types of TempStorage.reserve(): what a shared array of a device library
# holds (NVIDIA's contract: integers, floating-point and complex numbers): the payload
# types plus complex.  bool is left out on purpose: its storage width is the compiler's
# choice.  RESERVE_DTYPES is built on first use (module __getattr__), with numpy.
def _reserve_dtypes() -> tuple:
    global _RESERVE_DTYPES
    if _RESERVE_DTYPES is None:
        import numpy as np

        from ._dtypes import SUPPORTED_DTYPES

        _RESERVE_DTYPES = SUPPORTED_DTYPES + (np.dtype("complex64"), np.dtype("complex128"))
    return _RESERVE_DTYPES


_RESERVE_DTYPES = None


def __getattr__(name):
    if name == "RESERVE_DTYPES":
        return _reserve_dtypes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_reserve_count(value, *, call: str = "TempStorage.reserve()") -> int:
    if as_python_int(value) is None:
        raise InvalidArgumentTypeError(
            f"{call}: count={value!r} is not an int; pass a positive compile-time integer element "
            "count (a literal, a module constant or a closure value)"
        )
    value = as_python_int(value)
    if value < 1:
        raise InvalidArgumentValueError(f"{call}: count={value} must be positive; reserve at least 1 element")
    return value


def check_reserve_dtype(value, *, call: str = "TempStorage.reserve()") -> np.dtype:
    import numpy as np

    RESERVE_DTYPES = _reserve_dtypes()
    if value is int or value is float:  # 32-bit, as for coop.ThreadData
        return np.dtype("int32" if value is int else "float32")
    try:
        dt = np.dtype(str(value) if not isinstance(value, (type, np.dtype, str)) else value)
    except TypeError:
        dt = None
    if value is bool or dt is None or dt not in RESERVE_DTYPES:
        raise UnsupportedDtypeError(
            f"{call}: dtype={getattr(value, '__name__', value)!r} is not a supported fixed-width element "
            "type; use one of " + ", ".join(d.name for d in RESERVE_DTYPES)
        )
    return dt
