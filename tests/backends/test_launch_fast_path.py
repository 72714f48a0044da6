"""The repeat-launch and repeat-configure fast paths of cooperative kernels
(backends/numba_mlir/_compat_launch.py).

A repeat launch with the same kind of arguments calls the native launcher that the
previous launch used, and a repeat ``kernel[grid, block]`` with the same spelling returns
the configured launch of last time; everything else takes numba-cuda-mlir's full path.  The CPU
tests check what decides "the same kind"; the GPU tests check that results stay right
when the kind changes between launches (literal values, dtypes, host arrays,
CuPy arrays) and that plain kernels are left alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.backends.numba_mlir._compat_launch import _scalar_types, configure_key, launch_arguments

from ..kernelgen import module_from_source  # compiler named at each call: these are numba-cuda-mlir's


class _DeviceArray:
    """Stands in for numba-cuda-mlir's DeviceNDArray: launch_arguments reads ``_numba_type_``,
    ``stream``, ``dtype`` and (once per array and stream) the CUDA array interface, whose
    builds it counts."""

    def __init__(self, numba_type, pointer=1024, stream=0):
        self._numba_type_, self.pointer, self.stream, self.builds = numba_type, pointer, stream, 0
        self.dtype = np.dtype(np.int32)

    @property
    def __cuda_array_interface__(self):
        self.builds += 1
        return {"shape": (4,), "strides": None, "data": (self.pointer, False), "typestr": "<i4",
                "stream": None, "version": 3}


class _CaiArray:
    __cuda_array_interface__ = {"shape": (4,), "typestr": "<i4", "data": (0, False), "version": 3}


SCALARS = _scalar_types()


def arguments(args, literal=frozenset()):
    return launch_arguments(args, literal, _DeviceArray, SCALARS, cai_key=lambda a: ("cai", "<i4"))


def key(args, literal=frozenset()):
    return arguments(args, literal)[0]


@pytest.mark.unit
def test_key_is_types_and_literal_values():
    a, b = _DeviceArray("int32[::1]"), _DeviceArray("float32[::1]")
    assert key((a, 4)) == (id(a._numba_type_), int)  # types are interned: their identity
    assert key((a, 4)) == key((a, 5))  # a plain int argument: one specialization
    assert key((a, 4), literal={1}) != key((a, 5), literal={1})  # items_per_thread=4 vs 5
    assert key((a, 4), literal={1}) == (id(a._numba_type_), (int, 4))
    assert key((a, 4)) != key((b, 4))
    assert key((a, True), literal={1}) != key((a, False), literal={1})
    assert key((a, 1.5)) == (id(a._numba_type_), float)
    assert key((np.float32(1), np.int8(2))) == (np.float32, np.int8)
    assert key((_CaiArray(),)) == ((_CaiArray, ("cai", "<i4")),)


@pytest.mark.unit
@pytest.mark.parametrize("arg", [np.zeros(4), (1, 2), [1], 1 << 63, -(1 << 63) - 1, "text", None,
                                 np.datetime64("2026-01-01")],
                         ids=["host-array", "tuple", "list", "uint64-int", "too-small", "str", "None", "datetime"])
def test_arguments_the_fast_path_does_not_know_take_the_full_path(arg):
    assert key((_DeviceArray("int32[::1]"), arg)) is None


@pytest.mark.unit
def test_hook_is_installed_once():
    from numba_cuda_mlir import descriptor  # noqa: F401  (the class the hook wraps)

    from cuda.coop.backends.numba_mlir import _compat_launch as C
    from cuda.coop.backends.numba_mlir import launch

    call = descriptor._ArgMarshaller.__call__
    assert getattr(call, "_coop_launch_hook", False)
    C.install_launch_hook(launch.uses_coop, launch.no_device_error)
    assert descriptor._ArgMarshaller.__call__ is call


@pytest.mark.unit
def test_configure_key_is_the_exact_spelling():
    assert configure_key(1, 128, (), {}) == (1, 128)
    assert configure_key((2, 3), (32, 4, 1), (0, 256), {}) == ((2, 3), (32, 4, 1), (int, 0), (int, 256))
    assert configure_key(1, 128, (None,), {}) == (1, 128, (type(None), None))
    # 1.0 == 1 and True == 1: such spellings take upstream's path (which refuses or normalizes them).
    for grid, block in [(1.0, 128), (True, 128), (np.int64(1), 128), (1, [128]), (1, (128.0,)), (1, (1, 2, 3, 4))]:
        assert configure_key(grid, block, (), {}) is None, (grid, block)
    assert configure_key(1, 128, (0,), {"cluster": (2, 1, 1)}) is None
    assert configure_key(1, 128, (0, 0.0), {}) != configure_key(1, 128, (0, 0), {})


@pytest.mark.unit
def test_array_views_are_made_once_per_array_and_stream():
    a, b = _DeviceArray("int32[::1]", 1024), _DeviceArray("int32[::1]", 2048)
    _, first = arguments((a, 7, b))
    assert first[1] == 7 and [v.__cuda_array_interface__["data"][0] for v in (first[0], first[2])] == [1024, 2048]
    assert first[0].dtype == a.dtype
    _, again = arguments((a, 8, b))
    assert again[0] is first[0] and again[2] is first[2] and a.builds == b.builds == 1
    a.stream = object()  # a new stream: a new view
    _, third = arguments((a, 8, b))
    assert third[0] is not first[0] and third[0].stream is a.stream and a.builds == 2
    assert arguments((a, np.zeros(4))) == (None, None)  # nothing for the full path


@pytest.mark.unit
def test_repeat_configure_returns_upstreams_configured_launch():
    """``kernel[grid, block]`` needs no GPU: the shortcut is checked against upstream's own
    configure, its invalidation on recompile, and the spellings it must not take."""
    import warnings

    from numba_cuda_mlir import descriptor
    from numba_cuda_mlir.numba_cuda.core.errors import NumbaPerformanceWarning

    upstream_configure = descriptor.MLIRDispatcher.configure.__wrapped__
    # A module of its own (SOURCE is defined below, read at call time): the GPU tests'
    # kernels keep their own configured launches.
    ns = module_from_source(SOURCE + "\n# configure test\n", "numba-cuda-mlir")
    kernel = ns.copy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        first = kernel[1, 128]
        # Before the first launch marks the kernel launch-configuration specialized,
        # nothing is remembered (upstream configures it differently then).
        assert not kernel.__dict__.get("_coop_configured")
        kernel._mark_requires_launch_config()  # what the first launch does
        second = kernel[1, 128]
        assert second is not first and second._launch_config is not None
        assert kernel[1, 128] is second is upstream_configure(kernel, 1, 128)
        assert kernel.__dict__["_coop_configured"][(1, 128)][0] is second
        # The same grid and block objects again: answered by __getitem__ before configure.
        block = (32, 4, 1)
        by_configure = kernel[1, block]
        assert kernel.__dict__["_coop_last_configure"][:3] == (1, block, by_configure)
        assert kernel[1, block] is by_configure
        assert kernel[1, (32, 4, 1)] is by_configure  # another tuple of the same spelling: configure's key
        assert kernel[1, 128] is second
        assert kernel[(1,), (128,)] is second  # upstream normalizes both to one configuration
        assert kernel[1, 128, 0] is not second  # a stream is another configuration
        assert kernel[1, 64] is not second
        with pytest.raises(Exception, match="must be|integer|int"):  # upstream's refusal, not the cached int's launch
            kernel[1.0, 128]
        # A cleared configuration cache (what recompile() does) is never answered from ours.
        kernel.configure.cache_clear()
        assert "_coop_last_configure" not in kernel.__dict__
        third = kernel[1, 128]
        assert third is not second and third is upstream_configure(kernel, 1, 128)
        assert third._launch_config_generation == kernel._launch_config_generation
        # recompile() (a new launch-config generation, a new kernel dispatcher) neither.
        kernel.recompile()
        assert kernel.__dict__["_coop_last_configure"][:3] == (1, 128, third)
        fourth = kernel[1, 128]
        assert fourth is not third and fourth._launch_config_generation == kernel._launch_config_generation
        assert kernel[1, 128] is fourth
        # Kernels without cuda.coop keep upstream's configure alone.
        plain = ns.plain
        plain[1, 128]
        plain._mark_requires_launch_config()
        plain[1, 128]
        assert "_coop_configured" not in plain.__dict__


SOURCE = """
@cuda.jit
def copy(src, dst, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    base = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, src[base:], items, algorithm="striped")
    total = coop.sum(block, items)
    for i in range(items_per_thread):
        items[i] = items[i] + total
    coop.store(block, dst[base:], items, algorithm="striped")


@cuda.jit
def plain(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]
"""

THREADS, BLOCKS = 64, 3


def _expected(src, ipt, threads=THREADS):
    tiles = src.reshape(BLOCKS, threads * ipt)
    return (tiles + tiles.sum(axis=1, keepdims=True, dtype=src.dtype)).reshape(-1)


@pytest.mark.gpu
def test_repeat_configures_stay_right_across_blocks_streams_and_recompiles():
    """``kernel[grid, block](...)`` spelled at every launch, as a user's loop does: the
    configured launch remembered per spelling must follow block sizes, streams and a
    recompile()."""
    from numba_cuda_mlir import cuda

    # A module of its own: the configured launches it leaves behind are not the other tests'.
    kernel = module_from_source(SOURCE + "\n# repeat-configure test\n", "numba-cuda-mlir").copy
    rng = np.random.default_rng(11)
    stream = cuda.stream()
    plan = [(64, None), (128, None), (64, stream), (128, None), (64, None), ("recompile", None),
            (128, stream), (64, None), (128, None)] * 2
    for threads, launch_stream in plan:
        if threads == "recompile":
            kernel.recompile()
            continue
        n = BLOCKS * threads * 2
        src_h = rng.integers(-100, 100, size=n).astype(np.int32)
        src, dst = cuda.to_device(src_h), cuda.to_device(np.full(n, -7, dtype=np.int32))
        if launch_stream is None:
            kernel[BLOCKS, threads](src, dst, 2)
        else:
            kernel[BLOCKS, threads, launch_stream](src, dst, 2)
            launch_stream.synchronize()
        np.testing.assert_array_equal(dst.copy_to_host(), _expected(src_h, 2, threads),
                                      err_msg=f"block={threads} stream={launch_stream}")
    assert kernel[BLOCKS, 64] is kernel[BLOCKS, 64]


@pytest.mark.gpu
def test_repeat_launches_stay_right_when_arguments_change():
    from numba_cuda_mlir import cuda

    kernel = module_from_source(SOURCE, "numba-cuda-mlir").copy
    rng = np.random.default_rng(5)
    launch = kernel[BLOCKS, THREADS]
    # items_per_thread is a literal (the kernel is specialized per value); dtypes change the
    # specialization too.  Interleaved, so each launch repeats an earlier kind.
    plan = [(4, "int32"), (8, "int32"), (4, "int32"), (4, "float64"), (8, "int32"), (8, "float32"),
            (4, "float64"), (8, "float32")] * 2
    for ipt, dtype in plan:
        n = BLOCKS * THREADS * ipt
        src_h = rng.integers(-100, 100, size=n).astype(dtype)
        src = cuda.to_device(src_h)
        dst = cuda.to_device(np.full(n, -7, dtype=dtype))
        launch(src, dst, ipt)
        np.testing.assert_array_equal(dst.copy_to_host(), _expected(src_h, ipt), err_msg=f"ipt={ipt} {dtype}")
    # Four kinds of launch were remembered, no more.
    assert len(launch._coop_fast) == 4


STRIDED_SOURCE = """
@cuda.jit
def offset_sum(src, dst):
    block = coop.this_block()
    t = cuda.threadIdx.x
    total = coop.sum(block, src[t])
    dst[t] = src[t] + total
"""


@pytest.mark.gpu
def test_fast_launches_follow_each_arrays_pointer_strides_and_stream():
    """Arrays of one Numba type (one fast-path entry) but other pointers, shapes and
    strides, and an array given a new stream: each launch must read its own arrays."""
    from numba_cuda_mlir import cuda

    kernel = module_from_source(STRIDED_SOURCE, "numba-cuda-mlir").offset_sum
    launch = kernel[1, THREADS]
    rng = np.random.default_rng(3)
    big_h = rng.integers(-1000, 1000, size=4096).astype(np.int32)
    big = cuda.to_device(big_h)
    out = cuda.to_device(np.full(4096, -7, dtype=np.int32))
    cases = [(slice(o, o + THREADS), slice(o, o + THREADS)) for o in (0, 64, 1000, 5)]  # C layout
    cases += [(slice(o, o + THREADS * s, s), slice(o, o + THREADS * r, r))  # A layout
              for o, s, r in ((0, 2, 3), (7, 3, 2), (100, 5, 1), (1, 2, 2))]
    for round_ in range(2):
        for src_slice, dst_slice in cases:
            out.copy_to_device(np.full(4096, -7, dtype=np.int32))
            launch(big[src_slice], out[dst_slice])
            src_h = big_h[src_slice]
            want = np.full(4096, -7, dtype=np.int32)
            want[dst_slice] = src_h + src_h.sum(dtype=np.int32)
            np.testing.assert_array_equal(out.copy_to_host(), want, err_msg=f"{src_slice} -> {dst_slice} ({round_})")
    src, dst = big[:THREADS], cuda.device_array(THREADS, dtype=np.int32)
    for stream in (cuda.stream(), 0, cuda.stream()):
        src.stream = dst.stream = stream
        launch(src, dst)
        cuda.synchronize()
        np.testing.assert_array_equal(dst.copy_to_host(), big_h[:THREADS] + big_h[:THREADS].sum(dtype=np.int32))
    assert 1 <= len(launch._coop_fast) <= 4  # C and A layouts of source and destination


@pytest.mark.gpu
def test_host_and_cupy_arrays_between_fast_launches():
    from numba_cuda_mlir import cuda

    kernel = module_from_source(SOURCE, "numba-cuda-mlir").copy
    launch = kernel[BLOCKS, THREADS]
    src_h = np.arange(BLOCKS * THREADS * 2, dtype=np.int32)
    for round_ in range(3):
        dst_d = cuda.device_array_like(src_h)
        launch(cuda.to_device(src_h), dst_d, 2)
        np.testing.assert_array_equal(dst_d.copy_to_host(), _expected(src_h, 2))
        dst_h = np.full_like(src_h, -1)
        launch(src_h, dst_h, 2)  # host arrays: copied in and back by the full path
        np.testing.assert_array_equal(dst_h, _expected(src_h, 2), err_msg=f"host round {round_}")
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    for _ in range(3):
        dst_c = cupy.full(src_h.shape, -1, dtype=cupy.int32)
        launch(cupy.asarray(src_h), dst_c, 2)
        np.testing.assert_array_equal(cupy.asnumpy(dst_c), _expected(src_h, 2))


@pytest.mark.gpu
def test_plain_kernels_keep_the_full_path():
    from numba_cuda_mlir import cuda

    kernel = module_from_source(SOURCE, "numba-cuda-mlir").plain
    src = cuda.to_device(np.arange(100, dtype=np.float32))
    dst = cuda.device_array_like(src)
    launch = kernel[1, 128]
    launch(src, dst)
    launch(src, dst)
    np.testing.assert_array_equal(dst.copy_to_host(), src.copy_to_host())
    assert launch.__dict__.get("_coop_fast") is False
