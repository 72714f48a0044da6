"""``@record``: a frozen dataclass whose methods are compiled in one ``exec`` instead of six.

cuda-coop describes every call with frozen dataclasses (core/spec.py, each family's params),
and a kernel's first cooperative compile imports them.  Python before 3.13 compiles each
generated method of a dataclass separately (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, ``__setattr__``, ``__delattr__``): 23 classes made ``import cuda.coop.core.spec``
take 18 ms on the 2-core machine, a third of a warm first compile's cost over a kernel
without cuda.coop (docs/performance.rst, "Compile latency").

``record`` keeps what ``@dataclass(frozen=True)`` gives (fields, ``dataclasses.fields`` /
``replace``, ``field(default=..., default_factory=..., compare=False, hash=False,
repr=False)``, ``kw_only``, ``__post_init__``, a ``__repr__`` the class defines itself,
``FrozenInstanceError`` on assignment, equality and hash over the compared fields) and
writes the methods' source once.  ``tests/core/test_records.py`` compares it with
``dataclass(frozen=True)`` case by case.
"""

from __future__ import annotations

import dataclasses

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
    namespace = {"_cls": cls, "_object_setattr": object.__setattr__, "FrozenInstanceError":
                 dataclasses.FrozenInstanceError, "_FACTORY": _FACTORY}
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

    def values(names, of):
        return "(" + "".join(f"{of}.{n}, " for n in names) + ")"

    source = [
        f"def __init__(self, {', '.join(params)}):",
        *(body or ["    pass"]),
        "def __eq__(self, other):",
        "    if other.__class__ is self.__class__:",
        f"        return {values(compared, 'self')} == {values(compared, 'other')}",
        "    return NotImplemented",
        "def __hash__(self):",
        f"    return hash({values(hashed, 'self')})",
        "def __setattr__(self, name, value):",
        "    if type(self) is _cls or name in _cls.__dataclass_fields__:",
        "        raise FrozenInstanceError(f'cannot assign to field {name!r}')",
        "    super(_cls, self).__setattr__(name, value)",
        "def __delattr__(self, name):",
        "    if type(self) is _cls or name in _cls.__dataclass_fields__:",
        "        raise FrozenInstanceError(f'cannot delete field {name!r}')",
        "    super(_cls, self).__delattr__(name)",
        "def __repr__(self):",
        "    return f'{self.__class__.__qualname__}(" + ", ".join(f"{n}={{self.{n}!r}}" for n in shown) + ")'",
    ]
    exec("\n".join(source), namespace)  # noqa: S102 - our own text, built from field names
    for method in ("__init__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__repr__"):
        if method in own:
            continue  # the class's own, which dataclass leaves in place too
        function = namespace[method]
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
