#!/usr/bin/env bash
# The same tests once per CUDA major, each in its own pip venv: the pip route of the matrix.
#
#   bash ci/test_matrix.sh 13 12            # CPU (CI): GPU tests skip themselves
#   bash ci/test_matrix.sh --gpu 13 12      # GPU machine: a skipped gpu test is a failure
#   bash ci/test_matrix.sh --gpu-only 13    # GPU machine, `-m gpu` tests only (pixi test-gpu)
#   bash ci/test_matrix.sh --active --gpu-only 13   # use the python already active (device bundle)
#
# Per major: venv ci-venvs/cuXX (made afresh; CI_REUSE_VENVS=1 keeps an existing one), then
#   python -m pip install -e ".[numba-cuda-mlir-cuXX,test]"   (+ sass: nvdisasm, and
#   numba-cuda-cu13: classic numba-cuda, so the backend-parametrized tests run on both
#   compilers; CUDA 13 only)
#   the toolchain it resolves, python ci/check_headers.py, python -m pytest, and where
#   classic numba-cuda is installed, python -m pytest --compiler numba-cuda tests
# with CUDA_HOME/CUDA_PATH unset (a system CUDA 13 must not leak into a CUDA 12 run),
# CUDA_COOP_CACHE_DIR=ci-venvs/cache-cuXX, and ci/pytest_plugins/coop_ci.py loaded through
# PYTEST_ADDOPTS (toolchain header line, counts, the GPU guard). The commands are literally
# the pixi tasks check-headers / test / test-gpu (ci/check_pins.py keeps them equal).
# The next major's venv and pip install run in the background during this major's pytest
# (their lines print when that major starts: ci-venvs/results/install-cuXX.log).
# Results: ci-venvs/results/matrix-cuXX.env, read by ci/summary.py.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

mode=cpu; active=0; majors=()
for a in "$@"; do
  case "$a" in
    --gpu) mode=gpu ;;
    --gpu-only) mode=gpu-only ;;
    --active) active=1 ;;
    12|13) majors+=("$a") ;;
    *) echo "usage: ci/test_matrix.sh [--gpu|--gpu-only] [--active] 12|13 ..." >&2; exit 2 ;;
  esac
done
[ ${#majors[@]} -gt 0 ] || majors=(13 12)
base_python="${COOP_BASE_PYTHON:-python3}"
results="$root/ci-venvs/results"
mkdir -p "$results"
overall=0

test_files() { find tests -name 'test_*.py' -o -name '*_test.py' 2>/dev/null | wc -l; }

install_major() {  # venv + pip install of one major; its lines and install= go to matrix-cuXX.env
  local major="$1" venv="$root/ci-venvs/cu$1" extras log
  local out="$results/matrix-cu$major.env"
  log="$root/ci-venvs/logs/pip-cu$major.log"
  mkdir -p "$root/ci-venvs/logs"
  : > "$out"
  extras="numba-cuda-mlir-cu$major,test"
  [ "$major" = 13 ] && extras="$extras,sass,numba-cuda-cu13"
  if [ "${CI_REUSE_VENVS:-0}" != 1 ] || [ ! -x "$venv/bin/python" ]; then
    rm -rf "$venv"
    "$base_python" -m venv "$venv" || { echo "FAIL: matrix-cu$major: venv"; echo "install=FAIL" >> "$out"; return 1; }
  fi
  local t0=$SECONDS
  if ! "$venv/bin/python" -m pip install -e ".[$extras]" > "$log" 2>&1; then
    tail -n 30 "$log"
    echo "FAIL: matrix-cu$major: pip install -e \".[$extras]\" (log: $log)"
    echo "install=FAIL" >> "$out"
    return 1
  fi
  echo "PASS: matrix-cu$major: pip install -e \".[$extras]\" ($((SECONDS - t0)) s)"
  echo "install=PASS" >> "$out"
  "$venv/bin/python" -m pip list 2>/dev/null | grep -Ei '^(cuda|nvidia|numba)' | sed 's/^/  /'
}

run_major() {  # after install_major (unless --active): toolchain, headers, pytest
  local major="$1" venv="$root/ci-venvs/cu$1" rc status detail
  local out="$results/matrix-cu$major.env"
  echo "=== cu$major ($mode) ==="
  [ "$active" = 0 ] || : > "$out"
  if [ "$active" = 0 ]; then
    cat "$results/install-cu$major.log"
    grep -q '^install=PASS' "$out" || return 1
    # Like `source $venv/bin/activate`: `python` below is the venv's interpreter.
    export PATH="$venv/bin:$PATH" VIRTUAL_ENV="$venv"
    unset CUDA_HOME CUDA_PATH CUDA_COOP_CCCL_ROOT
  fi
  export CUDA_COOP_CACHE_DIR="$root/ci-venvs/cache-cu$major"
  export PYTHONPATH="$root/ci/pytest_plugins${PYTHONPATH:+:$PYTHONPATH}"
  export PYTEST_ADDOPTS="-p coop_ci${PYTEST_ADDOPTS:+ $PYTEST_ADDOPTS}"
  export COOP_PYTEST_COUNTS="$results/pytest-cu$major.json"
  rm -f "$COOP_PYTEST_COUNTS"
  if [ "$mode" = cpu ]; then
    export COOP_REQUIRE_GPU=0
    # The CPU suite is NVRTC/LTO-bound and single-threaded per process: one
    # pytest-xdist worker per core (the `test` extra brings xdist) keeps CI short;
    # work stealing keeps both busy to the end (test times range from 0.01 s to 20 s).
    export PYTEST_ADDOPTS="$PYTEST_ADDOPTS -n ${COOP_PYTEST_WORKERS:-$(nproc)} --dist worksteal"
  else
    export COOP_REQUIRE_GPU=1
  fi

  # prints `toolchain cuXX: <toolchain().describe()>`, then checks it against ci/pins.toml
  if python ci/check_headers.py --cuda "$major"; then
    echo "headers=PASS" >> "$out"
  else
    echo "headers=FAIL" >> "$out"; rc=1
  fi

  local t1=$SECONDS
  if [ "$mode" = gpu-only ]; then
    python -m pytest -m gpu; rc=$?
  else
    python -m pytest; rc=$?
  fi
  status=PASS; detail="exit $rc"
  if [ "$rc" = 5 ]; then
    if [ "$mode" = cpu ] && [ "$(test_files)" = 0 ]; then
      status=SKIP; detail="no test files under tests/ yet"
    else
      status=FAIL; detail="pytest collected no tests although tests/ has $(test_files) test files"
    fi
  elif [ "$rc" != 0 ]; then
    status=FAIL
  fi
  echo "$status: matrix-cu$major: pytest ($mode, $((SECONDS - t1)) s) -- $detail"
  echo "pytest=$status" >> "$out"
  echo "pytest_rc=$rc" >> "$out"

  # Where classic numba-cuda is installed (the numba-cuda-cu13 extra), the whole suite again
  # with its kernels compiled by it: the same test files (tests/compiler.py).
  if python -c "import numba_cuda" 2>/dev/null; then
    local t2=$SECONDS marker=()
    [ "$mode" = gpu-only ] && marker=(-m gpu)
    export COOP_PYTEST_COUNTS="$results/pytest-cu$major-numba-cuda.json"
    rm -f "$COOP_PYTEST_COUNTS"
    python -m pytest --compiler numba-cuda "${marker[@]}" tests; rc=$?
    status=PASS; [ "$rc" = 0 ] || status=FAIL
    echo "$status: matrix-cu$major: pytest --compiler numba-cuda tests ($mode, $((SECONDS - t2)) s) -- exit $rc"
    echo "pytest_numba_cuda=$status" >> "$out"
    echo "pytest_numba_cuda_rc=$rc" >> "$out"
  fi
  grep -q '=FAIL' "$out" && return 1
  return 0
}

# The next major's venv and pip install (downloads and unpacking, mostly I/O) run in the
# background while this major's pytest keeps both cores busy, instead of after it.
start_install() {
  [ "$active" = 0 ] || return 0
  ( install_major "$1" > "$results/install-cu$1.log" 2>&1 ) &
  install_pid=$!
}
prefetched=""
for i in "${!majors[@]}"; do
  major="${majors[$i]}"
  [ "$prefetched" = "$major" ] || start_install "$major"
  [ "$active" = 1 ] || wait "$install_pid"
  next="${majors[$((i + 1))]:-}" prefetched=""
  if [ -n "$next" ] && [ "$next" != "$major" ]; then start_install "$next"; prefetched="$next"; fi
  # a subshell per major: PATH/VIRTUAL_ENV/exports of one major never reach the next
  ( run_major "$major" ) || overall=1
done
[ "$active" = 1 ] || wait
exit $overall
