"""Classic numba-cuda: launches of a kernel specialized on an ``items_per_thread`` argument.

numba-cuda's dispatcher finds no such kernel by argument types (its table holds the
literal signatures), so each launch asks ``_compile_for_args``, which cuda.coop wraps
(backends/numba_cuda/_compat.py): a memo keyed by the literal values and the other
arguments' types, each device array by the identity of its cached Numba type.  These
launches check that the memo picks the right specialization when values, dtypes and
arrays change, and that a repeat launch adds nothing to it.
"""

from __future__ import annotations

import numpy as np
import pytest

from .. import compiler
from ..kernelgen import module_from_source

SOURCE = """
@cuda.jit
def copy(src, dst, items_per_thread):
    block = coop.this_block()
    items = coop.ThreadData(items_per_thread, dtype=src.dtype)
    offset = cuda.blockIdx.x * cuda.blockDim.x * items_per_thread
    coop.load(block, src, items, offset=offset)
    coop.store(block, dst, items, offset=offset)
"""


@pytest.mark.unit
def test_the_memo_key_is_values_types_and_array_type_identities():
    """Without a GPU: the wrapped ``_compile_for_args`` of a dispatcher whose typing asked
    for argument 2 as a literal, with numba-cuda's own device arrays (no allocation) and
    ``compile`` answered by a stand-in that records what was compiled."""
    if compiler.NAME != "numba-cuda":
        pytest.skip("classic numba-cuda's literal-argument launches: run with --compiler numba-cuda")
    compiler.require("numba-cuda")
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    kernel = module_from_source(SOURCE, "numba-cuda").copy
    compiled = []
    kernel.compile = lambda sig: compiled.append(sig) or f"kernel{len(compiled)}"
    kernel._coop_literal_positions = frozenset({2})

    def device_array(dtype, n=256):
        return DeviceNDArray((n,), (np.dtype(dtype).itemsize,), dtype, gpu_data=object())

    a, b = device_array(np.int32), device_array(np.int32)
    assert kernel._compile_for_args(a, b, 4) == "kernel1"
    assert [str(t) for t in compiled[-1]] == ["array(int32, 1d, C)", "array(int32, 1d, C)", "Literal[int](4)"]
    # New arrays of the same types, the same value: the same kernel, nothing compiled.
    assert kernel._compile_for_args(device_array(np.int32, 64), device_array(np.int32), 4) == "kernel1"
    assert kernel._compile_for_args(a, b, 8) == "kernel2"  # another value
    assert kernel._compile_for_args(device_array(np.float32), device_array(np.float32), 4) == "kernel3"
    assert kernel._compile_for_args(a, device_array(np.float32), 4) == "kernel4"  # mixed types
    assert kernel._compile_for_args(a, b, 8) == "kernel2" and len(compiled) == 4
    assert all(types for _kernel, types in kernel._coop_literal_kernels.values())  # entries hold the types


@pytest.mark.gpu
def test_literal_launches_pick_the_specialization_of_their_values_and_types():
    if compiler.NAME != "numba-cuda":
        pytest.skip("classic numba-cuda's literal-argument launches: run with --compiler numba-cuda")
    from numba import cuda

    kernel = module_from_source(SOURCE, "numba-cuda").copy
    rng = np.random.default_rng(7)
    threads, blocks = 64, 3
    launches = [(np.int32, 4), (np.int32, 2), (np.float32, 4), (np.int32, 4), (np.float32, 4), (np.int32, 2)]
    for dtype, ipt in launches:
        size = threads * blocks * ipt
        host = rng.integers(-1000, 1000, size).astype(dtype)
        src = cuda.to_device(host)
        dst = cuda.to_device(np.full(size, -7, dtype=dtype))  # poisoned
        kernel[blocks, threads](src, dst, ipt)
        np.testing.assert_array_equal(dst.copy_to_host(), host, err_msg=f"{np.dtype(dtype)}, items_per_thread={ipt}")
    dispatchers = [kernel, *kernel._launch_config_specializations.values()]  # one launch shape: the first
    memo = {key: entry for d in dispatchers for key, entry in d.__dict__.get("_coop_literal_kernels", {}).items()}
    assert len(memo) == 3, list(memo)  # (int32, 4), (int32, 2), (float32, 4): repeats found theirs
    assert all(kernel_and_types[1] for kernel_and_types in memo.values())  # the array types are held
