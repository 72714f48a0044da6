"""What backends/numba_cuda/_compat.py needs of numba-cuda: the supported versions and every private name.

Every private numba-cuda (and llvmlite) name _compat.py relies on (backends/_upstream.py):
checked, without patching anything, when the backend registers, before it patches anything
(check_upstream_names()); tests/backends/test_upstream_names.py runs each entry as a test
case and fails when a patch or a private import in _compat.py has no entry.  ``why``: what
upstream lacks.

Kept apart from _compat.py so that the table reads as one list; it imports no private
name of the compiler (tests/backends/test_compat_boundary.py).
"""

from .._upstream import CALLABLE, FRAME, INSTANCE, MODULE, UpstreamName, installed_version

SUPPORTED = ((0, 30, 0), (0, 31, 0))  # [min, max)
SUPPORTED_TEXT = ">=0.30.0,<0.31"
COMPILER_NAME = "numba-cuda"  # in messages that quote the compiler
_EXTRA_HINT = "pip install 'cuda-coop[numba-cuda-cu13]' (or numba-cuda-cu12)"


def check_version() -> str:
    """numba-cuda's version, or a named error when it is missing or out of range."""
    return installed_version("numba_cuda", compiler=COMPILER_NAME, supported=SUPPORTED, supported_text=SUPPORTED_TEXT,
                             hint=_EXTRA_HINT)


TESTED = "0.30.4"  # the numba-cuda release this table was checked against

UPSTREAM = (
    # Private modules, and the names imported from them.
    UpstreamName("numba.cuda", MODULE, ("cgutils", "types", "launchconfig", "dispatcher"),
                 "code generation helpers, types and the launch configuration have no public API"),
    UpstreamName("numba.cuda.cgutils", MODULE,
                 ("get_or_insert_function", "add_global_variable", "if_unlikely", "alloca_once",
                  "create_struct_proxy"), "lowerings build LLVM IR with numba-cuda's helpers"),
    UpstreamName("numba.cuda.cudadrv.driver", MODULE, ("binding", "driver"),
                 "no public call to raise a kernel's dynamic shared memory limit"),
    UpstreamName("numba.cuda.core", MODULE, ("ir",), "no public Numba IR"),
    UpstreamName("numba.cuda.core.rewrites", MODULE, ("Rewrite", "register_rewrite"),
                 "no public hook for call-site rewrites before and after type inference"),
    UpstreamName("numba.cuda.core.compiler_lock", MODULE, ("global_compiler_lock",),
                 "no public compile lock to order the backend's installation with compiles on other threads"),
    UpstreamName("numba.cuda.compiler", MODULE, ("run_frontend",), "no public way to read a device helper's IR"),
    UpstreamName("numba.cuda.core.ir_utils", MODULE, ("replace_vars_stmt",), "no public IR utilities for rewrites"),
    UpstreamName("numba.cuda.core.errors", MODULE, ("ForceLiteralArg",),
                 "a typing template asks for literal arguments through this private error"),
    UpstreamName("numba.core.errors", MODULE, ("ForceLiteralArg",),
                 "with numba installed, numba-cuda's typing re-raises only numba's own ForceLiteralArg",
                 needs="numba.core"),
    UpstreamName("numba.cuda.core.imputils", MODULE, ("lower_builtin", "lower_getattr"),
                 "no public lowering registry"),
    UpstreamName("numba.cuda.extending", MODULE, ("intrinsic", "overload_method"), "the extension API's home"),
    UpstreamName("numba.cuda.datamodel.models", MODULE, ("ArrayModel", "OpaqueModel"), "no public data models"),
    UpstreamName("numba.cuda.models", MODULE, ("register_model",), "no public data model registry"),
    UpstreamName("numba.cuda.np.numpy_support", MODULE, ("as_dtype", "from_dtype"), "no public dtype conversion"),
    UpstreamName("numba.cuda.typing.templates", MODULE,
                 ("AbstractTemplate", "AttributeTemplate", "infer_getattr", "signature"), "no public typing templates"),
    UpstreamName("numba.cuda.typing.typeof", MODULE, ("typeof", "typeof_impl"), "no public typeof registry"),
    UpstreamName("numba.cuda.dispatcher", MODULE, ("normalize_kernel_dimensions",),
                 "a cluster launch configuration normalizes its shapes as configure() does"),
    UpstreamName("numba.cuda._compat", MODULE, ("CUDA_CORE_GE_1_0",),
                 "a cluster launch passes cuda.core's cooperative flag by the name numba-cuda uses"),
    # Replaced, wrapped or called.
    UpstreamName("numba.cuda.dispatcher:CUDADispatcher._compile_for_args", CALLABLE, ("self", "args", "kws"),
                 "no retry with literal arguments on ForceLiteralArg, as numba's CPU dispatcher does (wrapped)"),
    UpstreamName("numba.cuda.dispatcher:_Kernel._prepare_args", CALLABLE,
                 ("self", "ty", "val", "stream", "retr", "kernelargs"),
                 "argument packing knows no literal types (wrapped; called by cluster launches)"),
    UpstreamName("numba.cuda.lowering:BaseLower.post_lower", CALLABLE, ("self",),
                 "no hook after a function's body is lowered, where its shared arrays are all known (wrapped)"),
    UpstreamName("numba.cuda.dispatcher:CUDACacheImpl.check_cachable", CALLABLE, ("self", "cres"),
                 "a code library with link items cannot be pickled: cache=True fails at the first launch "
                 "(wrapped)"),
    UpstreamName("numba.cuda.dispatcher:_Kernel.__init__", CALLABLE, ("self", "..."),
                 "no way to give one kernel a launch of its own (wrapped)"),
    UpstreamName("numba.cuda.dispatcher:_Kernel.launch", CALLABLE,
                 ("self", "args", "griddim", "blockdim", "stream", "sharedmem"),
                 "never raises a kernel's dynamic shared memory limit (48 KiB) nor launches in clusters "
                 "(replaced per kernel, then called)"),
    UpstreamName("numba.cuda.dispatcher:CUDADispatcher._launch_config_key", CALLABLE, ("launch_config",),
                 "the launch-configuration key has no cluster shape (wrapped)"),
    UpstreamName("numba.cuda.dispatcher:CUDADispatcher.__init__", CALLABLE, ("self", "py_func", "..."),
                 "no hook at the definition of a kernel (wrapped: NVRTC's precompiled header starts building at "
                 "the first kernel that refers to cuda.coop, when the provider cache never compiled for the GPU)"),
    UpstreamName("numba.cuda.dispatcher:CUDADispatcher.configure", CALLABLE,
                 ("self", "griddim", "blockdim", "stream", "sharedmem"),
                 "no cluster shape, and any block shape is accepted (replaced)"),
    UpstreamName("numba.cuda.dispatcher:CUDADispatcher.__getitem__", CALLABLE, ("self", "args"),
                 "kernel[grid, block, stream, sharedmem, cluster] is refused (replaced)"),
    UpstreamName("numba.cuda.dispatcher:CUDADispatcher.call", CALLABLE, ("self", "args", "launch_config"),
                 "a cluster launch configuration launches through it"),
    UpstreamName("numba.cuda.dispatcher:_LaunchConfiguration.__init__", CALLABLE,
                 ("self", "dispatcher", "griddim", "blockdim", "stream", "sharedmem"),
                 "a launch configuration has no cluster shape (subclassed)"),
    UpstreamName("numba.cuda.dispatcher:get_current_device", CALLABLE, (),
                 "compile_device asks the current device's compute capability even for compile_cubin's "
                 "explicit cc (replaced while compile_cubin compiles)"),
    UpstreamName("numba.cuda.launchconfig:current_launch_config", CALLABLE, (),
                 "a compile reads the launch that triggered it"),
    UpstreamName("llvmlite.ir:Constant._get_reference", CALLABLE, ("self",),
                 "llvmlite caches a constant's text on first print; LateConstant's value is set after its uses"),
    UpstreamName("llvmlite.ir:Constant._to_string", CALLABLE, ("self",),
                 "llvmlite caches a constant's text on first print; LateConstant's value is set after its uses"),
    UpstreamName("numba.cuda.cudadrv.driver:_Linker._get_linker_options", CALLABLE, ("self", "ptx"),
                 "the link cache keys a link by the options it will use, which have no public accessor"),
    UpstreamName("numba.cuda.cudadrv.driver:_Linker.get_linked_ptx", CALLABLE, ("self",),
                 "no hook around the link a kernel's PTX is read from (wrapped: a kernel calling cuda.coop gets "
                 "the shared-address layout module first, as in its cubin's link)"),
    UpstreamName("numba.cuda.cudadrv.driver:_Linker.complete", CALLABLE, ("self",),
                 "no link cache besides cache=True (which refuses kernels with link items) and no hook around "
                 "a kernel's final link (wrapped: the cubin of a kernel calling cuda.coop is read from disk "
                 "when an earlier process linked it)"),
    UpstreamName("numba.cuda.cudadrv.driver:Device.get_primary_context", CALLABLE, ("self",),
                 "no hook at the creation of a context (wrapped: NVRTC's precompiled header starts building there "
                 "when the provider cache never compiled for the device)"),
    # Attributes of upstream objects.
    UpstreamName("numba.cuda.cudadrv.devicearray:DeviceNDArray", INSTANCE, ("_numba_type_",),
                 "a launch of a literal-argument specialization keys a device array by its cached Numba type"),
    UpstreamName("numba.cuda.cudadrv.driver:Device", INSTANCE, ("primary_context", "compute_capability"),
                 "the context hook tells a first context from a later one, and needs the device's architecture"),
    UpstreamName("numba.cuda.cudadrv.driver:_Linker", INSTANCE,
                 ("_object_codes", "_get_linker_options", "_complete", "_info_log", "_error_log", "linker"),
                 "the final link puts the shared-address layout module first and keys the link cache by its inputs "
                 "and options, which have no public accessors"),
    UpstreamName("numba.cuda.descriptor:cuda_target", INSTANCE, ("_typingctx", "_targetctx"),
                 "no public way to refresh only the contexts that exist"),
    UpstreamName("numba.cuda.dispatcher:_Kernel", INSTANCE,
                 ("launch", "fndesc", "_codelibrary", "py_func", "debug", "argument_types", "cooperative"),
                 "a kernel with dynamic scratch or a cluster launch gets its own launch, which needs its code"),
    UpstreamName("numba.cuda.dispatcher:_LaunchConfiguration", INSTANCE, ("dispatcher", "pre_launch_callbacks"),
                 "a cluster launch configuration is numba-cuda's with a cluster shape"),
    UpstreamName("numba.cuda.codegen:CUDACodeLibrary", INSTANCE, ("_linking_files", "add_linking_file", "get_cufunc"),
                 "no public list of a library's link items (de-duplication, the cache refusal)"),
    UpstreamName("numba.cuda.cudadrv.driver:CudaPythonFunction", INSTANCE, ("attrs", "device", "handle", "kernel"),
                 "a launch of its own reads the kernel's static shared memory and handles"),
    UpstreamName("numba.cuda.lowering:Lower", INSTANCE, ("fndesc", "loc", "func_ir"),
                 "errors name the user's line: no public accessor for the statement being lowered"),
    UpstreamName("llvmlite.ir:GlobalVariable", INSTANCE, ("value_type", "type"),
                 "no call to resize a global after its uses are emitted (resize_shared_global sets its type)"),
    # Frames.
    UpstreamName("numba.cuda.core.typeinfer:ConstraintNetwork.propagate", FRAME, ("typeinfer", "constraint"),
                 "a method template is typed without its call's location; only this frame knows it"),
    UpstreamName("numba.cuda.lowering:Lower.lower_inst", FRAME, ("self",),
                 "a lowering error names the user's line: only this frame knows the statement"),
    UpstreamName("numba.cuda.lowering:Lower.lower_assign", FRAME, ("self",),
                 "a lowering error names the user's line: only this frame knows the statement"),
    UpstreamName("numba.cuda.dispatcher:CUDADispatcher.compile_device", FRAME, ("self",),
                 "no flag tells a lowering that a device function is compiled on its own (whatever the launch)"),
)
