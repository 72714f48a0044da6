"""What backends/numba_mlir/_compat.py needs of numba-cuda-mlir: the supported versions and every private name.

Every private numba-cuda-mlir name _compat.py relies on (backends/_upstream.py): checked,
without patching anything, before the backend patches anything (check_upstream_names());
tests/backends/test_upstream_names.py runs each entry as a test case and fails when a
patch or a private import in _compat.py has no entry.  ``why``: what upstream lacks.

Kept apart from _compat.py so that the table reads as one list; it imports no private
name of the compiler (tests/backends/test_compat_boundary.py).
"""

from .._upstream import ATTRIBUTE, CALLABLE, FRAME, INSTANCE, MODULE, UpstreamName, installed_version

SUPPORTED = ((0, 6, 0), (0, 7, 0))  # [min, max)
SUPPORTED_TEXT = ">=0.6.0,<0.7"
COMPILER_NAME = "numba-cuda-mlir"  # in messages that quote the compiler
_EXTRA_HINT = (
    "pip install 'cuda-coop[numba-cuda-mlir-cu13]' (CUDA 13) or "
    "'cuda-coop[numba-cuda-mlir-cu12]' (CUDA 12)"
)


def check_version() -> str:
    """Import numba_cuda_mlir and check its version before touching any registry."""
    return installed_version("numba_cuda_mlir", compiler=COMPILER_NAME, supported=SUPPORTED, supported_text=SUPPORTED_TEXT,
                             hint=_EXTRA_HINT)


TESTED = "0.6.0"  # the numba-cuda-mlir release this table was checked against

UPSTREAM = (
    # Private modules, and the names imported from them.
    UpstreamName("numba_cuda_mlir.numba_cuda", MODULE, ("types",),
                 "the vendored Numba front end (types, IR, typing templates) has no public path"),
    UpstreamName("numba_cuda_mlir.numba_cuda.core", MODULE, ("errors", "ir"),
                 "the vendored Numba IR and errors have no public path"),
    UpstreamName("numba_cuda_mlir.numba_cuda.core.rewrites", MODULE, ("Rewrite", "register_rewrite"),
                 "no public hook for call-site rewrites before and after type inference"),
    UpstreamName("numba_cuda_mlir.numba_cuda.core.compiler_lock", MODULE, ("global_compiler_lock",),
                 "no public compile lock to order the backend's installation with compiles on other threads"),
    UpstreamName("numba_cuda_mlir.numba_cuda.compiler", MODULE, ("run_frontend",),
                 "no public way to read a device helper's untyped IR"),
    UpstreamName("numba_cuda_mlir.numba_cuda.core.ir_utils", MODULE, ("replace_vars_stmt",),
                 "no public IR utilities for rewrites"),
    UpstreamName("numba_cuda_mlir.numba_cuda.typing.templates", MODULE,
                 ("AbstractTemplate", "AttributeTemplate", "signature"),
                 "numba-cuda-mlir's extending module exposes no typing templates"),
    UpstreamName("numba_cuda_mlir.numba_cuda.np.numpy_support", MODULE, ("as_dtype", "from_dtype"),
                 "no public dtype conversion"),
    UpstreamName("numba_cuda_mlir.numba_cuda.typing.typeof", MODULE, ("typeof", "typeof_impl"),
                 "extending.typeof_impl is this object, behind a 0.1 s import"),
    UpstreamName("numba_cuda_mlir._mlir", MODULE, ("ir",), "lowerings build MLIR: no public MLIR bindings"),
    UpstreamName("numba_cuda_mlir._mlir.dialects", MODULE, ("func", "llvm", "memref", "gpu", "arith", "nvvm"),
                 "lowerings build MLIR: no public dialect bindings"),
    UpstreamName("numba_cuda_mlir.models", MODULE, ("ArrayModel", "OpaqueModel"), "no public data models"),
    UpstreamName("numba_cuda_mlir.lowering_utilities", MODULE,
                 ("get_or_insert_function", "llvm_ptr_add_bytes", "memref_data_pointer", "index_of", "i64_of"),
                 "no public lowering helpers"),
    UpstreamName("numba_cuda_mlir._whole_function_planners", MODULE,
                 ("_RequireLaunchConfig", "_REQUIRED_DYNAMIC_SHARED_MEMORY_KEY"),
                 "require_launch_config's refusal and the required dynamic shared memory have no public names"),
    UpstreamName("numba_cuda_mlir.numba_cuda.cudadrv.error", MODULE, ("CudaDriverError", "CudaSupportError"),
                 "no public driver error classes: a cooperative launch without a GPU gets a named error"),
    # Replaced, wrapped or called.
    UpstreamName("numba_cuda_mlir.extending:refresh_registries", CALLABLE,
                 ("typing", "target", "include_uninitialized_cuda"),
                 "overload/overload_method refresh the typing context after every registration; no way to "
                 "register several and refresh once (replaced while ready() registers)"),
    UpstreamName("numba_cuda_mlir.tools:_cached_cc", ATTRIBUTE, (),
                 "resolve_gpu_target asks the driver even when cc= is given: compile_cubin sets it to compile "
                 "without a GPU"),
    UpstreamName("numba_cuda_mlir.tools:resolve_gpu_target", CALLABLE, ("targetoptions",),
                 "no public way to ask which target a launch will compile for before it compiles (the "
                 "first launch starts NVRTC's precompiled header for it)"),
    UpstreamName("numba_cuda_mlir.descriptor:_array_cache_key", CALLABLE, ("arg", "ty"),
                 "its per-launch array check raises on PyTorch tensors and reuses a stale specialization for "
                 "DLPack-only objects (wrapped)"),
    UpstreamName("numba_cuda_mlir.descriptor:_ArgMarshaller.__call__", CALLABLE, ("self", "args"),
                 "no launch hook: nowhere to check arguments, name a missing driver or a refused shared-memory "
                 "size, or skip re-typing a repeat launch (wrapped)"),
    UpstreamName("numba_cuda_mlir.descriptor:MLIRDispatcher._get_ready_launch", CALLABLE,
                 ("self", "argtypes", "available_launch_config", "configured_launch_config",
                  "configured_kernel_dispatcher", "configured_launch_config_generation"),
                 "the launch state a launch used is not returned to its caller (wrapped to record it)"),
    UpstreamName("numba_cuda_mlir.descriptor:MLIRDispatcher._prepare_for_launch", CALLABLE,
                 ("self", "args", "values", "argtypes", "available_launch_config", "configured_launch_config",
                  "configured_kernel_dispatcher", "configured_launch_config_generation"),
                 "the launch state a launch used is not returned to its caller (wrapped to record it)"),
    UpstreamName("numba_cuda_mlir.descriptor:MLIRDispatcher.configure", CALLABLE,
                 ("self", "griddim", "blockdim", "..."),
                 "kernel[grid, block] accepts any block shape: no hook to refuse an impossible one at the "
                 "launch line, and a repeat of the same spelling costs 3.5 us of normalizing and locking (wrapped)"),
    UpstreamName("numba_cuda_mlir.descriptor:MLIRDispatcher.__getitem__", CALLABLE, ("self", "args"),
                 "kernel[grid, block] reaches configure through three calls: a repeat with the same grid and "
                 "block objects is answered before them (wrapped)"),
    UpstreamName("numba_cuda_mlir.descriptor:MLIRDispatcher.__init__", CALLABLE, ("self", "py_func", "..."),
                 "no hook at the definition of a kernel (wrapped: NVRTC's precompiled header starts building at "
                 "the first kernel that refers to cuda.coop, when the provider cache never compiled for the GPU)"),
    UpstreamName("numba_cuda_mlir.descriptor:MLIRDispatcher._clear_configure_cache", CALLABLE, ("self",),
                 "configure.cache_clear() has no hook: the repeat-configure shortcut must empty with it (wrapped)"),
    UpstreamName("numba_cuda_mlir.descriptor:_raise_as_cuda_error", CALLABLE, ("e",),
                 "the launch fast path repeats the full path's steps, which have no public functions"),
    UpstreamName("numba_cuda_mlir.descriptor:_launch_config_key", CALLABLE, ("launch_config",),
                 "the launch fast path repeats the full path's steps, which have no public functions"),
    UpstreamName("numba_cuda_mlir.descriptor:_normalize_launch_sharedmem", CALLABLE, ("sharedmem",),
                 "the launch fast path repeats the full path's steps, which have no public functions"),
    UpstreamName("numba_cuda_mlir.descriptor:_sync_cuda_array_interface_stream", CALLABLE, ("arg",),
                 "the launch fast path repeats the full path's steps, which have no public functions"),
    UpstreamName("numba_cuda_mlir.mlir_compiler:compile_mlir", CALLABLE,
                 ("pyfunc", "return_type", "args", "targetoptions"),
                 "no public compile for a launch configuration without a launch (compile_cubin)"),
    UpstreamName("numba_cuda_mlir.mlir_optimization:optimize", CALLABLE, ("cres",),
                 "no public compile for a launch configuration without a launch (compile_cubin)"),
    UpstreamName("numba_cuda_mlir.mlir_optimization:get_lto_ptx", CALLABLE, ("cres",),
                 "no public accessor for a kernel's post-LTO PTX"),
    UpstreamName("numba_cuda_mlir.numba_cuda.cudadrv.driver:_Linker._get_linker_options", CALLABLE, ("self", "ptx"),
                 "the link cache keys a link by the options it will use, which have no public accessor"),
    UpstreamName("numba_cuda_mlir.numba_cuda.cudadrv.driver:_Linker.get_linked_ptx", CALLABLE, ("self",),
                 "no hook around the link a kernel's PTX is read from (wrapped: a kernel calling cuda.coop gets "
                 "the shared-address layout module first, as in its cubin's link)"),
    UpstreamName("numba_cuda_mlir.numba_cuda.cudadrv.driver:_Linker.complete", CALLABLE, ("self",),
                 "no link cache outside cache=True and no hook around a kernel's final link (wrapped: the "
                 "cubin of a kernel calling cuda.coop is read from disk when an earlier process linked it)"),
    UpstreamName("numba_cuda_mlir.type_defs.torch_types:typeof_torch_tensor", CALLABLE, ("val", "c"),
                 "types bfloat16 tensors with its bf16, which has no arithmetic (called, then re-registered)",
                 needs="torch"),
    UpstreamName("numba_cuda_mlir.numba_cuda.cudadrv.driver:Device.get_primary_context", CALLABLE, ("self",),
                 "no hook at the creation of a context (wrapped: NVRTC's precompiled header starts building there "
                 "when the provider cache never compiled for the device)"),
    # Attributes of upstream objects.
    UpstreamName("numba_cuda_mlir.numba_cuda.cudadrv.driver:Device", INSTANCE, ("primary_context", "compute_capability"),
                 "the context hook tells a first context from a later one, and needs the device's architecture"),
    UpstreamName("numba_cuda_mlir.descriptor:_ArgMarshaller", INSTANCE,
                 ("_launcher", "_launch_config", "_available_launch_config", "_kernel_dispatcher",
                  "_launch_config_generation", "_adjusted_launcher_key", "_adjusted_launcher", "_dispatcher",
                  "_extensions"),
                 "no public way to tell which native launcher a configured launch used (the fast path)"),
    UpstreamName("numba_cuda_mlir.descriptor:MLIRDispatcher", INSTANCE,
                 ("_requires_launch_config", "_mark_requires_launch_config", "_can_compile", "_launch_lock",
                  "_literal_arg_positions", "_launch_config_generation", "_launch_config_dispatchers",
                  "_resolve_target_options", "targetoptions", "_c", "extensions"),
                 "a kernel learns it is launch-configuration specialized only inside its first launch's "
                 "compile; no public marker, nor the launch-config state the fast path validates against"),
    UpstreamName("numba_cuda_mlir.descriptor:mlir_target", INSTANCE,
                 ("_typingctx_initialized", "_targetctx_initialized", "ensure_initialized"),
                 "no public way to ask whether the compiler's contexts exist (refreshing one creates it)"),
    UpstreamName("numba_cuda_mlir.numba_cuda.cudadrv.devicearray:DeviceNDArray", INSTANCE, ("_numba_type_",),
                 "no public accessor for a device array's Numba type (the launch fast path's key)"),
    UpstreamName("numba_cuda_mlir.mlir_lowering:MLIRLower", INSTANCE,
                 ("_linker_config", "targetoptions", "mlir_gpu_module", "get_storage_type", "as_storage",
                  "from_storage", "get_mlir_type", "alloca_insertion_point"),
                 "lowerings use the lowerer itself; _linker_config: nvJitLink drops unused __device__ "
                 "variables only when variables_used is non-empty, with no option for it"),
    UpstreamName("numba_cuda_mlir.numba_cuda.cudadrv.driver:_Linker", INSTANCE,
                 ("_object_codes", "_pending_cu", "_get_linker_options", "_complete", "_info_log", "_error_log",
                  "linker"),
                 "the final link puts the shared-address layout module first and keys the link cache by its inputs "
                 "and options, which have no public accessors"),
    # Frames.
    UpstreamName("numba_cuda_mlir.numba_cuda.core.typeinfer:ConstraintNetwork.propagate", FRAME,
                 ("typeinfer", "constraint"),
                 "a method template is typed without its call's location; only this frame knows it"),
)
