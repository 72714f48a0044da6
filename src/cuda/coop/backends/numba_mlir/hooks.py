"""What registering the numba-cuda-mlir backend installs (backends/_deferred.py says why so
little): first-use typeof functions, the call-site rewrites, and the launch hook.

The launch hook (launch.py) cannot wait for a compile: a cooperative kernel's first launch
must already go through it (it marks the kernel launch-configuration specialized before the
compile inside that launch).  It is installed once numba-cuda-mlir's launch module
(``descriptor``) is imported, which ``from numba_cuda_mlir import cuda`` does and
``import numba_cuda_mlir`` alone does not (importing it here would cost 30 ms).

Also here, because it needs only the IR: the after-inference rewrite that drops
``_dtype_from=`` once typing has read it.
"""

from __future__ import annotations

from .._deferred import install_typeof_hooks, rewrite_proxy
from . import _compat as C

__all__ = ["install"]

ir = C.ir


def _call_site_rewrite():
    from .rewrite import TagCoopCallSites

    return TagCoopCallSites


def install(backend) -> None:
    """Install the hooks for ``backend`` (once per process: activate() makes one backend)."""
    from ..._registration import call_after_import
    from . import launch

    install_typeof_hooks(C.typeof_impl, backend)
    C.register_rewrite("before-inference")(
        rewrite_proxy("TagCoopCallSites", C.Rewrite, ir, backend, _call_site_rewrite))
    C.register_rewrite("after-inference")(DropDtypeSources)
    call_after_import("numba_cuda_mlir.descriptor", launch.install)


class DropDtypeSources(C.Rewrite):
    """Remove ``_dtype_from=`` once typing has read it.

    The variable it names may be defined after the ``ThreadData`` constructor (the
    first value written into the payload), which typing allows but lowering, which
    loads every named argument, does not; ThreadData's lowering never reads it.
    """

    def match(self, func_ir, block, typemap, calltypes):
        self.block = block
        self.hits = [inst.value for inst in block.body
                     if isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr)
                     and inst.value.op == "call" and any(k == "_dtype_from" for k, _ in inst.value.kws)]
        return bool(self.hits)

    def apply(self):
        for expr in self.hits:
            expr.kws = [(k, v) for k, v in expr.kws if k != "_dtype_from"]
        return self.block
