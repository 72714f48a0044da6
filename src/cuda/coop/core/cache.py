"""Compile caches: in memory for this process, and on disk across processes.

A ``provider_cache()`` entry is the result of compiling one translation unit: its
LTO-IR and the layouts (``sizeof``/``alignof`` of each provider's TempStorage).  The
key is a SHA-256 over everything that can change that result: the generated source,
the target architecture, the NVRTC and nvJitLink versions, the CCCL identity, the
compile options and the cuda-coop version.  A ``link_cache()`` entry is a kernel's
cubin after the final nvJitLink link (backends/_final_link.py, keyed by every linked
input and the link options); it shares the directory and the size limit.

The disk layer is ``cuda.core.utils.FileStreamProgramCache`` in
``$CUDA_COOP_CACHE_DIR/providers``: it writes atomically (a temporary file, then
``os.replace``), so concurrent processes never read half an entry; it bumps an
entry's atime on every read itself (with ``os.utime``, so also on ``noatime`` and
``relatime`` mounts); it removes temporary files of writers that died; and when a
write takes the directory past ``CUDA_COOP_CACHE_MAX_MB`` (default 512 MB) it
removes the least recently read entries until the total is within the limit.

What cuda.core does not do stays here: its values are bare bytes, so ours are a
framed record (magic, then a header with the schema, the key, the layouts and a
SHA-256 of the LTO-IR, then the LTO-IR).  A value that fails any check, or cannot
be read at all (a directory or an unreadable file in its place), is a miss and is
removed, so the next write can put a good entry there.  Any other OSError while
writing disables writes for the rest of the process instead of failing the compile.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .records import record
from .. import _env

__all__ = ["CacheEntry", "ProviderCache", "provider_cache", "link_cache", "SCHEMA"]

SCHEMA = 1
_MAGIC = b"COOPLTO1"


@record
class CacheEntry:
    key: str
    payload: bytes  # a provider's LTO-IR, or a kernel's linked cubin (link_cache())
    layouts: dict  # symbol -> (size, align); empty for a cubin
    nvrtc_seconds: float = 0.0
    meta: dict = field(default_factory=dict, compare=False)


@dataclass
class CacheStats:
    memory_hits: int = 0
    disk_hits: int = 0
    misses: int = 0
    corrupt: int = 0
    writes: int = 0
    evicted: int = 0

    def as_dict(self):
        return dict(self.__dict__)


_disk_class = None


def _open_disk(root: Path, limit: int | None):
    """A ``FileStreamProgramCache`` at ``root`` that also reports entry paths and evictions.

    The two private methods it touches are the only way to get either from cuda.core
    (1.0 to 1.2): the path, to take a directory out of an entry's place (neither a read
    nor ``del`` nor ``os.replace`` can), and the size enforcer, to count what it removed
    (``CacheStats.evicted``); tests/core/test_cache.py fails if either changes.  Imported
    here, not at module level: ``import cuda.coop`` and cache-off runs do not need cuda.core,
    and kernel compiles have imported it already (numba-cuda-mlir does).
    """
    global _disk_class
    if _disk_class is None:
        from cuda.core.utils import FileStreamProgramCache

        class _Disk(FileStreamProgramCache):
            evicted = 0

            def path_for(self, key: str) -> Path:
                return self._path_for_key(key)

            def _enforce_size_cap(self) -> None:  # runs only when a write took the total past the limit
                before = len(self)
                super()._enforce_size_cap()
                self.evicted += max(0, before - len(self))

        _disk_class = _Disk
    return _disk_class(root, max_size_bytes=limit)


class ProviderCache:
    """One kind of compile result, in memory and on disk.

    ``kind`` namespaces the disk keys, so providers' LTO-IR and linked cubins share one
    directory and one size limit without ever reading each other's entries; ``memory=False``
    keeps no copy in the process (a cubin is read once per kernel specialization: its
    dispatcher keeps the loaded module).
    """

    def __init__(self, kind: str = "", memory: bool = True, disk_of: "ProviderCache | None" = None):
        self._kind = kind
        self._keep_in_memory = memory
        # Another instance whose disk layer this one uses: one directory scan when the
        # process opens it, and one running total against the size limit.
        self._disk_of = disk_of
        self._memory: dict[str, CacheEntry] = {}
        self._lock = threading.Lock()
        self._writes_disabled = False
        # The disk layer of the (directory, limit) the environment names now: tests and
        # applications may change either between compiles.
        self._disk_config: tuple | None = None
        self._disk = None
        self.stats = CacheStats()

    # -- paths ----------------------------------------------------------------------
    @staticmethod
    def directory() -> Path:
        return _env.cache_dir() / "providers"

    def disk_key(self, key: str) -> str:
        # The schema is part of the key, so entries of another schema version are never
        # read (no ping-pong of removals between two cuda-coop versions sharing the
        # directory); unread, they are the first that the size limit removes.
        return f"cuda-coop-v{SCHEMA}:{self._kind}{key}"

    @classmethod
    def count_entries(cls) -> int:
        """How many entries the disk cache holds, of every schema version."""
        return len(_open_disk(cls.directory(), None))

    def path_for(self, key: str) -> Path:
        disk = self._open()
        if disk is None:
            raise OSError(f"the provider cache directory {self.directory()} cannot be used")
        return disk.path_for(self.disk_key(key))

    def _open(self):
        if self._disk_of is not None:
            return self._disk_of._open()
        config = (self.directory(), _env.cache_max_bytes())
        with self._lock:
            if config != self._disk_config:
                self._disk_config, self._disk = config, None
                _remove_legacy_layout(config[0].parent)
                try:
                    self._disk = _open_disk(*config)
                except OSError:  # e.g. a file where the directory belongs
                    self._writes_disabled = True
            return self._disk

    # -- lookup ---------------------------------------------------------------------
    def get(self, key: str) -> tuple[CacheEntry | None, str]:
        """The entry for ``key`` and where it came from: "memory", "disk" or "miss"."""
        with self._lock:
            entry = self._memory.get(key)
        if entry is not None:
            self.stats.memory_hits += 1
            return entry, "memory"
        if _env.cache_enabled():
            entry = self._read(key)
            if entry is not None:
                self.stats.disk_hits += 1
                if self._keep_in_memory:
                    with self._lock:
                        self._memory[key] = entry
                return entry, "disk"
        self.stats.misses += 1
        return None, "miss"

    def put(self, entry: CacheEntry) -> None:
        if self._keep_in_memory:
            with self._lock:
                self._memory[entry.key] = entry
        if _env.cache_enabled() and not self._writes_disabled:
            self._write(entry)

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()

    # -- value format: magic | u32 header length | header JSON | LTO-IR ---------------
    def _read(self, key: str) -> CacheEntry | None:
        disk = self._open()
        if disk is None:
            return None
        try:
            blob = disk.get(self.disk_key(key))
        except OSError:  # a directory or an unreadable file where the entry belongs
            self._discard(disk, key)
            return None
        if blob is None:
            return None
        try:
            if not blob.startswith(_MAGIC):
                raise ValueError("bad magic")
            (hlen,) = struct.unpack_from("<I", blob, len(_MAGIC))
            start = len(_MAGIC) + 4
            header = json.loads(blob[start:start + hlen].decode())
            payload = blob[start + hlen:]
            if header.get("schema") != SCHEMA or header.get("key") != key:
                raise ValueError("stale entry")
            if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
                raise ValueError("payload digest mismatch")
            layouts = {k: tuple(v) for k, v in header["layouts"].items()}
            return CacheEntry(key=key, payload=payload, layouts=layouts,
                              nvrtc_seconds=float(header.get("nvrtc_seconds", 0.0)),
                              meta=header.get("meta", {}))
        except (ValueError, KeyError, TypeError, struct.error, UnicodeDecodeError):
            self._discard(disk, key)
            return None

    def _discard(self, disk, key: str) -> None:
        self.stats.corrupt += 1
        try:
            del disk[self.disk_key(key)]
        except (KeyError, OSError):  # gone already, or a directory: unlink cannot remove it
            _remove(disk.path_for(self.disk_key(key)))

    def _write(self, entry: CacheEntry) -> None:
        header = json.dumps({
            "schema": SCHEMA,
            "key": entry.key,
            "sha256": hashlib.sha256(entry.payload).hexdigest(),
            "layouts": {k: list(v) for k, v in entry.layouts.items()},
            "nvrtc_seconds": entry.nvrtc_seconds,
            "meta": entry.meta,
        }).encode()
        blob = _MAGIC + struct.pack("<I", len(header)) + header + entry.payload
        disk = self._open()
        if disk is None:
            return
        try:
            path = disk.path_for(self.disk_key(entry.key))
            if path.is_dir() and not path.is_symlink():
                _remove(path)  # os.replace cannot put a file over a directory
            evicted = disk.evicted
            disk[self.disk_key(entry.key)] = blob
            self.stats.writes += 1
            self.stats.evicted += disk.evicted - evicted
        except OSError:
            self._writes_disabled = True


def _remove(path: Path) -> bool:
    """Remove a file, a link or a directory tree; False if it could not be removed."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        return True
    except OSError:  # gone already, or not ours to remove
        return False


def _remove_legacy_layout(root: Path) -> None:
    """Remove ``providers-v*/``, the layout before cuda.core's cache: it can never hit again
    and no limit would ever bound it."""
    try:
        legacy = [p for p in root.glob("providers-v*") if p.is_dir() and not p.is_symlink()]
    except OSError:
        return
    for path in legacy:
        shutil.rmtree(path, ignore_errors=True)


_cache = ProviderCache()
_links = ProviderCache(kind="cubin:", memory=False, disk_of=_cache)


def provider_cache() -> ProviderCache:
    """Providers' LTO-IR (core/build.py)."""
    return _cache


def link_cache() -> ProviderCache:
    """Kernels' cubins after the final LTO link (backends/_final_link.py)."""
    return _links
