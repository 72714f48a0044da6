"""Where a classic numba-cuda kernel's cooperative scratch lives.

Each call's scratch, each ``coop.TempStorage`` and each ``reserve()`` is a region.  While
the regions and the kernel's own ``cuda.shared.array`` arrays fit in the 48 KiB of static
shared memory, each region is a ``__shared__`` array of its own.  Above that, all regions
move into one dynamic shared-memory backing that the launch reserves (``_compat``'s launch
hook), as on numba-cuda-mlir, up to the target GPU's opt-in limit.

numba-cuda lowers one call at a time, so the kernel's total is known only after its last
call.  A region's address is therefore emitted as a choice between its static array and
its offset in the dynamic backing, and the choice, the offsets and the static sizes are
settled again after every change and once more when the function's body is lowered
(``finish_function``, when the kernel's own shared arrays are all known): llvmlite prints
the module only then, so the values settled last are the ones compiled, and NVVM folds the
choice away.
"""

from __future__ import annotations

from ..._diagnostics import raise_at
from ..._errors import CoopError, DynamicSharedArrayError
from ...core.storage import DYNAMIC_ALIGNMENT, STATIC_SHARED_LIMIT, Region, StoragePlan, place_regions
from .._unpacking import check_payload_unpacking
from . import _compat as C

__all__ = ["KernelScratch", "DYNAMIC_BACKING", "dynamic_array_error", "finish_function"]

DYNAMIC_BACKING = "cuda_coop_dynamic_scratch"
_STATE_ATTR = "_cuda_coop_scratch"


class KernelScratch:
    """The cooperative regions of one kernel's LLVM module, and where they live."""

    def __init__(self, context, builder, cc):
        self.context = context
        self.module = builder.module
        self.function = builder.function.name
        self.cc = tuple(cc)
        self.regions: dict[str, dict] = {}  # name -> size, align, users (and reserved, for a TempStorage)
        self._globals: dict = {}  # name -> its static __shared__ array
        self._offsets: dict = {}  # name -> its offset in the dynamic backing (a late constant)
        self._dynamic = C.LateConstant(C.llvm_ir.IntType(1), 0)
        self._dynamic_bytes = C.LateConstant(C.llvm_ir.IntType(32), 0)
        self.dynamic_bytes = 0

    @classmethod
    def of(cls, context, builder, cc) -> "KernelScratch":
        state = getattr(builder.module, _STATE_ATTR, None)
        if state is None:
            state = cls(context, builder, cc)
            setattr(builder.module, _STATE_ATTR, state)
        return state

    def region(self, name: str, align: int = 16) -> dict:
        return self.regions.setdefault(name, {"size": 0, "align": max(align, 16), "users": []})

    def pointer(self, builder, name: str):
        """The region's base as a generic ``i8*`` (call ``settle`` after sizing it)."""
        region = self.regions[name]
        gv = self._globals.get(name)
        if gv is None:
            gv = self._globals[name] = C.shared_global_variable(self.module, name, max(region["size"], 1),
                                                                region["align"])
        static = C.generic_i8(builder, gv)
        offset = self._offsets.setdefault(name, C.LateConstant(C.llvm_ir.IntType(64), 0))
        backing = C.dynamic_shared_base(builder, DYNAMIC_BACKING, DYNAMIC_ALIGNMENT)
        # A launch that did not reserve the backing (a kernel rebuilt from numba-cuda's disk
        # cache skips the launch hook) stops here instead of writing past the block's memory.
        C.trap_if(builder, builder.and_(self._dynamic, builder.icmp_unsigned(
            "<", C.dynamic_shared_size(builder), self._dynamic_bytes)))
        return builder.select(self._dynamic, builder.gep(backing, [offset]), static)

    def settle(self, label: str) -> None:
        """Decide static or dynamic for the regions as they are now (the core's rule, as on
        numba-cuda-mlir); raise if they cannot fit."""
        own_static, own_dynamic = C.user_shared_arrays(self.context, self.module)
        plan = place_regions(
            StoragePlan(regions={name: Region(name, r["size"], r["align"], list(r["users"]))
                                 for name, r in self.regions.items()}, placement={}),
            user_shared_bytes=own_static, cc=self.cc)
        if plan.is_dynamic and own_dynamic:
            users = ", ".join(sorted({u for r in self.regions.values() for u in r["users"]}))
            raise dynamic_array_error(label, users, plan.dynamic_bytes, own_dynamic)
        for name, offset in plan.dynamic_offsets.items():
            self._offsets.setdefault(name, C.LateConstant(C.llvm_ir.IntType(64), 0)).constant = offset
        self._set(dynamic=plan.is_dynamic, dynamic_bytes=plan.dynamic_bytes)

    def _set(self, *, dynamic: bool, dynamic_bytes: int) -> None:
        self._dynamic.constant = int(dynamic)
        self._dynamic_bytes.constant = dynamic_bytes
        self.dynamic_bytes = dynamic_bytes
        for name, gv in self._globals.items():
            # Dynamic: the static arrays are no longer addressed; one byte keeps them valid.
            C.resize_shared_global(gv, 1 if dynamic else max(self.regions[name]["size"], 1),
                                   self.regions[name]["align"])
        C.DYNAMIC_SCRATCH_BYTES[self.function] = dynamic_bytes


def dynamic_array_error(where: str, users: str, scratch_bytes: int, arrays) -> DynamicSharedArrayError:
    return DynamicSharedArrayError(
        f"{where}: a dynamic cuda.shared.array(0, ...) (numba-cuda's {', '.join(arrays)}) cannot share a "
        f"kernel with cooperative scratch "
        f"above the {STATIC_SHARED_LIMIT}-byte static limit ({users}: {scratch_bytes} bytes, which move to "
        "dynamic shared memory): every dynamic shared array starts at the same address, and numba-cuda "
        "sizes it by the launch's whole dynamic shared memory, so they would overwrite each other; give "
        "the array a size known at compile time (cuda.shared.array(N, dtype)), or carve it from the "
        "cooperative storage with coop.TempStorage().reserve(N, dtype)")


def finish_function(lower) -> None:
    """After numba-cuda lowered a function's whole body: settle its scratch once more, now
    that the kernel's own shared arrays are all known (one declared after the last
    cooperative call can tip the kernel into dynamic shared memory, or be a dynamic array
    that the backing would overlap).  Errors name the kernel's ``def`` line."""
    from .types import ThreadDataType

    # numba-cuda unpacks an array with a run-time length check a kernel cannot report.
    check_payload_unpacking(lower.func_ir, lower.fndesc.typemap, ir=C.ir, payload_type=ThreadDataType,
                            unpacks_arrays=True)
    scratch = getattr(lower.module, _STATE_ATTR, None)
    if scratch is None or not scratch.regions:
        return
    filename, line, qualname = C.function_location(lower)
    try:
        scratch.settle(f"kernel {qualname or lower.fndesc.unique_name!r}")
    except CoopError as exc:
        raise_at(exc, filename, line, qualname)
