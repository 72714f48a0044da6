"""The two-step activation of the backends (backends/_deferred.py), in process.

The fresh-process checks (what registering imports, every way a kernel reaches cuda.coop
compiling afterwards) are in test_first_import.py and test_classic_registration.py.
"""

from __future__ import annotations

import ast
import sys
import threading
import warnings
from pathlib import Path

import pytest

from cuda.coop._errors import CudaCoopAutoRegistrationWarning
from cuda.coop._registration import call_after_import
from cuda.coop.backends._deferred import DeferredActivation

pytestmark = pytest.mark.unit

SRC = Path(__file__).resolve().parents[2] / "src" / "cuda" / "coop"


class _Backend(DeferredActivation):
    name = "test"

    def __init__(self, install):
        super().__init__()
        self.installs = 0
        self._body = install

    def _install(self):
        self.installs += 1
        self._body(self)


def test_ready_installs_once_across_threads():
    started, release = threading.Event(), threading.Event()

    def install(backend):
        started.set()
        release.wait(5)

    backend = _Backend(install)
    threads = [threading.Thread(target=backend.ready) for _ in range(4)]
    threads[0].start()
    started.wait(5)
    for t in threads[1:]:
        t.start()
    assert not backend.is_ready
    release.set()
    for t in threads:
        t.join(5)
    assert backend.is_ready and backend.installs == 1


def test_ready_called_from_its_own_installation_returns():
    backend = _Backend(lambda b: b.ready())
    backend.ready()
    assert backend.is_ready and backend.installs == 1


def test_a_failed_installation_is_raised_again_not_redone():
    def install(backend):
        raise RuntimeError("boom")

    backend = _Backend(install)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="boom"):
            backend.ready()
    assert backend.installs == 1 and not backend.is_ready


def test_ready_elsewhere_leaves_a_failure_to_the_compile_that_needs_the_backend():
    # The helper thread of the first cooperative definition (backends/_first_compile.py)
    # must not make a failure there the one every later compile raises.
    def install(backend):
        if backend.installs == 1:
            raise RuntimeError("failed on the helper thread")

    backend = _Backend(install)
    backend.ready_elsewhere()
    assert not backend.is_ready
    backend.ready()
    assert backend.is_ready and backend.installs == 2


class _LockedBackend(_Backend):
    """A backend whose installation takes the compiler's compile lock, as a registry refresh may."""

    def __init__(self, install, compile_lock):
        super().__init__(install)
        self.compile_lock = compile_lock

    def _compile_lock(self):
        return self.compile_lock


def test_ready_takes_the_compile_lock_first_so_a_compile_and_a_typeof_cannot_deadlock():
    # One thread compiles (holds the compile lock, then meets ready() in its rewrite); the
    # other meets ready() in typeof, without the lock.  With _ready_lock taken first, the
    # second would hold it while waiting for the compile lock the first holds.
    compile_lock = threading.RLock()
    compiling, typeof_waits = threading.Event(), threading.Event()

    def install(backend):
        with compile_lock:
            pass

    backend = _LockedBackend(install, compile_lock)

    def compile_then_ready():
        with compile_lock:
            compiling.set()
            typeof_waits.wait(5)
            backend.ready()

    def typeof_ready():
        compiling.wait(5)
        typeof_waits.set()
        backend.ready()

    threads = [threading.Thread(target=compile_then_ready, daemon=True),
               threading.Thread(target=typeof_ready, daemon=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads), "ready() deadlocked between a compile and a typeof"
    assert backend.is_ready and backend.installs == 1


def _fake_module(tmp_path, monkeypatch, name):
    (tmp_path / f"{name}.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)


def test_call_after_import_runs_after_the_module(tmp_path, monkeypatch):
    name = "coop_after_import_probe"
    _fake_module(tmp_path, monkeypatch, name)
    seen = []
    call_after_import(name, lambda: seen.append(sys.modules[name].VALUE))
    call_after_import(name, lambda: seen.append("second"))
    assert seen == []
    __import__(name)
    assert seen == [1, "second"]
    call_after_import(name, lambda: seen.append("now"))  # already imported: at once
    assert seen == [1, "second", "now"]


def test_a_failing_callback_warns_and_the_import_still_succeeds(tmp_path, monkeypatch):
    name = "coop_after_import_failing_probe"
    _fake_module(tmp_path, monkeypatch, name)

    def fail():
        raise ValueError("hook bug")

    call_after_import(name, fail)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = __import__(name)
    assert module.VALUE == 1
    assert any(issubclass(w.category, CudaCoopAutoRegistrationWarning) and "hook bug" in str(w.message)
               for w in caught)


# The numba-cuda-mlir _compat functions that use a name load_compiler() imports without
# calling it: they run while a cooperative kernel is lowered or the backend is made ready,
# after load_compiler().  A function that can run earlier (a compile of a kernel without
# cuda.coop) must call load_compiler() itself; adding one here says it cannot.
_AFTER_READY = {
    "require_launch_config", "inline_ptx_u32", "inline_ptx_barrier", "workgroup_global", "workgroup_dynamic",
    "workgroup_pointer", "workgroup_view", "pointer_plus_bytes", "array_extent", "local_array", "store_element0",
    "overload_inlined_method", "load_element0", "call_void", "llvm_pointer_type",
}


def test_compat_functions_load_the_compiler_before_its_deferred_names():
    path = SRC / "backends" / "numba_mlir" / "_compat.py"
    tree = ast.parse(path.read_text())
    deferred = next(ast.literal_eval(node.value.args[0]) for node in tree.body if isinstance(node, ast.Assign)
                    and getattr(node.targets[0], "id", None) == "_DEFERRED")
    unguarded = set()
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name in ("load_compiler", "__getattr__"):
            continue
        local = {a.asname or a.name for n in ast.walk(node) if isinstance(n, ast.ImportFrom) for a in n.names}
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in deferred} - local
        loads = any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "load_compiler" for n in ast.walk(node))
        if used and not loads:
            unguarded.add(node.name)
    assert unguarded == _AFTER_READY, (
        f"use a deferred name without load_compiler(): {sorted(unguarded - _AFTER_READY)}; "
        f"no longer: {sorted(_AFTER_READY - unguarded)}")


def test_an_operation_is_found_through_its_family_alone():
    """ops/_lookup.py answers as the registry does, for every operation, by name and by stub."""
    from cuda import coop
    from cuda.coop.backends._inference import positions
    from cuda.coop.ops._lookup import spec_named, spec_of
    from cuda.coop.ops._registry import all_specs

    for spec in all_specs():
        assert spec_named(spec.name) is spec and spec_of(spec.stub) is spec, spec.name
    assert spec_of(coop.this_block) is None and spec_named("this_block") is None and spec_of(len) is None
    definers = positions("payload_dtype_from")
    assert "load" in definers and definers["load"] == definers.get("load")
    assert "this_block" not in definers and definers.get("not_an_operation", "none") == "none"
    with pytest.raises(KeyError):
        definers["this_block"]
