"""NVRTC's precompiled header started before a process's first launch, on a GPU.

A program creates its context before its first launch (``cuda.to_device`` here), and
usually defines its kernels before that; with a provider cache that never compiled for
the device, the background build starts at the first of the two that it sees (the
definition of a kernel that refers to cuda.coop, where NVML names the GPUs'
architecture), and the first cooperative launch compiles with it
(backends/_first_compile.py).
"""

from __future__ import annotations

import ast
import importlib.util

import pytest

from .test_precompiled_header import _notes, _run

pytestmark = pytest.mark.gpu


def test_the_first_context_starts_the_pch_and_the_first_cooperative_launch_uses_it(tmp_path):
    body = '''
        src = cuda.to_device(np.arange(4 * 256 * 4, dtype=np.int32))
        dst = cuda.to_device(np.full(4 * 256 * 4, -1, dtype=np.int32))
        at_context = [m for m in records if m.startswith("building NVRTC's precompiled header")]
        coop_kernel("warp_transpose")[4, 256](src, dst)
        assert (dst.copy_to_host() == np.arange(4 * 256 * 4)).all()
        print("AT_CONTEXT", "|".join(at_context) or "-")
        report()
    '''
    result = _run(tmp_path, body)
    assert "(first CUDA context)" in result["stdout"].split("AT_CONTEXT ", 1)[1].splitlines()[0], result["stdout"]
    assert result["started"] == 1 and result["all_with"], result["stdout"]
    assert _notes(tmp_path) == ["compiled"]

    # The same program again: the cache compiled for this device, so its context starts
    # nothing, and the launch finds its kernel in the cache.
    again = _run(tmp_path, body)
    assert "AT_CONTEXT -" in again["stdout"] and again["started"] == 0 and again["compiled"] == [], again["stdout"]


def test_the_first_cooperative_definition_starts_the_pch_from_nvml_and_the_launch_uses_it(tmp_path):
    if importlib.util.find_spec("cuda.bindings.nvml") is None:
        # cuda-bindings 12.9.1-12.9.5 (CUDA 12 pins allow them): visible_compute_capability
        # returns None, so the first context starts the build (the test above covers that).
        pytest.skip("this cuda-bindings has no cuda.bindings.nvml (added in 12.9.6 and 13.0): "
                    "no architecture at the definition")
    body = '''
        from cuda.coop.backends import _first_compile
        kernel = coop_kernel("warp_transpose")  # defined before any CUDA context
        _first_compile._definition_probe[0].join()
        print("NVML", _first_compile.visible_compute_capability())
        at_definition = [m for m in records if m.startswith("building NVRTC's precompiled header")]
        src = cuda.to_device(np.arange(4 * 256 * 4, dtype=np.int32))
        dst = cuda.to_device(np.full(4 * 256 * 4, -1, dtype=np.int32))
        kernel[4, 256](src, dst)
        assert (dst.copy_to_host() == np.arange(4 * 256 * 4)).all()
        print("AT_DEFINITION", "|".join(at_definition) or "-")
        print("DEVICE", tuple(cuda.get_current_device().compute_capability))
        report()
    '''
    result = _run(tmp_path, body)
    cc = ast.literal_eval(result["stdout"].split("DEVICE ", 1)[1].splitlines()[0])
    assert f"NVML {cc}" in result["stdout"], result["stdout"]
    line = result["stdout"].split("AT_DEFINITION ", 1)[1].splitlines()[0]
    assert f"sm_{cc[0]}{cc[1]}" in line and "(first cooperative kernel defined)" in line, result["stdout"]
    assert result["started"] == 1 and result["all_with"], result["stdout"]
    assert _notes(tmp_path) == ["compiled"]

