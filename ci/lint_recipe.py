"""Lint recipe/recipe.yaml: the recipe v1 JSON schema plus the conda-forge rules we follow.

    python ci/lint_recipe.py              # one PASS/FAIL line per rule
    python ci/lint_recipe.py --self-test  # also: each planted violation must be caught

conda-forge's own linter (conda-smithy) is not on PyPI and needs conda, so these are the
rules of its noarch: python lints that apply to this recipe, written out:
- schema     the rattler-build recipe v1 JSON schema (shared/schemas; SKIP without it)
- noarch     schema_version 1 and build.noarch: python
- selectors  no `if:` selectors, and no inline `${{ ... if ... }}` conditionals or
             env.get() (a noarch recipe renders the same everywhere; CI's offline build
             switch lives in ci/build_conda.py, not in the recipe)
- python_min host `python ${{ python_min }}.*`, run `python >=${{ python_min }}`, every
             python test `python_version: ${{ python_min }}.*` and every script test
             that runs python `python ${{ python_min }}.*` in its run requirements;
             python_min given a default (recipe context or the variants.yaml beside it)
- about      license, license_file (each file present in the source tree), summary,
             homepage/repository/documentation as https URLs, equal to pyproject's
             [project.urls] Homepage/Repository/Documentation where it has them
- tests      a non-empty tests section
Exit status 1 when any rule is broken; each FAIL line says what to change.
Needs PyYAML and jsonschema (the CI tools venv).
"""

from __future__ import annotations

import argparse
import json
import re
import tomllib
from pathlib import Path

import yaml

from pinlib import ROOT, Report, failures_of, main_guard

RECIPE = ROOT / "recipe" / "recipe.yaml"
PY_MIN = "${{ python_min }}"
URL_KEYS = {"homepage": "homepage", "repository": "repository", "documentation": "documentation"}


def find_schema() -> Path | None:
    from check_schemas import find_schemas

    folder = find_schemas(None)
    return folder / "recipe-v1.schema.json" if folder else None


def walk(node, path="$"):
    """(path, node) for every node of a YAML tree."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, f"{path}[{i}]")


def spec_name(spec) -> str | None:
    return spec.split()[0] if isinstance(spec, str) and spec.split() else None


def lint(rep: Report, text: str, recipe_dir: Path, schema: Path | None) -> None:
    rec = yaml.safe_load(text)  # ${{ }} expressions are plain strings to YAML
    if not isinstance(rec, dict):
        rep.check(False, "recipe is a YAML mapping")
        return

    # schema
    if schema is None:
        rep.skip("recipe v1 JSON schema", "no shared/schemas folder found (see ci/check_schemas.py)")
    else:
        import jsonschema

        spec = json.loads(schema.read_text())
        cls = jsonschema.validators.validator_for(spec, default=jsonschema.Draft202012Validator)
        errors = list(cls(spec).iter_errors(rec))
        def leaves(errs):  # anyOf/oneOf errors hold each alternative's own errors
            for e in errs:
                yield from (leaves(e.context) if e.context else [e])

        # the deepest error is usually the one that names the offending key
        best = max(leaves(errors), key=lambda e: len(e.absolute_path), default=None)
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in best.absolute_path) if best else ""
        rep.check(not errors, "recipe v1 JSON schema",
                  "valid" if not errors else f"{len(errors)} error(s); at {where}: {best.message[:160]}")

    # noarch
    rep.equal("schema_version", rec.get("schema_version"), 1)
    build = rec.get("build") or {}
    rep.check(build.get("noarch") == "python", "build.noarch is python",
              f"found {build.get('noarch')!r}: this linter covers noarch: python recipes")

    # selectors
    selectors = [p for p, n in walk(rec) if isinstance(n, dict) and "if" in n]
    rep.check(not selectors, "no `if:` selectors in a noarch recipe",
              f"found at {', '.join(selectors[:5])}: put build switches outside the published recipe "
              "(e.g. ci/build_conda.py rewrites a copy)" if selectors else "")
    inline = [p for p, n in walk(rec) if isinstance(n, str)
              for expr in re.findall(r"\$\{\{(.*?)\}\}", n) if re.search(r"\bif\b|\benv\.get\(", expr)]
    rep.check(not inline, "no inline conditionals or env.get() in ${{ }} expressions",
              f"found at {', '.join(inline[:5])}" if inline else "")
    rep.check("skip" not in build, "no build.skip in a noarch recipe", f"found {build.get('skip')!r}" if "skip" in build else "")

    # python_min
    reqs = rec.get("requirements") or {}
    host = [s for s in reqs.get("host") or [] if isinstance(s, str)]
    run = [s for s in reqs.get("run") or [] if isinstance(s, str)]
    host_py = [s for s in host if spec_name(s) == "python"]
    ok_host = {f"python {PY_MIN}", f"python {PY_MIN}.*", f"python ={PY_MIN}", f"python =={PY_MIN}"}
    rep.check(len(host_py) == 1 and host_py[0] in ok_host, "host python is `python ${{ python_min }}.*`",
              f"found {host_py}")
    run_py = [s for s in run if spec_name(s) == "python"]
    rep.check(run_py == [f"python >={PY_MIN}"], "run python is `python >=${{ python_min }}`", f"found {run_py}")
    tests = rec.get("tests")
    bad_tests = []
    for i, t in enumerate(tests if isinstance(tests, list) else []):
        if not isinstance(t, dict):
            continue
        if "python" in t and (t["python"] or {}).get("python_version") not in (f"{PY_MIN}.*", PY_MIN):
            bad_tests.append(f"tests[{i}].python.python_version = {(t['python'] or {}).get('python_version')!r}")
        if "script" in t and re.search(r"\bpython\b", json.dumps(t["script"])):
            trun = ((t.get("requirements") or {}).get("run") or [])
            if not any(s in (f"python {PY_MIN}.*", f"python {PY_MIN}") for s in trun if isinstance(s, str)):
                bad_tests.append(f"tests[{i}].requirements.run lacks `python ${{{{ python_min }}}}.*`")
    rep.check(not bad_tests, "tests run on python_min", "; ".join(bad_tests))
    variants = recipe_dir / "variants.yaml"
    var = yaml.safe_load(variants.read_text()) if variants.is_file() else {}
    default = (rec.get("context") or {}).get("python_min") or (var or {}).get("python_min")
    rep.check(bool(default), "python_min has a default (recipe context or variants.yaml)",
              f"{default!r}" if default else "set python_min in recipe/variants.yaml (or context:)")

    # about
    about = rec.get("about") or {}
    for key in ("license", "summary"):
        rep.check(bool(about.get(key)), f"about.{key} present")
    files = about.get("license_file")
    files = [files] if isinstance(files, str) else list(files or [])
    source = rec.get("source") or {}
    src_root = (recipe_dir / source["path"]).resolve() if isinstance(source, dict) and "path" in source else None
    if not files:
        rep.check(False, "about.license_file present", "add `license_file: LICENSE` (conda-forge requires it)")
    elif src_root is None:
        rep.check(True, "about.license_file present", f"{files} (source is not a local path: existence not checked)")
    else:
        missing = [f for f in files if not (src_root / f).is_file()]
        rep.check(not missing, "about.license_file present and the file exists",
                  f"{files} under {src_root}" if not missing else f"missing {missing} under {src_root}")
    pyproject = src_root / "pyproject.toml" if src_root else None
    urls = {}
    if pyproject and pyproject.is_file():
        urls = {k.lower(): v for k, v in tomllib.loads(pyproject.read_text()).get("project", {}).get("urls", {}).items()}
    for key in URL_KEYS:
        val = about.get(key)
        if not (isinstance(val, str) and val.startswith("https://")):
            rep.check(False, f"about.{key} is an https URL", f"found {val!r}")
        elif key in urls and urls[key] != val:
            rep.check(False, f"about.{key} = pyproject [project.urls] {key.capitalize()}",
                      f"recipe {val!r}, pyproject {urls[key]!r}")
        else:
            rep.check(True, f"about.{key} is an https URL", val + (" (= pyproject)" if key in urls else ""))

    # tests
    rep.check(isinstance(tests, list) and len(tests) > 0, "tests section present",
              f"{len(tests)} tests" if isinstance(tests, list) else "add a tests: list")


# Each mutation plants one violation (old -> new; old is literal, or a regex after `re:`); the lint must FAIL on every one
# of them, and the rule named last must be among the FAIL lines.
MUTATIONS = [
    ("schema: misspelt top-level key", "\nrequirements:", "\nrequirement:", "JSON schema"),
    ("noarch generic", "\n  noarch: python", "\n  noarch: generic", "build.noarch"),
    ("an if: selector", "    - pip\n", "    - if: linux\n      then: pip\n", "selectors"),
    ("an inline conditional", "_${{ build_number }}", '_${{ build_number }}${{ "_x" if linux else "" }}', "inline conditionals"),
    ("run python without python_min", "- python >=${{ python_min }}", "- python >=3.11", "run python"),
    ("host python without python_min", "- python ${{ python_min }}.*\n    - pip", "- python\n    - pip", "host python"),
    ("python test without python_version", "      python_version: ${{ python_min }}.*\n", "", "tests run on python_min"),
    ("license_file dropped", "  license_file: LICENSE\n", "", "license_file"),
    ("license_file names a missing file", "license_file: LICENSE", "license_file: LICENSE.missing", "the file exists"),
    ("homepage dropped", "  homepage: ", "  # homepage: ", "about.homepage"),
    ("documentation differs from pyproject", "documentation: https://", "documentation: https://example.org/x/", "about.documentation"),
    ("tests dropped", r"re:\ntests:.*?\n(?=about:)", "\n", "tests section"),
]


def self_test(rep: Report, text: str, schema: Path | None) -> None:
    for label, old, new, rule in MUTATIONS:
        pattern = old[3:] if old.startswith("re:") else re.escape(old)
        mutated, n = re.subn(pattern, lambda _m: new, text, count=1, flags=re.S)
        if n == 0:
            rep.check(False, f"self-test '{label}'", f"{old!r} not in recipe.yaml: update MUTATIONS")
            continue
        fails = [ln for ln in failures_of(lambda quiet: lint(quiet, mutated, RECIPE.parent, schema)) if rule in ln]
        if rule == "JSON schema" and schema is None:
            rep.skip(f"self-test '{label}'", "no schema")
            continue
        rep.check(bool(fails), f"self-test '{label}' is caught by rule '{rule}'",
                  fails[0].split(": ", 2)[-1][:150] if fails else "NOT caught")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    rep = Report("lint")
    schema = find_schema()
    text = RECIPE.read_text()
    lint(rep, text, RECIPE.parent, schema)
    if args.self_test:
        self_test(rep, text, schema)
    return rep.finish()


if __name__ == "__main__":
    main_guard(main)
