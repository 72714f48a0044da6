"""STUB solve: does a user's cuda-version pin select the right cuda-coop build?

    python ci/conda_solve_check.py --packages ci-venvs/conda-out/noarch

CI has no conda channel, so this builds a local channel from the two real cuda-coop
.conda files (ci/build_conda.py) plus metadata-only STUB packages (empty noarch
packages with hand-written dependencies that copy the conda-forge metadata that
matters: cuda-cccl X.Y.Z pins cuda-version X.Y and `cccl ==<its CCCL>`, the CUDA
libraries pin their cuda-version minor). py-rattler indexes it and solves. What this
proves: our run pins and the pixi features' specs pick the build of the right major and
refuse to mix majors. What it cannot prove: that the real conda-forge packages solve.
Every result line says STUB.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import tomllib
from pathlib import Path

import rattler
from rattler.exceptions import SolverError
from rattler_build import Stage0Recipe, ToolConfiguration, VariantConfig

from pinlib import ROOT, Report, load_pins, main_guard

STUB_SITE = "site-packages"


def stub_specs(pins: dict) -> list[tuple[str, str, list[str]]]:
    """(name, version, depends) of every STUB package."""
    stubs = [("python", "3.12.0", []), ("numpy", "2.0.0", []), ("cuda-pathfinder", "1.9.1", []), ("cuda-core", "1.2.2", []),
             ("numba-cuda-mlir", "0.6.0", ["cuda-bindings >=12.9.1,<14", "cuda-version >=12.2,<14"]),
             ("numba-cuda-mlir", "0.5.4", ["cuda-bindings >=12.9.1,<14", "cuda-version >=12.2,<14"])]
    # Each major's pinned minor, plus a later CUDA 13 minor with its own CCCL (13.2.75 -> 3.2.0)
    # to show that the published package accepts later minors of its major.
    ctk = [(r["cuda_version"], r["ctk_cccl"], r["cccl"]) for r in pins.values()] + [("13.2", "13.2.75", "3.2.0")]
    for minor, ctk_cccl, cccl in ctk:
        major = int(minor.split(".")[0])
        nxt = f"{major}.{int(minor.split('.')[1]) + 1}"
        stubs += [
            ("cuda-version", minor, []),
            ("cccl", cccl, []),
            ("cuda-cccl", ctk_cccl, [f"cuda-version >={minor},<{nxt}", f"cccl =={cccl}"]),
            ("cuda-nvrtc", f"{minor}.1", [f"cuda-version >={minor},<{nxt}"]),
            ("libnvjitlink", f"{minor}.1", [f"cuda-version >={minor},<{nxt}"]),
            ("cuda-cudart-dev", f"{minor}.1", [f"cuda-version >={minor},<{nxt}"]),
        ]
    stubs += [("cuda-bindings", "12.9.4", ["cuda-version >=12,<13"]),
              ("cuda-bindings", "13.0.3", ["cuda-version >=13,<14"])]
    return stubs


def build_stubs(stubs, channel: Path, work: Path) -> None:
    for i, (name, version, depends) in enumerate(stubs):
        recipe = Stage0Recipe.from_dict({
            "package": {"name": name, "version": version},
            "build": {"noarch": "generic", "string": "stub_0"},
            "requirements": {"run": depends},
            "about": {"summary": "STUB for ci/conda_solve_check.py: metadata only"},
        }, recipe_dir=str(work))
        recipe.run_build(variant_config=VariantConfig(), tool_config=ToolConfiguration(test_strategy="skip"),
                         output_dir=str(work / f"out{i}"), channels=[(work / "empty").as_uri()],
                         package_format="conda")
    for conda in work.glob("out*/noarch/*.conda"):
        shutil.copy(conda, channel / "noarch" / conda.name)


def wait(result):
    """py-rattler's solve/install are coroutines, index_fs is not; accept either."""
    return asyncio.run(result) if asyncio.iscoroutine(result) else result


def solve(channel: Path, specs: list[str]):
    result = wait(rattler.solve(sources=[channel.as_uri()], specs=specs, platforms=["noarch", "linux-64"]))
    return {str(r.name.normalized): r for r in result}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packages", required=True, help="folder with the cuda-coop .conda files")
    args = ap.parse_args()
    pins = load_pins()
    pixi = tomllib.loads((ROOT / "pixi.toml").read_text())
    rep = Report("solve")
    ours = sorted(Path(args.packages).glob("cuda-coop-*.conda"))
    if len(ours) != 2:
        rep.check(False, "STUB channel", f"expected 2 cuda-coop .conda files in {args.packages}, found {len(ours)}")
        return rep.finish()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        channel = tmp / "channel"
        (channel / "noarch").mkdir(parents=True)
        (tmp / "work" / "empty").mkdir(parents=True)
        stubs = stub_specs(pins)
        build_stubs(stubs, channel, tmp / "work")
        for conda in ours:
            shutil.copy(conda, channel / "noarch" / conda.name)
        wait(rattler.index.index_fs(channel))
        rep.check(True, "STUB channel", f"{len(stubs)} STUB packages + {', '.join(c.name for c in ours)}")

        def expect(label, specs, major, cccl):
            try:
                got = solve(channel, specs)
            except Exception as exc:
                rep.check(False, f"STUB solve {label}", f"{specs}: {type(exc).__name__}: {exc}")
                return None
            coop = got.get("cuda-coop")
            build = str(coop.build) if coop else None
            found = (build.split("_")[0] if build else None, str(got["cccl"].version) if "cccl" in got else None)
            rep.equal(f"STUB solve {label} -> build, cccl", found, (f"cuda{major}", cccl))
            return got

        def refuse(label, specs):
            try:
                got = solve(channel, specs)
                rep.check(False, f"STUB solve {label} is refused", f"solved to {sorted(got)}")
            except SolverError as exc:  # unsatisfiable; any other error is a broken check
                rep.check(True, f"STUB solve {label} is refused", str(exc).splitlines()[-1].strip()[:120])
            except Exception as exc:
                rep.check(False, f"STUB solve {label} is refused", f"{type(exc).__name__}: {exc}")

        for major, row in pins.items():
            expect(f"cuda-version {row['cuda_version']}.*", ["cuda-coop", f"cuda-version {row['cuda_version']}.*"],
                   major, row["cccl"])
            # the pixi environment: exactly the specs of its feature (and python), plus cuda-coop
            deps = pixi["feature"][f"cu{major}"]["dependencies"]
            specs = ["cuda-coop", f"python {pixi['dependencies']['python']}"] + [f"{k} {v}" for k, v in deps.items()]
            expect(f"pixi env cu{major} {specs[1:]}", specs, major, row["cccl"])
        expect("cuda-version 13.2.* (later minor, floor pins)", ["cuda-coop", "cuda-version 13.2.*"], 13, "3.2.0")
        refuse("cuda12 build with cuda-version 13.0.*", ["cuda-coop * cuda12*", "cuda-version 13.0.*"])
        refuse("cuda13 build with cuda-version 12.9.*", ["cuda-coop * cuda13*", "cuda-version 12.9.*"])
        refuse("cuda13 build with cccl ==2.8.2", ["cuda-coop * cuda13*", "cccl ==2.8.2"])

        # install the cu12 solve and look where the noarch python files land
        got = solve(channel, ["cuda-coop", f"cuda-version {pins[12]['cuda_version']}.*"])
        prefix = tmp / "prefix"
        wait(rattler.install(list(got.values()), target_prefix=prefix, show_progress=False))
        site = prefix / "lib" / "python3.12" / "site-packages"
        rep.check((site / "cuda" / "coop" / "__init__.py").is_file() and not (site / "cuda" / "__init__.py").exists(),
                  "STUB install of the cu12 solve", f"cuda/coop/ under {site.relative_to(prefix)}, no cuda/__init__.py")
    return rep.finish()


if __name__ == "__main__":
    main_guard(main)
