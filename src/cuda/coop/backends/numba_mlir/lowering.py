"""Lowering of cuda.coop calls in numba-cuda-mlir kernels.

The first cuda.coop operation lowered in a kernel plans the whole kernel: it
collects every cooperative call from the typed IR, asks the launch
configuration for the block shape, generates one provider per distinct call,
compiles them all in one NVRTC translation unit (or takes it from the cache),
places their scratch in shared memory and links the LTO-IR.  Each call then
becomes a call to its ``extern "C"`` provider, which LTO inlines.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass

import numpy as np

from ... import _env, _groups
from ..._diagnostics import raise_at
from ..._errors import ClusterLaunchRequiredError, CoopError, DynamicSharedArrayError, UnknownBlockDimensionError
from ..._payloads import TempStorage, ThreadData
from ...core import spec
from ...core.build import arch_for_cc, build_providers
from ...core.cpp import make_provider
from ...core.storage import DYNAMIC_ALIGNMENT, StorageUse, mixed_warp_widths, plan_storage
from ...ops._lookup import prefers_32_bit_shared_addresses, spec_of
from ...ops._prelude import PRELUDE_HEADERS
from ...ops._launch_rules import CLUSTER_MIN_CC
from ...ops._validate import require_launch_block
from .._final_link import COOP_LINK_PREFIX, note_provider_ltoir
from .._unpacking import check_payload_unpacking
from .._planning import flatten_results
from . import _compat as C
from .callbacks import resolve_callbacks
from .group_methods import is_block_sync
from .rewrite import HIDDEN_KEYWORDS, SITES
from .types import ThreadDataType, numba_type_of_dtype
from .typing import GROUP_BY_KEY, RESERVE_KEY, plan_call, reservation_of

types = C.types
_region_counter = itertools.count()
_KERNEL_STATE_ATTR = "_cuda_coop_kernel_state"
_LTOIR_OBJECTS: dict = {}  # build key -> LTOIR link item (identity keeps link de-duplication exact)


@dataclass
class _Call:
    target: str
    plan: spec.CallPlan
    site: int | None
    temp_storage: spec.TempStorageArg | None
    provider: object = None
    callback_items: tuple = ()  # LTO-IR of the user callbacks the provider calls


@dataclass
class _Reservation:
    """A ``storage.reserve(count, dtype, alignment=)`` call: a user shared array in ``temp_storage``."""

    target: str
    temp_storage: spec.TempStorageArg
    count: int
    dtype: np.dtype
    alignment: int  # effective: at least the element size
    loc: object = None
    function: str | None = None

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize


class KernelState:
    """What the first cooperative call in a kernel decided for all of them."""

    def __init__(self, lower):
        check_payload_unpacking(lower.func_ir, lower.fndesc.typemap, ir=C.ir, payload_type=ThreadDataType,
                                unpacks_arrays=False)
        self.calls: dict[str, _Call] = {}
        self.reservations: dict[str, _Reservation] = {}
        self.positions: dict[str, tuple] = {}  # call target -> (IR block label, index in block)
        self.regions: dict = {}  # region name -> (shared symbol, its MLIR type, byte offset in it)
        self.placement: dict = {}
        self.dynamic_shared_bytes = 0  # what the launch reserves; 0: all scratch is static
        self.ltoir = None
        self.build = None
        self._plan(lower)

    # -- collection -----------------------------------------------------------------
    def _collect(self, lower):
        typemap = lower.fndesc.typemap
        # Read when the kernel compiles: the provider cache keys on the generated C++,
        # which differs, but a kernel already compiled in this process keeps its mode.
        checked = _env.checked_mode()
        for label, block in lower.func_ir.blocks.items():
            for index, inst in enumerate(block.body):
                if not (isinstance(inst, C.ir.Assign) and isinstance(inst.value, C.ir.Expr)
                        and inst.value.op == "call"):
                    continue
                expr = inst.value
                fnty = typemap.get(expr.func.name)
                if isinstance(fnty, types.BoundFunction) and fnty.typing_key == RESERVE_KEY:
                    self._collect_reservation(lower, inst, fnty)
                    continue
                op_spec = spec_of(fnty.typing_key) if isinstance(fnty, types.Function) else None
                if op_spec is None:
                    continue
                argtys = [typemap[a.name] for a in expr.args]
                kwtys = {k: typemap[v.name] for k, v in expr.kws}
                site_ty = kwtys.get("_coop_site")
                site = site_ty.literal_value if isinstance(site_ty, types.IntegerLiteral) else None
                floats = SITES[site].float_literals if site in SITES else ()
                try:
                    plan = plan_call(op_spec, argtys, kwtys, float_literals=dict(floats))
                except CoopError as exc:
                    _raise_at_site(exc, site)
                if checked:
                    plan = plan.with_checks(_site_label(site))
                ts = None
                if plan.temp_storage is not None:
                    ts = _describe_kw(kwtys.get(plan.temp_storage))
                self.calls[inst.target.name] = _Call(inst.target.name, plan, site, ts)
                self.positions[inst.target.name] = (label, index)

    def _collect_reservation(self, lower, inst, fnty):
        typemap = lower.fndesc.typemap
        expr = inst.value
        fname = getattr(getattr(lower.func_ir, "func_id", None), "func_qualname", None)
        try:
            count, dtype, alignment = reservation_of(
                fnty.this, [typemap[a.name] for a in expr.args], {k: typemap[v.name] for k, v in expr.kws})
        except CoopError as exc:
            raise_at(exc, getattr(inst.loc, "filename", None), getattr(inst.loc, "line", None), fname)
        self.reservations[inst.target.name] = _Reservation(
            inst.target.name, fnty.this.descriptor(), count, dtype, max(alignment or 1, dtype.itemsize),
            inst.loc, fname)

    def _plan(self, lower):
        self._collect(lower)
        if not self.calls:
            if self.reservations:
                self._place_storage(lower)
            return
        first = next(iter(self.calls.values()))
        config = C.require_launch_config(lower)
        if config is None:
            if C.is_device_compile(lower):
                exc = UnknownBlockDimensionError(
                    f"{first.plan.call}: this device function is compiled on its own (inline='never'), "
                    "so the block shape of the kernel that calls it is unknown; cuda.coop calls must be "
                    "inlined into their kernel: drop inline='never' (device functions are inlined by "
                    "default) or pass inline='always'"
                )
            else:
                exc = UnknownBlockDimensionError(
                    f"{first.plan.call}: the thread block shape is not known when compiling this kernel; "
                    "cuda.coop specializes kernels per block shape. Launch it as kernel[grid, block](...), "
                    "or compile it with cuda.coop.numba_mlir.compile_cubin(kernel, argtypes, cc=..., "
                    "block=...)"
                )
            _raise_at_site(exc, first.site)
        block = tuple(config["block"]) + (1,) * (3 - len(tuple(config["block"])))
        try:
            require_launch_block(first.plan.call, block)
        except CoopError as exc:
            _raise_at_site(exc, first.site)
        chip = C.target_chip(lower)
        m = re.match(r"sm_(\d+?)(\d)([a-z]?)$", chip)
        cc = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        launch = spec.LaunchFacts(block=block, cc=cc, grid=_dims(config.get("grid")),
                                  cluster=_dims(config.get("cluster")))
        self._require_cluster_launch(launch)
        reused = self._implicit_scratch_reused(lower)
        # Logical warps of several widths on the implicit scratch: whole-warp barriers.
        mixed = mixed_warp_widths(
            c.plan.storage.width for c in self.calls.values()
            if c.temp_storage is None and c.plan.storage is not None and c.plan.storage.per != "block")
        # A descriptor with reservations is synchronized by the caller: auto_sync=True
        # is refused when the reservation is typed, and an omitted auto_sync means False.
        reserved_sites = {r.temp_storage.site for r in self.reservations.values()}
        providers = []
        for target, call in self.calls.items():
            auto_sync = True
            if call.temp_storage is not None and (call.temp_storage.auto_sync is False
                                                  or call.temp_storage.site in reserved_sites):
                auto_sync = False
            elif call.temp_storage is None and reused is not None and target not in reused:
                # The last use of the implicit scratch on every path: nothing can reuse it.
                auto_sync = False
            if auto_sync and self._block_barrier_follows(lower, target):
                # The user's own block.sync() (or cuda.syncthreads()) comes next: a second
                # barrier would order nothing more (NVIDIA's descriptors add none there).
                auto_sync = False
            try:
                symbols, items = resolve_callbacks(call.plan, cc) if call.plan.callbacks else ({}, [])
                call.callback_items = tuple(items)
                call.provider = make_provider(call.plan, launch, auto_sync=auto_sync, callbacks=symbols,
                                              whole_warp_barrier=mixed and call.temp_storage is None)
            except CoopError as exc:
                _raise_at_site(exc, call.site)
            providers.append(call.provider)
        unique = list({p.symbol: p for p in providers}.values())
        self.build = build_providers(unique, chip if m else arch_for_cc(cc), prelude_headers=PRELUDE_HEADERS)
        self.ltoir = _LTOIR_OBJECTS.get(self.build.key)
        if self.ltoir is None:
            note_provider_ltoir(self.build.ltoir, prefers_32_bit_addresses=any(
                prefers_32_bit_shared_addresses(p.plan.family) for p in unique))
            self.ltoir = C.LTOIR(self.build.ltoir, name=f"{COOP_LINK_PREFIX}{self.build.key[:16]}.ltoir")
            _LTOIR_OBJECTS[self.build.key] = self.ltoir
        self._place_storage(lower)
        C.drop_unused_device_variables(lower)

    def _require_cluster_launch(self, launch):
        """A cluster call needs a launch that names a cluster shape (compiled per shape).

        Below compute capability 9.0 the call's own launch check reports the target
        instead (no launch shape would help there).
        """
        if launch.cluster is not None or tuple(launch.cc) < CLUSTER_MIN_CC:
            return
        call = next((c for c in self.calls.values() if c.plan.group.kind == "cluster"), None)
        if call is None:
            return
        _raise_at_site(ClusterLaunchRequiredError(
            f"{call.plan.call}: group={call.plan.group.label} needs a thread-block cluster launch, but "
            "this kernel's launch names no cluster shape; launch it as kernel[grid, block, stream, "
            "sharedmem, cluster], e.g. kernel[grid, block, 0, 0, (2, 1, 1)] (grid a multiple of the "
            "cluster), or compile it with cuda.coop.numba_mlir.compile_cubin(kernel, argtypes, cc=(9, 0), "
            "block=..., cluster=(2, 1, 1))"
        ), call.site)

    def _block_barrier_follows(self, lower, target) -> bool:
        """Whether the statement after the call, in its IR block, is a block-wide barrier of the
        user's: ``block.sync()`` or a group of warps' ``sync()`` (inlined by then as a call of
        ``group_methods._block_sync_stub``) or ``cuda.syncthreads()``.  Only deletions and
        assignments of names, constants, globals and attributes may come between: anything
        else (a call, a store, arithmetic) keeps the call's own barrier, since it might touch
        the scratch (``TempStorage`` byte indexing) before the user's barrier."""
        label, index = self.positions[target]
        typemap = lower.fndesc.typemap
        ir = C.ir
        for inst in lower.func_ir.blocks[label].body[index + 1:]:
            if isinstance(inst, ir.Del):
                continue
            if not isinstance(inst, ir.Assign):
                return False
            value = inst.value
            if isinstance(value, (ir.Var, ir.Const, ir.Global, ir.FreeVar)):
                continue
            if isinstance(value, ir.Expr) and value.op == "getattr":
                continue
            if isinstance(value, ir.Expr) and value.op == "call" and not value.args and not value.kws:
                return is_block_sync(typemap.get(value.func.name))
            return False
        return False

    def _implicit_scratch_reused(self, lower):
        """The calls after which another cooperative call may reuse the implicit scratch.

        A call on the implicit scratch ends with a barrier so that the next call
        may overwrite it.  When no call on that scratch is reachable from this
        one (the last use on every path of the kernel), the barrier only costs
        time, so the provider omits it.  Calls with an explicit ``TempStorage``
        keep their documented ``auto_sync`` barrier.  Returns None (keep every
        barrier) for device functions: their callers are not visible here and may
        call them in a loop.
        """
        if C.is_device_compile(lower):
            return None
        users = [t for t, c in self.calls.items() if c.temp_storage is None and c.plan.storage is not None]
        blocks = lower.func_ir.blocks
        successors = {label: list(getattr(block.terminator, "get_targets", lambda: [])())
                      for label, block in blocks.items()}
        # reaches[label]: a user is reachable from the start of block `label`.
        reaches = {label: False for label in blocks}
        work = [self.positions[t][0] for t in users]
        predecessors: dict = {}
        for label, targets in successors.items():
            for t in targets:
                predecessors.setdefault(t, []).append(label)
        while work:
            label = work.pop()
            if reaches.get(label):
                continue
            reaches[label] = True
            work.extend(predecessors.get(label, ()))
        reused = set()
        for t in users:
            label, index = self.positions[t]
            later_here = any(self.positions[u][0] == label and self.positions[u][1] > index for u in users)
            if later_here or any(reaches.get(s, False) for s in successors.get(label, ())):
                reused.add(t)
        return reused

    def _place_storage(self, lower):
        uses = []
        located = []  # reservations, to locate a placement error when no call has scratch
        for name, res in self.reservations.items():
            uses.append(StorageUse(call=name, label="TempStorage.reserve()", instance_bytes=res.nbytes,
                                   instance_align=res.alignment, instances=1, temp_storage=res.temp_storage,
                                   reserved=True))
            located.append(res)
        for name, call in self.calls.items():
            if not call.provider.has_storage:
                continue
            size, align = self.build.layouts[call.provider.symbol]
            need = call.plan.storage
            uses.append(StorageUse(call=name, label=call.plan.call, instance_bytes=size,
                                   instance_align=align, instances=call.provider.storage_instances(),
                                   temp_storage=call.temp_storage,
                                   width=need.width if need.per != "block" else 0))
        if not uses:
            return
        kernel_id = next(_region_counter)
        user_static, user_dynamic = _user_shared_arrays(lower)

        def raise_at_first_user(exc):
            first = next((c for c in self.calls.values() if c.provider.has_storage), None)
            if first is not None:
                _raise_at_site(exc, first.site)
            res = located[0]
            raise_at(exc, getattr(res.loc, "filename", None), getattr(res.loc, "line", None), res.function)

        try:
            plan = plan_storage(uses, implicit_name=f"cuda_coop_scratch_{kernel_id}",
                                region_name_for_site=lambda s: f"cuda_coop_ts{s}_{kernel_id}",
                                user_shared_bytes=user_static, cc=_target_cc(lower),
                                allow_dynamic=not C.is_device_compile(lower))
        except CoopError as exc:
            raise_at_first_user(exc)
        if user_dynamic:
            self._refuse_dynamic_shared_array(lower, user_dynamic[0], plan)
        self.placement = plan.placement
        if plan.is_dynamic:
            # One extern backing placed after all static shared memory; regions at offsets.
            symbol = f"cuda_coop_dynamic_{kernel_id}"
            ty = C.workgroup_dynamic(lower, symbol, plan.dynamic_bytes, DYNAMIC_ALIGNMENT)
            for name, offset in plan.dynamic_offsets.items():
                self.regions[name] = (symbol, ty, offset)
            self.dynamic_shared_bytes = plan.dynamic_bytes
            return
        for region in plan.regions.values():
            # At least 16-byte alignment: vectorized CUB exchanges use 128-bit accesses.
            ty = C.workgroup_global(lower, region.name, region.size, max(region.align, 16))
            self.regions[region.name] = (region.name, ty, 0)

    def _refuse_dynamic_shared_array(self, lower, array, plan):
        loc, text = array
        first = next((c for c in self.calls.values() if c.provider.has_storage), None)
        where = SITES.get(first.site).loc if first is not None and first.site in SITES else None
        label = first.plan.call if first is not None else "TempStorage.reserve()"
        if first is None:
            where = next(iter(self.reservations.values())).loc
        at = f" at {_short_location(where)}" if where is not None else ""
        exc = DynamicSharedArrayError(
            f"{text}: a dynamic (size 0 or run-time sized) cuda.shared.array cannot share a kernel with "
            f"cooperative scratch ({label}{at}; {plan.dynamic_bytes or plan.total_bytes} bytes of "
            f"{'dynamic' if plan.is_dynamic else 'static'} shared memory): numba-cuda-mlir 0.6 places "
            "dynamic shared arrays over the kernel's static shared memory (numba-cuda-mlir PR #312), so "
            "they would overwrite each other; give the array a size known at compile time "
            "(cuda.shared.array(N, dtype)), or carve it from the cooperative storage with "
            "coop.TempStorage().reserve(N, dtype)"
        )
        fname = getattr(getattr(lower.func_ir, "func_id", None), "func_qualname", None)
        raise_at(exc, getattr(loc, "filename", None), getattr(loc, "line", None), fname)


def _dims(value):
    """A launch dimension as (x, y, z), or None."""
    if value is None:
        return None
    value = (value,) if isinstance(value, int) else tuple(value)
    return value + (1,) * (3 - len(value))


def _user_shared_arrays(lower):
    """The kernel's own ``cuda.shared.array(...)`` arrays: ``(static bytes, dynamic arrays)``.

    Static arrays (shapes known at compile time) share the static limit with the
    cooperative scratch; counting them lets the limit be reported with both sizes before
    ptxas rejects the kernel in its own words.  Dynamic arrays (shape 0, or a shape
    computed at run time: numba-cuda-mlir allocates both from the dynamic shared-memory
    base) are returned as ``(loc, text)`` so that the planner can refuse them.
    """
    typemap = lower.fndesc.typemap
    total, dynamic = 0, []
    for block in lower.func_ir.blocks.values():
        for inst in block.body:
            if not (isinstance(inst, C.ir.Assign) and isinstance(inst.value, C.ir.Expr)
                    and inst.value.op == "call"):
                continue
            fnty = typemap.get(inst.value.func.name)
            if getattr(fnty, "typing_key", None) is not C.cuda.shared.array:
                continue
            arrty = typemap.get(inst.target.name)
            expr = inst.value
            shape_var = expr.args[0] if expr.args else dict(expr.kws).get("shape")
            shape = _constant_shape(lower, shape_var)
            count = 1
            for extent in shape or ():
                count *= extent
            if shape is None or count == 0:
                dynamic.append((inst.loc, f"cuda.shared.array({_shape_text(shape, shape_var)}, ...)"))
                continue
            try:
                itemsize = np.dtype(C.as_dtype(arrty.dtype)).itemsize
            except Exception:
                continue
            total += count * itemsize
    return total, dynamic


def _constant_shape(lower, var):
    """A shape known at compile time as a tuple of ints (a constant, a global or a literal
    argument), or None."""
    if var is None:
        return None
    try:
        shape = lower.func_ir.infer_constant(var)
    except Exception:
        ty = lower.fndesc.typemap.get(var.name)
        items = getattr(ty, "types", None) if isinstance(ty, types.BaseTuple) else (ty,)
        values = [getattr(t, "literal_value", None) for t in items or ()]
        if not values or not all(isinstance(v, int) for v in values):
            return None
        return tuple(values)
    shape = shape if isinstance(shape, tuple) else (shape,)
    try:
        return tuple(int(extent) for extent in shape)
    except (TypeError, ValueError):
        return None


def _shape_text(shape, var) -> str:
    if shape is not None:
        return str(shape[0]) if len(shape) == 1 else str(shape)
    name = getattr(var, "name", "?")
    return name if name.isidentifier() else "<run-time size>"


def _short_location(loc) -> str:
    import os

    return f"{os.path.basename(getattr(loc, 'filename', '') or '?')}:{getattr(loc, 'line', '?')}"


def _target_cc(lower):
    m = re.match(r"sm_(\d+?)(\d)([a-z]?)$", C.target_chip(lower))
    return (int(m.group(1)), int(m.group(2))) if m else None


def _describe_kw(ty):
    from .types import describe_type

    d = describe_type(ty)
    return d if isinstance(d, spec.TempStorageArg) else None


def _site_label(site_id) -> tuple:
    """(file name, line, function): where a checked call's report says it is written."""
    site = SITES.get(site_id)
    if site is None:
        return ()
    filename, line = getattr(site.loc, "filename", None), getattr(site.loc, "line", None)
    if not filename:
        return ()
    return (os.path.basename(filename), int(line or 0), site.function or "")


def _raise_at_site(exc, site_id):
    site = SITES.get(site_id)
    if site is None:
        raise exc
    raise_at(exc, getattr(site.loc, "filename", None), getattr(site.loc, "line", None), site.function)


def kernel_state(lower) -> KernelState:
    state = getattr(lower, _KERNEL_STATE_ATTR, None)
    if state is None:
        state = KernelState(lower)
        setattr(lower, _KERNEL_STATE_ATTR, state)
    return state


# ----------------------------------------------------------------------------------------
# Operations
# ----------------------------------------------------------------------------------------

def _bound_vars(op_spec, args, kws):
    import inspect

    # Operands, then the controls that may also come by position (TopK's k).
    names = [p.name for p in op_spec.signature.parameters.values()
             if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    bound = dict(zip(names, args))
    bound.update({k: v for k, v in kws if k not in HIDDEN_KEYWORDS})
    return bound


def _lower_operation(lower, target, args, kws, op_spec):
    state = kernel_state(lower)
    call = state.calls[target.name]
    provider = call.provider
    plan = provider.plan  # the checked plan, or the unchecked one when it tests nothing (its ABI)
    bound = _bound_vars(op_spec, args, kws)
    operands, operand_types, results = [], [], []
    ptr = C.llvm_pointer_type()
    result_items = flatten_results(plan.result)
    for operand in plan.operands:
        if operand.passing in ("array", "payload"):
            value = lower.load_var(bound[operand.source])
            operands.append(C.memref_data_pointer(value))
            operand_types.append(ptr)
        elif operand.passing == "value" and not operand.by_reference:
            var = bound[operand.source]
            src_ty = lower.get_numba_type(var.name)
            dst_ty = numba_type_of_dtype(operand.dtype)
            value = lower.load_var(var)
            value = lower.lower_cast(types.unliteral(src_ty), dst_ty, value)
            operands.append(value)
            operand_types.append(C.mlir_type_of(lower, dst_ty))
        elif operand.passing == "scalar_in" or operand.by_reference:
            # A one-item local array passed by pointer; a 16-bit float "value" travels so too
            # (AbiOperand.by_reference).
            var = bound[operand.source]
            dst_ty = numba_type_of_dtype(operand.dtype)
            value = lower.lower_cast(types.unliteral(lower.get_numba_type(var.name)), dst_ty, lower.load_var(var))
            array = C.local_array(lower, dst_ty, 1, 16)
            C.store_element0(lower, dst_ty, array, value)
            operands.append(C.memref_data_pointer(array))
            operand_types.append(ptr)
        elif operand.passing == "extent":
            operands.append(C.array_extent(lower.load_var(bound[operand.source])))
            operand_types.append(C.mlir_type_of(lower, types.int64))
        elif operand.passing == "out":
            index = 0 if operand.source == "result" else int(operand.source.split(".")[1])
            res = result_items[index]
            items = res.items if isinstance(res, spec.PayloadResult) else 1
            array = C.local_array(lower, numba_type_of_dtype(res.dtype), items, 16)
            results.append((res, array))
            operands.append(C.memref_data_pointer(array))
            operand_types.append(ptr)
        else:  # pragma: no cover - a family declared an unknown passing mode
            raise AssertionError(f"unknown operand passing {operand.passing!r}")
    if provider.has_storage:
        region, offset, chunk = state.placement[target.name]
        symbol, region_ty, base_offset = state.regions[region]
        base = C.workgroup_pointer(lower, symbol, region_ty)
        offset += base_offset
        if offset:
            base = C.pointer_plus_bytes(base, offset)
        operands.append(base)
        operand_types.append(ptr)
        if plan.storage.per != "block":
            operands.append(C.i64_constant(chunk))
            operand_types.append(C.mlir_type_of(lower, types.int64))
    lower.link_external_item(state.ltoir)
    for item in call.callback_items:
        lower.link_external_item(item)
    C.call_void(lower, provider.symbol, operands, operand_types)
    if provider.block_barrier_after:
        C.block_barrier()
    if plan.result is None:
        lower.store_var(target, None)  # numba-cuda-mlir's value of a none-typed variable
        return
    values = []
    for res, array in results:
        if isinstance(res, spec.ScalarResult):
            values.append(C.load_element0(lower, numba_type_of_dtype(res.dtype), array))
        else:
            values.append(array)
    lower.store_var(target, values[0] if not isinstance(plan.result, spec.TupleResult) else tuple(values))


def register_operation(op_spec):
    """Register one operation's lowering (the backend does, when a kernel first uses it)."""

    def builder(lower, target, args, kws):
        _lower_operation(lower, target, args, kws, op_spec)

    builder.__name__ = f"lower_coop_{op_spec.name}"
    C.lowering_registry.lower(op_spec.stub, types.VarArg(types.Any))(builder)


# ----------------------------------------------------------------------------------------
# Descriptors and payloads
# ----------------------------------------------------------------------------------------

def _lower_this_block(lower, target, args, kws):
    lower.store_var(target, _groups.BlockGroup())


def _lower_this_warp(lower, target, args, kws):
    lower.store_var(target, _groups.WarpGroup(32))


def _lower_group_by(lower, target, args, kws):
    ty = lower.get_numba_type(target.name)
    if ty.kind == "warps":
        group = _groups.WarpsGroup(ty.width, exhaustive=ty.exhaustive)
    else:
        group = _groups.WarpGroup(ty.width, exhaustive=not _groups.is_partial_warp_width(ty.width))
    lower.store_var(target, group)


_DESCRIPTOR_GROUPS = {_groups.this_thread: _groups.SingleThreadGroup, _groups.this_grid: _groups.GridGroup,
                      _groups.this_cluster: _groups.ClusterGroup}


def _descriptor_lowering(cls):
    def lower_descriptor(lower, target, args, kws):
        lower.store_var(target, cls())

    return lower_descriptor


def _lower_thread_data(lower, target, args, kws):
    ty = lower.get_numba_type(target.name)
    alignment = max(ty.payload_alignment or 0, 16)
    lower.store_var(target, C.local_array(lower, ty.dtype, ty.items, alignment))


def _lower_reserve(lower, target, args, kws):
    state = kernel_state(lower)
    res = state.reservations[target.name]
    region, offset, _chunk = state.placement[target.name]
    symbol, region_ty, base_offset = state.regions[region]
    view = C.workgroup_view(lower, symbol, region_ty, base_offset + offset, res.count,
                            numba_type_of_dtype(res.dtype))
    lower.store_var(target, view)


def _lower_temp_storage(lower, target, args, kws):
    lower.store_var(target, lower.get_numba_type(target.name))


def _lower_items_per_thread(context, lower, target, value, attr=None):
    # numba's registry calls attribute-specific getattr lowerings without ``attr``.
    lower.store_var(target, lower.get_numba_type(value.name).items)


def install():
    """Register every lowering but the operations' (called once, by the backend's ``ready()``)."""
    any_args = types.VarArg(types.Any)
    C.lowering_registry.lower(_groups.this_block, any_args)(_lower_this_block)
    C.lowering_registry.lower(_groups.this_warp, any_args)(_lower_this_warp)
    C.lowering_registry.lower(GROUP_BY_KEY, any_args)(_lower_group_by)
    for factory, cls in _DESCRIPTOR_GROUPS.items():
        C.lowering_registry.lower(factory, any_args)(_descriptor_lowering(cls))
    C.lowering_registry.lower(ThreadData, any_args)(_lower_thread_data)
    C.lowering_registry.lower(TempStorage, any_args)(_lower_temp_storage)
    C.lowering_registry.lower(RESERVE_KEY, any_args)(_lower_reserve)
    C.lowering_registry.lower_getattr(ThreadDataType, "items_per_thread")(_lower_items_per_thread)
