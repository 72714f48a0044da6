"""Environment variables read by cuda-coop (documented in docs/configuration.rst)."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (PEP 781)
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["truthy", "ENV", "cache_dir", "cache_enabled", "source_dump_dir", "cccl_root_override",
           "library_pinning_enabled", "cache_max_bytes", "checked_mode", "shared_address_bits"]

ENV = {
    "CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION": "skip automatic backend registration at import",
    "CUDA_COOP_CACHE": "0/false/off disables the on-disk provider cache (on by default)",
    "CUDA_COOP_CACHE_DIR": "directory of the on-disk provider cache",
    "CUDA_COOP_CACHE_MAX_MB": "size limit of the on-disk provider cache in MB (default 512; 0: no limit); "
                              "least recently used entries are removed first",
    "CUDA_COOP_CCCL_ROOT": "use the CCCL headers at this path instead of the toolkit's",
    "CUDA_COOP_SOURCE_DUMP_DIR": "write each generated C++ translation unit here",
    "CUDA_COOP_NVRTC_PCH": "auto (default: precompiled headers from a process's 2nd NVRTC compile, or built in "
                           "the background from its first CUDA context or kernel compile when the cache is empty "
                           "and 4+ CPUs are usable), early (that build whatever the CPUs), 1 or 0",
    "CUDA_COOP_CHECKED": "0/false/off compiles kernels without run-time argument checks (on by default: an "
                         "out-of-range valid_items, distance, bit range, k or run-length input prints the call "
                         "and its kernel line and ends the launch with a device trap, as NVIDIA's cuda.coop "
                         "does; with 0 such values are clamped to defined results); read when a kernel "
                         "compiles; see the run-time checks section of concepts",
    "CUDA_COOP_NO_LIBRARY_PINNING": "1 leaves the choice of NVRTC, nvJitLink and NVVM to cuda-pathfinder "
                                    "(by default cuda-coop loads those of cuda-bindings' CUDA major)",
    "CUDA_COOP_SHARED_ADDRESS_BITS": "auto (default: 32-bit shared-memory addresses, as nvcc, in kernels that call a "
                                     "radix sort or TopK, which run faster with them; the compilers' 64-bit ones "
                                     "elsewhere), 32 (every kernel that calls cuda.coop) or 64 (none); read at each "
                                     "kernel's link (core/shared_addresses.py)",
}

_FALSY = {"", "0", "false", "no", "off"}


def truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in _FALSY


def cache_enabled() -> bool:
    value = os.environ.get("CUDA_COOP_CACHE")
    return value is None or truthy(value)


def cache_dir() -> Path:
    from pathlib import Path  # here, not at module level: `import cuda.coop` needs only truthy()

    explicit = os.environ.get("CUDA_COOP_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cuda-coop"


def source_dump_dir() -> Path | None:
    from pathlib import Path

    value = os.environ.get("CUDA_COOP_SOURCE_DUMP_DIR", "").strip()
    return Path(value).expanduser() if value else None


def cccl_root_override() -> Path | None:
    from pathlib import Path

    value = os.environ.get("CUDA_COOP_CCCL_ROOT", "").strip()
    return Path(value).expanduser() if value else None


def checked_mode() -> bool:
    """Whether kernels compiled now get run-time argument checks: yes unless
    ``CUDA_COOP_CHECKED`` is 0/false/no/off (an empty value keeps the default)."""
    value = os.environ.get("CUDA_COOP_CHECKED")
    return value is None or not value.strip() or truthy(value)


def library_pinning_enabled() -> bool:
    return not truthy(os.environ.get("CUDA_COOP_NO_LIBRARY_PINNING"))


DEFAULT_CACHE_MAX_MB = 512


def cache_max_bytes() -> int | None:
    """The on-disk cache's size limit in bytes, or None for no limit."""
    value = os.environ.get("CUDA_COOP_CACHE_MAX_MB", "").strip()
    try:
        megabytes = float(value) if value else DEFAULT_CACHE_MAX_MB
    except ValueError:
        megabytes = DEFAULT_CACHE_MAX_MB  # a typo must not break compiles; the default applies
    return None if megabytes <= 0 else max(1, int(megabytes * 1024 * 1024))  # a tiny limit is still one


def shared_address_bits() -> str:
    """``CUDA_COOP_SHARED_ADDRESS_BITS``: "32", "64" or "auto" (the default, and what a typo
    gets: it must not break compiles)."""
    value = os.environ.get("CUDA_COOP_SHARED_ADDRESS_BITS", "").strip().lower()
    return value if value in ("32", "64") else "auto"
