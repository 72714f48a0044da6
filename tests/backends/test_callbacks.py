"""The shared callback mechanism: user device functions and Python operators as operators.

Families declare ``CallPlan.callbacks``; the backend compiles each function to
LTO-IR under a symbol derived from its identity, the core declares it in the
provider, and LTO inlines it.  The family tests (reduce, scan, ...) cover the
end-to-end kernels; these tests cover the pieces every family relies on.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import cuda.coop as coop
from cuda.coop.ops import _validate as v
from cuda.coop.core.cpp import make_provider
from cuda.coop.core import spec

ALIASES = {"+": "sum", "sum": "sum", "add": "sum", "max": "max", "maximum": "max", "&": "bit_and"}


def _plan(callbacks=(), body="out[0] = binary_op(a, b);"):
    def generate(plan, launch):
        return spec.CppProvider(headers=(), decls="", body=body)

    return spec.CallPlan(
        op="probe", family="test", group=spec.GroupArg("block"), result=None,
        operands=(spec.AbiOperand("a", "value", np.dtype("int32"), "a"),
                  spec.AbiOperand("b", "value", np.dtype("int32"), "b"),
                  spec.AbiOperand("out", "payload", np.dtype("int32"), "out")),
        storage=None, temp_storage=None, params=("probe",), generate=generate, callbacks=callbacks,
    )


def _callback(fn=None, key="f"):
    function = spec.DeviceFunctionArg(handle=fn, key=key, name=getattr(fn, "__name__", key))
    return spec.Callback(role="binary_op", function=function, restype=np.dtype("int32"),
                         argtypes=(np.dtype("int32"), np.dtype("int32")))


@pytest.mark.unit
@pytest.mark.parametrize("obj,name,label", [
    (operator.add, "+", "operator.add"), (operator.mul, "*", "operator.mul"),
    (operator.and_, "&", "operator.and_"), (operator.xor, "^", "operator.xor"),
    (operator.lt, "<", "operator.lt"), (max, "max", "max"), (min, "min", "min"),
    (np.add, "+", "np.add"), (np.maximum, "max", "np.maximum"), (np.bitwise_or, "|", "np.bitwise_or"),
])
def test_python_operators_map_to_builtin_spellings(obj, name, label):
    assert spec.python_operator(obj) == spec.OperatorArg(name, label)


@pytest.mark.unit
@pytest.mark.parametrize("obj", [operator.truediv, np.sqrt, len, None, [1]])
def test_other_callables_are_not_operators(obj):
    assert spec.python_operator(obj) is None


@pytest.mark.unit
def test_choose_operator_accepts_strings_python_operators_and_device_functions():
    call = "coop.probe()"
    assert v.choose_operator(call, "binary_op", spec.StringArg(" Maximum "), ALIASES) == "max"
    assert v.choose_operator(call, "binary_op", spec.OperatorArg("+", "np.add"), ALIASES) == "sum"
    assert v.choose_operator(call, "binary_op", spec.OMITTED, ALIASES, default="sum") == "sum"
    fn = spec.DeviceFunctionArg(handle=None, key=1, name="f")
    assert v.choose_operator(call, "binary_op", fn, ALIASES) is fn


@pytest.mark.unit
def test_choose_operator_errors():
    call = "coop.probe()"
    with pytest.raises(coop.InvalidOperatorError, match=r"binary_op='avg' is not a supported operator"):
        v.choose_operator(call, "binary_op", spec.StringArg("avg"), ALIASES)
    with pytest.raises(coop.InvalidOperatorError, match=r"binary_op=operator.lt"):
        v.choose_operator(call, "binary_op", spec.OperatorArg("<", "operator.lt"), ALIASES)
    with pytest.raises(coop.NotADeviceFunctionError, match=r"kernel k is not a device function"):
        v.choose_operator(call, "binary_op", spec.DeviceFunctionArg(None, 1, "k", device=False), ALIASES)
    with pytest.raises(coop.NotADeviceFunctionError, match=r"neither a supported operator"):
        v.choose_operator(call, "binary_op", spec.UnsupportedArg("Function(<built-in function sqrt>)"),
                          ALIASES)
    with pytest.raises(coop.InvalidOperatorError, match="not accepted here"):
        v.choose_operator(call, "binary_op", spec.DeviceFunctionArg(None, 1, "f"), ALIASES, callables=False)
    with pytest.raises(coop.MissingArgumentError, match="binary_op is required"):
        v.choose_operator(call, "binary_op", spec.OMITTED, ALIASES)


@pytest.mark.unit
def test_provider_declares_the_callback_and_its_symbol_is_part_of_the_digest():
    launch = spec.LaunchFacts(block=(128, 1, 1), cc=(9, 0))
    plan = _plan((_callback(),))
    a = make_provider(plan, launch, callbacks={"binary_op": "coop_cb_aaaa"})
    b = make_provider(plan, launch, callbacks={"binary_op": "coop_cb_bbbb"})
    assert 'extern "C" __device__ int coop_cb_aaaa(int, int);' in a.source
    assert "int binary_op(int a0, int a1) { return coop_cb_aaaa(a0, a1); }" in a.source
    assert a.symbol != b.symbol


@pytest.mark.unit
def test_pointer_parameters_for_stateful_callbacks():
    launch = spec.LaunchFacts(block=(64, 1, 1), cc=(9, 0))
    cb = spec.Callback(role="prefix_op", function=spec.DeviceFunctionArg(None, 1, "f"),
                       restype=np.dtype("float64"),
                       argtypes=(spec.PointerTo(np.dtype("int64")), np.dtype("float64")))
    p = make_provider(_plan((cb,), body=""), launch, callbacks={"prefix_op": "coop_cb_s"})
    assert 'extern "C" __device__ double coop_cb_s(long long*, double);' in p.source
    assert "double prefix_op(long long* a0, double a1)" in p.source


# ----------------------------------------------------------------------------------------
# Compiling user functions (numba-cuda-mlir, no GPU)
# ----------------------------------------------------------------------------------------

def _device_functions():
    from numba_cuda_mlir import cuda

    @cuda.jit(device=True)
    def bigger(a, b):
        return a if a > b else b

    def make_offset(k):
        @cuda.jit(device=True)
        def add_k(a, b):
            return a + b + k

        return add_k

    @cuda.jit(device=True)
    def running(state, aggregate):
        old = state[0]
        state[0] = old + aggregate
        return old

    return bigger, make_offset, running


@pytest.mark.compile
def test_symbols_follow_function_identity():
    pytest.importorskip("numba_cuda_mlir")
    from cuda.coop.backends import _callbacks as cbs  # compiler-neutral: symbols and fingerprints

    bigger, make_offset, _ = _device_functions()
    one, two, one_again = make_offset(1), make_offset(2), make_offset(1)
    sym = lambda fn: cbs._symbol(_callback(fn, key=id(fn)))  # noqa: E731
    assert sym(bigger) == sym(bigger)
    assert sym(one) != sym(two), "closure values are part of the identity"
    # Same code and closure in another function object: never the same symbol in one process.
    assert sym(one) != sym(one_again)
    assert cbs.function_fingerprint(one) == cbs.function_fingerprint(one_again)
    assert cbs.function_fingerprint(one) != cbs.function_fingerprint(two)
    assert sym(bigger).startswith("coop_cb_")


@pytest.mark.compile
def test_callback_links_and_inlines_into_a_provider():
    """NVRTC provider + numba-cuda-mlir callback, linked by nvJitLink: the call is inlined."""
    pytest.importorskip("numba_cuda_mlir")
    from cuda.bindings import nvjitlink

    from cuda.coop.backends.numba_mlir import _compat as C
    from cuda.coop.backends.numba_mlir import callbacks as cbs
    from cuda.coop.core.build import _nvrtc_compile, _options, build_providers

    bigger, _, running = _device_functions()
    launch = spec.LaunchFacts(block=(128, 1, 1), cc=(9, 0))
    plan = _plan((_callback(bigger, key="bigger"),))
    with C.forced_compute_capability((9, 0)):
        symbols, items = cbs.resolve_callbacks(plan, (9, 0))
        again, items_again = cbs.resolve_callbacks(plan, (9, 0))
    assert symbols == again and items[0] is items_again[0], "compiled once per symbol and target"
    provider = make_provider(plan, launch, callbacks=symbols)
    build = build_providers([provider], "sm_90")
    # A kernel that calls the provider keeps it alive through whole-program LTO.
    kernel = (f'extern "C" __device__ void {provider.symbol}(int, int, int*);\n'
              f'extern "C" __global__ void probe_kernel(int* o) {{ {provider.symbol}(o[0], o[1], o); }}\n')
    kernel_ltoir = _nvrtc_compile(kernel, _options("sm_90", ()), "probe")
    handle = nvjitlink.create(3, ["-arch=sm_90", "-lto", "-ptx"])
    try:
        for name, data in (("kernel", kernel_ltoir), ("provider", build.ltoir), ("callback", items[0].data)):
            nvjitlink.add_data(handle, nvjitlink.InputType.LTOIR, data, len(data), name)
        nvjitlink.complete(handle)
        ptx = bytearray(nvjitlink.get_linked_ptx_size(handle))
        nvjitlink.get_linked_ptx(handle, ptx)
    finally:
        nvjitlink.destroy(handle)
    ptx = ptx.decode()
    body = ptx[ptx.index(".entry probe_kernel"):]
    assert "max.s32" in body, body
    assert "call" not in body, "the provider or the callback was not inlined"


@pytest.mark.compile
def test_callback_with_state_pointer_compiles():
    pytest.importorskip("numba_cuda_mlir")
    from cuda.coop.backends.numba_mlir import _compat as C
    from cuda.coop.backends.numba_mlir import callbacks as cbs

    _, _, running = _device_functions()
    cb = spec.Callback(role="prefix_op", function=spec.DeviceFunctionArg(running, "running", "running"),
                       restype=np.dtype("int32"), argtypes=(spec.PointerTo(np.dtype("int64")), np.dtype("int32")))
    plan = _plan((cb,), body="")
    with C.forced_compute_capability((9, 0)):
        symbols, items = cbs.resolve_callbacks(plan, (9, 0))
    assert symbols["prefix_op"].startswith("coop_cb_") and len(items[0].data) > 0


@pytest.mark.compile
def test_callback_that_does_not_compile_for_the_signature():
    pytest.importorskip("numba_cuda_mlir")
    from numba_cuda_mlir import cuda

    from cuda.coop.backends.numba_mlir import _compat as C
    from cuda.coop.backends.numba_mlir import callbacks as cbs

    @cuda.jit(device=True)
    def needs_array(a, b):
        return a[0] + b

    plan = _plan((_callback(needs_array, key="needs_array"),))
    with C.forced_compute_capability((9, 0)), pytest.raises(coop.InvalidArgumentTypeError) as info:
        cbs.resolve_callbacks(plan, (9, 0))
    msg = str(info.value)
    assert "coop.probe(): binary_op=device function needs_array" in msg and "int32(int32, int32)" in msg
