"""Provider caches: in memory for this process, and on disk across processes.

An entry is the result of compiling one translation unit: its LTO-IR and the
layouts (``sizeof``/``alignof`` of each provider's TempStorage).  The key is a
SHA-256 over everything that can change that result: the generated source, the
target architecture, the NVRTC and nvJitLink versions, the CCCL identity, the
compile options and the cuda-coop version.

Disk entries are written atomically (a temporary file in the same directory,
then ``os.replace``), so concurrent processes never read half an entry.  An
entry that fails any check (magic, schema, key, payload digest, JSON) or cannot
be read at all (a directory or an unreadable file in its place) is a miss and is
removed, so the next write can put a good entry there.  Any other OSError while
writing disables writes for the rest of the process instead of failing the
compile.

The disk cache is bounded (``CUDA_COOP_CACHE_MAX_MB``, default 512 MB): a hit
refreshes the entry's modification time, and when a write takes the total past
the limit the least recently used entries go first (entries of older schema
versions, which can never hit, before any current one) until 80 % of the limit
is left, so that eviction does not run again on the next write.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import _env

__all__ = ["CacheEntry", "ProviderCache", "provider_cache", "SCHEMA"]

SCHEMA = 1
_MAGIC = b"COOPLTO1"
_EVICT_TO = 0.8  # of the limit: eviction leaves room for many writes before it runs again
_STALE_TMP_SECONDS = 3600  # a temporary file this old belongs to a writer that died


@dataclass(frozen=True)
class CacheEntry:
    key: str
    ltoir: bytes
    layouts: dict  # symbol -> (size, align)
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


class ProviderCache:
    def __init__(self):
        self._memory: dict[str, CacheEntry] = {}
        self._lock = threading.Lock()
        self._writes_disabled = False
        self._disk_bytes: int | None = None  # this process's running estimate; None: not scanned yet
        self.stats = CacheStats()

    # -- paths ----------------------------------------------------------------------
    @staticmethod
    def directory() -> Path:
        return _env.cache_dir() / f"providers-v{SCHEMA}"

    def path_for(self, key: str) -> Path:
        return self.directory() / key[:2] / f"{key}.bin"

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
                with self._lock:
                    self._memory[key] = entry
                return entry, "disk"
        self.stats.misses += 1
        return None, "miss"

    def put(self, entry: CacheEntry) -> None:
        with self._lock:
            self._memory[entry.key] = entry
        if _env.cache_enabled() and not self._writes_disabled:
            self._write(entry)

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()

    # -- disk format: magic | u32 header length | header JSON | LTO-IR ----------------
    def _read(self, key: str) -> CacheEntry | None:
        path = self.path_for(key)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError:  # a directory or an unreadable file where the entry belongs
            self.stats.corrupt += 1
            _remove(path)
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
            _touch(path)
            return CacheEntry(key=key, ltoir=payload, layouts=layouts,
                              nvrtc_seconds=float(header.get("nvrtc_seconds", 0.0)),
                              meta=header.get("meta", {}))
        except (ValueError, KeyError, TypeError, struct.error, UnicodeDecodeError):
            self.stats.corrupt += 1
            _remove(path)
            return None

    def _write(self, entry: CacheEntry) -> None:
        path = self.path_for(entry.key)
        header = json.dumps({
            "schema": SCHEMA,
            "key": entry.key,
            "sha256": hashlib.sha256(entry.ltoir).hexdigest(),
            "layouts": {k: list(v) for k, v in entry.layouts.items()},
            "nvrtc_seconds": entry.nvrtc_seconds,
            "meta": entry.meta,
        }).encode()
        blob = _MAGIC + struct.pack("<I", len(header)) + header + entry.ltoir
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir() and not path.is_symlink():
                _remove(path)  # os.replace cannot put a file over a directory
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".bin")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(blob)
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            self.stats.writes += 1
        except OSError:
            self._writes_disabled = True
            return
        self._account(len(blob))

    # -- size limit -------------------------------------------------------------------
    def _account(self, written: int) -> None:
        limit = _env.cache_max_bytes()
        if limit is None:
            return
        if self._disk_bytes is None:
            self._disk_bytes = sum(st.st_size for _, st, _ in self._disk_entries())
        else:
            self._disk_bytes += written  # other processes' writes are seen at the next scan
        if self._disk_bytes > limit:
            self.evict(limit)

    def _disk_entries(self):
        """(path, stat, current schema?) of every entry of every schema version."""
        root = _env.cache_dir()
        current = self.directory()
        for path in root.glob("providers-v*/??/*"):
            try:
                st = path.stat()
            except OSError:
                continue  # removed meanwhile by another process
            if path.name.startswith(".tmp-"):
                if time.time() - st.st_mtime > _STALE_TMP_SECONDS:
                    _remove(path)
                continue
            yield path, st, path.parent.parent == current

    def evict(self, limit: int) -> None:
        """Remove least recently used entries until 80 % of ``limit`` bytes are left."""
        entries = sorted(self._disk_entries(), key=lambda e: (e[2], e[1].st_mtime))
        total = sum(st.st_size for _, st, _ in entries)
        for path, st, _current in entries:
            if total <= limit * _EVICT_TO:
                break
            if _remove(path):
                total -= st.st_size
                self.stats.evicted += 1
        self._disk_bytes = total


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


def _touch(path: Path) -> None:
    """Mark an entry as just used (the eviction order), where the file system allows it."""
    try:
        os.utime(path)
    except OSError:
        pass


_cache = ProviderCache()


def provider_cache() -> ProviderCache:
    return _cache
