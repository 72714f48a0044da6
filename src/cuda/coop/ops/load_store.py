"""Load and Store: move a tile between memory and per-thread payloads.

CUB: ``cub::BlockLoad`` / ``cub::BlockStore`` for blocks, ``cub::WarpLoad`` /
``cub::WarpStore`` for hardware and logical warps.

Layouts: ``striped`` gives thread ``t`` the items ``t + i*G``; every other
algorithm gives the *blocked* layout, thread ``t`` owning items ``t*K + i``
(``G`` threads in the group, ``K`` items per thread).  The transpose family
reads memory striped (coalesced) and rearranges through shared memory.
"""

from __future__ import annotations

import numpy as np

from ..core.records import record
from .._dtypes import cxx_type, dtype_fields
from .._errors import UnsupportedBlockShapeError
from .._kernel_api import kernel_function
from . import _validate as v
from ._launch_rules import check_constant_valid_items, check_whole_warps
from ..core.binding import CallArgs, plans
from ..core.cpp import check_range
from ..core.spec import (
    AbiOperand,
    AlgorithmSpec,
    CallPlan,
    CppProvider,
    LaunchFacts,
    OpSpec,
    PayloadArg,
    StorageNeed,
)

__all__ = ["load", "store", "LOAD_ALGORITHMS", "STORE_ALGORITHMS", "SPECS"]

_BLOCK = frozenset({"block"})
_WARP = frozenset({"warp"})


def _table(prefix: str, kind: str, names_storage: dict) -> dict:
    groups = _BLOCK if kind == "block" else _WARP
    table = {}
    for name, (uses_storage, warp_multiple) in names_storage.items():
        table[name] = AlgorithmSpec(
            name=name,
            cub=f"cub::{prefix}_{name.upper()}",
            groups=groups,
            uses_storage=uses_storage,
            needs_warp_multiple=warp_multiple,
            layout="striped" if name == "striped" else "blocked",
        )
    return table


_BLOCK_ALGOS = {
    "direct": (False, False),
    "striped": (False, False),
    "vectorize": (False, False),
    "transpose": (True, False),
    "warp_transpose": (True, True),
    "warp_transpose_timesliced": (True, True),
}
_WARP_ALGOS = {
    "direct": (False, False),
    "striped": (False, False),
    "vectorize": (False, False),
    "transpose": (True, False),
}

LOAD_ALGORITHMS = {
    "block": _table("BLOCK_LOAD", "block", _BLOCK_ALGOS),
    "warp": _table("WARP_LOAD", "warp", _WARP_ALGOS),
}
STORE_ALGORITHMS = {
    "block": _table("BLOCK_STORE", "block", _BLOCK_ALGOS),
    "warp": _table("WARP_STORE", "warp", _WARP_ALGOS),
}

HEADERS = (
    "cub/block/block_load.cuh",
    "cub/block/block_store.cuh",
    "cub/warp/warp_load.cuh",
    "cub/warp/warp_store.cuh",
)
_HEADERS = {
    ("load", "block"): ("cub/block/block_load.cuh",),
    ("load", "warp"): ("cub/warp/warp_load.cuh",),
    ("store", "block"): ("cub/block/block_store.cuh",),
    ("store", "warp"): ("cub/warp/warp_store.cuh",),
}


# --------------------------------------------------------------------------------------
# Public stubs (signature + documentation; the compiler replaces the calls)
# --------------------------------------------------------------------------------------

@kernel_function
def load(group, source, output, /, *, algorithm="direct", valid_items=None, oob_default=None,
         offset=None, temp_storage=None):
    """Load a tile of ``source`` into each thread's ``output`` payload.

    Parameters
    ----------
    group : coop.this_block() | coop.this_warp() | coop.this_warp().group_by(width)
        Who loads.  A block loads one tile of ``block_threads * K`` items; each
        (logical) warp loads its own tile of ``width * K`` items, warp ``w`` of the
        block starting at ``offset + w * width * K``.
    source : 1-D contiguous array
    output : coop.ThreadData
        ``K = output.items_per_thread`` slots per thread, written in place.  When
        the payload has no dtype it takes the source's.
    algorithm : str
        Block: ``"direct"``, ``"striped"``, ``"vectorize"``, ``"transpose"``,
        ``"warp_transpose"``, ``"warp_transpose_timesliced"`` (the last two need
        the block's thread count to be a multiple of 32).  Warp: ``"direct"``,
        ``"striped"``, ``"vectorize"``, ``"transpose"``.  ``"striped"`` yields
        the striped layout, all others the blocked layout.
    valid_items : int, optional
        Number of valid items in the group's tile (a runtime value, uniform
        across the group).  A value outside ``[0, tile size]`` stops the launch
        with a report (the run-time checks, on by default); with
        ``CUDA_COOP_CHECKED=0`` it is clamped to that range.  Slots past the
        valid items are left unchanged, or set to ``oob_default``.
    oob_default : scalar, optional
        Value for slots past ``valid_items``; requires ``valid_items``.  Of the
        payload's dtype, or a Python literal (``0.0``, ``-math.inf``), which is
        converted to it after a range check.
    offset : int, optional
        Element offset of the group's tile in ``source`` (default 0).
    temp_storage : coop.TempStorage, optional
        Scratch for the transpose algorithms of a block (warp groups own theirs).

    Returns
    -------
    coop.ThreadData
        ``output`` itself (not a copy), as in NVIDIA's cuda.coop, so the call can
        feed another: ``x = coop.load(block, src, items)`` then
        ``coop.store(block, dst, x)`` or ``coop.radix_sort_keys(block, x)``.
        Every thread's ``output`` holds its items after the call.  Transpose
    algorithms end with a barrier (``__syncthreads``/``__syncwarp``) when a later
    call may reuse the scratch (see :ref:`temp-storage`), unless an explicit
    ``TempStorage(auto_sync=False)`` is given.
    """


@kernel_function
def store(group, destination, value, /, *, algorithm="direct", valid_items=None, offset=None,
          temp_storage=None) -> None:
    """Store each thread's payload (or scalar) into a tile of ``destination``.

    Parameters
    ----------
    group : coop.this_block() | coop.this_warp() | coop.this_warp().group_by(width)
    destination : 1-D contiguous array
    value : coop.ThreadData or scalar
        A scalar stores one item per thread.  The payload is never modified.
    algorithm, offset, temp_storage
        As for :func:`load`; the algorithm must describe the payload's layout.
    valid_items : int, optional
        Only the first ``valid_items`` items of the tile are written; the rest of
        ``destination`` is untouched.

    Returns
    -------
    None.
    """


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

@record(kw_only=True)
class LoadStoreParams:
    """The identity of one generated load or store provider."""

    op: str  # "load" or "store"
    kind: str  # the group kind: "block" or "warp"
    width: int  # logical warp width (0 for a block)
    dtype: np.dtype  # item dtype
    items: int  # items per thread
    algorithm: str
    needs_warp_multiple: bool  # the algorithm needs whole warps (checked at launch)
    has_valid_items: bool
    has_oob_default: bool
    has_offset: bool
    value_passing: str = ""  # store only: "payload" or "value" (a scalar stored as one item)

    def __post_init__(self):
        dtype_fields(self, "dtype")


def _check_launch(plan: CallPlan, launch: LaunchFacts) -> None:
    p: LoadStoreParams = plan.params
    algo_name, needs_multiple = p.algorithm, p.needs_warp_multiple
    threads = launch.block_threads
    check_whole_warps(plan, launch)
    check_constant_valid_items(plan, launch)
    if needs_multiple and threads % 32:
        raise UnsupportedBlockShapeError(
            f"{plan.call}: algorithm={algo_name!r} needs the block's thread count to be a multiple "
            f"of 32, but the launch block {launch.block} has {threads} threads; use "
            "algorithm='transpose' or launch whole warps"
        )


def _controls(args: CallArgs, dtype):
    """valid_items, offset and (load only; a store reads it as OMITTED) oob_default."""
    call, valid_items, oob_default = args.call, args.valid_items, args.get("oob_default")
    vi = v.optional_int_operand(call, "valid_items", valid_items)
    off = v.optional_int_operand(call, "offset", args.offset)
    v.require_given_together(call, "valid_items", valid_items, "oob_default", oob_default)
    oob = v.optional_scalar_of_dtype(call, "oob_default", oob_default, dtype)
    operands = []
    if off is not None:
        operands.append(AbiOperand("offset", "value", np.dtype("int64"), "offset"))
    if vi is not None:
        operands.append(AbiOperand("valid_items", "value", np.dtype("int64"), "valid_items"))
    if oob is not None:
        operands.append(AbiOperand("oob_default", "value", dtype, "oob_default"))
    return vi is not None, oob is not None, off is not None, operands


@plans(load)
def plan_load(args: CallArgs) -> CallPlan:
    call = args.call
    g = v.require_group(call, args.group)
    algo = v.choose_algorithm(call, args.algorithm, g, LOAD_ALGORITHMS, "direct")
    src = v.require_array(call, "source", args.source, movement=True)
    out = v.require_payload(call, "output", args.output, movement=True)
    dtype = v.resolve_payload_dtype(call, "output", out, "source", src)
    has_vi, has_oob, has_off, controls = _controls(args, dtype)
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    operands = (
        AbiOperand("source", "array", dtype, "in_src"),
        AbiOperand("output", "payload", dtype, "items"),
        *controls,
    )
    return CallPlan(
        op="load", family="load_store", group=g, result=None, operands=operands,
        storage=_storage(g, algo), temp_storage="temp_storage" if ts is not None else None,
        params=LoadStoreParams(op="load", kind=g.kind, width=g.width, dtype=dtype, items=out.items,
                               algorithm=algo.name, needs_warp_multiple=algo.needs_warp_multiple,
                               has_valid_items=has_vi, has_oob_default=has_oob, has_offset=has_off),
        generate=_generate, check_launch=_check_launch,
        literal_valid_items=v.literal_int(args.valid_items),
    )


@plans(store)
def plan_store(args: CallArgs) -> CallPlan:
    call = args.call
    g = v.require_group(call, args.group)
    algo = v.choose_algorithm(call, args.algorithm, g, STORE_ALGORITHMS, "direct")
    dst = v.require_array(call, "destination", args.destination, written=True, movement=True)
    val = v.require_payload(call, "value", args.value, allow_scalar=True, movement=True)
    if isinstance(val, PayloadArg):
        dtype = v.resolve_payload_dtype(call, "value", val, "destination", dst)
        items, passing = val.items, "payload"
    else:
        dtype = dst.dtype
        v.optional_scalar_of_dtype(call, "value", val, dtype, target="destination")
        items, passing = 1, "value"
    has_vi, _, has_off, controls = _controls(args, dtype)
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    operands = (
        AbiOperand("destination", "array", dtype, "out_dst"),
        AbiOperand("value", passing, dtype, "items" if passing == "payload" else "scalar"),
        *controls,
    )
    return CallPlan(
        op="store", family="load_store", group=g, result=None, operands=operands,
        storage=_storage(g, algo), temp_storage="temp_storage" if ts is not None else None,
        params=LoadStoreParams(op="store", kind=g.kind, width=g.width, dtype=dtype, items=items,
                               algorithm=algo.name, needs_warp_multiple=algo.needs_warp_multiple,
                               has_valid_items=has_vi, has_oob_default=False, has_offset=has_off,
                               value_passing=passing),
        generate=_generate, check_launch=_check_launch,
        literal_valid_items=v.literal_int(args.valid_items),
    )


def _storage(group, algo: AlgorithmSpec):
    if not algo.uses_storage:
        return None
    if group.kind == "block":
        return StorageNeed(per="block")
    return StorageNeed(per="logical_warp", width=group.width)


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

def _generate(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: LoadStoreParams = plan.params
    op, kind, width, dtype, ipt, algo_name = p.op, p.kind, p.width, p.dtype, p.items, p.algorithm
    has_vi, has_oob, has_off = p.has_valid_items, p.has_oob_default, p.has_offset
    table = (LOAD_ALGORITHMS if op == "load" else STORE_ALGORITHMS)[kind]
    algo = table[algo_name]
    t = cxx_type(dtype)
    cls = {"load": {"block": "BlockLoad", "warp": "WarpLoad"},
           "store": {"block": "BlockStore", "warp": "WarpStore"}}[op][kind]
    if kind == "block":
        algo_type = f"cub::{cls}<T, BLOCK_X, IPT, {algo.cub}, BLOCK_Y, BLOCK_Z>"
        tile, origin = "BLOCK_THREADS * IPT", ""
    else:
        algo_type = f"cub::{cls}<T, IPT, {algo.cub}, {width}>"
        tile, origin = f"{width} * IPT", f" + (long long)(linear_tid / {width}) * ({width} * IPT)"
    decls = [f"using T = {t};", f"constexpr int IPT = {ipt};", f"using Algo = {algo_type};",
             f"constexpr long long TILE = {tile};"]
    if algo.uses_storage:
        decls.append("using TempStorage = typename Algo::TempStorage;")
        construct = "Algo algo(*static_cast<TempStorage*>(temp));"
    else:
        # Storage-free algorithms: a local TempStorage (an empty struct) avoids the
        # constructor that declares a private __shared__ instance.
        construct = "typename Algo::TempStorage unused_storage; Algo algo(unused_storage);"
    offset = ("offset" if has_off else "0LL") + origin
    body = [construct]
    if op == "load":
        body.append("T (&dst)[IPT] = *reinterpret_cast<T (*)[IPT]>(items);")
        body.append(f"const T* src = in_src + ({offset});")
        unguarded, guarded = "algo.Load(src, dst);", "algo.Load(src, dst, vi{});".format(
            ", oob_default" if has_oob else "")
    else:
        if p.value_passing == "value":
            body.append("T src[1] = {scalar};")
        elif algo.uses_storage:
            # Transpose stores rearrange the payload in place: work on a copy so the
            # caller's payload is never modified.
            body.append("T src[IPT];")
            body.append("#pragma unroll\nfor (int i = 0; i < IPT; ++i) src[i] = items[i];")
        else:
            body.append("T (&src)[IPT] = *reinterpret_cast<T (*)[IPT]>(items);")
        body.append(f"T* dst = out_dst + ({offset});")
        unguarded, guarded = "algo.Store(dst, src);", "algo.Store(dst, src, vi);"
    if algo_name == "vectorize":
        unguarded = _vectorized(op, kind, width)
    if has_vi:
        if plan.checked:
            body.append(check_range(plan, "valid_items", "valid_items", "0", "TILE"))
        if algo_name == "vectorize":
            # Only a full tile can take the vector accesses.
            body.append("if (valid_items >= TILE) { " + unguarded + " } else { "
                        "int vi = valid_items < 0 ? 0 : (int)valid_items; " + guarded + " }")
        else:
            # One guarded call, the count clamped to [0, TILE] in 64 bits before narrowing to
            # CUB's int: on a full tile its per-item predicates are all true, and no branch
            # between an unguarded and a guarded copy sits in front of the memory accesses
            # (a latency-bound loop, such as one block walking an array, pays for each one).
            body.append("const int vi = (unsigned long long)valid_items <= (unsigned long long)TILE ? "
                        "(int)valid_items : valid_items < 0 ? 0 : (int)TILE;")
            body.append(guarded)
    else:
        body.append(unguarded)
    return CppProvider(headers=_HEADERS[(op, kind)], decls="\n".join(decls), body="\n".join(body))


def _vectorized(op: str, kind: str, width: int) -> str:
    """Full-tile vectorized access with a run-time alignment check.

    CCCL 2.8's BlockLoad never takes its vectorizing overload (a non-deducible
    template parameter) and its vectorized store does not check alignment; CCCL
    3.x checks alignment on loads.  Calling CUB's vectorized thread functions
    behind one alignment test gives every toolkit the same, safe behaviour: vector
    accesses when the tile start is aligned for CUB's vector type, scalar ones
    otherwise.
    """
    rank = "linear_tid" if kind == "block" else f"(linear_tid % {width}u)"
    ptr = "src" if op == "load" else "dst"
    fast = (f"cub::LoadDirectBlockedVectorized({rank}, const_cast<T*>(src), dst);" if op == "load"
            else f"cub::StoreDirectBlockedVectorized({rank}, dst, src);")
    slow = (f"cub::LoadDirectBlocked({rank}, src, dst);" if op == "load"
            else f"cub::StoreDirectBlocked({rank}, dst, src);")
    return (
        "using Word = typename cub::UnitWord<T>::DeviceWord; "
        "constexpr int WORDS = int(sizeof(T) * IPT / sizeof(Word)); "
        "constexpr int VS = WORDS % 4 == 0 ? 4 : (WORDS % 2 == 0 ? 2 : 1); "
        "using Vec = typename cub::CubVector<Word, VS>::Type; "
        f"if (reinterpret_cast<unsigned long long>({ptr}) % alignof(Vec) == 0) {{ {fast} }} "
        f"else {{ {slow} }}"
    )


SPECS = (
    OpSpec(name="load", family="load_store", stub=load, plan=plan_load, payload_dtype_from=("output", "source"),
           result_alias="output"),
    OpSpec(name="store", family="load_store", stub=store, plan=plan_store, payload_dtype_from=("value", "destination"),
           writes="destination"),
)
