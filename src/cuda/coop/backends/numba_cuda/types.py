"""Numba types of cuda.coop values in classic numba-cuda kernels, and their descriptors.

The classes and functions are made by ``backends/_types.py`` on this compiler's own
``types`` (each compiler has its own type classes); only the bindings live here.
"""

from __future__ import annotations

from .. import _types
from . import _compat

(GroupType, ThreadDataType, TempStorageType, StatefulFunctionType, numpy_dtype, numba_type_of_dtype, describe_type,
 result_type, register_group_typeofs) = _types.build(__name__, _compat,
                                                     bfloat16_name=str(_compat.types.bfloat16))  # "__nv_bfloat16"
