"""Typing of cuda.coop calls in numba-cuda-mlir kernels.

The templates and argument checks are compiler-neutral (``backends/_typing.py``); this
module gives them numba-cuda-mlir's spelling.  Its rewrite (``rewrite.py``) numbers each
cooperative call with a hidden ``_coop_site=`` literal: the site records the call's source
line (for errors) and whether a ThreadData's ``items_per_thread`` is a kernel argument, and
the number identifies a ``coop.TempStorage()`` call.
"""

from __future__ import annotations

from .. import _typing
from .._typing import GROUP_BY_KEY, RESERVE_KEY
from . import types as coop_types
from ._compat import AbstractTemplate, AttributeTemplate, ForceLiteralArg, as_dtype, signature, typing_location, types
from .rewrite import HIDDEN_KEYWORDS, SITES

__all__ = ["function_types", "op_function_type", "plan_call", "GROUP_BY_KEY", "RESERVE_KEY", "reservation_of",
           "located_method"]


def _site_of(kws):
    ty = kws.get("_coop_site")
    if isinstance(ty, types.IntegerLiteral):
        return ty.literal_value
    return None


def _call_location(kws):
    site = SITES.get(_site_of(kws))
    return (site.loc, site.function) if site is not None else (None, None)


def _declines(kws):
    # Numba's second, non-literal attempt: the literal attempt already decided (a
    # signature, an error, or a request for a literal argument).
    site = kws.get("_coop_site")
    return site is not None and not isinstance(site, types.IntegerLiteral)


def _items_per_thread_is_kernel_argument(kws):
    site = SITES.get(_site_of(kws))
    return site is not None and site.items_per_thread_is_arg


def _float_literals(kws):
    site = SITES.get(_site_of(kws))
    return dict(site.float_literals) if site is not None else {}


def _signature(restype, args, kws, receiver=None):
    # The receiver of storage.reserve() is not needed: the lowering reads the storage from
    # the bound function's type.
    return signature(restype, *args, *kws.values())


(GroupAttributes, ThreadDataAttributes, TempStorageAttributes, function_types, op_function_type, plan_call,
 reservation_of, located_method) = _typing.build(_typing.CompilerGlue(
    types=types, abstract_template=AbstractTemplate, attribute_template=AttributeTemplate, coop_types=coop_types,
    as_dtype=as_dtype, force_literal_arg=ForceLiteralArg, signature=_signature, typing_location=typing_location,
    hidden_keywords=HIDDEN_KEYWORDS, call_location=_call_location,
    items_per_thread_is_kernel_argument=_items_per_thread_is_kernel_argument, temp_storage_site=_site_of,
    declines=_declines, float_literals=_float_literals))
