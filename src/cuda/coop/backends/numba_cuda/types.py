"""Numba types of cuda.coop values in classic numba-cuda kernels, and their descriptors.

The classes and functions are made by ``backends/_types.py`` on this compiler's own
``types`` (each compiler has its own type classes); only the bindings live here.
"""

from __future__ import annotations

import numpy as np

from .. import _types
from ._compat import ArrayModel, OpaqueModel, as_dtype, register_model, types


def numba_type_of_dtype(dt: np.dtype):
    from ._compat import from_dtype

    return from_dtype(np.dtype(dt))


_made = _types.build(__name__, types=types, array_model=ArrayModel, opaque_model=OpaqueModel, as_dtype=as_dtype,
                     register_model=register_model, numba_type_of_dtype=numba_type_of_dtype,
                     bfloat16_name=str(types.bfloat16))  # "__nv_bfloat16"
GroupType = _made.GroupType
ThreadDataType = _made.ThreadDataType
TempStorageType = _made.TempStorageType
StatefulFunctionType = _made.StatefulFunctionType
numpy_dtype = _made.numpy_dtype
describe_type = _made.describe_type
result_type = _made.result_type
register_group_typeofs = _made.register_group_typeofs
del _made
