#!/usr/bin/env bash
# The GPU evidence of one toolkit, in one device call: logs under $OUT (or ./gpu-evidence).
#
#   bash scripts/gpu_evidence.sh 12|13 [suite] [classic] [latency] [timeline] [launch] [repeat N]
#                                      [torch] [sanitize] [checkcost] [bench]
#
#   suite      the whole GPU test suite in parallel shards (scripts/run_gpu_tests.py -j 15)
#   classic    the same suite with classic numba-cuda as the compiler (--compiler numba-cuda).
#              numba-cuda 0.30 cannot compile under NumPy 2.5 or later; where the environment
#              has one, CLASSIC_NUMPY (default .classic/numpy.tar.xz: a NumPy 2.4 wheel's
#              unpacked contents, e.g. from `pip download "numpy>=2.4,<2.5" --only-binary=:all:`)
#              is unpacked over it first, and a .pth line makes `numba.cuda` numba-cuda's
#              (a .pth in a path that another .pth adds is not run)
#   latency    issue #31's first-launch figures: benchmarks/bench_load_store.py --latency-only
#              (cold, warm disk cache, without cuda.coop; fresh processes, medians of three)
#              and `from cuda import coop` after the compiler, five processes
#   timeline   benchmarks/first_launch_timeline.py: where a cold first launch's time goes (the header's
#              build, the wait for it, NVRTC, the rest), four fresh processes per shape; TIMELINE_BASE=<dir>
#              alternates another tree's src/ with this one
#   launch     benchmarks/launch_overhead.py: host microseconds per launch, both compilers
#              (classic numba-cuda needs `classic` earlier in the same call, for its NumPy)
#   repeat N   the exchange and shuffle GPU tests N times in one process (races show up as flakes)
#   torch      import torch (CUDA 13 wheels) first, then compile a cooperative kernel: the toolkit
#              cuda-coop picks, or its named ToolkitMismatchError
#   sanitize   scripts/sanitize.py: compute-sanitizer's four tools over the families, the run-time
#              checks and the features, on both compilers (SANITIZE_ARGS adds options); its logs
#              are packed into one sanitize-cuXX.tgz ($OUT returns a few files only)
#   checkcost  benchmarks/check_cost.py: the run-time checks' device cost (checked / CUDA_COOP_CHECKED=0)
#   bench      benchmarks/run_all.py: every family against CUB built by nvcc (BENCH_ARGS picks some);
#              set COOP_BENCH_COMMIT=<commit> to name the tree in each JSON (the device's copy has no .git)
set -uo pipefail
major="$1"; shift
out="${OUT:-gpu-evidence}"; mkdir -p "$out"
export PYTHONUNBUFFERED=1
python3 - <<'PY' 2>&1 | tee "$out/toolchain-cu$major.txt"
import cuda.coop.numba_mlir  # noqa: F401  (pins the toolkit)
from cuda.coop.core.toolchain import toolchain
print("toolchain:", toolchain().describe())
PY
while [ $# -gt 0 ]; do
  case "$1" in
    suite) timeout 480 python3 scripts/run_gpu_tests.py -j 15 --log-dir /tmp/shards-cu$major 2>&1 | tail -25 | tee "$out/suite-cu$major.txt" ;;
    classic) site=$(python3 -c 'import site; print(site.getsitepackages()[0])')
             if ! python3 -c 'import numpy, sys; sys.exit(tuple(map(int, numpy.__version__.split(".")[:2])) >= (2, 5))'; then
               tar xJf "${CLASSIC_NUMPY:-.classic/numpy.tar.xz}" -C "$site" || echo "classic: no NumPy < 2.5 to unpack"
             fi
             echo "import _numba_cuda_redirector" > "$site/zzz-numba-cuda-redirector.pth"
             timeout "${CLASSIC_TIMEOUT:-540}" python3 scripts/run_gpu_tests.py -j 16 --compiler numba-cuda --log-dir /tmp/shards-classic-cu$major 2>&1 | tail -25 | tee "$out/classic-cu$major.txt" ;;
    latency) for i in 1 2 3 4 5; do python3 -c "import time; from numba_cuda_mlir import cuda; t = time.perf_counter(); from cuda import coop; print('from cuda import coop after the compiler:', round(time.perf_counter() - t, 4), 's')"; done 2>&1 | tee "$out/import-cu$major.txt"
             OUT=$out timeout 240 python3 benchmarks/bench_load_store.py --latency-only --latency-repeat 3 2>&1 | tail -8 | tee "$out/latency-cu$major.txt" ;;
    timeline) OUT=$out timeout 300 python3 benchmarks/first_launch_timeline.py --rounds 4 ${TIMELINE_BASE:+--base-src "$TIMELINE_BASE"} 2>&1 | tail -14 | tee "$out/timeline-cu$major.txt" ;;
    launch) for compiler in numba-cuda-mlir numba-cuda; do
              OUT=$out timeout 120 python3 benchmarks/launch_overhead.py --compiler $compiler --repeat 5 2>&1 | tee "$out/launch-$compiler-cu$major.txt" | grep "per launch"
            done ;;
    repeat) shift; timeout 300 python3 scripts/repeat_gpu_tests.py --count "$1" tests/ops/test_exchange.py tests/ops/test_shuffle.py 2>&1 | tail -8 | tee "$out/repeat-cu$major.txt" ;;
    torch) timeout 120 python3 -c "import torch; torch.zeros(1, device='cuda'); import runpy, sys; sys.argv = ['probe', '$major', 'none']; runpy.run_path('ci/mixed_toolkit_probe.py', run_name='__main__')" 2>&1 | grep -E 'RESULT|mapped|Error' | cut -c1-600 | tee "$out/torch-first-cu$major.txt" ;;
    sanitize) timeout "${SANITIZE_TIMEOUT:-400}" python3 scripts/sanitize.py --log-dir /tmp/sanitize-cu$major ${SANITIZE_ARGS:-} 2>&1 | tee "$out/sanitize-cu$major.txt" | tail -40
              tar czf "$out/sanitize-cu$major.tgz" -C /tmp "sanitize-cu$major" ;;
    checkcost) mkdir -p /tmp/checkcost-cu$major; OUT=/tmp/checkcost-cu$major timeout 200 python3 benchmarks/check_cost.py 2>&1 | tee "$out/checkcost-cu$major.txt" | tail -8 ;;
    bench) OUT=/tmp/bench-cu$major timeout 500 python3 benchmarks/run_all.py ${BENCH_ARGS:-} 2>&1 | tee "$out/bench-cu$major.txt" | tail -30
           tar czf "$out/bench-cu$major.tgz" -C /tmp "bench-cu$major" ;;
  esac
  shift
done
