"""The data every operation family declares, and that the rest of cuda-coop reads.

A family module (``ops/load_store.py``, ``ops/reduce.py``, ...) declares each
public operation once as an :class:`OpSpec`: its public stub (signature and
docstring) and a ``plan`` function.  ``plan`` receives the call's operands as
compiler-neutral descriptors (below), validates them and returns a
:class:`CallPlan`: what the call returns, which runtime operands it passes in
which order, what scratch it needs, and a generator of the C++ provider.

Backends translate their compiler types into these descriptors and a
:class:`CallPlan` back into calls; the core turns plans into one NVRTC
translation unit per kernel.  Nothing outside a family module knows which
family it is handling.
"""

from __future__ import annotations

import inspect
from dataclasses import field, replace
from collections.abc import Hashable
from typing import Any, Callable

import numpy as np

from .records import record

__all__ = [
    "GroupArg", "ArrayArg", "PayloadArg", "ScalarArg", "StringArg", "NoneArg", "DtypeArg",
    "TempStorageArg", "DeviceFunctionArg", "OperatorArg", "UnsupportedArg", "Omitted", "OMITTED",
    "ScalarResult", "PayloadResult", "TupleResult",
    "AbiOperand", "PointerTo", "Callback", "StorageNeed", "CallPlan", "LaunchFacts", "CppProvider",
    "AlgorithmSpec", "OpSpec", "describe", "python_operator",
]


# --------------------------------------------------------------------------------------
# Operand descriptors (what a call receives, as far as compile time knows it)
# --------------------------------------------------------------------------------------

@record
class GroupArg:
    """``kind``: "block", "warp" (``width`` = the logical warp width, 32 = hardware),
    "warps" (``width`` = warps per group), "thread", "grid" or "cluster"."""

    kind: str
    width: int = 0
    # "warps" only: False for this_block().group_by(n, exhaustive=False), whose warps past
    # the last complete group of n are not members.
    exhaustive: bool = True

    @property
    def is_partial_warp(self) -> bool:
        """A logical warp whose width does not divide 32 (17..31): lanes ``0 .. width-1`` of each
        warp are its members, the other lanes take no part in its calls."""
        return self.kind == "warp" and 32 % self.width != 0

    @property
    def label(self) -> str:
        if self.kind == "block":
            return "coop.this_block()"
        if self.kind == "warps":
            return f"coop.this_block().group_by({self.width}{'' if self.exhaustive else ', exhaustive=False'})"
        if self.kind in ("thread", "grid", "cluster"):
            return f"coop.this_{self.kind}()"
        if self.is_partial_warp:
            return f"coop.this_warp().group_by({self.width}, exhaustive=False)"
        return "coop.this_warp()" if self.width == 32 else f"coop.this_warp().group_by({self.width})"


@record
class ArrayArg:
    """A global-memory (or shared-memory) array operand."""

    dtype: np.dtype | None  # None: element type outside the supported set
    ndim: int
    contiguous: bool
    type_name: str = ""
    writable: bool = True  # False: a read-only array (cuda.const.array_like, a readonly argument)


@record
class PayloadArg:
    """A ThreadData payload: ``items`` slots of ``dtype`` per thread."""

    dtype: np.dtype | None  # None: not inferred (ThreadData without dtype and no load/store)
    items: int
    alignment: int | None = None
    scalar: bool = False  # a scalar taken as a one-item payload (its result is a scalar too)


_NOT_LITERAL = object()


@record
class ScalarArg:
    """A scalar operand; ``literal`` holds its value when known at compile time."""

    dtype: np.dtype | None  # None: a non-numeric scalar such as bool is reported by type_name
    literal: Any = _NOT_LITERAL
    type_name: str = ""

    @property
    def is_literal(self) -> bool:
        return self.literal is not _NOT_LITERAL


@record
class StringArg:
    value: str | None  # None: a string that is not a compile-time constant


@record
class NoneArg:
    pass


@record
class DtypeArg:
    dtype: np.dtype


@record
class TempStorageArg:
    site: int
    size_in_bytes: int | None
    alignment: int | None
    auto_sync: bool | None
    sharing: str


@record
class DeviceFunctionArg:
    """A user function passed as an operator; ``handle`` is backend-specific.

    ``key`` identifies the function (equal keys: the same code).  ``device`` is
    False for a compiled function that is not a device function (a kernel): a
    family reports it with ``validate.choose_operator``/``require_device_function``.
    """

    handle: Any = field(compare=False, hash=False)
    key: Any = None
    name: str = ""
    device: bool = True
    state_dtype: np.dtype | None = None  # a coop.StatefulFunction: the dtype of its state


@record
class OperatorArg:
    """A Python operator function, builtin or NumPy ufunc passed as an operator.

    ``name`` is its built-in spelling (``operator.add`` and ``np.add`` are
    ``"+"``, ``max`` and ``np.maximum`` are ``"max"``; see :func:`python_operator`),
    which families look up in the same alias tables as operator strings;
    ``label`` is how the user wrote it, for messages.
    """

    name: str
    label: str


@record
class UnsupportedArg:
    type_name: str


class Omitted:
    """A keyword that was not given (distinct from an explicit ``None``)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "<omitted>"


OMITTED = Omitted()


def describe(arg) -> str:
    """A short user-facing description of a descriptor, for error messages."""
    match arg:
        case GroupArg():
            return arg.label
        case ArrayArg():
            dt = arg.dtype.name if arg.dtype is not None else arg.type_name
            flags = ("" if arg.contiguous else ", non-contiguous") + ("" if arg.writable else ", read-only")
            return f"array({dt}, {arg.ndim}d{flags})"
        case PayloadArg():
            dt = arg.dtype.name if arg.dtype is not None else "?"
            return f"ThreadData({arg.items}, {dt})"
        case ScalarArg():
            if arg.is_literal:
                return repr(arg.literal)
            return arg.dtype.name if arg.dtype is not None else arg.type_name
        case StringArg():
            return repr(arg.value) if arg.value is not None else "a non-constant string"
        case NoneArg():
            return "None"
        case DtypeArg():
            return arg.dtype.name
        case TempStorageArg():
            return "coop.TempStorage(...)"
        case DeviceFunctionArg():
            return f"device function {arg.name}" if arg.device else f"kernel {arg.name}"
        case OperatorArg():
            return arg.label
        case UnsupportedArg():
            return arg.type_name
    return repr(arg)


# --------------------------------------------------------------------------------------
# Results and the ABI of a generated provider
# --------------------------------------------------------------------------------------

@record
class ScalarResult:
    dtype: np.dtype


@record
class PayloadResult:
    dtype: np.dtype
    items: int


@record
class TupleResult:
    items: tuple


@record
class AbiOperand:
    """One parameter of the provider's ``extern "C"`` function, in order.

    ``source`` names the bound argument (or ``"result"`` / ``"result.<i>"``);
    ``passing`` is one of:

    - ``"array"``: pointer to the array's first element (``T*``),
    - ``"payload"``: pointer to a ThreadData's slots (``T*``),
    - ``"scalar_in"``: a scalar stored in a one-item array by the caller (``T*``): a
      scalar where a family takes a payload of one item,
    - ``"value"``: a scalar by value, converted to ``dtype``,
    - ``"out"``: pointer to result storage allocated by the caller (``T*``),
    - ``"extent"``: the length of the 1-D array operand ``source`` (``long long``
      by value; ``dtype`` must be int64), for providers that bound their writes.
    """

    source: str
    passing: str
    dtype: np.dtype
    name: str

    @property
    def by_reference(self) -> bool:
        """A 16-bit float "value" travels as a pointer to a one-item local array.

        ``__half``/``__nv_bfloat16`` are C++ classes; the compiler passes an ``f16``/``bf16``
        scalar.  Declared by value, the two prototypes do not match: nvJitLink links
        without error but leaves an un-inlined call whose argument is never loaded.
        By pointer the types agree and LTO removes the array.  Complex values (a struct of
        two floats on the C++ side, MLIR's ``complex<f64>`` on the compiler's) travel the
        same way, so no aggregate is ever passed by value."""
        from .._dtypes import is_complex, is_half

        return self.passing == "value" and (is_half(self.dtype) or is_complex(self.dtype))

    def cxx_param(self) -> str:
        from .._dtypes import cxx_type

        t = cxx_type(self.dtype)
        if self.by_reference:
            return f"const {t}* {self.name}_ref"
        if self.passing in ("value", "extent"):
            return f"{t} {self.name}"
        const = "const " if self.passing in ("array", "scalar_in") and self.name.startswith("in_") else ""
        return f"{const}{t}* __restrict__ {self.name}" if self.passing == "out" else f"{const}{t}* {self.name}"


@record
class PointerTo:
    """A callback parameter that is a pointer to ``dtype`` (``T*``), e.g. per-thread state."""

    dtype: np.dtype


@record
class Callback:
    """A user device function that the provider calls.

    The backend compiles ``function`` for this signature (``restype``,
    ``argtypes``: dtypes by value or :class:`PointerTo`) under a C symbol
    derived from the function's identity, links it into the kernel, and the core
    declares it in the provider's namespace as a forwarding function named
    ``role``::

        __device__ __forceinline__ R role(A0 a0, A1 a1);   // calls the user's code

    so the family's C++ calls ``binary_op(a, b)`` (or wraps it in the functor
    CUB wants).  The symbol is part of the generated C++, hence of the provider
    digest: two different functions never share a provider.
    """

    role: str
    function: DeviceFunctionArg
    restype: np.dtype
    argtypes: tuple
    # True: the function computes a value of ``restype`` (a reduction/scan/difference
    # operator); a result of another kind (a float for integer values, float64 for
    # float32) is refused rather than silently converted.
    value_result: bool = False
    # True: the function is a predicate (merge sort's compare_op, discontinuity's flag_op):
    # it must return a bool, which the C ABI passes as ``restype`` (int32); an integer or
    # float result (``return a - b``) would be read as "not zero" and is refused.
    predicate: bool = False

    @property
    def by_reference(self) -> bool:
        """Complex operands and results cross the C ABI by pointer.

        By value, numba passes MLIR ``complex<f64>`` as an LLVM aggregate while C++
        passes its struct ``byval``: nvJitLink links the two but leaves an un-inlined
        call.  The backend then compiles a shim ``void(R* out, const A0* a0, ...)``
        around the user's function, and the forwarding function passes addresses of
        its locals, which LTO removes."""
        from .._dtypes import is_complex

        return any(is_complex(t) for t in (self.restype, *self.argtypes) if not isinstance(t, PointerTo))


@record
class StorageNeed:
    """Scratch one call needs: ``instances`` copies of the provider's TempStorage.

    ``per`` is "block" (one instance) or "logical_warp" (one per logical warp of
    ``width`` lanes; the provider indexes its own instance).
    """

    per: str
    width: int = 32


@record
class LaunchFacts:
    """What the compiler knows about the launch when it generates a provider."""

    block: tuple  # (x, y, z)
    cc: tuple  # (major, minor)
    grid: tuple | None = None  # (x, y, z) blocks; None: not known (no launch)
    # (x, y, z) blocks per thread-block cluster; None: the launch names no cluster
    # (``kernel[grid, block]``; every block is then a cluster of one on CC >= 9.0).
    cluster: tuple | None = None

    @property
    def block_threads(self) -> int:
        x, y, z = self.block
        return x * y * z

    @property
    def cluster_blocks(self) -> int:
        """Blocks per cluster (1 when the launch names no cluster)."""
        if self.cluster is None:
            return 1
        x, y, z = self.cluster
        return x * y * z


@record
class CppProvider:
    """Generated C++ for one call specialization.

    ``decls`` go into the provider's namespace and must define ``TempStorage``
    when the call needs scratch; ``body`` is the function body, which sees the
    ABI operands by name, ``temp`` (a ``void*`` to this call's TempStorage
    instance) and the launch constants ``BLOCK_X``, ``BLOCK_Y``, ``BLOCK_Z``,
    ``BLOCK_THREADS`` and ``linear_tid``.
    """

    headers: tuple
    decls: str
    body: str


@record
class CallPlan:
    """Everything compile time decides about one call, independent of any compiler."""

    op: str
    family: str
    group: GroupArg
    result: Any  # None | ScalarResult | PayloadResult | TupleResult
    operands: tuple  # of AbiOperand
    storage: StorageNeed | None
    temp_storage: str | None  # name of the bound argument holding an explicit TempStorage
    # The family's static parameters: the identity of the generated C++.  A frozen,
    # keyword-only dataclass per family (hashable: plans are memoized and compared);
    # its generator reads the fields by name, never by position.
    params: Hashable
    generate: Callable[["CallPlan", LaunchFacts], CppProvider] = field(compare=False, hash=False)
    check_launch: Callable[["CallPlan", LaunchFacts], None] | None = field(
        default=None, compare=False, hash=False
    )
    callbacks: tuple = ()
    sync: bool = True  # end with a barrier when storage was used (auto_sync)
    # Checked mode (the default; CUDA_COOP_CHECKED=0 turns it off, see
    # core.cpp.CHECKED_PRELUDE): the generator tests each run-time argument before
    # narrowing it and traps when it is out of range, instead of clamping.  ``checked_operands`` are operands that only the
    # checks read (a TopK k that the sort itself never needs); they join ``operands``
    # in :meth:`with_checks`, so unchecked providers keep their ABI.  ``checked_site``
    # (file name, line, function) names the user's line in the report.
    checked: bool = False
    checked_operands: tuple = ()
    checked_site: tuple = ()
    # The plan with_checks() was called on: a checked plan whose generator emitted no check
    # (no run-time argument to test) falls back to it, so it keeps its provider's ABI and C++
    # (the site then names no line, and identical calls share one provider).
    unchecked: "CallPlan | None" = field(default=None, compare=False, hash=False, repr=False)
    # valid_items when given as a compile-time constant (valid_items=600): the launch rules
    # test it against the tile the launch fixes (ops/_launch_rules.py), so a value out of range
    # is an error at the kernel line, not a trap at run time.  Not part of the plan's identity:
    # the provider passes the value as a run-time operand either way.
    literal_valid_items: int | None = field(default=None, compare=False, hash=False, repr=False)

    @property
    def call(self) -> str:
        return f"coop.{self.op}()"

    def with_checks(self, site: tuple = ()) -> "CallPlan":
        """This call in checked mode: the plan whose provider traps on invalid run-time arguments;
        ``site`` is where the call is written, for the report: (file name, line, function)."""
        if self.checked:
            return self
        return replace(self, checked=True, operands=self.operands + self.checked_operands, checked_operands=(),
                       checked_site=site, unchecked=self)


@record
class AlgorithmSpec:
    """One algorithm selector: its CUB enumerator and which groups it supports."""

    name: str
    cub: str
    groups: frozenset
    uses_storage: bool
    needs_warp_multiple: bool = False
    layout: str = "blocked"


@record
class OpSpec:
    """A public operation: its stub (signature and docs) and its planner."""

    name: str
    family: str
    stub: Callable
    plan: Callable[..., CallPlan]
    # (payload operand, array operand): a ThreadData created without dtype= takes the
    # array's element type from this call (coop.load's output from its source).
    payload_dtype_from: tuple[str, str] | None = None
    # (keyword output, keyword naming its dtype or None, default dtype name): a ThreadData
    # created without dtype= and passed as this output takes the dtype the call writes.
    implied_payload_dtypes: tuple[tuple[str, str | None, str], ...] = ()
    # The array operand this call writes (const-memory destinations are refused).
    writes: str | None = None
    # The call returns None, but where its result is read as a value (``loaded =
    # coop.load(g, src, items)``, then ``loaded`` passed on or indexed) it stands for this
    # positional operand, filled in place: code written for NVIDIA's earlier form of
    # ``coop.load``, which returned its output, keeps working, and ``result is None`` is
    # still True (the call sites' rewrite renames those reads, backends/_inference.py).
    result_alias: str | None = None
    # Other spellings of a keyword that NVIDIA's releases took, as (alias, keyword): the
    # call sites' rewrite renames them before typing (``block_prefix_callback_op=`` is
    # ``prefix_op=``), so signatures, stubs and docs name each control once.
    keyword_aliases: tuple[tuple[str, str], ...] = ()
    # The interactive explorer that shows this operation in the docs (docs/_ext): the
    # family's name unless the family has several (neighbors, reduce_batched).
    explorer: str | None = None

    @property
    def explorer_id(self) -> str:
        return self.explorer or self.family

    @property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.stub)

    def positional_index(self, name: str) -> int:
        """Position of the positional-only operand ``name`` in a call."""
        names = [p.name for p in self.signature.parameters.values() if p.kind == inspect.Parameter.POSITIONAL_ONLY]
        return names.index(name)


# --------------------------------------------------------------------------------------
# Python callables that stand for built-in operators
# --------------------------------------------------------------------------------------

def _python_operators() -> dict:
    import builtins
    import operator

    table = {
        operator.add: "+", operator.mul: "*", operator.sub: "-",
        operator.and_: "&", operator.or_: "|", operator.xor: "^",
        operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
        operator.eq: "==", operator.ne: "!=",
        builtins.min: "min", builtins.max: "max",
    }
    labels = {obj: f"operator.{obj.__name__}" for obj in table if obj.__module__ in ("_operator", "operator")}
    labels.update({builtins.min: "min", builtins.max: "max"})
    ufuncs = {
        "add": "+", "multiply": "*", "subtract": "-", "minimum": "min", "maximum": "max",
        "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
        "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=", "equal": "==",
        "not_equal": "!=",
    }
    for name, spelling in ufuncs.items():
        table[getattr(np, name)] = spelling
        labels[getattr(np, name)] = f"np.{name}"
    return {obj: (spelling, labels[obj]) for obj, spelling in table.items()}


_PY_OPERATORS = None


def python_operator(obj) -> OperatorArg | None:
    """The :class:`OperatorArg` for a Python operator function or NumPy ufunc, else None."""
    global _PY_OPERATORS
    if _PY_OPERATORS is None:
        _PY_OPERATORS = _python_operators()
    try:
        found = _PY_OPERATORS.get(obj)
    except TypeError:  # unhashable
        return None
    return OperatorArg(*found) if found is not None else None
