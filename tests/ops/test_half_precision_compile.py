"""float16 and bfloat16 payloads, compiled to cubin with no GPU.

Every family that CUB supports for 16-bit floats compiles with both types, on sm_90 and
on sm_75 (no native bfloat16 arithmetic: CUB goes through float), and link-time
optimization leaves no call.  Scalars of 16-bit floats (``coop.sum(block, x)``,
``initial_value=``, ``oob_default=``) travel by reference: passed by value, the
compiler's ``f16`` and C++'s ``__half`` class would not match and the call would stay
un-inlined with its argument never loaded (``AbiOperand.by_reference``); the PTX checks
below fail if that ever comes back.
"""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop._dtypes import bfloat16_dtype

BFLOAT16 = bfloat16_dtype()  # None without ml_dtypes

from ..kernelgen import module_from_source
from .cubin_checks import assert_inlined, compile_cubin, numba_types


KERNELS = {
    "load_store": """
@cuda.jit
def kernel(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items, algorithm="warp_transpose")
    coop.store(block, dst, items, algorithm="warp_transpose")
""",
    "exchange": """
@cuda.jit
def kernel(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    out = coop.exchange(block, items, mode="blocked_to_striped")
    coop.store(block, dst, out)
""",
    "reduce": """
@cuda.jit
def kernel(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    s = coop.sum(block, items)
    m = coop.reduce(block, items, binary_op="max")
    t = coop.sum(block, src[cuda.threadIdx.x])
    w = coop.reduce(coop.this_warp(), src[cuda.threadIdx.x], binary_op="min")
    if cuda.threadIdx.x == 0:
        dst[0] = s
        dst[1] = m
        dst[2] = t
        dst[3] = w
""",
    "scan": """
@cuda.jit
def kernel(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    out = coop.inclusive_sum(block, items)
    out2 = coop.exclusive_scan(block, out, scan_op="max", initial_value=src[0])
    coop.store(block, dst, out2)
""",
    "shuffle": """
@cuda.jit
def kernel(src, dst):
    v = coop.shuffle(coop.this_block(), src[cuda.threadIdx.x], mode="offset", distance=1)
    dst[cuda.threadIdx.x] = v
""",
    "radix_sort": """
@cuda.jit
def kernel(src, dst):
    block = coop.this_block()
    keys = coop.ThreadData(4)
    vals = coop.ThreadData(4)
    coop.load(block, src, keys)
    coop.load(block, src, vals)
    k2, v2 = coop.radix_sort_pairs(block, keys, vals, descending=True)
    coop.store(block, dst, v2)
""",
    "merge_sort": """
@cuda.jit
def kernel(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    out = coop.merge_sort_keys(block, items, valid_items=300, oob_default=src[0])
    coop.store(block, dst, out)
""",
    "topk": """
@cuda.jit
def kernel(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    out = coop.topk_max_keys(block, items, k=8)
    coop.store(block, dst, out)
""",
    "neighbors": """
@cuda.jit
def kernel(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    out = coop.adjacent_difference(block, items)
    coop.store(block, dst, out)
""",
    "run_length": """
@cuda.jit
def kernel(src, dst):
    block = coop.this_block()
    v = coop.ThreadData(2)
    coop.load(block, src, v)
    lengths = coop.ThreadData(2, dtype=np.int32)
    lengths[0] = 2
    lengths[1] = 1
    w = coop.run_length_decode(block, v, lengths, decoded_items_per_thread=3, oob_default=src[0])
    coop.store(block, dst, w)
""",
}


def _element_types():
    types = numba_types()
    out = [pytest.param(types.float16, id="float16")]
    if BFLOAT16 is not None:
        from ..compiler import bfloat16

        out.append(pytest.param(bfloat16, id="bfloat16"))
    return out


def _array(element):
    return numba_types().Array(element, 1, "C")


@pytest.mark.compile
@pytest.mark.parametrize("element", _element_types())
@pytest.mark.parametrize("family", sorted(KERNELS))
def test_every_family_compiles_and_inlines(family, element):
    kernel = module_from_source(KERNELS[family]).kernel
    kb = compile_cubin(kernel, (_array(element), _array(element)), cc=(9, 0), block=128)
    assert_inlined(kb)


@pytest.mark.compile
@pytest.mark.parametrize("element", _element_types())
@pytest.mark.parametrize("family", ["reduce", "scan", "radix_sort", "merge_sort"])
def test_sm75_compiles_through_float(family, element):
    """sm_75 has no bfloat16 arithmetic: CUB's operators convert through float there."""
    kernel = module_from_source(KERNELS[family]).kernel
    kb = compile_cubin(kernel, (_array(element), _array(element)), cc=(7, 5), block=128)
    assert_inlined(kb, (7, 5))
    assert ".target sm_75" in kb.ptx


@pytest.mark.compile
@pytest.mark.parametrize("element", _element_types())
def test_scalar_operands_are_loaded_and_inlined(element):
    """The by-value hazard: coop.sum of a 16-bit scalar must read the array and keep no call."""
    kernel = module_from_source("""
@cuda.jit
def kernel(src, dst):
    t = coop.sum(coop.this_block(), src[cuda.threadIdx.x])
    if cuda.threadIdx.x == 0:
        dst[0] = t
""").kernel
    kb = compile_cubin(kernel, (_array(element), _array(element)), cc=(9, 0), block=128)
    assert_inlined(kb)
    assert "ld.global" in kb.ptx  # the scalar's load survived: the provider reads it
    assert "shfl.sync" in kb.ptx  # and CUB's warp reduction is there


@pytest.mark.unit
def test_generated_cpp_takes_16_bit_scalars_by_reference():
    from cuda.coop.core.spec import AbiOperand

    half = AbiOperand("initial_value", "value", np.dtype("float16"), "init")
    assert half.by_reference and half.cxx_param() == "const __half* init_ref"
    assert not AbiOperand("x", "value", np.dtype("float32"), "x").by_reference
    assert not AbiOperand("x", "payload", np.dtype("float16"), "x").by_reference
    if BFLOAT16 is not None:
        bf = AbiOperand("x", "value", BFLOAT16, "x")
        assert bf.cxx_param() == "const __nv_bfloat16* x_ref"


@pytest.mark.compile
@pytest.mark.parametrize("spelling", ["np.float16", "'float16'", "'bfloat16'", "ml_dtypes.bfloat16"])
def test_dtype_spellings(spelling):
    if "bfloat16" in spelling and BFLOAT16 is None:
        pytest.skip("ml_dtypes is not installed")
    kernel = module_from_source(f"""
import ml_dtypes

@cuda.jit
def kernel(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4, dtype={spelling})
    coop.load(block, src, items)
    coop.store(block, dst, items)
""").kernel
    element = numba_types().float16
    if "bfloat16" in spelling:
        from ..compiler import bfloat16 as element
    kb = compile_cubin(kernel, (_array(element), _array(element)), cc=(9, 0), block=128)
    assert_inlined(kb)


@pytest.mark.compile
@pytest.mark.parametrize("call", [
    "coop.reduce(block, items, binary_op=add)",
    "coop.inclusive_scan(block, items, scan_op=add)",
    "coop.merge_sort_keys(block, items, compare_op=less)",
    "coop.adjacent_difference(block, items, difference_op=add)",
])
def test_device_function_operators_on_16_bit_floats_are_refused(call):
    import cuda.coop as coop

    kernel = module_from_source(f"""
@cuda.jit(device=True)
def add(a, b):
    return a + b


@cuda.jit(device=True)
def less(a, b):
    return a < b


@cuda.jit
def kernel(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    r = {call}
    if cuda.threadIdx.x == 0:
        dst[0] = src[0]
""").kernel
    with pytest.raises(coop.UnsupportedDtypeError, match="float16") as info:
        compile_cubin(kernel, (_array(numba_types().float16),) * 2, cc=(9, 0), block=128)
    assert "device function" in str(info.value) and "float32" in str(info.value)
