"""Validate the packaging files against their schemas, and show the validators bite.

    python ci/check_schemas.py [--schemas DIR]

- pyproject.toml: validate-pyproject (PEP 517/621 + tool.* schemas it knows);
- pixi.toml: check-jsonschema with the pixi manifest schema;
- recipe/recipe.yaml: check-jsonschema with the rattler-build recipe v1 schema, then the
  rattler-build parser itself, rendering every variant of recipe/variants.yaml (the schema
  lets `noarch: pythn` through; the parser does not);
- .github/workflows/*.yml: check-jsonschema's vendored GitHub workflow schema.
Each validator is also fed one broken copy (a misspelt key, a bad noarch, a job without
runs-on) and must reject it. The pixi and recipe schemas are data from the shared folder
(../shared/schemas, never copied into the repo); without it those checks SKIP.
Needs check-jsonschema, validate-pyproject, py-rattler-build (the CI tools venv).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from pinlib import ROOT, Report, main_guard

BIN = Path(sys.executable).parent


def find_schemas(explicit: str | None) -> Path | None:
    candidates = [explicit, os.environ.get("COOP_SHARED_SCHEMAS"), ROOT.parent / "shared" / "schemas",
                  Path("/work/shared/schemas")]
    for c in candidates:
        if c and (Path(c) / "pixi-manifest.schema.json").is_file():
            return Path(c)
    return None


def run(cmd: list[str]) -> tuple[bool, str]:
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    out = (p.stdout + p.stderr).strip().splitlines()
    return p.returncode == 0, (out[-1] if out else "")[:160]


def validate(rep: Report, name: str, cmd: list[str], good: Path, bad_edit: tuple[str, str] | None, tmp: Path):
    ok, msg = run(cmd + [str(good)])
    rep.check(ok, f"{name} valid", msg)
    if bad_edit is None:
        return
    old, new = bad_edit
    text = good.read_text()
    if old not in text:
        rep.check(False, f"{name} negative control", f"{old!r} not in {good.name}: update check_schemas.py")
        return
    bad = tmp / f"broken-{good.name}"
    bad.write_text(text.replace(old, new, 1))
    ok, msg = run(cmd + [str(bad)])
    rep.check(not ok, f"{name} rejects a broken copy ({old.strip()!r} -> {new.strip()!r})", msg)


def render_recipe(rep: Report) -> None:
    from rattler_build import Stage0Recipe, VariantConfig

    path = ROOT / "recipe" / "recipe.yaml"
    variants = Stage0Recipe.from_file(str(path)).render(VariantConfig.from_file(str(ROOT / "recipe" / "variants.yaml")))
    rep.equal("rattler-build parses recipe.yaml and renders one variant per CUDA major", len(variants), 2)
    try:
        Stage0Recipe.from_yaml(path.read_text().replace("noarch: python", "noarch: pythn"))
        rep.check(False, "rattler-build rejects a broken copy (noarch: pythn)", "it parsed")
    except Exception as exc:
        rep.check(True, "rattler-build rejects a broken copy (noarch: pythn)", str(exc).splitlines()[0][:120])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schemas", help="folder with pixi-manifest.schema.json and recipe-v1.schema.json")
    args = ap.parse_args()
    rep = Report("schema")
    cj = str(BIN / "check-jsonschema")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        validate(rep, "pyproject.toml (validate-pyproject)", [str(BIN / "validate-pyproject")],
                 ROOT / "pyproject.toml", ('requires-python = ">=3.11"', 'requires-python = 3.11'), tmp)
        schemas = find_schemas(args.schemas)
        if schemas is None:
            rep.skip("pixi.toml and recipe.yaml schemas", "no shared/schemas folder found beside the checkout")
        else:
            print(f"schemas from {schemas}")
            validate(rep, "pixi.toml (pixi manifest schema)",
                     [cj, "--schemafile", str(schemas / "pixi-manifest.schema.json")],
                     ROOT / "pixi.toml", ("solve-group", "solve_group"), tmp)
            validate(rep, "recipe/recipe.yaml (recipe v1 schema)",
                     [cj, "--schemafile", str(schemas / "recipe-v1.schema.json")],
                     ROOT / "recipe" / "recipe.yaml", ("\nrequirements:", "\nrequirement:"), tmp)
        render_recipe(rep)
        for wf in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
            validate(rep, f".github/workflows/{wf.name} (GitHub workflow schema)",
                     [cj, "--builtin-schema", "vendor.github-workflows"], wf, ("runs-on:", "runs_on:"), tmp)
    return rep.finish()


if __name__ == "__main__":
    main_guard(main)
