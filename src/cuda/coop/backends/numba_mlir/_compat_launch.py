"""numba-cuda-mlir's launch path, patched: the repeat-launch and repeat-configure fast paths, launches without a
driver, argument and block-shape checks before a cooperative launch, the array key of
PyTorch tensors and DLPack objects, and the bfloat16 typing of PyTorch tensors.

Each patch names what upstream lacks; delete it the day upstream has it.  Like
``_compat.py`` (its typing, lowering and compile half), this is a module where private
``numba_cuda_mlir`` names may be imported, and each of them is an entry of ``UPSTREAM``
(``_upstream_names.py``), checked before the patch that needs it.
"""

from __future__ import annotations

import re
import threading

import numpy as np

from ._compat import check_upstream_names, types, typeof_impl

_FAST_ENTRIES_PER_LAUNCHER = 16


class _FastLaunch:
    """A configured launch that already ran: the native launcher it used (the configured one,
    or numba-cuda-mlir's copy of it that reserves the kernel's required dynamic shared
    memory), the configured one (``base``) and what made it valid."""

    __slots__ = ("launcher", "base", "generation", "config_key", "kernel_dispatcher", "array_types")

    def __init__(self, launcher, base, generation, config_key, kernel_dispatcher, array_types):
        self.launcher = launcher
        self.base = base
        self.generation = generation
        self.config_key = config_key
        self.kernel_dispatcher = kernel_dispatcher
        # The Numba types whose identities are in this entry's key, held so that no other
        # type can be created at the same address while the key is in use.
        self.array_types = array_types


class ArrayView:
    """A numba-cuda-mlir device array as the native launcher reads it: its CUDA array
    interface (and ``dtype``, read for record and datetime arrays) as plain attributes, and
    the identity of its Numba type (the array's part of a launch key).

    The launcher reads a ``DeviceNDArray``'s ``__cuda_array_interface__`` at every launch
    (and once more to classify it, the first time it meets those argument types), and each
    read builds a new dict: 1.4-1.8 us per array on the 2-core machine.  A device array's
    pointer, shape, strides and dtype are fixed when it is made, so its view is made once
    and kept on the array; a new ``stream`` (the one mutable field) makes a new view.
    """

    __slots__ = ("__cuda_array_interface__", "dtype", "stream", "type_id")

    def __init__(self, array):
        self.__cuda_array_interface__ = array.__cuda_array_interface__
        self.dtype = array.dtype
        self.stream = array.stream
        # Numba types are interned (equal types are one object), and the array holds its
        # type (a cached property), so the identity stands for the type while the view lives.
        self.type_id = id(array._numba_type_)


def launch_arguments(args, literal_positions, device_array_type, scalar_types, cai_key=None):
    """``(key, launch arguments)``: what decides a launch's specialization, per argument, and
    the arguments as the native launcher gets them (device arrays as their ``ArrayView``);
    ``(None, None)`` when an argument is not one the fast path knows (host arrays, tuples,
    records, wrappers: the full path).  One pass, because the repeat launch pays for it.

    A numba-cuda-mlir device array contributes the identity of its Numba type (interned, so
    equal types are one object; hashing a type's key instead cost 0.3 us per array per
    launch; the entry holds the types, see ``_FastLaunch``); an int or bool its type, and
    its value where the kernel is specialized on it (``literal_positions``); other
    scalars their type; another CUDA-array-interface object (CuPy, PyTorch)
    ``cai_key(arg)``.
    """
    key = []
    launch_args = list(args)
    for index, arg in enumerate(args):
        kind = type(arg)
        if kind is device_array_type:
            view = arg.__dict__.get("_coop_launch_view")
            if view is None or view.stream is not arg.stream:
                view = arg.__dict__["_coop_launch_view"] = ArrayView(arg)
            key.append(view.type_id)
            launch_args[index] = view
        elif kind is int:
            if not -(1 << 63) <= arg < (1 << 63):  # typeof gives uint64 or fails there
                return None, None
            key.append((int, arg) if index in literal_positions else int)
        elif kind is bool:
            key.append((bool, arg) if index in literal_positions else bool)
        elif kind in scalar_types:
            key.append(kind)
        elif cai_key is not None and kind.__module__ != "numpy" and hasattr(arg, "__cuda_array_interface__"):
            key.append((kind, cai_key(arg)))
        else:
            return None, None
    return tuple(key), launch_args


# What numba-cuda-mlir's launch preparation returned last on this thread, while a hooked
# launch watches: (kernel dispatcher, generation, launch config, required dynamic shared
# bytes).  Thread-local, so a launch on another thread cannot change what this one records.
_launch_seen = threading.local()


def _recording_ready_launch(method):
    """Wrap ``MLIRDispatcher._get_ready_launch`` / ``_prepare_for_launch`` (both return the
    launch state a configured launch then uses) to record their result for the watching
    launch on this thread."""

    def wrapper(self, *args, **kwargs):
        ready = method(self, *args, **kwargs)
        if ready is not None and getattr(_launch_seen, "watching", False):
            _launch_seen.ready = ready
        return ready

    wrapper._coop_launch_hook = True
    wrapper.__wrapped__ = method
    wrapper.__name__ = method.__name__
    return wrapper


_OPTIN_REFUSAL = re.compile(r"Requested dynamic shared memory \((\d+) bytes\) plus the kernel's static shared "
                            r"memory \((\d+) bytes\) exceeds the device maximum opt-in shared memory per block "
                            r"\((\d+) bytes\)")


def optin_refusal(exc):
    """``(requested dynamic bytes, static bytes, device limit)`` when ``exc`` is numba-cuda-mlir's
    native launcher refusing more shared memory than the device's opt-in limit, else None."""
    m = _OPTIN_REFUSAL.search(str(exc)) if isinstance(exc, ValueError) else None
    return tuple(int(g) for g in m.groups()) if m else None


def _scalar_types():
    import numpy as np

    # Python and NumPy scalars whose Numba type depends on the type alone.
    return frozenset([float, complex, np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                      np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128])


def install_array_key_fix():
    """Make numba-cuda-mlir 0.6's per-launch array check read PyTorch tensors and DLPack objects.

    Before reusing a kernel specialization, ``descriptor._array_cache_key`` compares each
    array argument's (dtype, ndim, layout, readonly) with the cached one.  For a PyTorch
    tensor ``np.dtype(tensor.dtype)`` raises (a ``torch.dtype``), so no launch-config
    specialized kernel (every cooperative one) accepts a tensor; for an object that has
    only ``__dlpack__`` it reads the cached type itself, so a second object of the same
    class but another dtype or rank reuses the stale specialization and computes garbage
    (seen on the H200: float32 data read as int32).  Such arguments are described from
    their DLPack view instead, as numba-cuda-mlir's typeof does.
    """
    from numba_cuda_mlir import descriptor

    check_upstream_names(modules=(descriptor.__name__,))
    original = descriptor._array_cache_key
    if getattr(original, "_coop_fixed", False):
        return

    def array_cache_key(arg, ty):
        dtype = getattr(arg, "dtype", None)
        if isinstance(dtype, np.dtype) or not hasattr(arg, "__dlpack__"):
            return original(arg, ty)
        from cuda.core.utils import StridedMemoryView

        view = StridedMemoryView.from_dlpack(arg, stream_ptr=-1)
        layout = getattr(view, "_layout", None)
        if layout is None:
            kind = getattr(ty, "layout", "A")
        else:
            kind = "C" if layout.is_contiguous_c else "F" if layout.is_contiguous_f else "A"
        try:
            dtype_key = np.dtype(view.dtype)
        except Exception:  # bfloat16 without ml_dtypes: the producer's own spelling
            dtype_key = str(dtype)
        return (dtype_key, len(view.shape), kind, bool(view.readonly))

    array_cache_key._coop_fixed = True
    array_cache_key.__wrapped__ = original
    # Upstream lacks an array key for PyTorch tensors and DLPack-only objects.
    descriptor._array_cache_key = array_cache_key


_torch_typeof_fixed = False


def install_torch_bfloat16_typeof():
    """Type PyTorch bfloat16 tensors as arrays of numba-cuda's ``bfloat16``.

    numba-cuda-mlir 0.6 types them with its own ``bf16``, which shares the storage of
    numba-cuda's ``bfloat16`` (``__nv_bfloat16``) but has no arithmetic and no conversion
    to it: ``t[i] + t[i]`` does not type, nor does storing a bfloat16 result into the
    tensor.  ``bfloat16`` is what every other bfloat16 array (NumPy with ml_dtypes, DLPack
    objects, ``cuda.local.array``) gets.  Called once torch is in use: importing
    numba-cuda-mlir's own torch typeof first makes ours the later (winning) registration.
    """
    global _torch_typeof_fixed
    if _torch_typeof_fixed:
        return
    import torch
    from numba_cuda_mlir.type_defs import torch_types

    check_upstream_names(modules=(torch_types.__name__,))
    _torch_typeof_fixed = True

    original = torch_types.typeof_torch_tensor

    # Upstream lacks numba-cuda's bfloat16 for bfloat16 tensors: ours, registered later, wins.
    @typeof_impl.register(torch.Tensor)
    def typeof_torch_tensor(val, c):
        ty = original(val, c)
        if val.dtype is torch.bfloat16:
            return ty.copy(dtype=types.bfloat16)
        return ty


def launcher_used(marshaller, ready, normalize_sharedmem=lambda value: int(value or 0)):
    """The native launcher that a configured launch (``descriptor._ArgMarshaller``) called,
    given what its preparation returned (``ready``), or None when that cannot be told.

    numba-cuda-mlir 0.6 (``_ArgMarshaller._launch``) calls the configured launcher, or, when
    the compile requires more dynamic shared memory than the launch configured, an
    adjusted copy keyed ``(id(kernel dispatcher), generation, bytes)``.
    """
    if ready is None or marshaller._launch_config is None or ready[0] is not marshaller._kernel_dispatcher:
        return None
    required = ready[3]
    if not required:
        return marshaller._launcher
    config = ready[2] if ready[2] is not None else marshaller._available_launch_config
    if required <= normalize_sharedmem(config["sharedmem"]):
        return marshaller._launcher
    if marshaller._adjusted_launcher_key == (id(ready[0]), ready[1], required):
        return marshaller._adjusted_launcher
    return None


def install_launch_hook(is_cooperative, make_error, check_arguments=None, make_limit_error=None, first_launch=None):
    """Wrap ``descriptor._ArgMarshaller.__call__`` (what ``kernel[grid, block](...)`` calls).

    1. The fast path.  Cooperative kernels are launch-configuration specialized, so every
       launch of one runs numba-cuda-mlir's full Python path (argument typing, literal
       arguments, a locked launch-config lookup) before its native launcher: ~8 us per
       launch more than a plain kernel, ~50 us with an ``items_per_thread`` argument.  After a
       launch succeeded, its native launcher is remembered per configured launch under
       the arguments' types (and literal values); a repeat launch with the same kind of
       arguments calls it directly, provided the kernel was not recompiled since
       (numba-cuda-mlir's launch-config generation) and its launch-config dispatcher is the
       same.  A kernel whose scratch lives in dynamic shared memory launches through
       numba-cuda-mlir's adjusted launcher (the configured one with the required bytes);
       which one a launch used is read from what its preparation returned (recorded per
       thread), and that one is remembered.  Device arrays reach it as their ``ArrayView``.
       Anything else (host arrays, new types or values, extensions, free-threaded locking)
       takes the full path.
    2. No driver.  The driver's "no CUDA driver / no device" error of a cooperative launch
       becomes ``make_error(dispatcher, exc)`` without the driver's 40-line chain; other
       kernels keep the driver's error.
    3. ``check_arguments(dispatcher, args)`` runs on the full path of cooperative launches,
       before numba-cuda-mlir types the arguments (the fast path never sees new kinds), and a
       cooperative kernel is marked launch-configuration specialized before its first launch
       (so that launch reserves the dynamic shared memory its compile requires).
    4. Too much shared memory for the device.  numba-cuda-mlir's native launcher refuses
       (ValueError) dynamic plus static shared memory above the device's opt-in limit; for a
       cooperative kernel that becomes ``make_limit_error(dispatcher, requested, static,
       limit, required)`` (``required``: the cooperative scratch's bytes, or None).
    5. ``first_launch(dispatcher)`` runs once per process, at the first launch of any kernel,
       before it compiles.
    """
    from numba_cuda_mlir import descriptor
    from numba_cuda_mlir.numba_cuda.cudadrv.devicearray import DeviceNDArray
    from numba_cuda_mlir.numba_cuda.cudadrv.error import (
        CudaDriverError,
        CudaSupportError,
    )

    # Before any patch; descriptor has just run (this is its import hook), other modules may be importing.
    check_upstream_names(modules=(descriptor.__name__, DeviceNDArray.__module__, CudaSupportError.__module__))
    marshaller = descriptor._ArgMarshaller
    original = marshaller.__call__
    if getattr(original, "_coop_launch_hook", False):
        return
    for name in ("_get_ready_launch", "_prepare_for_launch"):
        method = getattr(descriptor.MLIRDispatcher, name)
        if not getattr(method, "_coop_launch_hook", False):
            # Upstream lacks a way to learn the launch state (launcher, required bytes) a launch used.
            setattr(descriptor.MLIRDispatcher, name, _recording_ready_launch(method))
    scalar_types = _scalar_types()
    raise_as_cuda_error = descriptor._raise_as_cuda_error
    config_key_of = descriptor._launch_config_key
    normalize_sharedmem = descriptor._normalize_launch_sharedmem

    def cai_key(arg):
        descriptor._sync_cuda_array_interface_stream(arg)  # as the full path does, every launch
        return descriptor._array_cache_key(arg, None)

    def eligible(self) -> bool:
        dispatcher = self._dispatcher
        return (dispatcher is not None and getattr(dispatcher, "_requires_launch_config", False)
                and not self._extensions and getattr(dispatcher, "_can_compile", False)
                and getattr(dispatcher, "_launch_lock", None) is None and is_cooperative(dispatcher))

    def remember(self, args, ready):
        fast = self.__dict__.get("_coop_fast")
        if fast is None:
            fast = {} if eligible(self) else False
            self._coop_fast = fast
        if fast is False or len(fast) >= _FAST_ENTRIES_PER_LAUNCHER:
            return
        launcher = launcher_used(self, ready, normalize_sharedmem)
        if launcher is None:
            return
        dispatcher = self._dispatcher
        key, _ = launch_arguments(args, dispatcher._literal_arg_positions, DeviceNDArray, scalar_types, cai_key)
        if key is not None:
            fast[key] = _FastLaunch(launcher, self._launcher, self._launch_config_generation,
                                    config_key_of(self._launch_config), self._kernel_dispatcher,
                                    tuple(arg._numba_type_ for arg in args if type(arg) is DeviceNDArray))

    def limit_error(self, exc, required):
        refusal = optin_refusal(exc)
        dispatcher = getattr(self, "_dispatcher", None)
        if refusal is None or make_limit_error is None or not is_cooperative(dispatcher):
            return None
        return make_limit_error(dispatcher, *refusal, required)

    def __call__(self, *args):
        fast = self.__dict__.get("_coop_fast")
        if fast:
            dispatcher = self._dispatcher
            key, launch_args = launch_arguments(args, dispatcher._literal_arg_positions, DeviceNDArray,
                                                scalar_types, cai_key)
            entry = fast.get(key) if key is not None else None
            if (entry is not None and entry.base is self._launcher
                    and entry.generation == dispatcher._launch_config_generation
                    and dispatcher._launch_config_dispatchers.get(entry.config_key) is entry.kernel_dispatcher):
                error = None
                try:
                    return entry.launcher(*launch_args)
                except RuntimeError as exc:
                    raise_as_cuda_error(exc)
                except ValueError as exc:  # another device, with a smaller opt-in limit
                    error = limit_error(self, exc, None)
                    if error is None:
                        raise
                raise error from None
        error = None
        dispatcher = getattr(self, "_dispatcher", None)
        if first_launch is not None and not _first_launch_seen:
            _first_launch_seen.append(True)
            first_launch(dispatcher)
        if dispatcher is not None and is_cooperative(dispatcher):
            if check_arguments is not None:
                check_arguments(dispatcher, args)
            if not getattr(dispatcher, "_requires_launch_config", True):
                # numba-cuda-mlir 0.6 learns that a kernel is launch-configuration specialized,
                # and how much dynamic shared memory it requires, only while compiling it inside
                # its first launch, which then goes ahead without those bytes (an illegal
                # address once scratch lives in dynamic shared memory).  Marked first, that
                # launch takes the preparation path that compiles, then reserves them.
                dispatcher._mark_requires_launch_config()
        previous = (getattr(_launch_seen, "watching", False), getattr(_launch_seen, "ready", None))
        _launch_seen.watching, _launch_seen.ready = True, None
        try:
            result = original(self, *args)
            ready = _launch_seen.ready
        except (CudaSupportError, CudaDriverError) as exc:
            dispatcher = getattr(self, "_dispatcher", None)
            if not _is_no_device(exc) or not is_cooperative(dispatcher):
                raise
            error = make_error(dispatcher, exc)
        except ValueError as exc:
            ready = _launch_seen.ready
            error = limit_error(self, exc, ready[3] if ready is not None else None)
            if error is None:
                raise
        finally:
            _launch_seen.watching, _launch_seen.ready = previous
        if error is not None:
            raise error from None  # outside the except block: no "during handling" chain
        if fast is not False:
            remember(self, args, ready)
        return result

    __call__._coop_launch_hook = True
    __call__.__wrapped__ = original
    # Upstream lacks a launch hook (argument checks, named driver and shared-memory errors, a fast repeat).
    marshaller.__call__ = __call__


_first_launch_seen: list = []  # one entry once the process's first launch ran first_launch
_CONFIGURED_PER_KERNEL = 64
_INT_SHAPES = frozenset({int, (int,), (int, int), (int, int, int)})


def configure_key(griddim, blockdim, args, kwargs):
    """The exact ``kernel[grid, block, stream, sharedmem]`` spelling a configured launch is
    remembered under, or None when it is not one the shortcut knows (floats, NumPy or bool
    sizes, lists, keywords, clusters: upstream normalizes and checks those every time).

    Exact types, because ``1.0 == 1`` and ``True == 1`` hash alike: a float grid must still
    reach upstream's refusal, not the configuration of the int it equals.
    """
    if kwargs or len(args) > 2:
        return None
    for dim in (griddim, blockdim):
        kind = type(dim)
        if kind is not int and (kind is not tuple or tuple(map(type, dim)) not in _INT_SHAPES):
            return None
    key = [griddim, blockdim]
    for value in args:  # stream, sharedmem: their types too, for the same reason
        key.append((type(value), value))
    return tuple(key)


def install_configure_hook(check, is_cooperative):
    """Wrap ``MLIRDispatcher.configure`` (what ``kernel[grid, block]`` calls).

    1. ``check(dispatcher, blockdim)`` first: upstream accepts any block shape there and a
       cooperative kernel's impossible one would fail later, at its first call's line or in
       the driver.
    2. A repeat ``kernel[grid, block]`` of a cooperative kernel returns the configured launch
       it returned last time for the same spelling, without upstream's normalizing, key
       building and locked cache look-up (3.5 of the 4.5 us it took on the 2-core machine).
       The configured launch is the one upstream's own cache holds for that configuration;
       it is reused only while the kernel is launch-configuration specialized, has no
       extensions, and was not recompiled (its launch-config generation and kernel
       dispatcher are those it was configured with), and ``kernel.configure.cache_clear()``
       empties it with upstream's.  Anything else takes upstream's path.
    3. ``kernel[grid, block]`` itself (``MLIRDispatcher.__getitem__``) answers a repeat with the
       very same grid and block objects (a constant ``(8, 4, 4)`` or a module's ``BLOCK`` is
       one object at every call) from the last configuration it returned, under the same
       conditions, before upstream's three calls down to ``configure`` (a repeat 3-D
       spelling took 1.7-3.2 us on the 2-core machine, 0.4-0.5 us answered here).  Ints and
       all-int tuples are immutable, so the same object is the same spelling.
    """
    from numba_cuda_mlir import descriptor

    check_upstream_names(modules=(descriptor.__name__,))
    original = descriptor.MLIRDispatcher.configure
    if getattr(original, "_coop_configure_hook", False):
        return

    def configure(self, griddim, blockdim, *args, **kwargs):
        configured = self.__dict__.get("_coop_configured")
        key = None
        if configured is not None:
            key = configure_key(griddim, blockdim, args, kwargs)
            try:
                entry = configured.get(key) if key is not None else None
            except TypeError:  # an unhashable stream: upstream's error names it
                key = entry = None
            if (entry is not None and entry[1] == self._launch_config_generation and entry[2] is self._c
                    and not self.extensions):
                if len(key) == 2:  # kernel[grid, block]: the same objects next time skip even this
                    self._coop_last_configure = (griddim, blockdim, *entry)
                return entry[0]
        check(self, blockdim)
        marshaller = original(self, griddim, blockdim, *args, **kwargs)
        if configured is None:
            if not is_cooperative(self):
                return marshaller
            configured = self.__dict__.setdefault("_coop_configured", {})
            key = configure_key(griddim, blockdim, args, kwargs)  # hashable: upstream hashed it
        # Only a launch-configuration specialized configuration: before the kernel's first
        # launch marks it so, upstream configures it differently (and does not recompile).
        if (key is not None and self._requires_launch_config and not self.extensions
                and marshaller._launch_config_generation == self._launch_config_generation
                and len(configured) < _CONFIGURED_PER_KERNEL):
            configured[key] = entry = (marshaller, self._launch_config_generation, self._c)
            if len(key) == 2:
                self._coop_last_configure = (griddim, blockdim, *entry)
        return marshaller

    original_getitem = descriptor.MLIRDispatcher.__getitem__

    def __getitem__(self, args):
        last = self.__dict__.get("_coop_last_configure")
        if (last is not None and type(args) is tuple and len(args) == 2 and args[0] is last[0]
                and args[1] is last[1] and last[3] == self._launch_config_generation and last[4] is self._c
                and not self.extensions):
            return last[2]
        return original_getitem(self, args)

    clear = descriptor.MLIRDispatcher._clear_configure_cache

    def clear_configure_cache(self):
        # kernel.configure.cache_clear() empties ours too
        self.__dict__.pop("_coop_configured", None)
        self.__dict__.pop("_coop_last_configure", None)
        return clear(self)

    clear_configure_cache.__wrapped__ = clear
    # Upstream's configuration cache can be emptied by the user; ours goes with it.
    descriptor.MLIRDispatcher._clear_configure_cache = clear_configure_cache
    configure._coop_configure_hook = True
    configure.__wrapped__ = original
    __getitem__.__wrapped__ = original_getitem
    # Upstream's kernel[grid, block] goes through three calls before configure.
    descriptor.MLIRDispatcher.__getitem__ = __getitem__
    # Upstream lacks a check of the block shape at configure (kernel[grid, block]) and a
    # configure cheaper than its 3.5 us for a repeat of the same spelling.
    descriptor.MLIRDispatcher.configure = configure


def _is_no_device(exc) -> bool:
    """The driver's errors for "no library", "no device" or "driver init failed"."""
    from numba_cuda_mlir.numba_cuda.cudadrv.error import CudaSupportError

    if isinstance(exc, CudaSupportError):
        return True
    text = str(exc)
    return any(s in text for s in ("CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_NOT_INITIALIZED",
                                   "CUDA_ERROR_INSUFFICIENT_DRIVER", "no CUDA-capable device"))


def install_context_hook() -> None:
    """The process's first CUDA context may start NVRTC's precompiled header
    (backends/_first_compile.py): ``Device.get_primary_context`` creates it, with no hook."""
    from numba_cuda_mlir.numba_cuda.cudadrv import driver

    from .._first_compile import install_on_device

    check_upstream_names(modules=(driver.__name__,))
    install_on_device(driver.Device)


def install_definition_hook() -> None:
    """The process's first kernel that refers to cuda.coop makes the backend ready, and may
    start NVRTC's precompiled header, at its definition (backends/_first_compile.py):
    ``@cuda.jit`` creates an ``MLIRDispatcher``, with no hook."""
    from numba_cuda_mlir import descriptor

    from .._first_compile import install_on_definition

    check_upstream_names(modules=(descriptor.__name__,))
    install_on_definition(descriptor.MLIRDispatcher, "numba-cuda-mlir")
