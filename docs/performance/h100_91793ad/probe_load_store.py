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
@cuda.jit
def k(source, destination, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, items, offset=offset, algorithm="warp_transpose")
    coop.store(block, destination, items, offset=offset, algorithm="warp_transpose")
src = cuda.to_device(np.arange(256 * 16 * 4, dtype=np.int32)); dst = cuda.device_array_like(src)
cuda.synchronize()
tl = time.perf_counter() - T
t0 = time.perf_counter(); k[4, 256](src, dst, 16); cuda.synchronize(); first = time.perf_counter() - t0
b = pch.background
print(json.dumps({"setup": round(t_setup, 3), "init": round(t_init, 3), "launch_at": round(tl, 3), "first": round(first, 3),
                  "bg": b and {"reason": b.reason, "s": round(b.seconds, 3), "used": b.used, "ok": b.ok},
                  "log": msgs}))
