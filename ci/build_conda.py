"""Build both cuda-coop conda variants from recipe/ and verify what was built.

    python ci/build_conda.py --offline    # no conda channel needed (CI; any machine with PyPI)
    python ci/build_conda.py              # from conda-forge: the publishable build (pixi task build-conda)
    python ci/build_conda.py --channel URL_OR_NAME [--channel ...]   # other channels (mirrors, local folders)

Both write cuda-coop-<version>-cuda12_*.conda and cuda13_* into output/noarch/ (--output DIR
to change), through py-rattler-build's Python API (PyPI's py-rattler-build has no CLI).

--offline builds a wheel of this checkout with pip, unpacks it, and builds from a copy of
recipe/recipe.yaml rewritten by offline_recipe() below: no host requirements, a script that
copies the unpacked wheel into site-packages, a build string ending in `_offline`. That
build needs no channel at all (the channel passed is an empty local folder); its artifacts
are for checks only. The published recipe itself has no offline switch (conda-forge: no
selectors in a noarch recipe). The channel build (the default, conda-forge) builds
recipe/recipe.yaml as it is (`pip install .` with python, pip and hatchling from the
channel), then runs the recipe's tests: it needs every channel reachable, and says so in
one line (channel_problem()) before rattler-build would fail with "Failed to resolve
dependencies".

Either way each .conda is read back (info/index.json, info/hash_input.json, the payload)
and must carry: the pyproject version, noarch python, the run pins of its CUDA major from
ci/pins.toml, the cccl run constraint, every file of src/cuda/ under site-packages/, no
site-packages/cuda/__init__.py (PEP 420), and dist-info of the same version.
Needs py-rattler-build, py-rattler, zstandard, packaging, PyYAML (ci/requirements-tools.txt).
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

import yaml
import zstandard
from packaging.requirements import Requirement

from pinlib import ROOT, Report, load_pins, main_guard


def expected_depends(row: dict, project: dict) -> set[str]:
    major = row["cuda_major"]
    deps = {f"python {project['requires-python']}"}
    for d in project["dependencies"]:
        r = Requirement(d)
        deps.add(f"{r.name} {r.specifier}")
    deps |= {
        f"numba-cuda-mlir {row['numba_cuda_mlir']}",
        f"cuda-bindings {row['cuda_bindings']}",
        f"cuda-version >={row['cuda_version']},<{major + 1}",
        f"cuda-cccl >={row['ctk_cccl']},<{major + 1}",
        "cuda-nvrtc",
        "libnvjitlink",
        "cuda-cudart-dev",
    }
    return deps


def expected_constrains(row: dict) -> set[str]:
    cccl_major = int(row["cccl"].split(".")[0])
    return {f"cccl >={row['cccl']},<{cccl_major + 1}"}


def source_files() -> set[str]:
    """What the payload must hold: every file of the package tree, as site-packages paths."""
    src = ROOT / "src"
    return {
        "site-packages/" + p.relative_to(src).as_posix()
        for p in src.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def read_member(conda: Path, component: str, name: str) -> bytes | None:
    """One file out of a .conda (a zip of info-*.tar.zst and pkg-*.tar.zst)."""
    with zipfile.ZipFile(conda) as z:
        inner = next(n for n in z.namelist() if n.startswith(f"{component}-") and n.endswith(".tar.zst"))
        raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(z.read(inner))).read()
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        try:
            return tar.extractfile(name).read()
        except KeyError:
            return None


def offline_recipe(recipe: dict, site: Path) -> dict:
    """recipe/recipe.yaml rewritten for a build without any channel (CI): check-only.

    Host requirements need a channel, so there are none; instead of `pip install .` the
    script copies ``site`` (an unpacked wheel, dist-info included) into site-packages.
    Run requirements, run constraints and variants are untouched, so index.json is what
    the published build would carry; the build string gains `_offline`.
    """
    rec = json.loads(json.dumps(recipe))  # deep copy
    rec["source"] = {"path": str(ROOT)}
    build = rec["build"]
    build["string"] = str(build["string"]) + "_offline"
    build["script"] = {
        "env": {"OFFLINE_SITE": str(site)},
        "content": ['mkdir -p "$PREFIX/site-packages"', 'cp -R "$OFFLINE_SITE"/. "$PREFIX/site-packages/"'],
    }
    rec["requirements"].pop("host", None)
    return rec


DEFAULT_CHANNEL = "conda-forge"
CHANNEL_ALIAS = "https://conda.anaconda.org/"  # how rattler-build expands a bare channel name
OFFLINE_HINT = ("`python ci/build_conda.py --offline` builds both variants without any channel "
                "(check-only packages, build strings *_offline)")


def channel_url(channel: str) -> str:
    """The URL rattler-build would use for a --channel value: a name, a URL or a local folder."""
    if "://" in channel:
        return channel.rstrip("/")
    if channel.startswith((".", "/", "~")):
        return Path(channel).expanduser().resolve().as_uri()
    return CHANNEL_ALIAS + channel.strip("/")


def channel_problem(channel: str, timeout_s: float = 10.0) -> str | None:
    """Why ``channel`` cannot serve a build (one line), or None when it answers.

    A remote channel must answer a HEAD request for noarch/repodata.json (any HTTP answer but
    404 counts: the host is there); a local one must be a folder with noarch/repodata.json.
    """
    url = channel_url(channel)
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        folder = Path(urllib.parse.unquote(parsed.path))
        if not (folder / "noarch" / "repodata.json").is_file():
            return f"{folder} has no noarch/repodata.json"
        return None
    probe = f"{url}/noarch/repodata.json"
    try:
        with urllib.request.urlopen(urllib.request.Request(probe, method="HEAD"), timeout=timeout_s):
            return None
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code} for {probe}" if exc.code == 404 else None
    except urllib.error.URLError as exc:
        reason = exc.reason
        return f"{type(reason).__name__}: {reason}" if isinstance(reason, BaseException) else str(reason)
    except TimeoutError:
        return f"no answer from {probe} within {timeout_s:g} s"
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"


def unreachable_channels(channels: list[str]) -> list[str]:
    """One line per channel that cannot serve the build (empty when all can)."""
    lines = []
    for channel in channels:
        problem = channel_problem(channel)
        if problem:
            lines.append(f"cannot reach conda channel {channel_url(channel)} ({problem}): the channel build "
                         f"takes python, pip and hatchling from it and runs the recipe's tests; {OFFLINE_HINT}")
    return lines


def build(args, workdir: Path) -> list[Path]:
    from rattler_build import Stage0Recipe, ToolConfiguration, VariantConfig

    out = Path(args.output).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("noarch/cuda-coop-*.conda"):
        old.unlink()
    if args.offline:
        wheel_dir, site = workdir / "wheel", workdir / "site"
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheel_dir), str(ROOT)],
                       check=True)
        wheel = next(wheel_dir.glob("cuda_coop-*.whl"))
        zipfile.ZipFile(wheel).extractall(site)
        recipe_path = workdir / "recipe-offline" / "recipe.yaml"
        recipe_path.parent.mkdir()
        published = yaml.safe_load((ROOT / "recipe" / "recipe.yaml").read_text())
        recipe_path.write_text(yaml.safe_dump(offline_recipe(published, site), sort_keys=False))
        empty = workdir / "empty-channel"
        empty.mkdir()
        channels = [empty.as_uri()]
        tool = ToolConfiguration(test_strategy="skip")  # the tests need a channel
        print(f"offline build from {wheel.name}; channel: empty folder {empty}")
    else:
        recipe_path = ROOT / "recipe" / "recipe.yaml"
        channels = args.channel
        tool = ToolConfiguration()
    recipe = Stage0Recipe.from_file(str(recipe_path))
    results = recipe.run_build(
        variant_config=VariantConfig.from_file(str(ROOT / "recipe" / "variants.yaml")),
        tool_config=tool, output_dir=str(out), channels=channels, package_format="conda",
    )
    for r in results:
        print(f"built {r}")
    return sorted(out.glob("noarch/cuda-coop-*.conda"))


def verify(rep: Report, artifacts: list[Path], offline: bool) -> None:
    pins = load_pins()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    rep.equal("one artifact per CUDA major", len(artifacts), len(pins))
    want_files = source_files()
    index = {a: json.loads(read_member(a, "info", "info/index.json")) for a in artifacts}
    for major, row in pins.items():
        tag = f"cu{major}"
        pattern = rf"^cuda{major}_py_[0-9a-f]+_0{'_offline' if offline else ''}$"
        matching = [a for a in artifacts if re.match(pattern, index[a]["build"])]
        if len(matching) != 1:
            rep.check(False, f"{tag} artifact", f"expected one build string matching {pattern}")
            continue
        conda = matching[0]
        ij = index[conda]
        rep.check(True, f"{tag} artifact", f"{conda.name} ({conda.stat().st_size} bytes)")
        rep.equal(f"{tag} name", ij["name"], "cuda-coop")
        rep.equal(f"{tag} version", ij["version"], project["version"])
        rep.equal(f"{tag} noarch", (ij.get("noarch"), ij.get("subdir")), ("python", "noarch"))
        rep.equal(f"{tag} run pins", sorted(ij.get("depends", [])), sorted(expected_depends(row, project)))
        rep.equal(f"{tag} run constraints", sorted(ij.get("constrains", [])), sorted(expected_constrains(row)))
        hash_input = json.loads(read_member(conda, "info", "info/hash_input.json") or b"{}")
        rep.equal(f"{tag} variant", hash_input.get("cuda_version"), row["cuda_version"])
        paths = {p["_path"] for p in json.loads(read_member(conda, "info", "info/paths.json"))["paths"]}
        rep.check(all(p.startswith("site-packages/") for p in paths), f"{tag} payload only under site-packages/")
        missing, extra = want_files - paths, {p for p in paths if p.startswith("site-packages/cuda/")} - want_files
        rep.check(not missing and not extra, f"{tag} payload = src/cuda/ tree",
                  f"{len(want_files)} files" if not (missing or extra) else
                  f"missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]}")
        rep.check("site-packages/cuda/__init__.py" not in paths, f"{tag} no cuda/__init__.py (PEP 420)")
        meta_path = f"site-packages/cuda_coop-{project['version']}.dist-info/METADATA"
        meta = read_member(conda, "pkg", meta_path)
        version_line = next((ln for ln in (meta or b"").decode().splitlines() if ln.startswith("Version:")), None)
        rep.equal(f"{tag} dist-info version", version_line, f"Version: {project['version']}")
        rep.check(read_member(conda, "info", "info/licenses/LICENSE") is not None, f"{tag} info/licenses/LICENSE",
                  "about.license_file packaged")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--offline", action="store_true",
                      help="no channel: package a wheel built here (check-only, build strings *_offline)")
    mode.add_argument("--channel", action="append",
                      help=f"conda channel for the publishable build (repeatable; default {DEFAULT_CHANNEL})")
    ap.add_argument("--output", default="output", help="output folder (default: output)")
    ap.add_argument("--verify-only", action="store_true", help="check the artifacts already in --output")
    args = ap.parse_args()
    if not args.offline and not args.channel:
        args.channel = [DEFAULT_CHANNEL]
    if not args.offline and not args.verify_only:
        problems = unreachable_channels(args.channel)
        if problems:
            for line in problems:
                print(f"FAIL: conda: {line}", file=sys.stderr, flush=True)
            return 2
    rep = Report("conda")
    with tempfile.TemporaryDirectory() as tmp:
        if args.verify_only:
            artifacts = sorted(Path(args.output).glob("noarch/cuda-coop-*.conda"))
        else:
            artifacts = build(args, Path(tmp))
    verify(rep, artifacts, args.offline)
    return rep.finish()


if __name__ == "__main__":
    main_guard(main)
