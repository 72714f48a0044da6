"""Merge sort on a device, checked against the NumPy model (np.sort order, stability).

One kernel per (key dtype, items_per_thread) runs every case: block (power of
two), warp and logical warps 1..16, keys and pairs, ascending and descending,
full tiles and runtime ``valid_items`` (one value per block: full, oversized,
empty, negative, partial), with and without ``oob_default``.  Values are each
key's tile position, so the pairs results show the permutation and prove
stability; one more pairs case per kernel uses another value dtype.  Keys repeat
often (stability) and floats include NaN, +-0.0 and +-inf.  A user
``compare_op`` device function sorts two more cases (block pairs with
``valid_items``, a logical warp descending).  30 kernels.
"""

from __future__ import annotations

import pytest


from .merge_sort_kernels import DTYPES, ITEMS, run_merge_sort


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("ipt", ITEMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_merge_sort_matrix(dtype, ipt):
    run_merge_sort(dtype, ipt)


@pytest.mark.usefixtures("unchecked_kernels")  # out-of-range controls on purpose: the clamp contract
@pytest.mark.gpu
@pytest.mark.parametrize("block", [(8, 4, 4), (32, 2, 1)], ids=["3d-128", "2d-64"])
def test_merge_sort_multidimensional_blocks(block):
    run_merge_sort("float32", 3, block=block, seed=3, block_only=True)
    run_merge_sort("int64", 4, block=block, seed=4, block_only=True)
