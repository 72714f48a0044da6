"""The NVRTC compatibility header that precedes every CCCL header in a translation unit."""

from __future__ import annotations

import numpy as np
import pytest

from cuda.coop.core.cpp import COMPAT_HEADER_NAME, make_provider, render_translation_unit
from cuda.coop.core import spec


def _provider(body: str, headers: tuple):
    def generate(plan, launch):
        return spec.CppProvider(headers=headers, decls="", body=body)

    plan = spec.CallPlan(
        op="probe", family="compat", group=spec.GroupArg("block"), result=None,
        operands=(spec.AbiOperand("out", "payload", np.dtype("int32"), "out"),),
        storage=None, temp_storage=None, params=(body,), generate=generate,
    )
    return make_provider(plan, spec.LaunchFacts(block=(64, 1, 1), cc=(9, 0)))


@pytest.mark.unit
def test_compat_header_comes_first():
    tu = render_translation_unit([_provider("out[0] = 1;", ("cub/block/block_reduce.cuh",))])
    includes = [line for line in tu.splitlines() if line.startswith("#include")]
    assert includes[0] == f"#include <{COMPAT_HEADER_NAME}>"


@pytest.mark.compile
def test_thread_store_on_iterators_compiles():
    """CCCL 2.8's ThreadStore names std::is_pointer, which NVRTC lacks without the header.

    CUB reaches it through WarpReduceSmem/WarpScanSmem, i.e. BlockReduce or BlockScan
    raking on a block whose thread count is not a multiple of 32.
    """
    from cuda.coop.core.build import build_providers

    body = "cub::ThreadStore<cub::STORE_VOLATILE>(out, 1);"
    build = build_providers([_provider(body, ("cub/thread/thread_store.cuh",))], "sm_90")
    assert build.ltoir
