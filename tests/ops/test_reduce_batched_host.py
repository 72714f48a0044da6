"""The batched warp reduction's generated C++, run on the host with 32 simulated lanes.

``reduce_batched`` is our own device code (CCCL 2.8 and 3.0 have no batched
warp reduce), so besides the GPU matrix its generated providers are compiled
with the host C++ compiler and run with one std::thread per lane, shuffles
simulated with a barrier: every width, layout and batch count (padding, fewer
batches than lanes, user operator) is checked against the NumPy reference on
any machine.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from cuda.coop.core.cpp import make_provider
from cuda.coop.core import spec
from cuda.coop.ops.reduce import plan_reduce_batched
from cuda.coop.reference import reduce as ref

pytestmark = pytest.mark.compile

CXX = shutil.which("g++") or shutil.which("clang++")

HARNESS_TOP = r"""
#include <barrier>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
namespace cuda {
namespace std { using ::std::plus; using ::std::multiplies; using ::std::bit_and; using ::std::bit_or; using ::std::bit_xor; }
template <class T> struct minimum { T operator()(const T& a, const T& b) const { return b < a ? b : a; } };
template <class T> struct maximum { T operator()(const T& a, const T& b) const { return a < b ? b : a; } };
}
struct Dim3 { unsigned x, y, z; };
thread_local Dim3 threadIdx;
static std::barrier<>* g_bar;
static unsigned long long g_words[32];
// One warp of host threads: write, wait, read the partner, wait.
template <class U>
U __shfl_xor_sync(unsigned, U value, int lane_mask) {
  static_assert(sizeof(U) <= 8, "one word per lane");
  std::memcpy(&g_words[threadIdx.x], &value, sizeof(U));
  g_bar->arrive_and_wait();
  U out;
  std::memcpy(&out, &g_words[threadIdx.x ^ lane_mask], sizeof(U));
  g_bar->arrive_and_wait();
  return out;
}
extern "C" int user_cb(int a, int b) { return a + b + 1; }
"""

CONFIGS = [(w, b, layout, op) for w in (1, 2, 4, 8, 16, 32) for b in (1, 3, 7, 32, 40, 64)
           for layout in ("striped", "blocked") for op in ('"+"', '"max"', "user")]


def _plan(width, batches, layout, op):
    if op == "user":
        binary_op = spec.DeviceFunctionArg(handle=None, key="user", name="user")
    else:
        binary_op = spec.StringArg(op.strip('"'))
    return plan_reduce_batched(spec.GroupArg("warp", width), spec.PayloadArg(np.dtype("int32"), batches),
                               binary_op=binary_op, output_layout=spec.StringArg(layout))


HARNESS_MAIN = r"""
// One runner for every configuration (a table of provider pointers, inputs read from a
// file): 216 inlined lambdas and 1 MB of array literals made the -O0 build 2.3x slower.
struct Case { void (*fn)(int*, int*); int batches, per_lane; };
int main(int argc, char** argv) {
  std::barrier<> bar(32); g_bar = &bar;
  std::FILE* f = std::fopen(argv[1], "rb");
  if (!f) return 2;
  std::vector<int> data;
  int word;
  while (std::fread(&word, sizeof word, 1, f) == 1) data.push_back(word);
  std::fclose(f);
  std::size_t offset = 0;
  for (int i = 0; i < int(sizeof(kCases) / sizeof(kCases[0])); ++i) {
    const Case c = kCases[i];
    int* in = data.data() + offset;
    offset += 32u * c.batches;
    if (offset > data.size()) return 3;
    std::vector<int> out(32u * c.per_lane);
    std::vector<std::thread> lanes;
    for (unsigned t = 0; t < 32; ++t)
      lanes.emplace_back([&, t] { threadIdx = Dim3{t, 0, 0};
        c.fn(in + t * c.batches, out.data() + t * c.per_lane); });
    for (auto& l : lanes) l.join();
    std::printf("%d", i);
    for (int v : out) std::printf(" %d", v);
    std::printf("\n");
  }
  return offset == data.size() ? 0 : 4;
}
"""


def _program():
    launch = spec.LaunchFacts(block=(32, 1, 1), cc=(9, 0))
    parts, cases, seen = [HARNESS_TOP], [], set()
    for w, b, layout, op in CONFIGS:
        plan = _plan(w, b, layout, op)
        provider = make_provider(plan, launch, callbacks={"binary_op": "user_cb"} if op == "user" else None)
        # Callback declarations are device-side extern "C"; the harness defines user_cb above.
        # Configurations that generate the same C++ (one batch per lane) share a provider.
        if provider.symbol not in seen:
            seen.add(provider.symbol)
            parts.append(provider.source)
        cases.append(f"  {{{provider.symbol}, {b}, {-(-b // w)}}},")
    table = "static const Case kCases[] = {\n" + "\n".join(cases) + "\n};\n"
    return "\n".join(parts) + HARNESS_MAIN.replace("int main(", table + "int main(", 1)


@pytest.mark.skipif(CXX is None, reason="no host C++ compiler (g++/clang++)")
def test_batched_reduction_matches_reference_on_simulated_lanes(tmp_path):
    rng = np.random.default_rng(7)
    inputs = [rng.integers(-1000, 1000, size=(32, b)).astype(np.int32) for (_w, b, _l, _o) in CONFIGS]
    source = tmp_path / "batched.cpp"
    source.write_text(_program())
    data = tmp_path / "inputs.bin"
    data.write_bytes(b"".join(np.ascontiguousarray(x, dtype="<i4").tobytes() for x in inputs))
    exe = tmp_path / "batched"
    build = subprocess.run([CXX, "-std=c++20", "-O0", "-pthread", "-w", "-o", str(exe), str(source)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-4000:]
    run = subprocess.run([str(exe), str(data)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.split("\n")
    for i, (w, b, layout, op) in enumerate(CONFIGS):
        fields = lines[i].split()
        assert int(fields[0]) == i
        per_lane = -(-b // w)
        got = np.array(fields[1:], dtype=np.int32).reshape(32, per_lane)
        ref_op = {'"+"': "sum", '"max"': "max", "user": lambda a, c: a + c + 1}[op]
        expected, defined = ref.reduce_batched(inputs[i], ref_op, group_width=w, output_layout=layout)
        np.testing.assert_array_equal(got[defined], expected[defined],
                                      err_msg=f"width={w} batches={b} layout={layout} op={op}")
