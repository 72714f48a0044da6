"""The JSON schemas that ci/check_schemas.py validates pixi.toml and the recipe against are
vendored in ci/schemas/, with their license and source, and stay out of the wheel and sdist."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "ci" / "schemas"


@pytest.fixture(autouse=True)
def _checkout():
    if not SCHEMAS.is_dir():
        pytest.skip("ci/ is not in the sdist; the checkout runs this check")


def test_both_schemas_are_vendored_with_their_license_and_source():
    readme = (SCHEMAS / "README.md").read_text()
    for name, repo in (("pixi-manifest.schema.json", "prefix-dev/pixi"),
                       ("recipe-v1.schema.json", "prefix-dev/recipe-format")):
        schema = json.loads((SCHEMAS / name).read_text())
        assert isinstance(schema, dict) and ("properties" in schema or "anyOf" in schema), name
        row = next(line for line in readme.splitlines() if f"`{name}`" in line)
        assert repo in row and "commit" in row, row
    assert "BSD 3-Clause" in (SCHEMAS / "LICENSE-prefix-dev-BSD-3-Clause").read_text()
    assert "LICENSE-prefix-dev-BSD-3-Clause" in readme


def test_check_schemas_reads_the_vendored_copies():
    text = (ROOT / "ci" / "check_schemas.py").read_text()
    assert 'VENDORED = ROOT / "ci" / "schemas"' in text
    assert "shared" not in text


def test_neither_the_wheel_nor_the_sdist_ships_ci():
    hatch = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]
    assert hatch["wheel"]["packages"] == ["src/cuda"]
    assert not any(path.startswith("ci") for path in hatch["sdist"]["include"])
