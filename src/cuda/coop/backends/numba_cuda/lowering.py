"""Lowering of cuda.coop calls in classic numba-cuda kernels (llvmlite).

numba-cuda lowers one call at a time (``lower_builtin`` sees the call's signature and
values, not the kernel), so each call is planned on its own: the block shape comes
from the launch being compiled (or ``compile_cubin``'s), the core generates the call's
provider and NVRTC builds it (cached by its C++), the LTO-IR joins the kernel's link
items, and the call becomes a call of the provider's ``extern "C"`` symbol, which LTO
inlines.  A call that needs scratch gets a region of its own (``scratch.py``: static
``__shared__`` arrays within 48 KiB, one dynamic backing above), sized by the provider's
layout and ending in the provider's barrier (``auto_sync``), so calls never overlap in
shared memory; the numba-cuda-mlir backend, which sees the whole kernel, overlaps them
instead.
"""

from __future__ import annotations

from ... import _env
from ..._diagnostics import raise_at
from ..._errors import ClusterLaunchRequiredError, CoopError, UnknownBlockDimensionError
from ..._payloads import TempStorage, ThreadData
from ... import _groups
from ...core import spec
from ...core.build import arch_for_cc, build_providers
from ...core.cpp import make_provider
from ...core.storage import StorageUse, explicit_size_error, plan_storage
from ...ops._launch_rules import CLUSTER_MIN_CC
from ...ops._lookup import prefers_32_bit_shared_addresses
from ...ops._prelude import PRELUDE_HEADERS
from ...ops._validate import require_launch_block
from .._callbacks import resolve_callbacks
from .._final_link import note_provider_ltoir
from .._planning import flatten_results
from . import _compat as C
from .scratch import KernelScratch
from .types import ThreadDataType, describe_type, numba_type_of_dtype
from .typing import GROUP_BY_KEY, RESERVE_KEY, keyword_names, plan_call, reservation_of

types = C.types
ir = C.llvm_ir
_LTOIR_OBJECTS: dict = {}  # build key -> LTOIR (one object per build: the link de-duplicates by identity)


def _raise_here(exc):
    loc, function = C.lowering_location()
    raise_at(exc, getattr(loc, "filename", None), getattr(loc, "line", None), function)


def _launch(plan) -> spec.LaunchFacts:
    if C.compiling_device_function_alone():
        raise UnknownBlockDimensionError(
            f"{plan.call}: this device function is compiled on its own, once for every launch, so the "
            "block shape of the kernel that calls it is unknown; cuda.coop calls must be inlined into "
            "their kernel: declare it @cuda.jit(device=True, inline='always')")
    config = C.launch_config()
    if config is None:
        raise UnknownBlockDimensionError(
            f"{plan.call}: the thread block shape is not known when compiling this kernel; cuda.coop "
            "specializes kernels per block shape. Launch it as kernel[grid, block](...), or compile it with "
            "cuda.coop.numba_cuda.compile_cubin(kernel, argtypes, cc=..., block=...)")
    block = tuple(config["block"]) + (1,) * (3 - len(tuple(config["block"])))
    require_launch_block(plan.call, block)
    cc = config.get("cc") or _device_cc()
    grid = config.get("grid")
    grid = None if grid is None else tuple(grid) + (1,) * (3 - len(tuple(grid)))
    cluster = config.get("cluster")
    cluster = None if cluster is None else tuple(cluster) + (1,) * (3 - len(tuple(cluster)))
    if plan.group.kind == "cluster" and cluster is None and tuple(cc) >= CLUSTER_MIN_CC:
        # Below 9.0 the call's own launch check names the target instead.
        raise ClusterLaunchRequiredError(
            f"{plan.call}: group={plan.group.label} needs a thread-block cluster launch, but this kernel's "
            f"launch names no cluster shape; launch it as {C.CLUSTER_LAUNCH}, e.g. kernel[grid, block, 0, 0, "
            "(2, 1, 1)] (grid a multiple of the cluster), or compile it with cuda.coop.numba_cuda.compile_cubin("
            "kernel, argtypes, cc=(9, 0), block=..., cluster=(2, 1, 1))")
    return spec.LaunchFacts(block=block, cc=tuple(cc), grid=grid, cluster=cluster)


def _device_cc():
    # A launch-triggered compile targets the current device.
    return tuple(C.cuda.get_current_device().compute_capability)


def _site() -> tuple:
    loc, function = C.lowering_location()
    filename = getattr(loc, "filename", None)
    if not filename:
        return ()
    import os

    return (os.path.basename(filename), int(getattr(loc, "line", 0) or 0), function or "")


def _build(provider, cc):
    build = build_providers([provider], arch_for_cc(cc), prelude_headers=PRELUDE_HEADERS)
    item = _LTOIR_OBJECTS.get(build.key)
    if item is None:
        note_provider_ltoir(build.ltoir, prefers_32_bit_shared_addresses(provider.plan.family))
        item = C.LTOIR(build.ltoir, name=f"{C.COOP_LINK_PREFIX}{build.key[:16]}.ltoir")
        _LTOIR_OBJECTS[build.key] = item
    return build, item


def _scratch(context, builder, call_label, provider, build):
    """The call's own scratch region: (generic i8* base, per-warp chunk or None)."""
    size, align = build.layouts[provider.symbol]
    need = provider.plan.storage
    # Named by the provider's digest only: the provider's own name must not outlive LTO.
    name = f"cuda_coop_scratch_{provider.symbol.rsplit('_', 1)[-1]}"
    use = StorageUse(call=name, label=call_label, instance_bytes=size, instance_align=align,
                     instances=provider.storage_instances(), temp_storage=None,
                     width=need.width if need.per != "block" else 0)
    # One region, placed here; the kernel's scratch decides static or dynamic below.
    plan = plan_storage([use], implicit_name=name, region_name_for_site=lambda s: name, cc=provider.launch.cc)
    _region_name, offset, chunk = plan.placement[name]
    (reg,) = plan.regions.values()
    scratch = KernelScratch.of(context, builder, provider.launch.cc)
    region = scratch.region(name, reg.align)
    if call_label not in region["users"]:
        region["users"].append(call_label)
    region["size"] = max(region["size"], reg.size)
    scratch.settle(call_label)
    base = scratch.pointer(builder, name)
    if offset:
        base = builder.gep(base, [ir.Constant(ir.IntType(64), offset)])
    return base, (chunk if need.per != "block" else None)


def _explicit_scratch(context, builder, call_label, provider, build, ts):
    """A call's scratch in the user's ``coop.TempStorage``: one region per TempStorage,
    grown as its calls are lowered.  ``sharing="shared"``: every call's scratch at offset
    0, overlapped; ``"exclusive"``: each call a slice of its own, appended."""
    size, align = build.layouts[provider.symbol]
    need = provider.plan.storage
    use = StorageUse(call="call", label=call_label, instance_bytes=size, instance_align=align,
                     instances=provider.storage_instances(), temp_storage=ts,
                     width=need.width if need.per != "block" else 0)
    scratch = KernelScratch.of(context, builder, provider.launch.cc)
    region = scratch.region(f"cuda_coop_ts{ts.site}", ts.alignment or 1)
    used = region.setdefault("scratch", 0)
    offset = 0 if ts.sharing == "shared" else -(-used // use.instance_align) * use.instance_align
    region["scratch"] = max(used, offset + use.total_bytes)
    region["users"].append(call_label)
    _check_storage_size(ts, region)
    region["size"] = ts.size_in_bytes or region["scratch"]
    region["align"] = max(region["align"], use.instance_align)
    scratch.settle(call_label)
    base = scratch.pointer(builder, f"cuda_coop_ts{ts.site}")
    if offset:
        base = builder.gep(base, [ir.Constant(ir.IntType(64), offset)])
    return base, (use.chunk if need.per != "block" else None)


def _lower_reserve(context, builder, sig, args):
    """``storage.reserve(count, dtype, alignment=)``: a region of its own.

    numba-cuda-mlir places reservations inside the storage's region, after planning every
    call of the kernel; this backend lowers one call at a time, so a reservation gets a
    region of its own, which no call's scratch can overlap (the reuse it must survive).  It
    still counts toward the storage's ``size_in_bytes``, as there.  A reserve lowered
    twice (an inlined helper called twice) is two regions.
    """
    # numba lowers a bound method with the receiver in ``sig.recvr`` (the arguments follow).
    this, rest = (sig.recvr, sig.args) if sig.recvr is not None else (sig.args[0], sig.args[1:])
    names = keyword_names(sig)
    npos = len(rest) - len(names)
    ts = describe_type(this)
    try:
        count, dtype, alignment = reservation_of(this, list(rest[:npos]), dict(zip(names, rest[npos:])))
        alignment = max(alignment or 1, dtype.itemsize, 16)
        nbytes = count * dtype.itemsize
        scratch = KernelScratch.of(context, builder, _launch_cc())
        prefix = f"cuda_coop_ts{ts.site}_reserve"
        name = f"{prefix}{sum(1 for r in scratch.regions if r.startswith(prefix))}"
        region = scratch.region(name, alignment)
        region.update(size=nbytes, users=["TempStorage.reserve()"])
        storage = scratch.region(f"cuda_coop_ts{ts.site}", ts.alignment or 1)
        storage["reserved"] = storage.get("reserved", 0) + -(-nbytes // alignment) * alignment
        _check_storage_size(ts, storage)
        scratch.settle("TempStorage.reserve()")
        base = scratch.pointer(builder, name)
    except CoopError as exc:
        _raise_here(exc)
    return C.array_over(context, builder, sig.return_type, count, base)


def _launch_cc():
    config = C.launch_config()
    return (config or {}).get("cc") or _device_cc()


def _check_storage_size(ts, storage):
    """``size_in_bytes`` holds the scratch of the storage's calls plus its reservations."""
    needed = storage.get("scratch", 0) + storage.get("reserved", 0)
    if ts.size_in_bytes is not None and needed > ts.size_in_bytes:
        users = list(storage["users"]) + (["TempStorage.reserve()"] if storage.get("reserved") else [])
        raise explicit_size_error(ts, users, needed)


def _pointer_to(context, dtype):
    return context.get_data_type(numba_type_of_dtype(dtype)).as_pointer()


def _lower_operation(context, builder, sig, args, op_spec):
    names = keyword_names(sig)
    npos = len(sig.args) - len(names)
    kwtys = dict(zip(names, sig.args[npos:]))
    try:
        plan = plan_call(op_spec, list(sig.args[:npos]), kwtys)
        if _env.checked_mode():
            plan = plan.with_checks(_site())
        launch = _launch(plan)
        symbols, callback_items = resolve_callbacks(plan, launch.cc, C) if plan.callbacks else ({}, [])
        ts = None
        if plan.temp_storage is not None and plan.temp_storage in kwtys:
            ts = describe_type(kwtys[plan.temp_storage])
            ts = ts if isinstance(ts, spec.TempStorageArg) else None
        provider = make_provider(plan, launch, auto_sync=ts is None or ts.auto_sync is not False,
                                 callbacks=symbols)
        plan = provider.plan  # the checked plan, or the unchecked one when it tests nothing (its ABI)
        build, item = _build(provider, launch.cc)
    except CoopError as exc:
        _raise_here(exc)
    # Bound arguments by the stub's parameter names: operands, then the controls by name.
    import inspect

    params = [p.name for p in op_spec.signature.parameters.values()
              if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    bound = dict(zip(params, zip(sig.args[:npos], args[:npos])))
    bound.update(zip(names, zip(sig.args[npos:], args[npos:])))
    operands, results = [], []
    result_items = flatten_results(plan.result)
    for operand in plan.operands:
        if operand.passing in ("array", "payload"):
            ty, value = bound[operand.source]
            ptr = C.array_data(context, builder, ty, value)
            operands.append(builder.bitcast(ptr, _pointer_to(context, operand.dtype)))
        elif operand.passing == "value" and not operand.by_reference:
            ty, value = bound[operand.source]
            dst = numba_type_of_dtype(operand.dtype)
            operands.append(context.cast(builder, value, ty, dst))
        elif operand.passing == "scalar_in" or operand.by_reference:
            ty, value = bound[operand.source]
            dst = numba_type_of_dtype(operand.dtype)
            slot = C.cgutils.alloca_once(builder, context.get_data_type(dst))
            builder.store(context.get_value_as_data(builder, dst, context.cast(builder, value, ty, dst)), slot)
            operands.append(slot)
        elif operand.passing == "extent":
            ty, value = bound[operand.source]
            operands.append(C.array_extent(context, builder, ty, value))
        elif operand.passing == "out":
            index = 0 if operand.source == "result" else int(operand.source.split(".")[1])
            res = result_items[index]
            items = res.items if isinstance(res, spec.PayloadResult) else 1
            arrty = ThreadDataType(numba_type_of_dtype(res.dtype), items)
            value, data = C.local_array(context, builder, arrty, items, 16)
            results.append((res, arrty, value, data))
            operands.append(data)
        else:  # pragma: no cover - a family declared an unknown passing mode
            raise AssertionError(f"unknown operand passing {operand.passing!r}")
    if provider.has_storage:
        try:
            if ts is not None:
                base, chunk = _explicit_scratch(context, builder, plan.call, provider, build, ts)
            else:
                base, chunk = _scratch(context, builder, plan.call, provider, build)
        except CoopError as exc:
            _raise_here(exc)
        operands.append(base)
        if chunk is not None:
            operands.append(ir.Constant(ir.IntType(64), chunk))
    C.add_linking_file(context, item)
    for callback_item in callback_items:
        C.add_linking_file(context, callback_item)
    fn = C.declare_void(builder, provider.symbol, [v.type for v in operands])
    builder.call(fn, operands)
    if provider.block_barrier_after:
        C.block_barrier(builder)
    if plan.result is None:
        return context.get_dummy_value()
    values = []
    for res, arrty, value, data in results:
        if isinstance(res, spec.ScalarResult):
            values.append(context.get_data_as_value(builder, numba_type_of_dtype(res.dtype), builder.load(data)))
        else:
            values.append(value)
    if isinstance(plan.result, spec.TupleResult):
        return context.make_tuple(builder, sig.return_type, values)
    return values[0]


def register_operation(op_spec):
    """Register one operation's lowering (the backend does, when a kernel first uses it)."""

    def impl(context, builder, sig, args):
        return _lower_operation(context, builder, sig, args, op_spec)

    impl.__name__ = f"lower_coop_{op_spec.name}"
    C.lower_builtin(op_spec.stub, types.VarArg(types.Any))(impl)


def _lower_dummy(context, builder, sig, args):
    return context.get_dummy_value()


def _lower_thread_data(context, builder, sig, args):
    ty = sig.return_type
    value, _data = C.local_array(context, builder, ty, ty.items, max(ty.payload_alignment or 0, 16))
    return value


def _lower_items_per_thread(context, builder, typ, value):
    return context.get_constant(types.intp, typ.items)


def install():
    """Register every lowering but the operations' (called once, by the backend's ``ready()``)."""
    any_args = types.VarArg(types.Any)
    for factory in (_groups.this_block, _groups.this_warp, _groups.this_thread, _groups.this_grid,
                    _groups.this_cluster, TempStorage):
        C.lower_builtin(factory, any_args)(_lower_dummy)
    C.lower_builtin(GROUP_BY_KEY, types.Any, any_args)(_lower_dummy)
    C.lower_builtin(RESERVE_KEY, types.Any, any_args)(_lower_reserve)
    C.lower_builtin(ThreadData, any_args)(_lower_thread_data)
    C.lower_getattr(ThreadDataType, "items_per_thread")(_lower_items_per_thread)
