"""Reduce / Sum and batched warp reduction.

``reduce`` and ``sum`` combine one value (a scalar) or every item of a
ThreadData per member of a block, a warp or a logical warp, with CUB's
``BlockReduce`` / ``WarpReduce``.  They alone also take a *partial* logical
warp, ``this_warp().group_by(w, exhaustive=False)`` with ``w`` from 17 to 31:
CUB's ``WarpReduce<T, w>`` reduces lanes ``0 .. w-1`` of each warp through
shared memory (``WarpReduceSmem``), one such group per warp.  ``reduce_batched`` reduces B independent
batches across a warp in O(B) shuffle steps; no CCCL release that cuda-coop
supports (2.8, 3.0) ships a batched warp reduction, so the generated C++ holds
our own (see :func:`_batched_cpp`).

Operators are strings (``"+"``, ``"max"``, ...), Python ``operator``
functions and NumPy ufuncs standing for them (``operator.add``, ``np.maximum``),
or user ``@cuda.jit(device=True)`` functions, compiled and inlined through the
shared callback mechanism (``CallPlan.callbacks``).
"""

from __future__ import annotations

import numpy as np

from ..core.records import record
from .._dtypes import cxx_type, dtype_fields, is_integer
from .._errors import (
    ConflictingArgumentsError,
    InvalidArgumentTypeError,
    InvalidArgumentValueError,
    UnsupportedAlgorithmForGroupError,
    UnsupportedDtypeError,
)
from .._kernel_api import kernel_function
from . import _validate as v
from ._launch_rules import check_cluster_launch, check_whole_warps, non_member_warps_start
from ..core.binding import CallArgs, plans
from ..core.cpp import check_range
from ..core.spec import (
    AbiOperand,
    AlgorithmSpec,
    Callback,
    CallPlan,
    CppProvider,
    DeviceFunctionArg,
    LaunchFacts,
    OpSpec,
    PayloadArg,
    PayloadResult,
    ScalarResult,
    StorageNeed,
    describe,
)

__all__ = ["reduce", "sum", "reduce_batched", "ALGORITHMS", "OPERATORS", "operator_functor"]

# --------------------------------------------------------------------------------------
# Operators and algorithms (data: error messages, docs and test matrices read these)
# --------------------------------------------------------------------------------------

# Every accepted spelling -> canonical name.  The OperatorArg spellings of Python
# operators and ufuncs ("+", "*", "min", "max", "&", "|", "^") are among them.
OPERATORS = {
    "+": "sum", "sum": "sum", "add": "sum", "plus": "sum",
    "*": "prod", "mul": "prod", "multiply": "prod", "multiplies": "prod",
    "min": "min", "minimum": "min",
    "max": "max", "maximum": "max",
    "&": "bit_and", "bit_and": "bit_and", "bitwise_and": "bit_and",
    "|": "bit_or", "bit_or": "bit_or", "bitwise_or": "bit_or",
    "^": "bit_xor", "bit_xor": "bit_xor", "bitwise_xor": "bit_xor",
}
BITWISE = frozenset({"bit_and", "bit_or", "bit_xor"})

# Canonical name -> libcu++ functor (CUB recognizes these for its fast paths).
_FUNCTORS = {
    "sum": "::cuda::std::plus<T>",
    "prod": "::cuda::std::multiplies<T>",
    "min": "::cuda::minimum<T>",
    "max": "::cuda::maximum<T>",
    "bit_and": "::cuda::std::bit_and<T>",
    "bit_or": "::cuda::std::bit_or<T>",
    "bit_xor": "::cuda::std::bit_xor<T>",
}

_BLOCK = frozenset({"block"})
ALGORITHMS = {
    "block": {
        "warp_reductions": AlgorithmSpec("warp_reductions", "cub::BLOCK_REDUCE_WARP_REDUCTIONS", _BLOCK, True),
        "raking": AlgorithmSpec("raking", "cub::BLOCK_REDUCE_RAKING", _BLOCK, True),
        "raking_commutative_only": AlgorithmSpec(
            "raking_commutative_only", "cub::BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY", _BLOCK, True),
    },
    "warp": {},  # CUB's WarpReduce has one (shuffle-based) algorithm and needs no scratch
}
DEFAULT_ALGORITHM = "warp_reductions"
# A cluster reduction reduces each block with CUB's BlockReduce first: the block table.
_ALGORITHM_TABLES = {**ALGORITHMS, "cluster": ALGORITHMS["block"]}

HEADERS = (
    "cub/block/block_reduce.cuh",
    "cub/warp/warp_reduce.cuh",
    "cuda/functional",
)

OUTPUT_LAYOUTS = ("striped", "blocked")


def operator_functor(op) -> str:
    """The C++ functor expression of a canonical operator, or the callback wrapper."""
    if isinstance(op, DeviceFunctionArg):
        return "UserOp{}"
    return _FUNCTORS[op] + "{}"


# The wrapper a user binary operator gets: CUB calls a functor with const T&.
USER_OP_DECL = ("struct UserOp { __device__ __forceinline__ T operator()(const T& a, const T& b) const "
                "{ return binary_op(a, b); } };")


# --------------------------------------------------------------------------------------
# Public stubs
# --------------------------------------------------------------------------------------

_RESULT_DOC = """Returns
    -------
    scalar of the value's dtype (no accumulator promotion: integer sums wrap).
    Every member of the group gets the result (``broadcast=True``, the default:
    a block adds one ``__syncthreads`` and a word of shared memory, a warp one
    shuffle).  With ``broadcast=False`` the result is defined only in the
    group's first member: thread 0 of the block (linear rank
    ``x + bx*(y + by*z)``), lane 0 of each warp or logical warp, thread 0 of
    block 0 of the cluster; that is CUB's own contract and costs nothing extra.

    Every member of the group must call it (no early ``return``; do not wrap it
    in ``if tid < n``: use ``valid_items``).  A partial logical warp
    (``group_by(w, exhaustive=False)``, ``w`` from 17 to 31) is the exception
    that proves the rule: its members are lanes ``0 .. w-1`` of each warp, all
    of which must call; lanes ``w .. 31`` are not members and should skip the
    call (``if group.is_member():``).  A non-member that calls anyway takes no
    part, waits for nobody and gets an unspecified value.  The result is
    defined in lane 0 of each warp, or in lanes ``0 .. w-1`` with ``broadcast``.  Block reductions use shared memory
    and end with ``__syncthreads()`` when a later call may reuse the scratch
    (:ref:`temp-storage`; not with a ``temp_storage`` that has
    ``auto_sync=False``, when the storage may be reused only after your own
    barrier); warp reductions use shuffles only.
"""


@kernel_function
def reduce(group, value, /, *, binary_op="sum", valid_items=None, algorithm=None, broadcast=True,
           temp_storage=None):
    """Reduce one value or payload per member to one value for the group.

    Parameters
    ----------
    group : coop.this_block() | coop.this_warp() | coop.this_warp().group_by(width) | coop.this_cluster()
        Each (logical) warp reduces its own members.  ``width`` is 1, 2, 4, 8,
        16, 32, or 17 to 31 with ``exhaustive=False``: then lanes ``0 .. width-1``
        of each warp are the one logical warp of that warp, and lanes
        ``width .. 31`` are not members (guard the call with
        ``if group.is_member():``).  Also ``coop.this_block().group_by(n)`` (``n``
        warps) and ``coop.this_thread()`` (its own items).  ``coop.this_cluster()``
        reduces over every thread of every block of a thread-block cluster
        (compute capability 9.0+, a launch with a cluster shape; see
        :ref:`cluster-reduce`).
    value : scalar or coop.ThreadData
        A payload contributes all its items, in blocked order (member ``r``
        holds tile items ``r*K .. r*K+K-1``).
    binary_op : str, Python operator, NumPy ufunc or device function
        ``"+"``/``"sum"``/``"add"``/``"plus"``, ``"*"``/``"mul"``/``"multiply"``/
        ``"multiplies"``, ``"min"``/``"minimum"``, ``"max"``/``"maximum"``,
        ``"&"``/``"bit_and"``, ``"|"``/``"bit_or"``, ``"^"``/``"bit_xor"`` (bitwise:
        integers only); ``operator.add``, ``np.maximum``, ``max``, ... for the
        same; or a ``@cuda.jit(device=True)`` function ``f(a, b) -> c`` of the
        value's dtype (associative; the order of combination is CUB's).
    valid_items : int, optional
        Only the first ``valid_items`` items of the group's tile contribute
        (``1 <= valid_items``; a value of at least the tile size means the whole
        tile).  Compile-time values are checked; a run-time value below 1
        gives an unspecified result.  Not taken by a cluster.
    algorithm : {"warp_reductions", "raking", "raking_commutative_only"}, optional
        Block groups, and the per-block stage of a cluster (CUB
        ``BLOCK_REDUCE_*``); default ``"warp_reductions"``.
        ``"raking_commutative_only"`` needs a commutative operator (all
        built-in ones are).
    broadcast : bool
        ``True`` (default): every member gets the result.  ``False``: only the
        group's first member does (CUB's root-only path, no extra barrier).
        A compile-time constant.
    temp_storage : coop.TempStorage, optional
        Scratch of a block or cluster reduction (warp reductions need none).

    {result}
    """


@kernel_function
def sum(group, value, /, *, valid_items=None, algorithm=None, broadcast=True, temp_storage=None):  # noqa: A001
    """Sum one value or payload per member over the group: ``coop.reduce(..., binary_op="+")``.

    Parameters
    ----------
    group, value, valid_items, algorithm, broadcast, temp_storage
        As for :func:`reduce`.

    {result}
    """


@kernel_function
def reduce_batched(group, value, /, *, binary_op="sum", output_layout="striped"):
    """Reduce B independent batches across a warp in O(B) shuffle steps.

    Slot ``j`` of every lane forms batch ``j``: with ``B = value.items_per_thread``
    batches over ``W`` lanes, each lane returns ``S = ceil(B / W)`` reduced
    batches.

    Parameters
    ----------
    group : coop.this_warp() | coop.this_warp().group_by(width)
    value : coop.ThreadData
        ``B`` items per lane.
    binary_op : str, Python operator, NumPy ufunc or device function
        As for :func:`reduce`; it must be associative and commutative (the
        batches are combined in a butterfly order, not lane order).
    output_layout : {"striped", "blocked"}
        ``"striped"``: slot ``s`` of lane ``l`` holds batch ``l + s*W``;
        ``"blocked"``: batch ``l*S + s``.  Slots that name no batch (``>= B``)
        are unspecified.

    Returns
    -------
    coop.ThreadData of ``S`` items, fresh; every lane holds its batches.  Uses
    about ``B`` shuffles per lane (``S*W - S`` when ``B > W``;
    ``P - 1 + log2(W/P)`` when ``B <= W``, ``P`` the power of two at or above ``B``), no
    shared memory; CUB's ``WarpReduce`` per batch would take ``B*log2(W)``.
    """


def include_doc(stub, **parts):
    """Put shared docstring paragraphs (written once) where a stub's docstring says ``{name}``."""
    for name, text in parts.items():
        stub.__doc__ = stub.__doc__.replace("{" + name + "}", text.strip("\n"))


include_doc(reduce, result=_RESULT_DOC)
include_doc(sum, result=_RESULT_DOC)


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

@record(kw_only=True)
class ReduceParams:
    """The identity of one generated reduce/sum provider."""

    kind: str  # the group kind: "block", "warp", "warps", "thread" or "cluster"
    width: int  # logical warp width, or warps per group for "warps" (0 for a block)
    dtype: np.dtype  # value dtype
    value_passing: str  # "payload" or "value" (a scalar)
    op: str  # canonical operator name, or "user" (a device function)
    algorithm: str | None  # block algorithm name; None for other groups
    has_valid_items: bool
    broadcast: bool
    literal_valid_items: int | None  # valid_items when a compile-time constant (checked at launch)
    items: int  # items per thread

    def __post_init__(self):
        dtype_fields(self, "dtype")


@record(kw_only=True)
class ReduceBatchedParams:
    """The identity of one generated reduce_batched provider."""

    width: int  # logical warp width
    dtype: np.dtype  # value dtype
    batches: int  # the value's items per lane: one batch per slot
    op: str  # canonical operator name, or "user" (a device function)
    output_layout: str  # "striped" or "blocked"

    def __post_init__(self):
        dtype_fields(self, "dtype")


def _check_launch(plan: CallPlan, launch: LaunchFacts) -> None:
    check_whole_warps(plan, launch)
    check_cluster_launch(plan, launch)
    threads = launch.block_threads
    g = plan.group
    if g.kind == "block" and plan.op != "reduce_batched":
        vi, items = plan.params.literal_valid_items, plan.params.items
        if vi is not None and vi > threads * items:
            raise InvalidArgumentValueError(
                f"{plan.call}: valid_items={vi} is above the tile size {threads * items} "
                f"({threads} threads x {items} items) of the launch block {launch.block}; pass at most "
                f"{threads * items}"
            )


def value_operand(call: str, value, label: str = "value"):
    """(dtype, items, passing) of a scalar-or-payload operand."""
    val = v.require_payload(call, label, value, allow_scalar=True)
    if isinstance(val, PayloadArg):
        return v.require_known_dtype(call, label, val), val.items, "payload"
    return val.dtype, 1, "value"


def choose_binary_op(call: str, label: str, arg, dtype, *, default=None):
    """A canonical operator name or DeviceFunctionArg, checked against ``dtype``."""
    op = v.choose_operator(call, label, arg, OPERATORS, default=default)
    if isinstance(op, DeviceFunctionArg):
        v.require_no_half_callback(call, label, dtype)
    if isinstance(op, str) and op in BITWISE and not is_integer(dtype):
        raise UnsupportedDtypeError(
            f"{call}: {label}={describe(arg)} is a bitwise operator, which needs an integer dtype, "
            f"but the value has dtype {dtype.name}; use an integer value or another operator"
        )
    return op


def binary_callbacks(op, dtype, role: str = "binary_op") -> tuple:
    if not isinstance(op, DeviceFunctionArg):
        return ()
    return (Callback(role=role, function=op, restype=dtype, argtypes=(dtype, dtype), value_result=True),)


def static_valid_items(call: str, arg, tile: int | None):
    """``valid_items``: (literal or None, given); static values checked against ``tile``."""
    vi = v.optional_int_operand(call, "valid_items", arg)
    if vi is None:
        return None, False
    if vi.is_literal:
        value = int(vi.literal)
        if value < 1:
            raise InvalidArgumentValueError(
                f"{call}: valid_items={value} must be at least 1 (an empty group has no result); "
                "skip the call for empty tiles"
            )
        if tile is not None and value > tile:
            raise InvalidArgumentValueError(
                f"{call}: valid_items={value} is above the group's tile size {tile}; pass at most {tile}"
            )
        return value, True
    return None, True


def _plan_reduce(args: CallArgs) -> CallPlan:
    """coop.reduce() and coop.sum() (which has no binary_op)."""
    call, op_name = args.call, args.op
    group, value, valid_items, algorithm = args.group, args.value, args.valid_items, args.algorithm
    g = v.require_group(call, group, kinds=("block", "warp", "warps", "thread", "cluster"), partial_warps=True)
    dtype, items, passing = value_operand(call, value)
    if op_name == "sum":
        op = "sum"
    else:
        op = choose_binary_op(call, "binary_op", args.binary_op, dtype, default="sum")
    if g.kind in ("block", "cluster"):
        algo = v.choose_algorithm(call, algorithm, g, _ALGORITHM_TABLES, DEFAULT_ALGORITHM)
        tile = None
        if g.kind == "cluster" and v.is_given(valid_items):
            # A prefix of the cluster tile leaves whole blocks without a contribution,
            # and the partial exchange has no "no value" slot.
            raise ConflictingArgumentsError(
                f"{call}: valid_items={describe(valid_items)} is not taken by group={g.label} (every "
                "thread of every block of the cluster contributes); remove valid_items= and give "
                "the threads past the end the operator's identity (0 for a sum), or reduce over "
                "coop.this_block()"
            )
    elif g.kind in ("warps", "thread"):
        for label, arg in (("algorithm", algorithm), ("valid_items", valid_items)):
            if v.is_given(arg):
                # An algorithm is a group-kind choice; valid_items conflicts with the group.
                error = UnsupportedAlgorithmForGroupError if label == "algorithm" else ConflictingArgumentsError
                raise error(
                    f"{call}: {label}={describe(arg)} is not taken by group={g.label} (a group of warps "
                    "or one thread reduces every item of every member); remove it, or reduce over "
                    "coop.this_block() / coop.this_warp()"
                )
        algo, tile = None, None
    else:
        if v.is_given(algorithm):
            raise UnsupportedAlgorithmForGroupError(
                f"{call}: algorithm={describe(algorithm)} applies to block groups only; group={g.label} "
                "always uses CUB's shuffle-based WarpReduce; remove algorithm="
            )
        algo = None
        tile = g.width * items
    literal_vi, has_vi = static_valid_items(call, valid_items, tile)
    bcast = v.require_literal_bool(call, "broadcast", args.broadcast, True)
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    operands = [AbiOperand("value", passing, dtype, "items" if passing == "payload" else "scalar")]
    if has_vi:
        operands.append(AbiOperand("valid_items", "value", np.dtype("int64"), "valid_items"))
    operands.append(AbiOperand("result", "out", dtype, "result"))
    if g.kind in ("block", "warps", "cluster"):
        storage = StorageNeed(per="block")
    elif g.is_partial_warp:
        # CUB's non-power-of-two WarpReduce (WarpReduceSmem) passes values through shared
        # memory: 1.5 logical warps of T and of flags, one instance per warp (core.storage
        # gives a partial logical warp a slice no other call overlaps).
        storage = StorageNeed(per="logical_warp", width=g.width)
    else:
        storage = None
    return CallPlan(
        op=op_name, family="reduce", group=g, result=ScalarResult(dtype), operands=tuple(operands),
        storage=storage, temp_storage="temp_storage" if ts is not None else None,
        params=ReduceParams(kind=g.kind, width=g.width, dtype=dtype, value_passing=passing,
                            op=op if isinstance(op, str) else "user", algorithm=algo.name if algo else None,
                            has_valid_items=has_vi, broadcast=bcast, literal_valid_items=literal_vi,
                            items=items),
        generate=_generate_reduce, check_launch=_check_launch,
        callbacks=binary_callbacks(op, dtype),
    )


plan_reduce = plans(reduce)(_plan_reduce)
plan_sum = plans(sum)(_plan_reduce)


@plans(reduce_batched)
def plan_reduce_batched(args: CallArgs) -> CallPlan:
    call, value = args.call, args.value
    g = v.require_group(call, args.group, kinds=("warp",))
    if not isinstance(value, PayloadArg):
        raise InvalidArgumentTypeError(
            f"{call}: value={describe(value)} must be a coop.ThreadData whose slots are the batches; "
            "for one value per lane use coop.reduce()"
        )
    dtype = v.require_known_dtype(call, "value", value)
    op = choose_binary_op(call, "binary_op", args.binary_op, dtype, default="sum")
    layout = v.choose(call, "output_layout", args.output_layout, OUTPUT_LAYOUTS, "striped")
    out_items = -(-value.items // g.width)
    return CallPlan(
        op="reduce_batched", family="reduce", group=g, result=PayloadResult(dtype, out_items),
        operands=(AbiOperand("value", "payload", dtype, "items"),
                  AbiOperand("result", "out", dtype, "result")),
        storage=None, temp_storage=None,
        params=ReduceBatchedParams(width=g.width, dtype=dtype, batches=value.items,
                                   op=op if isinstance(op, str) else "user", output_layout=layout),
        generate=_generate_batched, check_launch=_check_launch,
        callbacks=binary_callbacks(op, dtype),
    )


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

def warp_mask_expr(width: int) -> str:
    """The member mask of the calling thread's logical warp (exact: siblings may diverge)."""
    if width == 32:
        return "0xffffffffu"
    if 32 % width:
        return f"{(1 << width) - 1:#x}u"  # a partial logical warp: lanes 0..width-1 of each warp
    return f"(((1u << {width}) - 1u) << ((linear_tid % 32u) / {width}u * {width}u))"


def thread_reduce_cpp(op_expr: str, src: str, dst: str, *, valid: str | None = None) -> str:
    """``dst = src[0] op src[1] op ...``; with ``valid``, only items ``i < valid`` (item 0 always)."""
    guard = f"if (i < {valid}) " if valid else ""
    return (f"T {dst} = {src}[0];\n"
            f"#pragma unroll\nfor (int i = 1; i < IPT; ++i) {{ {guard}{dst} = op({dst}, {src}[i]); }}")


def _generate_reduce(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: ReduceParams = plan.params
    kind, width, dtype, passing, op = p.kind, p.width, p.dtype, p.value_passing, p.op
    algo_name, has_vi, bcast, items = p.algorithm, p.has_valid_items, p.broadcast, p.items
    user = op == "user"
    decls = [f"using T = {cxx_type(dtype)};", f"constexpr int IPT = {items};"]
    if user:
        decls.append(USER_OP_DECL)
    functor = "UserOp" if user else _FUNCTORS[op]
    decls.append(f"using Op = {functor};")
    is_sum = op == "sum"
    body = ["const Op op{};", "(void)op;"]
    cub_op = "op"
    if passing == "payload":
        body.append("const T (&in)[IPT] = *reinterpret_cast<const T (*)[IPT]>(items);")
    else:
        body.append("const T in[1] = {scalar};")
    prologue = len(body)  # the operator and the input view: every lane declares them
    if kind in ("thread", "warps"):
        return _generate_thread_or_warps(plan, launch, decls, body, kind, width, is_sum, bcast)
    if kind == "cluster":
        return _generate_cluster(launch, decls, body, ALGORITHMS["block"][algo_name], is_sum, bcast)
    if kind == "block":
        algo = ALGORITHMS["block"][algo_name]
        decls.append(f"using Reduce = cub::BlockReduce<T, BLOCK_X, {algo.cub}, BLOCK_Y, BLOCK_Z>;")
        if bcast:
            # CUB's scratch and the broadcast slot side by side: thread 0 writes the slot
            # while slower threads may still be inside CUB's barrier-free tail.
            decls.append("struct TempStorage { typename Reduce::TempStorage cub; T result; };")
            body.append("TempStorage& ts = *static_cast<TempStorage*>(temp);")
            body.append("Reduce reducer(ts.cub);")
        else:
            decls.append("using TempStorage = typename Reduce::TempStorage;")
            body.append("Reduce reducer(*static_cast<TempStorage*>(temp));")
        rank, tile = "linear_tid", "BLOCK_THREADS * IPT"
    else:
        decls.append(f"using Reduce = cub::WarpReduce<T, {width}>;")
        if 32 % width:
            # A partial logical warp (17..31 lanes): CUB's WarpReduceSmem works in shared
            # memory with the member mask of lanes 0..width-1, whatever the calling lane.
            decls.append("using TempStorage = typename Reduce::TempStorage;")
            body.append("Reduce reducer(*static_cast<TempStorage*>(temp));")
            rank = "(linear_tid % 32u)"
        else:
            # Power-of-two logical warps reduce with shuffles: CUB's TempStorage is empty.
            body.append("typename Reduce::TempStorage unused_storage; Reduce reducer(unused_storage);")
            rank = f"(linear_tid % {width}u)"
        tile = f"{width} * IPT"
    cub_call = "reducer.Sum(partial)" if is_sum else f"reducer.Reduce(partial, {cub_op})"
    # Each member folds its own items (blocked order) before CUB combines the members.
    full = thread_reduce_cpp("op", "in", "partial") + f"\nr = {cub_call};"
    if has_vi:
        if plan.checked:
            body.append(check_range(plan, "valid_items", "valid_items", "1", tile))
        # Members fold only their valid items; CUB then reduces the partials of the
        # members that hold at least one (item 0 of a member past the end is ignored).
        partial = (
            f"const long long mine = valid_items - (long long){rank} * IPT;\n"
            + thread_reduce_cpp("op", "in", "partial", valid="mine") + "\n"
            + "const int contributors = valid_items < 1 ? 1 : (int)((valid_items + IPT - 1) / IPT);\n"
            + ("r = reducer.Sum(partial, contributors);" if is_sum
               else f"r = reducer.Reduce(partial, {cub_op}, contributors);")
        )
        body.append(f"T r;\nif (valid_items >= (long long)({tile})) {{\n{_indent(full)}\n}} else {{\n"
                    f"{_indent(partial)}\n}}")
    else:
        body.append(f"T r;\n{{\n{_indent(full)}\n}}")
    if bcast:
        if kind == "block":
            body.append("if (linear_tid == 0) ts.result = r;\n__syncthreads();\nr = ts.result;")
        elif 32 % width:
            # From lane 0 of the warp to lanes 0..width-1 (a 32-lane shuffle within the mask).
            body.append(f"r = cub::ShuffleIndex<32>(r, 0, {warp_mask_expr(width)});")
        else:
            body.append(f"r = cub::ShuffleIndex<{width}>(r, 0, {warp_mask_expr(width)});")
    body.append("result[0] = r;")
    if kind == "warp" and 32 % width:
        body = _members_only(body, width, prologue)
    return CppProvider(headers=HEADERS, decls="\n".join(decls), body="\n".join(body))


def _members_only(body: list, width: int, prologue: int) -> list:
    """Run the reduction in lanes 0..width-1 only.

    Lanes ``width .. 31`` are not members of a partial logical warp: in CUB's
    WarpReduceSmem they would share the members' slots (``lane % width``) and mask.
    The documented call sits under ``if group.is_member():``; a non-member that
    calls anyway gets its first item (unspecified by contract) and takes no part.
    """
    rest = "\n".join(body[prologue:])
    return body[:prologue] + [f"if ((linear_tid % 32u) < {width}u) {{\n{_indent(rest)}\n}} else {{\n"
                   "  result[0] = in[0];\n}"]


def _generate_thread_or_warps(plan, launch, decls, body, kind, warps, is_sum, bcast) -> CppProvider:
    """One thread folds its items; a group of ``warps`` warps reduces each warp with CUB's
    WarpReduce, then folds the group's warp totals from shared memory (one barrier).

    With ``group_by(n, exhaustive=False)`` and a block whose warps are not a multiple of
    ``n``, the warps past the last complete group are not members: they return a
    value-initialized ``T`` (0) at once, and the members meet at a named barrier of their
    own (``bar.sync 1, members``) instead of ``__syncthreads``, so the call returns
    normally in every thread.
    """
    body.append(thread_reduce_cpp("op", "in", "r"))
    if kind == "thread":
        decls.append("struct TempStorage {};")
        body.append("result[0] = r;")
        return CppProvider(headers=HEADERS, decls="\n".join(decls), body="\n".join(body))
    members = non_member_warps_start(plan, launch)
    # One slot per warp, rounded up to whole groups: NVVM may widen the fold's guarded loads
    # of a last, incomplete group (a 7-warp block in pairs: totals[6] and totals[7] as one
    # 64-bit load), and compute-sanitizer's memcheck reports the slot past the array.
    decls += ["using WarpReducer = cub::WarpReduce<T>;",
              f"constexpr unsigned WARPS = {warps};",
              "constexpr unsigned SLOTS = (BLOCK_THREADS / 32 + WARPS - 1) / WARPS * WARPS;",
              "struct TempStorage { T warp_total[SLOTS]; };"]
    if members is not None:
        body.insert(0, f"if (linear_tid / 32u >= {members}u) {{ result[0] = T{{}}; return; }}  // not a member")
    barrier = ("__syncthreads();" if members is None else
               f'asm volatile("bar.sync 1, {members * 32};" ::: "memory");  // the member warps only')
    body += [
        "typename WarpReducer::TempStorage unused_storage; WarpReducer reducer(unused_storage);",
        "r = " + ("reducer.Sum(r);" if is_sum else "reducer.Reduce(r, op);"),
        "T* totals = static_cast<TempStorage*>(temp)->warp_total;",
        "const unsigned warp = linear_tid / 32u, first = warp / WARPS * WARPS;",
        "if (linear_tid % 32u == 0) totals[warp] = r;",
        barrier,
    ]
    fold = ("r = totals[first];\n"
            "for (unsigned w = first + 1; w < first + WARPS && w < BLOCK_THREADS / 32; ++w) "
            "r = op(r, totals[w]);")
    body.append(fold if bcast else f"if (linear_tid % (32u * WARPS) == 0) {{\n{_indent(fold)}\n}}")
    body.append("result[0] = r;")
    return CppProvider(headers=HEADERS, decls="\n".join(decls), body="\n".join(body))


def _generate_cluster(launch: LaunchFacts, decls, body, algo: AlgorithmSpec, is_sum, bcast) -> CppProvider:
    """Each block reduces with CUB's BlockReduce; the blocks then exchange their partials
    through distributed shared memory (CC 9.0+) and fold them in block-rank order.

    Thread 0 of every block stores its block's partial into slot ``block_rank`` of
    the ``partials`` array of every block of the cluster (``broadcast=False``: of
    block 0 only), between two cluster barriers: the first guarantees that every
    block has started (its shared memory exists) and finished its earlier uses of
    this scratch; the second (release/acquire) makes the stores visible.  Each
    block then folds its local copy in rank order, so every block computes the
    same value from the same operands in the same order (bitwise equal, floats
    included), and no block reads another block's memory after the second
    barrier: a block may exit as soon as it has its result.
    """
    decls += [
        f"using Reduce = cub::BlockReduce<T, BLOCK_X, {algo.cub}, BLOCK_Y, BLOCK_Z>;",
        f"constexpr unsigned CLUSTER_BLOCKS = {launch.cluster_blocks};",
        "struct TempStorage { typename Reduce::TempStorage cub; T partials[CLUSTER_BLOCKS]; };",
    ]
    cub_call = "Reduce(ts.cub).Sum(partial)" if is_sum else "Reduce(ts.cub).Reduce(partial, op)"
    remote = "static_cast<T*>(__cluster_map_shared_rank(static_cast<void*>(ts.partials), {}))[block_rank] = r;"
    exchange = (f"for (unsigned b = 0; b < CLUSTER_BLOCKS; ++b) {remote.format('b')}" if bcast
                else remote.format("0u"))
    fold = ("r = ts.partials[0];\n#pragma unroll\n"
            "for (unsigned b = 1; b < CLUSTER_BLOCKS; ++b) r = op(r, ts.partials[b]);")
    body += [
        "TempStorage& ts = *static_cast<TempStorage*>(temp);",
        thread_reduce_cpp("op", "in", "partial"),
        f"T r = {cub_call};  // the block's partial, in thread 0",
        "const unsigned block_rank = __clusterRelativeBlockRank();",
        "__cluster_barrier_arrive();\n__cluster_barrier_wait();",
        f"if (linear_tid == 0) {{\n{_indent(exchange)}\n}}",
        "__cluster_barrier_arrive();\n__cluster_barrier_wait();",
        fold if bcast else f"if (block_rank == 0 && linear_tid == 0) {{\n{_indent(fold)}\n}}",
        "result[0] = r;",
    ]
    return CppProvider(headers=HEADERS, decls="\n".join(decls), body="\n".join(body))


def _indent(text: str, n: int = 2) -> str:
    return "\n".join(" " * n + line if line else line for line in text.splitlines())


SHFL_XOR_DECL = """\
template <class U>
__device__ __forceinline__ U shfl_xor(U value, int lane_mask, unsigned member_mask) {
  // __shfl_xor_sync has no 8- or 16-bit overloads: move those as 32-bit words.
  if constexpr (sizeof(U) < 4) {
    return static_cast<U>(__shfl_xor_sync(member_mask, static_cast<int>(value), lane_mask));
  } else {
    return __shfl_xor_sync(member_mask, value, lane_mask);
  }
}"""


def _generate_batched(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: ReduceBatchedParams = plan.params
    width, dtype, batches, op, layout = p.width, p.dtype, p.batches, p.op, p.output_layout
    user = op == "user"
    per_lane = -(-batches // width)
    decls = [f"using T = {cxx_type(dtype)};",
             f"constexpr int B = {batches};",
             f"constexpr int S = {per_lane};  // batches per lane after the reduction",
             SHFL_XOR_DECL]
    if user:
        decls.append(USER_OP_DECL)
    decls.append(f"using Op = {'UserOp' if user else _FUNCTORS[op]};")
    return CppProvider(headers=HEADERS, decls="\n".join(decls), body=_batched_cpp(layout, width, batches))


def _batched_cpp(layout: str, width: int, batches: int) -> str:
    """The butterfly batched reduction (recursive halving over the lane bits), unrolled here.

    Each round pairs lane ``l`` with ``l ^ d``: the pair splits its live batches
    in two halves, each lane sends the half its partner keeps and combines the
    half it keeps with what it receives, so the live batches halve each round
    and every live value covers twice as many lanes.  After ``log2(W)`` rounds
    each lane holds ``S`` fully reduced batches: ``S*W - S`` shuffles (B > W,
    padded to ``S*W``) or ``(P - 1) + log2(W/P)`` (B <= W, P the power of two
    at or above B), instead of ``B*log2(W)`` for B separate warp reductions.

    Striped output splits by the parity of the live index, lowest lane bit
    first (lane ``l`` ends with batches ``l + s*W``, combined in lane order);
    blocked output splits into contiguous halves, highest lane bit first (lane
    ``l`` ends with ``l*S .. l*S+S-1``; with ``S = 1`` both layouts are lane
    ``l`` holding batch ``l``).  Padding batches (``>= B``) copy slot 0
    and are never mixed with real ones.  The rounds are emitted as straight-line
    code with constant indices (NVVM does not fully unroll a loop nest whose
    inner trip count depends on the outer index), so the live values stay in
    registers; the selects on the lane bit compile to SEL, not branches.
    """
    per_lane = -(-batches // width)
    rounds = width.bit_length() - 1
    if per_lane == 1:
        # B <= W: halve only down to one batch per lane (B padded to a power of two P),
        # then finish with plain butterfly rounds; lane l then holds batch l in either
        # layout.  (P - 1) + log2(W / P) shuffles, e.g. 9 for B=7 on 32 lanes.
        padded = 1 << (batches - 1).bit_length()
        layout = "striped"
    else:
        padded = per_lane * width
    halving = padded.bit_length() - 1 if per_lane == 1 else rounds
    lines = [
        "const Op op{};",
        "(void)op;",
        f"const unsigned lane = linear_tid % {width}u;",
        f"const unsigned mask = {warp_mask_expr(width)};",
        "(void)lane; (void)mask;",
        f"T cur[{padded}];",
    ]
    lines += [f"cur[{j}] = items[{j if j < batches else 0}];" for j in range(padded)]
    for r in range(halving):
        live = padded >> r
        half = live // 2
        bit = r if layout == "striped" else rounds - 1 - r
        lines.append(f"{{  // round {r}: partner lane ^ {1 << bit}, {live} -> {half} live batches")
        lines.append(f"  const bool hi = (lane >> {bit}) & 1u;")
        for m in range(half):
            lo_i, hi_i = (2 * m, 2 * m + 1) if layout == "striped" else (m, half + m)
            lines.append(
                f"  {{ const T keep = hi ? cur[{hi_i}] : cur[{lo_i}]; const T send = hi ? cur[{lo_i}] : cur[{hi_i}]; "
                f"const T recv = shfl_xor(send, {1 << bit}, mask); cur[{m}] = hi ? op(recv, keep) : op(keep, recv); }}")
        lines.append("}")
    for bit in range(halving, rounds):
        lines.append(f"{{  // round {bit}: partner lane ^ {1 << bit}, all-reduce of the one live batch")
        lines.append(f"  const bool hi = (lane >> {bit}) & 1u;")
        lines.append(f"  const T recv = shfl_xor(cur[0], {1 << bit}, mask); "
                     "cur[0] = hi ? op(recv, cur[0]) : op(cur[0], recv);")
        lines.append("}")
    lines += [f"result[{s}] = cur[{s}];" for s in range(per_lane)]
    return "\n".join(lines)


SPECS = (
    OpSpec(name="reduce", family="reduce", stub=reduce, plan=plan_reduce),
    OpSpec(name="sum", family="reduce", stub=sum, plan=plan_sum),
    OpSpec(name="reduce_batched", family="reduce", stub=reduce_batched, plan=plan_reduce_batched,
           explorer="reduce_batched"),
)
