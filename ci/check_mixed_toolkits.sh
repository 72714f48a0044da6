#!/usr/bin/env bash
# One toolkit per process: a CUDA 12 environment that also holds CUDA 13's NVRTC, nvJitLink
# and NVVM wheels (PyTorch's and CuPy's CUDA 13 wheels bring them), and the reverse.
#
#   bash ci/check_mixed_toolkits.sh          # after ci/test_matrix.sh made ci-venvs/cu12 and cu13
#
# For each major M, ci-venvs/mix-cuM is a venv layered over ci-venvs/cuM (a .pth file, as the
# device image layers environments) whose own site-packages holds the OTHER major's NVRTC,
# nvJitLink and NVVM wheels, where cuda-pathfinder looks first. ci/mixed_toolkit_probe.py then
# compiles a cooperative kernel to cubin there:
#   none / local   the other major not loaded / loaded RTLD_LOCAL first (as CuPy does): the
#                  compile must use NVRTC, nvJitLink and NVVM of major M, and map no other
#   global         the other major loaded RTLD_GLOBAL first: cuda-bindings resolves symbols in
#                  the global scope before asking anyone, so this must be refused with a
#                  ToolkitMismatchError that names both libraries and how each was found
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mkdir -p ci-venvs/logs
pass=0; fail=0; skip=0
result() {  # status name detail
  echo "$1: mixed-toolkits: $2${3:+ -- $3}"
  case "$1" in PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; SKIP) skip=$((skip + 1)) ;; esac
}
other_wheels() {  # the other major's NVRTC, nvJitLink and NVVM, at the minor CI pins for it
  "${COOP_BASE_PYTHON:-python3}" - "$1" <<'PY'
import sys; sys.path.insert(0, "ci")
from pinlib import load_pins
major = int(sys.argv[1]); other = 25 - major; r = load_pins()[other]
minor = r["cuda_version"]
nvvm = "nvidia-nvvm" if other == 13 else "nvidia-cuda-nvcc-cu12"
print(f'{r["pypi_nvrtc"]}=={minor}.* {r["pypi_nvjitlink"]}=={minor}.* {nvvm}=={minor}.*')
PY
}
for major in 12 13; do
  base="$root/ci-venvs/cu$major" venv="$root/ci-venvs/mix-cu$major" log="$root/ci-venvs/logs/pip-mix-cu$major.log"
  if [ ! -x "$base/bin/python" ]; then
    result SKIP "cu$major" "no ci-venvs/cu$major (run ci/test_matrix.sh $major first)"; continue
  fi
  rm -rf "$venv"
  "$base/bin/python" -m venv --without-pip "$venv"
  site="$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')"
  # addsitedir (not a bare path line) so the base's own .pth files (the editable cuda-coop) apply
  "$base/bin/python" -c 'import site; print(f"import site; site.addsitedir({site.getsitepackages()[0]!r})")' \
    > "$site/zz-base-env.pth"
  read -r -a wheels <<< "$(other_wheels "$major")"
  if ! "$base/bin/python" -m pip install --no-deps --target "$site" "${wheels[@]}" > "$log" 2>&1; then
    tail -n 20 "$log"; result FAIL "cu$major: install ${wheels[*]}" "log: $log"; continue
  fi
  for mode in none local global; do
    out=$(cd "$root" && env -u CUDA_HOME -u CUDA_PATH CUDA_COOP_CACHE_DIR="$root/ci-venvs/cache-mix" \
          "$venv/bin/python" ci/mixed_toolkit_probe.py "$major" "$mode" 2>&1)
    printf '%s\n' "$out" | grep -E '^(RESULT|  mapped)' | cut -c1-400 | sed 's/^/  /'
    other=$((25 - major))
    case "$mode" in
      none|local)
        # none: nothing of the other major may be mapped; local: the other major's NVRTC and
        # nvJitLink are mapped (the probe loaded them), its NVVM never is
        other_nvvm="nvidia/$([ "$major" = 12 ] && echo cu13/lib || echo cuda_nvcc/nvvm)/libnvvm"
        if grep -q "^RESULT OK nvrtc=$major nvjitlink=$major " <<< "$out" \
           && ! grep -q "mapped: .*$other_nvvm" <<< "$out" \
           && { [ "$mode" = local ] || ! grep -q "mapped: .*\(libnvrtc.so.$other\|libnvJitLink.so.$other\)" <<< "$out"; }; then
          result PASS "cu$major + CUDA $other wheels, other major $mode: NVRTC/nvJitLink/NVVM $major"
        else
          result FAIL "cu$major + CUDA $other wheels, other major $mode" "$(grep -m1 RESULT <<< "$out" | cut -c1-300)"
        fi ;;
      global)
        if grep -q "^RESULT MISMATCH .*libnvJitLink.so.$other.*global symbol scope" <<< "$out"; then
          result PASS "cu$major + CUDA $other loaded RTLD_GLOBAL first: ToolkitMismatchError names the library and the global scope"
        else
          result FAIL "cu$major + CUDA $other loaded RTLD_GLOBAL first" "$(grep -m1 RESULT <<< "$out" | cut -c1-300)"
        fi ;;
    esac
  done
  rm -rf "$venv"
done
echo "mixed-toolkits: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
