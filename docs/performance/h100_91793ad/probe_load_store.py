# bench_load_store.py's latency script (a trivial kernel first) with cuda.coop's log timed, for paired_probes.sh
import json, logging, time, numpy as np
T = time.perf_counter()
msgs = []
class H(logging.Handler):
    def emit(self, r):
        msgs.append(f"{time.perf_counter() - T:.3f} {r.threadName[:10]} {r.getMessage()[:110]}")
lg = logging.getLogger("cuda.coop"); lg.setLevel(logging.DEBUG); lg.addHandler(H())
from numba_cuda_mlir import cuda
from cuda import coop
from cuda.coop.core.pch import pch
@cuda.jit
def warm_up(x):
    x[0] = 1
t0 = time.perf_counter(); w = cuda.device_array(1, dtype=np.int32); t_setup = time.perf_counter() - t0
t0 = time.perf_counter(); warm_up[1, 1](w); cuda.synchronize(); t_init = time.perf_counter() - t0
# The kernel is benchmarks/bench_load_store.py's COOP_KERNEL, read from that file (as the
# ninth check's probe.py reads bench_reduce.py's).
import ast, pathlib
_bench = pathlib.Path(__file__).resolve().parents[3] / "benchmarks" / "bench_load_store.py"
exec(next(node.value.value for node in ast.parse(_bench.read_text()).body
          if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "COOP_KERNEL"))
src = cuda.to_device(np.arange(256 * 16 * 4, dtype=np.int32)); dst = cuda.device_array_like(src)
cuda.synchronize()
tl = time.perf_counter() - T
t0 = time.perf_counter(); k[4, 256](src, dst, 16); cuda.synchronize(); first = time.perf_counter() - t0
b = pch.background
print(json.dumps({"setup": round(t_setup, 3), "init": round(t_init, 3), "launch_at": round(tl, 3), "first": round(first, 3),
                  "bg": b and {"reason": b.reason, "s": round(b.seconds, 3), "used": b.used, "ok": b.ok},
                  "log": msgs}))
