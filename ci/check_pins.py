"""Fail when pyproject.toml, pixi.toml or recipe/ disagree with ci/pins.toml.

    python ci/check_pins.py              # the checks, one PASS/FAIL line each
    python ci/check_pins.py --self-test  # also: each planted disagreement must be caught

Needs PyYAML and packaging (the CI tools venv has both).
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from pinlib import MAJORS, ROOT, Report, failures_of, load_pins, main_guard

VARIANT_KEYS = {  # variants.yaml key -> pin table key
    "cuda_version": "cuda_version",
    "cuda_cccl_version": "ctk_cccl",
    "cccl_version": "cccl",
    "numba_cuda_mlir_spec": "numba_cuda_mlir",
    "cuda_bindings_spec": "cuda_bindings",
}
PIXI_TASKS = {  # the commands CI and ci/test_matrix.sh run; {major} is the CUDA major
    "test": "python -m pytest",
    "test-gpu": "python -m pytest -m gpu",
    "check-headers": "python ci/check_headers.py --cuda {major}",
}
# The packagers' build command of README and docs/packaging.rst: its defaults build both
# variants from conda-forge into output/. CI runs the same script with --offline.
BUILD_CONDA_TASK = "python ci/build_conda.py"


def norm_req(text: str) -> str:
    """A requirement in one spelling: canonical name, sorted extras and specifiers."""
    r = Requirement(text)
    extras = f"[{','.join(sorted(canonicalize_name(e) for e in r.extras))}]" if r.extras else ""
    spec = ",".join(sorted(str(s) for s in r.specifier))
    marker = f"; {r.marker}" if r.marker else ""
    return f"{canonicalize_name(r.name)}{extras}{spec}{marker}"


def expected_extra(row: dict) -> set[str]:
    major, minor = row["cuda_major"], row["cuda_version"]
    reqs = [
        f"numba-cuda-mlir[cu{major}]{row['numba_cuda_mlir']}",
        f"cuda-bindings{row['cuda_bindings']}",
        f"cuda-toolkit[cccl,cudart,nvjitlink,nvrtc]=={minor}.*",
        f"{row['pypi_nvjitlink']}=={minor}.*",
    ]
    return {norm_req(r) for r in reqs}


def expected_classic_extra(row: dict) -> set[str]:
    """The numba-cuda-cuXX extra: classic numba-cuda with the same toolkit pins."""
    major, minor = row["cuda_major"], row["cuda_version"]
    reqs = [
        f"numba-cuda[cu{major}]{row['numba_cuda']}",
        f"numpy{row['numba_cuda_numpy']}",
        f"cuda-bindings{row['cuda_bindings']}",
        f"cuda-toolkit[cccl,cudart,nvjitlink,nvrtc]=={minor}.*",
        f"{row['pypi_nvjitlink']}=={minor}.*",
    ]
    return {norm_req(r) for r in reqs}


def task_cmd(task) -> str:
    return task if isinstance(task, str) else task.get("cmd", "")


def check_pyproject(rep: Report, root: Path, pins: dict) -> dict:
    py = tomllib.loads((root / "pyproject.toml").read_text())
    extras = py["project"].get("optional-dependencies", {})
    for major, row in pins.items():
        name = f"numba-cuda-mlir-cu{major}"
        found = {norm_req(r) for r in extras.get(name, [])}
        want = expected_extra(row)
        rep.check(found == want, f"pyproject extra {name}",
                  "matches the table" if found == want else
                  f"missing {sorted(want - found)}, unexpected {sorted(found - want)}")
        rep.equal(f"pyproject alias cu{major}", [norm_req(r) for r in extras.get(f"cu{major}", [])],
                  [norm_req(f"cuda-coop[{name}]")])
        classic = f"numba-cuda-cu{major}"
        found = {norm_req(r) for r in extras.get(classic, [])}
        want = expected_classic_extra(row)
        rep.check(found == want, f"pyproject extra {classic}",
                  "matches the table" if found == want else
                  f"missing {sorted(want - found)}, unexpected {sorted(found - want)}")
    cuda_named = [r for r in extras.get("test", [])
                  if re.match(r"(nvidia-|cuda-)", canonicalize_name(Requirement(r).name))]
    rep.check(not cuda_named, "pyproject extra test holds no CUDA package",
              f"found {cuda_named}" if cuda_named else "")
    sass = [Requirement(r) for r in extras.get("sass", [])]
    ok = (len(sass) == 1 and canonicalize_name(sass[0].name) == "nvidia-cuda-nvdisasm"
          and "13.9" in sass[0].specifier and "14.0" not in sass[0].specifier
          and "12.9" not in sass[0].specifier)
    rep.check(ok, "pyproject extra sass is CUDA 13 nvdisasm only", str([str(s) for s in sass]))
    conflicts = {frozenset(e["extra"] for e in group)
                 for group in py.get("tool", {}).get("uv", {}).get("conflicts", [])}
    for a in ("numba-cuda-mlir-cu12", "cu12", "numba-cuda-cu12"):
        for b in ("numba-cuda-mlir-cu13", "cu13", "sass", "numba-cuda-cu13"):
            rep.check(frozenset((a, b)) in conflicts, f"[tool.uv] conflicts has {a} x {b}")
    return py


def check_variants(rep: Report, root: Path, pins: dict) -> None:
    var = yaml.safe_load((root / "recipe" / "variants.yaml").read_text())
    zipped = {k for group in var.get("zip_keys", []) for k in group}
    rep.check(set(VARIANT_KEYS) <= zipped, "variants.yaml zips all per-major keys",
              f"zip_keys = {var.get('zip_keys')}")
    for vkey, pkey in VARIANT_KEYS.items():
        rep.equal(f"variants.yaml {vkey}", [str(v) for v in var.get(vkey, [])],
                  [str(pins[m][pkey]) for m in MAJORS])


def check_recipe(rep: Report, root: Path, py: dict) -> None:
    text = (root / "recipe" / "recipe.yaml").read_text()
    rec = yaml.safe_load(text)  # the ${{ }} expressions are plain strings to YAML
    rep.equal("recipe version = pyproject version", str(rec["context"]["version"]), py["project"]["version"])
    rep.equal("recipe noarch", rec["build"]["noarch"], "python")
    run = [r for r in rec["requirements"]["run"] if isinstance(r, str)]
    for dep in py["project"]["dependencies"]:
        r = Requirement(dep)
        want = f"{canonicalize_name(r.name)} {r.specifier}"
        rep.check(want in run, f"recipe run has pyproject dependency '{dep}'", want)
    # conda-forge's python_min pattern: run `python >=${{ python_min }}`, python_min from variants.yaml
    rep.check("python >=${{ python_min }}" in run, "recipe run python is >=${{ python_min }}")
    python_min = yaml.safe_load((root / "recipe" / "variants.yaml").read_text()).get("python_min")
    rep.equal("variants.yaml python_min = requires-python", [f">={v}" for v in python_min or []],
              [py["project"]["requires-python"]])
    for vkey in VARIANT_KEYS:
        rep.check("${{ " + vkey + " }}" in text, f"recipe uses variant key {vkey}")


def check_pixi(rep: Report, root: Path, pins: dict, py: dict) -> None:
    px = tomllib.loads((root / "pixi.toml").read_text())
    ws, feats, envs = px["workspace"], px.get("feature", {}), px.get("environments", {})
    rep.check("recipe/variants.yaml" in ws.get("build-variants-files", []),
              "pixi build-variants-files reads recipe/variants.yaml")
    rep.check("pixi-build" in ws.get("preview", []), "pixi preview pixi-build enabled")
    rep.equal("pixi package version = pyproject version", px.get("package", {}).get("version"),
              py["project"]["version"])
    backend = px.get("package", {}).get("build", {}).get("backend", {})
    rep.equal("pixi build backend", backend.get("name"), "pixi-build-rattler-build")
    test_tasks = feats.get("test", {}).get("tasks", {})
    for major, row in pins.items():
        f = feats.get(f"cu{major}", {})
        rep.equal(f"pixi cu{major} system-requirements.cuda", f.get("system-requirements", {}).get("cuda"),
                  str(major))
        deps = f.get("dependencies", {})
        rep.equal(f"pixi cu{major} cuda-version", deps.get("cuda-version"), f"{row['cuda_version']}.*")
        rep.equal(f"pixi cu{major} cuda-cccl", deps.get("cuda-cccl"), f"=={row['ctk_cccl']}")
        env = envs.get(f"cu{major}", {})
        rep.check({f"cu{major}", "test"} <= set(env.get("features", [])),
                  f"pixi environment cu{major} = features cu{major} + test", str(env.get("features")))
        rep.equal(f"pixi environment cu{major} solve-group", env.get("solve-group"), f"cu{major}")
        tasks = {**test_tasks, **f.get("tasks", {})}
        for name, cmd in PIXI_TASKS.items():
            rep.equal(f"pixi cu{major} task {name}", task_cmd(tasks.get(name, "")), cmd.format(major=major))
    rep.check("build" in envs and "build-conda" in feats.get("build", {}).get("tasks", {}),
              "pixi build environment has task build-conda")
    rep.check(backend.get("version", "*") not in ("*", ""), "pixi build backend version pinned",
              str(backend.get("version")))
    rep.check(bool(ws.get("requires-pixi")), "pixi requires-pixi set", str(ws.get("requires-pixi")))
    test_deps = feats.get("test", {}).get("dependencies", {})
    rep.check("pytest-xdist" in test_deps, "pixi test feature has pytest-xdist")
    rep.equal("pixi task test-fast", task_cmd(test_tasks.get("test-fast", "")), "python -m pytest -n auto")
    bench = feats.get("bench", {})
    rep.check("cuda-nvcc" in bench.get("dependencies", {}), "pixi bench feature has cuda-nvcc")
    bench_cmd = task_cmd(bench.get("tasks", {}).get("bench", ""))
    rep.check(bench_cmd.startswith("python benchmarks/") and (root / bench_cmd.split()[1]).is_file(),
              "pixi task bench runs a benchmarks/ script that exists", bench_cmd)
    for major in pins:
        env = envs.get(f"bench-cu{major}", {})
        rep.check({f"cu{major}", "bench"} <= set(env.get("features", [])) and env.get("solve-group") == f"cu{major}",
                  f"pixi environment bench-cu{major} = cu{major} + bench, solve-group cu{major}", str(env))
    classic = feats.get("numba-cuda", {}).get("dependencies", {})
    for major, row in pins.items():
        rep.equal(f"pixi numba-cuda feature numba-cuda (cu{major} pin)", classic.get("numba-cuda"),
                  row["numba_cuda"])
        rep.equal(f"pixi numba-cuda feature numpy (cu{major} pin)", classic.get("numpy"),
                  row["numba_cuda_numpy"])
        env = envs.get(f"numba-cuda-cu{major}", {})
        rep.check({f"cu{major}", "test", "numba-cuda"} <= set(env.get("features", []))
                  and env.get("solve-group") == f"numba-cuda-cu{major}",
                  f"pixi environment numba-cuda-cu{major} = cu{major} + test + numba-cuda", str(env))
    check_docs_env(rep, root, feats, envs)


def check_docs_env(rep: Report, root: Path, feats: dict, envs: dict) -> None:
    """pixi's docs feature pins what docs/requirements.txt pins; its task is ci/docs_check.sh's build."""
    docs = feats.get("docs", {})
    rep.check("docs" in envs.get("docs", {}).get("features", []), "pixi environment docs has feature docs")
    deps = {canonicalize_name(k): v for k, v in docs.get("dependencies", {}).items()}
    for line in (root / "docs" / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        r = Requirement(line)
        if canonicalize_name(r.name) in ("playwright", "pytest"):  # browser tests: pip/Debian chromium only
            continue
        rep.equal(f"pixi docs {r.name}", deps.get(canonicalize_name(r.name)), str(r.specifier))
    cmd = task_cmd(docs.get("tasks", {}).get("docs", ""))
    build = "python -m sphinx -W --keep-going"
    ci = (root / "ci" / "docs_check.sh").read_text()
    rep.check(cmd.startswith(build + " -b html docs ") and build in ci,
              "pixi task docs is ci/docs_check.sh's sphinx build", cmd)


def check_task_parity(rep: Report, root: Path) -> None:
    """pixi cannot run on CI, so its tasks must be the commands that do run there."""
    runner = (root / "ci" / "test_matrix.sh").read_text()
    for name, cmd in PIXI_TASKS.items():
        shell_form = cmd.format(major='"$major"')
        rep.check(shell_form in runner, f"ci/test_matrix.sh runs pixi task {name}", shell_form)
    build = task_cmd(tomllib.loads((root / "pixi.toml").read_text())["feature"]["build"]["tasks"]["build-conda"])
    rep.equal("pixi task build-conda", build, BUILD_CONDA_TASK)
    offline = (root / "ci" / "offline_checks.sh").read_text()
    script = BUILD_CONDA_TASK.split()[1]  # run there by the tools venv's python
    rep.check(f"{script} --offline" in offline, "ci/offline_checks.sh builds with the build-conda script",
              f"{script} --offline")
    wf = (root / ".github" / "workflows" / "ci.yml").read_text()
    for name in ("check-headers", "test"):
        rep.check(f"pixi run -e ${{{{ matrix.cuda }}}} {name}\n" in wf, f"workflow pixi leg runs task {name}")
    rep.check("bash ci/gpu_matrix.sh" in wf, "workflow pip leg runs ci/gpu_matrix.sh")


def run_checks(rep: Report, root: Path) -> None:
    pins = load_pins(root / "ci" / "pins.toml")
    rep.check(True, "ci/pins.toml loads", ", ".join(
        f"cu{m}: CUDA {r['cuda_version']}, cuda-cccl {r['ctk_cccl']} = CCCL {r['cccl']}" for m, r in pins.items()))
    py = check_pyproject(rep, root, pins)
    check_variants(rep, root, pins)
    check_recipe(rep, root, py)
    check_pixi(rep, root, pins, py)
    check_task_parity(rep, root)


# Each mutation plants one disagreement; the checks must FAIL on every one of them.
MUTATIONS = [
    ("pyproject cu12 toolkit minor", "pyproject.toml", "cuda-toolkit[cccl,cudart,nvjitlink,nvrtc]==12.9.*",
     "cuda-toolkit[cccl,cudart,nvjitlink,nvrtc]==12.8.*"),
    ("pyproject cu13 nvjitlink pin dropped", "pyproject.toml", '  "nvidia-nvjitlink==13.0.*",\n', ""),
    ("pyproject uv conflict dropped", "pyproject.toml",
     '  [{ extra = "numba-cuda-mlir-cu12" }, { extra = "numba-cuda-mlir-cu13" }],\n', ""),
    ("pixi cu12 takes CUDA 13 headers", "pixi.toml", 'cuda-cccl = "==12.9.27"', 'cuda-cccl = "==13.0.85"'),
    ("pixi test task differs from the CI command", "pixi.toml", 'test = { cmd = "python -m pytest",',
     'test = { cmd = "python -m pytest -x",'),
    ("pixi docs Sphinx differs from docs/requirements.txt", "pixi.toml", 'sphinx = "==8.2.3"',
     'sphinx = "==8.2.2"'),
    ("pixi bench loses nvcc", "pixi.toml", 'cuda-nvcc = "*"', 'cuda-nvvm = "*"'),
    ("pixi build backend unpinned", "pixi.toml", 'version = ">=0.4.6,<0.5" }', 'version = "*" }'),
    ("pixi build-conda task differs from the packagers' command", "pixi.toml",
     'build-conda = { cmd = "python ci/build_conda.py"', 'build-conda = { cmd = "python ci/build_conda.py --offline"'),
    ("variants cccl 2.8.3", "recipe/variants.yaml", '"2.8.2"', '"2.8.3"'),
    ("variants python_min 3.10", "recipe/variants.yaml", '  - "3.11"', '  - "3.10"'),
    ("recipe version 0.1.1", "recipe/recipe.yaml", 'version: "0.1.0"', 'version: "0.1.1"'),
    ("pin table moves cu13 to CCCL 3.2.0", "ci/pins.toml", 'cccl = "3.0.1"', 'cccl = "3.2.0"'),
]
COPIED = ["pyproject.toml", "pixi.toml", "recipe/variants.yaml", "recipe/recipe.yaml", "ci/pins.toml",
          "ci/test_matrix.sh", "ci/offline_checks.sh", ".github/workflows/ci.yml", "docs/requirements.txt",
          "ci/docs_check.sh", "benchmarks/run_all.py"]


def self_test(rep: Report) -> None:
    for label, rel, old, new in MUTATIONS:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            for c in COPIED:
                (tmp / c).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(ROOT / c, tmp / c)
            text = (tmp / rel).read_text()
            if old not in text:
                rep.check(False, f"self-test '{label}'", f"{old!r} not found in {rel}: update MUTATIONS")
                continue
            (tmp / rel).write_text(text.replace(old, new, 1))
            # load_pins refuses a broken table with SystemExit: also a catch
            fails = failures_of(lambda quiet: run_checks(quiet, tmp))
            rep.check(bool(fails), f"self-test '{label}' is caught",
                      fails[0].split(": ", 2)[-1] if fails else "NOT caught")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    rep = Report("pins")
    run_checks(rep, ROOT)
    if args.self_test:
        self_test(rep)
    return rep.finish()


if __name__ == "__main__":
    main_guard(main)
