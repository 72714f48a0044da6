"""Shared test configuration.

Markers (exactly one per test): ``unit`` pure Python; ``compile`` real NVRTC and
numba-cuda-mlir down to cubin, no GPU; ``gpu`` runs kernels on a device and is
skipped with a reason elsewhere.

Hypothesis (``tests/ops/test_properties.py``): profile ``ci`` (derandomized,
``print_blob``, no example database, no deadline) is loaded under CI, as
hypothesis itself detects it (``CI`` and similar variables), else ``coop`` (no
deadline: the first example of a variant compiles its kernel).
``--hypothesis-profile=NAME`` picks one explicitly.  ``COOP_HYPOTHESIS_EXAMPLES=N``
sets the examples per property test (default 25).
"""

from __future__ import annotations

import os

import pytest

_GPU_REASON = None


def _register_hypothesis_profiles():
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # hypothesis missing: the property tests skip themselves
        return
    try:
        from hypothesis._settings import is_in_ci  # what hypothesis itself uses (6.1xx)
    except ImportError:
        def is_in_ci():
            return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")
    common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("ci", derandomize=True, print_blob=True, database=None, **common)
    settings.register_profile("coop", **common)
    settings.load_profile("ci" if is_in_ci() else "coop")


_register_hypothesis_profiles()


def _gpu_available():
    global _GPU_REASON
    if _GPU_REASON is not None:
        return _GPU_REASON == ""
    from . import compiler

    try:
        cuda = compiler.cuda
        ok = bool(cuda.is_available())
        _GPU_REASON = "" if ok else f"no CUDA device: {cuda.__name__}.is_available() is False"
    except pytest.skip.Exception as exc:  # the selected compiler is not installed
        _GPU_REASON = f"no GPU run: {exc}"
    except Exception as exc:  # driver error
        _GPU_REASON = f"no CUDA device ({type(exc).__name__}: {exc})"
    return _GPU_REASON == ""


def pytest_report_header(config):
    lines = []
    try:
        from cuda.coop.core.toolchain import environment_summary

        lines.append(f"cuda-coop toolchain: {environment_summary()}")
    except Exception as exc:  # pragma: no cover
        lines.append(f"cuda-coop toolchain: unavailable ({exc})")
    try:
        import numba_cuda_mlir

        lines.append(f"numba-cuda-mlir {numba_cuda_mlir.__version__}")
    except Exception:
        lines.append("numba-cuda-mlir: not installed")
    from . import compiler

    lines.append(f"compiler of the kernels: {compiler.NAME} (--compiler)")
    if _gpu_available():
        dev = compiler.cuda.get_current_device()
        lines.append(f"GPU: {dev.name} cc={dev.compute_capability}")
    else:
        lines.append(f"GPU: none ({_GPU_REASON})")
    return lines


def _shard_filter(config, items):
    """``COOP_SHARD=i/n`` keeps a deterministic 1/n of the tests (parallel GPU runs)."""
    shard = os.environ.get("COOP_SHARD", "").strip()
    if not shard:
        return items
    index, count = (int(x) for x in shard.split("/"))
    import zlib

    keep, drop = [], []
    for item in items:
        (keep if zlib.crc32(item.nodeid.encode()) % count == index else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
    return items


def _compiler_marks(item):
    """``xfail_on`` and ``only_on`` (tests/compiler.py) for the selected compiler."""
    from . import compiler

    for mark in item.iter_markers("only_on"):
        name, why = mark.args
        if name != compiler.NAME:
            item.add_marker(pytest.mark.skip(reason=f"{name} only: {why}"))
    for mark in item.iter_markers("xfail_on"):
        name, error, why = mark.args
        ids = mark.kwargs.get("ids")
        params = item.callspec.id if hasattr(item, "callspec") else ""
        if name == compiler.NAME and (ids is None or params in ids):
            item.add_marker(pytest.mark.xfail(strict=True, raises=compiler.named_exception(error),
                                              reason=f"{name}: {why} ({error})"))


def pytest_collection_modifyitems(config, items):
    _shard_filter(config, items)
    for item in items:
        _compiler_marks(item)
        marks = {m.name for m in item.iter_markers()} & {"unit", "compile", "gpu", "bench", "browser"}
        if len(marks) != 1:
            raise pytest.UsageError(f"{item.nodeid} must carry exactly one of unit/compile/gpu/bench/browser, has {marks}")
        if "gpu" in marks and not _gpu_available():
            item.add_marker(pytest.mark.skip(reason=_GPU_REASON))


@pytest.fixture(scope="session")
def nvdisasm():
    from cuda.coop.backends.numba_mlir.compile import find_nvdisasm

    return find_nvdisasm()


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    """A private on-disk provider cache and an empty in-memory cache."""
    from cuda.coop.core.cache import provider_cache

    monkeypatch.setenv("CUDA_COOP_CACHE_DIR", str(tmp_path / "cache"))
    provider_cache().clear_memory()
    yield tmp_path / "cache"
    provider_cache().clear_memory()


def pytest_addoption(parser):
    from .compiler import DEFAULT, NAMES

    parser.addoption("--compiler", default=DEFAULT, choices=NAMES,
                     help=f"the compiler of the suite's kernels (tests/compiler.py; default {DEFAULT})")


def pytest_configure(config):
    # Compile tests never need a driver; keep numba-cuda-mlir from probing for one
    # in ways that print warnings.
    os.environ.setdefault("NUMBA_CUDA_MLIR_QUIET", "1")
    from . import compiler

    compiler.select(config.getoption("--compiler"))



@pytest.fixture
def unchecked_kernels(monkeypatch):
    """Compile this test's kernels with ``CUDA_COOP_CHECKED=0``: the run-time controls are
    clamped to defined results instead of trapping (the documented opt-out).  The family
    suites use it where one launch covers oversized, negative and empty controls on
    purpose; kernelgen keeps kernels of the two modes apart (tests/kernelgen.py)."""
    monkeypatch.setenv("CUDA_COOP_CHECKED", "0")

