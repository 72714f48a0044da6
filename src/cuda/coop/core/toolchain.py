"""The toolkit cuda-coop compiles with: NVRTC, nvJitLink and the CCCL headers.

All three must come from one CUDA major: NVRTC 12.x with CCCL 2.x, NVRTC 13.x
with CCCL 3.x.  cuda-pathfinder finds the CCCL headers of the environment (the
``nvidia-cuda-cccl`` wheel, a conda ``cuda-cccl``, then ``CUDA_HOME`` and the
system toolkit).  A machine with a system CUDA 13 and a CUDA 12 environment is
the trap this module exists for: pathfinder may fall back to the system's CCCL 3,
which NVRTC 12 cannot compile, or which silently tests the wrong headers.  Such
a mismatch is an error, never a fallback.  ``CUDA_COOP_CCCL_ROOT`` points at
other CCCL headers on purpose and skips the major-version check.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

from .records import record
from .. import _env
from .._errors import HeaderResolutionError, ToolkitMismatchError

__all__ = ["Toolchain", "toolchain", "nvrtc_architectures", "parse_cccl_version", "cccl_include_dirs_for_root"]

_VERSION_H = Path("cuda") / "std" / "__cccl" / "version.h"


@record
class Toolchain:
    nvrtc_version: tuple
    nvjitlink_version: tuple
    cccl_version: tuple  # (major, minor, patch)
    cccl_include_dirs: tuple  # of str, in search order
    cccl_found_via: str
    nvrtc_path: str  # "<file> (found via <how>)"
    nvjitlink_path: str = ""
    cuda_include_dir: str = ""  # the CUDA runtime headers (cuda_fp16.h, ...) of NVRTC's toolkit
    cudart_version: tuple = ()

    @property
    def cuda_major(self) -> int:
        return self.nvrtc_version[0]

    @property
    def cccl_version_str(self) -> str:
        return ".".join(map(str, self.cccl_version))

    def identity(self) -> str:
        """Everything about the toolkit that can change generated code (cache key part)."""
        parts = [
            f"nvrtc={self.nvrtc_version}",
            f"nvjitlink={self.nvjitlink_version}",
            f"cccl={self.cccl_version}",
            f"cccl_dirs={self.cccl_include_dirs}",
            f"cccl_stamp={_version_header_stamp(self.cccl_include_dirs)}",
            f"cudart={self.cudart_version}",
        ]
        return "\n".join(parts)

    @property
    def include_dirs(self) -> tuple:
        """NVRTC's include path: the CCCL headers first, then the CUDA runtime headers."""
        return (*self.cccl_include_dirs, self.cuda_include_dir) if self.cuda_include_dir else self.cccl_include_dirs

    def describe(self) -> str:
        cudart = ".".join(map(str, self.cudart_version)) or "?"
        return (f"NVRTC {'.'.join(map(str, self.nvrtc_version))} ({self.nvrtc_path}), nvJitLink "
                f"{'.'.join(map(str, self.nvjitlink_version))} ({self.nvjitlink_path}), CCCL {self.cccl_version_str} "
                f"({self.cccl_include_dirs[0]}, found via {self.cccl_found_via}), CUDA headers "
                f"{cudart} ({self.cuda_include_dir})")


def parse_cccl_version(include_dir) -> tuple:
    path = Path(include_dir) / _VERSION_H
    try:
        text = path.read_text()
    except OSError:
        raise HeaderResolutionError(
            f"no CCCL version header at {path}; the directory is not a CCCL include root"
        ) from None
    m = re.search(r"#\s*define\s+CCCL_VERSION\s+(\d+)", text)
    if not m:
        raise HeaderResolutionError(
            f"{path} does not define CCCL_VERSION; point CUDA_COOP_CCCL_ROOT at a CCCL include root")
    n = int(m.group(1))
    return (n // 1000000, (n // 1000) % 1000, n % 1000)


def _version_header_stamp(dirs) -> str:
    # The version header's content and size stand for the header tree: hashing
    # 27 MB of headers per process would cost more than an NVRTC compile.
    for d in dirs:
        p = Path(d) / _VERSION_H
        if p.is_file():
            return hashlib.sha256(p.read_bytes()).hexdigest()[:16]
    return "none"


def cccl_include_dirs_for_root(root: Path) -> tuple:
    """Include dirs for a CCCL root: an include dir, or a CCCL source checkout."""
    root = Path(root)
    candidates = [
        (root,),
        (root / "include",),
        (root / "include" / "cccl",),
        (root / "libcudacxx" / "include", root / "cub", root / "thrust"),  # source checkout
    ]
    for dirs in candidates:
        if all(d.is_dir() for d in dirs) and any((d / _VERSION_H).is_file() for d in dirs) and any(
            (d / "cub" / "block" / "block_load.cuh").is_file() for d in dirs
        ):
            return tuple(str(d) for d in dirs)
    raise HeaderResolutionError(
        f"CUDA_COOP_CCCL_ROOT={str(root)!r} is not a CCCL include root (expected "
        "cub/block/block_load.cuh and cuda/std/__cccl/version.h under it, under include/, or a "
        "CCCL source checkout); fix the path or unset the variable"
    )


def _nvrtc_version() -> tuple:
    from cuda.bindings import nvrtc

    err, major, minor = nvrtc.nvrtcVersion()
    return (int(major), int(minor))


def _nvjitlink_version() -> tuple:
    from cuda.bindings import nvjitlink

    major, minor = nvjitlink.version()
    return (int(major), int(minor))


def _bound(libname: str) -> str:
    from .cuda_libraries import bound_library

    path, how = bound_library(libname)
    return f"{path} (found via {how})"


def _check_one_major(nvrtc_version, nvjitlink_version) -> None:
    """NVRTC, nvJitLink and cuda-bindings of one CUDA major, or a ToolkitMismatchError naming each."""
    from .cuda_libraries import bindings_major

    wanted = bindings_major() or nvrtc_version[0]
    if nvrtc_version[0] == nvjitlink_version[0] == wanted:
        return
    raise ToolkitMismatchError(
        f"cuda-bindings is CUDA {wanted}, but the libraries it calls are NVRTC "
        f"{nvrtc_version[0]}.{nvrtc_version[1]} at {_bound('nvrtc')} and nvJitLink "
        f"{nvjitlink_version[0]}.{nvjitlink_version[1]} at {_bound('nvJitLink')}; cuda-coop compiles "
        f"with one toolkit per process. Fix: install the CUDA {wanted} libraries "
        f"(pip install 'cuda-coop[numba-cuda-mlir-cu{wanted}]'); if a library of the other major "
        "was loaded into the global symbol scope by another package (e.g. PyTorch), compile the "
        "first cooperative kernel before importing it, or use one process per toolkit"
    )


def _cuda_headers(nvrtc_version) -> tuple:
    """The CUDA runtime headers of NVRTC's toolkit (CCCL includes cuda_fp16.h from there).

    They must come from the same CUDA major as NVRTC: a CUDA 12 environment on a
    machine with a system CUDA 13 must not see CUDA 13's headers (NVRTC 12.9 fails
    on them).  Without them CCCL compiles half-precision support out, and CCCL 2.8
    and 3.0 then misroute ``cub::ThreadReduce`` of 4+ items to a trapping SIMD stub.
    """
    located = _locate_headers("cudart", nvrtc_version[0])
    if located is None:
        raise HeaderResolutionError(
            "no CUDA runtime headers (cuda_runtime_api.h, cuda_fp16.h) found; install them with "
            f"pip install 'cuda-coop[numba-cuda-mlir-cu{nvrtc_version[0]}]' (nvidia-cuda-runtime) or "
            "conda's cuda-cudart-dev"
        )
    directory = str(located.abs_path)
    text = (Path(directory) / "cuda_runtime_api.h").read_text(errors="replace")
    m = re.search(r"#\s*define\s+CUDART_VERSION\s+(\d+)", text)
    version = (int(m.group(1)) // 1000, int(m.group(1)) % 1000 // 10) if m else (0, 0)
    if version[0] != nvrtc_version[0]:
        raise ToolkitMismatchError(
            f"NVRTC is CUDA {nvrtc_version[0]}.{nvrtc_version[1]} but the CUDA runtime headers found "
            f"are CUDA {version[0]}.{version[1]} at {directory} (found via "
            f"{getattr(located, 'found_via', '?')}); install the headers of CUDA {nvrtc_version[0]} "
            f"(pip install 'cuda-coop[numba-cuda-mlir-cu{nvrtc_version[0]}]')"
        )
    return directory, version


@record
class _Located:
    abs_path: str
    found_via: str


def _locate_headers(kind: str, cuda_major: int):
    """A wheel of NVRTC's major anywhere on sys.path first, then cuda-pathfinder's search
    (conda, CUDA_HOME/CUDA_PATH, the system toolkit)."""
    from .cuda_libraries import wheel_headers

    hit = wheel_headers(kind, cuda_major)
    if hit is not None:
        return _Located(*hit)
    try:
        from cuda import pathfinder

        return pathfinder.locate_nvidia_header_directory(kind)
    except Exception as exc:  # pathfinder raises its own error types
        what = "CCCL headers" if kind == "cccl" else "CUDA runtime headers"
        raise HeaderResolutionError(
            f"cuda-pathfinder could not locate the {what} ({exc}); install the CUDA toolkit wheels "
            "(pip install cuda-coop[cu13]) or set CUDA_COOP_CCCL_ROOT") from exc


def _expected_cccl_major(cuda_major: int) -> int:
    # The CCCL that ships with each toolkit: CUDA 12.x -> CCCL 2.x, CUDA 13.x -> 3.x.
    return cuda_major - 10


@functools.lru_cache(maxsize=1)
def _toolchain_cached(override: str | None) -> Toolchain:
    nvrtc_version = _nvrtc_version()
    nvjitlink_version = _nvjitlink_version()
    _check_one_major(nvrtc_version, nvjitlink_version)
    if override:
        dirs = cccl_include_dirs_for_root(Path(override))
        found_via = "CUDA_COOP_CCCL_ROOT"
        cccl = parse_cccl_version(next(d for d in dirs if (Path(d) / _VERSION_H).is_file()))
    else:
        located = _locate_headers("cccl", nvrtc_version[0])
        if located is None:
            raise HeaderResolutionError(
                "no CCCL headers found; install the toolkit's headers with "
                f"pip install 'cuda-coop[numba-cuda-mlir-cu{nvrtc_version[0]}]' (or conda's cuda-cccl), "
                "or set CUDA_COOP_CCCL_ROOT"
            )
        dirs = (str(located.abs_path),)
        found_via = str(getattr(located, "found_via", "?"))
        cccl = parse_cccl_version(dirs[0])
        expected = _expected_cccl_major(nvrtc_version[0])
        if cccl[0] != expected:
            raise ToolkitMismatchError(
                f"NVRTC is CUDA {nvrtc_version[0]}.{nvrtc_version[1]} but the CCCL headers found are "
                f"{'.'.join(map(str, cccl))} at {dirs[0]} (found via {found_via}), which belong to "
                f"CUDA {cccl[0] + 10}; cuda-coop refuses to mix toolkits. Install the CCCL of CUDA "
                f"{nvrtc_version[0]} (pip install 'cuda-coop[numba-cuda-mlir-cu{nvrtc_version[0]}]', "
                f"or conda's cuda-cccl with cuda-version {nvrtc_version[0]}.*), or point "
                "CUDA_COOP_CCCL_ROOT at the CCCL you mean to use"
            )
    cuda_dir, cudart_version = _cuda_headers(nvrtc_version)
    return Toolchain(
        cuda_include_dir=cuda_dir,
        cudart_version=cudart_version,
        nvrtc_version=nvrtc_version,
        nvjitlink_version=nvjitlink_version,
        cccl_version=cccl,
        cccl_include_dirs=dirs,
        cccl_found_via=found_via,
        nvrtc_path=_bound("nvrtc"),
        nvjitlink_path=_bound("nvJitLink"),
    )


def toolchain() -> Toolchain:
    """The toolchain of this process (resolved once per CUDA_COOP_CCCL_ROOT value)."""
    override = _env.cccl_root_override()
    return _toolchain_cached(str(override) if override else None)


def nvrtc_architectures() -> tuple:
    """The architectures the resolved NVRTC compiles for, as ints (90 for sm_90).  Raises as
    ``toolchain()`` does when the toolkit is missing."""
    toolchain()  # loads the NVRTC cuda-coop uses before cuda.bindings asks it
    from cuda.bindings import nvrtc

    status, archs = nvrtc.nvrtcGetSupportedArchs()
    if int(status) != 0:
        raise RuntimeError(f"nvrtcGetSupportedArchs failed: {status}")
    return tuple(int(a) for a in archs)


def clear_toolchain_cache() -> None:
    _toolchain_cached.cache_clear()


def environment_summary() -> str:
    """One line for test logs and bug reports."""
    try:
        return toolchain().describe()
    except Exception as exc:
        return f"toolchain unavailable: {exc}"

