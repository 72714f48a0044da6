"""``import cuda.coop.numba_cuda as coop``: the cuda.coop API with the classic numba-cuda backend.

Importing this module registers the backend for ``from numba import cuda`` kernels
(package numba-cuda 0.30; whatever the import order) and adds ``compile_cubin``, which
compiles such a kernel to cubin on a machine without a GPU.  docs/choosing_a_compiler.rst
says what this backend supports compared with numba-cuda-mlir's.
"""

import sys

import cuda.coop as _coop
from cuda.coop import __all__ as _common_all

_coop.register("numba-cuda")

from ._compiler_module import forward_coop_names  # noqa: E402
from ._enums import *  # noqa: E402,F401,F403  (NVIDIA's algorithm enums)
from ._enums import __all__ as _enums_all  # noqa: E402
from ._stateful import StatefulFunction  # noqa: E402
from .backends._binary import KernelBinary  # noqa: E402
from .backends.numba_cuda._compat import cuda as _cuda  # noqa: E402
from .backends.numba_cuda._compat import type_memory_namespaces as _type_memory_namespaces  # noqa: E402
from .backends.numba_cuda.compile import compile_cubin  # noqa: E402

# NVIDIA's ``coop.local`` / ``coop.shared`` spellings: numba-cuda's memory namespaces,
# typed in kernels as numba-cuda types its own.
local, shared = _cuda.local, _cuda.shared
_type_memory_namespaces(sys.modules[__name__])

__all__ = [*_common_all, "compile_cubin", "KernelBinary", "StatefulFunction", "local", "shared",
           *_enums_all]

__getattr__, __dir__ = forward_coop_names(globals(), __all__)
