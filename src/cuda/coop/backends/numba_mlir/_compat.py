"""numba_cuda_mlir's private names for typing, lowering and compiling: with
``_compat_launch.py`` (the launch path), the only modules that import them.

Checked against numba-cuda-mlir 0.6.0.  Everything the backend needs from the
compiler's internals is re-exposed here under our own names, so an upgrade of
numba-cuda-mlir is reviewed in two files.  ``tests/backends/test_compat_boundary.py``
fails if another module imports a private ``numba_cuda_mlir`` name.
"""

from __future__ import annotations

import contextlib
import threading

from .._upstream import problems, typing_location, verify
# The supported versions and the private names relied on (UPSTREAM) are data in _upstream_names.py;
# the names are checked here, without patching anything, before the backend patches anything.
from ._upstream_names import (  # noqa: F401  (re-exported: the backend reads them here)
    COMPILER_NAME, SUPPORTED, SUPPORTED_TEXT, TESTED, UPSTREAM, check_version,
)

check_version()


def check_upstream_names(loaded_only: bool = False, modules=None) -> None:
    """UnsupportedBackendVersionError when an entry of UPSTREAM is gone or changed (once per
    process and entry).  ``loaded_only``: only entries whose module is imported already;
    ``modules``: only the entries of these modules, which the caller imported."""
    verify(UPSTREAM, compiler=COMPILER_NAME, version=check_version(), supported=SUPPORTED_TEXT, tested=TESTED,
           loaded_only=loaded_only, modules=modules)


def upstream_problems(entries=None) -> list:
    """The problems of ``entries`` (default: UPSTREAM) in the installed numba-cuda-mlir, as messages."""
    return problems(UPSTREAM if entries is None else entries, compiler=COMPILER_NAME, version=check_version(),
                    supported=SUPPORTED_TEXT, tested=TESTED)


# ----------------------------------------------------------------------------------------
# What registering the backend needs (typeof, rewrites, IR, types): all of it already
# loaded by ``import numba_cuda_mlir``, so registering imports nothing
# (docs/compile_latency.rst).
# ----------------------------------------------------------------------------------------
# Numba front-end types, templates, IR and errors (the vendored numba-cuda copy).
from numba_cuda_mlir.numba_cuda import types  # noqa: E402
from numba_cuda_mlir.numba_cuda.core import errors as _errors  # noqa: E402
from numba_cuda_mlir.numba_cuda.core import ir  # noqa: E402
from numba_cuda_mlir.numba_cuda.core.rewrites import Rewrite, register_rewrite  # noqa: E402
# The compiler's one compile lock: the backend's installation takes it first (_deferred.py).
from numba_cuda_mlir.numba_cuda.core.compiler_lock import global_compiler_lock  # noqa: E402
# The untyped IR of a device helper's Python function: the rewrite reads how a helper uses
# a ThreadData it is passed (a coop.load into it) to type the caller's payload.
from numba_cuda_mlir.numba_cuda.compiler import run_frontend  # noqa: E402
# Renames the uses of a variable in a rewrite (a coop.load result read as a payload).
from numba_cuda_mlir.numba_cuda.core.ir_utils import replace_vars_stmt  # noqa: E402
from numba_cuda_mlir.numba_cuda.typing.templates import (  # noqa: E402
    AbstractTemplate,
    AttributeTemplate,
    signature,
)
from numba_cuda_mlir.numba_cuda.np.numpy_support import as_dtype, from_dtype  # noqa: E402
# ``numba_cuda_mlir.extending.typeof_impl`` is this object, without that module's 0.1 s import.
from numba_cuda_mlir.numba_cuda.typing.typeof import typeof, typeof_impl  # noqa: E402
# MLIR building blocks used by lowerings.
from numba_cuda_mlir._mlir import ir as mlir_ir  # noqa: E402

ForceLiteralArg = _errors.ForceLiteralArg

# ----------------------------------------------------------------------------------------
# Imported by load_compiler(), 0.3 s after ``import numba_cuda_mlir`` on the 2-core machine:
# the backend's ready() calls it first; ``C.cuda`` or ``from ._compat import cuda`` elsewhere
# calls it through __getattr__; a function below that may run before ready() (compile_kernel,
# for a kernel without cuda.coop) calls it itself.
# ----------------------------------------------------------------------------------------
_DEFERRED = frozenset((
    "cuda", "LTOIR", "lowering_registry", "refresh_registries", "register_model", "_require_launch_config",
    "_set_required_dynamic_shared_memory", "typing_registry", "ArrayModel", "OpaqueModel", "mlir_func",
    "mlir_llvm", "mlir_memref", "get_or_insert_function", "llvm_ptr_add_bytes", "memref_data_pointer",
    "_RequireLaunchConfig",
))
_loaded = False


def load_compiler() -> None:
    """Import the names of ``_DEFERRED`` into this module (idempotent)."""
    global _loaded, cuda, LTOIR, lowering_registry, refresh_registries, register_model, _require_launch_config
    global _set_required_dynamic_shared_memory, typing_registry, ArrayModel, OpaqueModel, mlir_func, mlir_llvm
    global mlir_memref, get_or_insert_function, llvm_ptr_add_bytes, memref_data_pointer, _RequireLaunchConfig
    if _loaded:
        return
    from numba_cuda_mlir import cuda  # the public API, listed here so the backend has one import surface
    from numba_cuda_mlir.extending import (
        lowering_registry, refresh_registries, register_model, typing_registry,
        require_launch_config as _require_launch_config,
        set_required_dynamic_shared_memory as _set_required_dynamic_shared_memory,
    )
    # Data models for our types: arrays as memrefs, descriptors as opaque values.
    from numba_cuda_mlir.models import ArrayModel, OpaqueModel
    # MLIR building blocks used by lowerings.
    from numba_cuda_mlir._mlir.dialects import func as mlir_func, llvm as mlir_llvm, memref as mlir_memref
    from numba_cuda_mlir.lowering_utilities import get_or_insert_function, llvm_ptr_add_bytes, memref_data_pointer
    # The launch-configuration error type, to turn it into our UnknownBlockDimensionError.
    from numba_cuda_mlir._whole_function_planners import _RequireLaunchConfig

    LTOIR = cuda.LTOIR
    _loaded = True


def __getattr__(name):
    if name in _DEFERRED:
        load_compiler()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def refresh_registries_if_needed(typing=True):
    """Make already-initialized compiler contexts see our typing and lowering entries.

    Contexts initialized later read the extension registries themselves (refreshing one
    would only move its 0.5-2 s set-up here); the classic CUDA target is never needed.
    """
    from numba_cuda_mlir.descriptor import mlir_target

    load_compiler()
    if getattr(mlir_target, "_typingctx_initialized", True) or getattr(mlir_target, "_targetctx_initialized", True):
        refresh_registries(typing=typing, include_uninitialized_cuda=False)


def compiler_initialized() -> bool:
    """Whether numba-cuda-mlir's typing and target contexts exist: a process's first
    compile creates them (0.5-2 s), whatever the kernel."""
    from numba_cuda_mlir.descriptor import mlir_target

    return bool(getattr(mlir_target, "_typingctx_initialized", True)
                and getattr(mlir_target, "_targetctx_initialized", True))


def launch_chip(dispatcher) -> str | None:
    """The target a launch of ``dispatcher`` compiles for (``"sm_90"``), as numba-cuda-mlir
    resolves it (its ``chip=`` option, else the current device), or None without a device."""
    from numba_cuda_mlir.tools import resolve_gpu_target

    try:
        return resolve_gpu_target(dict(getattr(dispatcher, "targetoptions", {}) or {}))["chip"]
    except Exception:  # noqa: BLE001 - no driver or device: the launch reports it
        return None


@contextlib.contextmanager
def one_registry_refresh():
    """numba-cuda-mlir's extension decorators without their own registry refresh, on this thread.

    ``extending.overload`` and ``overload_method`` refresh the typing context after each
    registration (initializing it if it is not yet: 0.4 s here, otherwise the first
    compile's); the caller then calls refresh_registries_if_needed() once.
    """
    import numba_cuda_mlir.extending as extending

    load_compiler()
    original = extending.refresh_registries
    _quiet.depth = getattr(_quiet, "depth", 0) + 1

    def quiet_on_this_thread(*args, **kwargs):
        if getattr(_quiet, "depth", 0):
            return None
        return original(*args, **kwargs)

    quiet_on_this_thread.__wrapped__ = original
    # Upstream lacks a way to register several overloads and refresh once.
    extending.refresh_registries = quiet_on_this_thread
    try:
        yield
    finally:
        _quiet.depth -= 1
        if extending.refresh_registries is quiet_on_this_thread:
            extending.refresh_registries = original


_quiet = threading.local()


def require_launch_config(lower):
    """The launch configuration of the kernel being lowered, or None.

    Asking marks the kernel as launch-configuration specialized: numba-cuda-mlir
    then compiles it once per block shape (``descriptor.py`` keys overloads by
    launch config once a compile has required it).
    """
    try:
        return _require_launch_config(lower)
    except (_RequireLaunchConfig, TypeError):
        return None


# typing_location (imported above) reads the typing frame that UPSTREAM declares (a FRAME entry).


def is_device_compile(lower) -> bool:
    return bool(lower.targetoptions.get("device", False))


def target_chip(lower) -> str:
    """The kernel's target, e.g. ``"sm_90"`` (from the resolved GPU target)."""
    return lower.targetoptions["chip"]


def target_compute_capability(lower) -> tuple:
    """The kernel's target as (major, minor), e.g. (9, 0) for ``"sm_90"`` / ``"sm_90a"``."""
    digits = "".join(ch for ch in target_chip(lower).split("_")[-1] if ch.isdigit())
    return (int(digits[:-1] or 0), int(digits[-1:] or 0))


def inline_ptx_u32(ptx: str):
    """The 32-bit result of a PTX instruction whose destination is ``$0`` (no side effects)."""
    i32 = mlir_ir.IntegerType.get_signless(32)
    return mlir_llvm.inline_asm(i32, [], ptx, "=r", has_side_effects=False)


def inline_ptx_barrier(ptx: str):
    """PTX with no operands that orders memory (a barrier): side effects and a memory clobber."""
    mlir_llvm.inline_asm(None, [], ptx, "~{memory}", has_side_effects=True)


def block_barrier():
    """``__syncthreads()`` in the kernel, as ``cuda.syncthreads()`` lowers it (``gpu.barrier``)."""
    from numba_cuda_mlir._mlir.dialects import gpu

    gpu.barrier()


def user_block_barrier():
    """``__syncthreads()`` for ``block.sync()``: NVVM's ``bar.sync 0`` (``nvvm.barrier``), the
    same barrier as :func:`block_barrier` but spelled apart in the kernel's MLIR, where NVIDIA's
    tests count the ``gpu.barrier`` ops as the barriers the library added."""
    from numba_cuda_mlir._mlir.dialects import nvvm

    nvvm.barrier()


def i32_constant(value: int):
    from numba_cuda_mlir._mlir.dialects import arith

    return arith.constant(mlir_ir.IntegerType.get_signless(32), value)


def drop_unused_device_variables(lower):
    """Let the final nvJitLink link drop unreferenced ``__device__`` variables.

    The CCCL headers define hundreds of ``cuda::std`` constants with external
    linkage; without ``-optimize-unused-variables`` every coop kernel's cubin
    carries them (~80 KB).  numba-cuda-mlir 0.6 passes that flag only when
    ``variables_used`` is non-empty (``cudadrv/driver.py``,
    ``_get_linker_options``), so name one variable that does not exist: no host
    code reads a coop kernel's device variables by name.
    """
    config = getattr(lower, "_linker_config", None)
    if isinstance(config, dict) and not config.get("variables_used"):
        # Upstream lacks an option for nvJitLink's -optimize-unused-variables.
        config["variables_used"] = ["__cuda_coop_no_host_variables__"]


def workgroup_global(lower, name: str, size: int, alignment: int):
    """A private ``__shared__`` byte array in the kernel's GPU module, as a generic pointer."""
    mspace = mlir_ir.Attribute.parse("#gpu.address_space<workgroup>")
    ty = mlir_ir.MemRefType.get([max(size, 1)], mlir_ir.IntegerType.get_signless(8), memory_space=mspace)
    gpu_module = lower.mlir_gpu_module
    with mlir_ir.InsertionPoint(gpu_module.bodyRegion.blocks[0]):
        mlir_memref.global_(name, ty, sym_visibility="private", alignment=alignment)
    return ty


def workgroup_dynamic(lower, name: str, bytes_needed: int, alignment: int):
    """The kernel's dynamic shared memory as an external ``__shared__`` byte array, which the
    launch reserves (``bytes_needed`` at least).

    A public ``memref.global`` without a value is a declaration: PTX gets
    ``.extern .shared .align 16 .b8 name[];``, which ptxas places after all static shared
    memory, so nothing static can overlap it.  (numba-cuda-mlir 0.6's own dynamic arrays,
    ``cuda.shared.array(0, ...)``, lower to a one-byte *static* variable instead and overlap
    static arrays: numba-cuda-mlir PR #312; the backend refuses them next to cooperative
    scratch.)  ``set_required_dynamic_shared_memory`` (public API, 0.6.0) records the bytes in
    the compile result; the launch passes max(configured, required) and numba-cuda-mlir's
    native launcher raises the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize when the
    bytes exceed the default (and refuses bytes above the device's opt-in limit).  Kernels
    specialized per launch configuration are not written to the on-disk cache, whose entries
    would lose the requirement.
    """
    mspace = mlir_ir.Attribute.parse("#gpu.address_space<workgroup>")
    ty = mlir_ir.MemRefType.get([0], mlir_ir.IntegerType.get_signless(8), memory_space=mspace)
    with mlir_ir.InsertionPoint(lower.mlir_gpu_module.bodyRegion.blocks[0]):
        mlir_memref.global_(name, ty, alignment=alignment)
    _set_required_dynamic_shared_memory(lower, bytes_needed)
    return ty


def required_dynamic_shared_bytes(compile_result) -> int:
    """The dynamic shared memory a compiled kernel's launch reserves (0: none)."""
    from numba_cuda_mlir._whole_function_planners import _REQUIRED_DYNAMIC_SHARED_MEMORY_KEY

    metadata = getattr(compile_result, "metadata", None) or {}
    return int(metadata.get(_REQUIRED_DYNAMIC_SHARED_MEMORY_KEY, 0) or 0)


def workgroup_pointer(lower, name: str, ty):
    return memref_data_pointer(mlir_memref.get_global(ty, name))


def workgroup_view(lower, name: str, region_ty, offset: int, count: int, numba_dtype):
    """A ``count``-element shared array of ``numba_dtype`` at byte ``offset`` of region ``name``.

    ``memref.view`` of the region's byte array: the result is an ordinary
    ``memref<count x T, workgroup>``, the same kind of value ``cuda.shared.array``
    produces, so indexing, ``len`` and passing it to device functions work unchanged.
    """
    from numba_cuda_mlir.lowering_utilities import index_of

    elem = lower.get_storage_type(numba_dtype)
    mspace = mlir_ir.Attribute.parse("#gpu.address_space<workgroup>")
    ty = mlir_ir.MemRefType.get([count], elem, memory_space=mspace)
    region = mlir_memref.get_global(region_ty, name)
    return mlir_memref.view(ty, region, index_of(offset), [])


def pointer_plus_bytes(ptr, offset: int):
    from numba_cuda_mlir.lowering_utilities import i64_of

    return llvm_ptr_add_bytes(ptr, i64_of(offset))


def i64_constant(value: int):
    from numba_cuda_mlir.lowering_utilities import i64_of

    return i64_of(value)


def array_extent(array):
    """The length of a 1-D array (its memref's dimension 0) as an i64 value."""
    from numba_cuda_mlir.lowering_utilities import i64_of, index_of

    return i64_of(mlir_memref.dim(array, index_of(0)))


def local_array(lower, numba_dtype, items: int, alignment: int | None):
    """A static per-thread array (``memref.alloca`` in the entry block)."""
    elem = lower.get_storage_type(numba_dtype)
    mr_type = mlir_ir.MemRefType.get([items], elem)
    with lower.alloca_insertion_point():
        if alignment:
            return mlir_memref.alloca(mr_type, [], [], alignment=alignment)
        return mlir_memref.alloca(mr_type, [], [])


def store_element0(lower, numba_dtype, array, value):
    from numba_cuda_mlir.lowering_utilities import index_of

    mlir_memref.store(value=lower.as_storage(numba_dtype, value), memref=array, indices=[index_of(0)])


def overload_inlined_method(numba_type, name):
    """``extending.overload_method``, always inlined (for types with no run-time value)."""
    from numba_cuda_mlir.extending import overload_method

    return overload_method(numba_type, name, typing_registry=typing_registry, inline="always",
                           prefer_literal=True)


def load_element0(lower, numba_dtype, array):
    from numba_cuda_mlir.lowering_utilities import index_of

    raw = mlir_memref.load(memref=array, indices=[index_of(0)])
    return lower.from_storage(numba_dtype, raw)


def call_void(lower, symbol: str, operands, operand_types):
    fty = mlir_ir.FunctionType.get(inputs=list(operand_types), results=[])
    callee = get_or_insert_function(symbol, fty, lower.mlir_gpu_module)
    mlir_func.call(result=[], callee=callee.name.value, operands_=list(operands))


def llvm_pointer_type():
    return mlir_llvm.PointerType.get()


def mlir_type_of(lower, numba_type):
    return lower.get_mlir_type(numba_type)


@contextlib.contextmanager
def forced_compute_capability(cc):
    """Compile for ``cc`` on a machine without a driver.

    numba-cuda-mlir 0.6.0 asks the driver for the host GPU's compute capability
    even when ``cc=`` is given (``tools.resolve_gpu_target``).  Its cache global
    ``tools._cached_cc`` answers that question for every caller, including the
    linker; setting it is the narrowest shim.  Drop it once upstream honours
    ``cc=`` without a device.
    """
    from numba_cuda_mlir import tools

    check_upstream_names()
    with _cc_lock:
        previous = getattr(tools, "_cached_cc", None)
        # Upstream lacks a way to compile for an explicit cc without asking the driver.
        tools._cached_cc = tuple(cc)
        try:
            yield
        finally:
            tools._cached_cc = previous


_cc_lock = threading.RLock()


def install_final_link() -> None:
    """The final link of a kernel that calls cuda.coop (backends/_final_link.py): 32-bit
    shared addresses, and the cubin from cuda.coop's link cache when an earlier process
    linked it.  ``_Linker.complete`` links inside ``optimize``, with no link cache outside
    ``cache=True`` and no hook around it."""
    from numba_cuda_mlir.numba_cuda.cudadrv import driver

    from .._final_link import install_on

    check_upstream_names(modules=(driver.__name__,))
    install_on(driver._Linker)


def post_lto_ptx(compile_result) -> str | None:
    """The PTX after the final LTO link (CUB wrappers inlined), or None."""
    try:
        from numba_cuda_mlir.mlir_optimization import get_lto_ptx

        return get_lto_ptx(compile_result)
    except Exception:  # pragma: no cover - diagnostic helper only
        return None


def compile_device_function_ltoir(pyfunc, sig, *, cc, symbol: str, fastmath=False) -> bytes:
    """LTO-IR of a Python device function with the C ABI under ``symbol``.

    Public API (``cuda.compile``); no GPU is needed when ``compile_cubin``'s
    compute-capability shim is active, and under a launch the driver answers.
    """
    load_compiler()
    options = {"fastmath": True} if fastmath else {}
    ltoir, _restype = cuda.compile(pyfunc, sig, device=True, abi="c", abi_info={"abi_name": symbol},
                                   output="ltoir", cc=tuple(cc), **options)
    return bytes(ltoir)


def device_function_restype(pyfunc, argtypes, *, cc):
    """The return type numba infers for a device function called with ``argtypes``."""
    load_compiler()
    _ptx, restype = cuda.compile(pyfunc, tuple(argtypes), device=True, output="ptx", cc=tuple(cc))
    return restype


def compile_kernel(pyfunc, argtypes, *, cc, block, grid=(1, 1, 1), cluster=None, **options):
    """Compile a kernel to cubin for ``cc`` and a launch ``block`` shape, with no GPU.

    Does what a configured launch does (``descriptor._compile_impl`` with launch
    metadata): the compiler state's target options carry ``__launch_config__``,
    the dict ``MLIRDispatcher.configure(grid, block, stream, sharedmem, cluster)``
    builds (``descriptor._configure_cached``; ``cluster`` a 3-tuple or None).
    Returns numba-cuda-mlir's compile result (``metadata["cubin"]`` is the cubin).
    """
    from numba_cuda_mlir import mlir_compiler
    from numba_cuda_mlir.descriptor import mlir_target
    from numba_cuda_mlir.mlir_optimization import optimize

    check_upstream_names()
    load_compiler()
    mlir_target.ensure_initialized()  # what a dispatcher compile does first

    with forced_compute_capability(cc):
        dispatcher = cuda.jit(pyfunc, lto=True, **options)
        resolve = getattr(dispatcher, "_resolve_target_options", None)
        if resolve is not None:
            resolve()
        targetoptions = dict(dispatcher.targetoptions)
        targetoptions["cc"] = tuple(cc)
        if block is not None:
            targetoptions["__launch_config__"] = {"grid": tuple(grid), "block": tuple(block),
                                                  "sharedmem": 0,
                                                  "cluster": None if cluster is None else tuple(cluster)}
        cres = mlir_compiler.compile_mlir(pyfunc, types.none, tuple(argtypes), targetoptions=targetoptions)
        optimize(cres)
    return cres
