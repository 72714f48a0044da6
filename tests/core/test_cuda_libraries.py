"""Which NVRTC, nvJitLink and NVVM cuda-coop picks when several CUDA majors are installed.

The layouts are NVIDIA's wheel and toolkit layouts, built from empty files: the
choice is made on files alone, nothing is loaded.  The real situation (a CUDA 12
environment holding CUDA 13 wheels too, and the reverse) is built and compiled in
by ``ci/check_mixed_toolkits.sh``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cuda.coop.core import cuda_libraries

WHEELS = {
    12: ["nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "nvidia/nvjitlink/lib/libnvJitLink.so.12",
         "nvidia/cuda_nvcc/nvvm/lib64/libnvvm.so"],
    13: ["nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cu13/lib/libnvJitLink.so.13", "nvidia/cu13/lib/libnvvm.so.4"],
}


def _touch(root: Path, rel: str) -> str:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return str(path)


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """Only the sys.path entries and toolkit roots a test makes."""
    for var in ("CONDA_PREFIX", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sys, "path", [])
    monkeypatch.setattr(cuda_libraries, "_toolkit_roots", lambda major: iter(
        [(Path(p), v) for v, p in _roots.items()]))
    monkeypatch.setattr(cuda_libraries, "_system_search", lambda libname, major: None)
    _roots.clear()
    cuda_libraries.select.cache_clear()
    yield tmp_path
    cuda_libraries.select.cache_clear()


_roots: dict = {}


def _paths(choice):
    return {name: c.path for name, c in choice.items()}


@pytest.mark.unit
@pytest.mark.parametrize("major", [12, 13])
def test_both_majors_in_one_site_packages_each_gets_its_own(isolated, major):
    site = isolated / "site-packages"
    files = {m: [_touch(site, rel) for rel in WHEELS[m]] for m in (12, 13)}
    sys.path.append(str(site))
    choice = cuda_libraries.select(major)
    assert _paths(choice) == dict(zip(("nvrtc", "nvJitLink", "nvvm"), files[major]))
    assert all(c.found_via == f"wheel in {site}" for c in choice.values())


@pytest.mark.unit
def test_a_layered_site_with_the_other_major_first_does_not_win(isolated):
    # The device image's layout: the environment's CUDA 12 site after a site that holds CUDA 13.
    image, env = isolated / "image-site", isolated / "env-site"
    for rel in WHEELS[13]:
        _touch(image, rel)
    expected = [_touch(env, rel) for rel in WHEELS[12]]
    sys.path[:] = [str(image), str(env)]
    assert list(_paths(cuda_libraries.select(12)).values()) == expected


@pytest.mark.unit
def test_nvjitlink_and_nvvm_come_from_the_installation_of_nvrtc(isolated):
    first, second = isolated / "a", isolated / "b"
    _touch(first, WHEELS[12][1])  # a stray nvJitLink 12 earlier on sys.path
    _touch(first, WHEELS[12][2])
    expected = [_touch(second, rel) for rel in WHEELS[12]]
    sys.path[:] = [str(first), str(second)]
    assert list(_paths(cuda_libraries.select(12)).values()) == expected


@pytest.mark.unit
def test_a_toolkit_root_nvvm_counts_only_for_the_major_of_its_nvrtc(isolated):
    root = isolated / "cuda-12.9"
    nvrtc = _touch(root, "lib64/libnvrtc.so.12")
    nvjitlink = _touch(root, "lib64/libnvJitLink.so.12")
    nvvm = _touch(root, "nvvm/lib64/libnvvm.so.4")
    _roots["CUDA_HOME"] = str(root)
    assert _paths(cuda_libraries.select(12)) == {"nvrtc": nvrtc, "nvJitLink": nvjitlink, "nvvm": nvvm}
    cuda_libraries.select.cache_clear()
    assert cuda_libraries.select(13) == {}  # its libnvvm.so.4 is CUDA 12's


@pytest.mark.unit
def test_wheels_come_before_a_system_toolkit(isolated):
    root = isolated / "usr-local-cuda-12.9"
    _touch(root, "lib64/libnvrtc.so.12")
    _roots["toolkit root"] = str(root)
    site = isolated / "site"
    wheel = _touch(site, WHEELS[12][0])
    sys.path.append(str(site))
    assert cuda_libraries.select(12)["nvrtc"].path == wheel


@pytest.mark.unit
def test_unknown_major_selects_nothing(isolated):
    assert cuda_libraries.select(11) == {}


@pytest.mark.compile
def test_the_libraries_cuda_bindings_calls_are_the_pinned_ones():
    """After a compile, NVRTC and nvJitLink are the files chosen for cuda-bindings' major."""
    import cuda.coop.numba_mlir  # noqa: F401  (activates the backend, which pins)
    from cuda.coop.core.toolchain import toolchain

    tc = toolchain()
    major = cuda_libraries.bindings_major()
    assert tc.nvrtc_version[0] == tc.nvjitlink_version[0] == major
    pinned = cuda_libraries.pinned_libraries()
    for libname in ("nvrtc", "nvJitLink"):
        path, how = cuda_libraries.bound_library(libname)
        assert path == str(Path(pinned[libname].path).resolve()), (libname, path, how)
        assert how == pinned[libname].found_via
