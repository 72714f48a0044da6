"""The common API: importable without a compiler or GPU, descriptors, host behaviour, registration."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cuda.coop as coop

pytestmark = pytest.mark.unit

ANCHOR_COMMON = {"this_block", "this_warp", "ThreadData", "TempStorage", "register", "load", "store"}


def test_namespace_package_has_no_cuda_init():
    import cuda

    assert getattr(cuda, "__file__", None) is None, "src/cuda/__init__.py must not exist (PEP 420)"


def test_every_public_name_resolves():
    for name in coop.__all__:
        assert hasattr(coop, name), name
    assert ANCHOR_COMMON <= set(coop.__all__)


def test_operations_are_imported_by_name_for_editors():
    """cuda/coop/__init__.py imports each operation by name under ``if TYPE_CHECKING:`` (what
    static tools read) and maps it to its family in _OPERATIONS (what __getattr__ imports on
    first use); both list exactly the registry's stubs; py.typed marks the package as typed."""
    import ast
    from pathlib import Path

    from cuda.coop.ops._registry import public_operations

    init = Path(coop.__file__)
    checked = [node for node in ast.parse(init.read_text()).body
               if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)]
    assert checked
    imports = [node for block in checked for node in block.body
               if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ops.")]
    imported = {alias.asname or alias.name for node in imports for alias in node.names}
    ops = public_operations()
    assert imported == set(ops) == set(coop._OPERATIONS)
    for node in imports:
        for alias in node.names:
            assert coop._OPERATIONS[alias.name] == node.module.removeprefix("ops."), alias.name
    assert set(ops) <= set(coop.__all__)
    for name, stub in ops.items():
        assert getattr(coop, name) is stub, name
    assert (init.parent / "py.typed").is_file()


def test_operations_are_attributes_before_first_use():
    """In a fresh process the families are not imported, yet every operation is listed by
    dir(), resolves with its signature and docstring, and star-import binds it."""
    result = _python("""
        import inspect, sys
        import cuda.coop as coop
        # The ops package and its name -> family table (ops/_families.py) load with cuda.coop.
        TABLE = ("cuda.coop.ops", "cuda.coop.ops._families")
        print("TABLE", sorted(m for m in sys.modules if m in TABLE))
        print("FAMILIES", sorted(m for m in sys.modules if m.startswith("cuda.coop.ops") and m not in TABLE))
        print("DIR", {"load", "store", "histogram", "sum"} <= set(dir(coop)))
        print("SIG", inspect.signature(coop.load).parameters["algorithm"].default)
        print("DOC", coop.load.__doc__.split(".")[0])
        print("LOADED", sorted(m for m in sys.modules if m.startswith("cuda.coop.ops.") and m not in TABLE))
        ns = {}
        exec("from cuda.coop import *", ns)
        print("STAR", all(ns[name] is getattr(coop, name) for name in coop.__all__))
        try:
            coop.no_such_operation
        except AttributeError as exc:
            print("MISSING", exc)
    """, CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION="1")
    out = result.stdout
    assert "TABLE ['cuda.coop.ops', 'cuda.coop.ops._families']" in out, out + result.stderr
    assert "FAMILIES []" in out and "DIR True" in out and "SIG direct" in out, out + result.stderr
    assert "DOC Load a tile of ``source`` into each thread's ``output`` payload" in out
    assert "LOADED ['cuda.coop.ops._launch_rules'" in out and "'cuda.coop.ops.load_store'" in out
    assert "'cuda.coop.ops.histogram'" not in out.split("LOADED")[1].split("\n")[0]
    assert "STAR True" in out
    assert "MISSING module 'cuda.coop' has no attribute 'no_such_operation'" in out


def test_operations_have_positional_operands_and_keyword_controls():
    from cuda.coop.ops._registry import all_specs

    for spec in all_specs():
        params = list(inspect.signature(spec.stub).parameters.values())
        kinds = {p.kind for p in params}
        assert kinds <= {inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.KEYWORD_ONLY,
                         inspect.Parameter.POSITIONAL_OR_KEYWORD}, spec.name
        # The one control that may also come by position is TopK's k (NVIDIA's spelling).
        either = [p.name for p in params if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
        assert either == (["k"] if spec.name.startswith("topk_") else []), spec.name
        assert params[0].name in ("group", "block", "warp_group"), spec.name
        assert spec.stub.__doc__ and "Returns" in spec.stub.__doc__, f"{spec.name} documents its result"


def test_kernel_functions_pickle_by_reference_in_a_fresh_process():
    # A kernel cache pickles the cooperative functions a kernel refers to; loading
    # them in another process must give back the very objects of that process,
    # operations whose family module was not imported yet included.
    import pickle

    from cuda.coop._kernel_api import KernelFunction

    functions = {name: getattr(coop, name) for name in dir(coop)}
    functions = {n: f for n, f in functions.items() if isinstance(f, KernelFunction)}
    assert {"load", "store", "reduce", "this_block"} <= set(functions)
    for name, function in functions.items():
        assert pickle.loads(pickle.dumps(function)) is function, name
    blob = pickle.dumps([functions["radix_sort_keys"], functions["this_warp"]])
    code = textwrap.dedent(f"""
        import pickle, sys
        import cuda.coop as coop
        sort, warp = pickle.loads({blob!r})
        assert sort is coop.radix_sort_keys and warp is coop.this_warp
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_ops_called_on_the_host_raise():
    with pytest.raises(coop.CoopCompilerContextRequiredError) as info:
        coop.load(coop.this_block(), np.zeros(4), None)
    assert "inside a @cuda.jit kernel" in str(info.value)
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(coop.CoopCompilerContextRequiredError):
        coop.store(coop.this_block(), np.zeros(4), 1)


def test_groups_on_the_host():
    assert coop.this_block().kind == "block"
    warp = coop.this_warp()
    assert warp.kind == "warp" and warp.width == 32 and not warp.is_logical
    assert coop.this_warp().group_by(8).width == 8
    assert coop.this_warp().group_by(8) == coop.this_warp().group_by(8)
    for width in (1, 2, 4, 8, 16, 32):
        assert coop.this_warp().group_by(width).width == width


@pytest.mark.parametrize("width", [0, 3, 12, 33, 64, -1, 2.0, True, "8"])
def test_invalid_logical_warp_widths(width):
    with pytest.raises(coop.InvalidGroupWidthError) as info:
        coop.this_warp().group_by(width)
    assert f"width={width!r}" in str(info.value) and "1, 2, 4, 8, 16, 32" in str(info.value)


def test_group_by_only_on_a_hardware_warp():
    with pytest.raises(coop.InvalidGroupWidthError):
        coop.this_warp().group_by(8).group_by(2)


def test_thread_data_descriptor_validation():
    td = coop.ThreadData(4, np.float32, alignment=16)
    assert td.items_per_thread == 4 and td.dtype == np.float32 and td.alignment == 16
    assert coop.ThreadData(2, int).dtype == np.int32  # builtin int means 32-bit
    assert coop.ThreadData(2, float).dtype == np.float32
    assert coop.ThreadData(2).dtype is None
    with pytest.raises(coop.InvalidArgumentValueError, match="items_per_thread=0"):
        coop.ThreadData(0)
    with pytest.raises(coop.InvalidArgumentTypeError, match="items_per_thread"):
        coop.ThreadData(2.5)
    with pytest.raises(coop.InvalidArgumentTypeError):
        coop.ThreadData(True)
    assert coop.ThreadData(2, np.float16).dtype == np.float16
    # complex payloads are accepted here; the families that combine values refuse them.
    assert coop.ThreadData(2, np.complex64).dtype == np.complex64
    assert coop.ThreadData(2, "complex128").dtype == np.complex128
    with pytest.raises(coop.UnsupportedDtypeError, match="datetime64"):
        coop.ThreadData(2, "datetime64[s]")
    with pytest.raises(coop.UnsupportedDtypeError, match="bool"):
        coop.ThreadData(2, bool)
    with pytest.raises(coop.InvalidArgumentValueError, match="alignment=12"):
        coop.ThreadData(2, alignment=12)


def test_bfloat16_without_ml_dtypes_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # as if it were not installed
    with pytest.raises(coop.UnsupportedDtypeError) as info:
        coop.ThreadData(2, "bfloat16")
    msg = str(info.value)
    assert "dtype='bfloat16'" in msg and "ml_dtypes" in msg and "pip install ml_dtypes" in msg


def test_temp_storage_descriptor_validation():
    ts = coop.TempStorage(1024, alignment=16, auto_sync=False, sharing="exclusive")
    assert (ts.size_in_bytes, ts.alignment, ts.auto_sync, ts.sharing) == (1024, 16, False, "exclusive")
    assert coop.TempStorage().sharing == "shared"
    with pytest.raises(coop.InvalidAlgorithmError, match="sharing='private'"):
        coop.TempStorage(sharing="private")
    with pytest.raises(coop.InvalidArgumentValueError):
        coop.TempStorage(-1)
    with pytest.raises(coop.InvalidArgumentTypeError):
        coop.TempStorage(auto_sync="yes")
    assert coop.TempStorage(16, 32).alignment == 32  # alignment may be positional (NVIDIA's tests pass it so)
    with pytest.raises(TypeError):
        coop.TempStorage(16, 16, False)  # auto_sync and sharing are keyword-only


def test_temp_storage_reserve_on_the_host_checks_then_raises():
    """reserve() returns shared memory, so a host call raises after checking its arguments."""
    import numpy as np

    ts = coop.TempStorage()
    with pytest.raises(coop.CoopCompilerContextRequiredError, match="inside a @cuda.jit kernel"):
        ts.reserve(64, np.float32, alignment=32)
    with pytest.raises(coop.InvalidArgumentValueError, match="count=0 must be positive"):
        ts.reserve(0, np.int32)
    with pytest.raises(coop.InvalidArgumentTypeError, match="count=True"):
        ts.reserve(True, np.int32)
    with pytest.raises(coop.UnsupportedDtypeError, match="supported fixed-width"):
        ts.reserve(4, bool)
    with pytest.raises(coop.InvalidArgumentValueError, match="power of two"):
        ts.reserve(4, np.int32, alignment=3)


def test_errors_derive_from_builtins():
    assert issubclass(coop.InvalidAlgorithmError, ValueError)
    assert issubclass(coop.UnsupportedDtypeError, TypeError)
    assert issubclass(coop.BackendUnavailableError, ImportError)
    for name in coop._errors.__all__:
        cls = getattr(coop, name)
        assert issubclass(cls, (coop.CoopError, coop.CudaCoopAutoRegistrationWarning))


def test_register_rejects_unknown_backend():
    with pytest.raises(coop.UnknownBackendError, match="'cutlass'"):
        coop.register("cutlass")
    with pytest.raises(coop.UnknownBackendError):
        coop.register(3)


def _python(code, **env):
    full = {k: v for k, v in os.environ.items() if k != "CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION"}
    full.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full, timeout=300)


def test_import_without_compiler_is_light():
    result = _python("""
        import sys
        import cuda.coop
        heavy = [m for m in ("numba_cuda_mlir", "cuda.bindings", "numba", "ml_dtypes") if m in sys.modules]
        print("HEAVY", heavy)
    """)
    assert "HEAVY []" in result.stdout, result.stderr


REG = "from cuda.coop import _registration as r; print('ACTIVE', r.active_backend() is not None)"


def test_auto_registration_compiler_first():
    pytest.importorskip("numba_cuda_mlir")
    result = _python(f"import numba_cuda_mlir\nimport cuda.coop\n{REG}")
    assert "ACTIVE True" in result.stdout, result.stderr


def test_auto_registration_compiler_later():
    pytest.importorskip("numba_cuda_mlir")
    result = _python(f"import cuda.coop\nimport numba_cuda_mlir\n{REG}")
    assert "ACTIVE True" in result.stdout, result.stderr


def test_auto_registration_can_be_disabled():
    pytest.importorskip("numba_cuda_mlir")
    code = f"import numba_cuda_mlir\nimport cuda.coop\n{REG}\nimport cuda.coop as c\nc.register('numba_cuda_mlir')\n{REG}"
    result = _python(code, CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION="1")
    assert result.stdout.split() == ["ACTIVE", "False", "ACTIVE", "True"], result.stdout + result.stderr


def test_qualified_import_activates():
    pytest.importorskip("numba_cuda_mlir")
    result = _python(f"import cuda.coop.numba_mlir as coop\n{REG}\nprint(hasattr(coop, 'compile_cubin'))",
                     CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION="1")
    assert "ACTIVE True" in result.stdout and "True" in result.stdout.split()[-1], result.stderr


def test_unsupported_compiler_version_is_named(tmp_path):
    """A fake numba_cuda_mlir 0.5.3 on the path: the error names both versions and the extra."""
    pkg = tmp_path / "numba_cuda_mlir"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("__version__ = '0.5.3'\n")
    result = _python("""
        import warnings
        warnings.simplefilter("always")
        import numba_cuda_mlir
        with warnings.catch_warnings(record=True) as caught:
            import cuda.coop as coop
        print("WARN", [str(w.message) for w in caught])
        try:
            coop.register("numba-cuda-mlir")
        except coop.UnsupportedBackendVersionError as e:
            print("ERR", e)
    """, PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = result.stdout
    assert "ERR numba-cuda-mlir 0.5.3 is installed" in out, out + result.stderr
    assert ">=0.6.0,<0.7" in out and "numba-cuda-mlir-cu13" in out
    assert "automatic DSL registration" in out  # the import warned instead of failing


def test_missing_compiler_is_named(tmp_path):
    result = _python("""
        import sys
        sys.modules["numba_cuda_mlir"] = None  # import fails as if not installed
        import cuda.coop as coop
        try:
            coop.register("numba-cuda-mlir")
        except coop.BackendUnavailableError as e:
            print("ERR", e)
    """)
    assert "ERR cuda-coop's numba-cuda-mlir backend needs numba-cuda-mlir>=0.6.0,<0.7, which is not installed" in result.stdout, result.stderr
