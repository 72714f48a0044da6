"""The scan family: scan, exclusive_scan, inclusive_scan, exclusive_sum, inclusive_sum.

Block scans are CUB's ``BlockScan`` (algorithms ``raking``, ``raking_memoize``,
``warp_scans``), with an optional block-prefix callback: a user device function
``f(block_aggregate) -> prefix``, or ``f(state, block_aggregate) -> prefix`` with
per-thread state passed by pointer, so a loop over tiles keeps a running total
(the "scan of an arbitrarily long input" pattern, ``examples/running_scan.py``).
Warp scans are CUB's ``WarpScan`` for one value per lane; payloads of several
items per lane fold each lane's items, scan the lane totals and rescan in the
lane.  Operators are shared with :mod:`cuda.coop.ops.reduce`.
"""

from __future__ import annotations

import numpy as np

from ..core.records import record
from .._dtypes import cxx_type, dtype_fields
from .._errors import (
    ConflictingArgumentsError,
    DtypeMismatchError,
    InvalidArgumentTypeError,
    MissingArgumentError,
    UnsupportedAlgorithmForGroupError,
)
from .._kernel_api import kernel_function
from . import _validate as v
from . import reduce as _reduce
from ._launch_rules import check_whole_warps
from ..core.binding import CallArgs, plans
from ..core.cpp import check_range
from ..core.spec import (
    AbiOperand,
    AlgorithmSpec,
    Callback,
    CallPlan,
    CppProvider,
    LaunchFacts,
    OpSpec,
    PayloadArg,
    PayloadResult,
    PointerTo,
    ScalarResult,
    StorageNeed,
    describe,
)

__all__ = ["scan", "exclusive_scan", "inclusive_scan", "exclusive_sum", "inclusive_sum", "ALGORITHMS",
           "MODES"]

_BLOCK = frozenset({"block"})
ALGORITHMS = {
    "block": {
        "raking": AlgorithmSpec("raking", "cub::BLOCK_SCAN_RAKING", _BLOCK, True),
        "raking_memoize": AlgorithmSpec("raking_memoize", "cub::BLOCK_SCAN_RAKING_MEMOIZE", _BLOCK, True),
        "warp_scans": AlgorithmSpec("warp_scans", "cub::BLOCK_SCAN_WARP_SCANS", _BLOCK, True),
    },
    "warp": {},  # CUB's WarpScan is shuffle-based and needs no scratch
}
DEFAULT_ALGORITHM = "raking"  # CUB's default
MODES = ("exclusive", "inclusive")

HEADERS = (
    "cub/block/block_scan.cuh",
    "cub/warp/warp_scan.cuh",
    "cub/warp/warp_reduce.cuh",
    "cuda/functional",
)

# --------------------------------------------------------------------------------------
# Public stubs
# --------------------------------------------------------------------------------------

_OPERANDS_DOC = """group : coop.this_block() | coop.this_warp() | coop.this_warp().group_by(width)
        Each (logical) warp scans its own members.
    value : scalar or coop.ThreadData
        The scan runs over the group's tile in blocked order: member ``r``
        holds items ``r*K .. r*K+K-1`` (load with a blocked algorithm, or
        exchange a striped payload first).
"""

_COMMON_DOC = """valid_items : int, optional
        Warp groups only: the first ``valid_items`` items of the warp's tile are
        valid (``1 <= valid_items``; at least the tile size means all).  Results
        for valid items are exact; later results are unspecified; the aggregate
        covers only the valid items.
    aggregate_output : coop.ThreadData, optional
        A payload of the value's dtype; every member's slot 0 receives the
        group's aggregate (the reduction of all items, excluding
        ``initial_value``).
    state : coop.ThreadData or cuda.local.array, optional (third positional operand)
        The one-item state of a stateful ``prefix_op`` (a
        ``coop.numba_mlir.StatefulFunction``, whose ``state_dtype`` it must have; it
        may differ from the scanned dtype).  Updated in place, so a loop over tiles
        carries a running prefix.  ``prefix_state=`` is the same operand by keyword.
    prefix_op : device function or coop.numba_mlir.StatefulFunction, optional
        Block groups only: a ``@cuda.jit(device=True)`` function
        ``prefix_op(block_aggregate) -> prefix``, or a stateful one
        ``prefix_op(state, block_aggregate) -> prefix`` where ``state`` is the
        calling thread's state payload (``state[0]``, ...).  CUB calls it once per
        scan in every lane of warp 0, with the block aggregate; the value returned
        by thread 0 seeds the whole block's scan (it is combined before every item;
        exclusive scans return it for item 0).  Only thread 0's state is
        authoritative; initialize it identically in all threads so warp 0 stays in
        step.  Excludes ``initial_value`` and ``aggregate_output``.
    prefix_state : coop.ThreadData, optional
        The state operand by keyword (kept for existing code; prefer the third
        positional operand).
    algorithm : {"raking", "raking_memoize", "warp_scans"}, optional
        Block groups only (CUB ``BLOCK_SCAN_*``; default ``"raking"``).
        ``"warp_scans"`` falls back to raking when the block's thread count is
        not a multiple of 32 (CUB's rule).
    temp_storage : coop.TempStorage, optional
        Scratch of a block scan (warp scans need none).

    Returns
    -------
    A fresh scalar (for a scalar value) or coop.ThreadData with the same items
    per thread and dtype; the input is not modified.  Every member holds its own
    results.  Block scans use shared memory and end with ``__syncthreads()`` when a
    later call may reuse the scratch (:ref:`temp-storage`; not with a
    ``temp_storage`` that has ``auto_sync=False``); warp scans use shuffles
    only.  Every member of the group must call it.
"""

_OP_DOC = """scan_op : str, Python operator, NumPy ufunc or device function, optional
        As ``binary_op`` of :func:`coop.reduce`: ``"+"`` (default), ``"*"``,
        ``"min"``, ``"max"``, ``"&"``, ``"|"``, ``"^"`` and their aliases,
        ``operator.add``, ``np.maximum``, ..., or an associative
        ``@cuda.jit(device=True)`` function ``f(a, b)`` of the value's dtype.
"""


@kernel_function
def scan(group, value, state=None, /, *, mode="exclusive", scan_op=None, initial_value=None, valid_items=None,
         aggregate_output=None, prefix_op=None, prefix_state=None, algorithm=None, temp_storage=None):
    """Exclusive or inclusive prefix scan over the group's tile.

    Parameters
    ----------
    {operands}
    mode : {"exclusive", "inclusive"}
    {op}
    initial_value : scalar, optional
        Exclusive scans: the value of item 0, combined before every item.
        Required for exclusive scans with an operator other than a sum (whose
        default is 0); not accepted by inclusive scans.  Of the payload's dtype,
        or a Python literal (``-math.inf``), converted to it after a range check.
    {common}
    """


@kernel_function
def exclusive_scan(group, value, state=None, /, *, scan_op=None, initial_value=None, valid_items=None,
                   aggregate_output=None, prefix_op=None, prefix_state=None, algorithm=None,
                   temp_storage=None):
    """Exclusive prefix scan: item ``i`` receives ``initial_value op x[0] op ... op x[i-1]``.

    Parameters
    ----------
    {operands}
    {op}
    initial_value : scalar, optional
        Required unless the operator is a sum (default 0) or ``prefix_op`` is
        given.  Of the payload's dtype, or a Python literal (``-math.inf``),
        converted to it after a range check.
    {common}
    """


@kernel_function
def inclusive_scan(group, value, state=None, /, *, scan_op=None, valid_items=None, aggregate_output=None,
                   prefix_op=None, prefix_state=None, algorithm=None, temp_storage=None):
    """Inclusive prefix scan: item ``i`` receives ``x[0] op ... op x[i]``.

    Parameters
    ----------
    {operands}
    {op}
    {common}
    """


@kernel_function
def exclusive_sum(group, value, state=None, /, *, valid_items=None, aggregate_output=None, prefix_op=None,
                  prefix_state=None, algorithm=None, temp_storage=None):
    """Exclusive prefix sum: item ``i`` receives ``x[0] + ... + x[i-1]`` (item 0: 0).

    Parameters
    ----------
    {operands}
    {common}
    """


@kernel_function
def inclusive_sum(group, value, state=None, /, *, valid_items=None, aggregate_output=None, prefix_op=None,
                  prefix_state=None, algorithm=None, temp_storage=None):
    """Inclusive prefix sum: item ``i`` receives ``x[0] + ... + x[i]``.

    Parameters
    ----------
    {operands}
    {common}
    """


for _stub in (scan, exclusive_scan, inclusive_scan):
    _reduce.include_doc(_stub, operands=_OPERANDS_DOC, op=_OP_DOC, common=_COMMON_DOC)
for _stub in (exclusive_sum, inclusive_sum):
    _reduce.include_doc(_stub, operands=_OPERANDS_DOC, common=_COMMON_DOC)


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

@record(kw_only=True)
class ScanParams:
    """The identity of one generated scan provider."""

    kind: str  # the group kind: "block" or "warp"
    width: int  # logical warp width (0 for a block)
    dtype: np.dtype  # value dtype
    items: int  # items per thread
    mode: str  # "exclusive" or "inclusive"
    op: str  # canonical operator name, or "user" (a device function)
    algorithm: str | None  # block algorithm name; None for warps
    has_initial_value: bool
    has_valid_items: bool
    has_aggregate: bool  # aggregate_output given
    prefix: str | None  # prefix_op: "stateful" (with a state), "stateless", or None when not given
    state_dtype: np.dtype | None  # dtype of the prefix callback's state, if any
    literal_valid_items: int | None  # valid_items when a compile-time constant

    def __post_init__(self):
        dtype_fields(self, "dtype", "state_dtype")


def _check_launch(plan: CallPlan, launch: LaunchFacts) -> None:
    check_whole_warps(plan, launch)


def _plan_scan(args: CallArgs) -> CallPlan:
    """All five scans: coop.scan() names its mode, the others are one mode each; the sums
    have no scan_op and only exclusive scans an initial_value (both read as omitted)."""
    call, op_name = args.call, args.op
    if op_name == "scan":
        mode = v.choose(call, "mode", args.mode, MODES, "exclusive")
    else:
        mode = "inclusive" if op_name.startswith("inclusive_") else "exclusive"
    scan_op, initial_value = args.get("scan_op"), args.get("initial_value")
    algorithm, prefix_state, aggregate_output = args.algorithm, args.prefix_state, args.aggregate_output
    g = v.require_group(call, args.group)
    dtype, items, passing = _reduce.value_operand(call, args.value)
    op = _reduce.choose_binary_op(call, "scan_op", scan_op, dtype, default="sum")
    if g.kind == "block":
        algo = v.choose_algorithm(call, algorithm, g, ALGORITHMS, DEFAULT_ALGORITHM)
    else:
        if v.is_given(algorithm):
            raise UnsupportedAlgorithmForGroupError(
                f"{call}: algorithm={describe(algorithm)} applies to block groups only; group={g.label} "
                "always uses CUB's shuffle-based WarpScan; remove algorithm="
            )
        algo = None
    # -- prefix callback ------------------------------------------------------------
    state_source = "prefix_state"  # the bound argument the provider's state pointer comes from
    if v.is_given(args.state):
        state_source = "state"
        if v.is_given(prefix_state):
            raise ConflictingArgumentsError(
                f"{call}: the prefix state was given twice, as the third operand and as prefix_state=; "
                "pass it once (as the third operand)"
            )
        prefix_state = args.state
    has_prefix = v.is_given(args.prefix_op)
    if v.is_given(prefix_state) and not has_prefix:
        raise ConflictingArgumentsError(
            f"{call}: a prefix state (third operand or prefix_state=) was given without prefix_op; "
            "the state belongs to a stateful prefix callback, so pass prefix_op=coop.StatefulFunction(...) "
            "too, or drop the state"
        )
    callbacks = list(_reduce.binary_callbacks(op, dtype, role="scan_op"))
    operands = [AbiOperand("value", passing, dtype, "items" if passing == "payload" else "scalar")]
    state_dtype = None
    if has_prefix:
        if g.kind != "block":
            raise ConflictingArgumentsError(
                f"{call}: prefix_op= applies to block scans (CUB's BlockScan prefix callback), not to "
                f"group={g.label}; pass the running prefix as initial_value= instead"
            )
        fn = v.require_device_function(call, "prefix_op", args.prefix_op)
        if fn.state_dtype is not None:  # a coop.StatefulFunction: its state is required, of its dtype
            if not v.is_given(prefix_state):
                raise MissingArgumentError(
                    f"{call}: prefix_op={fn.name} is a coop.StatefulFunction, which needs its state: pass a "
                    f"one-item payload of {fn.state_dtype.name} as the third operand, e.g. "
                    f"coop.{op_name}(block, x, state, prefix_op=...)"
                )
            if isinstance(prefix_state, PayloadArg) and prefix_state.dtype != fn.state_dtype:
                got = prefix_state.dtype.name if prefix_state.dtype is not None else "unknown"
                raise DtypeMismatchError(
                    f"{call}: the state has dtype {got} but prefix_op={fn.name} was declared with "
                    f"state_dtype={fn.state_dtype.name}; create the state as "
                    f"coop.ThreadData(1, dtype=np.{fn.state_dtype.name})"
                )
        for other, arg in (("initial_value", initial_value), ("aggregate_output", aggregate_output)):
            if v.is_given(arg):
                raise ConflictingArgumentsError(
                    f"{call}: prefix_op and {other} cannot be combined: the callback's prefix seeds the "
                    "scan and receives the block aggregate; drop one of them"
                )
        if v.is_given(prefix_state):
            if not isinstance(prefix_state, PayloadArg):
                raise InvalidArgumentTypeError(
                    f"{call}: prefix_state={describe(prefix_state)} is not a coop.ThreadData; pass the "
                    "ThreadData holding the per-thread state the callback updates through a pointer"
                )
            state_dtype = v.require_known_dtype(call, "prefix_state", prefix_state)
            operands.append(AbiOperand(state_source, "payload", state_dtype, "prefix_state"))
            argtypes = (PointerTo(state_dtype), dtype)
        else:
            argtypes = (dtype,)
        v.require_no_half_callback(call, "prefix_op", dtype)
        callbacks.append(Callback(role="prefix_op", function=fn, restype=dtype, argtypes=argtypes))
    # -- mode and initial value -----------------------------------------------------
    has_init = v.is_given(initial_value)
    if mode == "inclusive" and has_init:
        raise ConflictingArgumentsError(
            f"{call}: initial_value is not accepted by an inclusive scan (item i is x[0] op ... op "
            "x[i]); use an exclusive scan, or combine the value into the result yourself"
        )
    if mode == "exclusive" and op != "sum" and not has_init and not has_prefix:
        raise MissingArgumentError(
            f"{call}: an exclusive scan with scan_op={describe(scan_op)} needs initial_value= (the "
            "value of item 0; only sums default to 0); pass it, e.g. the operator's identity"
        )
    if has_init:
        v.optional_scalar_of_dtype(call, "initial_value", initial_value, dtype)
        operands.append(AbiOperand("initial_value", "value", dtype, "initial_value"))
    # -- valid items and aggregate --------------------------------------------------
    if v.is_given(args.valid_items) and g.kind == "block":
        raise ConflictingArgumentsError(
            f"{call}: valid_items= applies to warp scans only; a block scan's results for the first N "
            "items never depend on later items, so scan the whole tile (pad it, e.g. with load's "
            "oob_default)"
        )
    literal_vi, has_vi = _reduce.static_valid_items(call, args.valid_items, g.width * items if g.kind == "warp"
                                                    else None)
    if has_vi:
        operands.append(AbiOperand("valid_items", "value", np.dtype("int64"), "valid_items"))
    has_agg = v.is_given(aggregate_output)
    if has_agg:
        agg = v.require_payload(call, "aggregate_output", aggregate_output)
        agg_dtype = v.require_known_dtype(call, "aggregate_output", agg)
        if agg_dtype != dtype:
            raise DtypeMismatchError(
                f"{call}: aggregate_output has dtype {agg_dtype.name} but the value has dtype "
                f"{dtype.name}; create it with coop.ThreadData(1, dtype=np.{dtype.name})"
            )
        operands.append(AbiOperand("aggregate_output", "payload", dtype, "aggregate_output"))
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    result = ScalarResult(dtype) if passing == "value" else PayloadResult(dtype, items)
    operands.append(AbiOperand("result", "out", dtype, "result"))
    return CallPlan(
        op=op_name, family="scan", group=g, result=result, operands=tuple(operands),
        storage=StorageNeed(per="block") if g.kind == "block" else None,
        temp_storage="temp_storage" if ts is not None else None,
        params=ScanParams(kind=g.kind, width=g.width, dtype=dtype, items=items, mode=mode,
                          op=op if isinstance(op, str) else "user", algorithm=algo.name if algo else None,
                          has_initial_value=has_init, has_valid_items=has_vi, has_aggregate=has_agg,
                          prefix="stateful" if state_dtype is not None else ("stateless" if has_prefix else None),
                          state_dtype=state_dtype,
                          literal_valid_items=literal_vi),
        generate=_generate, check_launch=_check_launch, callbacks=tuple(callbacks),
    )


plan_scan = plans(scan)(_plan_scan)
plan_exclusive_scan = plans(exclusive_scan)(_plan_scan)
plan_inclusive_scan = plans(inclusive_scan)(_plan_scan)
plan_exclusive_sum = plans(exclusive_sum)(_plan_scan)
plan_inclusive_sum = plans(inclusive_sum)(_plan_scan)


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

def _generate(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: ScanParams = plan.params
    kind, width, dtype, items, mode, op = p.kind, p.width, p.dtype, p.items, p.mode, p.op
    algo_name, has_init, has_vi, has_agg = p.algorithm, p.has_initial_value, p.has_valid_items, p.has_aggregate
    prefix, state_dtype = p.prefix, p.state_dtype
    decls = [f"using T = {cxx_type(dtype)};", f"constexpr int IPT = {items};"]
    if op == "user":
        decls.append(_reduce.USER_OP_DECL.replace("binary_op(", "scan_op("))
        decls.append("using Op = UserOp;")
    else:
        decls.append(f"using Op = {_reduce._FUNCTORS[op]};")
    body = ["const Op op{};", "(void)op;",
            "T (&in)[IPT] = *reinterpret_cast<T (*)[IPT]>(items);" if plan.operands[0].passing == "payload"
            else "T in[1] = {scalar};",
            "T (&out)[IPT] = *reinterpret_cast<T (*)[IPT]>(result);"]
    # Sums keep CUB's Sum entry points (its fast paths) unless an initial value is given.
    sum_entry = op == "sum" and not has_init
    if kind == "block":
        algo = ALGORITHMS["block"][algo_name]
        decls.append(f"using Scan = cub::BlockScan<T, BLOCK_X, {algo.cub}, BLOCK_Y, BLOCK_Z>;")
        decls.append("using TempStorage = typename Scan::TempStorage;")
        if prefix == "stateful":
            decls.append(
                f"struct Prefix {{ {cxx_type(state_dtype)}* state; "
                "__device__ __forceinline__ T operator()(T block_aggregate) "
                "{ return prefix_op(state, block_aggregate); } };")
            body.append("Prefix prefix{prefix_state};")
        elif prefix == "stateless":
            decls.append("struct Prefix { __device__ __forceinline__ T operator()(T block_aggregate) "
                         "{ return prefix_op(block_aggregate); } };")
            body.append("Prefix prefix{};")
        body.append("Scan scanner(*static_cast<TempStorage*>(temp));")
        src, dst = ("in", "out") if items > 1 or plan.operands[0].passing == "payload" else ("in[0]", "out[0]")
        tail = ", prefix" if prefix else (", agg" if has_agg else "")
        if has_agg:
            body.append("T agg;")
        fn = "op"
        if mode == "inclusive":
            call = (f"InclusiveSum({src}, {dst}{tail})" if sum_entry
                    else f"InclusiveScan({src}, {dst}, {fn}{tail})")
        elif sum_entry:
            call = f"ExclusiveSum({src}, {dst}{tail})"
        elif has_init:
            call = f"ExclusiveScan({src}, {dst}, initial_value, {fn}{tail})"
        elif prefix:  # a prefix callback replaces the initial value
            call = f"ExclusiveScan({src}, {dst}, {fn}{tail})"
        else:  # a sum through the wrapper: 0 is the initial value
            call = f"ExclusiveScan({src}, {dst}, T(0), {fn}{tail})"
        body.append(f"scanner.{call};")
        if has_agg:
            body.append("aggregate_output[0] = agg;")
    else:
        if has_vi and plan.checked:
            # Checked although only the aggregate reads it: NVIDIA's warp scans trap too.
            body.append(check_range(plan, "valid_items", "valid_items", "1", f"{width} * IPT"))
        body += _warp_body(decls, width, items, mode, sum_entry, has_init, has_vi, has_agg)
    return CppProvider(headers=HEADERS, decls="\n".join(decls), body="\n".join(body))


def _warp_body(decls, width, items, mode, sum_entry, has_init, has_vi, has_agg) -> list:
    decls.append(f"using Scan = cub::WarpScan<T, {width}>;")
    body = ["typename Scan::TempStorage unused_storage; Scan scanner(unused_storage);",
            f"const unsigned lane = linear_tid % {width}u;", "(void)lane;"]
    # The aggregate of a partial tile is a separate reduction of the valid items (the
    # scan itself needs no change: results of valid items never depend on later ones).
    native_agg = has_agg and not has_vi
    tail = ", agg" if native_agg else ""
    if has_agg:
        body.append("T agg;")
    if items == 1:
        if mode == "inclusive":
            call = f"InclusiveSum(in[0], out[0]{tail})" if sum_entry else f"InclusiveScan(in[0], out[0], op{tail})"
        elif sum_entry:
            call = f"ExclusiveSum(in[0], out[0]{tail})"
        else:
            call = f"ExclusiveScan(in[0], out[0], initial_value, op{tail})"
        body.append(f"scanner.{call};")
    else:
        # Several items per lane: fold each lane's items, exclusive-scan the lane totals,
        # then scan within the lane from that prefix (what BlockScan does per thread).
        body.append(_reduce.thread_reduce_cpp("op", "in", "total"))
        if sum_entry:
            body.append(f"T pre; scanner.ExclusiveSum(total, pre{tail});")
            first = "op(pre, in[0])"
        elif has_init:
            body.append(f"T pre; scanner.ExclusiveScan(total, pre, initial_value, op{tail});")
            first = "op(pre, in[0])"
        else:  # inclusive, non-sum: lane 0 has no prefix
            body.append(f"T pre; scanner.ExclusiveScan(total, pre, op{tail});")
            first = "(lane == 0 ? in[0] : op(pre, in[0]))"
        if mode == "inclusive":
            body.append(f"T run = {first};\nout[0] = run;\n"
                        "#pragma unroll\nfor (int i = 1; i < IPT; ++i) { run = op(run, in[i]); out[i] = run; }")
        else:
            body.append("T run = pre;\nout[0] = run;\n"
                        "#pragma unroll\nfor (int i = 1; i < IPT; ++i) { run = op(run, in[i - 1]); out[i] = run; }")
    if has_agg and has_vi:
        decls.append(f"using Reduce = cub::WarpReduce<T, {width}>;")
        body.append(
            "{\n"
            "  typename Reduce::TempStorage unused_reduce; Reduce reducer(unused_reduce);\n"
            "  const long long mine = valid_items - (long long)lane * IPT;\n"
            + _reduce._indent(_reduce.thread_reduce_cpp("op", "in", "partial", valid="mine")) + "\n"
            "  const int contributors = valid_items < 1 ? 1 : (valid_items >= (long long)(IPT * "
            f"{width}) ? {width} : (int)((valid_items + IPT - 1) / IPT));\n"
            "  agg = reducer.Reduce(partial, op, contributors);\n"
            f"  agg = cub::ShuffleIndex<{width}>(agg, 0, {_reduce.warp_mask_expr(width)});\n"
            "}"
        )
    if has_agg:
        body.append("aggregate_output[0] = agg;")
    return body


# NVIDIA's qualified API spelled prefix_op= block_prefix_callback_op= (CUB's parameter name).
_PREFIX_ALIAS = (("block_prefix_callback_op", "prefix_op"),)

SPECS = (
    OpSpec(name="scan", family="scan", stub=scan, plan=plan_scan, keyword_aliases=_PREFIX_ALIAS),
    OpSpec(name="exclusive_scan", family="scan", stub=exclusive_scan, plan=plan_exclusive_scan,
           keyword_aliases=_PREFIX_ALIAS),
    OpSpec(name="inclusive_scan", family="scan", stub=inclusive_scan, plan=plan_inclusive_scan,
           keyword_aliases=_PREFIX_ALIAS),
    OpSpec(name="exclusive_sum", family="scan", stub=exclusive_sum, plan=plan_exclusive_sum,
           keyword_aliases=_PREFIX_ALIAS),
    OpSpec(name="inclusive_sum", family="scan", stub=inclusive_sum, plan=plan_inclusive_sum,
           keyword_aliases=_PREFIX_ALIAS),
)
