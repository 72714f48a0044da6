"""One CUDA toolkit per process: NVRTC, nvJitLink and NVVM of one major, chosen on purpose.

cuda-bindings loads these three libraries lazily through cuda-pathfinder, which
prefers whatever is already loaded in the process and, on disk, the CUDA 13
wheel layout (``nvidia/cu13/lib``) over the CUDA 12 one.  A CUDA 12 environment
in a Python that can also see CUDA 13 (PyTorch's or CuPy's CUDA 13 wheels, a
system CUDA 13) therefore ends up with NVRTC 12 and nvJitLink 13, or NVVM 13
producing LTO-IR that nvJitLink 12 cannot read.

The major is the one of the installed cuda-bindings (the extras pin it to the
toolkit).  The libraries are looked up for that major only, NVRTC first; its
installation (a ``sys.path`` entry holding NVIDIA wheels, a conda prefix, a
toolkit root) is then searched first for nvJitLink and NVVM.  The result is
handed to every consumer by wrapping ``cuda.pathfinder.load_nvidia_dynamic_lib``
(and the copies of it that cuda-bindings' internal modules hold) before their
first library load: whoever asks first gets this choice, so no other import can
pre-empt it.  Nothing is loaded until a library is first asked for.
``CUDA_COOP_NO_LIBRARY_PINNING=1`` leaves cuda-pathfinder's own choice in place.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from .. import _env

__all__ = ["LibraryChoice", "bindings_major", "select", "install_pinning", "pinned_libraries"]

# libname as cuda-pathfinder spells it -> file names, per CUDA major (the CUDA 12
# nvcc wheel ships NVVM as plain libnvvm.so)
_SONAMES = {
    12: {"nvrtc": ("libnvrtc.so.12",), "nvJitLink": ("libnvJitLink.so.12",), "nvvm": ("libnvvm.so.4", "libnvvm.so")},
    13: {"nvrtc": ("libnvrtc.so.13",), "nvJitLink": ("libnvJitLink.so.13",), "nvvm": ("libnvvm.so.4", "libnvvm.so")},
}
# Where NVIDIA's wheels put each library, relative to a sys.path entry.
_WHEEL_DIRS = {
    12: {"nvrtc": "nvidia/cuda_nvrtc/lib", "nvJitLink": "nvidia/nvjitlink/lib", "nvvm": "nvidia/cuda_nvcc/nvvm/lib64"},
    13: {"nvrtc": "nvidia/cu13/lib", "nvJitLink": "nvidia/cu13/lib", "nvvm": "nvidia/cu13/lib"},
}
# Relative to a toolkit root (CUDA_HOME, /usr/local/cuda-12.9) or a conda prefix.
_ROOT_DIRS = {"nvrtc": ("lib64", "lib"), "nvJitLink": ("lib64", "lib"), "nvvm": ("nvvm/lib64", "nvvm/lib")}
PINNED = tuple(_SONAMES[13])


@dataclass(frozen=True)
class LibraryChoice:
    libname: str
    path: str
    found_via: str  # "wheel in <sys.path entry>", "CONDA_PREFIX", "CUDA_HOME", "toolkit root", "system search"


def bindings_major() -> int | None:
    """The CUDA major of the installed cuda-bindings (no CUDA library is loaded)."""
    try:
        from importlib.metadata import version

        return int(version("cuda-bindings").split(".")[0])
    except Exception:
        return None


def _toolkit_roots(major: int):
    """Installations other than wheels, most specific first, each as (root, how it was found)."""
    conda = os.environ.get("CONDA_PREFIX")
    if conda:
        yield Path(conda), "CONDA_PREFIX"
        yield Path(conda) / "targets" / "x86_64-linux", "CONDA_PREFIX"
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            yield Path(os.environ[var]), var
    for root in sorted(glob.glob(f"/usr/local/cuda-{major}.*"), reverse=True):
        yield Path(root), "toolkit root"
    yield Path("/usr/local/cuda"), "toolkit root"


def _candidates(libname: str, major: int):
    """Every file a library of this major may be, in search order: (path, how found, installation)."""
    names = _SONAMES[major][libname]
    for entry in sys.path:
        if entry and os.path.isdir(entry):
            for name in names:
                yield Path(entry) / _WHEEL_DIRS[major][libname] / name, f"wheel in {entry}", Path(entry)
    nvrtc = _SONAMES[major]["nvrtc"][0]
    for root, how in _toolkit_roots(major):
        # libnvvm.so.4 carries no CUDA major in its name: a root's NVVM counts as this
        # major's only when the root's NVRTC is libnvrtc.so.<major>.
        if libname == "nvvm" and not any((root / d / nvrtc).is_file() for d in ("lib64", "lib")):
            continue
        for sub in _ROOT_DIRS[libname]:
            for name in names:
                yield root / sub / name, how, root


def _system_search(libname: str, major: int) -> LibraryChoice | None:
    if libname == "nvvm":
        return None  # not on the loader path in any toolkit layout
    try:
        soname = _SONAMES[major][libname][0]
        handle = ctypes.CDLL(soname, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError:
        return None
    return LibraryChoice(libname, library_path_of(handle), "system search")


def library_path_of(handle) -> str:
    """The file a loaded library came from (dlinfo's link map), for messages and reports."""
    class LinkMap(ctypes.Structure):  # the head of glibc's struct link_map
        _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]

    link_map = ctypes.POINTER(LinkMap)()
    rtld_di_linkmap = 2
    if ctypes.CDLL(None).dlinfo(ctypes.c_void_p(handle._handle), rtld_di_linkmap, ctypes.byref(link_map)) != 0:
        return "?"
    return os.path.realpath(os.fsdecode(link_map.contents.l_name))


@functools.lru_cache(maxsize=None)
def select(major: int) -> dict:
    """libname -> LibraryChoice for NVRTC, nvJitLink and NVVM of ``major`` (files only, nothing loaded).

    NVRTC decides the installation; nvJitLink and NVVM are taken from that same
    installation when it has them, else from the next place that has their major.
    A library of this major found nowhere is left out (cuda-pathfinder then decides,
    and the toolchain check reports the mix).
    """
    if major not in _SONAMES:
        return {}
    chosen = {}
    home = None
    for libname in ("nvrtc", "nvJitLink", "nvvm"):
        found = [c for c in _candidates(libname, major) if c[0].is_file()]
        if home is not None:
            found.sort(key=lambda c: c[2] != home)  # stable: the NVRTC's installation first
        if found:
            path, how, installation = found[0]
            chosen[libname] = LibraryChoice(libname, str(path), how)
            home = installation if libname == "nvrtc" else home
        else:
            hit = _system_search(libname, major)
            if hit is not None:
                chosen[libname] = hit
    return chosen


_lock = threading.Lock()
_loaded: dict = {}


def _load(choice: LibraryChoice):
    from cuda.pathfinder import LoadedDL

    with _lock:
        if choice.libname not in _loaded:
            if choice.libname == "nvrtc":
                # NVRTC dlopens its builtins by soname: load the ones next to it first,
                # or another toolkit's builtins already in the process could be taken.
                for builtins in sorted(Path(choice.path).parent.glob("libnvrtc-builtins.so.*")):
                    ctypes.CDLL(str(builtins), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
                    break
            handle = ctypes.CDLL(choice.path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
            _loaded[choice.libname] = LoadedDL(choice.path, False, handle._handle, choice.found_via)
        return _loaded[choice.libname]


def pinned_libraries() -> dict:
    """libname -> LibraryChoice in force in this process ({} before install_pinning or when off)."""
    return dict(_pinned_choice)


_pinned_choice: dict = {}
_CONSUMERS = ("cuda.bindings._internal.nvrtc", "cuda.bindings._internal.nvjitlink", "cuda.bindings._internal.nvvm")


def install_pinning() -> dict:
    """Make NVRTC, nvJitLink and NVVM of cuda-bindings' major the ones every consumer loads.

    Called when the backend activates, before the first compile.  Idempotent.
    Returns the choice ({} when the major is unknown or pinning is turned off).
    """
    if not _env.library_pinning_enabled() or not sys.platform.startswith("linux"):
        return {}
    major = bindings_major()
    choice = select(major) if major is not None else {}
    if not choice:
        return {}
    import cuda.pathfinder as pathfinder

    original = pathfinder.load_nvidia_dynamic_lib
    if getattr(original, "_coop_pinned", False):
        return dict(_pinned_choice)
    _pinned_choice.update(choice)

    @functools.wraps(original)
    def load_nvidia_dynamic_lib(libname):
        hit = _pinned_choice.get(libname)
        return _load(hit) if hit is not None else original(libname)

    load_nvidia_dynamic_lib._coop_pinned = True
    pathfinder.load_nvidia_dynamic_lib = load_nvidia_dynamic_lib
    # cuda-bindings' internal modules hold their own reference, taken at their import.
    for name in _CONSUMERS:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "load_nvidia_dynamic_lib", None) is original:
            module.load_nvidia_dynamic_lib = load_nvidia_dynamic_lib
    return dict(_pinned_choice)


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


_BOUND_SYMBOL = {
    "nvrtc": ("cuda.bindings._internal.nvrtc", "__nvrtcVersion"),
    "nvJitLink": ("cuda.bindings._internal.nvjitlink", "__nvJitLinkVersion"),
    "nvvm": ("cuda.bindings._internal.nvvm", "__nvvmVersion"),
}


def bound_library(libname: str) -> tuple:
    """(path, how found) of the library cuda-bindings actually calls for ``libname``.

    Read from the function pointer cuda-bindings resolved (dladdr), so it tells the
    truth even when another library won: cuda-bindings looks a symbol up in the
    process's global scope before it asks cuda-pathfinder, so a toolkit loaded with
    RTLD_GLOBAL by another package (PyTorch does) takes precedence over any choice.
    """
    module_name, symbol = _BOUND_SYMBOL[libname]
    try:
        import importlib

        address = importlib.import_module(module_name)._inspect_function_pointer(symbol)
        info = _DlInfo()
        if not address or not ctypes.CDLL(None).dladdr(ctypes.c_void_p(address), ctypes.byref(info)):
            return "?", "not loaded"
        path = os.path.realpath(os.fsdecode(info.dli_fname))
    except Exception:  # this cuda-bindings has no such internal binding (NVRTC on 12.9.x)
        return _mapped_choice(libname)
    choice = _pinned_choice.get(libname)
    if choice is not None and os.path.realpath(choice.path) == path:
        return path, choice.found_via
    if choice is not None:
        return path, ("the process's global symbol scope (another package loaded it with RTLD_GLOBAL "
                      "before cuda.coop's first compile)")
    return path, "cuda-pathfinder"


def _mapped_choice(libname: str) -> tuple:
    """The pinned library when the process has it mapped, else ("?", "unknown")."""
    choice = _pinned_choice.get(libname)
    if choice is None:
        return "?", "unknown"
    path = os.path.realpath(choice.path)
    try:
        with open("/proc/self/maps") as maps:
            mapped = any(line.rstrip().endswith(path) for line in maps)
    except OSError:
        mapped = False
    return (path, choice.found_via) if mapped else ("?", "unknown")


# Header trees of NVIDIA's wheels, relative to a sys.path entry, and a file that proves each.
_WHEEL_HEADERS = {
    "cccl": ({12: "nvidia/cuda_cccl/include", 13: "nvidia/cu13/include/cccl"}, "cuda/std/__cccl/version.h"),
    "cudart": ({12: "nvidia/cuda_runtime/include", 13: "nvidia/cu13/include"}, "cuda_runtime_api.h"),
}


def wheel_headers(kind: str, major: int):
    """(include dir, how found) of the first ``sys.path`` entry holding ``kind``'s wheel of ``major``.

    cuda-pathfinder looks only in ``site.getsitepackages()`` and prefers CUDA 13's
    layout; an environment layered over another (a ``.pth`` adding a second
    site-packages) then gets the other major's headers or the system toolkit's.
    """
    layouts, proof = _WHEEL_HEADERS[kind]
    if major not in layouts:
        return None
    for entry in sys.path:
        if entry and os.path.isfile(os.path.join(entry, layouts[major], proof)):
            return os.path.join(entry, layouts[major]), f"wheel in {entry}"
    return None
