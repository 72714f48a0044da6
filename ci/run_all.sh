#!/usr/bin/env bash
# What .ci/run runs: every check CI can make without a GPU or a conda channel.
#
#   offline        ci/offline_checks.sh       pins, schemas, both .conda, STUB solve, pip resolves
#   matrix         ci/test_matrix.sh 13 12    a pip venv per CUDA major: toolchain, headers, pytest
#   mixed-toolkits ci/check_mixed_toolkits.sh each matrix venv plus the other major's wheels: one toolkit
#   header-safety  ci/check_header_safety.sh  a CUDA 12 venv never takes the system CUDA 13 CCCL
#   docs           ci/docs_check.sh           sphinx -W build; explorers in headless chromium
# offline runs in the background while matrix runs (it is mostly downloads and packaging,
# matrix mostly pytest on both cores); its log is printed when matrix is done.
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
background() {  # name command...: a stage that runs while the next ones do
  local name="$1"; shift
  echo "(stage $name: $* runs in the background; its log follows the matrix)"
  ( t0=$SECONDS; "$@" > "ci-venvs/logs/stage-$name.log" 2>&1; rc=$?
    printf '%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" > "ci-venvs/results/background-$name.tsv" ) &
  background_pid=$!
  background_name=$name
}
join_background() {
  wait "$background_pid"
  echo; echo "==================== $background_name (ran in the background) ===================="
  cat "ci-venvs/logs/stage-$background_name.log"
  cat "ci-venvs/results/background-$background_name.tsv" >> ci-venvs/results/stages.tsv 2>/dev/null \
    || printf '%s\t1\t0\n' "$background_name" >> ci-venvs/results/stages.tsv
}
background offline bash ci/offline_checks.sh
stage matrix bash ci/test_matrix.sh 13 12
join_background
stage mixed-toolkits bash ci/check_mixed_toolkits.sh
stage header-safety bash ci/check_header_safety.sh
stage docs bash ci/docs_check.sh
"${COOP_BASE_PYTHON:-python3}" ci/summary.py --total-seconds $((SECONDS - start))
