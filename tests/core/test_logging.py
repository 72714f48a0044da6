"""The ``cuda.coop`` logger: silent by default, cache hits and NVRTC compiles at DEBUG/INFO."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.mark.unit
def test_logger_has_a_null_handler_and_prints_nothing_by_default():
    import cuda.coop.core.build  # noqa: F401  (the module that logs adds the handler)

    logger = logging.getLogger("cuda.coop")
    assert any(isinstance(h, logging.NullHandler) for h in logger.handlers)
    # No handler of the application: even a warning from cuda.coop must not reach stderr
    # through logging's last-resort handler.  `import cuda.coop` itself does not import
    # logging (tests/test_import_cost.py); the handler is there before anything logs.
    code = ("import cuda.coop, sys; assert 'logging' not in sys.modules; import cuda.coop.core.build, logging; "
            "logging.getLogger('cuda.coop.core.build').warning('x'); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                         env={"PYTHONPATH": SRC, "PATH": ""}, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok" and out.stderr == "", out.stderr


@pytest.mark.compile
def test_cache_origin_and_nvrtc_time_are_logged(isolated_cache, caplog):
    pytest.importorskip("cuda.bindings")
    from cuda.coop.core.build import build_providers
    from cuda.coop.core.cache import provider_cache

    from .build_helpers import _providers

    caplog.set_level(logging.DEBUG, logger="cuda.coop")
    build_providers(_providers(["transpose"]), "sm_90")
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("cuda.coop")]
    assert any(m.startswith("provider cache miss: 1 providers for sm_90") for m in messages), messages
    compiled = [r for r in caplog.records if r.getMessage().startswith("NVRTC compiled 1 providers for sm_90 in ")]
    assert compiled and compiled[0].levelno == logging.INFO
    assert "with PCH" in compiled[0].getMessage() or "without PCH" in compiled[0].getMessage()
    assert any(m.startswith("nvJitLink read 1 layouts in ") for m in messages), messages

    caplog.clear()
    build_providers(_providers(["transpose"]), "sm_90")
    assert any(m.startswith("provider cache hit (memory)") for m in caplog.messages), caplog.messages
    provider_cache().clear_memory()
    caplog.clear()
    build_providers(_providers(["transpose"]), "sm_90")
    assert any(m.startswith("provider cache hit (disk)") for m in caplog.messages), caplog.messages
    assert not any(m.startswith("NVRTC compiled") for m in caplog.messages)
