"""Radix sort and rank on a device, checked against the NumPy model (stability included).

One kernel per (key dtype, items_per_thread) runs every case: keys and pairs,
ascending and descending, blocked and striped output, all bits, compile-time
bit ranges and runtime bit ranges (one range per block: full, partial, clamped,
empty), partial tiles (``valid_items`` per block, with and without
``oob_default``), a non-default ``radix_bits``, and three ranks (static, runtime begin bit
descending, with the exclusive digit prefix).  Values are each key's tile
position, so pairs results show the permutation (stability); one more pairs case
uses another value dtype.  30 kernels, plus 4 for multi-dimensional blocks.
"""

from __future__ import annotations

import pytest


from .merge_sort_kernels import DTYPES
from .radix_kernels import ITEMS, run_radix


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("ipt", ITEMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_radix_matrix(dtype, ipt):
    run_radix(dtype, ipt)


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("block", [(8, 4, 4), (16, 6, 1)], ids=["3d-128", "2d-96"])
@pytest.mark.parametrize("dtype", ["uint32", "float64"])
def test_radix_multidimensional_blocks(block, dtype):
    run_radix(dtype, 3, block=block, seed=5)
