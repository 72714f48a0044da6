"""Real NVRTC: one translation unit per kernel, layouts read back, cache keys."""

from __future__ import annotations

import pytest
from .build_helpers import _providers

pytestmark = pytest.mark.compile

pytest.importorskip("cuda.bindings")


def test_one_translation_unit_and_layouts(isolated_cache):
    from cuda.coop.core.build import build_providers

    providers = _providers(["transpose", "warp_transpose_timesliced", "direct"])
    result = build_providers(providers, "sm_90")
    assert result.cache == "compiled"
    assert result.source.count('extern "C" __device__ void coop_load_store_load_') == 3
    # Storage-free algorithms have no layout; the others report CUB's TempStorage.
    storage = {p.symbol: p for p in providers if p.has_storage}
    assert set(result.layouts) == set(storage)
    for size, align in result.layouts.values():
        assert size > 0 and align in (4, 8, 16)
    again = build_providers(providers, "sm_90")
    assert again.cache == "memory" and again.key == result.key


def test_cache_key_changes_with_arch_and_source(isolated_cache):
    from cuda.coop.core.build import build_providers

    a = build_providers(_providers(["transpose"]), "sm_90")
    b = build_providers(_providers(["transpose"]), "sm_80")
    c = build_providers(_providers(["transpose"], block=(256, 1, 1)), "sm_90")
    assert len({a.key, b.key, c.key}) == 3


def test_disk_cache_survives_memory_loss(isolated_cache):
    from cuda.coop.core.build import build_providers
    from cuda.coop.core.cache import provider_cache

    first = build_providers(_providers(["warp_transpose"]), "sm_90")
    provider_cache().clear_memory()
    second = build_providers(_providers(["warp_transpose"]), "sm_90")
    assert second.cache == "disk" and second.ltoir == first.ltoir and second.layouts == first.layouts


def test_identical_calls_share_one_provider():
    a = _providers(["transpose", "transpose"])
    assert a[0].symbol == a[1].symbol


def test_toolchain_identity_is_in_the_key():
    from cuda.coop.core.toolchain import toolchain

    ident = toolchain().identity()
    assert "nvrtc=" in ident and "nvjitlink=" in ident and "cccl=" in ident


def test_source_dump(isolated_cache, tmp_path, monkeypatch):
    from cuda.coop.core.build import build_providers

    monkeypatch.setenv("CUDA_COOP_SOURCE_DUMP_DIR", str(tmp_path / "dump"))
    result = build_providers(_providers(["striped"]), "sm_90")
    dumped = list((tmp_path / "dump").glob("cuda_coop_*.cu"))
    assert len(dumped) == 1 and dumped[0].read_text() == result.source
