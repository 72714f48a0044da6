"""``@record``: a frozen dataclass that costs less to define than ``@dataclass(frozen=True)``.

cuda-coop describes every call with frozen dataclasses (core/spec.py, each family's params),
and a kernel's first cooperative compile imports them, in every process.  Python before
3.13 compiles each generated method of a dataclass from source separately (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``): 23 classes made
``import cuda.coop.core.spec`` take 18 ms on the 2-core machine, a third of a warm first
compile's cost over a kernel without cuda.coop (docs/compile_latency.rst).

``record`` compiles ``__init__`` alone (its parameters are the fields) and makes the other
methods closures over the field names (``operator.attrgetter`` for equality and hash), so
a class costs no compile beyond one short function.  It keeps what
``@dataclass(frozen=True)`` gives (fields, ``dataclasses.fields`` / ``replace``,
``field(default=..., default_factory=..., compare=False, hash=False, repr=False)``,
``kw_only``, ``__post_init__``, a ``__repr__`` the class defines itself,
``FrozenInstanceError`` on assignment, equality and hash over the compared fields).
``tests/core/test_records.py`` compares it with ``dataclass(frozen=True)`` case by case.
"""

from __future__ import annotations

import dataclasses
import operator

__all__ = ["record"]


class _Factory:
    """The default of a ``default_factory`` parameter, shown as dataclass shows it."""

    def __repr__(self):
        return "<factory>"


_FACTORY = _Factory()


def record(cls=None, /, *, kw_only: bool = False):
    """``@record`` or ``@record(kw_only=True)``: a frozen dataclass (see the module docstring)."""
    if cls is None:
        return lambda klass: _make(klass, kw_only)
    return _make(cls, kw_only)


def _fields_of(names):
    """An instance's tuple of the ``names`` fields, which dataclass compares and hashes."""
    if not names:
        return lambda self: ()
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda self: (get(self),)
    return operator.attrgetter(*names)


def _field_methods(cls, compared, hashed, shown) -> dict:
    """``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__`` and ``__repr__`` as
    ``dataclass(frozen=True)`` writes them."""
    compared_of, hashed_of = _fields_of(compared), _fields_of(hashed)
    shown = tuple(shown)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return compared_of(self) == compared_of(other)
        return NotImplemented

    def __hash__(self):
        return hash(hashed_of(self))

    def __setattr__(self, name, value):
        if type(self) is cls or name in cls.__dataclass_fields__:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in cls.__dataclass_fields__:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    def __repr__(self):
        return f"{self.__class__.__qualname__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in shown) + ")"

    return {"__eq__": __eq__, "__hash__": __hash__, "__setattr__": __setattr__, "__delattr__": __delattr__,
            "__repr__": __repr__}


def _make(cls, kw_only: bool):
    documented = cls.__doc__ is not None
    own = dict(vars(cls))  # what the class body defines, before dataclass() adds anything
    for method in ("__setattr__", "__delattr__"):
        if method in own:  # as dataclass(frozen=True) refuses it
            raise TypeError(f"Cannot overwrite attribute {method} in class {cls.__name__}")
    if not documented:
        # A placeholder, or dataclass() would write a docstring from inspect.signature(cls),
        # which (no __init__ yet) parses object's builtin signature and so compiles tokenize's
        # regular expressions: 5 ms of a warm first compile that nothing else needs.
        cls.__doc__ = "-"
    # Fields only: dataclass() with every generated method off compiles nothing.
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, kw_only=kw_only)
    if len(dataclasses.fields(cls)) != len(cls.__dataclass_fields__):  # the others are pseudo-fields
        raise TypeError(f"@record {cls.__qualname__}: InitVar and ClassVar fields are not supported")
    # dataclass's order: positional fields first, keyword-only ones after.
    fields = sorted(dataclasses.fields(cls), key=lambda f: bool(f.kw_only))
    namespace = {"_object_setattr": object.__setattr__, "_FACTORY": _FACTORY}
    params, body = [], []
    keyword_only_started = False
    for f in fields:
        name = f.name
        if not f.init:  # set from its default, as dataclass's __init__ does
            if f.default is not dataclasses.MISSING:
                namespace[f"_default_{name}"] = f.default
                body.append(f"    _object_setattr(self, {name!r}, _default_{name})")
            elif f.default_factory is not dataclasses.MISSING:
                namespace[f"_factory_{name}"] = f.default_factory
                body.append(f"    _object_setattr(self, {name!r}, _factory_{name}())")
            continue
        if f.kw_only and not keyword_only_started:
            params.append("*")
            keyword_only_started = True
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{name}"] = f.default
            params.append(f"{name}=_default_{name}")
            body.append(f"    _object_setattr(self, {name!r}, {name})")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{name}"] = f.default_factory
            params.append(f"{name}=_FACTORY")
            body.append(f"    _object_setattr(self, {name!r}, _factory_{name}() if {name} is _FACTORY else {name})")
        else:
            params.append(name)
            body.append(f"    _object_setattr(self, {name!r}, {name})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    compared = [f.name for f in fields if f.compare]
    hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
    shown = [f.name for f in fields if f.repr]

    source = [f"def __init__(self, {', '.join(params)}):", *(body or ["    pass"])]
    # Only __init__ is compiled (its parameters are the fields); the other methods are
    # closures over the field names, which costs no compile at import.
    exec("\n".join(source), namespace)  # noqa: S102 - our own text, built from field names
    methods = {"__init__": namespace["__init__"], **_field_methods(cls, compared, hashed, shown)}
    for method, function in methods.items():
        if method in own:
            continue  # the class's own, which dataclass leaves in place too
        if method == "__init__":  # its signature reads as dataclass's
            function.__annotations__ = {**{f.name: f.type for f in fields if f.init}, "return": None}
        function.__qualname__ = f"{cls.__qualname__}.{method}"
        function.__module__ = cls.__module__
        setattr(cls, method, function)
    if not documented:  # dataclass's docstring for an undocumented class: its signature
        import inspect

        # From __init__ without self, which is what inspect.signature(cls) returns, without
        # inspect's walk through the metaclass's builtin signatures.
        signature = inspect.signature(cls.__init__)
        signature = signature.replace(parameters=list(signature.parameters.values())[1:])
        cls.__doc__ = cls.__name__ + str(signature).replace(" -> None", "")
    return cls
