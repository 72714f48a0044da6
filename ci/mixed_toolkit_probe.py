"""Run inside an environment of one CUDA major that also holds the other major's libraries.

    python ci/mixed_toolkit_probe.py MAJOR local|global|none

Loads the other major's NVRTC and nvJitLink first, as another package would
(``local``: RTLD_LOCAL, as CuPy's extension modules do; ``global``: RTLD_GLOBAL,
into the process's symbol scope; ``none``: not at all), then compiles a
cooperative kernel to cubin.  Prints one ``RESULT`` line: ``OK`` with the
toolchain and the NVRTC / nvJitLink / NVVM files in the process, or ``MISMATCH``
with cuda-coop's ToolkitMismatchError.
"""

from __future__ import annotations

import ctypes
import os
import site
import sys
from pathlib import Path

OTHER_WHEEL_FILES = {  # the other major's libraries, relative to a site-packages
    12: ("nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cu13/lib/libnvJitLink.so.13"),
    13: ("nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "nvidia/nvjitlink/lib/libnvJitLink.so.12"),
}


def loaded_toolkit_files() -> list:
    names = ("libnvrtc.so", "libnvJitLink.so", "libnvvm.so")
    return sorted({ln.split()[-1] for ln in open("/proc/self/maps") if any(n in ln for n in names)})


def main() -> int:
    major, mode = int(sys.argv[1]), sys.argv[2]
    if mode != "none":
        flags = os.RTLD_NOW | (os.RTLD_GLOBAL if mode == "global" else os.RTLD_LOCAL)
        for rel in OTHER_WHEEL_FILES[major]:
            path = next((Path(s) / rel for s in site.getsitepackages() if (Path(s) / rel).is_file()), None)
            if path is None:
                print(f"RESULT SETUP-ERROR: {rel} is not installed here")
                return 2
            ctypes.CDLL(str(path), mode=flags)
    from numba_cuda_mlir import cuda
    from numba_cuda_mlir.numba_cuda import types

    import cuda.coop.numba_mlir as coop
    from cuda.coop.core.toolchain import toolchain

    @cuda.jit
    def copy(source, destination):
        items = coop.ThreadData(4)
        coop.load(coop.this_block(), source, items)
        coop.store(coop.this_block(), destination, items)

    try:
        binary = coop.compile_cubin(copy, (types.int32[::1], types.int32[::1]), cc=(9, 0), block=128)
    except coop.ToolkitMismatchError as exc:
        print(f"RESULT MISMATCH {exc}")
        return 0
    from cuda.bindings import nvvm

    tc = toolchain()
    assert binary.cubin[:4] == b"\x7fELF"
    print(f"RESULT OK nvrtc={tc.nvrtc_version[0]} nvjitlink={tc.nvjitlink_version[0]} "
          f"nvvm_ir={nvvm.ir_version()} :: {tc.describe()}")
    for path in loaded_toolkit_files():
        print(f"  mapped: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
