"""TempStorage.reserve() compiles to cubin with the arrays placed in the descriptor's region (no GPU).

Compiles the GPU test kernels of ``test_reserve.py`` and checks, from the PTX,
where the reservations went: their region's size and alignment, a loop's
reservation counted once, ``sharing="shared"`` overlapping the ops' scratch and
``"exclusive"`` adding it, and no trailing barrier on the ops of a descriptor
with reservations (the caller synchronizes).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ..kernelgen import module_from_source
from . import test_reserve as gpu
from .cubin_checks import assert_inlined, compile_cubin, numba_types

pytestmark = pytest.mark.compile

nb = pytest.importorskip("numba_cuda_mlir")


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
    # "shared": the reservation overlaps the scan's and the sum's scratch; "exclusive": both are added.
    assert sizes["exclusive"] > sizes["shared"], sizes


def test_loop_helper_and_device_function_kernel():
    """The loop's reserve() call site takes one slice, whatever the trip count."""
    types = numba_types()
    kb = compile_cubin(gpu.loop_kernel(), (types.float32[::1], types.float32[::1], types.float32[::1], types.int64),
                       cc=(9, 0), block=gpu.BLOCK, grid=gpu.BLOCKS)
    assert_inlined(kb, (9, 0))
    (region,) = shared_regions(kb)
    two_arrays = 2 * gpu.BLOCK * 4
    assert region[0] >= 32 and two_arrays < region[1] < two_arrays + gpu.BLOCK * 4, region


def test_shared_reservations_take_the_largest_need():
    types = numba_types()
    kb = compile_cubin(gpu.alias_kernel(), (types.int32[::1], types.int32[::1], types.int32[::1], types.int64),
                       cc=(9, 0), block=gpu.BLOCK, grid=gpu.BLOCKS)
    assert_inlined(kb, (9, 0))
    assert shared_regions(kb) == [(64, 2 * gpu.BLOCK * 4)]


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
