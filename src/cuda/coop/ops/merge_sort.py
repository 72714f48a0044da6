"""Merge sort: sort a tile of keys (and values) held in the blocked layout.

CUB: ``cub::BlockMergeSort`` for blocks (a power-of-two thread count) and
``cub::WarpMergeSort`` for hardware and logical warps; each (logical) warp sorts
its own tile.  Every thread first sorts its own items, then runs are merged
pairwise through shared memory (merge path), so a tile of ``G`` threads takes
``log2(G)`` merge rounds.  Both classes only ever take an item from the second
run when it orders strictly before the first run's, so the sort is stable; we
call ``StableSort``, which CUB documents as stable.

Partial tiles: CUB sorts the first ``valid_items`` keys and expects the padding
``oob_default`` to order after every valid key.  We compute that padding
ourselves (each thread's largest valid key, which needs no user sentinel and
works with any ordering), and use ``oob_default`` only to fill the slots past
``valid_items`` of the result.
"""

from __future__ import annotations

import numpy as np

from ..core.records import record
from .._dtypes import cxx_type, dtype_fields
from .._errors import UnsupportedBlockShapeError
from .._kernel_api import kernel_function
from . import _validate as v
from ._sorting import (
    copy_in, copy_out, key_dtype, key_value_operands, ordering_functor, result_like, value_dtype,
)
from ._launch_rules import check_constant_valid_items, check_whole_warps
from ..core.binding import CallArgs, plans
from ..core.cpp import check_range
from ..core.spec import (
    AbiOperand,
    CallPlan,
    Callback,
    CppProvider,
    DeviceFunctionArg,
    LaunchFacts,
    OpSpec,
    StorageNeed,
    TupleResult,
)

__all__ = ["merge_sort_keys", "merge_sort_pairs", "SPECS"]

_INT32 = np.dtype("int32")
# compare_op spellings: a strict "less than" (the default) or "greater than".
COMPARE_OPS = {"<": "less", "less": "less", "lt": "less", ">": "greater", "greater": "greater", "gt": "greater"}

HEADERS = (
    "cub/block/block_merge_sort.cuh",
    "cub/warp/warp_merge_sort.cuh",
)
_HEADER = {"block": ("cub/block/block_merge_sort.cuh",), "warp": ("cub/warp/warp_merge_sort.cuh",)}


# --------------------------------------------------------------------------------------
# Public stubs
# --------------------------------------------------------------------------------------

@kernel_function
def merge_sort_keys(group, keys, /, *, descending=False, valid_items=None, oob_default=None,
                    compare_op=None, temp_storage=None):
    """Sort the group's tile of keys; return the sorted keys as a fresh payload.

    Parameters
    ----------
    group : coop.this_block() | coop.this_warp() | coop.this_warp().group_by(width)
        A block sorts one tile of ``block_threads * K`` keys (its thread count
        must be a power of two).  Each (logical) warp sorts its own tile of
        ``width * K`` keys, independently of the other warps.
    keys : coop.ThreadData
        ``K`` keys per thread in the blocked layout: thread ``t`` of the group
        holds tile positions ``t*K .. t*K + K-1``.  Not modified.  Any numeric
        dtype.
    descending : bool, compile-time
        Largest key first.  Default ascending.
    valid_items : int, optional
        Only the first ``valid_items`` keys of the tile are sorted (a runtime
        value, uniform across the group).  A value outside ``[0, tile size]``
        stops the launch with a report (the run-time checks, on by default);
        with ``CUDA_COOP_CHECKED=0`` it is clamped to that range.  No sentinel
        is needed.
    oob_default : scalar, optional
        Requires ``valid_items``.  Result slots past ``valid_items`` are set to
        it; without it they are unspecified.
    compare_op : device function or comparison, optional
        A ``@cuda.jit(device=True)`` function ``compare_op(a, b) -> bool`` that
        is a strict weak ordering: True when ``a`` sorts before ``b``.  Also
        ``"<"``/``"less"``/``operator.lt``/``np.less`` (the default order) and
        ``">"``/``"greater"``/``operator.gt``/``np.greater`` (its reverse).
        ``descending=True`` reverses the given order.
    temp_storage : coop.TempStorage, optional
        Scratch for a block sort (warps own theirs).

    Returns
    -------
    ThreadData with the same dtype and items per thread: tile position ``t*K+i``
    of the sorted tile is slot ``i`` of thread ``t`` (blocked layout).

    Order: integers by value; floats by value with every NaN after the numbers
    (before them when descending) and -0.0 equal to +0.0.  The sort is stable:
    equal keys keep their tile order.  The call ends with a barrier
    (``__syncthreads``/``__syncwarp``) after its last use of the scratch when a
    later call may reuse it (see :ref:`temp-storage`), unless an
    explicit ``TempStorage(auto_sync=False)`` is given; then synchronize before
    reusing that storage.
    """


@kernel_function
def merge_sort_pairs(group, keys, values, /, *, descending=False, valid_items=None, oob_default=None,
                     compare_op=None, temp_storage=None):
    """Sort the group's tile of keys and move each value with its key.

    Parameters
    ----------
    group, keys, descending, valid_items, oob_default, compare_op, temp_storage
        As for :func:`merge_sort_keys`.
    values : coop.ThreadData
        One value per key (same items per thread, any numeric dtype).  Not
        modified.

    Returns
    -------
    (keys, values): two fresh payloads in the blocked layout.  Stable: values
    of equal keys keep their tile order.  Values past ``valid_items`` are
    unspecified.
    """


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

def _check_launch(plan: CallPlan, launch: LaunchFacts) -> None:
    threads = launch.block_threads
    if plan.group.kind == "block":
        if threads & (threads - 1):
            lower = 1 << (threads.bit_length() - 1)
            raise UnsupportedBlockShapeError(
                f"{plan.call}: group=coop.this_block() needs a power-of-two thread count (CUB's block "
                f"merge sort merges runs pairwise), but the launch block {launch.block} has {threads} "
                f"threads; launch {lower} or {lower * 2} threads, or sort per warp with "
                "coop.this_warp()"
            )
    else:
        check_whole_warps(plan, launch)
    check_constant_valid_items(plan, launch)


@record(kw_only=True)
class MergeSortParams:
    """The identity of one generated merge sort provider."""

    op: str  # "merge_sort_keys" or "merge_sort_pairs"
    kind: str  # the group kind: "block" or "warp"
    width: int  # logical warp width (0 for a block)
    keys: np.dtype  # key dtype
    values: np.dtype | None  # value dtype; None for a keys-only sort
    items: int  # items per thread
    descending: bool  # after folding compare_op="greater" into a descending "less"
    has_valid_items: bool
    has_oob_default: bool
    order: str  # "less" or "callback" (a user compare_op)

    def __post_init__(self):
        dtype_fields(self, "keys", "values")


def _plan(args: CallArgs) -> CallPlan:
    """coop.merge_sort_keys() and coop.merge_sort_pairs() (which has the values operand)."""
    call, op = args.call, args.op
    valid_items, oob_default = args.valid_items, args.oob_default
    values = args.get("values", None)  # merge_sort_keys has no values operand
    g = v.require_group(call, args.group)
    kp, kdt = key_dtype(call, "keys", args.keys)
    vp = vdt = None
    if values is not None:
        vp, vdt = value_dtype(call, kp, values)
    desc = v.require_literal_bool(call, "descending", args.descending, False)
    vi = v.optional_int_operand(call, "valid_items", valid_items)
    v.require_given_together(call, "valid_items", valid_items, "oob_default", oob_default)
    oob = v.optional_scalar_of_dtype(call, "oob_default", oob_default, kdt)
    order = v.choose_operator(call, "compare_op", args.compare_op, COMPARE_OPS, default="less",
                              what="comparison")
    callbacks = ()
    if isinstance(order, DeviceFunctionArg):
        v.require_no_half_callback(call, "compare_op", kdt)
        # The user's function returns a bool, which the C ABI passes as int32.
        callbacks = (Callback(role="compare_op", function=order, restype=_INT32, argtypes=(kdt, kdt),
                              predicate=True),)
        order = "callback"
    elif order == "greater":
        order, desc = "less", not desc
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    operands = key_value_operands(kdt, vdt, kp, vp)
    if vi is not None:
        operands.append(AbiOperand("valid_items", "value", np.dtype("int64"), "valid_items"))
    if oob is not None:
        operands.append(AbiOperand("oob_default", "value", kdt, "oob_default"))
    key_result = result_like(kdt, kp)
    result = key_result if vdt is None else TupleResult((key_result, result_like(vdt, vp)))
    storage = StorageNeed(per="block") if g.kind == "block" else StorageNeed(per="logical_warp", width=g.width)
    params = MergeSortParams(op=op, kind=g.kind, width=g.width, keys=kdt,
                             values=vdt, items=kp.items,
                             descending=desc, has_valid_items=vi is not None,
                             has_oob_default=oob is not None, order=order)
    return CallPlan(
        op=op, family="merge_sort", group=g, result=result, operands=tuple(operands), storage=storage,
        temp_storage="temp_storage" if ts is not None else None, params=params,
        generate=_generate, check_launch=_check_launch, callbacks=callbacks,
        literal_valid_items=v.literal_int(valid_items),
    )


plan_merge_sort_keys = plans(merge_sort_keys)(_plan)
plan_merge_sort_pairs = plans(merge_sort_pairs)(_plan)


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

def _generate(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: MergeSortParams = plan.params
    kdt = p.keys
    pairs = p.values is not None
    value_t = cxx_type(p.values) if pairs else "cub::NullType"
    if p.kind == "block":
        sort_t = "cub::BlockMergeSort<K, BLOCK_X, IPT, V, BLOCK_Y, BLOCK_Z>"
        tile, rank = "BLOCK_THREADS * IPT", "(int)linear_tid"
    else:
        w = p.width
        sort_t = f"cub::WarpMergeSort<K, IPT, {w}, V>"
        tile, rank = f"{w} * IPT", f"(int)(linear_tid % {w}u)"
    decls = [
        f"using K = {cxx_type(kdt)};",
        f"using V = {value_t};",
        f"constexpr int IPT = {p.items};",
        f"constexpr long long TILE = {tile};",
        _order(kdt, p.descending, p.order),
        f"using Sort = {sort_t};",
        "using TempStorage = typename Sort::TempStorage;",
    ]
    vals = ", vals" if pairs else ""
    body = [copy_in("keys", "in_keys", "K")]
    if pairs:
        body.append(copy_in("vals", "in_values", "V"))
    body.append("Sort sorter(*static_cast<TempStorage*>(temp));")
    body.append("const Order order{};")
    full = f"sorter.StableSort(keys{vals}, order);"
    if p.has_valid_items and plan.checked:
        body.append(check_range(plan, "valid_items", "valid_items", "0", "TILE"))
    if p.has_valid_items:
        # CUB pads each thread's invalid slots with the larger of oob_default and
        # the thread's valid keys seen so far, but not its first key; passing the
        # thread's largest valid key makes the padding order after every valid key
        # of the thread, so no sentinel is needed and any ordering works.
        partial = [
            "const int vi = valid_items < 0 ? 0 : (int)valid_items;",
            f"const int first = {rank} * IPT;",
            "K pad = keys[0];",
            "#pragma unroll\nfor (int i = 1; i < IPT; ++i) if (first + i < vi && order(pad, keys[i])) pad = keys[i];",
            f"sorter.StableSort(keys{vals}, order, vi, pad);",
        ]
        if p.has_oob_default:
            partial.append("#pragma unroll\nfor (int i = 0; i < IPT; ++i) if (first + i >= vi) keys[i] = oob_default;")
        body.append("if (valid_items >= TILE) {\n" + full + "\n} else {\n" + "\n".join(partial) + "\n}")
    else:
        body.append(full)
    body.append(copy_out("out_keys", "keys"))
    if pairs:
        body.append(copy_out("out_values", "vals"))
    return CppProvider(headers=_HEADER[p.kind], decls="\n".join(decls), body="\n".join(body))


def _order(kdt, descending: bool, order: str) -> str:
    if order != "callback":
        return ordering_functor("Order", kdt, descending)
    a, b = ("b", "a") if descending else ("a", "b")
    t = cxx_type(kdt)
    return (f"struct Order {{\n  __device__ __forceinline__ bool operator()(const {t}& a, const {t}& b) const "
            f"{{ return compare_op({a}, {b}) != 0; }}\n}};")


SPECS = (
    OpSpec(name="merge_sort_keys", family="merge_sort", stub=merge_sort_keys, plan=plan_merge_sort_keys),
    OpSpec(name="merge_sort_pairs", family="merge_sort", stub=merge_sort_pairs, plan=plan_merge_sort_pairs),
)
