"""``core.records.record`` behaves as ``dataclass(frozen=True)`` does, case by case."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from cuda.coop.core.records import record

pytestmark = pytest.mark.unit


def _pair(kw_only=False):
    """The same class body under both decorators: (dataclass, record)."""

    def body():
        class Example:
            """A record."""

            name: str
            count: int = 3
            items: tuple = dataclasses.field(default_factory=tuple)
            handle: object = dataclasses.field(default=None, compare=False, hash=False)
            hidden: int = dataclasses.field(default=0, repr=False)
            derived: int = dataclasses.field(default=7, init=False)

        return Example

    return (dataclasses.dataclass(frozen=True, kw_only=kw_only)(body()),
            record(kw_only=kw_only)(body()))


@pytest.mark.parametrize("kw_only", [False, True])
def test_init_signature_defaults_and_factories(kw_only):
    reference, ours = _pair(kw_only)
    assert str(inspect.signature(ours)) == str(inspect.signature(reference))
    kwargs = dict(name="a", items=(1, 2), handle=object())
    a, b = reference(**kwargs), ours(**kwargs)
    assert [getattr(b, f.name) for f in dataclasses.fields(b)] == [getattr(a, f.name) for f in dataclasses.fields(a)]
    assert ours(name="x").items == () and ours(name="x").items is not None
    assert ours(name="x").derived == 7
    if kw_only:
        with pytest.raises(TypeError):
            ours("positional")
    else:
        assert ours("p", 5).count == 5
    with pytest.raises(TypeError):
        ours()  # a required field missing, as dataclass


def test_equality_hash_and_repr():
    reference, ours = _pair()
    one, other = object(), object()
    for cls in (reference, ours):
        assert cls(name="a", handle=one) == cls(name="a", handle=other)  # compare=False
        assert hash(cls(name="a", handle=one)) == hash(cls(name="a", handle=other))
        assert cls(name="a") != cls(name="b")
        assert cls(name="a") != ("a", 3, (), 0, 7)  # no tuple equality
    assert hash(ours(name="a", count=2)) == hash(reference(name="a", count=2))
    assert repr(ours(name="a")).split("(", 1)[1] == repr(reference(name="a")).split("(", 1)[1]
    assert "hidden" not in repr(ours(name="a"))


def test_frozen_and_dataclass_helpers():
    _reference, ours = _pair()
    value = ours(name="a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.name = "b"
    with pytest.raises(dataclasses.FrozenInstanceError):
        del value.count
    assert [f.name for f in dataclasses.fields(value)] == ["name", "count", "items", "handle", "hidden", "derived"]
    assert dataclasses.replace(value, count=9) == ours(name="a", count=9)
    assert dataclasses.is_dataclass(value)


def test_post_init_and_own_repr_are_kept():
    @record
    class WithHooks:
        text: str

        def __post_init__(self):
            object.__setattr__(self, "text", self.text.upper())

        def __repr__(self):
            return "<hooks>"

    assert WithHooks("a").text == "A" and repr(WithHooks("a")) == "<hooks>"


def test_initvar_is_refused():
    with pytest.raises(TypeError, match="InitVar and ClassVar"):
        @record
        class Refused:
            seed: dataclasses.InitVar[int]


def test_methods_the_class_defines_stay_and_undocumented_classes_get_a_signature():
    def body():
        class Own:
            key: str

            def __eq__(self, other):
                return isinstance(other, Own) and self.key.lower() == other.key.lower()

            __hash__ = None

        return Own

    reference, ours = dataclasses.dataclass(frozen=True)(body()), record(body())
    assert ours("A") == ours("a") and ours.__hash__ is None
    assert ours.__doc__.replace(ours.__qualname__, "") == reference.__doc__.replace(reference.__qualname__, "")

    with pytest.raises(TypeError, match="__setattr__"):
        @record
        class Mutable:
            value: int

            def __setattr__(self, name, value):
                object.__setattr__(self, name, value)


def test_one_field_and_no_compared_field_compare_and_hash_as_dataclass():
    """Equality and hash go through the tuple of compared fields even for one field (a NaN
    held by both compares equal through the tuple's identity check, as in dataclass)."""
    def single():
        class One:
            value: float

        return One

    reference, ours = dataclasses.dataclass(frozen=True)(single()), record(single())
    nan = float("nan")
    assert (ours(nan) == ours(nan)) == (reference(nan) == reference(nan))
    assert ours(2.0) == ours(2.0) and ours(2.0) != ours(3.0)
    assert hash(ours(2.0)) == hash(reference(2.0))

    def nothing():
        class Nothing:
            handle: object = dataclasses.field(default=None, compare=False)

        return Nothing

    reference, ours = dataclasses.dataclass(frozen=True)(nothing()), record(nothing())
    assert ours(1) == ours(2) and (reference(1) == reference(2))
    assert hash(ours(1)) == hash(reference(1))
    assert repr(ours(1)).split("(", 1)[1] == repr(reference(1)).split("(", 1)[1]
