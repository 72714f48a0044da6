"""The compilers' private names a backend relies on, declared, and the check that they are there.

Each backend's ``_compat.py`` (the only module allowed to name its compiler's private
modules) declares ``UPSTREAM``: one :class:`UpstreamName` per private module it imports from,
private attribute it reads or replaces, method it wraps, attribute of upstream instances it
reads or sets, and function whose running frame it reads.  :func:`problems` resolves each
entry in the installed compiler without running it (``inspect.getattr_static``; modules are
imported, nothing is patched) and compares the parameter names cuda-coop relies on.
:func:`verify` does that once per process per entry and raises
:class:`~cuda.coop.UnsupportedBackendVersionError` naming what is gone, the installed
version and the supported range; a backend calls it before it patches anything.
``tests/backends/test_upstream_names.py`` runs every entry as its own test case.
"""

from __future__ import annotations

import sys

from ..core.records import record

__all__ = ["UpstreamName", "MODULE", "ATTRIBUTE", "CALLABLE", "INSTANCE", "FRAME", "ISSUES",
           "describe", "problems", "verify", "typing_location", "installed_version"]

# Kinds.  ``params`` means, per kind:
MODULE = "module"        # a private module: the names cuda-coop imports from it
ATTRIBUTE = "attribute"  # a value cuda-coop reads or replaces wholesale: unused
CALLABLE = "callable"    # a function or method cuda-coop calls, wraps or replaces: its parameter names,
#                          in order; a trailing "..." accepts any further parameters (the wrapper passes
#                          *args/**kwargs on), otherwise further parameters must have defaults
INSTANCE = "instance"    # a class (or an object): attributes of its instances cuda-coop reads or sets
FRAME = "frame"          # a function whose running frame cuda-coop finds by its name: the locals it reads

_KINDS = (MODULE, ATTRIBUTE, CALLABLE, INSTANCE, FRAME)
_WHAT = {MODULE: "cuda-coop imports from it", ATTRIBUTE: "cuda-coop reads or replaces it",
         CALLABLE: "cuda-coop calls or wraps it", INSTANCE: "cuda-coop uses these attributes of its instances",
         FRAME: "cuda-coop reads its frame's locals"}
ISSUES = "https://github.com/cuda-coop/cuda-coop/issues"


@record
class UpstreamName:
    """One private upstream name.  ``path``: ``"package.module"`` for a module, else
    ``"package.module:Attribute.path"``.  ``why``: what upstream lacks, that cuda-coop
    needs this name for.  ``needs``: a module that must already be imported for the entry
    to apply (``"torch"``: numba-cuda-mlir's torch typing imports torch)."""

    path: str
    kind: str
    params: tuple = ()
    why: str = ""
    needs: str = ""

    @property
    def dotted(self) -> str:
        return self.path.replace(":", ".")

    @property
    def module(self) -> str:
        return self.path.partition(":")[0]


class _Missing(Exception):
    pass


def version_tuple(version: str) -> tuple:
    """``"0.6.0rc1"`` as ``(0, 6, 0)``: the first three dotted parts, their digits only."""
    parts = []
    for piece in version.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts + [0] * (3 - len(parts)))


def installed_version(package: str, *, compiler: str, supported: tuple, supported_text: str, hint: str) -> str:
    """The installed version of ``package`` (the compiler's import name), or a named error:
    BackendUnavailableError when it does not import, UnsupportedBackendVersionError when its
    version is outside ``supported`` (``[min, max)``).  Called before any registry is touched."""
    import importlib

    from .._errors import BackendUnavailableError, UnsupportedBackendVersionError

    try:
        module = importlib.import_module(package)
    except ImportError as exc:
        raise BackendUnavailableError(
            f"cuda-coop's {compiler} backend needs {compiler}{supported_text}, which is not installed "
            f"({exc}); {hint}") from None
    version = getattr(module, "__version__", "0")
    if not supported[0] <= version_tuple(version) < supported[1]:
        raise UnsupportedBackendVersionError(
            f"{compiler} {version} is installed, but cuda-coop needs {compiler}{supported_text}; {hint}")
    return version


def _import(name: str):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise _Missing(f"module {name} is gone ({type(exc).__name__}: {exc})") from None


def _static(obj, name: str, where: str, *, import_submodule: bool = True):
    """``obj.name`` without running a property or a module's ``__getattr__``; a submodule
    not imported yet counts when it can be found (``import_submodule=False``: found, not
    imported, so that checking a name costs no import: numba-cuda-mlir's ``nvvm`` dialect
    alone takes 20 ms to import, and only ``block.sync()`` needs it)."""
    import inspect

    try:
        return inspect.getattr_static(obj, name)
    except AttributeError:
        pass
    if hasattr(obj, "__path__"):  # a package: maybe a submodule not imported yet
        import importlib.util

        full = f"{obj.__name__}.{name}"
        if full in sys.modules:
            return sys.modules[full]
        try:
            spec = importlib.util.find_spec(full)
            if spec is not None:
                return _import(full) if import_submodule else spec
        except (ImportError, ValueError):
            pass
    raise _Missing(f"{where}.{name} is gone")


def _resolve(entry: UpstreamName):
    module_name, _, attrs = entry.path.partition(":")
    obj = _import(module_name)
    where = module_name
    for name in attrs.split(".") if attrs else ():
        obj = _static(obj, name, where)
        where = f"{where}.{name}"
    return obj


def _function(obj):
    """The plain function behind a method descriptor, a cache wrapper or one of cuda-coop's
    own wrappers (each sets ``__wrapped__`` to what it replaced).  ``__wrapped__`` is read
    from the object's own ``__dict__`` only: no ``__getattr__`` of an upstream object runs."""
    import functools

    for _ in range(100):
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        elif isinstance(obj, property):
            obj = obj.fget
        elif isinstance(obj, functools.cached_property):
            obj = obj.func
        else:
            try:
                inner = object.__getattribute__(obj, "__dict__").get("__wrapped__")
            except (AttributeError, TypeError):
                inner = None
            if inner is None:
                return obj
            obj = inner
    return obj


def _code_names(cls) -> set:
    """Every name the methods of ``cls`` and its bases read or store (and every string
    constant: ``getattr(self, "_x", None)``), with the class attributes: where an instance
    attribute is set in ``__init__`` or read elsewhere, it is here."""
    names = set()
    for klass in getattr(cls, "__mro__", (cls,)):
        if klass is object:
            continue
        for key, value in vars(klass).items():
            names.add(key)
            try:
                code = getattr(_function(value), "__code__", None)
            except Exception:  # an object unwrap cannot follow
                code = None
            stack = [code] if code is not None else []
            while stack:
                code = stack.pop()
                names.update(code.co_names)
                for const in code.co_consts:
                    if isinstance(const, str):
                        names.add(const)
                    elif hasattr(const, "co_names"):
                        stack.append(const)
    return names


def _signature_problem(entry, obj):
    import inspect

    try:
        params = list(inspect.signature(_function(obj)).parameters.values())
    except (TypeError, ValueError) as exc:
        return f"{entry.dotted} has no readable signature ({exc}); cuda-coop expects ({', '.join(entry.params)})"
    expected = list(entry.params)
    open_ended = bool(expected) and expected[-1] == "..."
    if open_ended:
        expected.pop()
    names = [p.name for p in params]
    extra = params[len(expected):]
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    if names[:len(expected)] == expected and (
            open_ended or all(p.default is not p.empty or p.kind in variadic for p in extra)):
        return None
    shown = ", ".join(str(p) for p in params)
    return (f"{entry.dotted} changed its signature: cuda-coop expects ({', '.join(entry.params)}), "
            f"the installed one is ({shown})")


def describe(entry: UpstreamName) -> str | None:
    """What is wrong with ``entry`` in the installed compiler (``"X is gone"``, ``"X changed
    its signature: ..."``), or None.  Imports the entry's module; runs nothing else."""
    if entry.kind not in _KINDS:
        return f"{entry.path}: unknown kind {entry.kind!r} (one of {', '.join(_KINDS)})"
    try:
        obj = _resolve(entry)
    except _Missing as missing:
        return str(missing)
    if entry.kind == MODULE:
        for name in entry.params:
            try:
                _static(obj, name, entry.path, import_submodule=False)
            except _Missing as missing:
                return str(missing)
        return None
    if entry.kind == CALLABLE:
        return _signature_problem(entry, obj)
    if entry.kind == INSTANCE:
        known = _code_names(obj if isinstance(obj, type) else type(obj))
        if not isinstance(obj, type):
            known.update(getattr(obj, "__dict__", ()))
        gone = [name for name in entry.params if name not in known]
        if gone:
            return (f"{entry.dotted} instances no longer have {', '.join(gone)} (neither set nor read by "
                    f"{entry.dotted}'s code)")
        return None
    if entry.kind == FRAME:
        code = getattr(_function(obj), "__code__", None)
        name = entry.path.rpartition(".")[2].rpartition(":")[2]
        if code is None or code.co_name != name:
            return f"{entry.dotted} is no longer a Python function named {name!r} (cuda-coop finds its frame by name)"
        local_names = set(code.co_varnames) | set(code.co_cellvars)
        gone = [n for n in entry.params if n not in local_names]
        if gone:
            return f"{entry.dotted} no longer has the local {', '.join(gone)} that cuda-coop reads from its frame"
        return None
    return None  # ATTRIBUTE: resolving it was the check


def _loaded(name: str) -> bool:
    """Imported, and not still running its code (a check from an import hook, while the
    compiler's modules import one another, must not read a half-built module)."""
    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


def _applies(entry: UpstreamName, loaded_only: bool, modules) -> bool:
    if entry.needs and entry.needs not in sys.modules:
        return False
    if modules is not None:  # imported by the caller, whatever importlib's flags say
        return entry.module in modules
    if loaded_only:
        return _loaded(entry.module)
    # A module imported now is complete, unless it is the one importing us: then later.
    return entry.module not in sys.modules or _loaded(entry.module)


def _fix(compiler: str, supported: str, tested: str) -> str:
    return (f"cuda-coop supports {compiler} {supported} and was checked against {compiler} {tested}: report it "
            f"at {ISSUES} and pin {compiler}=={tested} meanwhile")


def _other_versions(entry: UpstreamName, others) -> str:
    """``" (llvmlite 0.50.0)"`` where the entry is in another package than the compiler."""
    for prefix, module in (others or {}).items():
        if entry.module == prefix or entry.module.startswith(prefix + "."):
            return f" ({module} {getattr(sys.modules.get(module), '__version__', '?')})"
    return ""


def _installed(entry: UpstreamName, compiler: str, version: str, others) -> str:
    """``numba-cuda 0.30.4``, plus the entry's own package where it is another one."""
    other = _other_versions(entry, others)
    return f"{compiler} {version}" + (f", {other[2:-1]}" if other else "")


def problems(table, *, compiler: str, version: str, supported: str, tested: str, others=None,
             loaded_only: bool = False, modules=None) -> list:
    """One message per entry of ``table`` that the installed compiler no longer has: what is
    gone or changed, the installed version, why cuda-coop needs it, and the fix.

    ``others``: ``{module prefix: package}`` for entries in another package than the
    compiler (llvmlite), whose version the message then names too.  ``loaded_only``: only
    the entries whose module is already imported (nothing is imported).  ``modules``: only
    the entries of these modules, which the caller has imported (an import hook's module
    still reads as importing while its hooks run).
    """
    found = []
    for entry in table:
        if not _applies(entry, loaded_only, modules):
            continue
        problem = describe(entry)
        if problem:
            found.append(_message(entry, problem, compiler, version, supported, tested, others))
    return found


def _message(entry, problem, compiler, version, supported, tested, others):
    return (f"{problem} in {_installed(entry, compiler, version, others)} ({_WHAT[entry.kind]}: {entry.why}); "
            f"{_fix(compiler, supported, tested)}")


_checked: dict = {}  # UpstreamName -> its problem (None: fine), once per process


def verify(table, *, compiler: str, version: str, supported: str, tested: str, others=None,
           loaded_only: bool = False, modules=None) -> None:
    """Raise UnsupportedBackendVersionError when an entry of ``table`` is gone or changed.

    Each entry is checked once per process (a later call costs a dictionary lookup per
    entry); ``loaded_only`` and ``modules`` (as for :func:`problems`) leave entries for a
    later call.
    """
    found = []
    for entry in table:
        if not _applies(entry, loaded_only, modules):
            continue
        try:
            problem = _checked[entry]
        except KeyError:
            problem = _checked[entry] = describe(entry)
        if problem:
            found.append((entry, problem))
    if found:
        from .._errors import UnsupportedBackendVersionError

        lines = "\n".join(f"  - {problem}{_other_versions(entry, others)} ({_WHAT[entry.kind]}: {entry.why})"
                          for entry, problem in found)
        raise UnsupportedBackendVersionError(
            f"{compiler} {version} is installed, but {len(found)} of the private {compiler} names cuda-coop "
            f"relies on {'is' if len(found) == 1 else 'are'} gone or changed:\n{lines}\n"
            f"{_fix(compiler, supported, tested)}")


def typing_location():
    """``(loc, function qualname)`` of the call the compiler is typing now, or ``(None, None)``.

    Method templates (``group.group_by(...)``, ``group.rank_as(...)``) are typed without a
    call-site id; the constraint being propagated knows the call's line.  Both compilers
    type with numba's ``ConstraintNetwork.propagate`` (numba-cuda-mlir's is a fork of it),
    which keeps it in its locals ``constraint`` and ``typeinfer``: each backend's
    ``_compat.UPSTREAM`` declares that frame (a FRAME entry), so a compiler that renames
    them fails the upstream check, not this walk.  Used for error messages only.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "propagate" and "constraint" in frame.f_locals:
            loc = getattr(frame.f_locals["constraint"], "loc", None)
            func_id = getattr(frame.f_locals.get("typeinfer"), "func_id", None)
            return loc, getattr(func_id, "func_qualname", None)
        frame = frame.f_back
    return None, None
