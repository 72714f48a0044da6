"""KernelBinary's summary: registers from the cubin, shared memory and calls from the PTX."""

from __future__ import annotations

import numpy as np
import pytest


def _binary(ptx, cubin=b"not an ELF"):
    pytest.importorskip("numba_cuda_mlir")
    from cuda.coop.numba_mlir import KernelBinary

    kb = KernelBinary(cubin=cubin, cc=(9, 0), block=(128, 1, 1), name="k")
    kb.__dict__["ptx"] = ptx  # the cached post-LTO PTX, without a link
    return kb


@pytest.mark.unit
def test_summary_counts_calls_and_repr_hides_the_bytes():
    ptx = (".shared .align 16 .b8 cuda_coop_scratch_0[512];\n\tcall.uni foo, (a);\n"
           "\t@%p1 call bar, (b);\n\tmov.u32 %r1, 0;")
    kb = _binary(ptx)
    assert kb.registers is None and kb.calls() == 2
    assert kb.summary() == "k: sm_90, block 128x1x1, ? registers, 512 B shared memory, 2 calls left, cubin 10 B"
    assert str(kb) == kb.summary()
    assert repr(kb) == "<KernelBinary k sm_90 block=(128, 1, 1) cubin=10 B>"
    assert "no calls left" in _binary("\tmov.u32 %r1, 0;").summary()


@pytest.mark.compile
def test_summary_of_a_compiled_coop_kernel():
    pytest.importorskip("numba_cuda_mlir")
    from numba_cuda_mlir import cuda

    from cuda import coop
    from cuda.coop.numba_mlir import compile_cubin

    @cuda.jit
    def tile(source, destination, items_per_thread):
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread)
        coop.load(block, source, items, algorithm="transpose")
        coop.store(block, destination, items)

    a = np.zeros(16, np.int32)
    kb = compile_cubin(tile, [a, a, 4], cc=(9, 0), block=128)
    assert 0 < kb.registers <= 255
    text = kb.summary()
    assert text.startswith("tile: sm_90, block 128x1x1, ") and "no calls left" in text
    assert f"{kb.shared_bytes()} B shared memory" in text and kb.shared_bytes() > 0
    assert "\\x" not in repr(kb) and len(repr(kb)) < 100
