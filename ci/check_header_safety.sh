#!/usr/bin/env bash
# Header safety: a CUDA 12 environment must never compile against a system CUDA 13's CCCL.
#
#   bash ci/check_header_safety.sh
#
# This machine and CI have CUDA 13.0 in /usr/local (CCCL 3.0.1 headers). cuda-pathfinder
# looks for CCCL in site-packages, then conda, CUDA_HOME/CUDA_PATH, then the system
# toolkit; so a CUDA 12 venv that lacks its CCCL wheel falls back to CCCL 3.x. This
# script builds exactly that venv (ci-venvs/hs-cu12: CUDA 12.9 NVRTC, nvJitLink and
# bindings, cuda-coop --no-deps, NO nvidia-cuda-cccl-cu12) and requires cuda-coop's
# toolchain check (cuda.coop.ToolkitMismatchError) to refuse, naming both versions:
#   A  system fallback, CUDA_HOME/CUDA_PATH unset     -> ToolkitMismatchError (NVRTC 12.9, CCCL 3.x)
#   B  CUDA_HOME pointing at a CUDA 13 tree           -> ToolkitMismatchError
#   C  after installing the pinned CCCL wheel, with CUDA_HOME still at the CUDA 13 tree
#                                                     -> resolves CCCL 2.8.2 from site-packages
# B uses the system CUDA 13 when present, else a minimal stand-in tree (version header +
# one CUB header) made here; A needs a system CUDA and SKIPs without one.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
base_python="${COOP_BASE_PYTHON:-python3}"
venv="$root/ci-venvs/hs-cu12"
log="$root/ci-venvs/logs/pip-hs-cu12.log"
mkdir -p "$root/ci-venvs/logs"
pass=0; fail=0; skip=0
result() {  # status name detail
  echo "$1: header-safety: $2${3:+ -- $3}"
  case "$1" in PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; SKIP) skip=$((skip + 1)) ;; esac
}
finish() {
  echo "header-safety: $pass passed, $fail failed, $skip skipped"
  rm -rf "$venv" "$root/ci-venvs/hs-fake-cuda13"
  [ "$fail" = 0 ]
  exit $?
}

# The pins of CUDA 12 and the CCCL of the system toolkit, read from their sources.
read -r nvrtc_pkg nvjit_pkg cccl_pkg ctk_cccl cccl12 minor12 bindings12 < <("$base_python" - <<'EOF'
import sys; sys.path.insert(0, "ci")
from pinlib import load_pins
r = load_pins()[12]
print(r["pypi_nvrtc"], r["pypi_nvjitlink"], r["pypi_cccl"], r["ctk_cccl"], r["cccl"], r["cuda_version"], r["cuda_bindings"])
EOF
)
cccl_of() {  # CCCL version of an include dir holding cuda/std/__cccl/version.h
  local n
  n=$(sed -n 's/^#[[:space:]]*define[[:space:]]\+CCCL_VERSION[[:space:]]\+\([0-9]\+\).*/\1/p' "$1/cuda/std/__cccl/version.h" 2>/dev/null | head -n1)
  [ -n "$n" ] && echo "$((n / 1000000)).$(((n / 1000) % 1000)).$((n % 1000))"
}
sys_cuda=""; sys_cccl=""
for d in /usr/local/cuda /usr/local/cuda-13*; do
  if [ -f "$d/include/cccl/cuda/std/__cccl/version.h" ]; then
    v=$(cccl_of "$d/include/cccl")
    case "$v" in 3.*) sys_cuda="$d"; sys_cccl="$v"; break ;; esac
  fi
done
echo "system CUDA 13 toolkit: ${sys_cuda:-none} ${sys_cccl:+(CCCL $sys_cccl)}"

rm -rf "$venv"
"$base_python" -m venv "$venv"
if ! "$venv/bin/python" -m pip install "cuda-bindings$bindings12" "$nvrtc_pkg==$minor12.*" "$nvjit_pkg==$minor12.*" \
      cuda-pathfinder numpy > "$log" 2>&1 \
   || ! "$venv/bin/python" -m pip install --no-deps -e . >> "$log" 2>&1; then
  tail -n 20 "$log"; result FAIL "set up the CUDA 12 venv without $cccl_pkg" "log: $log"; finish
fi
if "$venv/bin/python" -m pip show "$cccl_pkg" > /dev/null 2>&1; then
  result FAIL "venv lacks $cccl_pkg" "it is installed"; finish
fi
result PASS "venv ci-venvs/hs-cu12: CUDA $minor12 NVRTC/nvJitLink, no $cccl_pkg"

probe() {  # mismatch|ok  label  CCCL-named-in-the-error|-  [VAR=value ...]
  local expect="$1" label="$2" want_cccl="$3"; shift 3
  local out
  out=$(env -u CUDA_HOME -u CUDA_PATH -u CUDA_COOP_CCCL_ROOT "$@" \
        CUDA_COOP_CACHE_DIR="$root/ci-venvs/cache-hs" "$venv/bin/python" - 2>&1 <<'EOF'
import cuda.coop
from cuda.coop.core.toolchain import toolchain
try:
    print("RESOLVED", toolchain().describe())
except cuda.coop.ToolkitMismatchError as exc:
    print("MISMATCH", exc)
EOF
)
  printf '  %s: %s\n' "$label" "${out:0:600}"
  if [ "$expect" = mismatch ]; then
    case "$out" in
      MISMATCH*) ;;
      *) result FAIL "$label raises ToolkitMismatchError" "it did not"; return ;;
    esac
    if grep -q "$minor12" <<< "$out" && grep -q "${want_cccl}" <<< "$out"; then
      result PASS "$label raises ToolkitMismatchError naming NVRTC $minor12 and CCCL $want_cccl"
    else
      result FAIL "$label error names both versions" "wanted $minor12 and $want_cccl"
    fi
  else
    case "$out" in
      "RESOLVED NVRTC $minor12"*"CCCL $cccl12 "*"site-packages"*) result PASS "$label resolves CCCL $cccl12 from site-packages" ;;
      *) result FAIL "$label resolves CCCL $cccl12 from site-packages" "got: $out" ;;
    esac
  fi
}
# A: the real trap, the system toolkit found by pathfinder's fallback
if [ -n "$sys_cuda" ]; then
  probe mismatch "A: no CCCL wheel, CUDA_HOME unset, system $sys_cuda" "$sys_cccl"
else
  result SKIP "A: system CUDA fallback" "no CUDA 13 toolkit with CCCL 3.x under /usr/local"
fi

# B: CUDA_HOME at a CUDA 13 tree (system one, or a stand-in)
if [ -n "$sys_cuda" ]; then
  cuda13="$sys_cuda"; b_cccl="$sys_cccl"
else
  cuda13="$root/ci-venvs/hs-fake-cuda13"; b_cccl="3.0.1"
  mkdir -p "$cuda13/include/cccl/cuda/std/__cccl" "$cuda13/include/cccl/cub/block"
  printf '#define CCCL_VERSION 3000001\n' > "$cuda13/include/cccl/cuda/std/__cccl/version.h"
  printf '// stand-in\n' > "$cuda13/include/cccl/cub/block/block_load.cuh"
fi
probe mismatch "B: no CCCL wheel, CUDA_HOME=$cuda13" "$b_cccl" CUDA_HOME="$cuda13" CUDA_PATH="$cuda13"

# C: the pinned wheels (CCCL, and the CUDA runtime headers that the extra's
# cuda-toolkit[cudart] brings) win over CUDA_HOME
if "$venv/bin/python" -m pip install "$cccl_pkg==$ctk_cccl" "nvidia-cuda-runtime-cu12==$minor12.*" >> "$log" 2>&1; then
  probe ok "C: with $cccl_pkg==$ctk_cccl and the CUDA $minor12 runtime headers, CUDA_HOME=$cuda13" - CUDA_HOME="$cuda13" CUDA_PATH="$cuda13"
else
  result FAIL "C: install $cccl_pkg==$ctk_cccl" "log: $log"
fi
finish
