import json, logging, sys, time, numpy as np
T = time.perf_counter()
class H(logging.Handler):
    def emit(self, r):
        msgs.append(f"{time.perf_counter() - T:.3f} {r.threadName} {r.getMessage()[:150]}")
msgs = []
lg = logging.getLogger("cuda.coop"); lg.setLevel(logging.DEBUG); lg.addHandler(H())
from numba_cuda_mlir import cuda
from cuda import coop
from cuda.coop.core.pch import pch
# The kernel is benchmarks/bench_reduce.py's COOP_KERNEL (the cold reduce latency case),
# read from that file rather than copied here.
import ast, pathlib
_bench = pathlib.Path(__file__).resolve().parents[4] / "benchmarks" / "bench_reduce.py"
_kernel = next(node.value.value for node in ast.parse(_bench.read_text()).body
               if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "COOP_KERNEL")
exec(_kernel)
t0 = time.perf_counter()
src = cuda.to_device(np.ones(256 * 16 * 4, dtype=np.float32)); total = cuda.to_device(np.zeros(1, np.float32))
cuda.synchronize(); setup = time.perf_counter() - t0
tl = time.perf_counter() - T
t0 = time.perf_counter(); k[4, 256](src, total); cuda.synchronize(); first = time.perf_counter() - t0
b = pch.background
print(json.dumps({"setup": round(setup, 3), "launch_at": round(tl, 3), "first": round(first, 3),
                  "bg": b and {"reason": b.reason, "s": round(b.seconds, 3), "used": b.used, "ok": b.ok, "arch": b.arch},
                  "compiles": pch.compiles, "log": msgs}))
