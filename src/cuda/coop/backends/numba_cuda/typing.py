"""Typing of cuda.coop calls in classic numba-cuda kernels.

The templates and argument checks are compiler-neutral (``backends/_typing.py``); this
module gives them numba-cuda's spelling.  Its rewrite numbers no call sites, so an error's
line and a ``coop.TempStorage()`` call's identity come from the call numba is typing, and
whether ``items_per_thread`` is a kernel argument from that call's IR.

Keywords reach the lowering through the signature's ``pysig`` (numba-cuda folds
keyword arguments with it): the operands by position, then each keyword in the order
the call wrote them, so the lowering recovers their names from the signature alone.
"""

from __future__ import annotations

import inspect
import sys
import zlib

from .. import _typing
from .._typing import DTYPE_FROM, GROUP_BY_KEY, RESERVE_KEY
from . import _compat as C
from . import types as coop_types
from .._float_literals import literal_keywords
from .rewrite import _ANALYSIS

__all__ = ["function_types", "op_function_type", "plan_call", "keyword_names", "GROUP_BY_KEY", "RESERVE_KEY",
           "reservation_of", "located_method"]


def with_keywords(restype, args, kws, receiver=None):
    """``restype(*args, *kws)`` whose pysig lets numba-cuda fold the keywords in that order.

    ``receiver``: the Numba type a method is bound to, in the signature as numba's
    ``bound_function`` puts it (the lowering of ``storage.reserve()`` reads the storage's
    type there: its site, size_in_bytes and sharing).
    """
    sig = C.signature(restype, *args, *kws.values())
    # POSITIONAL_OR_KEYWORD throughout: numba-cuda's fold_arguments mis-binds KEYWORD_ONLY.
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [inspect.Parameter(f"{_OPERAND}{i}", kind) for i in range(len(args))]
    params += [inspect.Parameter(name, kind) for name in kws]
    sig = sig.replace(pysig=inspect.Signature(params))
    return sig if receiver is None else sig.replace(recvr=receiver)


def keyword_names(sig) -> tuple:
    """The keyword names of a call typed by :func:`with_keywords`, in argument order."""
    pysig = getattr(sig, "pysig", None)
    if pysig is None:
        return ()
    return tuple(name for name in pysig.parameters if not name.startswith(_OPERAND))


_OPERAND = "_coop_operand"


def _call_location(kws):
    return C.typing_location()


def _typed_call():
    """``(constraint, typeinfer)`` of the call numba is typing on this thread (its
    ``CallConstraint`` and ``TypeInferer``), or ``(None, None)``."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "propagate" and "constraint" in frame.f_locals:
            return frame.f_locals["constraint"], frame.f_locals.get("typeinfer")
        frame = frame.f_back
    return None, None


def _items_per_thread_is_kernel_argument(kws) -> bool:
    """Whether the items_per_thread being typed is a kernel argument (then it can be made
    literal): the definition of the call's first argument, in the IR numba is typing."""
    constraint, typeinfer = _typed_call()
    if constraint is None:
        return False
    var = (constraint.args[0] if getattr(constraint, "args", None)
           else dict(getattr(constraint, "kws", ()) or ()).get("items_per_thread"))
    try:
        return isinstance(typeinfer.func_ir.get_definition(var), C.ir.Arg)
    except Exception:
        return False


def _float_literals(kws) -> dict:
    """The keyword operands of the call being typed that the kernel wrote as Python floats
    (backends/_float_literals.py), read from the IR numba is typing."""
    if not any(isinstance(t, C.types.Float) for t in kws.values()):
        return {}
    constraint, typeinfer = _typed_call()
    try:
        return dict(literal_keywords(_ANALYSIS, typeinfer.func_ir, getattr(constraint, "kws", ()) or ()))
    except Exception:  # noqa: BLE001 - no IR to read: the float64 operand is checked as typed
        return {}


def _temp_storage_site(kws) -> int:
    """An id for the ``coop.TempStorage()`` being typed: its position in the source (the
    numba-cuda-mlir backend numbers sites in a rewrite; this one reads the typing location)."""
    loc, function = C.typing_location()
    key = (getattr(loc, "filename", None), getattr(loc, "line", None), getattr(loc, "col", None), function)
    return zlib.crc32(repr(key).encode())


(GroupAttributes, ThreadDataAttributes, TempStorageAttributes, function_types, op_function_type, plan_call,
 reservation_of, located_method) = _typing.build(_typing.CompilerGlue(
    types=C.types, abstract_template=C.AbstractTemplate, attribute_template=C.AttributeTemplate,
    coop_types=coop_types, as_dtype=C.as_dtype, force_literal_arg=C.ForceLiteralArg, signature=with_keywords,
    typing_location=C.typing_location, hidden_keywords=(DTYPE_FROM,), call_location=_call_location,
    items_per_thread_is_kernel_argument=_items_per_thread_is_kernel_argument,
    temp_storage_site=_temp_storage_site, float_literals=_float_literals))
