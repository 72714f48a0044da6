"""Exchange: rearrange a tile between per-thread layouts.

CUB: ``cub::BlockExchange`` for blocks, ``cub::WarpExchange`` for hardware and
logical warps.

A group of ``G`` threads with ``K`` items each holds a tile of ``G*K`` items.
Layouts say which tile position slot ``i`` of thread ``t`` holds:

- *blocked*: ``t*K + i`` (what scans, sorts and neighbour ops expect),
- *striped*: ``t + i*G`` (coalesced memory access),
- *warp-striped* (blocks only): warp ``w`` owns the ``32*K`` positions from
  ``w*32*K``; lane ``l`` holds ``w*32*K + i*32 + l``,
- *ranked* (scatter modes): slot ``(t, i)`` goes to position ``ranks[t][i]``.

Every mode returns a fresh payload and leaves its inputs unchanged.
"""

from __future__ import annotations

import numpy as np

from ..core.records import record
from .._dtypes import cxx_type, dtype_fields
from .._errors import MissingArgumentError, UnsupportedAlgorithmForGroupError, UnsupportedBlockShapeError
from .._kernel_api import kernel_function
from . import _validate as v
from ._launch_rules import check_whole_warps
from ..core.binding import CallArgs, plans
from ..core.spec import (
    AbiOperand,
    CallPlan,
    CppProvider,
    LaunchFacts,
    OpSpec,
    PayloadResult,
    StorageNeed,
)

__all__ = ["exchange", "ExchangeMode", "MODES", "SPECS"]

_BLOCK = frozenset({"block"})
_ANY = frozenset({"block", "warp"})


@record
class ExchangeMode:
    """One ``mode=`` of :func:`exchange`: its CUB member, groups, layouts and operands."""

    name: str
    method: str  # the cub::BlockExchange / cub::WarpExchange member
    groups: frozenset
    source: str  # layout of the input: "blocked", "striped", "warp_striped" or "ranked"
    target: str  # layout of the result
    ranks: bool = False  # needs ranks=
    flags: bool = False  # needs valid_flags=
    time_slicing: bool = True  # accepts warp_time_slicing=True
    needs_warp_multiple: bool = False  # the block's thread count must be a multiple of 32


MODES = {m.name: m for m in (
    ExchangeMode("striped_to_blocked", "StripedToBlocked", _ANY, "striped", "blocked"),
    ExchangeMode("blocked_to_striped", "BlockedToStriped", _ANY, "blocked", "striped"),
    ExchangeMode("warp_striped_to_blocked", "WarpStripedToBlocked", _BLOCK, "warp_striped", "blocked",
                 needs_warp_multiple=True),
    ExchangeMode("blocked_to_warp_striped", "BlockedToWarpStriped", _BLOCK, "blocked", "warp_striped",
                 needs_warp_multiple=True),
    ExchangeMode("scatter_to_blocked", "ScatterToBlocked", _BLOCK, "ranked", "blocked", ranks=True),
    ExchangeMode("scatter_to_striped", "ScatterToStriped", _BLOCK, "ranked", "striped", ranks=True),
    # CUB's guarded/flagged scatters index the whole tile, which a time-sliced
    # BlockExchange (one warp's worth of storage) does not have.
    ExchangeMode("scatter_to_striped_guarded", "ScatterToStripedGuarded", _BLOCK, "ranked", "striped",
                 ranks=True, time_slicing=False),
    ExchangeMode("scatter_to_striped_flagged", "ScatterToStripedFlagged", _BLOCK, "ranked", "striped",
                 ranks=True, flags=True, time_slicing=False),
)}

HEADERS = (
    "cub/block/block_exchange.cuh",
    "cub/warp/warp_exchange.cuh",
)
_HEADERS = {"block": ("cub/block/block_exchange.cuh",), "warp": ("cub/warp/warp_exchange.cuh",)}


# --------------------------------------------------------------------------------------
# Public stub
# --------------------------------------------------------------------------------------

@kernel_function
def exchange(group, value, /, *, mode="striped_to_blocked", ranks=None, valid_flags=None, warp_time_slicing=False,
             temp_storage=None):
    """Rearrange the group's tile from one per-thread layout to another.

    Parameters
    ----------
    group : coop.this_block() | coop.this_warp() | coop.this_warp().group_by(width)
        Who exchanges.  Each (logical) warp exchanges its own tile of
        ``width * K`` items.
    value : coop.ThreadData
        ``K`` items per thread in the mode's source layout.  Not modified.
    mode : str
        Default ``"striped_to_blocked"`` (for every group, as in NVIDIA's cuda.coop).
        Every group: ``"striped_to_blocked"``, ``"blocked_to_striped"``.
        Blocks only: ``"warp_striped_to_blocked"``, ``"blocked_to_warp_striped"``
        (the block's thread count must be a multiple of 32), and the scatter modes
        ``"scatter_to_blocked"``, ``"scatter_to_striped"``,
        ``"scatter_to_striped_guarded"``, ``"scatter_to_striped_flagged"``.
    ranks : coop.ThreadData of integers, scatter modes only
        Tile position (``0 <= rank < block_threads * K``) of each item, same
        ``items_per_thread`` as ``value``.  An item whose rank is outside the tile
        is dropped (never written anywhere), for every scatter mode; the guarded
        mode is named after CUB's, which drops negative ranks.  Tile positions that
        no item reaches, or that several items reach, hold unspecified values.
    valid_flags : coop.ThreadData of integers, ``"scatter_to_striped_flagged"`` only
        Items whose flag is 0 are dropped.
    warp_time_slicing : bool
        Blocks only, compile-time.  Use one warp's worth of scratch and exchange
        one warp at a time (less shared memory, more barriers).  Not with the
        guarded or flagged scatters.
    temp_storage : coop.TempStorage, optional
        Scratch for a block exchange (warp groups own theirs).

    Returns
    -------
    coop.ThreadData
        A fresh payload of ``K`` items of ``value``'s dtype in the mode's target
        layout, held by every thread of the group.  The call ends with a barrier
        (``__syncthreads`` for a block, ``__syncwarp`` for a warp) when a later call
        may reuse the scratch (see :ref:`temp-storage`), unless an
        explicit ``TempStorage(auto_sync=False)`` is given, after which the
        scratch may be reused at once.
    """


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

def _choose_mode(call, mode_arg, group) -> ExchangeMode:
    name = v.choose(call, "mode", mode_arg, tuple(MODES), default="striped_to_blocked")
    mode = MODES[name]
    if group.kind not in mode.groups:
        allowed = " or ".join(repr(m.name) for m in MODES.values() if group.kind in m.groups)
        raise UnsupportedAlgorithmForGroupError(
            f"{call}: mode={name!r} is a block mode and group={group.label} is a warp group; warp "
            f"groups exchange with mode={allowed}, or pass coop.this_block()"
        )
    return mode


def _integer_companion(call, m, label, arg, items, used, operands, *, c_name, purpose, needs, unused):
    """``ranks=``/``valid_flags=``: a ThreadData of integers, required by the modes that
    use it (appended to ``operands``) and rejected by the others.  Returns its dtype."""
    if not used:
        v.forbid(call, label, arg, unused)
        return None
    if not v.is_given(arg):
        raise MissingArgumentError(f"{call}: mode={m.name!r} needs {label}=; pass {needs}")
    payload = v.require_integer_payload(call, label, arg, purpose=purpose)
    v.require_same_items(call, label, payload, "value", items)
    operands.append(AbiOperand(label, "payload", payload.dtype, c_name))
    return payload.dtype


@record(kw_only=True)
class ExchangeParams:
    """The identity of one generated exchange provider."""

    kind: str  # the group kind: "block" or "warp"
    width: int  # logical warp width (0 for a block)
    dtype: np.dtype  # item dtype
    items: int  # items per thread
    mode: str  # a key of MODES
    warp_time_slicing: bool
    rank_dtype: np.dtype | None  # dtype of ranks=, None when the mode takes none
    flag_dtype: np.dtype | None  # dtype of valid_flags=, None when the mode takes none

    def __post_init__(self):
        dtype_fields(self, "dtype", "rank_dtype", "flag_dtype")


@plans(exchange)
def plan_exchange(args: CallArgs) -> CallPlan:
    call = args.call
    g = v.require_group(call, args.group)
    items = v.require_payload(call, "value", args.value, movement=True)
    dtype = v.require_known_dtype(call, "value", items)
    m = _choose_mode(call, args.mode, g)
    sliced = v.require_literal_bool(call, "warp_time_slicing", args.warp_time_slicing, False)
    if sliced and g.kind != "block":
        raise UnsupportedAlgorithmForGroupError(
            f"{call}: warp_time_slicing=True applies to block exchanges, not to group={g.label}; "
            "remove it (a warp exchange already uses one warp's worth of scratch)"
        )
    if sliced and not m.time_slicing:
        v.forbid(call, "warp_time_slicing", args.warp_time_slicing,
                 f"cannot be combined with mode={m.name!r} (CUB's guarded and flagged scatters "
                 "need the whole tile in scratch); use mode='scatter_to_striped' or drop "
                 "warp_time_slicing")
    operands = [AbiOperand("value", "payload", dtype, "items")]
    rank_dtype = _integer_companion(
        call, m, "ranks", args.ranks, items, m.ranks, operands, c_name="ranks", purpose=" (tile positions)",
        needs="a coop.ThreadData of integers with the tile position of each item (same items_per_thread "
              "as value)",
        unused=f"is only used by the scatter modes, not by mode={m.name!r}; remove it or choose a "
               "'scatter_to_*' mode")
    flag_dtype = _integer_companion(
        call, m, "valid_flags", args.valid_flags, items, m.flags, operands, c_name="flags",
        purpose=" (0 drops the item)",
        needs="a coop.ThreadData of integers (0 drops the item) with the same items_per_thread as value",
        unused="is only used by mode='scatter_to_striped_flagged'; remove it or choose that mode")
    operands.append(AbiOperand("result", "out", dtype, "out"))
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    storage = StorageNeed(per="block") if g.kind == "block" else StorageNeed(per="logical_warp", width=g.width)
    return CallPlan(
        op="exchange", family="exchange", group=g, result=PayloadResult(dtype, items.items),
        operands=tuple(operands), storage=storage,
        temp_storage="temp_storage" if ts is not None else None,
        params=ExchangeParams(kind=g.kind, width=g.width, dtype=dtype, items=items.items, mode=m.name,
                              warp_time_slicing=sliced,
                              rank_dtype=rank_dtype,
                              flag_dtype=flag_dtype),
        generate=_generate, check_launch=_check_launch,
    )


def _check_launch(plan: CallPlan, launch: LaunchFacts) -> None:
    mode = MODES[plan.params.mode]
    threads = launch.block_threads
    check_whole_warps(plan, launch)
    if mode.needs_warp_multiple and threads % 32:
        raise UnsupportedBlockShapeError(
            f"{plan.call}: mode={mode.name!r} arranges items per warp and needs the block's thread "
            f"count to be a multiple of 32, but the launch block {launch.block} has {threads} "
            "threads; launch whole warps or use mode='striped_to_blocked'/'blocked_to_striped'"
        )


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

# An item is kept when its rank is a tile position.  Comparing in 64 bits before
# narrowing to CUB's int keeps large int64/uint64 ranks from wrapping into the
# tile: a signed rank is sign-extended, so negative ranks become huge unsigned.
_RANK_CHECK = """\
int rk[IPT];
bool keep[IPT];
#pragma unroll
for (int i = 0; i < IPT; ++i) {
  keep[i] = (unsigned long long)(long long)ranks[i] < (unsigned long long)TILE;
  rk[i] = keep[i] ? (int)ranks[i] : -1;
}"""

# CUB has no guarded ScatterToBlocked; this is BlockExchange's untimesliced
# scatter (with its bank-conflict padding rule) plus the rank check.
_OWN_SCATTER_DECLS = """\
constexpr bool PAD = IPT > 4 && (IPT & (IPT - 1)) == 0;
__device__ __forceinline__ int slot(int i) { return PAD ? i + (i >> 5) : i; }
struct alignas(16) TempStorage { T buff[TILE + (PAD ? (TILE >> 5) : 0)]; };"""

_OWN_SCATTER_BODY = """\
T* buff = static_cast<TempStorage*>(temp)->buff;
#pragma unroll
for (int i = 0; i < IPT; ++i) { if (keep[i]) buff[slot(rk[i])] = in[i]; }
__syncthreads();
#pragma unroll
for (int i = 0; i < IPT; ++i) res[i] = buff[slot((int)linear_tid * IPT + i)];"""


def _generate(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: ExchangeParams = plan.params
    kind, width, dtype, ipt, mode_name, sliced = p.kind, p.width, p.dtype, p.items, p.mode, p.warp_time_slicing
    m = MODES[mode_name]
    decls = [f"using T = {cxx_type(dtype)};", f"constexpr int IPT = {ipt};"]
    body = ["const T (&in)[IPT] = *reinterpret_cast<const T (*)[IPT]>(items);",
            "T (&res)[IPT] = *reinterpret_cast<T (*)[IPT]>(out);"]
    if kind == "warp":
        decls += [f"using Exchange = cub::WarpExchange<T, IPT, {width}>;",
                  "using TempStorage = typename Exchange::TempStorage;"]
        body.append(f"Exchange(*static_cast<TempStorage*>(temp)).{m.method}(in, res);")
        return CppProvider(headers=_HEADERS["warp"], decls="\n".join(decls), body="\n".join(body))
    decls += [
        "using Exchange = cub::BlockExchange<T, BLOCK_X, IPT, "
        f"{'true' if sliced else 'false'}, BLOCK_Y, BLOCK_Z>;",
        "constexpr int TILE = BLOCK_THREADS * IPT;",
    ]
    exchange = "Exchange(*static_cast<TempStorage*>(temp))"
    if not m.ranks:
        decls.append("using TempStorage = typename Exchange::TempStorage;")
        body.append(f"{exchange}.{m.method}(in, res);")
    elif m.name == "scatter_to_blocked" and not sliced:
        decls.append(_OWN_SCATTER_DECLS)
        body += [_RANK_CHECK, _OWN_SCATTER_BODY]
    else:
        decls.append("using TempStorage = typename Exchange::TempStorage;")
        body.append(_RANK_CHECK)
        if m.flags:
            body.append("#pragma unroll\nfor (int i = 0; i < IPT; ++i) keep[i] = keep[i] && flags[i] != 0;")
        if sliced:
            # Time-sliced scatters place only ranks inside each slice, so the -1 of
            # a dropped item is never written.
            body.append(f"{exchange}.{m.method}(in, res, rk);")
        else:
            body.append(f"{exchange}.ScatterToStripedFlagged(in, res, rk, keep);")
    return CppProvider(headers=_HEADERS["block"], decls="\n".join(decls), body="\n".join(body))


SPECS = (OpSpec(name="exchange", family="exchange", stub=exchange, plan=plan_exchange),)
