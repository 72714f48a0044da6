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
    return CacheEntry(key=key, ltoir=b"\x01LTOIR" * 100, layouts={"coop_x": (2048, 16)}, nvrtc_seconds=0.9)


def test_memory_then_disk_hit(disk):
    c = ProviderCache()
    assert c.get(entry().key) == (None, "miss")
    c.put(entry())
    assert c.get(entry().key)[1] == "memory"
    fresh = ProviderCache()  # a new process: memory empty, disk warm
    got, origin = fresh.get(entry().key)
    assert origin == "disk" and got.ltoir == entry().ltoir and got.layouts == {"coop_x": (2048, 16)}
    assert list(disk.rglob("*.bin")) == [c.path_for(entry().key)]


def test_no_temporary_files_left(disk):
    ProviderCache().put(entry())
    assert not [p for p in disk.rglob("*") if p.name.startswith(".tmp-")]


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
    # A new schema version lives in a new directory: the old entry is not even read.
    assert ProviderCache().get(entry().key) == (None, "miss")


def test_cache_can_be_disabled(disk, monkeypatch):
    monkeypatch.setenv("CUDA_COOP_CACHE", "0")
    c = ProviderCache()
    c.put(entry())
    assert not list(disk.rglob("*.bin"))
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
    assert ProviderCache.directory() == tmp_path / "cuda-coop" / f"providers-v{cache_mod.SCHEMA}"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # ignored: not absolute
    assert ProviderCache.directory().parent == type(tmp_path)(os.path.expanduser("~")) / ".cache" / "cuda-coop"
