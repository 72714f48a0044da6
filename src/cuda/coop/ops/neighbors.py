"""Neighbours: combine each item of a block's tile with the item next to it.

CUB: ``cub::BlockAdjacentDifference`` (``adjacent_difference``) and
``cub::BlockDiscontinuity`` (``discontinuity``).

Both read the block's tile in the blocked layout (thread ``t`` holds positions
``t*K .. t*K+K-1``, ``K`` items per thread) and return fresh payloads in the
same layout.  Position 0 has no predecessor and the last position no
successor, unless ``tile_predecessor_item`` / ``tile_successor_item`` supply the
items just outside the tile (e.g. the neighbouring tiles' edge items).
"""

from __future__ import annotations

import numpy as np

from ..core.records import record
from .._dtypes import cxx_type, dtype_fields, is_complex
from .._errors import UnsupportedDtypeError
from .._kernel_api import kernel_function
from . import _validate as v
from ._launch_rules import check_constant_valid_items
from ..core.binding import CallArgs, plans
from ..core.cpp import check_range
from ..core.spec import (
    AbiOperand,
    Callback,
    CallPlan,
    CppProvider,
    LaunchFacts,
    OpSpec,
    PayloadResult,
    DeviceFunctionArg,
    StorageNeed,
    TupleResult,
)

__all__ = ["adjacent_difference", "discontinuity", "DIRECTIONS", "DISCONTINUITY_MODES", "FLAG_DTYPE", "SPECS"]

DIRECTIONS = ("left", "right")
DISCONTINUITY_MODES = ("heads", "tails", "heads_and_tails")
FLAG_DTYPE = np.dtype("int32")

# Built-in operators (strings, operator.sub / np.subtract, operator.ne / np.not_equal);
# anything else is a @cuda.jit(device=True) function.
DIFFERENCE_OPS = {"-": "-", "sub": "-", "subtract": "-", "minus": "-"}
FLAG_OPS = {
    "!=": "!=", "ne": "!=", "not_equal": "!=", "==": "==", "eq": "==", "equal": "==",
    "<": "<", "lt": "<", "less": "<", "<=": "<=", "le": "<=", "less_equal": "<=",
    ">": ">", "gt": ">", "greater": ">", ">=": ">=", "ge": ">=", "greater_equal": ">=",
}

HEADERS = (
    "cub/block/block_adjacent_difference.cuh",
    "cub/block/block_discontinuity.cuh",
)


# --------------------------------------------------------------------------------------
# Public stubs
# --------------------------------------------------------------------------------------

@kernel_function
def adjacent_difference(block, values, /, *, direction="left", valid_items=None, tile_predecessor_item=None,
                        tile_successor_item=None, difference_op=None, temp_storage=None):
    """Difference of each item of the block's tile with its left or right neighbour.

    Parameters
    ----------
    block : coop.this_block()
    values : coop.ThreadData
        ``K`` items per thread, blocked layout (tile of ``block_threads * K``).
        Not modified.
    direction : str
        ``"left"`` (default): position ``p`` gets ``x[p] - x[p-1]``.
        ``"right"``: position ``p`` gets ``x[p] - x[p+1]``.
        The subtraction is done in the values' dtype (integers wrap).
    valid_items : int, optional
        Run time, block-uniform.  Only the first ``valid_items`` positions form
        the tile: the others are copied unchanged, and the last valid position has
        no right neighbour.  A value outside ``[0, tile size]`` stops the launch
        with a report (the run-time checks, on by default); with
        ``CUDA_COOP_CHECKED=0`` it is clamped to that range.
    tile_predecessor_item : scalar, optional (``"left"`` only)
        The item before position 0; without it position 0 is copied unchanged.
    tile_successor_item : scalar, optional (``"right"`` only)
        The item after the tile's last (valid) position; without it that position
        is copied unchanged.  With ``valid_items`` it follows the last valid item.
    difference_op : optional
        Replaces the subtraction: a ``@cuda.jit(device=True)`` function
        ``f(current, neighbour) -> value`` (``"left"``: ``f(x[p], x[p-1])``,
        ``"right"``: ``f(x[p], x[p+1])``), called with and returning the values'
        dtype.  ``"-"``, ``operator.sub`` and ``np.subtract`` name the default.
    temp_storage : coop.TempStorage, optional

    Returns
    -------
    coop.ThreadData
        Fresh, ``K`` items of the values' dtype per thread, blocked layout,
        defined in every thread.  The call ends with ``__syncthreads()`` when a later
        call may reuse the scratch (see :ref:`temp-storage`), unless an explicit
        ``TempStorage(auto_sync=False)`` is given.
    """


@kernel_function
def discontinuity(block, values, /, *, mode="heads", valid_items=None, tile_predecessor_item=None,
                  tile_successor_item=None, flag_op=None, temp_storage=None):
    """Flag the items of the block's tile that differ from a neighbour.

    Parameters
    ----------
    block : coop.this_block()
    values : coop.ThreadData
        ``K`` items per thread, blocked layout.  Not modified.
    mode : str
        ``"heads"`` (default): position ``p`` is flagged when ``x[p-1] != x[p]``
        (the first item of each run of equal items).
        ``"tails"``: flagged when ``x[p] != x[p+1]`` (the last item of each run).
        ``"heads_and_tails"``: both, as a tuple ``(heads, tails)``.
    valid_items : int, optional
        Run time, block-uniform.  Only the first ``valid_items`` positions form
        the tile: flags past them are 0 and the last valid position is a tail.
        A value outside ``[0, tile size]`` stops the launch with a report (the
        run-time checks, on by default); with ``CUDA_COOP_CHECKED=0`` it is
        clamped to that range.  (CUB flags full tiles only; this is applied on
        top.)
    tile_predecessor_item : scalar, optional (``"heads"``, ``"heads_and_tails"``)
        The item before position 0.  Without it position 0 is always a head.
    tile_successor_item : scalar, optional (``"tails"``, ``"heads_and_tails"``)
        The item after the tile's last (valid) position.  Without it that position
        is always a tail.
    flag_op : optional
        Replaces ``!=``: a ``@cuda.jit(device=True)`` predicate ``f(a, b)`` called
        as ``f(x[p-1], x[p])`` for heads and ``f(x[p], x[p+1])`` for tails, with
        the values' dtype; a true (non-zero) result flags the position.  Built-in
        comparisons: ``"!="`` (the default), ``"=="``, ``"<"``, ``"<="``, ``">"``,
        ``">="`` (also as ``operator.ne``/``np.not_equal``, ``operator.lt``, ...).
    temp_storage : coop.TempStorage, optional

    Returns
    -------
    coop.ThreadData of int32 (or a tuple of two for ``"heads_and_tails"``)
        Fresh flags, 1 or 0, blocked layout, defined in every thread.  The call
        ends with ``__syncthreads()`` when a later call may reuse the scratch (see
        :ref:`temp-storage`), unless an explicit ``TempStorage(auto_sync=False)`` is
        given.
    """


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

def _values(call, block, values):
    g = v.require_group(call, block, kinds=("block",))
    # Complex values are moved here; only a device-function operator may combine or
    # compare them (_operator refuses the built-in ones).
    p = v.require_payload(call, "values", values, movement=True)
    return g, p, v.require_known_dtype(call, "values", p)


def _neighbour(call, label, arg, dtype):
    s = v.optional_scalar_of_dtype(call, label, arg, dtype, target="values")
    return s is not None, ([AbiOperand(label, "value", dtype, label.replace("tile_", "").replace("_item", ""))]
                           if s is not None else [])


def _valid_items(call, arg):
    vi = v.optional_int_operand(call, "valid_items", arg)
    return vi is not None, ([AbiOperand("valid_items", "value", np.dtype("int64"), "valid_items")]
                            if vi is not None else [])


@record(kw_only=True)
class AdjacentDifferenceParams:
    """The identity of one generated adjacent_difference provider."""

    dtype: np.dtype  # item dtype
    items: int  # items per thread
    direction: str  # "left" or "right"
    has_valid_items: bool
    has_neighbour: bool  # tile_predecessor_item (left) or tile_successor_item (right) given
    op: str  # a built-in operator's name, or "callback"

    def __post_init__(self):
        dtype_fields(self, "dtype")


@record(kw_only=True)
class DiscontinuityParams:
    """The identity of one generated discontinuity provider."""

    dtype: np.dtype  # item dtype
    items: int  # items per thread
    mode: str  # "heads", "tails" or "heads_and_tails"
    has_valid_items: bool
    has_predecessor: bool  # tile_predecessor_item given
    has_successor: bool  # tile_successor_item given
    op: str  # a built-in predicate's name, or "callback"

    def __post_init__(self):
        dtype_fields(self, "dtype")


def _operator(call, label, arg, aliases, default, dtype, restype, *, value_result=False):
    """(the built-in operator's name or "callback", the callbacks to compile).

    ``value_result``: the function computes a value of the items' dtype (difference_op);
    a predicate (flag_op) returns a truth value that is converted to ``restype``.
    """
    op = v.choose_operator(call, label, arg, aliases, default=default)
    if isinstance(op, DeviceFunctionArg):
        v.require_no_half_callback(call, label, dtype)
        return "callback", (Callback(role=label, function=op, restype=restype, argtypes=(dtype, dtype),
                                     value_result=value_result, predicate=not value_result),)
    if is_complex(dtype):
        raise UnsupportedDtypeError(
            f"{call}: {label}={op!r}{'' if v.is_given(arg) else ' (the default)'} is a built-in operator, "
            f"which takes no {dtype.name} values; pass a @cuda.jit(device=True) function of two "
            f"{dtype.name} values (e.g. def op(a, b): return a - b)"
        )
    return op, ()


@plans(adjacent_difference)
def plan_adjacent_difference(args: CallArgs) -> CallPlan:
    call = args.call
    g, p, dtype = _values(call, args.block, args.values)
    direction = v.choose(call, "direction", args.direction, DIRECTIONS, "left")
    if direction == "left":
        v.forbid(call, "tile_successor_item", args.tile_successor_item,
                 "is the right neighbour of the tile and only applies to direction='right'; "
                 "use tile_predecessor_item= with direction='left'")
        has_nb, nb = _neighbour(call, "tile_predecessor_item", args.tile_predecessor_item, dtype)
    else:
        v.forbid(call, "tile_predecessor_item", args.tile_predecessor_item,
                 "is the left neighbour of the tile and only applies to direction='left'; "
                 "use tile_successor_item= with direction='right'")
        has_nb, nb = _neighbour(call, "tile_successor_item", args.tile_successor_item, dtype)
    has_vi, vi = _valid_items(call, args.valid_items)
    op, callbacks = _operator(call, "difference_op", args.difference_op, DIFFERENCE_OPS, "-", dtype, dtype,
                              value_result=True)
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    operands = (AbiOperand("values", "payload", dtype, "items"), *vi, *nb,
                AbiOperand("result", "out", dtype, "out"))
    return CallPlan(
        op="adjacent_difference", family="neighbors", group=g, result=PayloadResult(dtype, p.items),
        operands=operands, storage=StorageNeed(per="block"),
        temp_storage="temp_storage" if ts is not None else None,
        params=AdjacentDifferenceParams(dtype=dtype, items=p.items, direction=direction,
                                        has_valid_items=has_vi, has_neighbour=has_nb, op=op),
        generate=_generate_difference, callbacks=callbacks, check_launch=check_constant_valid_items,
        literal_valid_items=v.literal_int(args.valid_items),
    )


@plans(discontinuity)
def plan_discontinuity(args: CallArgs) -> CallPlan:
    call = args.call
    g, p, dtype = _values(call, args.block, args.values)
    mode = v.choose(call, "mode", args.mode, DISCONTINUITY_MODES, "heads")
    if mode == "tails":
        v.forbid(call, "tile_predecessor_item", args.tile_predecessor_item,
                 "only affects head flags, and mode='tails' computes tail flags; use "
                 "mode='heads_and_tails' or remove it")
    if mode == "heads":
        v.forbid(call, "tile_successor_item", args.tile_successor_item,
                 "only affects tail flags, and mode='heads' computes head flags; use "
                 "mode='heads_and_tails' or remove it")
    has_pred, pred = _neighbour(call, "tile_predecessor_item", args.tile_predecessor_item, dtype)
    has_succ, succ = _neighbour(call, "tile_successor_item", args.tile_successor_item, dtype)
    has_vi, vi = _valid_items(call, args.valid_items)
    op, callbacks = _operator(call, "flag_op", args.flag_op, FLAG_OPS, "!=", dtype, FLAG_DTYPE)
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    flags = PayloadResult(FLAG_DTYPE, p.items)
    if mode == "heads_and_tails":
        result = TupleResult((flags, flags))
        outs = (AbiOperand("result.0", "out", FLAG_DTYPE, "out_heads"),
                AbiOperand("result.1", "out", FLAG_DTYPE, "out_tails"))
    else:
        result = flags
        outs = (AbiOperand("result", "out", FLAG_DTYPE, f"out_{mode}"),)
    operands = (AbiOperand("values", "payload", dtype, "items"), *vi, *pred, *succ, *outs)
    return CallPlan(
        op="discontinuity", family="neighbors", group=g, result=result, operands=operands,
        storage=StorageNeed(per="block"), temp_storage="temp_storage" if ts is not None else None,
        params=DiscontinuityParams(dtype=dtype, items=p.items, mode=mode, has_valid_items=has_vi,
                                   has_predecessor=has_pred, has_successor=has_succ, op=op),
        generate=_generate_discontinuity, callbacks=callbacks, check_launch=check_constant_valid_items,
        literal_valid_items=v.literal_int(args.valid_items),
    )


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

def _common_decls(dtype, ipt, cub_class):
    return [
        f"using T = {cxx_type(dtype)};",
        f"constexpr int IPT = {ipt};",
        "constexpr long long TILE = (long long)BLOCK_THREADS * IPT;",
        f"using Algo = cub::{cub_class}<T, BLOCK_X, BLOCK_Y, BLOCK_Z>;",
        "using TempStorage = typename Algo::TempStorage;",
    ]


# The functor CUB calls.  Sub narrows back to T: integer differences wrap like
# NumPy's.  A user callback is the forwarding function core/cpp.py declares under
# the callback's role; a predicate's int32 result is tested against 0.
_FUNCTOR = ("struct Op {{ __device__ __forceinline__ {rt} operator()(const T& a, const T& b) const "
            "{{ return {expr}; }} }};")
_OPS = {
    "-": ("T", "(T)(a - b)"),
    **{cmp: ("bool", f"a {cmp} b") for cmp in ("!=", "==", "<", "<=", ">", ">=")},
    ("callback", "difference_op"): ("T", "difference_op(a, b)"),
    ("callback", "flag_op"): ("bool", "flag_op(a, b) != 0"),
}


def _functor(op, role):
    rt, expr = _OPS[(op, role) if op == "callback" else op]
    return _FUNCTOR.format(rt=rt, expr=expr)


# valid_items is clamped in 64 bits before it narrows to CUB's int; a full tile
# takes the unguarded path.
_PARTIAL = ("if (valid_items >= TILE) {{ {full} }} "
            "else {{ const int vi = valid_items < 0 ? 0 : (int)valid_items; {partial} }}")


def _generate_difference(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: AdjacentDifferenceParams = plan.params
    dtype, ipt, direction, op = p.dtype, p.items, p.direction, p.op
    has_vi, has_nb = p.has_valid_items, p.has_neighbour
    decls = _common_decls(dtype, ipt, "BlockAdjacentDifference") + [_functor(op, "difference_op")]
    body = ["T (&in)[IPT] = *reinterpret_cast<T (*)[IPT]>(items);",
            "T (&res)[IPT] = *reinterpret_cast<T (*)[IPT]>(out);",
            "Algo algo(*static_cast<TempStorage*>(temp));"]
    nb = ", predecessor" if direction == "left" else ", successor"
    method = "SubtractLeft" if direction == "left" else "SubtractRight"
    full = f"algo.{method}(in, res, Op{{}}{nb if has_nb else ''});"
    if has_vi and plan.checked:
        body.append(check_range(plan, "valid_items", "valid_items", "0", "TILE"))
    if not has_vi:
        body.append(full)
    elif direction == "left":
        partial = f"algo.SubtractLeftPartialTile(in, res, Op{{}}, vi{nb if has_nb else ''});"
        body.append(_PARTIAL.format(full=full, partial=partial))
    else:
        # CUB has no SubtractRightPartialTile with a successor: the last valid item
        # takes it afterwards.
        partial = "algo.SubtractRightPartialTile(in, res, Op{}, vi);"
        if has_nb:
            partial += ("\n#pragma unroll\nfor (int i = 0; i < IPT; ++i) "
                        "if ((int)linear_tid * IPT + i == vi - 1) res[i] = Op{}(in[i], successor);\n")
        body.append(_PARTIAL.format(full=full, partial=partial))
    return CppProvider(headers=HEADERS[:1], decls="\n".join(decls), body="\n".join(body))


def _generate_discontinuity(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: DiscontinuityParams = plan.params
    dtype, ipt, mode, op = p.dtype, p.items, p.mode, p.op
    has_vi, has_pred, has_succ = p.has_valid_items, p.has_predecessor, p.has_successor
    decls = _common_decls(dtype, ipt, "BlockDiscontinuity") + [_functor(op, "flag_op")]
    body = ["T (&in)[IPT] = *reinterpret_cast<T (*)[IPT]>(items);",
            "Algo algo(*static_cast<TempStorage*>(temp));"]
    if has_vi and plan.checked:
        body.append(check_range(plan, "valid_items", "valid_items", "0", "TILE"))
    heads = mode in ("heads", "heads_and_tails")
    tails = mode in ("tails", "heads_and_tails")
    if heads:
        body.append("int (&heads)[IPT] = *reinterpret_cast<int (*)[IPT]>(out_heads);")
    if tails:
        body.append("int (&tails)[IPT] = *reinterpret_cast<int (*)[IPT]>(out_tails);")
    if mode == "heads":
        body.append(f"algo.FlagHeads(heads, in, Op{{}}{', predecessor' if has_pred else ''});")
    elif mode == "tails":
        body.append(f"algo.FlagTails(tails, in, Op{{}}{', successor' if has_succ else ''});")
    else:
        # CUB's overloads take the neighbour items between the flag arrays.
        h = "heads, predecessor" if has_pred else "heads"
        t = "tails, successor" if has_succ else "tails"
        body.append(f"algo.FlagHeadsAndTails({h}, {t}, in, Op{{}});")
    if has_vi:
        # CUB flags full tiles only: clear the flags past the valid items and make
        # the last valid item a tail (or compare it with the successor).
        last = "Op{}(in[i], successor) ? 1 : 0" if has_succ else "1"
        lines = ["if (valid_items < TILE) {",
                 "  const long long vi = valid_items < 0 ? 0 : valid_items;",
                 "  #pragma unroll",
                 "  for (int i = 0; i < IPT; ++i) {",
                 "    const long long p = (long long)linear_tid * IPT + i;"]
        if heads:
            lines.append("    if (p >= vi) heads[i] = 0;")
        if tails:
            lines.append(f"    if (p >= vi) tails[i] = 0; else if (p == vi - 1) tails[i] = {last};")
        lines += ["  }", "}"]
        body += lines
    return CppProvider(headers=HEADERS[1:], decls="\n".join(decls), body="\n".join(body))


SPECS = (
    OpSpec(name="adjacent_difference", family="neighbors", stub=adjacent_difference,
           plan=plan_adjacent_difference, explorer="adjacent_difference"),
    OpSpec(name="discontinuity", family="neighbors", stub=discontinuity, plan=plan_discontinuity,
           explorer="discontinuity"),
)
