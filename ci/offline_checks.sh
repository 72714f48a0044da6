#!/usr/bin/env bash
# Every packaging check that needs neither a GPU nor a conda channel.
#
#   bash ci/offline_checks.sh
#
# Makes the tools venv ci-venvs/tools (ci/requirements-tools.txt), then, each printing
# PASS/FAIL/SKIP lines:
#   pins     ci/check_pins.py --self-test  pyproject / pixi.toml / recipe vs ci/pins.toml
#   schemas  ci/check_schemas.py           pyproject, pixi.toml, recipe, workflows
#   lint     ci/lint_recipe.py --self-test  recipe: v1 schema + the conda-forge rules that apply
#   tests    pytest tests/ci                the linter fails each rule; an unreachable channel is one line
#   conda    ci/build_conda.py --offline   both .conda variants built and read back
#   solve    ci/conda_solve_check.py       STUB local channel: cuda-version picks the build
#   resolve  ci/check_resolves.py          real pip resolves per extra, uv lock
# Exit status: non-zero when any of them failed (all of them run regardless).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tools="$root/ci-venvs/tools"
mkdir -p "$root/ci-venvs/logs"
if [ ! -x "$tools/bin/check-jsonschema" ] || ! cmp -s ci/requirements-tools.txt "$tools/requirements-tools.txt"; then
  rm -rf "$tools"
  "${COOP_BASE_PYTHON:-python3}" -m venv "$tools"
  if ! "$tools/bin/python" -m pip install -q -r ci/requirements-tools.txt > "$root/ci-venvs/logs/pip-tools.log" 2>&1; then
    tail -n 20 "$root/ci-venvs/logs/pip-tools.log"
    echo "FAIL: offline: install ci/requirements-tools.txt"
    exit 1
  fi
  cp ci/requirements-tools.txt "$tools/requirements-tools.txt"
fi
echo "PASS: offline: tools venv ($("$tools/bin/python" -c 'import rattler_build; print("rattler-build", rattler_build.rattler_build_version())'))"
py="$tools/bin/python"
rc=0
step() { echo; echo "--- $1"; shift; "$@" || rc=1; }
pytest_line() {  # pytest in the tools venv, closed by one PASS/FAIL line for ci/summary.py
  local out status
  out="$("$py" -m pytest "$@" -q -p no:cacheprovider 2>&1)"; status=$?
  echo "$out" | tail -n 25
  if [ $status -eq 0 ]; then echo "PASS: offline: pytest $* -- $(echo "$out" | tail -n 1)"
  else echo "FAIL: offline: pytest $* -- $(echo "$out" | tail -n 1)"; return 1; fi
}
step "pins: ci/pins.toml vs pyproject.toml, pixi.toml, recipe/" "$py" ci/check_pins.py --self-test
step "schemas" "$py" ci/check_schemas.py
step "lint: recipe/recipe.yaml, conda-forge rules" "$py" ci/lint_recipe.py --self-test
step "tests/ci: pytest of the packaging scripts" pytest_line tests/ci
step "conda: both variants, offline" "$py" ci/build_conda.py --offline --output ci-venvs/conda-out
step "solve: local channel (STUB dependencies)" "$py" ci/conda_solve_check.py --packages ci-venvs/conda-out/noarch
step "resolve: pip extras against PyPI" "$py" ci/check_resolves.py
exit $rc
