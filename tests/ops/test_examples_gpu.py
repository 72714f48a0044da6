"""The issue's example kernel runs and copies correctly."""

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def test_issue_example_copies():
    from ..examples_src import copy_tile

    src, dst = copy_tile.main()
    np.testing.assert_array_equal(dst, src)


def test_items_per_thread_argument_specializes_per_value():
    from ..compiler import cuda

    from ..examples_src.copy_tile import copy_tile

    for ipt in (1, 4, 2, 4):
        src = np.arange(3 * 128 * ipt, dtype=np.int32) * 3 + 1
        dst = np.full_like(src, -1)
        copy_tile[3, 128](src, dst, ipt)
        cuda.synchronize()
        np.testing.assert_array_equal(dst, src)


def test_two_block_sizes_in_one_process():
    from ..examples_src.copy_tile import copy_tile

    for threads in (128, 256, 64, 128):
        src = np.arange(5 * threads * 4, dtype=np.int32) - 7
        dst = np.zeros_like(src)
        copy_tile[5, threads](src, dst, 4)
        np.testing.assert_array_equal(dst, src)
