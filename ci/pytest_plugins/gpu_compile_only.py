"""GPU tests without a GPU, up to the cubin: ``python -m pytest -p gpu_compile_only -m gpu``.

The GPU tests build their kernels the way users do and launch them with
``kernel[grid, block](*args)``.  On a machine without a device they skip, so a
change that makes one of those kernels fail to compile would go unseen until the
next GPU run.  This plugin runs them anyway: each launch compiles the kernel for
sm_90 with the launch's block, grid and cluster (``cuda.coop.numba_mlir.compile_cubin``,
arrays typed from the arguments) instead of running it, and
``cuda.synchronize()`` does nothing.  The results are then wrong (the outputs keep
their poison), so a test's outcome is read as:

- passed: at least one kernel compiled and nothing but a result check failed
  (AssertionError, or any error after the first compile that is neither a
  cuda-coop error nor a numba typing/lowering error);
- failed: a cuda-coop error or a numba compile error, i.e. a kernel the GPU run
  would not even have launched;
- skipped: the test needed the device before its first launch (device arrays,
  device queries), with the reason.

Load it from ci/pytest_plugins (PYTHONPATH) and select the GPU tests with ``-m gpu``.
"""

from __future__ import annotations

import pytest

_compiled: list = []  # kernels compiled by the current test
_seen: set = set()  # (kernel, argument types, block, grid) already compiled in this process


def _compile_only_launch(dispatcher, config, classic=False):
    if classic:  # a kernel of classic numba-cuda (``from numba import cuda``)
        from numba.cuda import types
        from numba.cuda.core.errors import ForceLiteralArg

        from cuda.coop.backends.numba_cuda.compile import _argtype
        from cuda.coop.numba_cuda import compile_cubin as _compile

        def compile_cubin(kernel, args, cluster=None, **kw):
            # As numba-cuda's dispatcher types a launch: integers as plain integers, then
            # literals for the positions a ForceLiteralArg asks for (the backend's retry).
            argtypes = [dispatcher.typeof_pyval(a) for a in args]
            try:
                return _compile(kernel, argtypes, **kw)
            except ForceLiteralArg as request:
                argtypes = [types.literal(a) if i in request.requested_args else t
                            for i, (a, t) in enumerate(zip(args, argtypes))]
                return _compile(kernel, argtypes, **kw)
    else:
        from cuda.coop.backends.numba_mlir.compile import _argtype
        from cuda.coop.numba_mlir import compile_cubin

    grid, block = config[0], config[1]
    cluster = config[4] if len(config) > 4 else None  # kernel[grid, block, stream, sharedmem, cluster]

    def launch(*args):
        # A launch repeated with new data (loops, hypothesis examples) compiles once.
        key = (id(dispatcher), tuple(str(_argtype(a)) for a in args), str(block), str(grid), str(cluster))
        if key not in _seen:
            compile_cubin(dispatcher, args, cc=(9, 0), block=block, grid=grid, cluster=cluster)
            _seen.add(key)
        _compiled.append(getattr(dispatcher, "__name__", "kernel"))

    return launch


def pytest_configure(config):
    from numba_cuda_mlir import cuda
    from numba_cuda_mlir.descriptor import MLIRDispatcher

    # Each replacement keeps the signature of what it replaces: the backends check it
    # (backends/*/_upstream_names.py) before they register.
    def mlir_getitem(self, args):
        return _compile_only_launch(self, args)

    MLIRDispatcher.__getitem__ = mlir_getitem
    cuda.synchronize = lambda: None
    # tests/backends_param.py: the compiler's GPU tests run (their kernels compile) instead
    # of skipping for want of a device.
    import os

    os.environ["CUDA_COOP_GPU_COMPILE_ONLY"] = "1"
    try:  # classic numba-cuda, where installed (the cross-backend tests use it)
        from numba import cuda as classic
        from numba.cuda.dispatcher import CUDADispatcher
    except ImportError:
        return
    def classic_getitem(self, args):
        return _compile_only_launch(self, args, classic=True)

    CUDADispatcher.__getitem__ = classic_getitem
    classic.synchronize = lambda: None


def pytest_report_header(config):
    return ["gpu_compile_only: GPU tests compile their kernels for sm_90 instead of launching them"]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    # tests/conftest.py marks GPU tests as skipped on a machine without a device: undo that
    # (only that: a test of another compiler, tests/compiler.py's only_on, stays skipped).
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.own_markers[:] = [m for m in item.own_markers if m.name != "skip"
                                   or not str(m.kwargs.get("reason", "")).startswith("no CUDA device")]


def _is_compile_error(excinfo) -> bool:
    import cuda.coop as coop

    if excinfo.errisinstance(coop.CoopError):
        return True
    from numba_cuda_mlir.numba_cuda.core import errors

    if excinfo.errisinstance((errors.TypingError, errors.LoweringError)):
        return True
    try:
        from numba.cuda.core import errors as classic_errors
    except ImportError:
        return False
    return excinfo.errisinstance((classic_errors.TypingError, classic_errors.LoweringError))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    if call.when == "setup":
        _compiled.clear()
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or item.get_closest_marker("gpu") is None or not report.failed:
        return
    if _is_compile_error(call.excinfo):
        return  # a real failure: this kernel would not have compiled on the GPU either
    if _compiled:
        report.outcome = "passed"
        report.longrepr = None
        report.sections.append(("gpu_compile_only", f"compiled {len(_compiled)} launch(es); results not checked"))
    else:
        report.outcome = "skipped"
        reason = f"needs a device before its first launch ({call.excinfo.typename}: {str(call.excinfo.value)[:120]})"
        report.longrepr = (str(item.path), item.location[1] or 0, reason)
