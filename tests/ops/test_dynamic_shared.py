"""Cooperative scratch above 48 KiB per block, in dynamic shared memory, on a device.

Each kernel's scratch is above the 48 KiB static limit, so cuda-coop places it in one
dynamic backing that the launch reserves (raising the kernel's
cudaFuncAttributeMaxDynamicSharedMemorySize on the first launch).  Every kernel also
keeps a static ``cuda.shared.array`` of its own whose values must survive the
cooperative calls: the dynamic backing lies after all static shared memory.

- a block histogram of 16384 int32 counters (64 KiB) with a partial tile,
- a block radix sort of 256 x 32 uint64 keys (64 KiB of exchange scratch),
- ``TempStorage.reserve`` of 64 KiB (float32, ``alignment=16``) next to a block scan on
  the same exclusive descriptor.

Random data, outputs poisoned first, everything compared against NumPy, on both compiler
backends.  Each kernel is launched three times: with host arrays, then twice with device
arrays (on numba-cuda-mlir the third launch takes cuda-coop's fast launch path, which
must have remembered the launcher that reserves the dynamic bytes; on classic numba-cuda
every launch goes through the kernel's own launch, which reserves them), then once more
with a ``sharedmem`` of the user's own, which must not shrink the reservation.
``tests/ops/test_dynamic_shared_compile.py`` compiles the same kernels on CPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.reference import histogram as ref

from ..backends_param import COMPILERS, gpu_for, kernel_for
from .dynamic_shared_kernels import BLOCK, BLOCKS, HIST_BINS, HIST_BPT, HIST_ITEMS, LATE_ARRAY, LATE_ITEMS, MINE, RESERVE_COUNT, SCAN_ITEMS, SORT_ITEMS, USER_ARRAY_AFTER, histogram_kernel, reserve_kernel, sort_kernel

# Under --compiler numba-cuda these would only repeat themselves.
pytestmark = pytest.mark.only_on("numba-cuda-mlir", "runs each test on both compilers itself (tests/backends_param.py)")

POISON = -9


def _check_kept(kept):
    j = np.arange(MINE)
    for b in range(BLOCKS):
        np.testing.assert_array_equal(kept[b * MINE:(b + 1) * MINE], (MINE - 1 - j) * 7 + b)


def _kept():
    return np.full(BLOCKS * MINE, POISON, dtype=np.int32)


def _three_launches(compiler, kernel, inputs, outputs, check):
    """Launch with host arrays, then twice with device arrays, then with a ``sharedmem``
    of 1 KiB; ``check(outputs, launch)``."""
    cuda = gpu_for(compiler)
    launch = kernel[BLOCKS, BLOCK]
    outs = [o.copy() for o in outputs]
    launch(*inputs, *outs)
    cuda.synchronize()
    check(outs, 0)
    d_inputs = [cuda.to_device(a) for a in inputs]
    for n in (1, 2):
        d_outs = [cuda.to_device(o) for o in outputs]
        launch(*d_inputs, *d_outs)
        check([o.copy_to_host() for o in d_outs], n)
    if compiler == "numba-cuda-mlir":
        entries = list(launch._coop_fast.values())
        assert len(entries) == 1 and entries[0].launcher is not entries[0].base, entries
    outs = [o.copy() for o in outputs]
    kernel[BLOCKS, BLOCK, 0, 1024](*inputs, *outs)
    cuda.synchronize()
    check(outs, 3)


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", COMPILERS)
def test_histogram_of_16384_bins_in_dynamic_shared_memory(compiler):
    rng = np.random.default_rng(41)
    tile = BLOCK * HIST_ITEMS
    samples = rng.integers(0, HIST_BINS + 500, size=BLOCKS * tile).astype(np.uint16)
    valid = np.array([tile, int(rng.integers(1, tile)), 1], dtype=np.int64)  # full, partial, one item

    def check(outs, launch):
        out, kept = outs
        for b in range(BLOCKS):
            slots = samples[b * tile:(b + 1) * tile].reshape(BLOCK, HIST_ITEMS)
            expected = ref.histogram(slots, HIST_BINS, HIST_BPT, valid_items=int(valid[b]))
            got = out[b].reshape(HIST_BPT, BLOCK).T
            np.testing.assert_array_equal(got, expected, err_msg=f"launch {launch}, block {b}")
        _check_kept(kept)

    _three_launches(compiler, histogram_kernel(compiler), [samples, valid],
                    [np.full((BLOCKS, HIST_BINS), POISON, dtype=np.int32), _kept()], check)


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", COMPILERS)
def test_radix_sort_of_64_kib_of_keys_in_dynamic_shared_memory(compiler):
    rng = np.random.default_rng(42)
    tile = BLOCK * SORT_ITEMS
    keys = rng.integers(0, 2**64, size=BLOCKS * tile, dtype=np.uint64)
    keys[tile:tile + 100] = keys[tile]  # duplicates

    def check(outs, launch):
        out, kept = outs
        for b in range(BLOCKS):
            np.testing.assert_array_equal(out[b * tile:(b + 1) * tile], np.sort(keys[b * tile:(b + 1) * tile]),
                                          err_msg=f"launch {launch}, block {b}")
        _check_kept(kept)

    _three_launches(compiler, sort_kernel(compiler), [keys], [np.full(BLOCKS * tile, 0xDEADBEEF, dtype=np.uint64), _kept()], check)


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", COMPILERS)
def test_reserve_of_64_kib_next_to_a_scan_in_dynamic_shared_memory(compiler):
    rng = np.random.default_rng(43)
    vals = rng.standard_normal(BLOCKS * RESERVE_COUNT).astype(np.float32)
    src = rng.integers(-1000, 1000, size=BLOCKS * BLOCK * SCAN_ITEMS).astype(np.int32)

    def check(outs, launch):
        back, scanned, kept = outs
        for b in range(BLOCKS):
            np.testing.assert_array_equal(back[b * RESERVE_COUNT:(b + 1) * RESERVE_COUNT],
                                          vals[b * RESERVE_COUNT:(b + 1) * RESERVE_COUNT][::-1])
            tile = src[b * BLOCK * SCAN_ITEMS:(b + 1) * BLOCK * SCAN_ITEMS]
            np.testing.assert_array_equal(scanned[b * BLOCK * SCAN_ITEMS:(b + 1) * BLOCK * SCAN_ITEMS],
                                          np.cumsum(tile, dtype=np.int32), err_msg=f"launch {launch}")
        _check_kept(kept)

    _three_launches(compiler, reserve_kernel(compiler=compiler), [vals, src],
                    [np.full(BLOCKS * RESERVE_COUNT, POISON, dtype=np.float32), np.full_like(src, POISON), _kept()],
                    check)


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_launch_asking_past_the_gpus_limit_is_a_named_error(compiler):
    """The scratch fits, but the launch's own ``sharedmem`` takes the block past the GPU's
    opt-in limit: a SharedMemoryLimitError naming the kernel, not a driver error."""
    from cuda import coop

    cuda = gpu_for(compiler)
    limit = cuda.get_current_device().MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    kernel = sort_kernel(compiler)
    keys = np.zeros(BLOCKS * BLOCK * SORT_ITEMS, dtype=np.uint64)
    with pytest.raises(coop.SharedMemoryLimitError) as info:
        kernel[BLOCKS, BLOCK, 0, limit](keys, np.zeros_like(keys), _kept())
    msg = str(info.value)
    assert "cannot launch cooperative kernel 'kernel'" in msg and str(limit) in msg, msg


@pytest.mark.gpu
@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_shared_array_declared_after_the_last_call_tips_the_scratch_into_dynamic_memory(compiler):
    """32 KiB of sort scratch plus the kernel's own 24 KiB array, declared after the sort:
    together above 48 KiB, so the scratch lives in dynamic shared memory (classic numba-cuda
    decides once the kernel's body is lowered)."""
    cuda = gpu_for(compiler)
    kernel = kernel_for(compiler, USER_ARRAY_AFTER).kernel
    rng = np.random.default_rng(44)
    tile = BLOCK * LATE_ITEMS
    keys = rng.integers(0, 2**64, size=BLOCKS * tile, dtype=np.uint64)
    out = np.full_like(keys, 0xDEADBEEF)
    kept = np.full(BLOCKS * LATE_ARRAY, POISON, dtype=np.int32)
    kernel[BLOCKS, BLOCK](keys, out, kept)
    cuda.synchronize()
    for b in range(BLOCKS):
        np.testing.assert_array_equal(out[b * tile:(b + 1) * tile], np.sort(keys[b * tile:(b + 1) * tile]))
        j = np.arange(LATE_ARRAY)
        np.testing.assert_array_equal(kept[b * LATE_ARRAY:(b + 1) * LATE_ARRAY], (LATE_ARRAY - 1 - j) * 3 + b)
