"""coop.reduce()/coop.sum() over coop.this_cluster(): every thread of every block of a
thread-block cluster (CC 9.0+), partials combined through distributed shared memory.

Every test runs on both compilers (tests/backends_param.py); classic numba-cuda launches
in clusters through cuda-coop's ``kernel[grid, block, stream, sharedmem, cluster]``.
"""

from __future__ import annotations

import numpy as np
import pytest

import cuda.coop as coop

from ..backends_param import COMPILERS, compile_for, gpu_for, kernel_for

# Under --compiler numba-cuda these would only repeat themselves.
pytestmark = pytest.mark.only_on("numba-cuda-mlir", "runs each test on both compilers itself (tests/backends_param.py)")

THREADS = 128

_SOURCE = """
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


@cuda.jit
def partial(src, out, n):
    g = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[g] = coop.sum(coop.this_cluster(), src[g], valid_items=n)
"""


@pytest.fixture(params=COMPILERS)
def compiler(request):
    return request.param


def _kernels(compiler):
    module = kernel_for(compiler, _SOURCE)
    return module.cluster_sum, module.cluster_max


@pytest.mark.compile
@pytest.mark.parametrize("cluster", [1, 2, 4])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_cluster_reduce_compiles(compiler, cluster, dtype):
    a = np.zeros(THREADS * 4, dtype)
    for k in _kernels(compiler):
        kb = compile_for(compiler, k, (a, a), cc=(9, 0), block=THREADS, grid=4, cluster=cluster)
        assert kb.cubin
        assert kb.calls() == 0, kb.summary()


@pytest.mark.compile
def test_cluster_reduce_without_cluster_launch(compiler):
    a = np.zeros(THREADS * 4, np.int32)
    with pytest.raises(coop.ClusterLaunchRequiredError, match="kernel\\[grid, block, stream") as info:
        compile_for(compiler, _kernels(compiler)[0], (a, a), cc=(9, 0), block=THREADS, grid=4)
    assert "out[g] = coop.sum(c, src[g])" in str(info.value)


@pytest.mark.compile
def test_cluster_reduce_below_cc90(compiler):
    a = np.zeros(THREADS * 4, np.int32)
    with pytest.raises(coop.UnsupportedComputeCapabilityError, match="sm_80"):
        compile_for(compiler, _kernels(compiler)[0], (a, a), cc=(8, 0), block=THREADS, grid=4, cluster=2)


@pytest.mark.compile
def test_grid_not_a_multiple_of_the_cluster(compiler):
    a = np.zeros(THREADS * 4, np.int32)
    with pytest.raises(coop.UnsupportedClusterShapeError, match="multiple"):
        compile_for(compiler, _kernels(compiler)[0], (a, a), cc=(9, 0), block=THREADS, grid=3, cluster=2)


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
def test_malformed_launch_shapes_of_compile_for(compiler, name, value, error):
    a = np.zeros(THREADS * 4, np.int32)
    shape = {"block": THREADS, "grid": 4, "cluster": 2, name: value}
    with pytest.raises(error, match=f"compile_cubin\\(\\): {name}=.* is not a launch dimension.*e\\.g\\. {name}="):
        compile_for(compiler, _kernels(compiler)[0], (a, a), cc=(9, 0), **shape)


@pytest.mark.compile
def test_cluster_above_the_portable_size(compiler):
    a = np.zeros(THREADS * 16, np.int32)
    with pytest.raises(coop.UnsupportedClusterShapeError, match="portable cluster size of 8"):
        compile_for(compiler, _kernels(compiler)[0], (a, a), cc=(9, 0), block=THREADS, grid=16, cluster=16)


@pytest.mark.compile
def test_valid_items_with_a_cluster_group(compiler):
    partial = kernel_for(compiler, _SOURCE).partial
    a = np.zeros(THREADS * 4, np.int32)
    with pytest.raises(coop.ConflictingArgumentsError, match="valid_items=.*not taken by group=coop.this_cluster"):
        compile_for(compiler, partial, (a, a, np.int32(5)), cc=(9, 0), block=THREADS, grid=4, cluster=2)


@pytest.mark.gpu
@pytest.mark.parametrize("cluster", [1, 2, 4])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
def test_cluster_reduce_on_the_device(compiler, cluster, dtype):
    cuda = gpu_for(compiler)
    blocks = 8
    n = blocks * THREADS
    rng = np.random.default_rng(cluster)
    src = rng.integers(-100, 100, size=n).astype(dtype)
    ksum, kmax = _kernels(compiler)
    for kernel, fold in ((ksum, np.sum), (kmax, np.max)):
        # A guard of as many items after the output: a launch of more blocks than the grid
        # would write there.
        out = cuda.to_device(np.full(2 * n, -7, dtype))
        kernel[blocks, THREADS, 0, 0, (cluster, 1, 1)](cuda.to_device(src), out)
        got = out.copy_to_host()
        expected = np.repeat(fold(src.reshape(-1, cluster * THREADS), axis=1), cluster * THREADS)
        np.testing.assert_allclose(got[:n], expected.astype(dtype), rtol=1e-5)
        assert (got[n:] == -7).all(), "written past the grid's blocks"


_QUERY_SOURCE = """
@cuda.jit
def cluster_coordinates(out):
    c = coop.this_cluster()
    c.sync()
    g = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    out[0, g] = c.rank("block")
    out[1, g] = c.count("block")
    out[2, g] = coop.this_thread().rank("cluster")
    out[3, g] = c.rank("grid")
    out[4, g] = coop.this_grid().count("cluster")
    c.sync_aligned()
"""


@pytest.mark.gpu
def test_cluster_queries_follow_each_launch(compiler):
    """One kernel (no cooperative operation: not specialized per launch) launched in clusters
    of 2, 4 and 1 and then without a cluster shape (a cluster of one per block)."""
    cuda = gpu_for(compiler)
    kernel = kernel_for(compiler, _QUERY_SOURCE).cluster_coordinates
    blocks = 8
    n = blocks * THREADS
    b, t = np.repeat(np.arange(blocks), THREADS), np.tile(np.arange(THREADS), blocks)
    for cluster in (2, 4, 1, None):
        out = cuda.to_device(np.full((5, n), -1, np.int64))
        launch = kernel[blocks, THREADS] if cluster is None else kernel[blocks, THREADS, 0, 0, (cluster, 1, 1)]
        launch(out)
        c = cluster or 1
        expected = [b % c, np.full(n, c), b % c * THREADS + t, b // c, np.full(n, blocks // c)]
        np.testing.assert_array_equal(out.copy_to_host(), np.array(expected), err_msg=f"cluster={cluster}")


@pytest.mark.gpu
def test_one_kernel_compiled_per_cluster_shape(compiler):
    """A cooperative kernel launched with clusters of 2, then 4, then 2 again: each shape
    runs the code compiled for it (the cluster is part of the launch configuration's key)."""
    cuda = gpu_for(compiler)
    ksum, _ = _kernels(compiler)
    blocks = 8
    n = blocks * THREADS
    src = np.random.default_rng(3).integers(-100, 100, size=n).astype(np.int32)
    d_src = cuda.to_device(src)
    for cluster in (2, 4, 2):
        out = cuda.to_device(np.full(n, -7, np.int32))
        ksum[blocks, THREADS, 0, 0, (cluster, 1, 1)](d_src, out)
        expected = np.repeat(src.reshape(-1, cluster * THREADS).sum(axis=1), cluster * THREADS)
        np.testing.assert_array_equal(out.copy_to_host(), expected, err_msg=f"cluster={cluster}")


@pytest.mark.compile
@pytest.mark.parametrize("cluster, error, words", [
    ((0, 1, 1), coop.InvalidArgumentValueError, "cluster=.* is not a launch dimension"),
    ("2", coop.InvalidArgumentTypeError, "cluster=.* is not a launch dimension"),
    ((3, 1, 1), coop.UnsupportedClusterShapeError, "the grid .8, 1, 1. is not a whole number of clusters"),
])
def test_a_malformed_cluster_launch_is_named_on_classic(cluster, error, words):
    """numba-cuda 0.30 takes no cluster shape: cuda-coop's launch configuration checks it."""
    ksum, _ = _kernels("numba-cuda")
    with pytest.raises(error, match=r"kernel\[grid, block, stream, sharedmem, cluster\]: " + words):
        ksum[8, THREADS, 0, 0, cluster]


@pytest.mark.compile
def test_a_debug_kernel_is_not_launched_in_clusters_on_classic():
    """The classic cluster launch does not read back numba-cuda's debug=True exception report:
    it refuses such a kernel by name instead of dropping the report."""
    kernel_for("numba-cuda", _SOURCE)  # skips where classic numba-cuda is not installed
    from types import SimpleNamespace

    from cuda.coop.backends.numba_cuda import _compat_launch as C

    def checked_kernel():
        pass

    debug_kernel = SimpleNamespace(debug=True, py_func=checked_kernel)
    with pytest.raises(coop.BackendFeatureUnsupportedError,
                       match=r"checked_kernel: a cluster launch of a debug=True kernel.*without debug=True"):
        C._launch_in_clusters(debug_kernel, (2, 1, 1), (), (8, 1, 1), (THREADS, 1, 1), 0, 0)
