"""Real pip resolves of the CUDA extras: one toolkit, one major, numba-cuda-mlir 0.6.x.

    python ci/check_resolves.py

For each CUDA major, `pip install --dry-run --report` (PyPI, no install) of
  .[numba-cuda-mlir-cuXX,test] (+ sass for 13) on this interpreter, from the checkout,
  the same from a built wheel for Python 3.12 and 3.13 (--python-version, wheels only),
  .[cuXX] (the short alias),
and on every resolution: numba-cuda-mlir 0.6.x; cuda-toolkit, NVRTC and nvJitLink of the
pinned minor; the pinned CCCL wheel; cuda-bindings in range; no package of the other
major (a -cuYY name, or an nvidia-*/cuda-toolkit/cuda-bindings version of major YY).
Then: both majors' extras together must not resolve, the detector must flag a CUDA 13
package pulled into a CUDA 12 set, and `uv lock` must succeed only thanks to
[tool.uv] conflicts. Needs pip, packaging, uv (the CI tools venv).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from pinlib import ROOT, Report, load_pins, main_guard

MAJOR_BOUND = ("nvidia-", "cuda-toolkit", "cuda-bindings")  # their version major = CUDA major


def dry_run(target: str, workdir: Path, python_version: str | None = None) -> tuple[int, dict | None, str]:
    report = workdir / "report.json"
    report.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
           "--report", str(report), target]
    if python_version:  # pip wants --target with a foreign --python-version; nothing is written
        cmd[5:5] = ["--only-binary=:all:", "--python-version", python_version, "--target", str(workdir / "t")]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    data = json.loads(report.read_text()) if p.returncode == 0 and report.exists() else None
    err = "\n".join(ln for ln in p.stderr.splitlines() if not ln.startswith("WARNING: Location"))
    return p.returncode, data, err


def packages(data: dict) -> dict[str, str]:
    return {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"] for i in data["install"]}


def other_major(pkgs: dict[str, str], major: int) -> list[str]:
    """Packages that belong to another CUDA major than `major`."""
    bad = []
    for name, version in pkgs.items():
        suffix = re.search(r"-cu(\d+)$", name)
        if suffix and int(suffix.group(1)) != major:
            bad.append(f"{name}=={version}")
        elif name.startswith(MAJOR_BOUND) and int(version.split(".")[0]) != major:
            bad.append(f"{name}=={version}")
    return bad


def check_resolution(rep: Report, label: str, pkgs: dict[str, str], row: dict) -> None:
    major, minor = row["cuda_major"], row["cuda_version"]
    cuda = sorted(f"{n}=={v}" for n, v in pkgs.items() if n.startswith(("nvidia-", "cuda-", "numba")))
    print(f"  {label}: {len(pkgs)} packages; {', '.join(cuda)}", flush=True)
    rep.check("cuda-coop" in pkgs, f"{label} includes cuda-coop")
    rep.check(pkgs.get("numba-cuda-mlir", "").startswith("0.6."), f"{label} numba-cuda-mlir 0.6.x",
              pkgs.get("numba-cuda-mlir", "absent"))
    for name in ("cuda-toolkit", row["pypi_nvrtc"], row["pypi_nvjitlink"]):
        v = pkgs.get(name, "absent")
        rep.check(v.startswith(minor + "."), f"{label} {name} is CUDA {minor}", v)
    rep.equal(f"{label} {row['pypi_cccl']}", pkgs.get(row["pypi_cccl"]), row["ctk_cccl"])
    v = pkgs.get("cuda-bindings", "absent")
    rep.check(v != "absent" and v in SpecifierSet(row["cuda_bindings"]), f"{label} cuda-bindings {row['cuda_bindings']}", v)
    bad = other_major(pkgs, major)
    rep.check(not bad, f"{label} has no package of another CUDA major", ", ".join(bad))


def check_uv(rep: Report, work: Path) -> None:
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if not uv:
        rep.skip("uv lock", "uv not installed")
        return
    for keep_conflicts in (True, False):
        tree = work / f"uv-{keep_conflicts}"
        shutil.copytree(ROOT / "src", tree / "src")
        shutil.copy(ROOT / "README.md", tree / "README.md")
        text = (ROOT / "pyproject.toml").read_text()
        if not keep_conflicts:
            text = re.sub(r"(?ms)^\[tool\.uv\]\n.*?(?=^\[)", "", text)
        (tree / "pyproject.toml").write_text(text)
        p = subprocess.run([uv, "lock", "--no-progress"], cwd=tree, capture_output=True, text=True)
        last = (p.stderr.strip().splitlines() or [""])[-1 if p.returncode == 0 else 1][:160]
        if keep_conflicts:
            rep.check(p.returncode == 0, "uv lock (universal resolve) succeeds with [tool.uv] conflicts", last)
        else:
            rep.check(p.returncode != 0, "uv lock fails once [tool.uv] conflicts are removed", last.strip())


def main() -> int:
    pins = load_pins()
    rep = Report("resolve")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "wheel"), str(ROOT)],
                       check=True, capture_output=True)
        wheel = next((work / "wheel").glob("cuda_coop-*.whl"))
        here = f"{sys.version_info[0]}.{sys.version_info[1]}"
        for major, row in pins.items():
            extras = f"numba-cuda-mlir-cu{major},test" + (",sass" if major == 13 else "")
            cases = [(f"py{here} .[{extras}]", f".[{extras}]", None)]
            cases += [(f"py{v} wheel[{extras}]", f"{wheel}[{extras}]", v) for v in ("3.12", "3.13") if v != here]
            cases += [(f"py{here} .[cu{major}]", f".[cu{major}]", None)]
            for label, target, pyver in cases:
                rc, data, err = dry_run(target, work, pyver)
                if not rep.check(rc == 0, f"{label} resolves", err.strip().splitlines()[-1] if rc else ""):
                    continue
                check_resolution(rep, label, packages(data), row)
        rc, _, err = dry_run(".[numba-cuda-mlir-cu12,numba-cuda-mlir-cu13]", work)
        rep.check(rc != 0 and "ResolutionImpossible" in err, "both majors' extras together do not resolve",
                  "ResolutionImpossible" if rc else "it resolved")
        rc, data, _ = dry_run(".[numba-cuda-mlir-cu12,test,sass]", work)
        bad = other_major(packages(data), 12) if data else []
        rep.check(bool(bad), "detector flags sass (CUDA 13 nvdisasm) in a CUDA 12 set", ", ".join(bad))
        check_uv(rep, work)
    return rep.finish()


if __name__ == "__main__":
    main_guard(main)
