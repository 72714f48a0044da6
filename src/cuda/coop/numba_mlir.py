"""``import cuda.coop.numba_mlir as coop``: the cuda.coop API with the numba-cuda-mlir backend active.

Importing this module registers the backend (whatever the import order) and
adds the helpers that only make sense with this compiler, such as compiling a
kernel to cubin on a machine without a GPU.
"""

import cuda.coop as _coop
from cuda.coop import __all__ as _common_all

_coop.register("numba-cuda-mlir")

from numba_cuda_mlir.cuda import local, shared  # noqa: E402

from ._compiler_module import forward_coop_names  # noqa: E402
from ._enums import *  # noqa: E402,F401,F403  (NVIDIA's algorithm enums)
from ._enums import __all__ as _enums_all  # noqa: E402
from ._stateful import StatefulFunction  # noqa: E402
from .backends.numba_mlir.compile import KernelBinary, compile_cubin  # noqa: E402

# ``local`` and ``shared`` are numba-cuda-mlir's memory namespaces themselves
# (``local.array(shape, dtype, *, alignment=None)``), so a kernel written against
# this module alone needs no second import; a 1-D fixed-size ``local.array`` is a
# payload wherever a ThreadData is accepted.
__all__ = [*_common_all, "compile_cubin", "KernelBinary", "StatefulFunction", "local", "shared",
           *_enums_all]

__getattr__, __dir__ = forward_coop_names(globals(), __all__)
