"""The compilers' private names each backend's ``_compat.UPSTREAM`` declares (backends/_upstream.py).

- One test case per entry and installed compiler: the name is still there, with the
  parameters cuda-coop relies on.  A failure names the attribute, the installed version and
  the fix; it is the message a user gets from the backend's activation.
- The checker bites: a fake missing name, a changed signature, a lost instance attribute or
  frame local give such messages, and ``verify`` raises UnsupportedBackendVersionError.
- Completeness: every attribute assignment to an upstream object in a ``_compat.py`` (found
  by AST: ``X.attr = ...`` and ``setattr(X, ...)`` where X is not cuda-coop's own) and every
  private import there has an entry, so a new patch without a guard fails here.
- Activation refuses a compiler whose table does not check, before any patch (fresh processes).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from cuda.coop.backends import _upstream as U
from cuda.coop.backends._upstream import UpstreamName

pytestmark = pytest.mark.unit

SRC = Path(__file__).resolve().parents[2] / "src"
COMPAT = {
    "numba-cuda-mlir": SRC / "cuda" / "coop" / "backends" / "numba_mlir" / "_compat.py",
    "numba-cuda": SRC / "cuda" / "coop" / "backends" / "numba_cuda" / "_compat.py",
}
# Every module of a backend that patches or imports its compiler's internals: _compat.py
# (typing, lowering, compile, the link cache's hook) and _compat_launch.py (the launch path).
COMPAT_FILES = {compiler: sorted(path.parent.glob("_compat*.py")) for compiler, path in COMPAT.items()}
# The link cache's wrapper is written once for both compilers: it sets attributes of either
# compiler's _Linker, so each table must name them.
SHARED_PATCH_FILES = [SRC / "cuda" / "coop" / "backends" / "_final_link.py"]
# The tables themselves, as data beside each _compat.py (which re-exports them).
TABLE_SOURCE = {compiler: path.with_name("_upstream_names.py") for compiler, path in COMPAT.items()}
COMPAT_MODULE = {"numba-cuda-mlir": "cuda.coop.backends.numba_mlir._compat",
                 "numba-cuda": "cuda.coop.backends.numba_cuda._compat"}
TOP = {"numba-cuda-mlir": "numba_cuda_mlir", "numba-cuda": "numba_cuda"}
# Modules whose names are public (test_compat_boundary.py's lists; llvmlite.ir is llvmlite's API).
PUBLIC = {"numba-cuda-mlir": {"numba_cuda_mlir", "numba_cuda_mlir.cuda", "numba_cuda_mlir.extending"},
          "numba-cuda": {"numba", "numba.cuda", "numba_cuda", "llvmlite.ir"}}
ROOTS = {"numba-cuda-mlir": ("numba_cuda_mlir",), "numba-cuda": ("numba", "numba_cuda", "llvmlite")}


def _table(compiler: str) -> tuple:
    """``UPSTREAM`` read from the source, without importing the compiler: a literal of
    UpstreamName(...) calls and the kind constants (the test of the imported table below
    checks that it is the same)."""
    source = TABLE_SOURCE[compiler]
    tree = ast.parse(source.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["UPSTREAM"]:
            namespace = {name: getattr(U, name) for name in ("UpstreamName", "MODULE", "ATTRIBUTE", "CALLABLE",
                                                             "INSTANCE", "FRAME")}
            return eval(compile(ast.Expression(node.value), str(source), "eval"), namespace)
    raise AssertionError(f"{source} has no UPSTREAM = (...)")


TABLES = {compiler: _table(compiler) for compiler in COMPAT}
CASES = [pytest.param(compiler, entry, id=f"{compiler}-{entry.kind}-{entry.dotted}")
         for compiler, table in TABLES.items() for entry in table]


def _compat(compiler: str):
    """The backend's _compat, or a skip with the reason when its compiler is not usable here."""
    if importlib.util.find_spec(TOP[compiler]) is None:
        pytest.skip(f"{compiler} is not installed (pip install 'cuda-coop[{compiler}-cu13]')")
    from cuda import coop
    from cuda.coop._errors import BackendUnavailableError, UnsupportedBackendVersionError

    try:
        # Registered first, as a program does: importing classic's _compat while cuda.coop's
        # import hook waits for numba.cuda would register the backend from inside it.
        coop.register(compiler)
        return importlib.import_module(COMPAT_MODULE[compiler])
    except (BackendUnavailableError, UnsupportedBackendVersionError) as error:  # e.g. NumPy 2.5 for numba-cuda
        pytest.skip(f"{compiler} backend unavailable here: {error}")


# ----------------------------------------------------------------------------------------
# Every entry, in the installed compiler
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("compiler, entry", CASES)
def test_upstream_name_is_there(compiler, entry):
    C = _compat(compiler)
    if entry.needs and entry.needs not in sys.modules:
        if importlib.util.find_spec(entry.needs) is None:
            pytest.skip(f"{entry.dotted} applies with {entry.needs}, which is not installed")
        importlib.import_module(entry.needs)
    found = C.upstream_problems((entry,))
    assert not found, "\n".join(found)


@pytest.mark.parametrize("compiler", list(COMPAT))
def test_imported_table_is_the_source_literal(compiler):
    C = _compat(compiler)
    assert C.UPSTREAM == TABLES[compiler]
    assert len({e.path for e in C.UPSTREAM}) == len(C.UPSTREAM), "one entry per path"
    assert all(e.why and e.kind in (U.MODULE, U.ATTRIBUTE, U.CALLABLE, U.INSTANCE, U.FRAME) for e in C.UPSTREAM)


def test_tables_name_what_upstream_lacks():
    for compiler, table in TABLES.items():
        for entry in table:
            assert len(entry.why) > 15, f"{compiler}: {entry.dotted} needs a why (what upstream lacks)"


# ----------------------------------------------------------------------------------------
# The checker bites (a fake upstream module: no compiler needed)
# ----------------------------------------------------------------------------------------

FAKE = "coop_fake_upstream"
ARGS = dict(compiler="fakecc", version="9.9.9", supported=">=1.0,<1.1", tested="1.0.3")


@pytest.fixture
def fake_module(monkeypatch):
    module = types.ModuleType(FAKE)

    class Launcher:
        def __init__(self):
            self._launcher = None

        def launch(self, grid, block, stream=0):
            pass

        def propagate(self, typeinfer):
            for constraint in ():
                pass

    module.Launcher = Launcher
    module.helper = lambda arg, ty: None
    monkeypatch.setitem(sys.modules, FAKE, module)
    return module


def _only(entry) -> str:
    found = U.problems((entry,), **ARGS)
    assert len(found) == 1, found
    message = found[0]
    for part in ("fakecc 9.9.9", ">=1.0,<1.1", "fakecc==1.0.3", U.ISSUES, entry.why):
        assert part in message, (part, message)
    return message


def test_checker_names_a_missing_attribute(fake_module):
    message = _only(UpstreamName(f"{FAKE}:Launcher._gone", U.ATTRIBUTE, (), "upstream lacks a test hook"))
    assert f"{FAKE}.Launcher._gone is gone" in message


def test_checker_names_a_missing_module_and_module_name(fake_module):
    assert "module coop_fake_missing is gone" in _only(
        UpstreamName("coop_fake_missing", U.MODULE, (), "upstream lacks a test module"))
    assert f"{FAKE}.nothing is gone" in _only(UpstreamName(FAKE, U.MODULE, ("helper", "nothing"), "a test name"))


def test_checker_names_a_changed_signature(fake_module):
    message = _only(UpstreamName(f"{FAKE}:Launcher.launch", U.CALLABLE, ("self", "griddim", "blockdim"),
                                 "upstream lacks a test hook"))
    assert f"{FAKE}.Launcher.launch changed its signature" in message
    assert "expects (self, griddim, blockdim)" in message and "(self, grid, block, stream=0)" in message


def test_checker_accepts_extra_defaulted_parameters_and_open_ended_entries(fake_module):
    launch = f"{FAKE}:Launcher.launch"
    assert U.problems((UpstreamName(launch, U.CALLABLE, ("self", "grid", "block"), "x"),), **ARGS) == []
    assert U.problems((UpstreamName(launch, U.CALLABLE, ("self", "..."), "x"),), **ARGS) == []
    # A further parameter without a default is a change, unless the entry is open-ended.
    assert U.problems((UpstreamName(f"{FAKE}:helper", U.CALLABLE, ("arg",), "upstream lacks it"),), **ARGS)


def test_checker_sees_through_coop_wrappers(fake_module, monkeypatch):
    original = fake_module.Launcher.launch

    def wrapper(self, *args, **kwargs):
        return original(self, *args, **kwargs)

    wrapper.__wrapped__ = original
    monkeypatch.setattr(fake_module.Launcher, "launch", wrapper)
    assert U.problems((UpstreamName(f"{FAKE}:Launcher.launch", U.CALLABLE, ("self", "grid", "block"), "x"),),
                      **ARGS) == []


def test_checker_names_a_lost_instance_attribute_and_frame_local(fake_module):
    assert U.problems((UpstreamName(f"{FAKE}:Launcher", U.INSTANCE, ("_launcher",), "x"),), **ARGS) == []
    message = _only(UpstreamName(f"{FAKE}:Launcher", U.INSTANCE, ("_launcher", "_kernel"), "upstream lacks it"))
    assert f"{FAKE}.Launcher instances no longer have _kernel" in message
    assert U.problems((UpstreamName(f"{FAKE}:Launcher.propagate", U.FRAME, ("typeinfer", "constraint"), "x"),),
                      **ARGS) == []
    message = _only(UpstreamName(f"{FAKE}:Launcher.propagate", U.FRAME, ("constraint", "loc"), "upstream lacks it"))
    assert "no longer has the local loc" in message
    fake_module.Launcher.run = fake_module.Launcher.launch  # found by name: a renamed function is lost
    message = _only(UpstreamName(f"{FAKE}:Launcher.run", U.FRAME, ("self",), "upstream lacks it"))
    assert f"{FAKE}.Launcher.run is no longer a Python function named 'run'" in message


def test_checker_does_not_run_properties(fake_module):
    ran = []

    class Lazy:
        @property
        def value(self):
            ran.append(True)
            return 1

    fake_module.lazy = Lazy()
    assert U.problems((UpstreamName(f"{FAKE}:lazy.value", U.ATTRIBUTE, (), "x"),), **ARGS) == []
    assert not ran


def test_verify_raises_a_named_error_once_per_entry(fake_module, monkeypatch):
    from cuda.coop import UnsupportedBackendVersionError

    monkeypatch.setattr(U, "_checked", {})
    gone = UpstreamName(f"{FAKE}:Launcher._gone", U.ATTRIBUTE, (), "upstream lacks a test hook")
    fine = UpstreamName(f"{FAKE}:helper", U.CALLABLE, ("arg", "ty"), "upstream lacks a test hook")
    with pytest.raises(UnsupportedBackendVersionError) as info:
        U.verify((fine, gone), **ARGS)
    text = str(info.value)
    assert "fakecc 9.9.9 is installed" in text and f"{FAKE}.Launcher._gone is gone" in text
    assert ">=1.0,<1.1" in text and "fakecc==1.0.3" in text and f"{FAKE}.helper" not in text
    fake_module.Launcher._gone = 1  # the result is remembered: no second look
    with pytest.raises(UnsupportedBackendVersionError):
        U.verify((fine, gone), **ARGS)
    U.verify((fine,), **ARGS)


def test_installed_version_names_a_missing_or_unsupported_compiler(monkeypatch):
    """Both backends' check_version(): the compiler, its installed version, the supported
    range and the install command, as BackendUnavailableError or UnsupportedBackendVersionError."""
    from cuda.coop import BackendUnavailableError, UnsupportedBackendVersionError

    args = dict(compiler="fakecc", supported=((1, 0, 0), (1, 1, 0)), supported_text=">=1.0,<1.1",
                hint="pip install 'cuda-coop[fakecc]'")
    monkeypatch.setitem(sys.modules, FAKE, None)  # import fails as if not installed
    with pytest.raises(BackendUnavailableError) as info:
        U.installed_version(FAKE, **args)
    assert "fakecc>=1.0,<1.1, which is not installed" in str(info.value)
    assert "pip install 'cuda-coop[fakecc]'" in str(info.value)

    module = types.ModuleType(FAKE)
    module.__version__ = "0.9.2"
    monkeypatch.setitem(sys.modules, FAKE, module)
    with pytest.raises(UnsupportedBackendVersionError) as info:
        U.installed_version(FAKE, **args)
    assert "fakecc 0.9.2 is installed, but cuda-coop needs fakecc>=1.0,<1.1" in str(info.value)
    assert "pip install 'cuda-coop[fakecc]'" in str(info.value)

    module.__version__ = "1.0.3rc1"
    assert U.installed_version(FAKE, **args) == "1.0.3rc1"


def test_verify_loaded_only_imports_nothing(monkeypatch):
    monkeypatch.setattr(U, "_checked", {})
    entry = UpstreamName("coop_fake_never_imported:thing", U.ATTRIBUTE, (), "x")
    U.verify((entry,), loaded_only=True, **ARGS)
    assert entry not in U._checked and "coop_fake_never_imported" not in sys.modules


# ----------------------------------------------------------------------------------------
# Completeness: every patch and every private import of a _compat.py has an entry
# ----------------------------------------------------------------------------------------

_MARKERS = ("__wrapped__", "__name__", "__qualname__", "__doc__")


class _Scope:
    """What a name means inside one top-level function (or the module): an upstream dotted
    path, cuda-coop's own object, or unknown (a parameter or local of unknown origin)."""

    def __init__(self, module_scope=None):
        self.paths = dict(module_scope.paths) if module_scope else {}
        self.ours = set(module_scope.ours) if module_scope else set()
        self.loops = {}

    def bind_import(self, node):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                self.paths[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                self.ours.discard(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.paths[alias.asname] = alias.name
                else:
                    self.paths[alias.name.split(".")[0]] = alias.name.split(".")[0]

    def resolve(self, expr):
        """(dotted path, None) for an upstream object, (None, "ours"), or (None, None)."""
        if isinstance(expr, ast.Name):
            if expr.id in self.ours:
                return None, "ours"
            return self.paths.get(expr.id), None
        if isinstance(expr, ast.Attribute):
            base, ours = self.resolve(expr.value)
            return (f"{base}.{expr.attr}" if base else None), ours
        return None, None


def _scan(tree, module_scope, function):
    scope = _Scope(module_scope)
    # self / cls are cuda-coop's own only in methods of classes this module defines.
    for node in ast.walk(function):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            scope.bind_import(node)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node is not function:
            scope.ours.add(node.name)
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            path, ours = scope.resolve(node.value)
            if path:
                scope.paths[name] = path
            elif ours or (isinstance(node.value, ast.Call) and scope.resolve(node.value.func)[1] == "ours"):
                scope.ours.add(name)
        elif (isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Tuple)
              and all(isinstance(e, ast.Constant) for e in node.iter.elts)):
            scope.loops[node.target.id] = [e.value for e in node.iter.elts]
    return scope


def _module_scope(path: Path) -> _Scope:
    """What the top-level names of a _compat module mean.  A name it takes from its sibling
    ``_compat.py`` (``from ._compat import CUDADispatcher``) means what it means there."""
    tree = ast.parse(path.read_text())
    module_scope = _Scope()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == "_compat":
            sibling = _module_scope(path.with_name("_compat.py"))
            for alias in node.names:
                if alias.name in sibling.paths:
                    module_scope.paths[alias.asname or alias.name] = sibling.paths[alias.name]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            module_scope.bind_import(node)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            module_scope.ours.add(node.name)
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
              and ast.unparse(node.value.func) in ("threading.local", "threading.RLock", "threading.Lock")):
            module_scope.ours.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return module_scope


def _attribute_writes(path: Path):
    """``(line, text, base expression's dotted upstream path or None, attribute)`` for each
    write to an attribute of an object that is not cuda-coop's own."""
    tree = ast.parse(path.read_text())
    module_scope = _module_scope(path)
    units = [(n, n.name) for n in tree.body if isinstance(n, ast.FunctionDef)]
    units += [(m, f"{c.name}.{m.name}") for c in tree.body if isinstance(c, ast.ClassDef)
              for m in c.body if isinstance(m, ast.FunctionDef)]
    own_methods = {id(m) for c in tree.body if isinstance(c, ast.ClassDef) for m in c.body}
    for function, _name in units:
        scope = _scan(tree, module_scope, function)
        if id(function) in own_methods:
            scope.ours.update(("self", "cls"))
        for node in ast.walk(function):
            writes = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                writes = [t for target in targets for t in ast.walk(target)
                          if isinstance(t, ast.Attribute) and isinstance(t.ctx, ast.Store)]
                for target in writes:
                    yield from _write(scope, node, target.value, [target.attr])
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
                  and len(node.args) == 3):
                name = node.args[1]
                if isinstance(name, ast.Constant):
                    attrs = [name.value]
                elif isinstance(name, ast.Name) and name.id in scope.loops:
                    attrs = scope.loops[name.id]
                else:
                    attrs = [None]
                yield from _write(scope, node, node.args[0], attrs)


def _write(scope, node, base, attrs):
    path, ours = scope.resolve(base)
    for attr in attrs:
        if ours or (attr is not None and (attr.startswith("_coop_") or attr in _MARKERS)):
            continue
        yield node.lineno, ast.unparse(node).splitlines()[0], path, attr


def _named(table, attr) -> bool:
    return any(e.dotted.rsplit(".", 1)[-1] == attr or (e.kind == U.INSTANCE and attr in e.params) for e in table)


# llvmlite's documented GlobalVariable / AllocaInstr attributes, set as its docs say.
PUBLIC_ATTRIBUTE_WRITES = {"initializer", "align", "linkage"}


def _unguarded(source: Path, table, compiler: str) -> list:
    paths = {e.dotted for e in table}
    missing = []
    for line, text, path, attr in _attribute_writes(source):
        where = f"{source.name}:{line} {text}"
        if attr is None:
            missing.append(f"{where}: setattr with an attribute name the test cannot read")
        elif path is not None:
            if path.split(".")[0] in ROOTS[compiler] and f"{path}.{attr}" not in paths:
                missing.append(f"{where}: no UPSTREAM entry {path}.{attr}")
        elif not _named(table, attr) and attr not in PUBLIC_ATTRIBUTE_WRITES:
            missing.append(f"{where}: the object is not cuda-coop's and no UPSTREAM entry names .{attr}")
    return missing


@pytest.mark.parametrize("compiler", list(COMPAT))
def test_every_patch_has_an_entry(compiler):
    assert [p.name for p in COMPAT_FILES[compiler]] == ["_compat.py", "_compat_launch.py"]
    missing = [m for path in COMPAT_FILES[compiler] + SHARED_PATCH_FILES
               for m in _unguarded(path, TABLES[compiler], compiler)]
    assert not missing, ("patches of upstream objects without an UPSTREAM entry (add one, with what upstream "
                         "lacks):\n" + "\n".join(missing))


def test_a_new_patch_without_an_entry_fails(tmp_path):
    source = tmp_path / "_compat.py"
    source.write_text(textwrap.dedent("""
        import threading
        from numba_cuda_mlir import descriptor

        _local = threading.local()

        def install():
            from numba_cuda_mlir import tools

            original = descriptor._array_cache_key
            descriptor._array_cache_key = original      # has an entry
            tools._new_private = 1                      # none
            setattr(descriptor.MLIRDispatcher, "_other", original)  # none

            def wrapper(self):
                self._launcher = None                   # _ArgMarshaller's entry names it
                self._unheard_of = None                 # no entry names it
                self._coop_mark = True                  # ours
            wrapper.__wrapped__ = original
            _local.value = 1                            # ours

        def patch_instance(kernel):
            kernel.surprise = 1                         # an upstream object: no entry names it
    """))
    missing = "\n".join(_unguarded(source, TABLES["numba-cuda-mlir"], "numba-cuda-mlir"))
    assert "no UPSTREAM entry numba_cuda_mlir.tools._new_private" in missing
    assert "no UPSTREAM entry numba_cuda_mlir.descriptor.MLIRDispatcher._other" in missing
    assert "names ._unheard_of" in missing and "names .surprise" in missing
    assert len(missing.splitlines()) == 4, missing


def test_the_patch_finder_finds_the_known_patches():
    found = {(path, attr) for source in COMPAT_FILES["numba-cuda-mlir"]
             for _l, _t, path, attr in _attribute_writes(source)}
    assert ("numba_cuda_mlir.descriptor._ArgMarshaller", "__call__") in found
    assert ("numba_cuda_mlir.descriptor.MLIRDispatcher", "_prepare_for_launch") in found  # setattr in a loop
    assert ("numba_cuda_mlir.tools", "_cached_cc") in found
    found = {(path, attr) for source in COMPAT_FILES["numba-cuda"] for _l, _t, path, attr in _attribute_writes(source)}
    assert ("numba.cuda.dispatcher.CUDADispatcher", "_launch_config_key") in found
    assert ("numba.cuda.lowering.BaseLower", "post_lower") in found
    assert (None, "launch") in found  # kernel.launch: a parameter, an upstream _Kernel
    assert not any(attr in ("value", "watching", "depth", "cluster") for _p, attr in found), found  # ours


def _private_imports(path: Path, compiler: str):
    """``(line, module, name)`` for each import of a private module or a name from one."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] not in ROOTS[compiler]:
                continue
            for alias in node.names:
                yield node.lineno, node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ROOTS[compiler]:
                    yield node.lineno, alias.name, None


def _unlisted_imports(source: Path, table, compiler: str) -> list:
    public = PUBLIC[compiler]
    listed = {(e.path, name) for e in table if e.kind == U.MODULE for name in e.params}
    modules = {e.module for e in table} | {e.path for e in table if e.kind == U.MODULE}
    dotted = {e.dotted for e in table}
    missing = []

    def inside(full):  # an entry names something inside it (from m import Class; m:Class.method)
        return any(d.startswith(full + ".") for d in dotted)

    for line, module, name in _private_imports(source, compiler):
        if name is None:  # import x.y
            if module not in public and module not in modules:
                missing.append(f"{line}: import {module}")
            continue
        full = f"{module}.{name}"
        if (module, name) in listed or full in modules or full in dotted or inside(full):
            continue
        if module in public and (full in public or not _is_module(full)):
            continue
        missing.append(f"{line}: from {module} import {name}")
    return missing


@pytest.mark.parametrize("compiler", list(COMPAT))
def test_every_private_import_has_an_entry(compiler):
    missing = [f"{path.name}:{m}" for path in COMPAT_FILES[compiler]
               for m in _unlisted_imports(path, TABLES[compiler], compiler)]
    assert not missing, (f"private {compiler} imports in its _compat modules without an UPSTREAM entry:\n"
                         + "\n".join(missing))


def test_a_new_private_import_without_an_entry_fails(tmp_path):
    source = tmp_path / "_compat.py"
    source.write_text(textwrap.dedent("""
        from numba_cuda_mlir import cuda                                  # public
        from numba_cuda_mlir.extending import overload_method             # public
        from numba_cuda_mlir.lowering_utilities import index_of           # listed
        from numba_cuda_mlir.descriptor import _ArgMarshaller             # entries inside it
        from numba_cuda_mlir.lowering_utilities import something_new      # not listed
        import numba_cuda_mlir.mlir_lowering_new                          # no entry
    """))
    missing = _unlisted_imports(source, TABLES["numba-cuda-mlir"], "numba-cuda-mlir")
    assert missing == ["6: from numba_cuda_mlir.lowering_utilities import something_new",
                       "7: import numba_cuda_mlir.mlir_lowering_new"], missing


def _is_module(name: str) -> bool:
    """Whether ``name`` is a module, by the installed files (nothing imported; False where
    the package is not installed)."""
    top, *rest = name.split(".")
    spec = importlib.util.find_spec(top)
    for base in (spec.submodule_search_locations or ()) if spec else ():
        path = Path(base, *rest)
        if path.is_dir() or path.with_suffix(".py").exists() or any(path.parent.glob(path.name + ".*.so")):
            return True
    return False


# ----------------------------------------------------------------------------------------
# Activation refuses a table that does not check, before any patch (fresh processes)
# ----------------------------------------------------------------------------------------

def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    env.pop("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=300)


def test_numba_cuda_mlir_activation_refuses_a_gone_name_before_patching():
    _compat("numba-cuda-mlir")
    result = _run("""
        import warnings
        import numba_cuda_mlir
        from cuda.coop.backends._upstream import ATTRIBUTE, UpstreamName
        from cuda.coop.backends.numba_mlir import _compat as C
        C.UPSTREAM += (UpstreamName("numba_cuda_mlir.descriptor:_coop_test_gone", ATTRIBUTE, (),
                                    "upstream lacks it (test)"),)
        import cuda.coop as coop
        from cuda.coop import UnsupportedBackendVersionError
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from numba_cuda_mlir import descriptor  # the launch hook's turn: refused, as a warning
        print("WARNED", any("_coop_test_gone" in str(w.message) for w in caught))
        print("HOOKED", getattr(descriptor._ArgMarshaller.__call__, "_coop_launch_hook", False),
              getattr(descriptor._array_cache_key, "_coop_fixed", False))
        backend = coop._registration.active_backends()["numba-cuda-mlir"]
        try:
            backend.ready()
        except UnsupportedBackendVersionError as exc:
            print("REFUSED", "numba_cuda_mlir.descriptor._coop_test_gone is gone" in str(exc),
                  numba_cuda_mlir.__version__ in str(exc), ">=0.6.0,<0.7" in str(exc))
        print("READY", backend.is_ready)
    """)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WARNED True" in result.stdout, result.stdout
    assert "HOOKED False False" in result.stdout, result.stdout
    assert "REFUSED True True True" in result.stdout, result.stdout
    assert "READY False" in result.stdout, result.stdout


def test_numba_cuda_registration_refuses_a_changed_signature_before_patching():
    _compat("numba-cuda")
    result = _run("""
        import os
        os.environ["CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION"] = "1"
        import cuda.coop as coop
        from cuda.coop import UnsupportedBackendVersionError
        from cuda.coop.backends._upstream import CALLABLE, UpstreamName
        from cuda.coop.backends.numba_cuda import _compat as C
        C.UPSTREAM += (UpstreamName("numba.cuda.dispatcher:CUDADispatcher.configure", CALLABLE,
                                    ("self", "grid", "block"), "upstream lacks it (test)"),)
        try:
            coop.register("numba-cuda")
        except UnsupportedBackendVersionError as exc:
            print("REFUSED", "numba.cuda.dispatcher.CUDADispatcher.configure changed its signature" in str(exc),
                  C.check_version() in str(exc), ">=0.30.0,<0.31" in str(exc))
        print("PATCHED", hasattr(C.CUDADispatcher._compile_for_args, "_coop_literal_retry"),
              hasattr(C._Kernel.__init__, "_coop_launch"))
        print("ACTIVE", sorted(coop._registration.active_backends()))
    """)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "REFUSED True True True" in result.stdout, result.stdout
    assert "PATCHED False False" in result.stdout, result.stdout
    assert "ACTIVE []" in result.stdout, result.stdout
