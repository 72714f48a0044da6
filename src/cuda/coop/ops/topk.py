"""TopK: the ``k`` smallest or largest keys of a block's tile (with their values).

Neither CCCL 2.8 nor 3.0 has a block-level top-k, so two algorithms are built
from primitives both have.  Keys compare through the order-preserving bit map of
radix sort (see :mod:`cuda.coop.ops.radix`).

``algorithm="radix_sort"`` (the default): slots past ``valid_items`` get a
sentinel key that orders after every key (the largest transformed key for the
``k`` smallest, the smallest for the ``k`` largest), the tile is sorted with
``cub::BlockRadixSort`` (descending for the largest), and the first ``k`` tile
positions are the answer, sorted.  The sort is stable, so a valid key equal to
the sentinel still comes before every sentinel, and ties at the ``k``-th key go
to the earlier tile positions.  Cost, whatever ``k``: ``ceil(key bits / 4)``
passes (8 for 32-bit keys), each a block-wide digit ranking (a block scan) and
a scatter of keys (and values) through shared memory; scratch is the sort's
(one tile of keys or values, or the ranking counters, whichever is larger).

``algorithm="radix_select"``: finds the ``k``-th key digit by digit, 8 bits at a
time from the most significant: each pass counts the digits of the remaining
candidates in a 256-bin shared-memory histogram (atomics), one block scan over
the bins finds the digit that holds the ``k``-th key, and candidates with a
smaller digit are selected, with a larger digit rejected.  It stops as soon as
all remaining candidates are needed (usually after one or two passes on random
keys), then one block scan gives every key its output position (selected keys
first, in tile order; ties at the ``k``-th key to earlier positions) and one
scatter through shared memory (``cub::BlockExchange``) moves keys and values.
Cost: at most ``key bytes`` passes of (``K`` shared atomics, a block scan) plus
one scan and one scatter; scratch is 1 KiB of bins plus one tile of keys or
values.  The selection is not sorted.
"""

from __future__ import annotations

import numpy as np

from ..core.records import record
from .._dtypes import cxx_type, dtype_fields
from .._errors import InvalidArgumentValueError, MissingArgumentError
from .._kernel_api import kernel_function
from . import _validate as v
from ._launch_rules import check_constant_valid_items
from .radix import _bit_expr, _bit_operand
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
    StorageNeed,
    TupleResult,
)

__all__ = ["topk_min_keys", "topk_max_keys", "topk_min_pairs", "topk_max_pairs", "SPECS"]

SELECT_HEADERS = ("cub/block/block_scan.cuh", "cub/block/block_exchange.cuh")
HEADERS = ("cub/block/block_radix_sort.cuh", *SELECT_HEADERS)

# Link kernels that call this family with 32-bit shared-memory addresses, as nvcc compiles
# (core/shared_addresses.py): its CUB radix sort took 15 registers fewer on sm_90, and TopK
# ran 2 % faster on an H100 (docs/performance.rst).
SHARED_ADDRESS_BITS = 32

_INT64 = np.dtype("int64")

_DOC_COMMON = """
    Parameters
    ----------
    block : coop.this_block()
        Any block shape; the tile is ``N = block_threads * K`` keys.
    keys : coop.ThreadData
        ``K`` keys per thread in the blocked layout (thread ``t`` holds tile
        positions ``t*K .. t*K + K-1``).  Any numeric dtype.  Not modified.{values}
    k : int
        By position after the operands (as in NVIDIA's cuda.coop) or as ``k=``.
        How many keys to select: compile-time (``0 <= k <= N``, checked) or a
        runtime value uniform across the block (outside ``[0, N]`` the launch
        stops with a report, the run-time checks being on by default; with
        ``CUDA_COOP_CHECKED=0`` values below 0 select nothing, values above
        ``N`` everything).
    valid_items : int, optional
        Only the first ``valid_items`` keys of the tile take part (a runtime
        value, uniform across the block; outside ``[0, N]`` the launch stops with
        a report, or with ``CUDA_COOP_CHECKED=0`` it is clamped).
    begin_bit, end_bit : int, optional
        Compare keys by bits ``[begin_bit, end_bit)`` of their order-preserving
        transformation (as in :func:`radix_sort_keys`; default: all bits), as
        NVIDIA's cuda.coop does.  Compile-time values must satisfy
        ``0 <= begin_bit < end_bit <= key bits``; runtime values (uniform across
        the block) are clamped to ``[0, key bits]``, and an empty range makes all
        keys equal (the first ``k`` valid positions are selected).
    algorithm : str
        ``"radix_sort"`` (default: sorts the tile; the selection comes out
        sorted) or ``"radix_select"`` (finds the ``k``-th key digit by digit, then
        moves only once; the selection comes out in tile order).  See the
        module documentation for their costs.
    temp_storage : coop.TempStorage, optional
"""


@kernel_function
def topk_min_keys(block, keys, /, k, *, valid_items=None, begin_bit=0, end_bit=None,
                  algorithm="radix_sort", temp_storage=None):
    """The ``k`` smallest keys of the block's tile.

    Returns
    -------
    ThreadData of the keys' dtype and items per thread.  Tile positions
    ``0 .. min(k, valid_items) - 1`` of the result (blocked layout: slot ``i`` of
    thread ``t`` is position ``t*K + i``) hold the selected keys; later positions
    are unspecified.  The selection is a multiset: ties at the ``k``-th key are
    resolved in favour of earlier tile positions.  This implementation returns
    the selection sorted ascending with ``algorithm="radix_sort"`` and in tile
    order with ``"radix_select"``; callers should not rely on either.
    Keys order as in :func:`radix_sort_keys` (-0.0 equals +0.0; NaNs by their
    bits).  Ends with ``__syncthreads()`` when a later call may reuse the scratch
    (see :ref:`temp-storage`) unless ``TempStorage(auto_sync=False)``.
    """


@kernel_function
def topk_max_keys(block, keys, /, k, *, valid_items=None, begin_bit=0, end_bit=None,
                  algorithm="radix_sort", temp_storage=None):
    """The ``k`` largest keys of the block's tile.

    Returns
    -------
    As :func:`topk_min_keys`, for the largest keys (``"radix_sort"`` returns them
    sorted descending).
    """


@kernel_function
def topk_min_pairs(block, keys, values, /, k, *, valid_items=None, begin_bit=0, end_bit=None,
                   algorithm="radix_sort", temp_storage=None):
    """The ``k`` smallest keys of the block's tile, each with its value.

    Returns
    -------
    (keys, values): two fresh payloads; positions ``0 .. min(k, valid_items) - 1``
    hold the selected pairs (a value always stays with its key), later
    positions are unspecified.  Ties at the ``k``-th key go to earlier tile
    positions.
    """


@kernel_function
def topk_max_pairs(block, keys, values, /, k, *, valid_items=None, begin_bit=0, end_bit=None,
                   algorithm="radix_sort", temp_storage=None):
    """The ``k`` largest keys of the block's tile, each with its value.

    Returns
    -------
    As :func:`topk_min_pairs`, for the largest keys.
    """


_DOC_VALUES = """
    values : coop.ThreadData
        One value per key (same items per thread, any numeric dtype).  Not
        modified."""

for _stub in (topk_min_keys, topk_max_keys, topk_min_pairs, topk_max_pairs):
    _params = _DOC_COMMON.format(values=_DOC_VALUES if _stub.name.endswith("pairs") else "")
    _stub.__doc__ = _stub.__doc__.replace("\n\n    Returns", "\n" + _params + "\n    Returns", 1)


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

def _check_launch(plan: CallPlan, launch: LaunchFacts) -> None:
    k = plan.params.k
    tile = launch.block_threads * plan.params.items
    if k is not None and k > tile:
        raise InvalidArgumentValueError(
            f"{plan.call}: k={k} is larger than the tile of {tile} keys ({launch.block_threads} threads x "
            f"{plan.params.items} items); pass 0 <= k <= {tile}"
        )
    check_constant_valid_items(plan, launch)


ALGORITHMS = ("radix_sort", "radix_select")


@record(kw_only=True)
class TopkParams:
    """The identity of one generated TopK provider."""

    op: str  # "topk_min_keys", "topk_max_pairs", ...
    largest: bool  # the max variants
    keys: np.dtype  # key dtype
    values: np.dtype | None  # value dtype; None for the keys-only variants
    items: int  # items per thread
    k: int | None  # k when known at compile time; None: a runtime operand
    begin: int | None = 0  # begin_bit when known at compile time; None: a runtime operand
    end: int | None = None  # end_bit when known at compile time (None with has_end: runtime)
    has_bits: bool = False  # begin_bit/end_bit given: the comparison uses that bit range
    has_valid_items: bool
    algorithm: str  # "radix_sort" or "radix_select"

    def __post_init__(self):
        dtype_fields(self, "keys", "values")


def _plan(args: CallArgs) -> CallPlan:
    """The four top-k operations: min or max (the op's name says), keys or pairs (values)."""
    call, op, k = args.call, args.op, args.k
    largest = op.startswith("topk_max_")
    values = args.get("values", None)  # the keys-only operations have no values operand
    g = v.require_group(call, args.block, kinds=("block",))
    algo = v.choose(call, "algorithm", args.algorithm, ALGORITHMS, default="radix_sort")
    kp, kdt = key_dtype(call, "keys", args.keys)
    vp = vdt = None
    if values is not None:
        vp, vdt = value_dtype(call, kp, values)
    if not v.is_given(k):
        raise MissingArgumentError(
            f"{call}: k is required (how many keys to select); pass an int after the operands or as k=, "
            "e.g. k=8")
    kk = v.optional_int_operand(call, "k", k)
    k_static = None
    if kk.is_literal:
        k_static = int(kk.literal)
        if k_static < 0:
            raise InvalidArgumentValueError(f"{call}: k={k_static} is negative; pass 0 <= k <= the tile size")
    vi = v.optional_int_operand(call, "valid_items", args.valid_items)
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    operands = key_value_operands(kdt, vdt, kp, vp)
    if vi is not None:
        operands.append(AbiOperand("valid_items", "value", _INT64, "valid_items"))
    # The sort orders the whole tile, so the first min(k, valid_items) positions are
    # the answer for every k and k does not enter its code; the select needs it, and
    # so do the sort's run-time checks (checked mode).
    k_operand = (AbiOperand("k", "value", _INT64, "k"),) if k_static is None else ()
    if algo == "radix_select":
        operands += k_operand
        k_operand = ()
    key_bits = kdt.itemsize * 8
    begin = _bit_operand(call, "begin_bit", args.begin_bit, key_bits, operands)
    end = _bit_operand(call, "end_bit", args.end_bit, key_bits, operands)
    has_bits = begin is not OMITTED or end is not OMITTED
    begin = 0 if begin is OMITTED else begin
    end = key_bits if end is OMITTED else end
    if begin is not None and end is not None and begin >= end:
        raise InvalidArgumentValueError(
            f"{call}: begin_bit={begin} and end_bit={end} select no bits; pass begin_bit < end_bit "
            f"(the key has {key_bits} bits)")
    if has_bits and begin == 0 and end == key_bits:
        has_bits = False  # every bit, written out: the same provider as leaving them out
    key_result = result_like(kdt, kp)
    result = key_result if vdt is None else TupleResult((key_result, result_like(vdt, vp)))
    params = TopkParams(op=op, largest=largest, keys=kdt, values=vdt,
                        items=kp.items, k=k_static, has_valid_items=vi is not None, algorithm=algo,
                        begin=begin if has_bits else 0, end=end if has_bits else key_bits, has_bits=has_bits)
    return CallPlan(
        op=op, family="topk", group=g, result=result, operands=tuple(operands),
        storage=StorageNeed(per="block"), temp_storage="temp_storage" if ts is not None else None,
        params=params, generate=_generate_select if algo == "radix_select" else _generate,
        check_launch=_check_launch, checked_operands=k_operand,
        literal_valid_items=v.literal_int(args.valid_items),
    )


plan_topk_min_keys = plans(topk_min_keys)(_plan)
plan_topk_max_keys = plans(topk_max_keys)(_plan)
plan_topk_min_pairs = plans(topk_min_pairs)(_plan)
plan_topk_max_pairs = plans(topk_max_pairs)(_plan)


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

def _checks(plan: CallPlan) -> list:
    """Checked mode: NVIDIA's rule for run-time k and valid_items, ``[0, N]``, where the
    unchecked providers clamp."""
    p: TopkParams = plan.params
    checks = []
    if p.k is None:
        checks.append(check_range(plan, "k", "k", "0", "TILE"))
    if p.has_valid_items:
        checks.append(check_range(plan, "valid_items", "valid_items", "0", "TILE"))
    return checks


def _generate(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: TopkParams = plan.params
    kdt = p.keys
    pairs = p.values is not None
    decls = [
        f"using K = {cxx_type(kdt)};",
        f"using V = {cxx_type(p.values) if pairs else 'cub::NullType'};",
        f"constexpr int IPT = {p.items};",
        "constexpr long long TILE = BLOCK_THREADS * IPT;",
        f"constexpr int KEY_BITS = {kdt.itemsize * 8};",
        "using Sort = cub::BlockRadixSort<K, BLOCK_X, IPT, V, 4, true, cub::BLOCK_SCAN_WARP_SCANS, "
        "cudaSharedMemBankSizeFourByte, BLOCK_Y, BLOCK_Z>;",
        "using TempStorage = typename Sort::TempStorage;",
    ]
    vals = ", vals" if pairs else ""
    body = [copy_in("keys", "in_keys", "K")]
    if pairs:
        body.append(copy_in("vals", "in_values", "V"))
    if plan.checked:
        body += _checks(plan)
    if p.has_valid_items:
        body.append(
            "if (valid_items < TILE) {\n"
            "  const int vi = valid_items < 0 ? 0 : (int)valid_items;\n"
            + sentinel_decl("sentinel", kdt, p.largest) + "\n"
            "  #pragma unroll\n"
            "  for (int i = 0; i < IPT; ++i) if ((int)linear_tid * IPT + i >= vi) keys[i] = sentinel;\n"
            "}"
        )
    method = "SortDescending" if p.largest else "Sort"
    if p.has_bits:
        # The sentinel (all ones, or all zeros for the largest) still orders last in any
        # bit range; the stable sort keeps the valid keys before it.  An empty runtime
        # range makes every key equal: the tile order already is the answer.
        body.append(f"const int begin = {_bit_expr('begin_bit', p.begin)};")
        body.append(f"const int end = {_bit_expr('end_bit', p.end)};")
        body.append(f"if (begin < end) Sort(*static_cast<TempStorage*>(temp)).{method}(keys{vals}, begin, end);")
    else:
        body.append(f"Sort(*static_cast<TempStorage*>(temp)).{method}(keys{vals});")
    body.append(copy_out("out_keys", "keys"))
    if pairs:
        body.append(copy_out("out_values", "vals"))
    return CppProvider(headers=HEADERS[:1], decls="\n".join(decls), body="\n".join(body))


def _generate_select(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: TopkParams = plan.params
    kdt = p.keys
    pairs = p.values is not None
    decls = [
        f"using K = {cxx_type(kdt)};",
        f"using V = {cxx_type(p.values) if pairs else 'K'};",
        f"constexpr int IPT = {p.items};",
        "constexpr long long TILE = BLOCK_THREADS * IPT;",
        bit_ordering("Ordered", kdt),
        "using Bits = Ordered::Bits;",
        "constexpr int KEY_BITS = Ordered::BITS;",
        "constexpr int RADIX = 256;  // 8-bit digits, most significant first",
        "constexpr int PASSES = Ordered::BITS / 8;",
        "constexpr int BINS_PER_THREAD = (RADIX + BLOCK_THREADS - 1) / BLOCK_THREADS;",
        "using Scan = cub::BlockScan<int, BLOCK_X, cub::BLOCK_SCAN_WARP_SCANS, BLOCK_Y, BLOCK_Z>;",
        "using Scan64 = cub::BlockScan<long long, BLOCK_X, cub::BLOCK_SCAN_WARP_SCANS, BLOCK_Y, BLOCK_Z>;",
        "using ExchangeK = cub::BlockExchange<K, BLOCK_X, IPT, false, BLOCK_Y, BLOCK_Z>;",
        "using ExchangeV = cub::BlockExchange<V, BLOCK_X, IPT, false, BLOCK_Y, BLOCK_Z>;",
        "struct TempStorage {\n"
        "  int hist[RADIX];\n"
        "  int digit, before, count;  // the pass's answer, broadcast by the thread that finds it\n"
        "  union { typename Scan::TempStorage scan; typename Scan64::TempStorage scan64;\n"
        "          typename ExchangeK::TempStorage keys; typename ExchangeV::TempStorage values; } u;\n"
        "};",
    ]
    k_expr = str(p.k) if p.k is not None else "k"
    body = [
        "TempStorage& ts = *static_cast<TempStorage*>(temp);",
        copy_in("keys", "in_keys", "K"),
    ]
    if pairs:
        body.append(copy_in("vals", "in_values", "V"))
    if plan.checked:
        body += _checks(plan)
    vi = ("(int)(valid_items < 0 ? 0LL : (valid_items > TILE ? TILE : valid_items))" if p.has_valid_items
          else "(int)TILE")
    flip = "u[i] = (Bits)~u[i];  // the largest keys become the smallest bits\n  " if p.largest else ""
    if p.has_bits:
        # Only bits [begin, end) of the ordered key count: keep them, zero the rest (an
        # empty range makes every key equal).  Shifts stay below the key width.
        flip = ("u[i] = begin >= end ? (Bits)0 : (Bits)((u[i] >> begin) & (end - begin >= KEY_BITS ? (Bits)~(Bits)0 "
                ": (Bits)(((Bits)1 << (end - begin)) - 1)));\n  " + flip)
    body += [
        f"const int vi = {vi};",
        *([f"const int begin = {_bit_expr('begin_bit', p.begin)};",
           f"const int end = {_bit_expr('end_bit', p.end)};"] if p.has_bits else []),
        f"const long long k_req = {k_expr};",
        "const int m = (int)(k_req < 0 ? 0LL : (k_req > vi ? (long long)vi : k_req));",
        "const int first = (int)linear_tid * IPT;",
        # state: 0 candidate, 1 selected, 2 rejected (also every key past valid_items).
        "Bits u[IPT];\nunsigned char state[IPT];",
        "#pragma unroll\nfor (int i = 0; i < IPT; ++i) {\n"
        f"  u[i] = Ordered::to(keys[i]);\n  {flip}state[i] = first + i < vi ? 0 : 2;\n}}",
        # Invariant: selected + remaining == m, and remaining <= the number of candidates.
        "int remaining = m;",
        "if (remaining > 0) {\n"
        "  for (int pass = 0; pass < PASSES; ++pass) {\n"
        "    const int shift = Ordered::BITS - 8 * (pass + 1);\n"
        "    for (int b = (int)linear_tid; b < RADIX; b += BLOCK_THREADS) ts.hist[b] = 0;\n"
        "    __syncthreads();\n"
        "    #pragma unroll\n"
        "    for (int i = 0; i < IPT; ++i)\n"
        "      if (state[i] == 0) atomicAdd(&ts.hist[(int)((u[i] >> shift) & 255u)], 1);\n"
        "    __syncthreads();\n"
        "    int c[BINS_PER_THREAD], total = 0;\n"
        "    #pragma unroll\n"
        "    for (int j = 0; j < BINS_PER_THREAD; ++j) {\n"
        "      const int b = (int)linear_tid * BINS_PER_THREAD + j;\n"
        "      c[j] = b < RADIX ? ts.hist[b] : 0;\n"
        "      total += c[j];\n"
        "    }\n"
        "    int prefix;\n"
        "    Scan(ts.u.scan).ExclusiveSum(total, prefix);\n"
        "    // Exactly one bin holds the remaining-th candidate: (prefix, prefix + c] covers it.\n"
        "    #pragma unroll\n"
        "    for (int j = 0; j < BINS_PER_THREAD; ++j) {\n"
        "      if (prefix < remaining && remaining <= prefix + c[j]) {\n"
        "        ts.digit = (int)linear_tid * BINS_PER_THREAD + j; ts.before = prefix; ts.count = c[j];\n"
        "      }\n"
        "      prefix += c[j];\n"
        "    }\n"
        "    __syncthreads();\n"
        "    const int digit = ts.digit, count = ts.count;\n"
        "    remaining -= ts.before;\n"
        "    #pragma unroll\n"
        "    for (int i = 0; i < IPT; ++i) {\n"
        "      if (state[i] == 0) {\n"
        "        const int d = (int)((u[i] >> shift) & 255u);\n"
        "        state[i] = d < digit ? 1 : (d > digit ? 2 : 0);\n"
        "      }\n"
        "    }\n"
        "    __syncthreads();  // everyone has read hist and the answer before the next pass\n"
        "    if (remaining == count) break;  // every remaining candidate is needed\n"
        "  }\n"
        "}",
        # One scan of (selected, candidate) counts gives each key its output
        # position: the chosen keys (selected, then the first `remaining`
        # candidates in tile order) at 0..m-1 in tile order, the others after.
        "long long mine = 0;",
        "#pragma unroll\nfor (int i = 0; i < IPT; ++i)\n"
        "  mine += state[i] == 1 ? (1LL << 32) : (state[i] == 0 ? 1LL : 0LL);",
        "long long before;",
        "Scan64(ts.u.scan64).ExclusiveSum(mine, before);",
        "int sel = (int)(before >> 32), cand = (int)(before & 0xffffffffLL);",
        "int ranks[IPT];",
        "#pragma unroll\nfor (int i = 0; i < IPT; ++i) {\n"
        "  const int chosen_before = sel + (cand < remaining ? cand : remaining);\n"
        "  const bool chosen = state[i] == 1 || (state[i] == 0 && cand < remaining);\n"
        "  ranks[i] = chosen ? chosen_before : m + (first + i - chosen_before);\n"
        "  if (state[i] == 1) ++sel; else if (state[i] == 0) ++cand;\n"
        "}",
        "__syncthreads();  // the scan's storage becomes the exchange's",
        "ExchangeK(ts.u.keys).ScatterToBlocked(keys, ranks);",
    ]
    if pairs:
        body += ["__syncthreads();", "ExchangeV(ts.u.values).ScatterToBlocked(vals, ranks);"]
    body.append(copy_out("out_keys", "keys"))
    if pairs:
        body.append(copy_out("out_values", "vals"))
    return CppProvider(headers=SELECT_HEADERS, decls="\n".join(decls), body="\n".join(body))


SPECS = (
    OpSpec(name="topk_min_keys", family="topk", stub=topk_min_keys, plan=plan_topk_min_keys),
    OpSpec(name="topk_max_keys", family="topk", stub=topk_max_keys, plan=plan_topk_max_keys),
    OpSpec(name="topk_min_pairs", family="topk", stub=topk_min_pairs, plan=plan_topk_min_pairs),
    OpSpec(name="topk_max_pairs", family="topk", stub=topk_max_pairs, plan=plan_topk_max_pairs),
)
