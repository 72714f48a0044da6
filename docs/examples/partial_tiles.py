"""Any array length: a grid-stride loop over tiles, with ``valid_items`` for the last one."""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop

ITEMS_PER_THREAD = 8


# example-begin scale
@cuda.jit
def scale(source, destination, count, factor):
    block = coop.this_block()
    items = coop.ThreadData(ITEMS_PER_THREAD)
    tile = cuda.blockDim.x * ITEMS_PER_THREAD
    # Every thread of the block runs the same iterations: the loop bounds are block-uniform.
    for offset in range(cuda.blockIdx.x * tile, count, cuda.gridDim.x * tile):
        valid = min(count - offset, tile)  # the last tile may be partial
        # warp_transpose reads memory coalesced and hands each thread a blocked run of items
        coop.load(block, source, items, algorithm="warp_transpose",
                  offset=offset, valid_items=valid, oob_default=np.float32(0))
        for i in range(ITEMS_PER_THREAD):
            items[i] = items[i] * factor
        coop.store(block, destination, items, algorithm="warp_transpose",
                   offset=offset, valid_items=valid)
# example-end scale


# example-begin scale-host
def main():
    count = 1_000_003  # not a multiple of the tile
    source = np.random.default_rng(0).random(count, dtype=np.float32)
    d_source = cuda.to_device(source)  # explicit transfers: no copy per launch
    d_destination = cuda.device_array_like(d_source)
    threads = 256
    blocks = 120  # a few waves of blocks; the loop covers the rest
    scale[blocks, threads](d_source, d_destination, count, np.float32(2.5))
    result = d_destination.copy_to_host()
    np.testing.assert_allclose(result, source * np.float32(2.5), rtol=1e-6)
    return result
# example-end scale-host


COMPILE = [
    (scale, (np.zeros(1, np.float32), np.zeros(1, np.float32), np.int64(1), np.float32(1)),
     {"block": 256}),
]

if __name__ == "__main__":
    main()
    print("ok")
