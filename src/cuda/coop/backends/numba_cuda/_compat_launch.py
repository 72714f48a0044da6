"""Classic numba-cuda's launch path and kernel cache, patched: dynamic scratch above 48 KiB,
launches in thread-block clusters, the block-shape check at ``kernel[grid, block]``, and
cooperative kernels kept out of ``cache=True``.

Each patch names what upstream lacks; delete it the day upstream has it.  Like
``_compat.py`` (its typing, lowering and compile half), this is a module where numba-cuda's
private names may be imported, and each of them is an entry of ``UPSTREAM``
(``_upstream_names.py``), checked before the patch that needs it.
"""

from __future__ import annotations

import functools
import threading

from ._compat import (
    CLUSTER_LAUNCH, COOP_LINK_PREFIX, DYNAMIC_SCRATCH_BYTES, CUDADispatcher, _driver, _Kernel, _LaunchConfiguration,
    normalize_kernel_dimensions,
)

def install_uncached_coop_kernels():
    """``@cuda.jit(cache=True)`` never writes a kernel that links cuda-coop providers.

    numba-cuda 0.30 cannot pickle a code library with link items (a RuntimeError at the
    kernel's first launch), and a cached cooperative kernel could outlive a cuda-coop or
    CCCL change.  As on numba-cuda-mlir, whose cache never holds them, such kernels compile
    in each process (the provider cache, keyed by CCCL's identity, keeps that fast); the
    kernel's other overloads, and other kernels, are cached as before.
    """
    from numba.cuda.dispatcher import CUDACacheImpl

    original = CUDACacheImpl.check_cachable
    if getattr(original, "_coop_uncached", False):
        return

    def check_cachable(self, cres):
        library = getattr(cres, "_codelibrary", None)
        if any(str(getattr(item, "name", "")).startswith(COOP_LINK_PREFIX)
               for item in getattr(library, "_linking_files", ())):
            return False
        return original(self, cres)

    check_cachable._coop_uncached = True
    check_cachable.__wrapped__ = original
    # Upstream lacks a pickle of code libraries with link items (and a cache key for CCCL).
    CUDACacheImpl.check_cachable = check_cachable


# The cluster shape of the launch in progress on this thread (None: no cluster).
_cluster_launch = threading.local()
_CLUSTER_CONFIGS_KEPT = 128  # cluster launch configurations remembered per kernel


_configured: list = []  # one entry once the process's first configure ran first_configure


def install_coop_launches(check_block=None, first_configure=None):
    """Launches that numba-cuda 0.30 cannot make: above 48 KiB of dynamic scratch, and in
    thread-block clusters.

    - Dynamic scratch.  numba-cuda reads a launch's ``sharedmem`` before any launch callback
      runs and never raises a kernel's dynamic shared memory limit (48 KiB without it).  A
      kernel whose compile left bytes in ``DYNAMIC_SCRATCH_BYTES`` gets a ``launch`` of its
      own that asks for at least those bytes and, on a device's first launch above 48 KiB,
      raises the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize.
    - Clusters.  ``kernel[grid, block, stream, sharedmem, cluster]`` (and
      ``configure(..., cluster=)``) makes a launch configuration that carries the cluster
      shape; it is part of the launch-configuration key, so a kernel that reads its launch
      (every cooperative call does) is compiled per cluster shape, and its launch goes
      through cuda.core's ``LaunchConfig(cluster=...)``, which numba-cuda's never sets.

    Kernels without such scratch, launched without a cluster, are untouched.  With
    ``check_block``, ``check_block(dispatcher, blockdim)`` runs first at every configure
    (the named error of an impossible block shape, at the launch line), and
    ``first_configure(dispatcher)`` at the first configure of the process, of any kernel.
    """
    original_init = _Kernel.__init__
    if getattr(original_init, "_coop_launch", False):
        return

    def __init__(self, *args, **kws):
        original_init(self, *args, **kws)
        scratch = DYNAMIC_SCRATCH_BYTES.get(self.fndesc.llvm_func_name, 0)
        if scratch:
            self._coop_scratch = scratch
            self.launch = functools.partial(_coop_launch, self)  # upstream's never raises the 48 KiB limit

    __init__._coop_launch = True
    __init__.__wrapped__ = original_init
    # Upstream lacks a launch that raises the dynamic shared memory limit or makes clusters.
    _Kernel.__init__ = __init__

    original_key = CUDADispatcher._launch_config_key

    def _launch_config_key(launch_config):
        key = original_key(launch_config)
        cluster = getattr(launch_config, "cluster", None)
        return key if cluster is None else (*key, ("cluster", cluster))

    _launch_config_key.__wrapped__ = original_key
    # Upstream's launch-configuration key lacks the cluster shape.
    CUDADispatcher._launch_config_key = staticmethod(_launch_config_key)

    original_configure = CUDADispatcher.configure
    original_getitem = CUDADispatcher.__getitem__

    def configure(self, griddim, blockdim, stream=0, sharedmem=0, cluster=None):
        if first_configure is not None and not _configured:
            _configured.append(True)
            first_configure(self)
        if check_block is not None:
            check_block(self, blockdim)
        if cluster is None:
            return original_configure(self, griddim, blockdim, stream, sharedmem)
        return _cluster_configuration(self, griddim, blockdim, stream, sharedmem, cluster)

    def __getitem__(self, args):
        if isinstance(args, tuple) and len(args) == 5:
            return self.configure(*args)
        return original_getitem(self, args)

    configure.__wrapped__, __getitem__.__wrapped__ = original_configure, original_getitem
    # Upstream lacks cluster launches (kernel[grid, block, stream, sharedmem, cluster]) and a
    # block-shape check at configure.
    CUDADispatcher.configure = configure
    CUDADispatcher.__getitem__ = __getitem__


class _ClusterLaunchConfiguration(_LaunchConfiguration):
    """numba-cuda's launch configuration with a cluster shape (``cluster``, a 3-tuple)."""

    def __call__(self, *args):
        _cluster_launch.value = self.cluster
        try:
            return self.dispatcher.call(args, self)
        finally:
            _cluster_launch.value = None


def _cluster_configuration(dispatcher, griddim, blockdim, stream, sharedmem, cluster):
    from .._binary import dims3

    key = (griddim, blockdim, stream, sharedmem, cluster)
    memo = dispatcher.__dict__.setdefault("_coop_cluster_configs", {})
    try:
        config = memo.get(key)
    except TypeError:  # an unhashable argument: no memo
        key, config = None, None
    if config is not None:
        return config
    cluster = dims3(cluster, "cluster", where=CLUSTER_LAUNCH)
    griddim, blockdim = normalize_kernel_dimensions(griddim, blockdim)
    if any(g % c for g, c in zip(griddim, cluster)):
        from ..._errors import UnsupportedClusterShapeError

        raise UnsupportedClusterShapeError(
            f"{CLUSTER_LAUNCH}: the grid {tuple(griddim)} is not a whole number of clusters {cluster} in every "
            "dimension, so the driver would refuse the launch; make each grid dimension a multiple of the "
            "cluster's")
    config = _ClusterLaunchConfiguration(dispatcher, griddim, blockdim, stream, sharedmem)
    config.cluster = cluster
    config.pre_launch_callbacks.append(_through_coop_launch)
    if key is not None:
        if len(memo) >= _CLUSTER_CONFIGS_KEPT:  # as numba-cuda's own lru_cache(128) of configure
            memo.clear()
        memo[key] = config
    return config


def _through_coop_launch(kernel, launch_config):
    """A launch callback: the kernel launches through ``_coop_launch`` from now on."""
    if "launch" not in kernel.__dict__:
        kernel.launch = functools.partial(_coop_launch, kernel)  # upstream's launch makes no clusters


def _coop_launch(kernel, args, griddim, blockdim, stream=0, sharedmem=0):
    scratch = kernel.__dict__.get("_coop_scratch", 0)
    cluster = getattr(_cluster_launch, "value", None)
    dynamic = int(sharedmem or 0)
    if scratch:
        dynamic = max(dynamic, scratch)
        _reserve_dynamic_shared(kernel, dynamic, scratch)
    if cluster is None:
        return _Kernel.launch(kernel, args, griddim, blockdim, stream, dynamic)
    return _launch_in_clusters(kernel, cluster, args, griddim, blockdim, stream, dynamic)


def _reserve_dynamic_shared(kernel, dynamic, scratch):
    from ...core.storage import STATIC_SHARED_LIMIT, launch_limit_error

    cufunc = kernel._codelibrary.get_cufunc()
    raised = kernel.__dict__.setdefault("_coop_dynamic_limit", {})
    if raised.get(id(cufunc), 0) < dynamic:
        static = cufunc.attrs.shared
        device = cufunc.device
        limit = device.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        if static + dynamic > limit:
            raise launch_limit_error(kernel.py_func.__name__, dynamic, static, limit, scratch)
        if static + dynamic > STATIC_SHARED_LIMIT:
            attr = _driver.binding.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _driver.driver.cuKernelSetAttribute(attr, dynamic, cufunc.handle, device.id)
        raised[id(cufunc)] = dynamic


def _launch_in_clusters(kernel, cluster, args, griddim, blockdim, stream, sharedmem):
    """numba-cuda 0.30's ``_Kernel.launch`` with a cluster shape in cuda.core's LaunchConfig."""
    from cuda.core import LaunchConfig, launch
    from numba.cuda._compat import CUDA_CORE_GE_1_0

    from ..._errors import BackendFeatureUnsupportedError

    if kernel.debug:
        raise BackendFeatureUnsupportedError(
            f"{CLUSTER_LAUNCH} of {kernel.py_func.__name__}: a cluster launch of a debug=True kernel is not "
            "supported by the classic numba-cuda backend (its cluster launch does not read back numba-cuda's "
            "debug exception report); compile it without debug=True, or with numba-cuda-mlir")
    cufunc = kernel._codelibrary.get_cufunc()
    retr, kernelargs = [], []
    for t, v in zip(kernel.argument_types, args):
        kernel._prepare_args(t, v, stream, retr, kernelargs)
    cooperative = {"is_cooperative" if CUDA_CORE_GE_1_0 else "cooperative_launch": kernel.cooperative}
    # numba-cuda's grid counts blocks; cuda.core's counts clusters when a cluster is given
    # (since cuda.core 0.4; cuda-coop requires 1.0).  The configuration checked that it divides.
    clusters = tuple(g // c for g, c in zip(griddim, cluster))
    config = LaunchConfig(grid=clusters, block=blockdim, shmem_size=sharedmem, cluster=cluster, **cooperative)
    launch(stream, config, cufunc.kernel, *kernelargs)
    for writeback in retr:
        writeback()


def install_context_hook() -> None:
    """The process's first CUDA context may start NVRTC's precompiled header
    (backends/_first_compile.py): ``Device.get_primary_context`` creates it, with no hook."""
    from .._first_compile import install_on_device

    install_on_device(_driver.Device)


def install_definition_hook() -> None:
    """The process's first kernel that refers to cuda.coop makes the backend ready, and may
    start NVRTC's precompiled header, at its definition (backends/_first_compile.py):
    ``@cuda.jit`` creates a ``CUDADispatcher``, with no hook."""
    from .._first_compile import install_on_definition

    install_on_definition(CUDADispatcher, "numba-cuda")
