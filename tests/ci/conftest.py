"""Tests of the ci/ packaging scripts (ci/lint_recipe.py, ci/build_conda.py).

They need what those scripts need: PyYAML, zstandard, jsonschema and packaging >= 24.2
(SPDX), as the CI tools venv has them (ci/requirements-tools.txt; ci/offline_checks.sh runs
them there). In an environment without those (the CUDA test venvs) they are not collected.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

CI = Path(__file__).resolve().parents[2] / "ci"
NEEDS = ("yaml", "zstandard", "jsonschema", "packaging.licenses")


def _missing() -> list[str]:
    out = []
    for name in NEEDS:
        try:
            if importlib.util.find_spec(name) is None:
                out.append(name)
        except ModuleNotFoundError:  # a parent package is missing
            out.append(name)
    return out


def pytest_ignore_collect(collection_path, config):
    if collection_path.name.startswith("test_") and collection_path.suffix == ".py":
        return bool(_missing())
    return None


if not _missing() and str(CI) not in sys.path:
    sys.path.insert(0, str(CI))
