#!/usr/bin/env bash
# What .ci/run runs: every check CI can make without a GPU or a conda channel.
#
#   offline        ci/offline_checks.sh       pins, schemas, both .conda, STUB solve, pip resolves
#   matrix         ci/test_matrix.sh 13 12    a pip venv per CUDA major: toolchain, headers, pytest
#   mixed-toolkits ci/check_mixed_toolkits.sh each matrix venv plus the other major's wheels: one toolkit
#   header-safety  ci/check_header_safety.sh  a CUDA 12 venv never takes the system CUDA 13 CCCL
#   docs           ci/docs_check.sh           sphinx -W build; explorers in headless chromium
# offline and header-safety run in the background while matrix runs (they are mostly
# downloads and packaging, matrix mostly pytest on both cores); their logs are printed
# when matrix is done.
# then ci/summary.py: per-stage results, pytest counts per major, total time, and the
# closing `total: N passed, N failed, N skipped` line. Exit 1 when anything failed.
# Logs: ci-venvs/logs/stage-<name>.log. Everything it makes lives in ci-venvs/ (git-ignored).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
start=$SECONDS
rm -rf ci-venvs/logs ci-venvs/results
mkdir -p ci-venvs/logs ci-venvs/results
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONUNBUFFERED=1
echo "cuda-coop CI: $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(uname -n), $("${COOP_BASE_PYTHON:-python3}" --version 2>&1), $(nproc) cores"

stage() {  # name command...
  local name="$1" t0=$SECONDS rc; shift
  echo; echo "==================== $name: $* ===================="
  "$@" 2>&1 | tee "ci-venvs/logs/stage-$name.log"
  rc=${PIPESTATUS[0]}
  printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" >> ci-venvs/results/stages.tsv
}
background_names=() background_pids=()
background() {  # [--after-cu13-install] name command...: a stage that runs while the next ones do
  local after=0 name
  [ "$1" = --after-cu13-install ] && { after=1; shift; }
  name="$1"; shift
  echo "(stage $name: $* runs in the background; its log follows the matrix)"
  ( [ "$after" = 0 ] || wait_for_cu13_install
    t0=$SECONDS; "$@" > "ci-venvs/logs/stage-$name.log" 2>&1; rc=$?
    printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" > "ci-venvs/results/background-$name.tsv" ) &
  background_pids+=($!)
  background_names+=("$name")
}
join_background() {
  local i name
  for i in "${!background_pids[@]}"; do
    name=${background_names[$i]}
    wait "${background_pids[$i]}"
    echo; echo "==================== $name (ran in the background) ===================="
    cat "ci-venvs/logs/stage-$name.log"
    cat "ci-venvs/results/background-$name.tsv" >> ci-venvs/results/stages.tsv 2>/dev/null \
      || printf '%s\t1\t0\n' "$name" >> ci-venvs/results/stages.tsv
  done
}
wait_for_cu13_install() {  # until the matrix's cu13 pip install is over (or 15 min, then anyway)
  local waited=0
  until grep -q '^install=' ci-venvs/results/matrix-cu13.env 2>/dev/null || [ "$waited" -ge 900 ]; do
    sleep 2; waited=$((waited + 2))
  done
}
background offline bash ci/offline_checks.sh
# header-safety is a venv, pip installs and three toolchain probes: I/O, not CPU. It runs
# during the cu13 pytest, once the cu13 install (which the pytest waits for) is done.
background --after-cu13-install header-safety bash ci/check_header_safety.sh
stage matrix bash ci/test_matrix.sh 13 12
join_background
stage mixed-toolkits bash ci/check_mixed_toolkits.sh
stage docs bash ci/docs_check.sh
"${COOP_BASE_PYTHON:-python3}" ci/summary.py --total-seconds $((SECONDS - start))
