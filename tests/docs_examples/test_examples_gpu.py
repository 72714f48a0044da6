"""Every docs example runs on the device and checks its own result against NumPy.

    python -m pytest -m gpu tests/docs_examples

Each ``docs/examples/<name>.py`` with a ``main()`` launches its kernels the way the docs
show (host arrays, explicit transfers) and asserts the result with ``np.testing``.
"""

from __future__ import annotations

import pytest

from . import kernel_example_paths, load_example

pytestmark = pytest.mark.gpu

RUNNABLE = kernel_example_paths()


@pytest.mark.parametrize("path", RUNNABLE, ids=[p.stem for p in RUNNABLE])
def test_example_runs(path):
    pytest.importorskip("numba_cuda_mlir")
    module = load_example(path)
    assert hasattr(module, "main"), f"{path.name} has no main(): nothing for the GPU test to run"
    module.main()
