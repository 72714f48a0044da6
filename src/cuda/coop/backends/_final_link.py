"""The final link of a kernel that calls cuda.coop: 32-bit shared-memory addresses, and its
cubin read from the disk cache when an earlier process linked it.

Both compilers link through a ``_Linker`` of the same shape (numba-cuda-mlir vendors
numba-cuda's): ``_object_codes`` (cuda.core ``ObjectCode`` inputs, in link order),
``_get_linker_options(ptx=...)`` (a cuda.core ``LinkerOptions``), ``complete()`` (the
cubin) and ``get_linked_ptx()`` (the PTX that shows a kernel's code).  Each backend's
``_compat.install_final_link`` hands its own class to :func:`install_on`, after checking
those names (``_upstream_names.py``).  Links without a cuda.coop input are left alone:
the comparison with a kernel without cuda.coop stays like for like.

- **Shared-memory addresses** (``core/shared_addresses.py``): an LTO link whose providers
  are of a family that runs faster with 32-bit shared addresses (radix sort, TopK; or
  any, or none, as ``CUDA_COOP_SHARED_ADDRESS_BITS`` says) gets the layout module as its
  first input, so the linked kernel addresses shared memory with 32 bits, as nvcc's code
  does.  Both wrapped methods do it, so the PTX a user inspects is the code that runs.
- **The link cache**: nvJitLink's LTO link of a kernel with its providers' LTO-IR is the
  largest step left of a warm first launch (about 40 ms on the 2-core machine for a
  load/store kernel, where the same kernel without cuda.coop links its PTX in about
  15 ms).  Its output depends only on what is linked and how, so a process that compiles
  a kernel an earlier process compiled reads the cubin instead
  (``core.cache.link_cache()``: the provider cache's directory and size limit,
  ``CUDA_COOP_CACHE=0`` turns it off with the rest).
"""

from __future__ import annotations

import hashlib

from ..core import shared_addresses

__all__ = ["install_on", "final_complete", "laid_out_linked_ptx", "with_shared_address_layout", "cached_cubin",
           "store_cubin", "link_key", "note_provider_ltoir", "COOP_LINK_PREFIX"]

# The name of every provider's link item (each backend's lowering).
COOP_LINK_PREFIX = "cuda_coop_"

# The providers' LTO-IR this process linked, by length, each with whether one of its
# providers is of a family that prefers 32-bit shared addresses.  A link holding one of
# them is a kernel that calls cuda.coop; its input names cannot tell (numba-cuda-mlir
# re-adds every input without its name when it puts the kernel's LTO-IR first).
_provider_ltoir: dict[int, list] = {}


def note_provider_ltoir(ltoir: bytes, prefers_32_bit_addresses: bool = False) -> None:
    """Record a provider's LTO-IR as it becomes a link item (each backend's lowering), and
    whether one of its providers is of a family that declares ``SHARED_ADDRESS_BITS = 32``
    (``ops._lookup.prefers_32_bit_shared_addresses``)."""
    same_length = _provider_ltoir.setdefault(len(ltoir), [])
    if not any(known is ltoir for known, _prefers in same_length):
        same_length.append((ltoir, bool(prefers_32_bit_addresses)))


def link_key(inputs, options) -> str:
    """SHA-256 over everything that can change a link's cubin: each input's kind and bytes
    (not its name, which only labels messages); the options' repr (a dataclass: every
    field); the nvJitLink, cuda.core and cuda-coop versions.

    The inputs up to the kernel (the shared-address layout module, then the kernel:
    nvJitLink takes the first one's data layout and resolves symbols against the kernel
    first) keep their places; the others count as a set, in digest order.  Classic
    numba-cuda keeps a kernel's link items in a set, so two processes add the same providers
    in different orders; the providers define disjoint ``extern "C"`` symbols, and what they
    share (CUB's inline functions, from one CCCL) is the same code whichever copy the link
    keeps."""
    import cuda.core

    from .. import __version__
    from ..core.toolchain import toolchain

    digest = hashlib.sha256()
    for part in ("cuda-coop linked cubin", __version__, cuda.core.__version__,
                 ".".join(map(str, toolchain().nvjitlink_version)), repr(options)):
        digest.update(part.encode() + b"\0")
    parts = [(kind, hashlib.sha256(code).hexdigest()) for _name, kind, code in inputs]
    pinned = 2 if inputs and shared_addresses.is_layout_module(inputs[0][2]) else 1
    for kind, code_digest in parts[:pinned] + sorted(parts[pinned:], key=lambda part: part[1]):
        digest.update(f"{kind}\0{code_digest}\0".encode())
    return digest.hexdigest()


def _code_bytes(code) -> bytes:
    return code.encode() if isinstance(code, str) else bytes(code)


def _provider_preference(inputs) -> bool | None:
    """Whether a provider among ``inputs`` (``(name, kind, bytes)``) prefers 32-bit shared
    addresses; None when none of them is a provider."""
    found = None
    for _name, _kind, code in inputs:
        for known, prefers in _provider_ltoir.get(len(code), ()):
            if code is known or code == known:
                found = bool(found) or prefers
                break
    return found


def _has_provider(inputs) -> bool:
    return _provider_preference(inputs) is not None


class _LinkedEarlier:
    """Stands for the cuda.core ``Linker`` of a link whose cubin came from the cache."""

    def get_info_log(self) -> str:
        return ""

    def get_error_log(self) -> str:
        return ""

    def close(self) -> None:
        pass


def cached_cubin(objects, options) -> tuple[str | None, bytes | None]:
    """``(key, cubin)`` for linking ``objects`` (cuda.core ``ObjectCode``, in link order) with
    ``options`` (or a function that returns them, called only for a link that is cached) to
    a cubin: the cubin an earlier link stored, or None; the key is None where this link is
    not cached (no cuda.coop provider among the inputs, an input not in memory, or the cache
    turned off)."""
    from .. import _env

    if not objects or not _provider_ltoir or not _env.cache_enabled():
        return None, None
    try:
        inputs = [(str(obj.name), str(obj.code_type), _code_bytes(obj.code)) for obj in objects]
    except (AttributeError, TypeError):  # an input that is not in memory: link as usual
        return None, None
    if not _has_provider(inputs):
        return None, None
    from ..core.cache import link_cache

    key = link_key(inputs, options() if callable(options) else options)
    entry, _origin = link_cache().get(key)
    return key, (entry.payload if entry is not None else None)


def store_cubin(key: str | None, cubin) -> None:
    """Keep the cubin of a link that ``cached_cubin`` gave ``key`` for (None: not cached)."""
    if key is None:
        return
    from ..core.cache import CacheEntry, link_cache

    link_cache().put(CacheEntry(key=key, payload=_code_bytes(cubin), layouts={}, meta={"output": "cubin"}))


def with_shared_address_layout(objects: list, options) -> list:
    """``objects`` (cuda.core ``ObjectCode``, in link order) with the shared-address layout
    module first when they are an LTO link of a kernel that calls cuda.coop and gets 32-bit
    shared addresses (``core/shared_addresses.py``); else ``objects`` as they are."""
    if not objects or not getattr(options, "link_time_optimization", False) or not _provider_ltoir:
        return objects
    try:
        inputs = [(str(obj.name), str(obj.code_type), _code_bytes(obj.code)) for obj in objects]
    except (AttributeError, TypeError):  # an input that is not in memory: link as the compiler would
        return objects
    if shared_addresses.is_layout_module(inputs[0][2]):
        return objects
    preferred = _provider_preference(inputs)
    if preferred is None or not shared_addresses.wants_32_bits(preferred):
        return objects
    layout = shared_addresses.layout_module(str(options.arch))
    if layout is None:
        return objects
    return [type(objects[0]).from_ltoir(layout, name=shared_addresses.LAYOUT_MODULE_NAME), *objects]


def install_on(linker_class) -> None:
    """Wrap ``linker_class.complete`` with :func:`final_complete` and ``get_linked_ptx``
    with :func:`laid_out_linked_ptx` (once: idempotent)."""
    if not getattr(linker_class.complete, "_coop_final_link", False):
        linker_class.complete = final_complete(linker_class.complete)
    if not getattr(linker_class.get_linked_ptx, "_coop_final_link", False):
        linker_class.get_linked_ptx = laid_out_linked_ptx(linker_class.get_linked_ptx)


def _wrapped(wrapper, original):
    wrapper.__wrapped__ = original
    wrapper.__name__ = getattr(original, "__name__", "wrapper")
    wrapper._coop_final_link = True
    return wrapper


def _lay_out(linker, ptx: bool):
    """Put the layout module first in ``linker``'s inputs (a cuda.coop LTO link)."""
    objects = list(getattr(linker, "_object_codes", ()))
    if not _provider_ltoir:  # no cuda.coop call compiled in this process
        return objects
    laid_out = with_shared_address_layout(objects, linker._get_linker_options(ptx=ptx))
    if laid_out is not objects:
        linker._object_codes = laid_out
    return laid_out


def laid_out_linked_ptx(get_linked_ptx):
    """Wrap ``_Linker.get_linked_ptx``: the same inputs as :func:`final_complete` links."""

    def wrapper(self):
        if not getattr(self, "_pending_cu", None):
            _lay_out(self, ptx=True)
        return get_linked_ptx(self)

    return _wrapped(wrapper, get_linked_ptx)


def final_complete(complete):
    """Wrap ``_Linker.complete``: the layout module first, then a cached cubin when one
    exists for these inputs, else the link, then its cubin stored."""

    def wrapper(self):
        # CUDA sources still to compile (numba-cuda-mlir's pending .cu) are not bytes yet.
        if getattr(self, "_pending_cu", None):
            return complete(self)
        objects = _lay_out(self, ptx=False)
        key, cubin = cached_cubin(objects, lambda: self._get_linker_options(ptx=False))
        if cubin is not None:
            # What complete() leaves behind, so that ``info_log`` (numba-cuda reads it after
            # every link) answers as after a link that logged nothing.
            self.linker = _LinkedEarlier()
            self._info_log = self._error_log = ""
            self._complete = True
            return type(objects[0]).from_cubin(cubin, name=f"cuda_coop_linked_{key[:16]}")
        result = complete(self)
        store_cubin(key, result.code)
        return result

    return _wrapped(wrapper, complete)
