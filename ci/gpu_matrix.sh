#!/usr/bin/env bash
# GPU matrix, pip route: the same kernel tests under CUDA 13 and CUDA 12, each with its own
# NVRTC, nvJitLink and CCCL, on any Linux machine with an NVIDIA driver (>= 13.0 for cu13).
#
#   bash ci/gpu_matrix.sh              # both majors, full suite, one venv each (ci-venvs/cuXX)
#   bash ci/gpu_matrix.sh 12           # one major
#   bash ci/gpu_matrix.sh --gpu-only 13   # only the `gpu` tests (= pixi run -e cu13 test-gpu)
#
# It is ci/test_matrix.sh with the GPU guard on (COOP_REQUIRE_GPU=1): a `gpu` test that
# skips counts as a failure and a session without a passing `gpu` test fails, so the
# matrix cannot go green on a machine whose device is not visible. Before the tests each
# major prints the toolchain it resolved, then ci/check_headers.py asserts it is the pinned
# one (NVRTC 13.0 + CCCL 3.0.1, NVRTC 12.9 + CCCL 2.8.2); pytest's header repeats it from
# inside the session (tests/conftest.py).
#
# On the lent H200 (no package index there) the venvs come from ../shared/device/make-bundle
# instead of pip: `make-bundle cu13` (1 part) and `make-bundle cu12` (3 parts) pack the same
# packages as the extras (numba-cuda-mlir 0.6.0, the pinned CCCL wheel, and for cu12 the
# CUDA 12.9 NVRTC/nvJitLink/NVVM/runtime/bindings over the image's CUDA 13 stack). There,
# carry each .gpu-cuXX-<i> part in order, and in the last part's call activate the bundle
# and run this script on the active interpreter:
#   carry [".gpu-cu13-1"]  command: source .gpu-cu13-1/setup-device.sh && bash ci/gpu_matrix.sh --active --gpu-only 13
#   carry [".gpu-cu12-3"]  command: source .gpu-cu12-3/setup-device.sh && bash ci/gpu_matrix.sh --active --gpu-only 12
# (--active keeps the bundle's environment as set up: for cu12 setup-device.sh points
# CUDA_HOME at the bundle's CUDA 12 nvcc tree on purpose.) The plain equivalent there is
#   source .gpu-cu13-1/setup-device.sh && python3 -m pytest -m gpu -q
# Drop --gpu-only to run the full suite when the device time allows.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=--gpu; args=()
for a in "$@"; do
  case "$a" in
    --gpu-only) mode=--gpu-only ;;
    *) args+=("$a") ;;
  esac
done
if command -v nvidia-smi > /dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
else
  echo "gpu_matrix: nvidia-smi not found; the GPU guard will fail the run if no device is usable"
fi
rm -rf "$root/ci-venvs/results"  # the summary below reports this run only
bash "$root/ci/test_matrix.sh" "$mode" "${args[@]}"
rc=$?
python3 "$root/ci/summary.py" --matrix-only || true
exit $rc
