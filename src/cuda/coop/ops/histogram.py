"""Histogram: count a block's integer samples into bins.

CUB: ``cub::BlockHistogram`` (``BLOCK_HISTO_ATOMIC``, ``BLOCK_HISTO_SORT``).

Every thread holds ``K`` samples; together the block's ``G*K`` samples are
counted into ``bins`` counters kept in shared memory, which come back as a
*striped* payload: thread ``t`` slot ``i`` holds the counter of bin
``t + i*G`` (``G`` threads in the block), so ``coop.store(block, out, counts,
algorithm="striped", valid_items=bins)`` writes the histogram in bin order.

What is counted is defined for every input, so a kernel never traps or writes
out of bounds because of its data:

- a sample is counted when ``0 <= sample < bins``; other samples (negative or
  too large) are ignored, like ``np.histogram`` ignores values outside its range;
- with ``valid_items=n`` only the first ``n`` samples of the tile count, in the
  order that ``layout=`` names (the layout the samples were loaded with);
- counters wrap modulo ``2**bits`` of ``counter_dtype``.

Across tiles, either add the returned payloads, or pass the running counters as
``accumulate=`` and the call adds the tile's counts into them in place (the
counters are staged in shared memory once per call either way).
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
    SharedMemoryLimitError,
    UnsupportedBlockShapeError,
    UnsupportedDtypeError,
)
from .._kernel_api import kernel_function
from . import _validate as v
from ._launch_rules import check_constant_valid_items
from ..core.binding import CallArgs, plans
from ..core.storage import MAX_SHARED_LIMIT
from ..core.cpp import check_range
from ..core.spec import (
    AbiOperand,
    AlgorithmSpec,
    CallPlan,
    CppProvider,
    LaunchFacts,
    OpSpec,
    PayloadArg,
    PayloadResult,
    StorageNeed,
    describe,
)

__all__ = ["histogram", "ALGORITHMS", "SAMPLE_DTYPES", "COUNTER_DTYPES", "LAYOUTS", "SPECS"]

_BLOCK = frozenset({"block"})

ALGORITHMS = {
    "block": {
        "atomic": AlgorithmSpec(name="atomic", cub="cub::BLOCK_HISTO_ATOMIC", groups=_BLOCK, uses_storage=True),
        "sort": AlgorithmSpec(name="sort", cub="cub::BLOCK_HISTO_SORT", groups=_BLOCK, uses_storage=True),
    },
}

SAMPLE_DTYPES = tuple(np.dtype(n) for n in (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"))
COUNTER_DTYPES = tuple(np.dtype(n) for n in ("int32", "uint32", "int64", "uint64"))
LAYOUTS = ("blocked", "striped")

HEADERS = ("cub/block/block_histogram.cuh",)

# Shared-memory atomics exist for int, unsigned int and unsigned long long; 64-bit
# signed counters use the unsigned ones (two's complement addition is the same).
_ATOMIC_COUNTER = {"int32": "int", "uint32": "unsigned int", "int64": "unsigned long long",
                   "uint64": "unsigned long long"}


# --------------------------------------------------------------------------------------
# Public stub
# --------------------------------------------------------------------------------------

@kernel_function
def histogram(block, samples, /, *, bins, bins_per_thread=None, counter_dtype=None, algorithm="atomic",
              valid_items=None, layout="blocked", accumulate=None, temp_storage=None):
    """Count the block's samples into ``bins`` bins; return striped counters.

    Parameters
    ----------
    block : coop.this_block()
        Any block shape (1-D, 2-D or 3-D); threads are ranked x-major.
    samples : coop.ThreadData or integer scalar
        ``K`` samples per thread (a scalar is one sample), of dtype int8, int16,
        int32, int64, uint8, uint16, uint32 or uint64.  Never modified.
    bins : int
        Number of bins, known at compile time.  Samples outside ``[0, bins)``
        are not counted.
    bins_per_thread : int, optional
        Counters per thread in the result, known at compile time.  The block
        must have at least ``bins / bins_per_thread`` threads.  Default: the
        ``items_per_thread`` of ``accumulate``, else 1.
    counter_dtype : dtype, optional
        int32 (the default; Python ``int`` means int32), uint32, int64 or
        uint64.  Default with ``accumulate``: its dtype.  Counters wrap on
        overflow.
    algorithm : {"atomic", "sort"}
        ``"atomic"``: shared-memory atomic increments (fast for most data).
        ``"sort"``: radix-sort the tile, then count run lengths (no atomics;
        steady cost when many samples fall into few bins).  Both give the same
        counts.
    valid_items : int, optional
        Runtime count of valid samples in the tile (uniform across the block);
        later samples are not counted.  Outside ``[0, tile size]`` the launch
        stops with a report (the run-time checks, on by default); with
        ``CUDA_COOP_CHECKED=0`` below 0 counts as 0.
    layout : {"blocked", "striped"}
        Which tile position slot ``i`` of thread ``t`` holds, for
        ``valid_items``: ``t*K + i`` (blocked, the default) or ``t + i*G``
        (striped: samples loaded with ``algorithm="striped"``).
    accumulate : coop.ThreadData, optional
        Running striped counters: the call adds this tile's counts into them,
        in place, and returns None.  Slots past ``bins`` are left unchanged.
    temp_storage : coop.TempStorage, optional
        Scratch for the counters (and the sort).  The call ends with a barrier
        (when a later call may reuse the scratch, see :ref:`temp-storage`) unless
        it is a ``TempStorage(auto_sync=False)``.  One histogram call
        repeated in a loop on storage that no other call uses needs no barrier
        between iterations (each call fences its own shared-memory phases, and
        a thread stages and reads back only its own counters), so
        ``auto_sync=False`` is safe there and saves one barrier per tile.

    Returns
    -------
    coop.ThreadData
        ``bins_per_thread`` counters of ``counter_dtype`` per thread, striped:
        every thread holds its counters after the call; slot ``i`` of thread
        ``t`` counts bin ``t + i*G`` and slots past ``bins`` hold 0.  None when
        ``accumulate`` is given.
    """


# --------------------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------------------

@record(kw_only=True)
class HistogramParams:
    """The identity of one generated histogram provider."""

    sample: np.dtype  # sample dtype
    samples_passing: str  # "payload" or "value"
    items: int  # samples per thread
    bins: int
    bins_per_thread: int
    counter: np.dtype  # counter dtype
    algorithm: str
    has_valid: bool  # valid_items given
    layout: str  # how bins are spread over threads: "blocked" or "striped"
    accumulate: bool  # accumulate= given: counters are updated in place, no result

    def __post_init__(self):
        dtype_fields(self, "sample", "counter")


def _counter_dtype(call, arg):
    return v.optional_dtype_choice(
        call, "counter_dtype", arg, COUNTER_DTYPES, kind="a counter type",
        hint=f"one of {', '.join(d.name for d in COUNTER_DTYPES)} (e.g. np.int32, the default)")


def _samples(call, samples):
    if isinstance(samples, PayloadArg):
        dtype = v.require_known_dtype(call, "samples", samples)
        items, passing = samples.items, "payload"
    else:
        arg = v.require_payload(call, "samples", samples, allow_scalar=True)
        dtype, items, passing = arg.dtype, 1, "value"
    if dtype not in SAMPLE_DTYPES:
        raise UnsupportedDtypeError(
            f"{call}: samples have dtype {dtype.name}, but histogram samples are bin indices; use "
            f"one of {', '.join(d.name for d in SAMPLE_DTYPES)} (convert float data to bin indices "
            "first, e.g. int32((x - lo) * scale))"
        )
    return dtype, items, passing


@plans(histogram)
def plan_histogram(args: CallArgs) -> CallPlan:
    call, bins, accumulate = args.call, args.bins, args.accumulate
    g = v.require_group(call, args.block, kinds=("block",))
    algo = v.choose_algorithm(call, args.algorithm, g, ALGORITHMS, "atomic")
    sample_dtype, items, passing = _samples(call, args.samples)
    if not v.is_given(bins):
        raise MissingArgumentError(f"{call}: bins= is required; pass the number of bins, e.g. bins=256")
    n_bins = v.require_literal_int(call, "bins", bins, minimum=1, maximum=2**31 - 1)
    bpt = v.optional_literal_int(call, "bins_per_thread", args.bins_per_thread, minimum=1, maximum=2**16)
    counter = _counter_dtype(call, args.counter_dtype)
    acc = None
    if v.is_given(accumulate):
        if not isinstance(accumulate, PayloadArg):
            raise InvalidArgumentTypeError(
                f"{call}: accumulate={describe(accumulate)} is not a coop.ThreadData of counters; pass "
                "the running counters, e.g. the result of an earlier coop.histogram() call"
            )
        acc = accumulate
        acc_dtype = v.require_known_dtype(call, "accumulate", acc)
        if acc_dtype not in COUNTER_DTYPES:
            raise UnsupportedDtypeError(
                f"{call}: accumulate has dtype {acc_dtype.name}, which is not a counter type; use "
                f"one of {', '.join(d.name for d in COUNTER_DTYPES)}"
            )
        if counter is not None and counter != acc_dtype:
            raise DtypeMismatchError(
                f"{call}: counter_dtype={counter.name} but accumulate has dtype {acc_dtype.name}; "
                "they must match: omit counter_dtype to use the accumulator's"
            )
        if bpt is not None and bpt != acc.items:
            raise ConflictingArgumentsError(
                f"{call}: bins_per_thread={bpt} but accumulate has {acc.items} items per thread; "
                "they must match: omit bins_per_thread to use the accumulator's"
            )
        counter, bpt = acc_dtype, acc.items
    counter = counter or np.dtype("int32")
    bpt = bpt or 1
    if n_bins * counter.itemsize > MAX_SHARED_LIMIT:
        # Before NVRTC: the counters alone fit in no GPU's shared memory (the kernel's plan
        # checks the target's own limit once every call's scratch is known).
        raise SharedMemoryLimitError(
            f"{call}: bins={n_bins} {counter.name} counters need {n_bins * counter.itemsize} bytes of shared "
            f"memory, above the {MAX_SHARED_LIMIT} bytes that any GPU gives a thread block; use fewer bins "
            f"(at most {MAX_SHARED_LIMIT // counter.itemsize} of {counter.name}) or a narrower counter_dtype"
        )
    vi = v.optional_int_operand(call, "valid_items", args.valid_items)
    lay = v.choose(call, "layout", args.layout, LAYOUTS, "blocked")
    ts = v.optional_temp_storage(call, args.temp_storage, g)
    operands = [AbiOperand("samples", passing, sample_dtype, "samples" if passing == "payload" else "sample")]
    if vi is not None:
        operands.append(AbiOperand("valid_items", "value", np.dtype("int64"), "valid_items"))
    if acc is not None:
        operands.append(AbiOperand("accumulate", "payload", counter, "counts"))
        result = None
    else:
        operands.append(AbiOperand("result", "out", counter, "counts"))
        result = PayloadResult(counter, bpt)
    params = HistogramParams(sample=sample_dtype, samples_passing=passing, items=items, bins=n_bins,
                             bins_per_thread=bpt, counter=counter, algorithm=algo.name,
                             has_valid=vi is not None, layout=lay, accumulate=acc is not None)
    return CallPlan(
        op="histogram", family="histogram", group=g, result=result, operands=tuple(operands),
        storage=StorageNeed(per="block"), temp_storage="temp_storage" if ts is not None else None,
        params=params, generate=_generate, check_launch=_check_launch,
        literal_valid_items=v.literal_int(args.valid_items),
    )


def _check_launch(plan: CallPlan, launch: LaunchFacts) -> None:
    p: HistogramParams = plan.params
    threads = launch.block_threads
    check_constant_valid_items(plan, launch)
    if threads * p.bins_per_thread < p.bins:
        need = -(-p.bins // threads)
        raise UnsupportedBlockShapeError(
            f"{plan.call}: bins={p.bins} with bins_per_thread={p.bins_per_thread} needs at least "
            f"{-(-p.bins // p.bins_per_thread)} threads, but the launch block {launch.block} has "
            f"{threads}; pass bins_per_thread={need} (each thread then holds {need} counters) or "
            "launch a larger block"
        )


# --------------------------------------------------------------------------------------
# C++ generation
# --------------------------------------------------------------------------------------

def _narrow_unsigned(max_value: int) -> str:
    if max_value <= 0xFF:
        return "unsigned char"
    if max_value <= 0xFFFF:
        return "unsigned short"
    return "unsigned int"


def needs_range_check(sample_dtype, bins: int) -> bool:
    """Whether some sample value of this dtype lies outside ``[0, bins)``."""
    dt = np.dtype(sample_dtype)
    return dt.kind == "i" or int(np.iinfo(dt).max) >= bins


def _generate(plan: CallPlan, launch: LaunchFacts) -> CppProvider:
    p: HistogramParams = plan.params
    sample_dt = p.sample
    range_check = needs_range_check(sample_dt, p.bins)
    guard = range_check or p.has_valid
    sort = p.algorithm == "sort"
    # The sort algorithm counts every sample it is given, so uncounted samples go
    # to one extra internal bin that is never read back.
    ibins = p.bins + 1 if sort and guard else p.bins
    if sort:
        # Radix-sorting narrow keys takes fewer passes: sort the bin index in the
        # smallest unsigned type that holds every key (a uint8 tile: 2 passes).
        max_key = ibins - 1
        if sample_dt.kind == "u" and not guard:
            max_key = min(max_key, int(np.iinfo(sample_dt).max))
        key, bin_t = _narrow_unsigned(max_key), cxx_type(p.counter)
    else:
        key, bin_t = cxx_type(sample_dt), _ATOMIC_COUNTER[p.counter.name]
    algo = ALGORITHMS["block"][p.algorithm]
    decls = [
        f"using Sample = {cxx_type(sample_dt)};",
        f"using Counter = {cxx_type(p.counter)};",
        f"using Bin = {bin_t};",
        f"using Key = {key};",
        f"constexpr int IPT = {p.items}, BINS = {p.bins}, IBINS = {ibins}, BPT = {p.bins_per_thread};",
        f"using Histo = cub::BlockHistogram<Key, BLOCK_X, IPT, IBINS, {algo.cub}, BLOCK_Y, BLOCK_Z>;",
    ]
    if sort:
        decls.append("struct TempStorage { typename Histo::TempStorage histo; Bin bins[IBINS]; };")
    else:
        # CUB's atomic algorithm has empty scratch: keep only the counters in shared
        # memory and give CUB a local (empty) TempStorage.
        decls.append("struct TempStorage { Bin bins[IBINS]; };")
    body = ["TempStorage& ts = *static_cast<TempStorage*>(temp);"]
    if p.samples_passing == "value":
        body.append("const Sample samples[1] = {sample};")
    # Stage the counters: striped, so each thread touches only its own bins here
    # and in the read-back (no barrier is needed between two histogram calls for
    # that part; the CUB composite in between is fenced by the two barriers).
    init = "Bin(counts[i])" if p.accumulate else "Bin(0)"
    body.append("#pragma unroll\nfor (int i = 0; i < BPT; ++i) {\n"
                "  const int bin = int(linear_tid) + i * BLOCK_THREADS;\n"
                f"  if (bin < BINS) ts.bins[bin] = {init};\n}}")
    if ibins > p.bins:
        body.append("if (linear_tid == 0) ts.bins[BINS] = Bin(0);")
    body.append("__syncthreads();")
    conds = []
    if p.has_valid:
        if plan.checked:
            body.append(check_range(plan, "valid_items", "valid_items", "0", "(long long)BLOCK_THREADS * IPT"))
        body.append("const long long vi = valid_items < 0 ? 0LL : valid_items;")
        pos = ("(long long)linear_tid * IPT + i" if p.layout == "blocked"
               else "(long long)linear_tid + (long long)i * BLOCK_THREADS")
        conds.append(f"{pos} < vi")
    if range_check:
        # Negative samples convert to huge unsigned values: one comparison.
        conds.append("(unsigned long long)samples[i] < (unsigned long long)BINS")
    counted = " && ".join(conds)
    if sort:
        value = f"({counted}) ? Key(samples[i]) : Key(BINS)" if guard else "Key(samples[i])"
        body.append(f"Key keys[IPT];\n#pragma unroll\nfor (int i = 0; i < IPT; ++i) keys[i] = {value};")
        body.append("Histo(ts.histo).Composite(keys, ts.bins);")
    elif guard:
        # CUB's atomic composite increments bins[sample] unchecked; this is the same
        # loop with the guard that keeps uncounted samples out of shared memory.
        body.append("#pragma unroll\nfor (int i = 0; i < IPT; ++i) {\n"
                    f"  if ({counted}) atomicAdd(ts.bins + (unsigned int)samples[i], Bin(1));\n}}")
    else:
        body.append("Key keys[IPT];\n#pragma unroll\nfor (int i = 0; i < IPT; ++i) keys[i] = samples[i];")
        body.append("typename Histo::TempStorage unused;\nHisto(unused).Composite(keys, ts.bins);")
    body.append("__syncthreads();")
    tail = "" if p.accumulate else " else counts[i] = Counter(0);"
    body.append("#pragma unroll\nfor (int i = 0; i < BPT; ++i) {\n"
                "  const int bin = int(linear_tid) + i * BLOCK_THREADS;\n"
                f"  if (bin < BINS) counts[i] = Counter(ts.bins[bin]);{tail}\n}}")
    return CppProvider(headers=HEADERS, decls="\n".join(decls), body="\n".join(body))


SPECS = (OpSpec(name="histogram", family="histogram", stub=histogram, plan=plan_histogram),)
