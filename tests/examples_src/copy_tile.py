# The kernel of the foundation issue, exactly as written there.
import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop


@cuda.jit
def copy_tile(source, destination, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, items, offset=offset)
    coop.store(block, destination, items, offset=offset)


def main():
    src = np.arange(4 * 128 * 4, dtype=np.int32)
    dst = np.zeros_like(src)
    copy_tile[4, 128](src, dst, 4)
    return src, dst
