"""Parity tests: the call patterns of NVIDIA's cuda.coop runtime tests and docs, run against NumPy.

Each module here mirrors one area of NVIDIA/cccl
``python/cuda_coop/tests/backends/numba_mlir/runtime/`` (named in each test's
docstring).  The kernels are our own; they make the same calls with the same
semantics, so code written against NVIDIA's documentation runs unchanged here.
Outputs are poisoned before each launch and the data is random.
"""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    # One stream per test, reproducible from its id.
    import zlib

    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
