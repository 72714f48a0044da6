"""The provider cache: memory and disk hits, corruption, staleness, relocation, disabling."""

from __future__ import annotations

import os

import pytest

from cuda.coop.core import cache as cache_mod
from cuda.coop.core.cache import CacheEntry, ProviderCache

pytestmark = pytest.mark.unit


@pytest.fixture
def disk(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_COOP_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CUDA_COOP_CACHE", raising=False)
    return tmp_path


def entry(key="ab" * 32):
    return CacheEntry(key=key, payload=b"\x01LTOIR" * 100, layouts={"coop_x": (2048, 16)}, nvrtc_seconds=0.9)


def test_memory_then_disk_hit(disk):
    c = ProviderCache()
    assert c.get(entry().key) == (None, "miss")
    c.put(entry())
    assert c.get(entry().key)[1] == "memory"
    fresh = ProviderCache()  # a new process: memory empty, disk warm
    got, origin = fresh.get(entry().key)
    assert origin == "disk" and got.payload == entry().payload and got.layouts == {"coop_x": (2048, 16)}
    assert _files(disk) == [c.path_for(entry().key)]


def _files(root):
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_no_temporary_files_left(disk):
    c = ProviderCache()
    c.put(entry())
    assert _files(disk) == [c.path_for(entry().key)]


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "wrong_key"])
def test_corrupt_or_stale_entries_are_misses_and_removed(disk, damage):
    c = ProviderCache()
    c.put(entry())
    path = c.path_for(entry().key)
    blob = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(blob[: len(blob) // 2])
    elif damage == "flip":
        path.write_bytes(blob[:-1] + bytes([blob[-1] ^ 0xFF]))
    elif damage == "garbage":
        path.write_bytes(b"not a cache entry")
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "wrong_key":
        other = c.path_for("cd" * 32)
        other.parent.mkdir(parents=True, exist_ok=True)
        other.write_bytes(blob)
        path = other
    fresh = ProviderCache()
    key = entry().key if damage != "wrong_key" else "cd" * 32
    assert fresh.get(key) == (None, "miss")
    assert fresh.stats.corrupt == 1
    assert not path.exists()


def test_stale_schema_is_a_miss(disk, monkeypatch):
    c = ProviderCache()
    c.put(entry())
    monkeypatch.setattr(cache_mod, "SCHEMA", cache_mod.SCHEMA + 1)
    # The schema is part of the disk key: the old entry is not even read (nor removed).
    fresh = ProviderCache()
    assert fresh.get(entry().key) == (None, "miss") and fresh.stats.corrupt == 0
    assert ProviderCache.count_entries() == 1


def test_cache_can_be_disabled(disk, monkeypatch):
    monkeypatch.setenv("CUDA_COOP_CACHE", "0")
    c = ProviderCache()
    c.put(entry())
    assert not _files(disk)
    assert ProviderCache().get(entry().key) == (None, "miss")


def test_unwritable_directory_disables_writes_without_failing(tmp_path, monkeypatch):
    target = tmp_path / "file"
    target.write_text("a file where a directory should be")
    monkeypatch.setenv("CUDA_COOP_CACHE_DIR", str(target))
    c = ProviderCache()
    c.put(entry())  # no exception
    assert c._writes_disabled
    assert c.get(entry().key)[1] == "memory"


def test_default_location_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("CUDA_COOP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert ProviderCache.directory() == tmp_path / "cuda-coop" / "providers"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # ignored: not absolute
    assert ProviderCache.directory().parent == type(tmp_path)(os.path.expanduser("~")) / ".cache" / "cuda-coop"


def test_directory_in_place_of_an_entry_is_removed_then_rewritten(disk):
    c = ProviderCache()
    path = c.path_for(entry().key)
    (path / "junk").mkdir(parents=True)  # e.g. a botched manual cleanup
    assert c.get(entry().key) == (None, "miss")
    assert c.stats.corrupt == 1 and not path.exists()
    path.mkdir()  # and once more, now in the writer's way
    c.put(entry())
    assert path.is_file() and not c._writes_disabled
    assert ProviderCache().get(entry().key)[1] == "disk"


def test_unreadable_entry_is_removed(disk, monkeypatch):
    c = ProviderCache()
    c.put(entry())
    path = c.path_for(entry().key)
    path.chmod(0)
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # root reads whatever the mode: refuse as the kernel would
        real = type(path).read_bytes

        def read_bytes(self):
            if self == path:
                raise PermissionError(13, "Permission denied", str(self))
            return real(self)
        monkeypatch.setattr(type(path), "read_bytes", read_bytes)
    fresh = ProviderCache()
    assert fresh.get(entry().key) == (None, "miss") and fresh.stats.corrupt == 1
    assert not path.exists()


def _sized_entry(i, size=1000):
    return CacheEntry(key=f"{i:02x}" * 32, payload=bytes([i]) * size, layouts={})


def test_least_recently_used_entries_are_evicted_past_the_limit(disk, monkeypatch):
    first = ProviderCache()
    first.put(_sized_entry(1))
    first.put(_sized_entry(2))
    size = first.path_for(_sized_entry(1).key).stat().st_size
    # Three entries exceed the limit; after one is evicted, two fit within it.
    monkeypatch.setenv("CUDA_COOP_CACHE_MAX_MB", str(2.6 * size / 2**20))
    os.utime(first.path_for(_sized_entry(1).key), (100, 100))
    os.utime(first.path_for(_sized_entry(2).key), (200, 200))
    reader = ProviderCache()
    assert reader.get(_sized_entry(1).key)[1] == "disk"  # entry 1 is now the most recently used
    writer = ProviderCache()
    writer.put(_sized_entry(3))
    assert writer.stats.evicted == 1
    left = {i for i in (1, 2, 3) if writer.path_for(_sized_entry(i).key).exists()}
    assert left == {1, 3}
    assert _files(disk) == sorted(writer.path_for(_sized_entry(i).key) for i in (1, 3))


def test_entries_of_older_schemas_are_evicted_first(disk, monkeypatch):
    ProviderCache().put(_sized_entry(1))
    monkeypatch.setattr(cache_mod, "SCHEMA", cache_mod.SCHEMA - 1)
    ProviderCache().put(_sized_entry(9, 1100))  # written later, but can never hit again
    old = ProviderCache().path_for(_sized_entry(9).key)
    monkeypatch.setattr(cache_mod, "SCHEMA", cache_mod.SCHEMA + 1)
    current = ProviderCache()
    assert current.get(_sized_entry(1).key)[1] == "disk"  # current entries are read; old ones never are
    # A temporary file of a writer that died long ago (cuda.core keeps them in tmp/).
    stale_tmp = ProviderCache.directory() / "tmp" / "entry-dead"
    stale_tmp.write_bytes(b"partial")
    os.utime(stale_tmp, (0, 0))
    size = current.path_for(_sized_entry(1).key).stat().st_size
    monkeypatch.setenv("CUDA_COOP_CACHE_MAX_MB", str(2.6 * size / 2**20))
    c = ProviderCache()
    c.put(_sized_entry(2))
    assert c.stats.evicted == 1
    assert not old.exists() and not stale_tmp.exists()
    assert _files(disk) == sorted(c.path_for(_sized_entry(i).key) for i in (1, 2))


def test_the_layout_before_cuda_core_is_removed(disk):
    legacy = disk / "providers-v1" / "ab"
    legacy.mkdir(parents=True)
    (legacy / ("ab" * 32 + ".bin")).write_bytes(b"COOPLTO1 and more")
    c = ProviderCache()
    assert c.get(entry().key) == (None, "miss")
    assert not (disk / "providers-v1").exists()


def test_limit_zero_means_unbounded(disk, monkeypatch):
    monkeypatch.setenv("CUDA_COOP_CACHE_MAX_MB", "0")
    c = ProviderCache()
    for i in range(4):
        c.put(_sized_entry(i))
    assert c.stats.evicted == 0 and len(_files(disk)) == 4 == ProviderCache.count_entries()


@pytest.mark.parametrize("value, expected", [("", 512 * 2**20), ("64", 64 * 2**20), ("0.5", 2**19), ("0", None),
                                             ("-3", None), ("lots", 512 * 2**20)])
def test_size_limit_setting(monkeypatch, value, expected):
    # A malformed value must not break compiles: the default applies.
    from cuda.coop import _env

    monkeypatch.setenv("CUDA_COOP_CACHE_MAX_MB", value)
    assert _env.cache_max_bytes() == expected


def test_linked_cubins_share_the_providers_directory_but_not_their_keys(disk):
    from cuda.coop.core.cache import link_cache, provider_cache

    providers, links = provider_cache(), link_cache()
    assert links._open() is providers._open()  # one scan of the directory, one total against the limit
    links.put(CacheEntry(key=entry().key, payload=b"\x7fELF cubin", layouts={}))
    assert providers.get(entry().key) == (None, "miss")  # the same key, another kind
    got, origin = links.get(entry().key)
    assert origin == "disk" and got.payload == b"\x7fELF cubin"  # never kept in memory
    assert providers.directory() in links.path_for(entry().key).parents
    assert links.path_for(entry().key) != providers.path_for(entry().key)
    providers.clear_memory()
