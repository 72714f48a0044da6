"""``compile_cubin(cc=...)``: a target that is not a (major, minor) pair, or one the toolkit's
NVRTC does not compile for, is refused by name before either compiler sees it.  Before, a
bare int or "sm_90" failed inside the compilers (TypeError, ValueError, IndexError), and
sm_70 under CUDA 13 reached NVRTC, whose refusal read as a cuda-coop bug."""

from __future__ import annotations

import numpy as np
import pytest

import cuda.coop as coop

from ..backends_param import COMPILERS, compile_for, kernel_for

pytestmark = [pytest.mark.compile,
              pytest.mark.only_on("numba-cuda-mlir", "runs each test on both compilers itself (tests/backends_param.py)")]

_SOURCE = """
@cuda.jit
def copy(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)
"""


@pytest.fixture(params=COMPILERS)
def compiler(request):
    return request.param


@pytest.mark.parametrize("cc", [90, "sm_90", (9,), (9, 0, 0), (9.0, 0), (True, 0), (0, 0), (9, 10)],
                         ids=["int", "string", "one_number", "three_numbers", "float", "bool", "zero_major",
                              "minor_above_9"])
def test_a_target_that_is_not_a_compute_capability(compiler, cc):
    a = np.zeros(512, np.int32)
    with pytest.raises(coop.InvalidArgumentTypeError,
                       match=r"compile_cubin\(\): cc=.* is not a compute capability; pass \(major, minor\), "
                             r"e\.g\. cc=\(9, 0\)"):
        compile_for(compiler, kernel_for(compiler, _SOURCE).copy, (a, a), cc=cc, block=128)


def test_an_architecture_the_toolkit_dropped_or_never_had(compiler):
    from cuda.coop.core.toolchain import nvrtc_architectures

    known = nvrtc_architectures()
    assert 90 in known, known  # the query itself works on every supported toolkit
    a = np.zeros(512, np.int32)
    kernel = kernel_for(compiler, _SOURCE).copy
    for cc in [(9, 1)] + ([(7, 0)] if 70 not in known else []):  # CUDA 13 dropped sm_70; no GPU is sm_91
        with pytest.raises(coop.UnsupportedComputeCapabilityError,
                           match=rf"cc=\({cc[0]}, {cc[1]}\) \(sm_{cc[0]}{cc[1]}\) is not an architecture this "
                                 r"toolkit's NVRTC compiles for \(.*sm_90.*\); pass one of those"):
            compile_for(compiler, kernel, (a, a), cc=cc, block=128)


def test_a_list_target_compiles_like_a_tuple(compiler):
    a = np.zeros(512, np.int32)
    kb = compile_for(compiler, kernel_for(compiler, _SOURCE).copy, (a, a), cc=[8, 0], block=128)
    assert kb.cc == (8, 0) and kb.registers
