"""Every import from classic numba-cuda (``numba.cuda``, package ``numba-cuda``) lives here,
and in ``_compat_launch.py`` (its launch path and kernel cache, patched).

The rest of the backend uses these names only, so a change in numba-cuda's internals
is fixed in these two files.  tests/backends/test_compat_boundary.py enforces the boundary.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
from contextlib import contextmanager

from ..._errors import BackendUnavailableError, UnsupportedBackendVersionError
from .._upstream import problems, typing_location, verify
# The supported versions and the private names relied on (UPSTREAM) are data in _upstream_names.py;
# the names are checked here, without patching anything, before the backend patches anything.
from ._upstream_names import (  # noqa: F401  (re-exported: the backend reads them here)
    _EXTRA_HINT, COMPILER_NAME, SUPPORTED, SUPPORTED_TEXT, TESTED, UPSTREAM, check_version,
)


def check_numba_cuda_is_the_target(cuda_module):
    """``numba.cuda`` must be numba-cuda's package (``numba_cuda/numba/cuda``).

    numba-cuda replaces numba's built-in CUDA target through ``_numba_cuda_redirector.pth``,
    and Python runs a ``.pth`` file only from a site directory: with numba-cuda on a path
    added otherwise (seen on the H200 image: a venv that reaches the image's packages by
    path), ``numba.cuda`` stays numba's own target, which lacks the modules this backend
    uses (``numba.cuda.cgutils``, ``numba.cuda.core``, ...).
    """
    import os

    location = getattr(cuda_module, "__file__", None) or ""
    if "numba_cuda" not in location.split(os.sep):
        import numba

        raise BackendUnavailableError(
            f"coop.register('numba-cuda'): numba.cuda is numba {numba.__version__}'s built-in CUDA target "
            f"({location or 'no file'}), not numba-cuda's, although numba-cuda is installed: numba-cuda "
            "swaps it in through _numba_cuda_redirector.pth, which Python runs only from a site-packages "
            "directory; install numba-cuda into this environment's site-packages "
            f"({_EXTRA_HINT}), or `import _numba_cuda_redirector` before the first `import numba`")


def check_numpy_supported():
    """A named error where numba-cuda cannot compile anything with the installed NumPy.

    numba-cuda 0.30 registers an overload for ``np.row_stack`` unconditionally while its
    typing context loads, and NumPy 2.5 removed ``row_stack``: every kernel's first compile
    then fails with ``AttributeError: module 'numpy' has no attribute 'row_stack'`` from
    numba-cuda's internals (seen on the H200 image: numba-cuda 0.30.4 beside NumPy 2.5).
    The extras pin ``numpy<2.5``; this check names the conflict for other installs.
    """
    import numpy

    if not hasattr(numpy, "row_stack"):
        raise UnsupportedBackendVersionError(
            f"coop.register('numba-cuda'): NumPy {numpy.__version__} is installed, but numba-cuda "
            f"{check_version()} cannot compile kernels with NumPy 2.5 or later (numba-cuda registers "
            "np.row_stack, which NumPy 2.5 removed); pip install 'numpy<2.5' in this environment, "
            "or use the default compiler, numba-cuda-mlir")


check_version()
check_numpy_supported()

_OTHERS = {"llvmlite": "llvmlite", "numba.core": "numba"}  # their own versions in the messages


def check_upstream_names(loaded_only: bool = False) -> None:
    """UnsupportedBackendVersionError when an entry of UPSTREAM is gone or changed (once per
    process and entry).  ``loaded_only``: only entries whose module is imported already (the
    backend registers with False: ``import numba.cuda`` has imported every module of the table)."""
    verify(UPSTREAM, compiler=COMPILER_NAME, version=check_version(), supported=SUPPORTED_TEXT, tested=TESTED,
           others=_OTHERS, loaded_only=loaded_only)


def upstream_problems(entries=None) -> list:
    """The problems of ``entries`` (default: UPSTREAM) in the installed numba-cuda, as messages."""
    return problems(UPSTREAM if entries is None else entries, compiler=COMPILER_NAME, version=check_version(),
                    supported=SUPPORTED_TEXT, tested=TESTED, others=_OTHERS)

import llvmlite.ir as llvm_ir  # noqa: E402
from numba import cuda  # noqa: E402  (numba-cuda's: numba_cuda/numba/cuda)

check_numba_cuda_is_the_target(cuda)
from numba.cuda import cgutils, types  # noqa: E402
from numba.cuda import launchconfig as _launchconfig  # noqa: E402
from numba.cuda.cudadrv import driver as _driver  # noqa: E402
from numba.cuda.cudadrv.devicearray import DeviceNDArray  # noqa: E402
from numba.cuda.core import ir  # noqa: E402
# Call-site rewrites (payload dtype inference) and the untyped IR of device helpers they read.
from numba.cuda.core.rewrites import Rewrite, register_rewrite  # noqa: E402
# The compiler's one compile lock: the backend's installation takes it first (_deferred.py).
from numba.cuda.core.compiler_lock import global_compiler_lock  # noqa: E402
from numba.cuda.compiler import run_frontend  # noqa: E402
# Renames the uses of a variable in a rewrite (a coop.load result read as a payload).
from numba.cuda.core.ir_utils import replace_vars_stmt  # noqa: E402
from numba.cuda.core.errors import ForceLiteralArg as _CudaForceLiteralArg  # noqa: E402


def _force_literal_arg_class():
    """The ForceLiteralArg that both of numba-cuda's catchers recognize.

    With numba installed, numba-cuda types calls through numba's own ``types.Function``,
    whose failure handling re-raises only ``numba.core.errors.ForceLiteralArg`` (anything
    else becomes a TypingError), while numba-cuda's dispatcher retries with literal
    arguments only on ``numba.cuda.core.errors.ForceLiteralArg``.  A typing template
    asking for a literal kernel argument (``ThreadData(items_per_thread)`` with a kernel
    argument) must be an instance of both, or every launch of such a kernel fails to type.
    """
    try:
        from numba.core.errors import ForceLiteralArg as core_class
    except ImportError:  # numba-cuda without numba's core: one class
        return _CudaForceLiteralArg
    if core_class is _CudaForceLiteralArg or issubclass(_CudaForceLiteralArg, core_class):
        return _CudaForceLiteralArg

    class ForceLiteralArg(_CudaForceLiteralArg, core_class):
        pass

    return ForceLiteralArg


ForceLiteralArg = _force_literal_arg_class()
from numba.cuda.core.imputils import lower_builtin, lower_getattr  # noqa: E402
from numba.cuda.extending import intrinsic, overload_method  # noqa: E402
from numba.cuda.datamodel.models import ArrayModel, OpaqueModel  # noqa: E402
from numba.cuda.dispatcher import (  # noqa: E402
    CUDADispatcher, _Kernel, _LaunchConfiguration, normalize_kernel_dimensions,
)
from numba.cuda.models import register_model  # noqa: E402
from numba.cuda.np.numpy_support import as_dtype, from_dtype  # noqa: E402
from numba.cuda.typing.templates import (  # noqa: E402
    AbstractTemplate, AttributeTemplate, infer_getattr, signature,
)
from numba.cuda.typing.typeof import typeof, typeof_impl  # noqa: E402

LTOIR = cuda.LTOIR

__all__ = [
    "AbstractTemplate", "ArrayModel", "CUDADispatcher", "AttributeTemplate", "LTOIR", "OpaqueModel", "as_dtype", "cgutils",
    "check_version", "cuda", "ForceLiteralArg", "from_dtype", "infer_getattr", "intrinsic", "ir", "llvm_ir", "lower_builtin",
    "lower_getattr", "overload_method", "register_model", "register_rewrite", "Rewrite", "replace_vars_stmt",
    "run_frontend", "signature", "typeof", "typeof_impl", "types",
]


def refresh_registries():
    """Make already-initialized typing and target contexts see the entries added since."""
    from numba.cuda.descriptor import cuda_target

    for attr in ("_typingctx", "_targetctx"):
        ctx = getattr(cuda_target, attr, None)
        if ctx is not None:
            ctx.refresh()


# ----------------------------------------------------------------------------------------
# Where the compiler is: the user's line for errors, the launch for the block shape
# ----------------------------------------------------------------------------------------

# typing_location (imported above) reads the typing frame that UPSTREAM declares (a FRAME entry).


def lowering_location():
    """``(loc, function qualname)`` of the statement numba is lowering now, or ``(None, None)``.

    The ``Lower`` instance (``lower_inst``'s ``self``) holds the statement's ``loc``.
    """
    frame = sys._getframe(1)
    while frame is not None:
        this = frame.f_locals.get("self")
        if frame.f_code.co_name in ("lower_inst", "lower_assign") and hasattr(this, "fndesc"):
            loc = getattr(this, "loc", None)
            return loc, getattr(this.fndesc, "qualname", None)
        frame = frame.f_back
    return None, None


_forced = threading.local()


def compiling_device_function_alone() -> bool:
    """Whether the code being lowered is a device function compiled on its own.

    numba-cuda compiles a ``@cuda.jit(device=True)`` function called from a kernel once per
    argument types (``CUDADispatcher.compile_device``), whatever the launch: a cooperative
    call in it would keep the first launch's block shape.  ``inline="always"`` functions are
    inlined into the kernel's IR before lowering and do not go through it.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "compile_device" and hasattr(frame.f_locals.get("self"), "py_func"):
            return True
        frame = frame.f_back
    return False


class _Device:
    def __init__(self, cc):
        self.compute_capability = tuple(cc)


@contextmanager
def _forced_device(cc):
    """numba-cuda asks the current device for its compute capability when it compiles a
    device function that a kernel calls (``CUDADispatcher.compile_device``); without a GPU
    ``compile_cubin`` answers with its target instead."""
    from numba.cuda import dispatcher

    original = dispatcher.get_current_device
    # Upstream lacks a compile of a device function for an explicit cc without a device.
    dispatcher.get_current_device = lambda: _Device(cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = original


@contextmanager
def forced_launch(block, grid=(1, 1, 1), cc=None, cluster=None):
    """The launch shape (and target) that ``compile_cubin`` compiles for: there is no launch
    to read them from.  ``block=None``: no launch facts at all."""
    previous = getattr(_forced, "value", None)
    _forced.value = {"block": None if block is None else tuple(block), "grid": tuple(grid), "cc": cc,
                     "cluster": None if cluster is None else tuple(cluster)}
    try:
        yield
    finally:
        _forced.value = previous


def target_cc() -> tuple:
    """The compute capability being compiled for: ``compile_cubin``'s, else the current
    device's (a launch compiles for it).  Does not make the kernel launch-config sensitive."""
    forced = getattr(_forced, "value", None)
    if forced is not None and forced.get("cc"):
        return tuple(forced["cc"])
    return tuple(cuda.get_current_device().compute_capability)


def launch_config():
    """``{"block", "grid", "cluster"}`` (3-tuples; cluster None without one) of the compile
    in progress, or None.

    A launch-triggered compile (``kernel[grid, block](...)``) exposes its configuration;
    reading it marks the kernel launch-configuration sensitive, so numba-cuda compiles
    it once per (grid, block, sharedmem).  ``compile_cubin`` sets it explicitly.
    """
    forced = getattr(_forced, "value", None)
    if forced is not None:
        return forced if forced["block"] is not None else None
    config = _launchconfig.current_launch_config()
    if config is None:
        return None
    dispatcher = getattr(config, "dispatcher", None)
    if dispatcher is not None:
        dispatcher.mark_launch_config_sensitive()
    return {"block": tuple(config.blockdim), "grid": tuple(config.griddim),
            "cluster": getattr(config, "cluster", None)}


def _literal_launch_key(dispatcher, args, positions) -> tuple:
    """What picks a literal-argument specialization at a launch: each literal argument's
    type and value, each device array's Numba type by identity (numba-cuda keeps it on the
    array, and types are interned: equal types are one object), any other argument's type.
    Typing each array again and hashing its type at every launch was the bulk of what such
    a launch paid in this wrapper (+9 us over a plain kernel's launch, CUDA 13.0, H100,
    05f357b)."""
    return tuple((type(arg), arg) if i in positions
                 else _array_type_key(arg) if type(arg) is DeviceNDArray
                 else dispatcher.typeof_pyval(arg)
                 for i, arg in enumerate(args))


def _array_type_key(array):
    return id(array._numba_type_)


if not isinstance(inspect.getattr_static(DeviceNDArray, "_numba_type_", None), functools.cached_property):
    # A type made at each read: its identity would never repeat, so key by the type itself.
    def _array_type_key(array):  # noqa: F811
        return array._numba_type_


def install_literal_argument_retry():
    """Let a launch specialize a kernel on the kernel arguments cuda.coop needs as constants.

    numba's CPU dispatcher answers a ForceLiteralArg from typing by retyping with those
    arguments as literals; numba-cuda 0.30's ``CUDADispatcher._compile_for_args`` does
    not, so ``ThreadData(items_per_thread)`` with a kernel argument failed at every launch.
    This wraps it with the same retry.  The positions are remembered per dispatcher, and
    each specialization in a memo keyed by the other arguments' types and these values, so
    a later launch finds its kernel without typing again (a new value compiles one more
    specialization).  Nothing changes for kernels whose typing never asks for a literal.
    """
    original = CUDADispatcher._compile_for_args
    if getattr(original, "_coop_literal_retry", False):
        return

    def _literal_types(self, args, positions):
        return tuple(types.literal(arg) if i in positions else self.typeof_pyval(arg)
                     for i, arg in enumerate(args))

    def _compile_for_args(self, *args, **kws):
        from .._launch_checks import refuse_capsules

        refuse_capsules(self, args)  # on the slow path only: a capsule has no type code
        positions = self.__dict__.get("_coop_literal_positions")
        if not positions:
            try:
                return original(self, *args, **kws)
            except _CudaForceLiteralArg as request:
                positions = frozenset(request.requested_args)
                self._coop_literal_positions = positions
        # Every launch of such a kernel comes here (the dispatcher's type-code table holds
        # the literal signatures, never the plain one): find the specialization by the
        # plain types and the values, without building literal types again.
        try:
            key = _literal_launch_key(self, args, positions)
            entry = self.__dict__.setdefault("_coop_literal_kernels", {}).get(key)
        except TypeError:  # an unhashable value: no memo
            key, entry = None, None
        if entry is not None:
            return entry[0]
        try:
            kernel = self.compile(_literal_types(self, args, positions))
        except _CudaForceLiteralArg as request:  # one more argument asked for: a last round
            positions = positions | frozenset(request.requested_args)
            self._coop_literal_positions = positions
            kernel = self.compile(_literal_types(self, args, positions))
            key = None
        if key is not None:
            # The entry holds the array types whose identities are in its key, so that no
            # other type can be made at the same address while the key is in use.
            self._coop_literal_kernels[key] = (kernel, tuple(a._numba_type_ for a in args if type(a) is DeviceNDArray))
        return kernel

    _compile_for_args._coop_literal_retry = True
    _compile_for_args.__wrapped__ = original
    # Upstream lacks the retry with literal arguments that numba's CPU dispatcher makes.
    CUDADispatcher._compile_for_args = _compile_for_args

    # The specialization's signature holds the literal types (so each value gets its own
    # entry in the dispatcher's type-code table, and a launch with another value cannot
    # reuse it), while its parameters keep the plain type's data model: pass the value as
    # the plain type.  numba-cuda's argument packing knows no literal types.
    original_prepare = _Kernel._prepare_args

    def _prepare_args(self, ty, val, *rest, **kws):
        if isinstance(ty, types.Literal):
            ty = types.unliteral(ty)
        return original_prepare(self, ty, val, *rest, **kws)

    _prepare_args.__wrapped__ = original_prepare
    # Upstream's argument packing lacks literal types.
    _Kernel._prepare_args = _prepare_args


# Kernel function name -> bytes of dynamic shared memory its cooperative scratch needs (the
# lowering's ``scratch.KernelScratch`` keeps it current; 0 or absent: all scratch is static).
DYNAMIC_SCRATCH_BYTES: dict[str, int] = {}
# The name of every LTO-IR link item the lowering adds starts with this (one spelling for
# both backends: the launch check and the link cache look for it).
from .._final_link import COOP_LINK_PREFIX, cached_cubin, store_cubin, with_shared_address_layout  # noqa: E402
# How a cluster launch is spelled (the lowering's error names it).
CLUSTER_LAUNCH = "kernel[grid, block, stream, sharedmem, cluster]"


def install_post_lower_hook(hook):
    """Call ``hook(lower)`` once numba-cuda has lowered a function's whole body, before its
    module is printed: the only point where a kernel's own shared arrays are all known."""
    from numba.cuda.lowering import BaseLower

    original = BaseLower.post_lower
    if getattr(original, "_coop_hook", None) is not None:
        return

    def post_lower(self):
        original(self)
        hook(self)

    post_lower._coop_hook = hook
    post_lower.__wrapped__ = original
    # Upstream lacks a hook after a function's whole body is lowered.
    BaseLower.post_lower = post_lower


def function_location(lower) -> tuple:
    """``(filename, line, qualname)`` of the function a ``Lower`` is lowering."""
    import linecache

    loc = getattr(lower.func_ir, "loc", None)
    filename, line = getattr(loc, "filename", None), getattr(loc, "line", None)
    if filename and line:  # numba's loc is the first decorator's line: step to the ``def``
        while linecache.getline(filename, line).lstrip().startswith("@"):
            line += 1
    return filename, line, getattr(lower.fndesc, "qualname", None)


def type_memory_namespaces(module) -> None:
    """Type ``module.local`` / ``module.shared`` in kernels as numba-cuda types ``cuda.local``
    / ``cuda.shared`` (``import cuda.coop.numba_cuda as coop; coop.local.array(...)``);
    numba-cuda types a module's attributes only for its own ``cuda`` module."""

    class MemoryNamespaces(AttributeTemplate):
        key = types.Module(module)

        def resolve_local(self, mod):
            return types.Module(cuda.local)

        def resolve_shared(self, mod):
            return types.Module(cuda.shared)

    infer_getattr(MemoryNamespaces)


# ----------------------------------------------------------------------------------------
# Code generation (llvmlite)
# ----------------------------------------------------------------------------------------

def add_linking_file(context, item):
    """Link ``item`` (an LTOIR) into the kernel being compiled (de-duplicated by identity)."""
    library = context.active_code_library
    if item not in getattr(library, "_linking_files", ()):
        library.add_linking_file(item)


def block_barrier(builder):
    """``__syncthreads()`` in the kernel, as numba-cuda lowers ``cuda.syncthreads()``."""
    fnty = llvm_ir.FunctionType(llvm_ir.VoidType(), ())
    builder.call(cgutils.get_or_insert_function(builder.module, fnty, "llvm.nvvm.barrier0"), ())


def declare_void(builder, symbol: str, arg_types):
    fnty = llvm_ir.FunctionType(llvm_ir.VoidType(), list(arg_types))
    return cgutils.get_or_insert_function(builder.module, fnty, symbol)


class LateConstant(llvm_ir.Constant):
    """An integer constant whose value is settled after its uses are emitted.

    llvmlite prints the module only when lowering is over, so the value set last is the
    one compiled.  llvmlite's own constants cache their text on first print; this one
    does not, so a value changed later is never printed stale (llvmlite lacks an uncached
    constant: its private ``_get_reference`` / ``_to_string`` are called directly).
    """

    def get_reference(self):
        return self._get_reference()

    def __str__(self):
        return self._to_string()


_I8_PTR = llvm_ir.PointerType(llvm_ir.IntType(8))


def shared_global_variable(module, name: str, size: int, alignment: int):
    """A ``__shared__`` byte array (addrspace 3) in the kernel's module.

    As numba-cuda's own ``cuda.shared.array``: an ``undef`` initializer (NVVM refuses
    initialized shared variables) and default linkage (internal linkage can give NVVM
    an invalid symbol name, numba-cuda's ``_get_unique_smem_id``).
    """
    gv = module.globals.get(name)
    if gv is None:
        arrty = llvm_ir.ArrayType(llvm_ir.IntType(8), size)
        gv = cgutils.add_global_variable(module, arrty, name, 3)
        gv.initializer = llvm_ir.Constant(arrty, llvm_ir.Undefined)
        gv.align = alignment
    return gv


def resize_shared_global(gv, size: int, alignment: int) -> None:
    """Give a shared array another size.  llvmlite prints the module (types included) only
    once lowering is over, and the casts already emitted read the global's type then:
    resizing it here resizes it everywhere."""
    arrty = llvm_ir.ArrayType(llvm_ir.IntType(8), size)
    gv.value_type = arrty  # llvmlite lacks a way to resize a global: its type is replaced
    gv.type = llvm_ir.PointerType(arrty, 3)
    gv.initializer = llvm_ir.Constant(arrty, llvm_ir.Undefined)
    gv.align = max(gv.align or 1, alignment)


def generic_i8(builder, gv):
    return builder.addrspacecast(gv, _I8_PTR, "generic")


def dynamic_shared_base(builder, name: str, alignment: int):
    """The kernel's dynamic shared memory as an ``extern __shared__`` byte array, as a
    generic ``i8*`` (numba-cuda declares its own size-0 arrays the same way)."""
    gv = builder.module.globals.get(name)
    if gv is None:
        gv = cgutils.add_global_variable(builder.module, llvm_ir.ArrayType(llvm_ir.IntType(8), 0), name, 3)
        gv.linkage = "external"
        gv.align = alignment
    return generic_i8(builder, gv)


def dynamic_shared_size(builder):
    """``%dynamic_smem_size`` as an i32 (NVVM has no intrinsic; numba-cuda reads it the same
    way).  Without side effects, so an unused read is removed."""
    asm = llvm_ir.InlineAsm(llvm_ir.FunctionType(llvm_ir.IntType(32), []), "mov.u32 $0, %dynamic_smem_size;",
                            "=r", side_effect=False)
    return builder.call(asm, [])


def inline_ptx_u32(builder, ptx: str):
    """The u32 value (as an i32) that ``ptx`` leaves in ``$0``; no side effects."""
    asm = llvm_ir.InlineAsm(llvm_ir.FunctionType(llvm_ir.IntType(32), []), ptx, "=r", side_effect=False)
    return builder.call(asm, [])


def inline_ptx_barrier(builder, ptx: str) -> None:
    """A barrier in inline PTX: a side effect that memory accesses do not cross."""
    asm = llvm_ir.InlineAsm(llvm_ir.FunctionType(llvm_ir.VoidType(), []), ptx, "~{memory}", side_effect=True)
    builder.call(asm, [])


def trap_if(builder, condition) -> None:
    trap = cgutils.get_or_insert_function(builder.module, llvm_ir.FunctionType(llvm_ir.VoidType(), []),
                                          "llvm.trap")
    with cgutils.if_unlikely(builder, condition):
        builder.call(trap, [])


def user_shared_arrays(context, module) -> tuple:
    """``(bytes, names)``: the kernel's own static ``cuda.shared.array`` bytes lowered so far,
    and the names of its dynamic (size 0) ones."""
    static, dynamic = 0, []
    for gv in module.global_values:
        if (not isinstance(gv, llvm_ir.GlobalVariable) or getattr(gv.type, "addrspace", 0) != 3
                or gv.name.startswith("cuda_coop_")):
            continue
        ty = gv.value_type
        if isinstance(ty, llvm_ir.ArrayType) and ty.count == 0:
            dynamic.append(gv.name)
        else:
            static += context.get_abi_sizeof(ty)
    return static, dynamic


def array_over(context, builder, arrty, items: int, base):
    """The 1-D C array value of type ``arrty`` over ``items`` elements at ``base`` (an
    ``i8*``), as numba-cuda's ``cuda.shared.array`` makes."""
    elty = context.get_data_type(arrty.dtype)
    itemsize = context.get_abi_sizeof(elty)
    data = builder.bitcast(base, elty.as_pointer())
    ary = context.make_array(arrty)(context, builder)
    intp = context.get_value_type(types.intp)
    context.populate_array(ary, data=data, shape=[llvm_ir.Constant(intp, items)],
                           strides=[llvm_ir.Constant(intp, itemsize)],
                           itemsize=llvm_ir.Constant(intp, itemsize), meminfo=None)
    return ary._getvalue()


def local_array(context, builder, arrty, items: int, alignment: int):
    """An aligned ``[items x T]`` on the stack: (the 1-D C array value of type ``arrty``, ``T*``)."""
    elty = context.get_data_type(arrty.dtype)
    storage = cgutils.alloca_once(builder, llvm_ir.ArrayType(elty, items))
    storage.align = alignment
    return array_over(context, builder, arrty, items, storage), builder.bitcast(storage, elty.as_pointer())


def array_data(context, builder, arrty, value):
    return cgutils.create_struct_proxy(arrty)(context, builder, value).data


def array_extent(context, builder, arrty, value):
    return builder.extract_value(cgutils.create_struct_proxy(arrty)(context, builder, value).shape, 0)


def as_i8_pointer(builder, ptr):
    return builder.bitcast(ptr, llvm_ir.PointerType(llvm_ir.IntType(8)))


def compile_device_function_ltoir(pyfunc, sig, *, cc, symbol: str, fastmath=False) -> bytes:
    """LTO-IR of a Python device function with the C ABI under ``symbol`` (public ``cuda.compile``;
    an explicit ``cc`` needs no GPU)."""
    options = {"fastmath": True} if fastmath else {}
    ltoir, _restype = cuda.compile(pyfunc, sig, device=True, abi="c", abi_info={"abi_name": symbol},
                                   output="ltoir", cc=tuple(cc), **options)
    return bytes(ltoir)


def device_function_restype(pyfunc, argtypes, *, cc):
    """The return type numba-cuda infers for a device function called with ``argtypes``."""
    _ptx, restype = cuda.compile(pyfunc, tuple(argtypes), device=True, output="ptx", cc=tuple(cc))
    return restype


# ----------------------------------------------------------------------------------------
# Compiling to cubin without a driver
# ----------------------------------------------------------------------------------------

def install_final_link() -> None:
    """The final link of a kernel that calls cuda.coop (backends/_final_link.py): 32-bit
    shared addresses, and the cubin from cuda.coop's link cache when an earlier process
    linked it.  ``CUDACodeLibrary.get_cubin`` links with ``_Linker.complete``; numba-cuda's
    ``cache=True`` refuses kernels with link items, and has no hook around the link."""
    from numba.cuda.cudadrv import driver

    from .._final_link import install_on

    check_upstream_names()
    install_on(driver._Linker)


def compile_kernel_cubin(pyfunc, argtypes, *, cc, block, grid, cluster=None, **options):
    """``(cubin bytes, post-LTO PTX)`` of ``pyfunc`` for ``cc`` and ``block``; no GPU needed.

    numba-cuda's public ``compile_all`` returns the kernel's LTO-IR and its link items
    (the providers' LTO-IR that the lowering added); nvJitLink (``cuda.core.Linker``)
    links them with LTO, so every provider is inlined.  ``-optimize-unused-variables``
    drops the CCCL headers' unused ``__device__`` constants (~100 KB).
    """
    from cuda.core import Linker, LinkerOptions, ObjectCode

    from ...core.pch import arch_for_cc

    check_upstream_names()  # before _forced_device patches
    with forced_launch(block, grid, tuple(cc), cluster), _forced_device(cc):
        parts, _restype = cuda.compile_all(pyfunc, tuple(argtypes), device=False, abi="numba",
                                           output="ltoir", cc=tuple(cc), **options)
    objects = []
    for index, part in enumerate(parts):
        if isinstance(part, ObjectCode):  # numba-cuda's own library code (bfloat16 conversions)
            objects.append(part)
            continue
        data = part if isinstance(part, (bytes, bytearray)) else getattr(part, "data", None)
        if data is None:
            with open(part.path, "rb") as fh:  # a file link item
                data = fh.read()
        objects.append(ObjectCode.from_ltoir(bytes(data), name=f"part{index}"))
    arch = arch_for_cc(cc)

    def options(kind):
        return LinkerOptions(arch=arch, link_time_optimization=True, optimize_unused_variables=True,
                             ptx=kind == "ptx")

    objects = with_shared_address_layout(objects, options("cubin"))  # as a launch's link (_final_link)

    def link(kind):
        return Linker(*objects, options=options(kind)).link(kind).code

    ptx = link("ptx")
    key, cubin = cached_cubin(objects, options("cubin"))  # the launch path's link cache, shared
    if cubin is None:
        cubin = bytes(link("cubin"))
        store_cubin(key, cubin)
    return bytes(cubin), (ptx.decode() if isinstance(ptx, (bytes, bytearray)) else str(ptx)).rstrip("\x00")
