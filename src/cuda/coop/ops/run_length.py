"""Run-length decode: expand a block's runs (value, length) into the decoded sequence.

CUB: the algorithm of ``cub::BlockRunLengthDecode``, built from
``cub::BlockScan`` and a run table in shared memory.

Thread ``t`` holds runs ``t*R .. t*R + R-1`` (blocked, ``R`` runs per thread);
the block's runs, in that order, decode to ``sum(lengths)`` items.  A *window*
of the decoded sequence is ``G*D`` items long (``G`` threads, ``D`` decoded
items per thread) and blocked: thread ``t`` slot ``i`` holds decoded position
``window_offset + t*D + i``.

Every input decodes to a defined result, so a kernel never traps or writes out
of bounds because of its data:

- negative lengths count as 0, and zero-length runs (anywhere, not only at the
  end) contribute nothing;
- window positions at or past the total hold ``oob_default`` (default 0);
- ``run_length_decode_into`` writes only the decoded items that fall inside the
  destination and returns the total decoded size, so ``total > capacity``
  tells the caller that the output was truncated.

Why not ``cub::BlockRunLengthDecode`` itself: its decode step moves from one run
to the next without skipping empty runs, so an interior zero-length run makes it
emit that run's value (CCCL 2.8 and 3.0), and under NVRTC its CCCL 2.8 header
includes host ``<limits>``/``<type_traits>``, which do not compile.  The provider
below keeps CUB's structure (an exclusive scan of the lengths publishes run
offsets; each thread binary-searches its first run, then walks forward), with a
walk that skips empty runs and bounds every index.
"""

from __future__ import annotations

import numpy as np

from ..core.records import record
from .._dtypes import cxx_type, dtype_fields, dtype_names, is_integer, is_supported
from .._errors import (
    DtypeMismatchError,
    ExtentMismatchError,
    InvalidArgumentValueError,
    MissingArgumentError,
    SharedMemoryLimitError,
    UnsupportedDtypeError,
)
from .._kernel_api import kernel_function
from . import _validate as v
from ..core.binding import CallArgs, plans
from ..core.storage import MAX_SHARED_LIMIT
from ..core.cpp import check_at_most, check_item, check_range
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
    TupleResult,
)

__all__ = ["run_length_decode", "run_length_decode_into", "SPECS", "default_decoded_items_per_thread"]

HEADERS = ("cub/block/block_scan.cuh",)

_I64 = np.dtype("int64")


# --------------------------------------------------------------------------------------
# Public stubs
# --------------------------------------------------------------------------------------

@kernel_function
def run_length_decode(block, run_values, run_lengths, /, *, decoded_items_per_thread, decoded_window_offset=None,
                      oob_default=None, relative_offsets=None, total_decoded_size=None, decoded_offset_dtype=None,
                      return_total=False, temp_storage=None):
    """Decode one window of the block's runs into a fresh blocked payload.

    Parameters
    ----------
    block : coop.this_block()
        Any block shape; threads are ranked x-major.
    run_values : coop.ThreadData or scalar
        ``R`` run values per thread (a scalar is one run), any supported dtype.
    run_lengths : coop.ThreadData or integer scalar
        The runs' lengths, ``R`` per thread, any integer dtype.  Negative
        lengths count as 0; zero-length runs may appear anywhere.
    decoded_items_per_thread : int
        ``D``, known at compile time: the window holds ``G*D`` decoded items.
    decoded_window_offset : int, optional
        Runtime decoded position of the window's first item (uniform across the
        block; default 0; any integer dtype, uint64 included: a window starting
        near 2**64 holds no decoded item, it never wraps around).  A negative
        signed offset traps in checked mode (the default) and counts as 0 with
        ``CUDA_COOP_CHECKED=0``.  Loop over windows with it.
    oob_default : scalar, optional
        Value of window positions at or past the total decoded size (default 0).
    relative_offsets : coop.ThreadData, optional
        An integer payload of ``D`` items, written in place: each decoded item's
        index within its run (CUB's ``item_offsets``), converted to the payload's
        dtype; positions past the total hold all bits set (the maximum of an
        unsigned dtype, -1 of a signed one, as in NVIDIA's cuda.coop).
    total_decoded_size : coop.ThreadData, optional
        A one-item int32, uint32, int64 or uint64 payload (NVIDIA's qualified API;
        its tests use the run lengths' dtype), written in place on every thread
        with the total decoded size of all the block's runs, also when the window
        is empty; saturates at the dtype's maximum.
    decoded_offset_dtype : np.uint32 or np.uint64, optional
        The dtype that ``relative_offsets`` and ``total_decoded_size`` must have
        when given (NVIDIA's qualified API; its default is uint32).  Omitted,
        ``relative_offsets`` may be any integer dtype.  Given, the total decoded size must
        fit it: checked mode traps when it does not, as NVIDIA's cuda.coop does.
    return_total : bool
        Also return the total decoded size (int64, same on every thread).
    temp_storage : coop.TempStorage, optional
        Scratch for the run table.  The call ends with a barrier (when a later
        call may reuse the scratch, see :ref:`temp-storage`) unless it is a
        ``TempStorage(auto_sync=False)``.

    Returns
    -------
    coop.ThreadData, or (coop.ThreadData, int64) with ``return_total=True``
        The window, blocked: every thread holds its ``D`` items after the call,
        slot ``i`` of thread ``t`` being decoded position
        ``decoded_window_offset + t*D + i``.  The inputs are not modified.
    """


@kernel_function
def run_length_decode_into(block, run_values, run_lengths, destination, /, *, decoded_items_per_thread=None,
                           destination_offset=None, relative_offsets=None, decoded_offset_dtype=None,
                           temp_storage=None):
    """Decode all of the block's runs into ``destination``; return the total decoded size.

    The run table is built once; the block then decodes window after window
    (``G*D`` items each) and writes them, with 16-byte vector stores for whole
    windows when the destination is aligned.

    Parameters
    ----------
    block, run_values, run_lengths
        As for :func:`run_length_decode`.
    destination : 1-D contiguous array
        Of the run values' dtype.  Decoded item ``p`` goes to
        ``destination[destination_offset + p]``, if that index lies inside the
        array; other items are dropped (never written out of bounds).
    decoded_items_per_thread : int, optional
        Items each thread decodes per window, known at compile time; default: 16
        bytes' worth (16 for int8, 4 for float32, 2 for float64).
    destination_offset : int, optional
        Runtime element offset in ``destination`` (uniform across the block;
        default 0), of any integer dtype, uint64 included (compared with the
        destination's length before it narrows).  Checked mode traps outside
        ``0 .. len(destination)``; unchecked, a negative offset drops the
        leading items and one past the end writes nothing.
    relative_offsets : 1-D contiguous integer array, optional
        Receives each decoded item's index within its run at the same index as
        its value (``relative_offsets[destination_offset + p]``), under the same
        rule: indices outside the array are dropped, other elements are not
        touched (NVIDIA's qualified API).
    decoded_offset_dtype : np.uint32 or np.uint64, optional
        The dtype of the returned total (NVIDIA's qualified API); it saturates at
        that dtype's maximum.  Omitted, the total is an int64.
    temp_storage : coop.TempStorage, optional
        Scratch for the run table; the call ends with a barrier (when a later
        call may reuse the scratch, see :ref:`temp-storage`) unless it is a
        ``TempStorage(auto_sync=False)``.

    Returns
    -------
    int64 (or ``decoded_offset_dtype``)
        The total decoded size (the sum of the positive lengths), on every
        thread, whether or not it all fit: compare it with the room in
        ``destination`` to detect truncation.
    """


def default_decoded_items_per_thread(dtype) -> int:
    """The default window depth of :func:`run_length_decode_into`: 16 bytes per thread."""
    return max(1, 16 // np.dtype(dtype).itemsize)


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

@record(kw_only=True)
class RunLengthParams:
    """The identity of one generated run-length decode provider."""

    op: str  # "window" or "into"
    value: np.dtype  # run value dtype
    values_passing: str  # "payload" or "value"
    length: np.dtype  # run length dtype
    lengths_passing: str
    runs: int  # runs per thread
    decoded: int  # decoded items per thread
    has_offset: bool  # decoded_window_offset / destination_offset given
    has_oob: bool
    relative: np.dtype | None  # relative offsets dtype, or None
    return_total: bool
    into_relative: bool = False  # run_length_decode_into writes relative offsets too
    total_payload: np.dtype | None = None  # total_decoded_size payload dtype, or None
    total_dtype: np.dtype = np.dtype("int64")  # dtype of the returned total
    offset_unsigned: bool = False  # the window / destination offset is a uint64 (passed as such, not as int64)
    offset_dtype: np.dtype | None = None  # run_length_decode's decoded_offset_dtype=, when given

    def __post_init__(self):
        dtype_fields(self, "value", "length", "relative", "total_payload", "total_dtype", "offset_dtype")


def _operand(call, label, arg, *, integer=False):
    """A run operand (payload or scalar): its dtype, runs per thread and passing."""
    if isinstance(arg, PayloadArg):
        dtype = v.require_known_dtype(call, label, arg)
        items, passing = arg.items, "payload"
    else:
        arg = v.require_payload(call, label, arg, allow_scalar=True)
        dtype, items, passing = arg.dtype, 1, "value"
    if not is_supported(dtype):
        v.refuse_complex(call, f"{label} has dtype", dtype)
        raise UnsupportedDtypeError(f"{call}: {label} has dtype {dtype.name}; use one of {dtype_names()}")
    if integer and not is_integer(dtype):
        raise UnsupportedDtypeError(
            f"{call}: {label} has dtype {dtype.name}, but run lengths are counts; use an integer dtype "
            "(e.g. coop.ThreadData(R, dtype=np.int32))"
        )
    return dtype, items, passing


_OFFSET_DTYPES = (np.dtype("uint32"), np.dtype("uint64"))
# total_decoded_size: NVIDIA's tests pass the run lengths' dtype, signed or not.
_TOTAL_DTYPES = (np.dtype("int32"), np.dtype("uint32"), np.dtype("int64"), np.dtype("uint64"))


def _decoded_offset_dtype(call, arg):
    """``decoded_offset_dtype=``: uint32 or uint64 (a dtype or its name), or None."""
    return v.optional_dtype_choice(call, "decoded_offset_dtype", arg, _OFFSET_DTYPES,
                                   kind="an offset type", hint="np.uint32 or np.uint64")


def _offset_output(call, label, arg, items, odt, why):
    """An output payload of decoded offsets: integer, ``items`` per thread, of ``odt`` when given."""
    out = v.require_integer_payload(call, label, arg, purpose=f" ({items} per thread)")
    if out.items != items:
        raise ExtentMismatchError(
            f"{call}: {label} has {out.items} items per thread but needs {items} ({why}); create it with "
            f"coop.ThreadData({items}, dtype=np.{(odt or out.dtype).name})"
        )
    if odt is not None and out.dtype != odt:
        raise DtypeMismatchError(
            f"{call}: {label} has dtype {out.dtype.name} but decoded_offset_dtype={odt.name}; they must "
            f"match: create it with dtype=np.{odt.name} or drop decoded_offset_dtype="
        )
    return out


def _runs(call, run_values, run_lengths):
    vdt, vitems, vpass = _operand(call, "run_values", run_values)
    ldt, litems, lpass = _operand(call, "run_lengths", run_lengths, integer=True)
    if vitems != litems:
        raise ExtentMismatchError(
            f"{call}: run_values has {vitems} runs per thread but run_lengths has {litems}; each run "
            f"is a (value, length) pair, so create both with coop.ThreadData({vitems}, ...)"
        )
    operands = [AbiOperand("run_values", vpass, vdt, "values" if vpass == "payload" else "value"),
                AbiOperand("run_lengths", lpass, ldt, "lengths" if lpass == "payload" else "length")]
    return vdt, vpass, ldt, lpass, vitems, operands


@plans(run_length_decode)
def plan_run_length_decode(args: CallArgs) -> CallPlan:
    call, decoded_items_per_thread = args.call, args.decoded_items_per_thread
    g = v.require_group(call, args.block, kinds=("block",))
    vdt, vpass, ldt, lpass, runs, operands = _runs(call, args.run_values, args.run_lengths)
    if not v.is_given(decoded_items_per_thread):
        raise MissingArgumentError(
            f"{call}: decoded_items_per_thread= is required (the window's items per thread, a "
            "compile-time int); e.g. decoded_items_per_thread=4"
        )
    d = v.require_literal_int(call, "decoded_items_per_thread", decoded_items_per_thread, minimum=1,
                              maximum=4096)
    # A uint64 window offset travels as uint64 (NVIDIA's uint64 run lengths take one); any
    # other integer as int64, negative counting as 0.
    off = v.optional_int_operand(call, "decoded_window_offset", args.decoded_window_offset, allow_uint64=True)
    _refuse_negative_literal(call, "decoded_window_offset", off, "the first decoded item of the window")
    off_unsigned = off is not None and off.dtype == np.dtype("uint64")
    oob = v.optional_scalar_of_dtype(call, "oob_default", args.oob_default, vdt, target="run_values")
    odt = _decoded_offset_dtype(call, args.decoded_offset_dtype)
    rel = None
    if v.is_given(args.relative_offsets):
        rel = _offset_output(call, "relative_offsets", args.relative_offsets, d, odt,
                             f"decoded_items_per_thread={d}")
    tot = None
    if v.is_given(args.total_decoded_size):
        tot = _offset_output(call, "total_decoded_size", args.total_decoded_size, 1, odt,
                             "one total per thread")
        if tot.dtype not in _TOTAL_DTYPES:
            raise UnsupportedDtypeError(
                f"{call}: total_decoded_size has dtype {tot.dtype.name}, too narrow for a decoded size; "
                "use a 32- or 64-bit integer payload (int32, uint32, int64 or uint64), e.g. "
                "coop.ThreadData(1, dtype=np.uint32)"
            )
    with_total = v.require_literal_bool(call, "return_total", args.return_total, False)
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    if off is not None:
        operands.append(AbiOperand("decoded_window_offset", "value",
                                   np.dtype("uint64") if off_unsigned else _I64, "window_offset"))
    if oob is not None:
        operands.append(AbiOperand("oob_default", "value", vdt, "oob_default"))
    if rel is not None:
        operands.append(AbiOperand("relative_offsets", "payload", rel.dtype, "relative"))
    if tot is not None:
        operands.append(AbiOperand("total_decoded_size", "payload", tot.dtype, "total_item"))
    window = PayloadResult(vdt, d)
    if with_total:
        operands.append(AbiOperand("result.0", "out", vdt, "decoded"))
        operands.append(AbiOperand("result.1", "out", _I64, "total_out"))
        result = TupleResult((window, ScalarResult(_I64)))
    else:
        operands.append(AbiOperand("result", "out", vdt, "decoded"))
        result = window
    # Keywords, not positions: a positional total once landed in into_relative and the
    # total was never written.
    params = RunLengthParams(op="window", value=vdt, values_passing=vpass, length=ldt,
                             lengths_passing=lpass, runs=runs, decoded=d, has_offset=off is not None,
                             has_oob=oob is not None, relative=rel.dtype if rel is not None else None,
                             return_total=with_total, total_payload=tot.dtype if tot is not None else None,
                             offset_unsigned=off_unsigned, offset_dtype=odt)
    return CallPlan(
        op="run_length_decode", family="run_length", group=g, result=result, operands=tuple(operands),
        storage=StorageNeed(per="block"), temp_storage="temp_storage" if ts is not None else None,
        params=params, generate=_generate, check_launch=_check_launch,
    )


@plans(run_length_decode_into)
def plan_run_length_decode_into(args: CallArgs) -> CallPlan:
    call = args.call
    g = v.require_group(call, args.block, kinds=("block",))
    vdt, vpass, ldt, lpass, runs, operands = _runs(call, args.run_values, args.run_lengths)
    dst = v.require_array(call, "destination", args.destination, written=True)
    if dst.dtype != vdt:
        raise DtypeMismatchError(
            f"{call}: destination has dtype {dst.dtype.name} but run_values has dtype {vdt.name}; "
            f"they must match: pass an array of {vdt.name} or convert the run values"
        )
    d = v.optional_literal_int(call, "decoded_items_per_thread", args.decoded_items_per_thread, minimum=1,
                               maximum=4096)
    if d is None:
        d = default_decoded_items_per_thread(vdt)
    # A uint64 offset travels as uint64 and is compared with the destination's length before
    # it narrows (NVIDIA's run-length offsets go up to uint64); any other integer as int64.
    off = v.optional_int_operand(call, "destination_offset", args.destination_offset, allow_uint64=True)
    _refuse_negative_literal(call, "destination_offset", off, "where in destination the first item goes")
    off_unsigned = off is not None and off.dtype == np.dtype("uint64")
    odt = _decoded_offset_dtype(call, args.decoded_offset_dtype)
    total_dt = odt or _I64
    rel = None
    if v.is_given(args.relative_offsets):
        rel = v.require_array(call, "relative_offsets", args.relative_offsets, written=True)
        if not is_integer(rel.dtype) or (odt is not None and rel.dtype != odt):
            want = f"np.{odt.name}" if odt is not None else "an integer dtype (e.g. np.uint32)"
            raise DtypeMismatchError(
                f"{call}: relative_offsets has dtype {rel.dtype.name}; pass an array of {want}"
                + (" (decoded_offset_dtype=)" if odt is not None else "")
            )
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    operands.append(AbiOperand("destination", "array", vdt, "out_dst"))
    operands.append(AbiOperand("destination", "extent", _I64, "dst_len"))
    if off is not None:
        operands.append(AbiOperand("destination_offset", "value", np.dtype("uint64") if off_unsigned else _I64,
                                   "dst_offset"))
    if rel is not None:
        operands.append(AbiOperand("relative_offsets", "array", rel.dtype, "rel_dst"))
        operands.append(AbiOperand("relative_offsets", "extent", _I64, "rel_len"))
    operands.append(AbiOperand("result", "out", total_dt, "total_out"))
    params = RunLengthParams(op="into", value=vdt, values_passing=vpass, length=ldt,
                             lengths_passing=lpass, runs=runs, decoded=d, has_offset=off is not None,
                             has_oob=False, relative=rel.dtype if rel is not None else None,
                             return_total=True, into_relative=rel is not None, total_dtype=total_dt,
                             offset_unsigned=off_unsigned)
    return CallPlan(
        op="run_length_decode_into", family="run_length", group=g, result=ScalarResult(total_dt),
        operands=tuple(operands), storage=StorageNeed(per="block"),
        temp_storage="temp_storage" if ts is not None else None, params=params, generate=_generate,
        check_launch=_check_launch,
    )


def _refuse_negative_literal(call, label, arg, meaning):
    """A negative offset known at compile time: the run-time check would trap on it."""
    value = v.literal_int(arg)
    if value is not None and value < 0:
        raise InvalidArgumentValueError(f"{call}: {label}={value} is negative; it is {meaning}, so pass 0 or more")


def _check_launch(plan: CallPlan, launch: LaunchFacts) -> None:
    p: RunLengthParams = plan.params
    runs = launch.block_threads * p.runs
    off = offset_dtype(p.length, launch.block_threads, p.runs)
    table = runs * (p.value.itemsize + off.itemsize)
    if table > MAX_SHARED_LIMIT:
        # Before NVRTC: the run table alone fits in no GPU's shared memory (the kernel's plan
        # checks the target's own limit once every call's scratch is known).
        raise SharedMemoryLimitError(
            f"{plan.call}: the run table of {runs} runs ({launch.block_threads} threads x {p.runs} runs, "
            f"{p.value} values and {off.name} offsets) needs {table} bytes of shared memory, above the "
            f"{MAX_SHARED_LIMIT} bytes that any GPU gives a thread block; use fewer runs per thread or a "
            "smaller block"
        )


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

def offset_dtype(length_dtype, block_threads: int, runs_per_thread: int) -> np.dtype:
    """Decoded offsets are 32-bit when no total can reach 2**32, else 64-bit."""
    max_len = int(np.iinfo(np.dtype(length_dtype)).max)
    return np.dtype("uint32") if block_threads * runs_per_thread * max_len < 2**32 else np.dtype("uint64")


def _word_type(nbytes: int, value_cxx: str) -> str:
    for size, name in ((16, "uint4"), (8, "uint2"), (4, "unsigned int")):
        if nbytes % size == 0:
            return name
    return value_cxx


_COMMON = """\
constexpr int R = {runs}, D = {decoded};
constexpr int RUNS = BLOCK_THREADS * R;
constexpr int FIRST_STEP = {first_step};  // the largest power of two <= RUNS
using Scan = cub::BlockScan<Off, BLOCK_X, cub::BLOCK_SCAN_WARP_SCANS, BLOCK_Y, BLOCK_Z>;
struct Runs {{ V values[RUNS]; Off offsets[RUNS]; }};
union TempStorage {{ typename Scan::TempStorage scan; Runs runs; }};

// Scan the lengths (negative ones count as 0) into run offsets and publish the
// run table; returns the total decoded size on every thread.
__device__ __forceinline__ Off prepare(TempStorage& ts, const V* values, const L* lengths, unsigned tid) {{
  Off len[R];
  #pragma unroll
  for (int j = 0; j < R; ++j) len[j] = lengths[j] > L(0) ? Off(lengths[j]) : Off(0);
  Off offsets[R];
  Off total;
  Scan(ts.scan).ExclusiveSum(len, offsets, total);{checks}
  __syncthreads();  // the scan's storage becomes the run table
  #pragma unroll
  for (int j = 0; j < R; ++j) {{
    ts.runs.values[tid * R + j] = values[j];
    ts.runs.offsets[tid * R + j] = offsets[j];
  }}
  __syncthreads();
  return total;
}}

// The last run whose offset is <= p: offsets never decrease and offsets[0] == 0.
__device__ __forceinline__ int find_run(const Off* offsets, unsigned long long p) {{
  int r = 0;
  #pragma unroll
  for (int step = FIRST_STEP; step > 0; step >>= 1)
    if (r + step < RUNS && (unsigned long long)offsets[r + step] <= p) r += step;
  return r;
}}

// a + b, or the largest position when that wraps: a window near 2**64 must not wrap
// around into decoded positions.
__device__ __forceinline__ unsigned long long sat_add(unsigned long long a, unsigned long long b) {{
  return a + b < a ? ~0ULL : a + b;
}}

// Decode positions p0 .. p0+D-1, calling emit(i, inside, value, index_in_run).
// The walk skips empty runs; r stays below RUNS because the last run ends at total.
template <typename Emit>
__device__ __forceinline__ void decode(const TempStorage& ts, unsigned long long total, unsigned long long p0,
                                       Emit emit) {{
  int r = 0;
  unsigned long long begin = 0, end = 0;
  if (p0 < total) {{
    r = find_run(ts.runs.offsets, p0);
    begin = ts.runs.offsets[r];
    end = r + 1 < RUNS ? (unsigned long long)ts.runs.offsets[r + 1] : total;
  }}
  #pragma unroll
  for (int i = 0; i < D; ++i) {{
    const unsigned long long p = sat_add(p0, (unsigned long long)i);
    if (p < total) {{
      while (p >= end && r + 1 < RUNS) {{
        ++r;
        begin = end;
        end = r + 1 < RUNS ? (unsigned long long)ts.runs.offsets[r + 1] : total;
      }}
      emit(i, true, ts.runs.values[r], p - begin);
    }} else {{
      emit(i, false, V(), 0ULL);
    }}
  }}
}}
"""


def _generate(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: RunLengthParams = plan.params
    threads = launch.block_threads
    vdt = p.value
    off_t = offset_dtype(p.length, threads, p.runs)
    runs_total = threads * p.runs
    decls = [
        f"using V = {cxx_type(vdt)};",
        f"using L = {cxx_type(p.length)};",
        f"using Off = {cxx_type(off_t)};",
        _COMMON.format(runs=p.runs, decoded=p.decoded, first_step=1 << (runs_total.bit_length() - 1),
                       checks=_length_checks(plan) if plan.checked else ""),
    ]
    body = ["TempStorage& ts = *static_cast<TempStorage*>(temp);"]
    if p.values_passing == "value":
        body.append("const V values[1] = {value};")
    if p.lengths_passing == "value":
        body.append("const L lengths[1] = {length};")
    body.append("const unsigned long long total = prepare(ts, values, lengths, linear_tid);")
    body.append("constexpr long long LMAX = 0x7fffffffffffffffLL;")
    body.append("const long long total_s = total > (unsigned long long)LMAX ? LMAX : (long long)total;")
    if p.op == "window":
        if plan.checked:
            body += _window_checks(plan)
        body += _window_body(p)
    else:
        body += _into_body(p, vdt, _into_checks(plan) if plan.checked else [])
    return CppProvider(headers=HEADERS, decls="\n".join(decls), body="\n".join(body))


# Checked mode: NVIDIA's rules, tested after the run table is built and before
# anything is decoded or written.  Lengths: a positive prefix, then only zeros, with a
# total that the result's dtype holds; offsets >= 0; run_length_decode_into traps when
# the destination cannot take every decoded item instead of dropping some.

def _length_checks(plan: CallPlan) -> str:
    """Per-run checks, inside ``prepare`` after the scan (``offsets``: exclusive sums)."""
    signed = plan.params.length.kind == "i"
    lines = ["#pragma unroll", "for (int j = 0; j < R; ++j) {", "  const long long run = (long long)tid * R + j;"]
    if signed:
        lines.append("  " + check_item(plan, "lengths[j] < L(0)", "run_lengths", "run", "lengths[j]",
                                       "is negative; lengths must be >= 0"))
    # offsets[j] < total: some later run is non-empty.
    lines.append("  " + check_item(plan, "len[j] == Off(0) && offsets[j] < total", "run_lengths", "run", "lengths[j]",
                                   "is an empty run before a non-empty one; zero lengths may only trail"))
    lines.append("  " + check_item(plan, "Off(offsets[j] + len[j]) < offsets[j]", "run_lengths", "run", "lengths[j]",
                                   "makes the total decoded size overflow 64 bits"))
    lines.append("}")
    return "\n" + "\n".join("  " + line for line in lines)


def _total_checks(plan: CallPlan, dtype, rule: str) -> list:
    top = int(np.iinfo(dtype).max)
    if top >= 2**64 - 1:
        return []  # an unsigned 64-bit total always fits
    return [check_at_most(plan, "total decoded size", "total", f"{top}ULL", rule)]


def _window_checks(plan: CallPlan) -> list:
    p: RunLengthParams = plan.params
    checks = []
    if p.has_offset and not p.offset_unsigned:
        # A uint64 offset has no invalid value: NVIDIA's uint64 run lengths window anywhere up
        # to 2**64 - 1, past the total giving the defaults (it must not be read as negative).
        checks.append(check_range(plan, "decoded_window_offset", "window_offset", "0", "0x7fffffffffffffffLL"))
    if p.offset_dtype is not None:
        # NVIDIA decodes with offsets of this dtype and traps when the total outgrows it,
        # even where no offset is written.
        checks += _total_checks(plan, p.offset_dtype,
                                f"(the largest {p.offset_dtype}, decoded_offset_dtype)")
    if p.total_payload is not None:
        checks += _total_checks(plan, p.total_payload,
                                f"(the largest {p.total_payload}, total_decoded_size's dtype)")
    if p.return_total:
        checks += _total_checks(plan, _I64, "(the largest int64, return_total's dtype)")
    return checks


def _into_checks(plan: CallPlan) -> list:
    p: RunLengthParams = plan.params
    checks = []
    if p.has_offset:
        checks.append(check_range(plan, "destination_offset", "off", "0", "len"))
    checks.append(check_at_most(plan, "total decoded size", "total", "len - off",
                                "(the room in destination after destination_offset)"))
    if p.into_relative:
        if p.has_offset:
            checks.append(check_range(plan, "destination_offset", "off", "0", "rel_len"))
        checks.append(check_at_most(plan, "total decoded size", "total", "rel_len - off",
                                    "(the room in relative_offsets after destination_offset)"))
    dt = p.total_dtype
    checks += _total_checks(plan, dt, f"(the largest {dt.name}, the dtype of the returned total)")
    return checks


def _window_body(p: RunLengthParams) -> list:
    body = []
    if p.has_offset and p.offset_unsigned:
        body.append("const unsigned long long from = window_offset;")
    elif p.has_offset:
        body.append("const unsigned long long from = window_offset < 0 ? 0ULL : (unsigned long long)window_offset;")
    else:
        body.append("const unsigned long long from = 0ULL;")
    oob = "oob_default" if p.has_oob else "V(0)"
    emit = [f"decoded[i] = inside ? value : {oob};"]
    if p.relative is not None:
        rdt = p.relative
        # Past the total: all bits set, i.e. the maximum of an unsigned dtype and -1 of a
        # signed one (NVIDIA's convention).
        body.append(f"using Rel = {cxx_type(rdt)};")
        emit.append("relative[i] = inside ? Rel(index) : Rel(~0ULL);")
    body.append("decode(ts, total, sat_add(from, (unsigned long long)linear_tid * D),\n"
                "       [&](int i, bool inside, V value, unsigned long long index) {\n"
                + "\n".join("         " + e for e in emit) + "\n"
                + ("         (void)index;\n" if p.relative is None else "")
                + "       });")
    if p.total_payload is not None:
        body.append(_saturated("total_item[0]", p.total_payload))
    body.append("*total_out = total_s;" if p.return_total else "(void)total_s;")
    return body


def _saturated(target: str, dtype) -> str:
    """``target = total``, saturated at ``dtype``'s maximum (NVIDIA's totals must fit it)."""
    if dtype == _I64:
        return f"{target} = total_s;"
    top = int(np.iinfo(dtype).max)
    return f"{target} = ({cxx_type(dtype)})(total > {top}ULL ? {top}ULL : total);"


def _into_body(p: RunLengthParams, vdt, checks: list) -> list:
    nbytes = p.decoded * vdt.itemsize
    word = _word_type(nbytes, cxx_type(vdt))
    if not p.has_offset:
        off = "0LL"
    elif p.offset_unsigned:
        # Past 2**63 - 1 no destination is that long: saturated, the offset writes nothing
        # (checked mode has refused it above the length already, reporting the saturated value).
        off = "dst_offset > (unsigned long long)LMAX ? LMAX : (long long)dst_offset"
    else:
        off = "dst_offset"
    rel = []
    if p.into_relative:
        rel = [
            # The relative offsets' own range [rlo, rhi) in their own array.
            "const long long rroom = off >= rel_len ? 0LL : ((off < 0 && rel_len > LMAX + off) ? LMAX : rel_len - off);",
            "const long long rhi = total_s < rroom ? total_s : rroom;",
        ]
    emit = ("[&](int i, bool, V value, unsigned long long index) { items[i] = value; rel_items[i] = index; });"
            if p.into_relative else "[&](int i, bool, V value, unsigned long long) { items[i] = value; });")
    end = "(hi > rhi ? hi : rhi)" if p.into_relative else "hi"
    return [
        f"const long long off = {off};",
        "const long long len = dst_len;",
        *checks,
        # Decoded positions [lo, hi) land inside the destination; computed without
        # overflow for any offset and length.
        "const long long lo = off >= 0 ? 0LL : (off < -total_s ? total_s : -off);",
        "const long long room = off >= len ? 0LL : ((off < 0 && len > LMAX + off) ? LMAX : len - off);",
        "const long long hi = total_s < room ? total_s : room;",
        *rel,
        "constexpr long long W = (long long)BLOCK_THREADS * D;",
        f"using Word = {word};",
        "constexpr int WORDS = int(sizeof(V) * D / sizeof(Word));",
        f"for (long long w = lo / W * W; w < {end}; w += W) {{",
        "  V items[D];",
        *(["  unsigned long long rel_items[D];"] if p.into_relative else []),
        "  const long long first = w + (long long)linear_tid * D;",
        "  decode(ts, total, (unsigned long long)first,",
        f"         {emit}",
        *([f"  using Rel = {cxx_type(p.relative)};",
           "  #pragma unroll",
           "  for (int i = 0; i < D; ++i) {",
           "    const long long q = first + i;",
           "    if (q >= lo && q < rhi) rel_dst[off + q] = Rel(rel_items[i]);",
           "  }",
           "  if (w >= hi) continue;  // past the destination: only relative offsets were left"]
          if p.into_relative else []),
        "  if (w >= lo && w + W <= hi) {",
        "    // A whole window inside the destination: vector stores when its start is aligned.",
        "    V* out = out_dst + (off + first);",
        "    if (reinterpret_cast<unsigned long long>(out_dst + (off + w)) % alignof(Word) == 0) {",
        "      Word words[WORDS];",
        "      memcpy(words, items, sizeof(words));",
        "      #pragma unroll",
        "      for (int j = 0; j < WORDS; ++j) reinterpret_cast<Word*>(out)[j] = words[j];",
        "    } else {",
        "      #pragma unroll",
        "      for (int i = 0; i < D; ++i) out[i] = items[i];",
        "    }",
        "  } else {",
        "    #pragma unroll",
        "    for (int i = 0; i < D; ++i) {",
        "      const long long q = first + i;",
        "      if (q >= lo && q < hi) out_dst[off + q] = items[i];",
        "    }",
        "  }",
        "}",
        _saturated("*total_out", p.total_dtype),
    ]


SPECS = (
    OpSpec(name="run_length_decode", family="run_length", stub=run_length_decode, plan=plan_run_length_decode,
           explorer="run_length_decode",
           implied_payload_dtypes=(("relative_offsets", "decoded_offset_dtype", "uint32"),
                                   ("total_decoded_size", "decoded_offset_dtype", "uint32"))),
    OpSpec(name="run_length_decode_into", family="run_length", stub=run_length_decode_into,
           explorer="run_length_decode",
           plan=plan_run_length_decode_into, writes="destination"),
)
