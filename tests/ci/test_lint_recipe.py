"""ci/lint_recipe.py: the real recipe passes every rule, and every rule can fail.

Each case of ``MUTATIONS`` plants one violation into recipe/recipe.yaml; the linter must
print a FAIL line of that rule's code for it.
"""

from __future__ import annotations

import re

import pytest

import lint_recipe
from check_schemas import find_schemas
from pinlib import failures_of

pytestmark = pytest.mark.unit

TEXT = lint_recipe.RECIPE.read_text()
_FOLDER = find_schemas(None)
SCHEMA = _FOLDER / "recipe-v1.schema.json" if _FOLDER else None


def test_the_recipe_passes():
    fails = failures_of(lambda rep: lint_recipe.lint(rep, TEXT, lint_recipe.RECIPE.parent, SCHEMA))
    assert fails == []


@pytest.mark.parametrize("mutation", lint_recipe.MUTATIONS, ids=[f"{m[3]}:{m[0]}" for m in lint_recipe.MUTATIONS])
def test_each_planted_violation_fails_its_rule(mutation):
    label, _old, _new, code = mutation
    if code == "CC-SCHEMA" and SCHEMA is None:
        pytest.skip("no recipe v1 JSON schema (shared/schemas) here")
    fails = lint_recipe.mutation_failures(TEXT, mutation, SCHEMA)
    assert fails is not None, f"{label}: its anchor is no longer in recipe/recipe.yaml; update MUTATIONS"
    codes = {re.match(r"FAIL: \S+: (\S+) ", f).group(1) for f in fails}
    assert code in codes, f"{label}: expected a FAIL of {code}, got {fails}"


def test_every_rule_has_a_planted_violation():
    codes = lint_recipe.rule_codes()
    assert len(codes) >= 25, codes  # the rule codes are found at all
    assert codes - {m[3] for m in lint_recipe.MUTATIONS} == set()


def test_a_url_source_skips_what_needs_the_local_tree():
    text = TEXT.replace("source:\n  path: ..", "source:\n  url: https://example.org/c.tar.gz\n  sha256: " + "ab" * 32)
    fails = failures_of(lambda rep: lint_recipe.lint(rep, text, lint_recipe.RECIPE.parent, SCHEMA))
    # the license file and the pyproject comparisons cannot be made, and are not failures
    assert fails == []
