"""Shuffle: move values between the threads of a block.

CUB: ``cub::BlockShuffle``.

Two shapes of data:

- a ThreadData tile in the blocked layout (thread ``t`` holds positions
  ``t*K .. t*K+K-1``), shifted along the flattened tile: ``mode="up"`` gives
  position ``p`` the item of ``p - distance``, ``mode="down"`` the item of
  ``p + distance``;
- one scalar per thread: ``mode="offset"`` gives thread ``t`` the value of
  thread ``t + distance``, ``mode="rotate"`` that of ``(t + distance) mod
  block_threads``.

A slot whose source falls outside the tile (or a thread outside the block)
keeps its own input value, so every result is defined for every distance.
"""

from __future__ import annotations

import numpy as np

from ..core.records import record
from .._dtypes import cxx_type, dtype_fields
from .._errors import InvalidArgumentTypeError
from .._kernel_api import kernel_function
from . import _validate as v
from ..core.binding import CallArgs, plans
from ..core.cpp import check_range
from ..core.spec import (
    AbiOperand,
    CallPlan,
    CppProvider,
    LaunchFacts,
    OpSpec,
    PayloadArg,
    PayloadResult,
    ScalarResult,
    StorageNeed,
    describe,
)

__all__ = ["shuffle", "TILE_MODES", "SCALAR_MODES", "SPECS"]

TILE_MODES = ("up", "down")
SCALAR_MODES = ("offset", "rotate")

HEADERS = ("cub/block/block_shuffle.cuh",)


# --------------------------------------------------------------------------------------
# Public stub
# --------------------------------------------------------------------------------------

@kernel_function
def shuffle(block, value, /, *, mode="down", distance=1, temp_storage=None):
    """Shift a block's blocked tile, or exchange one scalar per thread.

    Parameters
    ----------
    block : coop.this_block()
    value : coop.ThreadData or scalar
        ``mode="up"``/``"down"``: a ThreadData of ``K`` items per thread in the
        blocked layout (the tile has ``block_threads * K`` positions).
        ``mode="offset"``/``"rotate"``: one scalar per thread.  Not modified.
    mode : str
        Default ``"down"`` (as in NVIDIA's cuda.coop), which needs a ThreadData
        ``value``; a scalar needs ``"offset"`` or ``"rotate"`` written out.
        ``"up"``: position ``p`` receives the item at ``p - distance``.
        ``"down"``: position ``p`` receives the item at ``p + distance``.
        ``"offset"``: thread ``t`` receives the value of thread ``t + distance``.
        ``"rotate"``: thread ``t`` receives the value of thread
        ``(t + distance) mod block_threads``.
    distance : int
        Default 1.  Literal or run time, any integer (up to 64 bits, signed); it
        may differ between threads.  A negative distance shifts the other way.
        ``"up"``/``"down"``/``"offset"``: a slot whose source lies outside the
        tile (or the block) keeps its own input value, whatever the distance.
        ``"rotate"``: taken modulo the block's thread count.
    temp_storage : coop.TempStorage, optional

    Returns
    -------
    coop.ThreadData (``"up"``/``"down"``) or a scalar (``"offset"``/``"rotate"``)
        Fresh, of ``value``'s dtype, defined in every thread.  The call ends with
        ``__syncthreads()`` unless an explicit ``TempStorage(auto_sync=False)`` is
        given.  ``"up"``/``"down"`` with the literal distance 1 use CUB's
        ``BlockShuffle::Up``/``Down`` (scratch: one item per thread); any other
        distance stages the whole tile in shared memory.
    """


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

@record(kw_only=True)
class ShuffleParams:
    """The identity of one generated shuffle provider."""

    dtype: np.dtype  # item dtype
    items: int  # items per thread (1 for a scalar)
    mode: str  # "up", "down" (tile modes), "offset", "rotate" (scalar modes)
    has_distance: bool  # distance= given (a runtime operand unless folded below)
    unit_distance: bool  # distance is 1 (omitted or a literal 1): CUB's Up/Down apply directly
    literal_distance: int | None  # the distance when known at compile time, else None

    def __post_init__(self):
        dtype_fields(self, "dtype")


@plans(shuffle)
def plan_shuffle(args: CallArgs) -> CallPlan:
    call = args.call
    g = v.require_group(call, args.block, kinds=("block",))
    m = v.choose(call, "mode", args.mode, TILE_MODES + SCALAR_MODES, default="down")
    d = v.optional_int_operand(call, "distance", args.distance)
    if d is not None and d.is_literal and int(d.literal) == 1:
        # distance=1 written out is the stub's default: plan it as omitted, so the two
        # spellings share one provider (the runtime operand would be unused anyway).
        d = None
    unit = d is None or (d.is_literal and int(d.literal) == 1)
    # A distance known at compile time (omitted = 1) is folded into the C++.
    literal = 1 if d is None else (int(d.literal) if d.is_literal else None)
    val = v.require_payload(call, "value", args.value, allow_scalar=True, movement=True)
    if m in TILE_MODES:
        if not isinstance(val, PayloadArg):
            raise InvalidArgumentTypeError(
                f"{call}: mode={m!r}{'' if v.is_given(args.mode) else ' (the default)'} shifts a "
                f"coop.ThreadData tile, but value={describe(val)} is a "
                "scalar; for one value per thread use mode='offset' (mode='up' is offset -distance)"
            )
        dtype = v.require_known_dtype(call, "value", val)
        result, items, passing = PayloadResult(dtype, val.items), val.items, "payload"
    else:
        if isinstance(val, PayloadArg):
            raise InvalidArgumentTypeError(
                f"{call}: mode={m!r} moves one scalar per thread, but value is a "
                f"{describe(val)}; for a tile use mode='up' or 'down', or pass one item (value[i])"
            )
        dtype = val.dtype
        result, items, passing = ScalarResult(dtype), 1, "value"
    operands = [AbiOperand("value", passing, dtype, "items" if passing == "payload" else "scalar")]
    if d is not None:
        operands.append(AbiOperand("distance", "value", np.dtype("int64"), "distance"))
    operands.append(AbiOperand("result", "out", dtype, "out"))
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    return CallPlan(
        op="shuffle", family="shuffle", group=g, result=result, operands=tuple(operands),
        storage=StorageNeed(per="block"), temp_storage="temp_storage" if ts is not None else None,
        params=ShuffleParams(dtype=dtype, items=items, mode=m, has_distance=d is not None,
                             unit_distance=unit, literal_distance=literal),
        generate=_generate,
    )


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

# Every 64-bit distance is clamped to [-TILE, TILE] before any arithmetic, so no
# distance can overflow or wrap a source position back into the tile.
_TILE_SHIFT = """\
T* buff = static_cast<TempStorage*>(temp)->buff;
#pragma unroll
for (int i = 0; i < IPT; ++i) buff[slot((int)linear_tid * IPT + i)] = in[i];
__syncthreads();
long long shift = DISTANCE;
shift = shift < -TILE ? -TILE : (shift > TILE ? TILE : shift);
shift = SIGN shift;
#pragma unroll
for (int i = 0; i < IPT; ++i) {
  const long long src = (long long)linear_tid * IPT + i + shift;
  res[i] = (src >= 0 && src < TILE) ? buff[slot((int)src)] : in[i];
}"""


def _generate(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: ShuffleParams = plan.params
    dtype, ipt, mode, has_distance = p.dtype, p.items, p.mode, p.has_distance
    unit, literal = p.unit_distance, p.literal_distance
    distance = "distance" if has_distance else "1LL"
    threads = launch.block[0] * launch.block[1] * launch.block[2]
    decls = [f"using T = {cxx_type(dtype)};", f"constexpr int IPT = {ipt};",
             "using Shuffle = cub::BlockShuffle<T, BLOCK_X, BLOCK_Y, BLOCK_Z>;"]
    body = []
    if mode in SCALAR_MODES:
        decls.append("using TempStorage = typename Shuffle::TempStorage;")
        body.append("T r = scalar;")
        if mode == "offset" and literal is not None:
            # CUB reads thread linear_tid + d only when that thread exists, in int
            # arithmetic: a literal inside (-block, block) cannot overflow it.
            dd = literal if -threads < literal < threads else threads
            body.append(f"Shuffle(*static_cast<TempStorage*>(temp)).Offset(scalar, r, {dd});")
        elif mode == "offset":
            if plan.checked:  # NVIDIA's rule: a run-time offset must fit CUB's int
                body.append(check_range(plan, "distance", distance, "-2147483647LL - 1", "2147483647LL"))
            # A run-time distance outside the block becomes BLOCK_THREADS (no read)
            # before narrowing to int.
            body.append(f"const long long d = {distance};")
            body.append("const int dd = (d >= -(long long)linear_tid && d < (long long)BLOCK_THREADS - "
                        "(long long)linear_tid) ? (int)d : BLOCK_THREADS;")
            body.append("Shuffle(*static_cast<TempStorage*>(temp)).Offset(scalar, r, dd);")
        elif literal is not None:
            body.append(f"Shuffle(*static_cast<TempStorage*>(temp)).Rotate(scalar, r, {literal % threads}u);")
        else:
            if plan.checked:  # NVIDIA's rule for a run-time rotation: 0 < distance < block threads
                body.append(check_range(plan, "distance", distance, "1", "BLOCK_THREADS - 1"))
            # CUB's Rotate subtracts BLOCK_THREADS once; reduce the distance fully first.
            body.append(f"long long d = ({distance}) % BLOCK_THREADS;")
            body.append("if (d < 0) d += BLOCK_THREADS;")
            body.append("Shuffle(*static_cast<TempStorage*>(temp)).Rotate(scalar, r, (unsigned)d);")
        body.append("out[0] = r;")
        return CppProvider(headers=HEADERS, decls="\n".join(decls), body="\n".join(body))
    body += ["T (&in)[IPT] = *reinterpret_cast<T (*)[IPT]>(items);",
             "T (&res)[IPT] = *reinterpret_cast<T (*)[IPT]>(out);"]
    if unit:
        # CUB leaves the slot without a source unwritten; it keeps its input value.
        decls.append("using TempStorage = typename Shuffle::TempStorage;")
        body.append("#pragma unroll\nfor (int i = 0; i < IPT; ++i) res[i] = in[i];")
        body.append(f"Shuffle(*static_cast<TempStorage*>(temp)).{'Up' if mode == 'up' else 'Down'}(in, res);")
    else:
        decls += [
            "constexpr long long TILE = (long long)BLOCK_THREADS * IPT;",
            # BlockExchange's padding rule: one spare item per 32 for power-of-two IPT > 4.
            "constexpr bool PAD = IPT > 4 && (IPT & (IPT - 1)) == 0;",
            "__device__ __forceinline__ int slot(int i) { return PAD ? i + (i >> 5) : i; }",
            "struct alignas(16) TempStorage { T buff[TILE + (PAD ? (TILE >> 5) : 0)]; };",
        ]
        if plan.checked and literal is None:  # a run-time distance, where the unchecked shift clamps
            body.append(check_range(plan, "distance", distance, "-TILE", "TILE"))
        body.append(_TILE_SHIFT.replace("SIGN", "-" if mode == "up" else "+").replace("DISTANCE", distance))
    return CppProvider(headers=HEADERS, decls="\n".join(decls), body="\n".join(body))


SPECS = (OpSpec(name="shuffle", family="shuffle", stub=shuffle, plan=plan_shuffle),)
