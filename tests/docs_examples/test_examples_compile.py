"""Every docs example kernel compiles to cubin for sm_90 on a machine without a GPU.

Each ``docs/examples/<name>.py`` lists ``COMPILE = [(kernel, example_args, launch)]``;
functions named ``compile_for*`` (examples that call ``compile_cubin`` themselves) run too.
"""

from __future__ import annotations

import pytest

from . import kernel_example_paths, load_example

pytestmark = pytest.mark.compile

nb = pytest.importorskip("numba_cuda_mlir")

def _cases():
    cases = []
    for path in kernel_example_paths():
        module = load_example(path)
        for index, (kernel, args, launch) in enumerate(getattr(module, "COMPILE", ())):
            name = getattr(kernel, "py_func", kernel).__name__
            cases.append(pytest.param(module, kernel, args, launch, id=f"{path.stem}-{name}-{index}"))
        for attr in sorted(vars(module)):
            if attr.startswith("compile_for") and callable(getattr(module, attr)):
                cases.append(pytest.param(module, getattr(module, attr), None, None, id=f"{path.stem}-{attr}"))
    return cases


@pytest.mark.parametrize("module,kernel,args,launch", _cases())
def test_example_compiles(module, kernel, args, launch):
    from cuda.coop.numba_mlir import compile_cubin

    if args is None:  # an example function that compiles and checks by itself
        kernel()
        return
    binary = compile_cubin(kernel, args, cc=(9, 0), **launch)
    assert binary.cubin[:4] == b"\x7fELF"


def test_every_example_has_a_compile_case():
    for path in kernel_example_paths():
        module = load_example(path)
        assert getattr(module, "COMPILE", None) or any(a.startswith("compile_for") for a in vars(module)), (
            f"{path.name} has no COMPILE list: the docs would show a kernel no test compiles")
