"""Registration of the classic numba-cuda backend: automatic in either import order,
explicit by name, and beside numba-cuda-mlir's (each kernel uses its own compiler's)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ..backends_param import require

pytestmark = pytest.mark.compile

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _run(code: str, **extra_env: str) -> str:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), **extra_env}
    env.pop("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION", None)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("first", ["coop", "numba"])
def test_automatic_in_either_import_order(first):
    require("numba-cuda")
    imports = ["from cuda import coop", "from numba import cuda"]
    if first == "numba":
        imports.reverse()
    out = _run("\n".join(imports) + "\nprint(sorted(coop._registration.active_backends()))")
    assert out == "['numba-cuda']"


def test_explicit_register_by_name_and_alias():
    require("numba-cuda")
    out = _run("""
        from cuda import coop
        import sys
        assert 'numba.cuda' not in sys.modules
        coop.register("numba-cuda"); coop.register("classic")
        print(sorted(coop._registration.active_backends()))
    """)
    assert out == "['numba-cuda']"


def test_both_compilers_each_kernel_its_own_backend():
    require("numba-cuda")
    require("numba-cuda-mlir")
    out = _run("""
        import numpy as np
        from cuda import coop
        from numba import cuda as classic
        from numba_cuda_mlir import cuda as mlir
        from numba.cuda import types as ct
        from numba_cuda_mlir.numba_cuda import types as mt
        from cuda.coop.numba_cuda import compile_cubin as compile_classic
        from cuda.coop.numba_mlir import compile_cubin as compile_mlir

        def body(src, dst):
            items = coop.ThreadData(4, dtype=np.int32)
            coop.load(coop.this_block(), src, items)
            coop.store(coop.this_block(), dst, coop.inclusive_sum(coop.this_block(), items))

        a = compile_classic(classic.jit(body), (ct.int32[::1], ct.int32[::1]), block=64)
        b = compile_mlir(mlir.jit(body), (mt.int32[::1], mt.int32[::1]), block=64)
        print(sorted(coop._registration.active_backends()), a.calls(), b.calls(), a.shared_bytes() > 0)
    """)
    assert out == "['numba-cuda', 'numba-cuda-mlir'] 0 0 True"



def test_registering_defers_typing_and_lowering_to_the_first_cooperative_compile(tmp_path):
    """``from cuda import coop`` beside ``numba.cuda`` installs hooks only; a kernel without
    cuda.coop leaves the backend as it is; the first cooperative one (through an inlined
    helper, as classic numba-cuda needs) makes it ready and compiles (backends/_deferred.py).

    The cache starts empty, so the result does not depend on what earlier runs left, and the
    NVRTC precompiled header is off: it is built on the process's second NVRTC compile from
    every family's headers, so with it on a cold compile of load + store imports them all."""
    require("numba-cuda")
    deferred = ("cuda.coop.ops.load_store", "cuda.coop.core.spec", "cuda.coop.core.build",
                "cuda.coop.backends.numba_cuda.typing", "cuda.coop.backends.numba_cuda.lowering",
                "cuda.coop.backends.numba_cuda.rewrite", "cuda.coop.backends.numba_cuda.group_methods")
    out = _run(f"""
        import sys
        import numpy as np
        from numba import cuda
        from cuda import coop
        from cuda.coop.numba_cuda import compile_cubin
        deferred = {deferred!r}
        backend = coop._registration.active_backends()["numba-cuda"]
        args = (np.zeros(1, np.int32), np.zeros(1, np.int32))
        seen = [sorted(m for m in deferred if m in sys.modules), backend.is_ready]

        @cuda.jit
        def plain(src, dst):
            dst[0] = src[0]

        compile_cubin(plain, args, block=128)
        seen.append(backend.is_ready)

        @cuda.jit(device=True, inline="always")
        def helper(src, dst):
            items = coop.ThreadData(4)
            coop.load(coop.this_block(), src, items)
            coop.store(coop.this_block(), dst, items)

        @cuda.jit
        def k(src, dst):
            helper(src, dst)

        kb = compile_cubin(k, args, block=128)
        seen += [backend.is_ready, kb.calls(), all(m in sys.modules for m in deferred),
                 "cuda.coop.ops.reduce" in sys.modules]  # only the families the kernel calls
        print(seen)
    """, CUDA_COOP_CACHE_DIR=str(tmp_path / "cache"), CUDA_COOP_NVRTC_PCH="off")
    assert out == "[[], False, False, True, 0, True, False]"

def test_an_old_numbas_own_cuda_target_is_refused_by_name():
    """numba-cuda installed where its redirector .pth does not run, so ``numba.cuda`` stays
    numba's built-in target (the H200 image's venv): registering says so, instead of failing
    on a missing numba.cuda module."""
    require("numba-cuda")
    import types

    from cuda.coop._errors import BackendUnavailableError
    from cuda.coop.backends.numba_cuda import _compat

    builtin = types.ModuleType("numba.cuda")
    builtin.__file__ = os.path.join(os.sep, "site-packages", "numba", "cuda", "__init__.py")
    with pytest.raises(BackendUnavailableError, match="numba.cuda is numba .*built-in CUDA target.*_numba_cuda_redirector"):
        _compat.check_numba_cuda_is_the_target(builtin)
    from numba import cuda

    _compat.check_numba_cuda_is_the_target(cuda)  # numba-cuda's own: accepted


def test_a_numpy_without_row_stack_is_refused_by_name(monkeypatch):
    """numba-cuda 0.30 overloads ``np.row_stack``, which NumPy 2.5 removed (the H200 image's
    NumPy): every compile would fail deep in numba-cuda's typing, so registering names the
    conflict and the fix instead."""
    require("numba-cuda")
    import numpy as np

    from cuda.coop._errors import UnsupportedBackendVersionError
    from cuda.coop.backends.numba_cuda import _compat

    _compat.check_numpy_supported()  # this environment's NumPy still has it: accepted
    monkeypatch.delattr(np, "row_stack")
    with pytest.raises(UnsupportedBackendVersionError,
                       match=r"NumPy .* numba-cuda 0\.30\.\d+ cannot compile .*row_stack.*numpy<2\.5"):
        _compat.check_numpy_supported()


def test_a_kernel_argument_item_count_asks_the_dispatcher_for_a_literal():
    """``ThreadData(items_per_thread)`` with a kernel argument typed as a plain integer must
    reach numba-cuda's dispatcher as its ForceLiteralArg (it then retypes with the value);
    numba's own ``types.Function`` turned any other class into a TypingError, so every launch
    of such a kernel on classic numba-cuda failed (seen on the H200)."""
    require("numba-cuda")
    import numpy as np
    from numba import cuda
    from numba.cuda import types
    from numba.cuda.core.errors import ForceLiteralArg

    from cuda import coop
    from cuda.coop.numba_cuda import compile_cubin

    def kernel(src, dst, items_per_thread):
        items = coop.ThreadData(items_per_thread, dtype=np.int32)
        coop.load(coop.this_block(), src, items)
        coop.store(coop.this_block(), dst, items)

    with pytest.raises(ForceLiteralArg) as info:
        compile_cubin(cuda.jit(kernel), (types.int32[::1], types.int32[::1], types.int64), block=128)
    assert info.value.requested_args == frozenset({2})
