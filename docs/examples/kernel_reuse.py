"""One kernel, many specializations: per block shape and per items_per_thread value."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop


# example-begin reuse
@cuda.jit
def copy_tiles(source, destination, items_per_thread):
    block = coop.this_block()
    # A kernel argument used as items_per_thread: numba-cuda-mlir specializes the
    # kernel on its value (one compile per distinct value, then reused).
    items = coop.ThreadData(items_per_thread)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, source, items, offset=offset)
    coop.store(block, destination, items, offset=offset)


def main():
    source = np.arange(1 << 16, dtype=np.uint32)
    for threads, items_per_thread in [(128, 4), (256, 4), (128, 2), (128, 4)]:
        destination = np.zeros_like(source)
        blocks = source.size // (threads * items_per_thread)
        # The 4th launch reuses the 1st specialization: no compile.
        copy_tiles[blocks, threads](source, destination, items_per_thread)
        np.testing.assert_array_equal(destination, source)
    return destination
# example-end reuse


# example-begin offline
def compile_for(cc=(9, 0), block=256, items_per_thread=4):
    """Compile for a GPU this machine need not have, and look at the code."""
    from cuda.coop.numba_mlir import compile_cubin

    binary = compile_cubin(copy_tiles, (np.zeros(1, np.uint32), np.zeros(1, np.uint32),
                                        items_per_thread), cc=cc, block=block)
    assert binary.cubin[:4] == b"\x7fELF"
    assert f".target sm_{cc[0]}{cc[1]}" in binary.ptx  # post-LTO PTX: CUB inlined
    return binary
# example-end offline


COMPILE = [
    (copy_tiles, (np.zeros(1, np.uint32), np.zeros(1, np.uint32), 4), {"block": 128}),
    (copy_tiles, (np.zeros(1, np.uint32), np.zeros(1, np.uint32), 2), {"block": 256}),
]

if __name__ == "__main__":
    main()
    print("ok")
