"""coop.reduce()/coop.sum() over coop.this_cluster(): every thread of every block of a
thread-block cluster (CC 9.0+), partials combined through distributed shared memory."""

from __future__ import annotations

import numpy as np
import pytest

import cuda.coop as coop
from cuda.coop.numba_mlir import compile_cubin

THREADS = 128


def _kernels():
    from numba_cuda_mlir import cuda

    @cuda.jit
    def cluster_sum(src, out):
        c = coop.this_cluster()
        g = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        out[g] = coop.sum(c, src[g])

    @cuda.jit
    def cluster_max(src, out):
        c = coop.this_cluster()
        g = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        out[g] = coop.reduce(c, src[g], binary_op="max")

    return cluster_sum, cluster_max


@pytest.mark.compile
@pytest.mark.parametrize("cluster", [1, 2, 4])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_cluster_reduce_compiles(cluster, dtype):
    a = np.zeros(THREADS * 4, dtype)
    for k in _kernels():
        kb = compile_cubin(k, (a, a), cc=(9, 0), block=THREADS, grid=4, cluster=cluster)
        assert kb.cubin


@pytest.mark.compile
def test_cluster_reduce_without_cluster_launch():
    a = np.zeros(THREADS * 4, np.int32)
    with pytest.raises(coop.ClusterLaunchRequiredError, match="kernel\\[grid, block, stream"):
        compile_cubin(_kernels()[0], (a, a), cc=(9, 0), block=THREADS, grid=4)


@pytest.mark.compile
def test_cluster_reduce_below_cc90():
    a = np.zeros(THREADS * 4, np.int32)
    with pytest.raises(coop.UnsupportedComputeCapabilityError, match="sm_80"):
        compile_cubin(_kernels()[0], (a, a), cc=(8, 0), block=THREADS, grid=4, cluster=2)


@pytest.mark.compile
def test_grid_not_a_multiple_of_the_cluster():
    a = np.zeros(THREADS * 4, np.int32)
    with pytest.raises(coop.UnsupportedClusterShapeError, match="multiple"):
        compile_cubin(_kernels()[0], (a, a), cc=(9, 0), block=THREADS, grid=3, cluster=2)


@pytest.mark.compile
@pytest.mark.parametrize("name, value, error", [
    ("cluster", (2, 2, 2, 2), coop.InvalidArgumentValueError),
    ("cluster", 0, coop.InvalidArgumentValueError),
    ("cluster", "2", coop.InvalidArgumentTypeError),
    ("cluster", 2.0, coop.InvalidArgumentTypeError),
    ("block", (32, 2, 2, 2), coop.InvalidArgumentValueError),
    ("grid", (4, 0), coop.InvalidArgumentValueError),
    ("grid", (), coop.InvalidArgumentTypeError),
])
def test_malformed_launch_shapes_of_compile_cubin(name, value, error):
    a = np.zeros(THREADS * 4, np.int32)
    shape = {"block": THREADS, "grid": 4, "cluster": 2, name: value}
    with pytest.raises(error, match=f"compile_cubin\\(\\): {name}=.* is not a launch dimension.*e\\.g\\. {name}="):
        compile_cubin(_kernels()[0], (a, a), cc=(9, 0), **shape)


@pytest.mark.compile
def test_cluster_above_the_portable_size():
    a = np.zeros(THREADS * 16, np.int32)
    with pytest.raises(coop.UnsupportedClusterShapeError, match="portable cluster size of 8"):
        compile_cubin(_kernels()[0], (a, a), cc=(9, 0), block=THREADS, grid=16, cluster=16)


@pytest.mark.compile
def test_valid_items_with_a_cluster_group():
    from numba_cuda_mlir import cuda

    @cuda.jit
    def partial(src, out, n):
        g = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        out[g] = coop.sum(coop.this_cluster(), src[g], valid_items=n)

    a = np.zeros(THREADS * 4, np.int32)
    with pytest.raises(coop.ConflictingArgumentsError, match="valid_items=.*not taken by group=coop.this_cluster"):
        compile_cubin(partial, (a, a, np.int32(5)), cc=(9, 0), block=THREADS, grid=4, cluster=2)


@pytest.mark.gpu
@pytest.mark.parametrize("cluster", [1, 2, 4])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_cluster_reduce_on_the_device(cluster, dtype):
    from numba_cuda_mlir import cuda

    blocks = 8
    n = blocks * THREADS
    rng = np.random.default_rng(cluster)
    src = rng.integers(-100, 100, size=n).astype(dtype)
    ksum, kmax = _kernels()
    for kernel, fold in ((ksum, np.sum), (kmax, np.max)):
        out = cuda.to_device(np.full(n, -7, dtype))
        kernel[blocks, THREADS, 0, 0, (cluster, 1, 1)](cuda.to_device(src), out)
        got = out.copy_to_host()
        expected = np.repeat(fold(src.reshape(-1, cluster * THREADS), axis=1), cluster * THREADS)
        np.testing.assert_allclose(got, expected.astype(dtype), rtol=1e-5)
