"""README.md's statements that files of this checkout decide: they stay true as those change.

- the conda table lists exactly the run requirements and constraints of recipe/recipe.yaml,
  rendered for each variant of recipe/variants.yaml;
- the CI section names every stage .ci/run runs (ci/run_all.sh) and how the docs stage
  gets its browser;
- the summary lines it quotes are the ones ci/summary.py prints;
- the test counts it gives (lower bounds) hold.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def _need(path: str) -> Path:
    found = ROOT / path
    if not found.exists():
        pytest.skip(f"{path} is not in the sdist; the checkout runs this check")
    return found


# ------------------------------------------------------------------------------------------
# The conda table
# ------------------------------------------------------------------------------------------

def _yaml_block(text: str, path: list[str]) -> list[str]:
    """The lines of a YAML block (``requirements`` > ``run``), comments dropped. The recipe is
    plain block YAML, so no YAML library is needed (the test venvs have none)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    indent, body = -1, lines
    for key in path:
        for i, ln in enumerate(body):
            depth = len(ln) - len(ln.lstrip())
            if depth > indent and ln.strip() == f"{key}:":
                indent, rest = depth, body[i + 1:]
                break
        else:
            raise AssertionError(f"no {'.'.join(path)} in the recipe")
        end = next((j for j, ln in enumerate(rest) if len(ln) - len(ln.lstrip()) <= indent), len(rest))
        body = rest[:end]
    return body


def _items(block: list[str]) -> list[str]:
    return [ln.strip()[2:].strip() for ln in block if ln.strip().startswith("- ")]


def _render(template: str, ns: dict) -> str:
    """The recipe's ${{ ... }} expressions: a name, `name | int + N`, `(name | split("."))[i]`."""
    def one(m):
        expr = m.group(1).strip()
        if re.fullmatch(r"\w+", expr):
            return str(ns[expr])
        if m2 := re.fullmatch(r"(\w+) \| int \+ (\d+)", expr):
            return str(int(ns[m2[1]]) + int(m2[2]))
        if m2 := re.fullmatch(r'\((\w+) \| split\("(.)"\)\)\[(\d+)\]', expr):
            return str(ns[m2[1]]).split(m2[2])[int(m2[3])]
        raise AssertionError(f"a recipe expression this test cannot render: {expr!r}: teach _render")
    return re.sub(r"\$\{\{(.*?)\}\}", one, template)


def _variants() -> list[dict]:
    text = _need("recipe/variants.yaml").read_text()
    keys = {}
    for ln in text.splitlines():
        if m := re.fullmatch(r"(\w+):\s*", ln):
            current = keys.setdefault(m[1], [])
        elif m := re.fullmatch(r"  - \"?(.*?)\"?\s*", ln):
            current.append(m[1])
    zipped = keys.pop("zip_keys", None)
    assert zipped is not None, "variants.yaml has no zip_keys"
    count = max(len(v) for v in keys.values())
    variants = [{k: (v[i] if len(v) == count else v[0]) for k, v in keys.items() if not k.startswith("[")}
                for i in range(count)]
    assert count == 2 and variants, keys
    return variants


def _rendered_recipe() -> dict[str, tuple[set, set]]:
    """Build string -> (run requirements, run constraints), one entry per variant."""
    text = _need("recipe/recipe.yaml").read_text()
    context = {ln.strip().split(":", 1)[0]: ln.split(":", 1)[1].strip().strip('"')
               for ln in _yaml_block(text, ["context"])}
    number = _yaml_block(text, ["build"])
    build_number = next(ln.split(":", 1)[1].strip() for ln in number if ln.strip().startswith("number:"))
    string = next(ln.split(":", 1)[1].strip() for ln in number if ln.strip().startswith("string:"))
    run = _items(_yaml_block(text, ["requirements", "run"]))
    constraints = _items(_yaml_block(text, ["requirements", "run_constraints"]))
    out = {}
    for variant in _variants():
        ns = dict(variant, hash="<hash>", build_number=build_number)
        for key, value in context.items():
            ns[key] = _render(value, ns)
        out[_render(string, ns)] = ({_render(r, ns) for r in run}, {_render(r, ns) for r in constraints})
    return out


def _readme_conda_table() -> dict[str, tuple[set, set]]:
    rows = {}
    for ln in _section("Conda packages").splitlines():
        cells = [c.strip() for c in ln.strip().strip("|").split("|")] if ln.startswith("|") else []
        if len(cells) == 3 and not set(cells[0]) <= set("-") and cells[0] != "build string":
            rows[cells[0].strip("`")] = (set(re.findall(r"`([^`]+)`", cells[1])),
                                         set(re.findall(r"`([^`]+)`", cells[2])))
    return rows


def test_conda_table_lists_exactly_the_recipe_run_requirements_of_each_variant():
    recipe = _rendered_recipe()
    table = _readme_conda_table()
    assert table, "README's conda table: no rows of | build string | run requirements | run constraints |"
    both_run, both_constraints = table.pop("both", (set(), set()))
    assert sorted(table) == sorted(recipe), (sorted(table), sorted(recipe))
    for build, (run, constraints) in recipe.items():
        listed_run, listed_constraints = table[build][0] | both_run, table[build][1] | both_constraints
        assert listed_run == run, (f"{build}: README's conda table lacks {sorted(run - listed_run)} "
                                   f"and has {sorted(listed_run - run)} that the recipe does not")
        assert listed_constraints == constraints, (build, listed_constraints, constraints)
    # The three unpinned toolkit packages of issue #29 are there by name.
    assert {"cuda-nvrtc", "libnvjitlink", "cuda-cudart-dev"} <= both_run | set().union(*(r for r, _ in table.values()))


def test_recipe_renderer_reads_what_is_there():
    recipe = _rendered_recipe()
    run, constraints = recipe["cuda13_py_<hash>_0"]
    assert "cuda-version >=13.0,<14" in run and "python >=3.11" in run and len(run) >= 11
    assert constraints == {"cccl >=3.0.1,<4"}


# ------------------------------------------------------------------------------------------
# The CI section
# ------------------------------------------------------------------------------------------

def test_ci_section_lists_every_stage_of_ci_run():
    run_all = _need("ci/run_all.sh").read_text()
    stages = re.findall(r"^(?:stage|background(?: --after-cu13-install)?) ([\w-]+) bash (ci/[\w.]+\.sh)", run_all, re.M)
    assert len(stages) >= 5, stages
    ci = _section("CI")
    numbered = re.findall(r"^\d+\. `(ci/[\w.]+\.sh)", ci, re.M)
    assert sorted(numbered) == sorted(script for _, script in stages), (numbered, stages)
    assert f"the {['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven'][len(stages)]} stages" in ci


def test_ci_section_says_how_the_docs_stage_gets_chromium():
    docs_check = _need("ci/docs_check.sh").read_text()
    assert "apt-get install -y --no-install-recommends chromium" in docs_check
    ci = _section("CI")
    for needle in ("headless Chromium", "apt-get install chromium", "system package manager",
                   "COOP_CHROMIUM_INSTALL=0", "`SKIP` line"):
        assert needle in ci, needle
    for variable in ("COOP_CHROMIUM_INSTALL", "COOP_CHROMIUM=", "COOP_REQUIRE_BROWSER"):
        assert variable in docs_check, variable


def test_summary_lines_quoted_by_the_readme_are_the_ones_ci_summary_prints(tmp_path):
    # ci/summary.py reads <its folder>/../ci-venvs: run a copy over one made-up run.
    (tmp_path / "ci").mkdir()
    shutil.copy(_need("ci/summary.py"), tmp_path / "ci" / "summary.py")
    results, logs = tmp_path / "ci-venvs" / "results", tmp_path / "ci-venvs" / "logs"
    results.mkdir(parents=True)
    logs.mkdir()
    (results / "stages.tsv").write_text("offline\t0\t300\ndocs\t0\t60\n")
    (logs / "stage-offline.log").write_text("PASS: pins: ok\nPASS: schema: ok\n")
    (logs / "stage-docs.log").write_text("PASS: docs: build\nSKIP: docs: browser tests: no chromium\n")
    (results / "pytest-cu13.json").write_text('{"passed": 1500, "failed": 0, "error": 0, "skipped": 900, '
                                              '"xfailed": 0, "xpassed": 0, "gpu_passed": 0}')
    (results / "matrix-cu13.env").write_text("install=PASS\nheaders=PASS\npytest=PASS\npytest_rc=0\n")
    out = subprocess.run([sys.executable, str(tmp_path / "ci" / "summary.py"), "--total-seconds", "900"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    quoted = ["pytest cu13: N passed, N failed, N errors, N skipped", "total wall time: N s",
              "total: N passed, N failed, N skipped"]
    for quote in quoted:
        assert f"`{quote}`" in README, quote
        pattern = re.escape(quote).replace("N", r"\d+")
        assert re.search(pattern, out.stdout), (quote, out.stdout)


# ------------------------------------------------------------------------------------------
# Counts
# ------------------------------------------------------------------------------------------

def test_the_test_counts_the_readme_gives_hold():
    # "well over 2,000 tests, more than half of which run without a GPU"
    assert "The suite has well over 2,000 tests, more than half of which run without a GPU" in " ".join(
        README.split())
    if not (ROOT / "tests" / "conftest.py").is_file():
        pytest.skip("no test suite beside this README")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "COOP_SHARD", "COOP_PYTEST_COUNTS",
                                                                  "COOP_REQUIRE_BROWSER")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          "-m", "not gpu", str(ROOT / "tests")], capture_output=True, text=True, cwd=ROOT,
                         env=env, timeout=600)
    m = re.search(r"(\d+)/(\d+) tests collected", out.stdout)
    assert m, out.stdout[-2000:] + out.stderr[-2000:]
    without_gpu, total = int(m[1]), int(m[2])
    assert total > 2000 and without_gpu > total / 2, (without_gpu, total)
