"""The repeat-launch fast path of cooperative kernels (backends/numba_mlir/_compat.py).

A repeat launch with the same kind of arguments calls the native launcher that the
previous launch used; everything else takes numba-cuda-mlir's full path.  The CPU
tests check what decides "the same kind"; the GPU tests check that results stay right
when the kind changes between launches (literal values, dtypes, host arrays,
CuPy arrays) and that plain kernels are left alone.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.backends.numba_mlir._compat_launch import _scalar_types, launch_key

from ..kernelgen import module_from_source  # compiler named at each call: these are numba-cuda-mlir's


class _DeviceArray:
    """Stands in for numba-cuda-mlir's DeviceNDArray: launch_key reads ``_numba_type_``."""

    def __init__(self, numba_type):
        self._numba_type_ = numba_type


class _CaiArray:
    __cuda_array_interface__ = {"shape": (4,), "typestr": "<i4", "data": (0, False), "version": 3}


SCALARS = _scalar_types()


def key(args, literal=frozenset()):
    return launch_key(args, literal, _DeviceArray, SCALARS, cai_key=lambda a: ("cai", "<i4"))


@pytest.mark.unit
def test_key_is_types_and_literal_values():
    a, b = _DeviceArray("int32[::1]"), _DeviceArray("float32[::1]")
    assert key((a, 4)) == ("int32[::1]", int)
    assert key((a, 4)) == key((a, 5))  # a plain int argument: one specialization
    assert key((a, 4), literal={1}) != key((a, 5), literal={1})  # items_per_thread=4 vs 5
    assert key((a, 4), literal={1}) == ("int32[::1]", (int, 4))
    assert key((a, 4)) != key((b, 4))
    assert key((a, True), literal={1}) != key((a, False), literal={1})
    assert key((a, 1.5)) == ("int32[::1]", float)
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


def _expected(src, ipt):
    tiles = src.reshape(BLOCKS, THREADS * ipt)
    return (tiles + tiles.sum(axis=1, keepdims=True, dtype=src.dtype)).reshape(-1)


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
