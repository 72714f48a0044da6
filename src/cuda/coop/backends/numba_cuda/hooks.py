"""What registering the classic numba-cuda backend installs (backends/_deferred.py says why
so little): first-use typeof functions, the payload-dtype rewrites, and the launches
numba-cuda 0.30 cannot make (clusters, dynamic scratch above 48 KiB), which a cooperative
kernel's first launch must already go through.

Also here, because it needs only the IR: the after-inference rewrite that points
``_dtype_from=`` at a null of its type.
"""

from __future__ import annotations

from ..._payloads import DTYPE_FROM
from .._deferred import install_typeof_hooks, rewrite_proxy
from .._launch_checks import check_launch_block
from . import _compat as C
from . import _compat_launch

__all__ = ["install"]

ir = C.ir
_NULL = "$coop_dtype_from_null."


def _payload_rewrite():
    from .rewrite import InferPayloadDtypes

    return InferPayloadDtypes


def install(backend) -> None:
    """Install the hooks for ``backend`` (once per process: activate() makes one backend)."""
    C.install_literal_argument_retry()  # a launch's first typing may ask for literal arguments
    install_typeof_hooks(C.typeof_impl, backend)
    C.register_rewrite("before-inference")(
        rewrite_proxy("InferPayloadDtypes", C.Rewrite, ir, backend, _payload_rewrite))
    C.register_rewrite("after-inference")(NullDtypeSources)
    # kernel[grid, block]: the block at the launch line; the first one may start NVRTC's PCH
    _compat_launch.install_coop_launches(check_launch_block, _first_configure)
    _compat_launch.install_uncached_coop_kernels()
    _compat_launch.install_context_hook()  # the first CUDA context may start NVRTC's PCH
    _compat_launch.install_definition_hook()  # so may the first cooperative kernel's definition, earlier


def _first_configure(dispatcher) -> None:
    """The process's first ``kernel[grid, block]``: its launch compiles next, so NVRTC's
    precompiled header can be built meanwhile (backends/_first_compile.py)."""
    from .._first_compile import before_first_compile
    from .._launch_checks import uses_coop

    try:
        cc = C.target_cc()  # the current device's, which the launch compiles for
    except Exception:  # noqa: BLE001 - no driver or device: the launch reports it
        cc = None
    before_first_compile(cc, cooperative=uses_coop(dispatcher), reason="first launch")


class NullDtypeSources(C.Rewrite):
    """Point ``_dtype_from=`` at a null of the same type, defined just before the call.

    The signature keeps the argument (numba-cuda selects the lowering by the typed argument
    types), and ThreadData's lowering never reads it; the null only spares lowering a
    variable that is defined after the constructor.
    """

    def match(self, func_ir, block, typemap, calltypes):
        self.func_ir, self.block, self.typemap = func_ir, block, typemap
        self.hits = {}
        for inst in block.body:
            if isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr) and inst.value.op == "call":
                source = dict(inst.value.kws).get(DTYPE_FROM)
                if source is not None and not source.name.startswith(_NULL):
                    self.hits[id(inst)] = source
        return bool(self.hits)

    def apply(self):
        body = []
        for inst in self.block.body:
            source = self.hits.get(id(inst))
            if source is not None:
                var = ir.Var(self.block.scope, f"{_NULL}{id(inst)}", inst.loc)
                null = ir.Expr.null(inst.loc)
                self.typemap[var.name] = self.typemap[source.name]
                self.func_ir._definitions[var.name] = [null]
                body.append(ir.Assign(null, var, inst.loc))
                inst.value.kws = [(k, var if k == DTYPE_FROM else v) for k, v in inst.value.kws]
            body.append(inst)
        self.block.body = body
        return self.block
