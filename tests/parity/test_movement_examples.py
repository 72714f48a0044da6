"""Parity: exchange and shuffle examples of NVIDIA's cuda.coop docs (common and qualified).

Mirrors NVIDIA/cccl ``python/cuda_coop/tests/backends/numba_mlir/runtime/``
``test_rearrangement_examples.py`` (``exchange`` both directions with the input
preserved; ``shuffle`` up/down on a ThreadData, boundaries written by the
caller) and ``test_qualified_movement_examples.py`` (``exchange(mode=
"scatter_to_blocked", ranks=...)``; scalar ``shuffle(mode="rotate", distance=7)``).
"""

from __future__ import annotations

import numpy as np
import pytest
from ..compiler import cuda, types

from ..compiler import qualified as numba_coop
from cuda import coop

from ._helpers import poison

pytestmark = pytest.mark.gpu


def test_striped_to_blocked(rng):
    """Mirrors test_rearrangement_examples.py::test_exchange_example."""

    @cuda.jit
    def exchange_tile(source, destination):
        block = coop.this_block()
        striped = coop.ThreadData(3, dtype=np.int32)
        coop.load(block, source, striped, algorithm="striped")
        blocked = coop.exchange(block, striped, mode="striped_to_blocked")
        coop.store(block, destination, blocked)

    values = rng.integers(-10**6, 10**6, 384, dtype=np.int32)
    destination = poison(values)
    exchange_tile[1, 128](values, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, values)


def test_blocked_to_striped_keeps_its_input(rng):
    """Mirrors test_rearrangement_examples.py::test_exchange_striped_output."""

    @cuda.jit
    def exchange_tile(source, destination, preserved):
        block = coop.this_block()
        blocked = coop.ThreadData(2, dtype=np.int32)
        coop.load(block, source, blocked)
        striped = coop.exchange(block, blocked, mode="blocked_to_striped")
        coop.store(block, destination, striped)
        coop.store(block, preserved, blocked)

    values = rng.integers(-10**6, 10**6, 256, dtype=np.int32)
    destination, preserved = poison(values), poison(values)
    exchange_tile[1, 128](values, destination, preserved)
    cuda.synchronize()
    # Thread t holds tile items t and t + 128; the blocked store writes them at 2t, 2t + 1.
    np.testing.assert_array_equal(destination, values.reshape(2, 128).T.ravel())
    np.testing.assert_array_equal(preserved, values)


def test_shuffle_up_and_down_with_caller_boundaries(rng):
    """Mirrors test_rearrangement_examples.py::test_shuffle_example."""

    @cuda.jit
    def shift_tile(source, following, preceding):
        block = coop.this_block()
        items = coop.ThreadData(2, dtype=np.int32)
        coop.load(block, source, items)
        down = coop.shuffle(block, items, mode="down")
        up = coop.shuffle(block, items, mode="up")
        if cuda.threadIdx.x == cuda.blockDim.x - 1:
            down[1] = 0
        if cuda.threadIdx.x == 0:
            up[0] = 0
        coop.store(block, following, down)
        coop.store(block, preceding, up)

    values = rng.integers(-10**6, 10**6, 256, dtype=np.int32)
    following, preceding = poison(values), poison(values)
    shift_tile[1, 128](values, following, preceding)
    cuda.synchronize()
    np.testing.assert_array_equal(following, np.append(values[1:], 0))
    np.testing.assert_array_equal(preceding, np.insert(values[:-1], 0, 0))


def test_scatter_to_blocked_reverses_a_tile(rng):
    """Mirrors test_qualified_movement_examples.py::test_scatter_example."""

    @cuda.jit
    def reverse_tile(source, destination):
        block = numba_coop.this_block()
        items = numba_coop.ThreadData(2, dtype=np.int32)
        ranks = numba_coop.ThreadData(2, dtype=np.int32)
        numba_coop.load(block, source, items)
        for i in range(2):
            index = cuda.threadIdx.x * 2 + i
            ranks[i] = types.int32(cuda.blockDim.x * 2 - 1 - index)
        reversed_items = numba_coop.exchange(block, items, mode="scatter_to_blocked", ranks=ranks)
        numba_coop.store(block, destination, reversed_items)

    values = rng.integers(-10**6, 10**6, 256, dtype=np.int32)
    destination = poison(values)
    reverse_tile[1, 128](values, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, values[::-1])


@pytest.mark.parametrize("distance", [7, 1, 127])
def test_scalar_rotate(rng, distance):
    """Mirrors test_qualified_movement_examples.py::test_rotate_example."""

    @cuda.jit
    def rotate_tile(source, destination):
        t = cuda.threadIdx.x
        destination[t] = numba_coop.shuffle(numba_coop.this_block(), source[t], mode="rotate", distance=distance)

    values = rng.integers(-10**6, 10**6, 128, dtype=np.int32)
    destination = poison(values)
    rotate_tile[1, 128](values, destination)
    cuda.synchronize()
    np.testing.assert_array_equal(destination, np.roll(values, -distance))
