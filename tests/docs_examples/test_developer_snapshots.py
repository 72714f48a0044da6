"""The developer guide shows real intermediate products; these tests keep them current.

- ``docs/developer/quickstart_plan.txt``: the CallPlan and C++ provider of the quickstart's
  ``coop.load`` (pure Python, ``docs/examples/developer_plan.py``);
- ``docs/developer/<example>.cu``: the translation unit cuda-coop hands to NVRTC for a
  docs example kernel (``CUDA_COOP_SOURCE_DUMP_DIR``).

After an intended change to code generation, regenerate and review the diff:

    COOP_DOCS_REGEN=1 python -m pytest tests/docs_examples/test_developer_snapshots.py
"""

from __future__ import annotations

import os

import pytest

from . import DOCS, EXAMPLES, load_example

SNAPSHOTS = DOCS / "developer"


def _check(path, text):
    if os.environ.get("COOP_DOCS_REGEN", "") not in ("", "0"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.is_file() and path.read_text() == text, (
        f"{path.relative_to(DOCS.parent)} is out of date; rerun with COOP_DOCS_REGEN=1 and review the diff")


@pytest.mark.unit
def test_plan_snapshot():
    module = load_example(EXAMPLES / "developer_plan.py")
    _check(SNAPSHOTS / "quickstart_plan.txt", module.describe())


DUMPS = [("quickstart", "copy_tiles", "quickstart.cu"), ("temp_storage", "roundtrip", "temp_storage_roundtrip.cu")]


@pytest.mark.compile
@pytest.mark.parametrize("example,kernel,snapshot", DUMPS, ids=[d[2] for d in DUMPS])
def test_generated_source_snapshot(example, kernel, snapshot, tmp_path, monkeypatch):
    pytest.importorskip("numba_cuda_mlir")
    from cuda.coop.numba_mlir import compile_cubin

    module = load_example(EXAMPLES / f"{example}.py")
    entry = next(c for c in module.COMPILE if getattr(c[0], "py_func", c[0]).__name__ == kernel)
    monkeypatch.setenv("CUDA_COOP_SOURCE_DUMP_DIR", str(tmp_path))
    compile_cubin(entry[0], entry[1], cc=(9, 0), **entry[2])
    dumps = sorted(tmp_path.glob("cuda_coop_*.cu"))
    assert len(dumps) == 1, dumps
    _check(SNAPSHOTS / snapshot, dumps[0].read_text())
