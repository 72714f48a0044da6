"""Header resolution: the CCCL of the toolkit in use, or an explicit override; never a mix."""

from __future__ import annotations

import pytest

import cuda.coop as coop
from cuda.coop.core import toolchain as tc

pytestmark = pytest.mark.compile

pytest.importorskip("cuda.bindings")


@pytest.fixture(autouse=True)
def fresh_toolchain():
    tc.clear_toolchain_cache()
    yield
    tc.clear_toolchain_cache()


def test_cccl_matches_nvrtc_major():
    t = tc.toolchain()
    assert t.cccl_version[0] == t.nvrtc_version[0] - 10
    assert t.nvjitlink_version[0] == t.nvrtc_version[0]
    assert "CCCL" in t.describe() and "NVRTC" in t.describe()


def test_override_root_is_used(monkeypatch):
    real = tc.toolchain().cccl_include_dirs[0]
    tc.clear_toolchain_cache()
    monkeypatch.setenv("CUDA_COOP_CCCL_ROOT", real)
    t = tc.toolchain()
    assert t.cccl_found_via == "CUDA_COOP_CCCL_ROOT" and t.cccl_include_dirs == (real,)


def test_invalid_override_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDA_COOP_CCCL_ROOT", str(tmp_path))
    with pytest.raises(coop.HeaderResolutionError) as info:
        tc.toolchain()
    assert "CUDA_COOP_CCCL_ROOT" in str(info.value) and str(tmp_path) in str(info.value)


def test_version_parse(tmp_path):
    d = tmp_path / "cuda" / "std" / "__cccl"
    d.mkdir(parents=True)
    (d / "version.h").write_text("#define CCCL_VERSION 2008002\n")
    assert tc.parse_cccl_version(tmp_path) == (2, 8, 2)
    with pytest.raises(coop.HeaderResolutionError):
        tc.parse_cccl_version(tmp_path / "nowhere")
