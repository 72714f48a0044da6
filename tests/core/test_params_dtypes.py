"""Every family's params record holds its element types as NumPy dtypes, from the user's call
to the C++ (issue #30: one dtype object end to end; the C++ name is rendered by cxx_type)."""

from __future__ import annotations

import dataclasses
import inspect
import re

import numpy as np
import pytest

from cuda.coop._dtypes import cxx_type, dtype_fields
from cuda.coop.ops._registry import FAMILIES

pytestmark = pytest.mark.unit

PARAMS = [cls for family in FAMILIES for name, cls in vars(family).items()
          if name.endswith("Params") and dataclasses.is_dataclass(cls) and cls.__module__ == family.__name__]


def test_every_family_has_a_params_record():
    assert len(PARAMS) >= len(FAMILIES) - 1, [c.__name__ for c in PARAMS]  # _sorting shares its records


@pytest.mark.parametrize("cls", PARAMS, ids=lambda c: c.__name__)
def test_dtype_fields_are_dtypes_and_normalized(cls):
    annotated = {f.name for f in dataclasses.fields(cls) if "dtype" in str(f.type)}
    assert annotated, f"{cls.__name__} has no dtype field"
    assert not [f.name for f in dataclasses.fields(cls) if f.type == "str" and "dtype" in f.name], cls
    normalized = re.search(r"dtype_fields\(self, ([^)]*)\)", inspect.getsource(cls.__post_init__))
    assert normalized, f"{cls.__name__}.__post_init__ does not call dtype_fields"
    assert set(re.findall(r'"(\w+)"', normalized.group(1))) == annotated


def test_dtype_fields_turns_names_into_dtypes_and_keeps_none():
    @dataclasses.dataclass(frozen=True)
    class Record:
        keys: object
        values: object = None

        def __post_init__(self):
            dtype_fields(self, "keys", "values")

    record = Record("uint16")
    assert isinstance(record.keys, np.dtype) and record.keys == np.dtype("uint16") and record.values is None
    assert Record(np.int64, np.float32).values == np.dtype("float32")
    assert Record("int32") == Record(np.dtype("int32"))  # plans compare and hash by their params
    assert hash(Record("int32")) == hash(Record(np.dtype("int32")))
    assert cxx_type(Record("float64").keys) == "double"

