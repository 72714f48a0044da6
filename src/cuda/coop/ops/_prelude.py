"""Every family's CUB headers, in a fixed order: the canonical prelude of NVRTC's
precompiled header (core/pch.py).

Written out rather than gathered from the families, so that a process can start building
the precompiled header before any family is imported (importing them all takes ~50 ms);
``tests/core/test_precompiled_header.py`` holds it equal to the families' ``HEADERS``
(``ops._registry.all_headers``).
"""

PRELUDE_HEADERS = (
    "cub/block/block_load.cuh",
    "cub/block/block_store.cuh",
    "cub/warp/warp_load.cuh",
    "cub/warp/warp_store.cuh",
    "cub/block/block_exchange.cuh",
    "cub/warp/warp_exchange.cuh",
    "cub/block/block_merge_sort.cuh",
    "cub/warp/warp_merge_sort.cuh",
    "cub/block/block_radix_sort.cuh",
    "cub/block/block_radix_rank.cuh",
    "cub/block/block_scan.cuh",
    "cub/block/block_shuffle.cuh",
    "cub/block/block_adjacent_difference.cuh",
    "cub/block/block_discontinuity.cuh",
    "cub/block/block_histogram.cuh",
    "cub/block/block_reduce.cuh",
    "cub/warp/warp_reduce.cuh",
    "cuda/functional",
    "cub/warp/warp_scan.cuh",
)
