"""Arrays from other libraries passed to cooperative kernels.

A cooperative kernel takes what numba-cuda-mlir takes: its own device arrays, any
object with ``__cuda_array_interface__`` (CuPy arrays, PyTorch CUDA tensors) and any
object with ``__dlpack__`` / ``__dlpack_device__`` (the DLPack protocol).  One kernel
(block load, inclusive scan, block sum, store) runs on each kind, and on a mix of
kinds in one launch, twice with fresh data so that the repeat-launch fast path
(``backends/numba_mlir/_compat.py``) is exercised with each kind.  Outputs are
poisoned first and checked against NumPy.  A library that is not installed skips its
cases with the reason.

A raw DLPack capsule is refused before typing with a named error (CPU test: NumPy makes
capsules too).
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop import InvalidArgumentTypeError

from ..kernelgen import module_from_source

THREADS, ITEMS, BLOCKS = 128, 4, 3
TILE = THREADS * ITEMS
POISON = -7

KERNEL = f"""
@cuda.jit
def tile_prefix(src, prefix, totals):
    block = coop.this_block()
    base = cuda.blockIdx.x * {TILE}
    items = coop.ThreadData({ITEMS})
    coop.load(block, src[base:], items)
    coop.store(block, prefix[base:], coop.inclusive_sum(block, items))
    total = coop.sum(block, items)
    if cuda.threadIdx.x == 0:
        totals[cuda.blockIdx.x] = total
"""


def _kernel():
    return module_from_source(KERNEL).tile_prefix


class _DLPackOnly:
    """Exposes an array through the DLPack protocol alone (no __cuda_array_interface__)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, *args, **kwargs):
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def _numba():
    from ..compiler import cuda

    return (lambda host: cuda.to_device(host)), (lambda dev: dev.copy_to_host())


def _cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    return cupy.asarray, cupy.asnumpy


def _torch():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return (lambda host: torch.from_numpy(host.copy()).to("cuda")), (lambda t: t.cpu().numpy())


def _dlpack_torch():
    to_dev, to_host = _torch()
    return (lambda host: _DLPackOnly(to_dev(host))), (lambda w: to_host(w._array))


def _dlpack_cupy():
    to_dev, to_host = _cupy()
    return (lambda host: _DLPackOnly(to_dev(host))), (lambda w: to_host(w._array))


PRODUCERS = {"numba": _numba, "cupy": _cupy, "torch": _torch, "dlpack-torch": _dlpack_torch,
             "dlpack-cupy": _dlpack_cupy}
# (source, prefix, totals) producers: one kind per launch, then kinds mixed in one launch.
COMBOS = [(k, k, k) for k in PRODUCERS] + [("cupy", "torch", "numba"), ("torch", "dlpack-cupy", "cupy"),
                                            ("numba", "cupy", "dlpack-torch")]


def _run(combo, dtype, seed):
    kinds = [PRODUCERS[k]() for k in combo]
    rng = np.random.default_rng(seed)
    src = rng.integers(-8, 9, size=BLOCKS * TILE).astype(dtype)
    prefix = np.full(BLOCKS * TILE, POISON, dtype=dtype)
    totals = np.full(BLOCKS, POISON, dtype=dtype)
    device = [to_dev(host) for (to_dev, _), host in zip(kinds, (src, prefix, totals))]
    _kernel()[BLOCKS, THREADS](*device)
    from ..compiler import cuda

    cuda.synchronize()
    got_prefix, got_totals = (to_host(dev) for (_, to_host), dev in zip(kinds[1:], device[1:]))
    tiles = src.astype(np.float64).reshape(BLOCKS, TILE)
    np.testing.assert_array_equal(got_prefix.astype(np.float64), np.cumsum(tiles, axis=1).reshape(-1),
                                  err_msg=f"inclusive_sum, {combo}")
    np.testing.assert_array_equal(got_totals.astype(np.float64), tiles.sum(axis=1), err_msg=f"sum, {combo}")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["int32", "float32", "float16"])
@pytest.mark.parametrize("combo", COMBOS, ids=["+".join(c) for c in COMBOS])
def test_arrays_of_each_library_and_mixed(combo, dtype):
    """Values in -8..8 keep every prefix exact in float16 (|prefix| <= 4096 = 2**12)."""
    _run(combo, dtype, seed=1)
    _run(combo, dtype, seed=2)  # the repeat launch: fast path, new arrays of the same kinds


@pytest.mark.gpu
def test_torch_tensor_on_a_side_stream():
    """A tensor written on a PyTorch side stream: numba-cuda-mlir syncs on the interface's stream."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        src = torch.arange(BLOCKS * TILE, device="cuda", dtype=torch.int32) % 17 - 8
        prefix = torch.full_like(src, POISON)
        totals = torch.full((BLOCKS,), POISON, device="cuda", dtype=torch.int32)
    side.synchronize()
    _kernel()[BLOCKS, THREADS](src, prefix, totals)
    torch.cuda.synchronize()
    tiles = src.cpu().numpy().astype(np.int64).reshape(BLOCKS, TILE)
    np.testing.assert_array_equal(prefix.cpu().numpy(), np.cumsum(tiles, axis=1).reshape(-1))
    np.testing.assert_array_equal(totals.cpu().numpy(), tiles.sum(axis=1))


@pytest.mark.unit
def test_a_raw_dlpack_capsule_is_refused_with_a_named_error():
    from ..compiler import require
    require()
    from ..compiler import qualified  # noqa: F401  (registers the launch checks)

    capsule = np.arange(4, dtype=np.int32).__dlpack__()
    assert type(capsule).__name__ == "PyCapsule"
    with pytest.raises(InvalidArgumentTypeError, match=r"argument 0 is a DLPack capsule.*from_dlpack"):
        _kernel()[1, THREADS](capsule, np.zeros(4, np.int32), np.zeros(1, np.int32))


@pytest.mark.gpu
@pytest.mark.parametrize("wrap", ["tensor", "dlpack-only"])
def test_torch_bfloat16_tensors(wrap):
    """bfloat16 has no __cuda_array_interface__ typestr; PyTorch tensors travel by DLPack.

    Values in -1..1: every prefix stays far below 256, so bfloat16 sums are exact.
    """
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    pytest.importorskip("ml_dtypes", reason="ml_dtypes (bfloat16 on the host) is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    gen = torch.Generator(device="cpu").manual_seed(3)
    src = torch.randint(-1, 2, (BLOCKS * TILE,), generator=gen).to(torch.bfloat16).to("cuda")
    prefix = torch.full_like(src, POISON)
    totals = torch.full((BLOCKS,), POISON, dtype=torch.bfloat16, device="cuda")
    args = (src, prefix, totals) if wrap == "tensor" else tuple(_DLPackOnly(t) for t in (src, prefix, totals))
    _kernel()[BLOCKS, THREADS](*args)
    torch.cuda.synchronize()
    tiles = src.float().cpu().numpy().astype(np.float64).reshape(BLOCKS, TILE)
    np.testing.assert_array_equal(prefix.float().cpu().numpy(), np.cumsum(tiles, axis=1).reshape(-1))
    np.testing.assert_array_equal(totals.float().cpu().numpy(), tiles.sum(axis=1))


ARITHMETIC_KERNEL = f"""
@cuda.jit
def doubled_sum(src, doubled, totals):
    block = coop.this_block()
    i = cuda.blockIdx.x * {THREADS} + cuda.threadIdx.x
    doubled[i] = src[i] + src[i]
    total = coop.sum(block, src[i])
    if cuda.threadIdx.x == 0:
        totals[cuda.blockIdx.x] = total
"""


@pytest.mark.gpu
def test_torch_bfloat16_elements_take_arithmetic_next_to_a_cooperative_op():
    """numba-cuda-mlir 0.6 typed these tensors with a bfloat16 that has no ``+``."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    pytest.importorskip("ml_dtypes", reason="ml_dtypes (bfloat16 on the host) is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    gen = torch.Generator(device="cpu").manual_seed(5)
    src = torch.randint(-3, 4, (BLOCKS * THREADS,), generator=gen).to(torch.bfloat16).to("cuda")
    doubled = torch.full_like(src, POISON)
    totals = torch.full((BLOCKS,), POISON, dtype=torch.bfloat16, device="cuda")
    module_from_source(ARITHMETIC_KERNEL).doubled_sum[BLOCKS, THREADS](src, doubled, totals)
    torch.cuda.synchronize()
    host = src.float().cpu().numpy().astype(np.float64)
    np.testing.assert_array_equal(doubled.float().cpu().numpy(), 2 * host)
    np.testing.assert_array_equal(totals.float().cpu().numpy(), host.reshape(BLOCKS, THREADS).sum(axis=1))


@pytest.mark.only_on("numba-cuda-mlir", "checks a numba-cuda-mlir internal (descriptor._array_cache_key)")
@pytest.mark.unit
def test_dlpack_only_arguments_get_their_own_cache_key():
    """numba-cuda-mlir 0.6 keyed such objects by the cached type (a stale specialization)."""
    from ..compiler import require
    require()
    from ..compiler import qualified  # noqa: F401  (installs the fix)
    from numba_cuda_mlir import descriptor

    as_int = descriptor._array_cache_key(_DLPackOnly(np.zeros(8, np.int32)), None)
    as_float = descriptor._array_cache_key(_DLPackOnly(np.zeros(8, np.float32)), None)
    as_2d = descriptor._array_cache_key(_DLPackOnly(np.zeros((2, 4), np.int32)), None)
    assert as_int == (np.dtype(np.int32), 1, "C", False)
    assert len({as_int, as_float, as_2d}) == 3
