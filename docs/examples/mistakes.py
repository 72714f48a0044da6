"""Kernels with one mistake each: the troubleshooting page quotes what cuda.coop says.

``tests/docs_examples/test_troubleshooting_messages.py`` compiles every kernel here and
checks that the message is exactly the one in ``docs/troubleshooting/messages/<name>.txt``
(``COOP_DOCS_REGEN=1`` rewrites those files), so the quoted messages cannot drift.
The cases mirror the misuse catalogue of ``tests/ops/test_*_errors.py``.
"""

import numpy as np
from numba_cuda_mlir import cuda
from cuda import coop


# example-begin computed-items
@cuda.jit
def computed_items(src, dst, n):
    items = coop.ThreadData(n * 2)  # computed in the kernel: not a compile-time constant
    coop.load(coop.this_block(), src, items)
# example-end computed-items


# example-begin unsupported-dtype
@cuda.jit
def complex_payload(src, dst):
    items = coop.ThreadData(4, dtype=np.complex64)
    coop.load(coop.this_block(), src, items)  # moving complex values is fine
    total = coop.sum(coop.this_block(), items)  # adding them in CUB is not
# example-end unsupported-dtype


# example-begin dtype-mismatch
@cuda.jit
def float_payload_int_array(src, dst):
    items = coop.ThreadData(4, dtype=np.float32)
    coop.load(coop.this_block(), src, items)  # src holds int32
# example-end dtype-mismatch


# example-begin literal-dtype
@cuda.jit
def float64_fill(src, dst, count):
    items = coop.ThreadData(4)  # float32, from src
    fill = src[0] * 0.5  # float32 * Python float: float64 in Numba
    coop.load(coop.this_block(), src, items, valid_items=count, oob_default=fill)
# example-end literal-dtype


# example-begin unknown-algorithm
@cuda.jit
def misspelled_algorithm(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, algorithm="transpose_warp")
# example-end unknown-algorithm


# example-begin warp-algorithm
@cuda.jit
def block_algorithm_on_warp(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_warp(), src, items, algorithm="warp_transpose")
# example-end warp-algorithm


# example-begin oob-without-valid
@cuda.jit
def oob_without_valid_items(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, oob_default=0)
# example-end oob-without-valid


# example-begin float-valid-items
@cuda.jit
def float_valid_items(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, valid_items=1.5)
# example-end float-valid-items


# example-begin partial-warps
@cuda.jit
def warp_load(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_warp(), src, items)  # launched with 100 threads per block
# example-end partial-warps


# example-begin unknown-block
@cuda.jit
def block_load(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)  # compiled without a launch shape
# example-end unknown-block


# example-begin group-width
@cuda.jit
def width_three(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_warp().group_by(3), src, items)
# example-end group-width


# example-begin misspelled-keyword
@cuda.jit
def misspelled_keyword(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, algoritm="direct")
# example-end misspelled-keyword


# example-begin no-dtype
@cuda.jit
def no_dtype(src, dst):
    items = coop.ThreadData(4)  # never loaded or stored, and its first write is an untyped literal
    items[0] = 1
# example-end no-dtype


# example-begin warp-temp-storage
@cuda.jit
def warp_with_temp_storage(src, dst):
    temp = coop.TempStorage()
    items = coop.ThreadData(4)
    coop.load(coop.this_warp(), src, items, algorithm="transpose", temp_storage=temp)
# example-end warp-temp-storage


# example-begin small-temp-storage
@cuda.jit
def temp_storage_too_small(src, dst):
    temp = coop.TempStorage(64)
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items, algorithm="transpose", temp_storage=temp)
# example-end small-temp-storage


# example-begin too-much-shared
@cuda.jit
def huge_transpose(src, dst):
    items = coop.ThreadData(32)
    coop.load(coop.this_block(), src, items, algorithm="transpose")  # 1024 x 32 x 8 bytes
# example-end too-much-shared


# example-begin exclusive-no-init
@cuda.jit
def exclusive_max(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    out = coop.exclusive_scan(coop.this_block(), items, scan_op="max")
# example-end exclusive-no-init


# example-begin block-scan-valid
@cuda.jit
def block_scan_valid_items(src, dst, n):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    sums = coop.inclusive_sum(coop.this_block(), items, valid_items=n)
# example-end block-scan-valid


# example-begin merge-sort-block
@cuda.jit
def sort_96_threads(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    keys = coop.merge_sort_keys(coop.this_block(), items)  # launched with 96 threads
# example-end merge-sort-block


# example-begin host-call
def host_call():
    items = np.zeros(4, np.int32)
    coop.load(coop.this_block(), np.arange(4, dtype=np.int32), items)  # not in a kernel
# example-end host-call


# example-begin unknown-backend
def unknown_backend():
    coop.register("cutlass")
# example-end unknown-backend


# example-begin wrong-cccl-root
def wrong_cccl_root():
    import os

    from cuda.coop.numba_mlir import compile_cubin

    os.environ["CUDA_COOP_CCCL_ROOT"] = "/opt/no-such-cccl"  # e.g. a typo in a job script
    try:
        compile_cubin(block_load, I32, cc=(9, 0), block=128)
    finally:
        del os.environ["CUDA_COOP_CCCL_ROOT"]
# example-end wrong-cccl-root


# example-begin reserve-auto-sync
@cuda.jit
def reserve_with_auto_sync(src, dst):
    temp = coop.TempStorage(auto_sync=True)
    values = temp.reserve(128, np.int32)
    values[cuda.threadIdx.x] = src[cuda.threadIdx.x]
# example-end reserve-auto-sync


I32 = (np.zeros(1, np.int32), np.zeros(1, np.int32))
F32 = (np.zeros(1, np.float32), np.zeros(1, np.float32))
F64 = (np.zeros(1, np.float64), np.zeros(1, np.float64))
C64 = (np.zeros(1, np.complex64), np.zeros(1, np.complex64))

# name -> (kernel or host function, example arguments, launch, expected error class)
MISTAKES = {
    "computed-items": (computed_items, I32 + (np.int64(4),), {"block": 128}, "NonConstantArgumentError"),
    "unsupported-dtype": (complex_payload, C64, {"block": 128}, "UnsupportedDtypeError"),
    "dtype-mismatch": (float_payload_int_array, I32, {"block": 128}, "DtypeMismatchError"),
    "literal-dtype": (float64_fill, F32 + (np.int64(1),), {"block": 128}, "DtypeMismatchError"),
    "unknown-algorithm": (misspelled_algorithm, I32, {"block": 128}, "InvalidAlgorithmError"),
    "warp-algorithm": (block_algorithm_on_warp, I32, {"block": 128}, "UnsupportedAlgorithmForGroupError"),
    "oob-without-valid": (oob_without_valid_items, I32, {"block": 128}, "ConflictingArgumentsError"),
    "float-valid-items": (float_valid_items, I32, {"block": 128}, "InvalidArgumentTypeError"),
    "partial-warps": (warp_load, I32, {"block": 100}, "UnsupportedBlockShapeError"),
    "unknown-block": (block_load, I32, {"block": None}, "UnknownBlockDimensionError"),
    "group-width": (width_three, I32, {"block": 128}, "InvalidGroupWidthError"),
    "misspelled-keyword": (misspelled_keyword, I32, {"block": 128}, "InvalidArgumentTypeError"),
    "no-dtype": (no_dtype, I32, {"block": 128}, "UnknownDtypeError"),
    "warp-temp-storage": (warp_with_temp_storage, I32, {"block": 128}, "TempStorageError"),
    "small-temp-storage": (temp_storage_too_small, I32, {"block": 128}, "TempStorageError"),
    "reserve-auto-sync": (reserve_with_auto_sync, I32, {"block": 128}, "TempStorageError"),
    "too-much-shared": (huge_transpose, F64, {"block": 1024}, "SharedMemoryLimitError"),
    "exclusive-no-init": (exclusive_max, I32, {"block": 128}, "MissingArgumentError"),
    "block-scan-valid": (block_scan_valid_items, I32 + (np.int64(1),), {"block": 128}, "ConflictingArgumentsError"),
    "merge-sort-block": (sort_96_threads, I32, {"block": 96}, "UnsupportedBlockShapeError"),
    "host-call": (host_call, None, None, "CoopCompilerContextRequiredError"),
    "unknown-backend": (unknown_backend, None, None, "UnknownBackendError"),
    "wrong-cccl-root": (wrong_cccl_root, None, None, "HeaderResolutionError"),
}
