"""Radix sort and radix rank of a block's tile of keys.

CUB: ``cub::BlockRadixSort`` and ``cub::BlockRadixRank`` (blocks of any shape).
A sort runs ``ceil((end_bit - begin_bit) / radix_bits)`` passes; each pass ranks
the keys by one digit (a block-wide scan of per-digit counters) and scatters
them through shared memory.  The ranking is stable, so the sort is stable, in
both directions.

Keys are compared through an order-preserving bit transformation (CUB's): the
sign bit of signed integers is flipped, positive floats get their sign bit
flipped and negative floats all their bits; -0.0 and +0.0 are equal and NaNs
order by their bits (positive NaNs after +inf, negative NaNs before -inf).
``begin_bit``/``end_bit`` select bits of the transformed key.
"""

from __future__ import annotations

import numpy as np

from ..core.records import record
from .._dtypes import cxx_type, dtype_fields
from .._errors import (
    ConflictingArgumentsError,
    DtypeMismatchError,
    ExtentMismatchError,
    InvalidArgumentValueError,
    NonConstantArgumentError,
)
from .._kernel_api import kernel_function
from . import _validate as v
from ._launch_rules import check_constant_valid_items
from ._sorting import (
    bit_ordering, copy_in, copy_out, key_dtype, key_value_operands, result_like, sentinel_decl,
    value_dtype,
)
from ..core.binding import CallArgs, plans
from ..core.cpp import check_range
from ..core.spec import (
    OMITTED,
    AbiOperand,
    CallPlan,
    CppProvider,
    LaunchFacts,
    OpSpec,
    ScalarArg,
    StorageNeed,
    TupleResult,
)

__all__ = ["radix_rank_keys", "radix_sort_keys", "radix_sort_pairs", "radix_rank", "SPECS"]

HEADERS = (
    "cub/block/block_radix_sort.cuh",
    "cub/block/block_radix_rank.cuh",
    "cub/block/block_exchange.cuh",
)
# Link kernels that call this family with 32-bit shared-memory addresses, as nvcc compiles
# (core/shared_addresses.py): its CUB block radix sort took 12-20 registers fewer on sm_90
# and ran 2-3 % faster on an H100 (docs/performance.rst).
SHARED_ADDRESS_BITS = 32
_INT64 = np.dtype("int64")
_INT32 = np.dtype("int32")


# --------------------------------------------------------------------------------------
# Public stubs
# --------------------------------------------------------------------------------------

@kernel_function
def radix_sort_keys(block, keys, /, *, begin_bit=0, end_bit=None, descending=False, blocked_to_striped=False,
                    valid_items=None, oob_default=None, radix_bits=4, temp_storage=None):
    """Sort the block's tile of keys by radix; return the sorted keys as a fresh payload.

    Parameters
    ----------
    block : coop.this_block()
        Any block shape; the tile is ``block_threads * K`` keys.
    keys : coop.ThreadData
        ``K`` keys per thread in the blocked layout (thread ``t`` holds tile
        positions ``t*K .. t*K + K-1``).  Any numeric dtype.  Not modified.
    begin_bit, end_bit : int, optional
        Sort by bits ``[begin_bit, end_bit)`` of the order-preserving key
        transformation (default: all bits).  Compile-time values must satisfy
        ``0 <= begin_bit < end_bit <= key bits``.  Runtime values (uniform
        across the block) must satisfy it too, or the launch stops with a report
        (the run-time checks, on by default); with ``CUDA_COOP_CHECKED=0`` they
        are clamped to ``[0, key bits]`` instead, and an empty range
        (``end_bit <= begin_bit`` after clamping) sorts by no bits and keeps the
        tile order.
    descending : bool, compile-time
        Largest key first; still stable.
    blocked_to_striped : bool, compile-time
        Return the sorted tile in the striped layout (thread ``t`` slot ``i`` is
        sorted position ``t + i * block_threads``), which stores coalesced with
        ``coop.store(..., algorithm="striped")``; saves the last scatter's
        blocked rearrangement.
    valid_items : int, optional
        Only the first ``valid_items`` keys of the tile are sorted (a runtime
        value, uniform across the block; outside ``[0, N]`` the launch stops with
        a report, or with ``CUDA_COOP_CHECKED=0`` it is clamped); the sorted keys
        take sorted positions ``0 .. valid_items - 1``.  No sentinel is needed
        (cuda-coop pads with a key that sorts last, and the sort is stable).
    oob_default : scalar, optional
        Requires ``valid_items``: the keys at sorted positions past
        ``valid_items`` are set to it; without it they are unspecified, as are
        values there.
    radix_bits : int, compile-time
        Bits per pass, 1..8 (default 4, CUB's default).
    temp_storage : coop.TempStorage, optional

    Returns
    -------
    ThreadData of the keys' dtype and items per thread.  Stable: equal keys keep
    their tile order.  The call ends with ``__syncthreads()`` when a later call may
    reuse the scratch (see :ref:`temp-storage`), unless an explicit
    ``TempStorage(auto_sync=False)`` is given.
    """


@kernel_function
def radix_sort_pairs(block, keys, values, /, *, begin_bit=0, end_bit=None, descending=False,
                     blocked_to_striped=False, valid_items=None, oob_default=None, radix_bits=4,
                     temp_storage=None):
    """Sort the block's tile of keys by radix, moving each value with its key.

    Parameters
    ----------
    block, keys, begin_bit, end_bit, descending, blocked_to_striped, valid_items, oob_default
    radix_bits, temp_storage
        As for :func:`radix_sort_keys`.
    values : coop.ThreadData
        One value per key (same items per thread, any numeric dtype).  Not modified.

    Returns
    -------
    (keys, values): two fresh payloads, in the blocked layout (or striped with
    ``blocked_to_striped=True``).  Stable: values of equal keys keep their tile
    order.
    """


@kernel_function
def radix_rank(block, keys, /, *, begin_bit=0, end_bit=None, radix_bits=None, descending=False,
               exclusive_digit_prefix=None, temp_storage=None):
    """Rank each key of the block's tile by one digit; return the ranks (int32).

    The digit of a key is bits ``[begin_bit, begin_bit + radix_bits)`` of its
    order-preserving transformation (as in :func:`radix_sort_keys`); bits past
    the key's width read as 0.  The rank of a key is its position in the tile
    stably sorted by digit, so the ranks of a tile are a permutation of
    ``0 .. block_threads*K - 1`` (what one radix sort pass scatters by).

    Parameters
    ----------
    block : coop.this_block()
    keys : coop.ThreadData
        ``K`` keys per thread, blocked layout; any numeric dtype.  Not modified.
    begin_bit : int
        First bit of the digit: compile-time, or a runtime value (uniform across
        the block).  A runtime value that puts the digit outside the key
        (``begin_bit < 0`` or ``begin_bit + radix bits > key bits``) stops the
        launch with a report (the run-time checks, on by default); with
        ``CUDA_COOP_CHECKED=0`` it is clamped to ``[0, key bits]``.
    end_bit, radix_bits : int, compile-time
        The digit's width is ``radix_bits``, or ``end_bit - begin_bit`` (then
        ``begin_bit`` must be compile-time); 1..8 bits, default 4.
    descending : bool, compile-time
        Rank larger digits first.
    exclusive_digit_prefix : coop.ThreadData of int32, optional
        Filled with the first rank of each digit: thread ``t`` slot ``j`` gets
        digit ``d = t*B + j`` (``B`` = its items per thread, which must be
        ``max(1, ceil(2**radix_bits / block_threads))``); digits past the last
        get the tile size.
    temp_storage : coop.TempStorage, optional

    Returns
    -------
    ThreadData(K, int32) in the blocked layout: slot ``i`` of thread ``t`` is the
    rank of key ``t*K + i``.  Ends with ``__syncthreads()`` when a later call may reuse
    the scratch (see :ref:`temp-storage`).
    """


@kernel_function
def radix_rank_keys(block, keys, /, *, begin_bit=0, end_bit=None, radix_bits=None, descending=False,
                    exclusive_digit_prefix=None, temp_storage=None):
    """The same operation as :func:`radix_rank` (the name NVIDIA's API reference lists).

    Returns
    -------
    coop.ThreadData of int32 ranks, as :func:`radix_rank`.
    """


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

@record(kw_only=True)
class RadixSortParams:
    """The identity of one generated radix sort provider."""

    op: str  # "radix_sort_keys" or "radix_sort_pairs"
    keys: np.dtype  # key dtype
    values: np.dtype | None  # value dtype; None for a keys-only sort
    items: int  # items per thread
    begin: int | None  # begin_bit when known at compile time; None: a runtime operand
    end: int | None  # end_bit when known at compile time; None: a runtime operand
    descending: bool
    striped: bool  # blocked_to_striped
    radix_bits: int
    has_valid_items: bool
    has_oob_default: bool

    def __post_init__(self):
        dtype_fields(self, "keys", "values")


@record(kw_only=True)
class RadixRankParams:
    """The identity of one generated radix_rank provider."""

    op: str  # "radix_rank"
    keys: np.dtype  # key dtype
    items: int  # items per thread
    begin: int | None  # begin_bit when known at compile time; None: a runtime operand
    radix_bits: int  # the digit width
    descending: bool
    prefix_items: int | None  # items per thread of exclusive_digit_prefix; None when not given

    def __post_init__(self):
        dtype_fields(self, "keys")


def _bit_operand(call, label, arg, key_bits, operands):
    """A bit index: its literal value (checked), or None after adding a runtime operand."""
    if not v.is_given(arg):
        return OMITTED
    scalar = v.optional_int_operand(call, label, arg, hint=f" bit index in [0, {key_bits}]")
    if scalar.is_literal:
        value = int(scalar.literal)
        if not 0 <= value <= key_bits:
            raise InvalidArgumentValueError(
                f"{call}: {label}={value} is outside [0, {key_bits}], the bits of the key; pass a bit "
                f"index between 0 and {key_bits}"
            )
        return value
    operands.append(AbiOperand(label, "value", _INT64, label))
    return None


def _radix_bits(call, label, arg, default):
    if not v.is_given(arg):
        return default
    return v.require_literal_int(call, label, arg, minimum=1, maximum=8)


def _plan_sort(args: CallArgs) -> CallPlan:
    """coop.radix_sort_keys() and coop.radix_sort_pairs() (which has the values operand)."""
    call, op = args.call, args.op
    valid_items, oob_default = args.valid_items, args.oob_default
    values = args.get("values", None)  # radix_sort_keys has no values operand
    g = v.require_group(call, args.block, kinds=("block",))
    kp, kdt = key_dtype(call, "keys", args.keys)
    vp = vdt = None
    if values is not None:
        vp, vdt = value_dtype(call, kp, values)
    key_bits = kdt.itemsize * 8
    desc = v.require_literal_bool(call, "descending", args.descending, False)
    striped = v.require_literal_bool(call, "blocked_to_striped", args.blocked_to_striped, False)
    rbits = _radix_bits(call, "radix_bits", args.radix_bits, 4)
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    operands = key_value_operands(kdt, vdt, kp, vp)
    begin = _bit_operand(call, "begin_bit", args.begin_bit, key_bits, operands)
    end = _bit_operand(call, "end_bit", args.end_bit, key_bits, operands)
    begin = 0 if begin is OMITTED else begin
    end = key_bits if end is OMITTED else end
    vi = v.optional_int_operand(call, "valid_items", valid_items)
    v.require_given_together(call, "valid_items", valid_items, "oob_default", oob_default)
    oob = v.optional_scalar_of_dtype(call, "oob_default", oob_default, kdt)
    if vi is not None:
        operands.append(AbiOperand("valid_items", "value", _INT64, "valid_items"))
    if oob is not None:
        operands.append(AbiOperand("oob_default", "value", kdt, "oob_default"))
    if begin is not None and end is not None and begin >= end:
        raise InvalidArgumentValueError(
            f"{call}: begin_bit={begin} and end_bit={end} select no bits; pass begin_bit < end_bit "
            f"(the key has {key_bits} bits)"
        )
    key_result = result_like(kdt, kp)
    result = key_result if vdt is None else TupleResult((key_result, result_like(vdt, vp)))
    params = RadixSortParams(op=op, keys=kdt, values=vdt,
                             items=kp.items, begin=begin, end=end, descending=desc, striped=striped,
                             radix_bits=rbits, has_valid_items=vi is not None,
                             has_oob_default=oob is not None)
    return CallPlan(
        op=op, family="radix", group=g, result=result, operands=tuple(operands),
        storage=StorageNeed(per="block"), temp_storage="temp_storage" if ts is not None else None,
        params=params, generate=_generate_sort, check_launch=check_constant_valid_items,
        literal_valid_items=v.literal_int(valid_items),
    )


plan_radix_sort_keys = plans(radix_sort_keys)(_plan_sort)
plan_radix_sort_pairs = plans(radix_sort_pairs)(_plan_sort)


# Also the plan of coop.radix_rank_keys() (the same operation, whose stub has the same
# signature): its calls plan, and word their errors, as coop.radix_rank().
@plans(radix_rank)
def plan_radix_rank(args: CallArgs) -> CallPlan:
    call, end_bit, exclusive_digit_prefix = args.call, args.end_bit, args.exclusive_digit_prefix
    g = v.require_group(call, args.block, kinds=("block",))
    kp, kdt = key_dtype(call, "keys", args.keys)
    key_bits = kdt.itemsize * 8
    desc = v.require_literal_bool(call, "descending", args.descending, False)
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    operands = [AbiOperand("keys", "scalar_in" if kp.scalar else "payload", kdt, "in_keys"),
                AbiOperand("result", "out", _INT32, "out_ranks")]
    prefix_items = None
    if v.is_given(exclusive_digit_prefix):
        prefix = v.require_payload(call, "exclusive_digit_prefix", exclusive_digit_prefix)
        if prefix.dtype != _INT32:
            raise DtypeMismatchError(
                f"{call}: exclusive_digit_prefix has dtype "
                f"{prefix.dtype.name if prefix.dtype is not None else 'unknown'} but digit prefixes are "
                "int32; create it with coop.ThreadData(n, dtype=np.int32)"
            )
        prefix_items = prefix.items
        operands.append(AbiOperand("exclusive_digit_prefix", "payload", _INT32, "out_prefix"))
    if v.is_given(end_bit) and not (isinstance(end_bit, ScalarArg) and end_bit.is_literal):
        v.require_literal_int(call, "end_bit", end_bit)  # raises: the digit width must be static
    begin = _bit_operand(call, "begin_bit", args.begin_bit, key_bits, operands)
    begin = 0 if begin is OMITTED else begin
    rbits = _radix_bits(call, "radix_bits", args.radix_bits, None)
    if v.is_given(end_bit):
        end = v.require_literal_int(call, "end_bit", end_bit)
        if begin is None:
            raise NonConstantArgumentError(
                f"{call}: end_bit={end} with a runtime begin_bit leaves the digit width unknown at "
                "compile time; pass radix_bits= (the width) instead of end_bit="
            )
        width = end - begin
        if rbits is not None and rbits != width:
            raise ConflictingArgumentsError(
                f"{call}: radix_bits={rbits} disagrees with end_bit - begin_bit = {end} - {begin} = "
                f"{width}; pass one of them"
            )
        if not 1 <= width <= 8:
            raise InvalidArgumentValueError(
                f"{call}: end_bit - begin_bit = {end} - {begin} = {width} bits, but a digit has 1..8 bits; "
                "rank wider keys in several passes"
            )
        rbits = width
    rbits = 4 if rbits is None else rbits
    if begin is not None and begin + rbits > key_bits:
        raise InvalidArgumentValueError(
            f"{call}: bits [{begin}, {begin + rbits}) reach past the {key_bits} bits of {kdt.name} keys; "
            f"use begin_bit <= {key_bits - rbits}"
        )
    params = RadixRankParams(op="radix_rank", keys=kdt, items=kp.items, begin=begin, radix_bits=rbits,
                             descending=desc, prefix_items=prefix_items)
    return CallPlan(
        op="radix_rank", family="radix", group=g, result=result_like(_INT32, kp),
        operands=tuple(operands), storage=StorageNeed(per="block"),
        temp_storage="temp_storage" if ts is not None else None, params=params,
        generate=_generate_rank, check_launch=_check_rank_launch,
    )


def _bins_tracked(radix_bits: int, threads: int) -> int:
    return max(1, -(-(1 << radix_bits) // threads))


def _check_rank_launch(plan: CallPlan, launch: LaunchFacts) -> None:
    p: RadixRankParams = plan.params
    if p.prefix_items is None:
        return
    need = _bins_tracked(p.radix_bits, launch.block_threads)
    if p.prefix_items != need:
        raise ExtentMismatchError(
            f"{plan.call}: exclusive_digit_prefix has {p.prefix_items} items per thread, but "
            f"{1 << p.radix_bits} digits over {launch.block_threads} threads need {need}; create it "
            f"with coop.ThreadData({need}, dtype=np.int32)"
        )


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

def _bit_expr(name: str, value) -> str:
    if value is not None:
        return str(value)
    # Clamp in 64 bits before narrowing to CUB's int.
    return f"(int)({name} < 0 ? 0LL : ({name} > KEY_BITS ? (long long)KEY_BITS : {name}))"


def _sort_checks(plan: CallPlan) -> list:
    """Checked mode: NVIDIA's rules for run-time controls, where the unchecked sort clamps."""
    p: RadixSortParams = plan.params
    checks = []
    if p.has_valid_items:
        checks.append(check_range(plan, "valid_items", "valid_items", "0", "TILE"))
    # A non-empty bit range inside the key: 0 <= begin_bit < end_bit <= KEY_BITS.
    if p.begin is None:
        checks.append(check_range(plan, "begin_bit", "begin_bit", "0",
                                  "KEY_BITS - 1" if p.end is None else f"{p.end} - 1"))
    if p.end is None:
        checks.append(check_range(plan, "end_bit", "end_bit", "begin_bit + 1" if p.begin is None else p.begin + 1,
                                  "KEY_BITS"))
    return checks


def _sort_type(value_t: str, radix_bits: int) -> str:
    return (f"cub::BlockRadixSort<K, BLOCK_X, IPT, {value_t}, {radix_bits}, true, cub::BLOCK_SCAN_WARP_SCANS, "
            "cudaSharedMemBankSizeFourByte, BLOCK_Y, BLOCK_Z>")


def _generate_sort(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: RadixSortParams = plan.params
    kdt = p.keys
    pairs = p.values is not None
    striped = p.striped
    runtime_bits = p.begin is None or p.end is None
    decls = [
        f"using K = {cxx_type(kdt)};",
        f"using V = {cxx_type(p.values) if pairs else 'cub::NullType'};",
        f"constexpr int IPT = {p.items};",
        f"constexpr int KEY_BITS = {kdt.itemsize * 8};",
        "constexpr long long TILE = BLOCK_THREADS * IPT;",
        f"using Sort = {_sort_type('V', p.radix_bits)};",
    ]
    if runtime_bits and striped:
        # An empty runtime bit range keeps the tile order, which the striped
        # output still has to deliver: a blocked-to-striped exchange, with its
        # own storage in the union.
        decls += [
            "using ExchangeK = cub::BlockExchange<K, BLOCK_X, IPT, false, BLOCK_Y, BLOCK_Z>;",
            "using ExchangeV = cub::BlockExchange<" + ("V" if pairs else "K")
            + ", BLOCK_X, IPT, false, BLOCK_Y, BLOCK_Z>;",
            "union TempStorage { typename Sort::TempStorage sort; typename ExchangeK::TempStorage keys; "
            "typename ExchangeV::TempStorage values; };",
        ]
        storage = "static_cast<TempStorage*>(temp)->sort"
    else:
        decls.append("using TempStorage = typename Sort::TempStorage;")
        storage = "*static_cast<TempStorage*>(temp)"
    method = "Sort" + ("Descending" if p.descending else "") + ("BlockedToStriped" if striped else "")
    vals = ", vals" if pairs else ""
    body = [copy_in("keys", "in_keys", "K")]
    if pairs:
        body.append(copy_in("vals", "in_values", "V"))
    if plan.checked:
        body += _sort_checks(plan)
    if p.has_valid_items:
        # Keys past valid_items get a key that sorts last in every bit range (all
        # ones, or all zeros when descending, after CUB's bit transformation); the
        # stable sort keeps every valid key before them, even an equal one.
        body.append("const int vi = valid_items < 0 ? 0 : (valid_items > TILE ? (int)TILE : (int)valid_items);")
        body.append("if (vi < TILE) {\n" + sentinel_decl("sentinel", kdt, p.descending) + "\n"
                    "#pragma unroll\nfor (int i = 0; i < IPT; ++i) if ((int)linear_tid * IPT + i >= vi) "
                    "keys[i] = sentinel;\n}")
    body.append(f"const int begin = {_bit_expr('begin_bit', p.begin)};")
    body.append(f"const int end = {_bit_expr('end_bit', p.end)};")
    sort = f"Sort({storage}).{method}(keys{vals}, begin, end);"
    if runtime_bits:
        if striped:
            empty = "ExchangeK(static_cast<TempStorage*>(temp)->keys).BlockedToStriped(keys, keys);"
            if pairs:
                empty += ("\n__syncthreads();\n"
                          "ExchangeV(static_cast<TempStorage*>(temp)->values).BlockedToStriped(vals, vals);")
        else:
            empty = "// No key bits: every key is equal, and a stable sort keeps the tile order."
        body.append(f"if (begin < end) {{\n{sort}\n}} else {{\n{empty}\n}}")
    else:
        body.append(sort)
    if p.has_oob_default:
        position = "(int)linear_tid + i * BLOCK_THREADS" if striped else "(int)linear_tid * IPT + i"
        body.append(f"#pragma unroll\nfor (int i = 0; i < IPT; ++i) if ({position} >= vi) keys[i] = oob_default;")
    body.append(copy_out("out_keys", "keys"))
    if pairs:
        body.append(copy_out("out_values", "vals"))
    return CppProvider(headers=HEADERS, decls="\n".join(decls), body="\n".join(body))


def _generate_rank(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: RadixRankParams = plan.params
    kdt = p.keys
    rbits = p.radix_bits
    decls = [
        f"using K = {cxx_type(kdt)};",
        f"constexpr int IPT = {p.items};",
        bit_ordering("Ordered", kdt),
        "constexpr int KEY_BITS = Ordered::BITS;",
        f"constexpr int RADIX_BITS = {rbits};",
        f"using Rank = cub::BlockRadixRank<BLOCK_X, RADIX_BITS, {'true' if p.descending else 'false'}, true, "
        "cub::BLOCK_SCAN_WARP_SCANS, cudaSharedMemBankSizeFourByte, BLOCK_Y, BLOCK_Z>;",
        "using TempStorage = typename Rank::TempStorage;",
        # CUB calls Digit() on each key; any type with that member works.
        "struct Digits {\n"
        "  int begin;\n"
        "  __device__ __forceinline__ unsigned int Digit(Ordered::Bits key) const {\n"
        "    return begin >= KEY_BITS ? 0u : (unsigned int)((key >> begin) & ((1u << RADIX_BITS) - 1u));\n"
        "  }\n};",
    ]
    body = [
        "Ordered::Bits bits[IPT];",
        "#pragma unroll\nfor (int i = 0; i < IPT; ++i) bits[i] = Ordered::to(in_keys[i]);",
        "int ranks[IPT];",
        f"const Digits digits{{{_bit_expr('begin_bit', p.begin)}}};",
        "Rank rank(*static_cast<TempStorage*>(temp));",
    ]
    if plan.checked and p.begin is None:
        # The static rule for a run-time value: the digit lies inside the key.
        body.insert(0, check_range(plan, "begin_bit", "begin_bit", "0", "KEY_BITS - RADIX_BITS"))
    if p.prefix_items is None:
        body.append("rank.RankKeys(bits, ranks, digits);")
    else:
        tracked = _bins_tracked(rbits, launch.block_threads)
        body += [
            f"int prefix[{tracked}];",
            "rank.RankKeys(bits, ranks, digits, prefix);",
            # CUB leaves the slots of digits past the last unwritten.
            f"#pragma unroll\nfor (int j = 0; j < {tracked}; ++j)\n"
            f"  out_prefix[j] = ((int)linear_tid * {tracked} + j < (1 << RADIX_BITS)) ? prefix[j] : "
            "BLOCK_THREADS * IPT;",
        ]
    body.append(copy_out("out_ranks", "ranks"))
    return CppProvider(headers=("cub/block/block_radix_rank.cuh",), decls="\n".join(decls), body="\n".join(body))


SPECS = (
    OpSpec(name="radix_sort_keys", family="radix", stub=radix_sort_keys, plan=plan_radix_sort_keys),
    OpSpec(name="radix_sort_pairs", family="radix", stub=radix_sort_pairs, plan=plan_radix_sort_pairs),
    OpSpec(name="radix_rank", family="radix", stub=radix_rank, plan=plan_radix_rank),
    OpSpec(name="radix_rank_keys", family="radix", stub=radix_rank_keys, plan=plan_radix_rank),
)
