"""TopK: the ``k`` smallest or largest keys of a block's tile (with their values).

Neither CCCL 2.8 nor 3.0 has a block-level top-k, so it is built from
``cub::BlockRadixSort``: slots past ``valid_items`` get a sentinel key that
orders after every key (the largest transformed key for the ``k`` smallest, the
smallest for the ``k`` largest), the tile is radix sorted (descending for the
largest), and the first ``k`` tile positions are the answer.  The sort is
stable, so a valid key equal to the sentinel still comes before every sentinel,
and ties at the ``k``-th key go to the earlier tile positions.

Cost: one block radix sort of the tile, whatever ``k``: ``ceil(key bits / 4)``
passes (8 for 32-bit keys), each a block-wide digit ranking (one block scan)
and a scatter of keys (and values) through shared memory; scratch is the radix
sort's (``block_threads * K`` keys or values, or the ranking counters, whichever
is larger).  A radix *select* could stop refining once the ``k``-th key's digits
are known and skip the scatters of the intermediate passes; it is future work.
"""

from __future__ import annotations

import numpy as np

from .._dtypes import cxx_type
from .._errors import InvalidArgumentValueError, MissingArgumentError
from .._kernel_api import kernel_function
from ..core import validate as v
from ._sorting import copy_in, copy_out, key_dtype, param_dict, value_dtype
from ._spec import (
    OMITTED,
    AbiOperand,
    CallPlan,
    CppProvider,
    LaunchFacts,
    OpSpec,
    PayloadResult,
    StorageNeed,
    TupleResult,
)

__all__ = ["topk_min_keys", "topk_max_keys", "topk_min_pairs", "topk_max_pairs", "SPECS"]

HEADERS = ("cub/block/block_radix_sort.cuh",)
_INT64 = np.dtype("int64")

_DOC_COMMON = """
    Parameters
    ----------
    block : coop.this_block()
        Any block shape; the tile is ``N = block_threads * K`` keys.
    keys : coop.ThreadData
        ``K`` keys per thread in the blocked layout (thread ``t`` holds tile
        positions ``t*K .. t*K + K-1``).  Any numeric dtype.  Not modified.
    k : int
        How many keys to select: compile-time (``0 <= k <= N``, checked) or a
        runtime value uniform across the block (values below 0 select nothing,
        values above ``N`` everything).
    valid_items : int, optional
        Only the first ``valid_items`` keys of the tile take part (a runtime
        value, uniform across the block, clamped to ``[0, N]``).
    temp_storage : coop.TempStorage, optional
"""


@kernel_function
def topk_min_keys(block, keys, /, *, k, valid_items=None, temp_storage=None):
    """The ``k`` smallest keys of the block's tile.

    Returns
    -------
    ThreadData of the keys' dtype and items per thread.  Tile positions
    ``0 .. min(k, valid_items) - 1`` of the result (blocked layout: slot ``i`` of
    thread ``t`` is position ``t*K + i``) hold the selected keys; later positions
    are unspecified.  The selection is a multiset: ties at the ``k``-th key are
    resolved in favour of earlier tile positions.  This implementation returns
    the selection sorted ascending, but callers should not rely on the order.
    Keys order as in :func:`radix_sort_keys` (-0.0 equals +0.0; NaNs by their
    bits).  Ends with ``__syncthreads()`` unless ``TempStorage(auto_sync=False)``.
    """


@kernel_function
def topk_max_keys(block, keys, /, *, k, valid_items=None, temp_storage=None):
    """The ``k`` largest keys of the block's tile.

    Returns
    -------
    As :func:`topk_min_keys`, for the largest keys (returned sorted descending
    by this implementation).
    """


@kernel_function
def topk_min_pairs(block, keys, values, /, *, k, valid_items=None, temp_storage=None):
    """The ``k`` smallest keys of the block's tile, each with its value.

    ``values``: one value per key (same items per thread, any numeric dtype).

    Returns
    -------
    (keys, values): two fresh payloads; positions ``0 .. min(k, valid_items) - 1``
    hold the selected pairs (a value always stays with its key), later
    positions are unspecified.  Ties at the ``k``-th key go to earlier tile
    positions.
    """


@kernel_function
def topk_max_pairs(block, keys, values, /, *, k, valid_items=None, temp_storage=None):
    """The ``k`` largest keys of the block's tile, each with its value.

    Returns
    -------
    As :func:`topk_min_pairs`, for the largest keys.
    """


for _stub in (topk_min_keys, topk_max_keys, topk_min_pairs, topk_max_pairs):
    _stub.__doc__ = _stub.__doc__.replace("\n\n    Returns", "\n" + _DOC_COMMON + "\n    Returns", 1)


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

def _check_launch(plan: CallPlan, launch: LaunchFacts) -> None:
    k = param_dict(plan)["k"]
    tile = launch.block_threads * param_dict(plan)["items"]
    if k is not None and k > tile:
        raise InvalidArgumentValueError(
            f"{plan.call}: k={k} is larger than the tile of {tile} keys ({launch.block_threads} threads x "
            f"{param_dict(plan)['items']} items); pass 0 <= k <= {tile}"
        )


def _plan(op, largest, block, keys, values, k, valid_items, temp_storage):
    call = f"coop.{op}()"
    g = v.require_group(call, block, kinds=("block",))
    kp, kdt = key_dtype(call, "keys", keys)
    vdt = None
    if values is not None:
        _vp, vdt = value_dtype(call, kp, values)
    if not v.is_given(k):
        raise MissingArgumentError(f"{call}: k= is required: how many keys to select (an int)")
    kk = v.optional_int_operand(call, "k", k)
    k_static = None
    if kk.is_literal:
        k_static = int(kk.literal)
        if k_static < 0:
            raise InvalidArgumentValueError(f"{call}: k={k_static} is negative; pass 0 <= k <= the tile size")
    vi = v.optional_int_operand(call, "valid_items", valid_items)
    ts = v.optional_temp_storage(call, temp_storage, g)
    operands = [AbiOperand("keys", "payload", kdt, "in_keys")]
    if vdt is not None:
        operands.append(AbiOperand("values", "payload", vdt, "in_values"))
    operands.append(AbiOperand("result" if vdt is None else "result.0", "out", kdt, "out_keys"))
    if vdt is not None:
        operands.append(AbiOperand("result.1", "out", vdt, "out_values"))
    if vi is not None:
        operands.append(AbiOperand("valid_items", "value", _INT64, "valid_items"))
    key_result = PayloadResult(kdt, kp.items)
    result = key_result if vdt is None else TupleResult((key_result, PayloadResult(vdt, kp.items)))
    # k does not enter the generated code: the sort orders the whole tile and the
    # first min(k, valid_items) positions are the answer for every k.
    params = (("op", op), ("largest", largest), ("keys", kdt.name),
              ("values", vdt.name if vdt is not None else None), ("items", kp.items), ("k", k_static),
              ("valid_items", vi is not None))
    return CallPlan(
        op=op, family="topk", group=g, result=result, operands=tuple(operands),
        storage=StorageNeed(per="block"), temp_storage="temp_storage" if ts is not None else None,
        params=params, generate=_generate, check_launch=_check_launch,
    )


def plan_topk_min_keys(block, keys, /, *, k=OMITTED, valid_items=OMITTED, temp_storage=OMITTED) -> CallPlan:
    return _plan("topk_min_keys", False, block, keys, None, k, valid_items, temp_storage)


def plan_topk_max_keys(block, keys, /, *, k=OMITTED, valid_items=OMITTED, temp_storage=OMITTED) -> CallPlan:
    return _plan("topk_max_keys", True, block, keys, None, k, valid_items, temp_storage)


def plan_topk_min_pairs(block, keys, values, /, *, k=OMITTED, valid_items=OMITTED,
                        temp_storage=OMITTED) -> CallPlan:
    return _plan("topk_min_pairs", False, block, keys, values, k, valid_items, temp_storage)


def plan_topk_max_pairs(block, keys, values, /, *, k=OMITTED, valid_items=OMITTED,
                        temp_storage=OMITTED) -> CallPlan:
    return _plan("topk_max_pairs", True, block, keys, values, k, valid_items, temp_storage)


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

def sentinel_bits(dtype: np.dtype, largest: bool) -> int:
    """Raw bits of the key that orders after every key (radix order; see module doc).

    Selecting the smallest keys needs the largest transformed key: the maximum of
    an integer type, or the positive NaN with every payload bit set; selecting
    the largest needs the smallest: 0, the minimum of a signed type, or the
    negative NaN with every payload bit set.
    """
    dt = np.dtype(dtype)
    bits = dt.itemsize * 8
    ones, sign = (1 << bits) - 1, 1 << (bits - 1)
    if dt.kind == "u":
        return 0 if largest else ones
    if dt.kind == "i":
        return sign if largest else ones ^ sign
    return ones if largest else ones ^ sign


def _generate(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p = param_dict(plan)
    kdt = np.dtype(p["keys"])
    pairs = p["values"] is not None
    ubits = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}[kdt.itemsize]
    decls = [
        f"using K = {cxx_type(kdt)};",
        f"using V = {cxx_type(np.dtype(p['values'])) if pairs else 'cub::NullType'};",
        f"constexpr int IPT = {p['items']};",
        "constexpr long long TILE = BLOCK_THREADS * IPT;",
        "using Sort = cub::BlockRadixSort<K, BLOCK_X, IPT, V, 4, true, cub::BLOCK_SCAN_WARP_SCANS, "
        "cudaSharedMemBankSizeFourByte, BLOCK_Y, BLOCK_Z>;",
        "using TempStorage = typename Sort::TempStorage;",
        f"constexpr {ubits} SENTINEL_BITS = {sentinel_bits(kdt, p['largest']):#x}ull;",
    ]
    vals = ", vals" if pairs else ""
    body = [copy_in("keys", "in_keys", "K")]
    if pairs:
        body.append(copy_in("vals", "in_values", "V"))
    if p["valid_items"]:
        body.append(
            "if (valid_items < TILE) {\n"
            "  const int vi = valid_items < 0 ? 0 : (int)valid_items;\n"
            f"  const {ubits} sentinel_bits = SENTINEL_BITS;\n"
            "  const K sentinel = reinterpret_cast<const K&>(sentinel_bits);\n"
            "  #pragma unroll\n"
            "  for (int i = 0; i < IPT; ++i) if ((int)linear_tid * IPT + i >= vi) keys[i] = sentinel;\n"
            "}"
        )
    method = "SortDescending" if p["largest"] else "Sort"
    body.append(f"Sort(*static_cast<TempStorage*>(temp)).{method}(keys{vals});")
    body.append(copy_out("out_keys", "keys"))
    if pairs:
        body.append(copy_out("out_values", "vals"))
    return CppProvider(headers=HEADERS, decls="\n".join(decls), body="\n".join(body))


SPECS = (
    OpSpec(name="topk_min_keys", family="topk", stub=topk_min_keys, plan=plan_topk_min_keys),
    OpSpec(name="topk_max_keys", family="topk", stub=topk_max_keys, plan=plan_topk_max_keys),
    OpSpec(name="topk_min_pairs", family="topk", stub=topk_min_pairs, plan=plan_topk_min_pairs),
    OpSpec(name="topk_max_pairs", family="topk", stub=topk_max_pairs, plan=plan_topk_max_pairs),
)
