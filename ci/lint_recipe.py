"""Lint recipe/recipe.yaml: the recipe v1 JSON schema plus the conda-forge rules that apply to it.

    python ci/lint_recipe.py              # one PASS/FAIL/SKIP line per check, named by rule
    python ci/lint_recipe.py --self-test  # also: each rule's planted violation must be caught

conda-forge's own linter (conda-smithy) is not on PyPI and needs conda, so the rules of its
linter that apply to a single-output noarch: python recipe v1 are written out here. Each
rule carries conda-smithy's code (LINTER.md in conda-forge/conda-smithy) where it has one,
`CC-*` where the rule is this project's own; RULES below lists them, and MUTATIONS plants
one violation of every rule (tests/ci/test_lint_recipe.py feeds each to the linter).
What this cannot check offline: that recipe maintainers exist on GitHub (CF-001: only the
login syntax), and anything that needs the rendered recipe of a channel build.
Exit status 1 when any rule is broken; each FAIL line says what to change.
Needs PyYAML, packaging and jsonschema (the CI tools venv, ci/requirements-tools.txt).
"""

from __future__ import annotations

import argparse
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from pinlib import ROOT, Report, failures_of, main_guard

RECIPE = ROOT / "recipe" / "recipe.yaml"
PY_MIN = "${{ python_min }}"
EXPR = re.compile(r"\$\{\{(.*?)\}\}")
SECTION_ORDER = ["$schema", "schema_version", "context", "package", "source", "build", "requirements", "tests",
                 "about", "extra"]
REQUIREMENTS_ORDER = ["build", "host", "run", "run_constraints"]
GITHUB_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")
CONDA_FORGE_TEAM = re.compile(r"^conda-forge/[a-z0-9][a-z0-9_.-]*$")


@dataclass
class Recipe:
    """What the rules read: the text, its YAML tree and the files beside it."""

    text: str
    rec: dict
    recipe_dir: Path
    schema: Path | None
    variants: dict = field(default_factory=dict)
    src_root: Path | None = None
    project: dict = field(default_factory=dict)  # pyproject.toml of the source tree ({} when none)
    build_system: dict = field(default_factory=dict)

    @classmethod
    def load(cls, text: str, recipe_dir: Path, schema: Path | None) -> Recipe | None:
        rec = yaml.safe_load(text)  # ${{ }} expressions are plain strings to YAML
        if not isinstance(rec, dict):
            return None
        vfile = recipe_dir / "variants.yaml"
        variants = (yaml.safe_load(vfile.read_text()) or {}) if vfile.is_file() else {}
        source = rec.get("source")
        src_root = (recipe_dir / source["path"]).resolve() if isinstance(source, dict) and "path" in source else None
        py = {}
        if src_root and (src_root / "pyproject.toml").is_file():
            py = tomllib.loads((src_root / "pyproject.toml").read_text())
        return cls(text, rec, recipe_dir, schema, variants, src_root, py.get("project", {}), py.get("build-system", {}))

    def section(self, name: str) -> dict:
        value = self.rec.get(name)
        return value if isinstance(value, dict) else {}

    def requirements(self) -> dict[str, list[str]]:
        reqs = self.section("requirements")
        return {k: [s for s in reqs.get(k) or [] if isinstance(s, str)] for k in REQUIREMENTS_ORDER}

    def tests(self) -> list:
        tests = self.rec.get("tests")
        return tests if isinstance(tests, list) else []


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


def all_specs(r: Recipe) -> list[tuple[str, str]]:
    """(where, spec) of every requirement string: requirements.* and each test's requirements."""
    out = [(f"requirements.{k}", s) for k, specs in r.requirements().items() for s in specs]
    for i, t in enumerate(r.tests()):
        if isinstance(t, dict):
            for k, specs in ((t.get("requirements") or {}).items()):
                out += [(f"tests[{i}].requirements.{k}", s) for s in specs or [] if isinstance(s, str)]
    return out


# --- the rules -------------------------------------------------------------------------------------
# Each takes (Report, Recipe) and prints its lines with its code first in the check's name.

def rule_schema(rep: Report, r: Recipe) -> None:
    """CC-SCHEMA: the rattler-build recipe v1 JSON schema (shared/schemas; SKIP without it)."""
    if r.schema is None:
        rep.skip("CC-SCHEMA recipe v1 JSON schema", "no shared/schemas folder found (see ci/check_schemas.py)")
        return
    import jsonschema

    spec = json.loads(r.schema.read_text())
    cls = jsonschema.validators.validator_for(spec, default=jsonschema.Draft202012Validator)
    errors = list(cls(spec).iter_errors(r.rec))

    def leaves(errs):  # anyOf/oneOf errors hold each alternative's own errors
        for e in errs:
            yield from (leaves(e.context) if e.context else [e])

    # the deepest error is usually the one that names the offending key
    best = max(leaves(errors), key=lambda e: len(e.absolute_path), default=None)
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in best.absolute_path) if best else ""
    rep.check(not errors, "CC-SCHEMA recipe v1 JSON schema",
              "valid" if not errors else f"{len(errors)} error(s); at {where}: {best.message[:160]}")


def rule_sections(rep: Report, r: Recipe) -> None:
    """R-000 no unknown top-level section; R-001 sections in conda-forge's order."""
    unknown = [k for k in r.rec if k not in SECTION_ORDER]
    rep.check(not unknown, "R-000 top-level sections are known",
              f"unexpected {unknown}; allowed: {SECTION_ORDER} (outputs/recipe: this linter covers "
              "single-output recipes)" if unknown else ", ".join(r.rec))
    known = [k for k in r.rec if k in SECTION_ORDER]
    want = sorted(known, key=SECTION_ORDER.index)
    rep.check(known == want, "R-001 top-level sections in order", f"found {known}, expected {want}"
              if known != want else "")


def rule_name_version(rep: Report, r: Recipe) -> None:
    """R-014 package name characters; R-015/R-016/R-040 version present, a quoted string, valid."""
    pkg = r.section("package")
    name = str(pkg.get("name", ""))
    rep.check(bool(re.fullmatch(r"[a-z0-9_.\-]+", name)) or "${{" in name, "R-014 package name is lowercase a-z0-9_.-",
              repr(name))
    context = r.section("context")
    version = pkg.get("version")
    if isinstance(version, str) and EXPR.fullmatch(version.strip()):  # ${{ version }}: look it up in context
        version = context.get(EXPR.fullmatch(version.strip()).group(1).strip(), version)
    if version is None:
        rep.check(False, "R-015 package version present", "set package.version (usually ${{ version }})")
        return
    if not isinstance(version, str):
        rep.check(False, "R-040 version is a quoted string",
                  f"{version!r} is read as {type(version).__name__}: quote it, version: \"{version}\"")
        return
    ok = bool(re.fullmatch(r"(\d+!)?[0-9A-Za-z_.+]+", version)) and "-" not in version and ".." not in version
    rep.check(ok, "R-016 package version is a valid conda version",
              repr(version) if ok else f"{version!r}: letters, digits, '.', '_', '+' only (no '-')")
    v_py = r.project.get("version")
    if v_py is not None:
        rep.equal("CC-VERSION package version = pyproject version", version, v_py)


def rule_build(rep: Report, r: Recipe) -> None:
    """R-008 build.number; R-020 noarch: python; R-050/R-046 pip install with its backend in host."""
    build = r.section("build")
    number = build.get("number")
    rep.check(isinstance(number, int) and not isinstance(number, bool), "R-008 build.number is set",
              f"found {number!r}")
    rep.check(build.get("noarch") == "python", "R-020 build.noarch is python",
              f"found {build.get('noarch')!r}: this linter covers noarch: python recipes")
    script = build.get("script")
    text = script if isinstance(script, str) else json.dumps(script)
    pip = bool(re.search(r"-m pip install \.", text or ""))
    flags = all(f in (text or "") for f in ("--no-deps", "--no-build-isolation"))
    rep.check(pip and flags and "setup.py" not in (text or ""),
              "R-050 build script is `${{ PYTHON }} -m pip install . --no-deps --no-build-isolation`",
              f"found {script!r}")
    if not r.build_system.get("requires"):
        rep.skip("R-046 the build backend is a host requirement",
                 "no [build-system] requires: the source is not a local tree with a pyproject.toml")
        return
    host_names = {spec_name(s) for s in r.requirements()["host"]}
    backends = [re.split(r"[<>=!~ \[;]", s, maxsplit=1)[0] for s in r.build_system.get("requires", [])]
    missing = [b for b in backends if b not in host_names]
    rep.check(not missing, "R-046 the build backend is a host requirement",
              f"pyproject build-system requires {backends}" + (f"; host lacks {missing}" if missing else ""))


def rule_selectors(rep: Report, r: Recipe) -> None:
    """R1-002 no `if:` selectors or build.skip in a noarch recipe (nor inline conditionals, env.get());
    R1-001 no v0 comment selectors (`# [linux]`)."""
    selectors = [p for p, n in walk(r.rec) if isinstance(n, dict) and "if" in n]
    inline = [p for p, n in walk(r.rec) if isinstance(n, str)
              for expr in EXPR.findall(n) if re.search(r"\bif\b|\benv\.get\(", expr)]
    skip = "skip" in r.section("build")
    detail = []
    if selectors:
        detail.append(f"`if:` at {', '.join(selectors[:5])}")
    if inline:
        detail.append(f"inline conditional or env.get() at {', '.join(inline[:5])}")
    if skip:
        detail.append(f"build.skip {r.section('build')['skip']!r}")
    rep.check(not detail, "R1-002 no selectors in a noarch recipe",
              "; ".join(detail) + ": put build switches outside the published recipe "
              "(ci/build_conda.py rewrites a copy for the offline build)" if detail else "")
    comments = [i + 1 for i, ln in enumerate(r.text.splitlines()) if re.search(r"#\s*\[[^\]]+\]\s*$", ln)]
    rep.check(not comments, "R1-001 no comment selectors (# [...])", f"lines {comments}" if comments else "")


def rule_python_min(rep: Report, r: Recipe) -> None:
    """R-026/R-047 CFEP-25: host `python ${{ python_min }}.*`, run `python >=${{ python_min }}`,
    tests on `${{ python_min }}.*`, and python_min given a value (recipe context or variants.yaml)."""
    reqs = r.requirements()
    host_py = [s for s in reqs["host"] if spec_name(s) == "python"]
    run_py = [s for s in reqs["run"] if spec_name(s) == "python"]
    ok_host = {f"python {PY_MIN}", f"python {PY_MIN}.*", f"python ={PY_MIN}", f"python =={PY_MIN}"}
    rep.check(len(host_py) == 1 and host_py[0] in ok_host, "R-047 host python is `python ${{ python_min }}.*`",
              f"found {host_py}")
    rep.check(run_py == [f"python >={PY_MIN}"], "R-026 run python is `python >=${{ python_min }}`", f"found {run_py}")
    bad = []
    for i, t in enumerate(r.tests()):
        if not isinstance(t, dict):
            continue
        if "python" in t:
            pv = (t["python"] or {}).get("python_version")
            versions = pv if isinstance(pv, list) else [pv]
            if f"{PY_MIN}.*" not in versions and PY_MIN not in versions:
                bad.append(f"tests[{i}].python.python_version = {pv!r}")
        if "script" in t and re.search(r"\bpython\b", json.dumps(t["script"])):
            trun = (t.get("requirements") or {}).get("run") or []
            if not any(s in (f"python {PY_MIN}.*", f"python {PY_MIN}") for s in trun if isinstance(s, str)):
                bad.append(f"tests[{i}].requirements.run lacks `python {PY_MIN}.*`")
    rep.check(not bad, "R-047 tests run on python_min", "; ".join(bad))
    value = r.section("context").get("python_min") or r.variants.get("python_min")
    rep.check(bool(value), "R-047 python_min has a value (recipe context or variants.yaml)",
              f"{value!r}" if value else "set python_min in recipe/variants.yaml (or context:)")


def rule_requirements(rep: Report, r: Recipe) -> None:
    """R-009 requirements sections in order; R-021/R-022 `name version` match specs."""
    keys = [k for k in r.section("requirements") if k in REQUIREMENTS_ORDER]
    want = sorted(keys, key=REQUIREMENTS_ORDER.index)
    rep.check(keys == want, "R-009 requirements in the order build, host, run, run_constraints",
              f"found {keys}" if keys != want else "")
    split, joined = [], []
    for where, spec in all_specs(r):
        plain = EXPR.sub("X", spec)  # a template is one token
        if re.match(r"^[A-Za-z0-9_.\-]+[<>=!~]", plain):
            split.append(f"{where}: {spec!r}")
        if re.search(r"[<>=!~]=?\s+[0-9X*]", plain):
            joined.append(f"{where}: {spec!r}")
    rep.check(not split, "R-022 a space between name and version", "; ".join(split[:5]))
    rep.check(not joined, "R-021 no space between operator and version", "; ".join(joined[:5]))


def rule_expressions(rep: Report, r: Recipe) -> None:
    """R-025 `${{ name }}`: one space inside each brace pair."""
    bad = [i + 1 for i, ln in enumerate(r.text.splitlines()) if not ln.lstrip().startswith("#")
           for m in EXPR.finditer(ln) if not re.fullmatch(r" \S(.*\S)? ", m.group(1))]
    rep.check(not bad, "R-025 ${{ expressions }} have one space inside the braces", f"lines {bad}" if bad else "")


def rule_source(rep: Report, r: Recipe) -> None:
    """R-019 url sources carry a sha256 (a feedstock builds from a release URL)."""
    sources = r.rec.get("source")
    sources = sources if isinstance(sources, list) else [sources] if isinstance(sources, dict) else []
    urls = [s for s in sources if isinstance(s, dict) and "url" in s]
    if not urls:
        rep.skip("R-019 url sources have a sha256", "source is a local path (this in-repo recipe); a feedstock "
                 "replaces it with the release sdist's url + sha256")
        return
    bad = [s["url"] for s in urls if not any(k in s for k in ("sha256", "md5"))]
    rep.check(not bad, "R-019 url sources have a sha256", f"add sha256 to {bad}" if bad else "")


def rule_about(rep: Report, r: Recipe) -> None:
    """R-002 homepage, license, summary; R-007/R-010/R-044 the license; R-013 license_file; CC-URLS."""
    about = r.section("about")
    for key in ("homepage", "summary", "license"):
        rep.check(bool(about.get(key)), f"R-002 about.{key} present")
    lic = str(about.get("license") or "")
    rep.check(lic.strip().lower() not in ("", "unknown"), "R-007 license is not unknown", repr(lic))
    rep.check("license" not in re.sub(r"LicenseRef-\S+", "", lic).lower(), "R-010 license omits the word License",
              repr(lic))
    try:
        from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression

        try:
            canonical = canonicalize_license_expression(lic)
        except InvalidLicenseExpression as exc:
            canonical = f"invalid ({exc})"
        rep.check(canonical == lic, "R-044 license is an SPDX expression",
                  repr(lic) if canonical == lic else f"{lic!r}: SPDX spells it {canonical!r}")
    except ImportError:
        rep.skip("R-044 license is an SPDX expression", "packaging < 24.2 has no SPDX list")
    if "license" in r.project:
        rep.equal("CC-LICENSE license = pyproject license", lic, r.project["license"])
    files = about.get("license_file")
    files = [files] if isinstance(files, str) else list(files or [])
    if not files:
        rep.check(False, "R-013 about.license_file present", "add `license_file: LICENSE` (conda-forge requires it)")
    elif r.src_root is None:
        rep.check(True, "R-013 about.license_file present", f"{files} (source is not a local path: existence not checked)")
    else:
        missing = [f for f in files if not (r.src_root / f).is_file()]
        rep.check(not missing, "R-013 about.license_file present and the file exists",
                  f"{files} under {r.src_root}" if not missing else f"missing {missing} under {r.src_root}")
    urls = {k.lower(): v for k, v in r.project.get("urls", {}).items()}
    for key in ("homepage", "repository", "documentation"):
        val = about.get(key)
        if not (isinstance(val, str) and val.startswith("https://")):
            rep.check(False, f"CC-URLS about.{key} is an https URL", f"found {val!r}")
        elif key in urls and urls[key] != val:
            rep.check(False, f"CC-URLS about.{key} = pyproject [project.urls] {key.capitalize()}",
                      f"recipe {val!r}, pyproject {urls[key]!r}")
        else:
            rep.check(True, f"CC-URLS about.{key} is an https URL", val + (" (= pyproject)" if key in urls else ""))


def rule_maintainers(rep: Report, r: Recipe) -> None:
    """R-003/R-004 extra.recipe-maintainers, a non-empty list; CF-001 GitHub logins (syntax only)."""
    people = r.section("extra").get("recipe-maintainers")
    if not isinstance(people, list) or not people or not all(isinstance(p, str) for p in people):
        rep.check(False, "R-003 extra.recipe-maintainers is a non-empty list",
                  f"found {people!r}: list the GitHub logins of the people who answer for the package")
        return
    rep.check(True, "R-003 extra.recipe-maintainers is a non-empty list", ", ".join(people))
    bad = [p for p in people if not (GITHUB_LOGIN.match(p) or CONDA_FORGE_TEAM.match(p))]
    rep.check(not bad, "CF-001 recipe maintainers are GitHub logins or conda-forge/<team>",
              f"not a GitHub login: {bad}" if bad else "syntax only: existence is not checked offline")


def rule_tests(rep: Report, r: Recipe) -> None:
    """R-005 a non-empty tests section."""
    tests = r.rec.get("tests")
    rep.check(isinstance(tests, list) and len(tests) > 0, "R-005 tests section present",
              f"{len(tests)} tests" if isinstance(tests, list) else "add a tests: list")


def rule_trailing_newline(rep: Report, r: Recipe) -> None:
    """R-011/R-012 the file ends with exactly one newline."""
    tail = len(r.text) - len(r.text.rstrip("\n"))
    rep.check(tail == 1, "R-011 the file ends with one newline", f"{tail} trailing newlines" if tail != 1 else "")


RULES = [rule_schema, rule_sections, rule_name_version, rule_build, rule_selectors, rule_python_min,
         rule_requirements, rule_expressions, rule_source, rule_about, rule_maintainers, rule_tests,
         rule_trailing_newline]


def rule_codes() -> set[str]:
    """Every code a rule can print (from the check names in this file)."""
    return set(re.findall(r'"((?:R1?|CF|CC)-[A-Z0-9]+) ', Path(__file__).read_text()))


def lint(rep: Report, text: str, recipe_dir: Path, schema: Path | None) -> None:
    r = Recipe.load(text, recipe_dir, schema)
    if r is None:
        rep.check(False, "CC-SCHEMA recipe is a YAML mapping")
        return
    rep.equal("CC-SCHEMA schema_version", r.rec.get("schema_version"), 1)
    for rule in RULES:
        rule(rep, r)


# Each mutation plants one violation (old -> new; old is literal, or a regex after `re:`); the lint
# must FAIL on every one of them with a line of the rule code given last.
MUTATIONS = [
    ("misspelt top-level key", "\nrequirements:", "\nrequirement:", "CC-SCHEMA"),
    ("an unknown top-level section", "\nabout:", "\nmeta:\n  x: 1\nabout:", "R-000"),
    ("schema_version last", r"re:\nschema_version: 1\n(.*)\Z", r"\n\1schema_version: 1\n", "R-001"),
    ("upper-case package name", "  name: cuda-coop", "  name: CUDA-coop", "R-014"),
    ("version dropped", "  version: ${{ version }}\n", "", "R-015"),
    ("version as a float", 'version: "0.1.0"', "version: 0.1", "R-040"),
    ("version with a dash", 'version: "0.1.0"', 'version: "0.1.0-dev"', "R-016"),
    ("version differs from pyproject", 'version: "0.1.0"', 'version: "0.1.1"', "CC-VERSION"),
    ("build number dropped", "  number: 0\n", "", "R-008"),
    ("noarch generic", "\n  noarch: python", "\n  noarch: generic", "R-020"),
    ("setup.py install", "-m pip install . --no-deps --no-build-isolation", "setup.py install", "R-050"),
    ("build backend missing from host", "    - hatchling >=1.24\n", "", "R-046"),
    ("an if: selector", "    - pip\n", "    - if: linux\n      then: pip\n", "R1-002"),
    ("an inline conditional", "_${{ build_number }}", '_${{ build_number }}${{ "_x" if linux else "" }}', "R1-002"),
    ("build.skip", "\n  noarch: python", "\n  noarch: python\n  skip: win", "R1-002"),
    ("a v0 comment selector", "    - pip\n", "    - pip  # [linux]\n", "R1-001"),
    ("run python without python_min", "- python >=${{ python_min }}", "- python >=3.11", "R-026"),
    ("host python without python_min", "- python ${{ python_min }}.*\n    - pip", "- python\n    - pip", "R-047"),
    ("python test without python_version", r"re:\n      python_version:.*?\n(?=  - )", "\n", "R-047"),
    ("run before host", r"re:\n  host:\n((?:    [^\n]*\n)+)  run:\n((?:    [^\n]*\n)+)",
     r"\n  run:\n\2  host:\n\1", "R-009"),
    ("name glued to version", "    - numpy >=1.24", "    - numpy>=1.24", "R-022"),
    ("space after operator", "    - numpy >=1.24", "    - numpy >= 1.24", "R-021"),
    ("cramped ${{expression}}", "${{ version }}", "${{version}}", "R-025"),
    ("url source without sha256", "source:\n  path: ..", "source:\n  url: https://example.org/cuda-coop.tar.gz", "R-019"),
    ("homepage dropped", "  homepage: ", "  # homepage: ", "R-002"),
    ("summary dropped", r"re:\n  summary: [^\n]*", "", "R-002"),
    ("license unknown", "license: Apache-2.0", "license: unknown", "R-007"),
    ("the word License", "license: Apache-2.0", "license: Apache License 2.0", "R-010"),
    ("license not SPDX", "license: Apache-2.0", "license: Apache 2.0", "R-044"),
    ("license not in SPDX spelling", "license: Apache-2.0", "license: apache-2.0", "R-044"),
    ("license differs from pyproject", "license: Apache-2.0", "license: MIT", "CC-LICENSE"),
    ("license_file dropped", "  license_file: LICENSE\n", "", "R-013"),
    ("license_file names a missing file", "license_file: LICENSE", "license_file: LICENSE.missing", "R-013"),
    ("documentation differs from pyproject", "documentation: https://", "documentation: https://example.org/x/",
     "CC-URLS"),
    ("repository not https", "repository: https://", "repository: http://", "CC-URLS"),
    ("maintainers dropped", r"re:\nextra:.*\Z", "\n", "R-003"),
    ("maintainer not a GitHub login", "recipe-maintainers:\n    - ", "recipe-maintainers:\n    - not a login\n    - ",
     "CF-001"),
    ("tests dropped", r"re:\ntests:.*?\n(?=about:)", "\n", "R-005"),
    ("two trailing newlines", r"re:\n\Z", "\n\n", "R-011"),
]


def mutate(text: str, mutation: tuple) -> str | None:
    """The recipe text with one mutation applied (None when its anchor is not in the text).

    A literal ``old`` is replaced as it is; a ``re:`` pattern (re.S) by ``new`` with its
    groups expanded (\\1), so that a mutation can also move a block.
    """
    old, new = mutation[1], mutation[2]
    if old.startswith("re:"):
        m = re.search(old[3:], text, flags=re.S)
        return None if m is None else text[:m.start()] + m.expand(new) + text[m.end():]
    return text.replace(old, new, 1) if old in text else None


def mutation_failures(text: str, mutation: tuple, schema: Path | None) -> list[str] | None:
    """The FAIL lines of the lint on the mutated recipe (None when the mutation does not apply)."""
    mutated = mutate(text, mutation)
    if mutated is None:
        return None
    return failures_of(lambda quiet: lint(quiet, mutated, RECIPE.parent, schema))


def self_test(rep: Report, text: str, schema: Path | None) -> None:
    for mutation in MUTATIONS:
        label, code = mutation[0], mutation[3]
        if code == "CC-SCHEMA" and schema is None:
            rep.skip(f"self-test '{label}'", "no schema")
            continue
        fails = mutation_failures(text, mutation, schema)
        if fails is None:
            rep.check(False, f"self-test '{label}'", f"{mutation[1]!r} not in recipe.yaml: update MUTATIONS")
            continue
        hits = [ln for ln in fails if f": {code} " in ln]
        rep.check(bool(hits), f"self-test '{label}' is caught by {code}",
                  hits[0].split(": ", 2)[-1][:150] if hits else f"NOT caught; FAIL lines: {fails[:3]}")
    untested = sorted(rule_codes() - {m[3] for m in MUTATIONS})
    rep.check(not untested, "self-test: every rule code has a mutation", f"none for {untested}" if untested else
              f"{len(rule_codes())} codes")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    rep = Report("lint")
    from check_schemas import find_schemas

    folder = find_schemas(None)
    schema = folder / "recipe-v1.schema.json" if folder else None
    text = RECIPE.read_text()
    lint(rep, text, RECIPE.parent, schema)
    if args.self_test:
        self_test(rep, text, schema)
    return rep.finish()


if __name__ == "__main__":
    main_guard(main)
