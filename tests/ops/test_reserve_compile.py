"""TempStorage.reserve() compiles to cubin with the arrays placed in the descriptor's region (no GPU).

Compiles the GPU test kernels of ``test_reserve.py`` (and the reserve kernels of
``tests/parity/test_warp_reduce_reserve.py``) and checks, from the PTX, where the
reservations went: their region's size and alignment, a loop's reservation
counted once, every reservation in bytes of its own whatever the sharing mode
(the region is the reservations plus the ops' scratch: the largest need for
``sharing="shared"``, their sum for ``"exclusive"``), and no trailing barrier on
the ops of a descriptor with reservations (the caller synchronizes).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ..compiler import SEPARATE_SCRATCH, SOURCE_FILES_FOR_MLIR

from ..kernelgen import module_from_source
from . import reserve_kernels as gpu
from .cubin_checks import assert_inlined, compile_cubin, numba_types

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()


def shared_regions(kb) -> list:
    """``(alignment, bytes)`` of every static shared array the PTX declares, in PTX order."""
    return [(int(a), int(n)) for a, n in re.findall(r"\.shared\s+\.align\s+(\d+)\s+\.b8\s+\w+\[(\d+)\]", kb.ptx)]


def barriers(kb) -> int:
    return len(re.findall(r"\b(?:bar|barrier)\.sync", kb.ptx))


def _neighbours(sharing, dtype):
    types = numba_types()
    elem = getattr(types, dtype)
    argtypes = (types.int32[::1], types.int32[::1], elem[::1], elem[::1], types.int32[::1], types.int32[::1])
    return compile_cubin(gpu.neighbours_kernel(sharing, dtype), argtypes, cc=(9, 0), block=gpu.BLOCK,
                         grid=gpu.BLOCKS)


@pytest.mark.xfail_on("numba-cuda", "AssertionError", SEPARATE_SCRATCH)
@pytest.mark.parametrize("dtype", gpu.RESERVE_DTYPES)
def test_neighbour_kernels_place_reservations_in_their_regions(dtype):
    itemsize = np.dtype(dtype).itemsize
    sizes = {}
    for sharing in gpu.SHARINGS:
        kb = _neighbours(sharing, dtype)
        assert_inlined(kb, (9, 0))
        regions = shared_regions(kb)
        # `keep` (exclusive): wide (2*BLOCK elements, 64-byte aligned) then flags (BLOCK bytes).
        keep = [r for r in regions if r[0] >= 64]
        assert keep == [(64, 2 * gpu.BLOCK * itemsize + gpu.BLOCK)], regions
        (storage,) = [r for r in regions if r not in keep]
        assert storage[0] >= 16 and storage[1] >= gpu.BLOCK * itemsize, regions
        sizes[sharing] = storage[1]
    # Both: the reservation, then the ops' scratch; "shared" overlaps the scan's and the sum's
    # scratch, "exclusive" adds them.
    assert sizes["exclusive"] > sizes["shared"] > gpu.BLOCK * itemsize, sizes


@pytest.mark.xfail_on("numba-cuda", "ValueError", SEPARATE_SCRATCH)
def test_loop_helper_and_device_function_kernel():
    """The loop's reserve() call site takes one slice, whatever the trip count."""
    types = numba_types()
    kb = compile_cubin(gpu.loop_kernel(), (types.float32[::1], types.float32[::1], types.float32[::1], types.int64),
                       cc=(9, 0), block=gpu.BLOCK, grid=gpu.BLOCKS)
    assert_inlined(kb, (9, 0))
    (region,) = shared_regions(kb)
    two_arrays = 2 * gpu.BLOCK * 4
    assert region[0] >= 32 and two_arrays < region[1] < two_arrays + gpu.BLOCK * 4, region


def _region_bytes(kernel, argtypes, block):
    (region,) = shared_regions(compile_cubin(kernel, argtypes, cc=(9, 0), block=block))
    return region


@pytest.mark.xfail_on("numba-cuda", "ValueError", SEPARATE_SCRATCH)
def test_shared_reservations_add_up_and_precede_the_scratch():
    """``wide`` (2 * BLOCK int32) then ``narrow`` (BLOCK int32), then the sum's scratch: the
    region is exactly the sum-only region plus both arrays."""
    types = numba_types()
    kb = compile_cubin(gpu.alias_kernel(), (types.int32[::1], types.int32[::1], types.int32[::1], types.int64),
                       cc=(9, 0), block=gpu.BLOCK, grid=gpu.BLOCKS)
    assert_inlined(kb, (9, 0))
    (region,) = shared_regions(kb)
    # The kernel's `value` adds int32 elements: numba makes it int64, and so is the sum.
    scratch = _region_bytes(_sum_kernel("", False), (types.int64[::1], types.int64[::1]), gpu.BLOCK)
    assert region == (64, 3 * gpu.BLOCK * 4 + scratch[1]), (region, scratch)


SCAN_ONLY = """
@cuda.jit
def kernel(source, scanned, items_per_thread):
    storage = coop.TempStorage(sharing="{sharing}")
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    coop.load(block, source, items, algorithm="transpose", temp_storage=storage)
    cuda.syncthreads()
    result = coop.exclusive_sum(block, items, temp_storage=storage)
    cuda.syncthreads()
    coop.store(block, scanned, result, algorithm="transpose", temp_storage=storage)
"""


@pytest.mark.only_on("numba-cuda-mlir", SOURCE_FILES_FOR_MLIR)
@pytest.mark.parametrize("items_per_thread", [1, 4])
@pytest.mark.parametrize("sharing", ["shared", "exclusive"])
@pytest.mark.parametrize("dtype, alignment", [("float64", 64), ("int32", 32)])
def test_parity_reservations_come_before_the_scratch(dtype, alignment, sharing, items_per_thread):
    """The kernel of parity ``test_reservations_survive_scratch_reuse``: ``reserve(3, uint8)``
    then ``reserve(count, dtype, alignment=)``, then a transpose load, a scan and a transpose
    store on the same descriptor.  The region is the two reservations (the second starts at
    ``alignment``) followed by exactly the scratch the same ops need on their own, so no op
    can write into a reservation."""
    from ..parity import warp_reduce_reserve_kernels as parity

    types = numba_types()
    count = 32 * items_per_thread
    elem = getattr(types, dtype)
    kernel = parity._reserve_kernel(sharing, elem, count, alignment)
    reserved = _region_bytes(kernel, (types.int32[::1], types.int32[::1], elem[::1], types.uint8[::1],
                                      items_per_thread), 32)
    alone = _region_bytes(module_from_source(SCAN_ONLY.format(sharing=sharing)).kernel,
                          (types.int32[::1], types.int32[::1], items_per_thread), 32)
    reservations_end = alignment + count * np.dtype(dtype).itemsize  # a multiple of every alignment
    assert reserved == (alignment, reservations_end + alone[1]), (reserved, alone)


@pytest.mark.only_on("numba-cuda-mlir", SOURCE_FILES_FOR_MLIR)
def test_parity_reservation_through_an_alias_in_an_inlined_helper():
    """``prefix = storage.reserve(3, uint8)`` in the kernel, then ``alias.reserve(33, float64,
    alignment=1)`` in an inline="always" helper: one region, the helper's array after the
    prefix at its element alignment (alignment=1 is raised to 8, as NVIDIA does)."""
    from ..parity import warp_reduce_reserve_kernels as parity

    types = numba_types()
    region = _region_bytes(parity._reserve_in_helper, (types.float64[::1], types.int64[::1]), 32)
    assert region == (16, 8 + 33 * 8), region


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float16", "float32", "complex128"])
def test_every_element_type_compiles(dtype):
    types = numba_types()
    module = module_from_source(f"""
@cuda.jit
def kernel(src, dst):
    t = cuda.threadIdx.x
    storage = coop.TempStorage(auto_sync=False)
    values = storage.reserve({gpu.BLOCK}, np.{dtype})
    values[t] = np.{dtype}(src[t])
    cuda.syncthreads()
    dst[t] = values[{gpu.BLOCK} - 1 - t]
""")
    elem = getattr(types, dtype)
    kb = compile_cubin(module.kernel, (types.int32[::1], elem[::1]), cc=(9, 0), block=gpu.BLOCK)
    assert shared_regions(kb) == [(16, gpu.BLOCK * np.dtype(dtype).itemsize)]


@pytest.mark.xfail_on("numba-cuda", "AssertionError", SEPARATE_SCRATCH)
def test_alignment_is_honoured_in_an_exclusive_region():
    """A 3-byte reservation, then a 256-byte aligned one: the region is 256-byte aligned and
    the second array starts at byte 256 (its size ends the region)."""
    types = numba_types()
    module = module_from_source("""
@cuda.jit
def kernel(src, dst):
    t = cuda.threadIdx.x
    storage = coop.TempStorage(sharing="exclusive", auto_sync=False)
    small = storage.reserve(3, np.uint8)
    aligned = storage.reserve(32, np.float64, alignment=256)
    if t < 3:
        small[t] = np.uint8(t)
    aligned[t] = src[t]
    cuda.syncthreads()
    dst[t] = aligned[31 - t] + small[t % 3]
""")
    kb = compile_cubin(module.kernel, (types.float64[::1], types.float64[::1]), cc=(9, 0), block=32)
    assert shared_regions(kb) == [(256, 256 + 32 * 8)]


def _sum_kernel(storage_args: str, reserve: bool):
    reservation = "    r = storage.reserve(4, np.int32)\n    r[0] = 1\n" if reserve else ""
    return module_from_source(f"""
@cuda.jit
def kernel(src, dst):
    storage = coop.TempStorage({storage_args})
{reservation}    t = cuda.threadIdx.x
    s = coop.sum(coop.this_block(), src[t], temp_storage=storage)
    dst[t] = s
""").kernel


@pytest.mark.xfail_on("numba-cuda", "AssertionError", SEPARATE_SCRATCH)
def test_ops_on_a_descriptor_with_reservations_leave_synchronization_to_the_caller():
    """Omitted auto_sync normally ends each call with a barrier; with a reservation it means False."""
    types = numba_types()
    count = {}
    for key, args, reserve in [("auto", "", False), ("manual", "auto_sync=False", False),
                               ("reserved", "", True)]:
        kb = compile_cubin(_sum_kernel(args, reserve), (types.int32[::1], types.int32[::1]), cc=(9, 0), block=128)
        count[key] = barriers(kb)
    assert count["reserved"] == count["manual"] == count["auto"] - 1, count


def test_other_descriptors_keep_auto_sync():
    """auto_sync=True is refused only on the descriptor that has reservations."""
    types = numba_types()
    module = module_from_source("""
@cuda.jit
def kernel(src, dst):
    t = cuda.threadIdx.x
    persistent = coop.TempStorage()
    values = persistent.reserve(128, np.int32)
    scratch = coop.TempStorage(auto_sync=True)
    values[t] = src[t] + 1000
    cuda.syncthreads()
    first = coop.sum(coop.this_block(), src[t], temp_storage=scratch)
    second = coop.sum(coop.this_block(), src[t] * 2, temp_storage=scratch)
    dst[t] = values[127 - t] + first + second
""")
    kb = compile_cubin(module.kernel, (types.int32[::1], types.int32[::1]), cc=(9, 0), block=128)
    assert_inlined(kb, (9, 0))
    assert (16, 512) in shared_regions(kb)
