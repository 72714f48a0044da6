"""``StatefulFunction``: a block-scan prefix callback that carries per-thread state."""

from __future__ import annotations

from ._dtypes import is_complex, normalize_dtype
from ._errors import InvalidArgumentTypeError, UnsupportedDtypeError

__all__ = ["StatefulFunction"]


class StatefulFunction:
    """A prefix callback ``op(state, block_aggregate) -> prefix`` with a one-item state.

    Pass it as ``prefix_op=`` of a block scan and the state payload as the scan's
    third positional operand::

        running = coop.StatefulFunction(add_to_total, np.int64)
        state = coop.ThreadData(1, dtype=np.int64)      # or cuda.local.array(1, np.int64)
        state[0] = 0
        for tile in range(tiles):
            out = coop.exclusive_sum(block, x, state, prefix_op=running)

    ``op`` is a ``@cuda.jit(device=True)`` function (a plain Python function is
    compiled as one).  It receives the calling thread's state as an array
    (``state[0]``) and the block aggregate, and returns the prefix for this
    scan.  CUB calls it in the lanes of warp 0; thread 0's return value seeds the
    scan, and only thread 0's state is authoritative, so initialize the state
    identically in every thread.  The state payload must have ``state_dtype``
    exactly (it may differ from the scanned dtype).

    ``op`` may also be a class whose ``__call__(self, block_aggregate)`` is the
    callback (NVIDIA's class form): the class is never instantiated; its unbound
    ``__call__`` is compiled with the state array in place of ``self``, so
    ``self[0]`` is the state.
    """

    def __init__(self, op, state_dtype, name=None):
        if not callable(op):
            raise InvalidArgumentTypeError(
                f"coop.StatefulFunction(): op={op!r} is not callable; pass a @cuda.jit(device=True) "
                "function op(state, block_aggregate) -> prefix"
            )
        if isinstance(op, type):
            op = _unbound_call(op)
        self.op = op
        self.state_dtype = normalize_dtype(state_dtype, label="coop.StatefulFunction(): state_dtype")
        if is_complex(self.state_dtype):
            raise UnsupportedDtypeError(
                f"coop.StatefulFunction(): state_dtype={self.state_dtype.name} is not supported: state feeds "
                "arithmetic operators, which take no complex values; keep the real and imaginary parts in a "
                "float state of twice the items")
        self.name = name if name is not None else _default_name(op)
        if not isinstance(self.name, str):
            raise InvalidArgumentTypeError(f"coop.StatefulFunction(): name={name!r} is not a str; pass a str or None")

    def __repr__(self):
        return f"coop.StatefulFunction({self.name}, {self.state_dtype.name})"


def _unbound_call(cls):
    """The ``__call__`` a functor class defines (itself or a base), checked for two parameters."""
    for klass in cls.__mro__[:-1]:  # not object's
        call = klass.__dict__.get("__call__")
        if call is not None:
            break
    else:
        raise InvalidArgumentTypeError(
            f"coop.StatefulFunction(): op={cls.__name__} is a class without __call__; define "
            "__call__(self, block_aggregate) -> prefix (self is the state array) or pass a function "
            "op(state, block_aggregate) -> prefix")
    if isinstance(call, (staticmethod, classmethod)):
        raise InvalidArgumentTypeError(
            f"coop.StatefulFunction(): {cls.__name__}.__call__ is a {type(call).__name__}; make it a "
            "plain method __call__(self, block_aggregate) -> prefix (self is the state array)")
    code = getattr(call, "__code__", None)
    if code is not None and code.co_argcount != 2:
        raise InvalidArgumentTypeError(
            f"coop.StatefulFunction(): {cls.__name__}.__call__ takes {code.co_argcount} parameters; a "
            "functor class needs exactly __call__(self, block_aggregate) -> prefix (self is the state "
            "array)")
    call.__coop_functor_class__ = cls.__qualname__
    return call


def _default_name(op):
    return getattr(op, "__coop_functor_class__", None) or getattr(op, "__name__", "stateful_function")
