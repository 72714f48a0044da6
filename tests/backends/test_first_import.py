"""A backend module may be the first cuda.coop import of a process (no circular import);
registering the backend beside numba_cuda_mlir imports nothing heavy, and every way a kernel
reaches cuda.coop still compiles afterwards (docs/compile_latency.rst, "Import time")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.compile

pytest.importorskip("numba_cuda_mlir")

SRC = Path(__file__).resolve().parents[2] / "src"
# The compat door, the user-facing compile module, and the two that pull in the most.
MODULES = [f"cuda.coop.backends.numba_mlir.{name}" for name in ("_compat", "compile", "typing", "lowering")]


def test_each_backend_module_imports_first_in_a_fresh_process():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))
    env.pop("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION", None)
    # One fresh interpreter per module, all started at once: each import is ~2 s of
    # CPU-bound start-up, so on a machine with a free core they overlap.
    procs = {name: subprocess.Popen([sys.executable, "-c", f"import {name}"], env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
             for name in MODULES}
    failures = []
    for name, proc in procs.items():
        _out, err = proc.communicate(timeout=600)
        if proc.returncode != 0:
            failures.append(f"{name} {proc.returncode} {err.strip().splitlines()[-1:]}")
    assert not failures, failures


# ----------------------------------------------------------------------------------------
# Registering beside the compiler is cheap; the rest comes with the first cooperative
# compile (backends/_deferred.py).  Module sets, not times: the machines are shared.
# ----------------------------------------------------------------------------------------
# Not imported by ``import cuda.coop`` after ``import numba_cuda_mlir``: numba-cuda-mlir's
# API module and lowering stack, and cuda.coop's specification, C++ generation and typing.
COOP_DEFERRED = (
    "cuda.coop.core.spec", "cuda.coop.core.cpp", "cuda.coop.core.build", "cuda.coop.core.toolchain",
    "cuda.coop.backends._inference", "cuda.coop.backends._typing",
    "cuda.coop.backends.numba_mlir.typing", "cuda.coop.backends.numba_mlir.lowering",
    "cuda.coop.backends.numba_mlir.group_methods", "cuda.coop.backends.numba_mlir.rewrite",
    "cuda.coop.backends.numba_mlir.types",
)
# The NVVM dialect's Python module (20 ms to import) is only for block.sync(): registering
# checks the upstream names, which finds it without importing it (backends/_upstream.py).
COMPILER_DEFERRED = ("numba_cuda_mlir._mlir.dialects.nvvm",)
DEFERRED = ("numba_cuda_mlir.cuda", "numba_cuda_mlir.extending", "numba_cuda_mlir.lowering_utilities",
            "numba_cuda_mlir.descriptor", "numba_cuda_mlir.models", "cuda.coop.ops._registry",
            *COMPILER_DEFERRED, *COOP_DEFERRED)

_PRELUDE = f"""
import sys
import numpy as np
DEFERRED = {DEFERRED!r}
COOP_DEFERRED = {COOP_DEFERRED!r}
COMPILER_DEFERRED = {COMPILER_DEFERRED!r}

def loaded(names, before=()):
    return sorted(m for m in names if m in sys.modules and m not in before)

def families():
    return sorted(m.rsplit(".", 1)[1] for m in sys.modules
                  if m.startswith("cuda.coop.ops.") and not m.rsplit(".", 1)[1].startswith("_"))

def backend():
    from cuda.coop import _registration
    return _registration.active_backends()["numba-cuda-mlir"]

ARGS = (np.zeros(1, np.int32), np.zeros(1, np.int32))
"""

# A kernel checked down to a cubin with the providers inlined; the modules registering
# deferred are loaded now (the lists are not vacuous), and of the families only those of
# the operations the kernel calls (ops/_lookup.py).
_CHECK_KERNEL = """
kb = compile_cubin(k, ARGS, cc=(9, 0), block=128)
print("COMPILED", len(kb.cubin) > 0, kb.calls(), backend().is_ready)
print("LOADED", loaded(COOP_DEFERRED) == sorted(COOP_DEFERRED), loaded(("cuda.coop.ops._registry",)))
print("FAMILIES", families())
"""

_SCRIPTS = {
    # `import cuda.coop` after `import numba_cuda_mlir`: registered, nothing heavy imported;
    # then a kernel compiled after it, the first use of cuda.coop.
    "bare": """
import numba_cuda_mlir
before = set(sys.modules)
import cuda.coop as coop
print("EAGER", loaded(DEFERRED, before))
print("READY", backend().is_ready)
from numba_cuda_mlir import cuda
from cuda.coop.numba_mlir import compile_cubin
from cuda.coop.backends import _deferred
from cuda.coop.backends.numba_mlir import _compat
CLASSES = (*_deferred.function_classes(), _deferred.stateful_class(), *_deferred.group_classes())

@cuda.jit
def k(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    total = coop.sum(block, items)
    if cuda.threadIdx.x == 0:
        dst[0] = total
""" + _CHECK_KERNEL + """
# ready() replaced every first-use typeof with the real one.
print("FIRST_USE_TYPEOFS", [c.__name__ for c in CLASSES
                            if _compat.typeof_impl.dispatch(c).__name__ == "typeof_first_use"])
""",
    # A user's program: the compiler's API first; a kernel without cuda.coop changes nothing;
    # the launch hook is there before any cooperative launch.
    "user": """
from numba_cuda_mlir import cuda
from numba_cuda_mlir import descriptor
before = set(sys.modules)
from cuda import coop
print("EAGER", loaded(COOP_DEFERRED + COMPILER_DEFERRED, before))
print("HOOKED", getattr(descriptor._ArgMarshaller.__call__, "_coop_launch_hook", False))
from cuda.coop.numba_mlir import compile_cubin

@cuda.jit
def plain(src, dst):
    dst[0] = src[0]

compile_cubin(plain, ARGS, cc=(9, 0), block=128)
print("PLAIN", backend().is_ready, loaded(("cuda.coop.ops._registry", "cuda.coop.backends.numba_mlir.typing")))

@cuda.jit
def k(src, dst):
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)
""" + _CHECK_KERNEL,
    # cuda.coop first, the compiler's API later: the launch hook follows the import.
    "reverse": """
import cuda.coop as coop
from numba_cuda_mlir import cuda
from numba_cuda_mlir import descriptor
print("HOOKED", getattr(descriptor._ArgMarshaller.__call__, "_coop_launch_hook", False))
from cuda.coop.numba_mlir import compile_cubin

@cuda.jit
def k(src, dst):
    items = coop.ThreadData(4)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)
""" + _CHECK_KERNEL,
    # The first use of cuda.coop is in a device helper, compiled while its caller is typed.
    "helper": """
import numba_cuda_mlir
import cuda.coop as coop
from numba_cuda_mlir import cuda
from cuda.coop.numba_mlir import compile_cubin

@cuda.jit(device=True)
def helper(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(4)
    coop.load(block, src, items)
    coop.store(block, dst, coop.inclusive_sum(block, items))

@cuda.jit
def k(src, dst):
    helper(src, dst)
""" + _CHECK_KERNEL,
    # The qualified import, auto-registration off.
    "qualified": """
import cuda.coop.numba_mlir as coop
from numba_cuda_mlir import cuda
print("READY", backend().is_ready)
compile_cubin = coop.compile_cubin

@cuda.jit
def k(src, dst):
    items = coop.local.array(4, np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)
""" + _CHECK_KERNEL,
    # Explicit registration, auto-registration off; the only cuda.coop object in the kernel
    # is reached through a global tuple, which no rewrite follows: typeof activates, while
    # the kernel is typed.
    "explicit": """
from numba_cuda_mlir import cuda
from cuda import coop
coop.register("numba-cuda-mlir")
print("READY", backend().is_ready)
from cuda.coop.numba_mlir import compile_cubin
GROUPS = (coop.this_warp,)

@cuda.jit
def k(src, dst):
    dst[0] = GROUPS[0]().count("block")
""" + _CHECK_KERNEL,
    # The first cooperative definition makes the backend ready on a helper thread, before
    # any compile (backends/_first_compile.py); a definition without cuda.coop does not.
    "defined": """
from numba_cuda_mlir import cuda
from cuda import coop
from cuda.coop.backends import _first_compile

@cuda.jit
def plain(src, dst):
    dst[0] = src[0]

print("PLAIN_DEFINED", backend().is_ready, len(_first_compile._definition_probe))

@cuda.jit
def k(src, dst):
    items = coop.ThreadData(4, dtype=np.int32)
    coop.load(coop.this_block(), src, items)
    coop.store(coop.this_block(), dst, items)

_first_compile._definition_probe[0].join()
print("DEFINED", backend().is_ready, loaded(("cuda.coop.backends.numba_mlir.typing",)), families())
from cuda.coop.numba_mlir import compile_cubin
""" + _CHECK_KERNEL,
    # The first use is through a namedtuple of operations (the rewrite follows its attributes).
    "namedtuple": """
import collections
from numba_cuda_mlir import cuda
import cuda.coop as coop
from cuda.coop.numba_mlir import compile_cubin
Ops = collections.namedtuple("Ops", "load store")
OPS = Ops(coop.load, coop.store)

@cuda.jit
def k(src, dst):
    items = coop.ThreadData(4)
    OPS.load(coop.this_block(), src, items)
    OPS.store(coop.this_block(), dst, items)
""" + _CHECK_KERNEL,
}
_NO_AUTO = {"qualified", "explicit"}


def _run_all(scripts: dict, extra_env=None) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))
    env.pop("CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION", None)
    procs = {}
    for name, code in scripts.items():
        penv = dict(env, **(extra_env or {}).get(name, {}))
        procs[name] = subprocess.Popen([sys.executable, "-c", _PRELUDE + code], env=penv, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{name}: {stderr[-3000:]}"
        out[name] = dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)
    return out


# The families each script's kernel calls, and those they import (scan.py imports
# reduce); cuda.coop.numba_mlir imports none by itself.
_FAMILIES = {"bare": ["load_store", "reduce"], "user": ["load_store"], "reverse": ["load_store"],
             "helper": ["load_store", "reduce", "scan"], "qualified": ["load_store"], "explicit": [],
             "namedtuple": ["load_store"], "defined": ["load_store"]}


def test_registration_defers_and_each_way_to_coop_compiles():
    # No precompiled header (a second NVRTC compile in a process builds one of every family).
    env = {name: {"CUDA_COOP_NVRTC_PCH": "0", **({"CUDA_COOP_DISABLE_AUTO_DSL_REGISTRATION": "1"}
                                                 if name in _NO_AUTO else {})} for name in _SCRIPTS}
    results = _run_all(_SCRIPTS, env)
    bare, user = results["bare"], results["user"]
    assert bare["EAGER"] == "[]", "import cuda.coop beside numba_cuda_mlir imported " + bare["EAGER"]
    assert bare["READY"] == "False"
    assert user["EAGER"] == "[]", user["EAGER"]
    assert user["PLAIN"] == "False []", "a kernel without cuda.coop activated the backend: " + user["PLAIN"]
    for name in ("user", "reverse"):
        assert results[name]["HOOKED"] == "True", f"{name}: no launch hook before the first launch"
    for name in ("qualified", "explicit"):
        assert results[name]["READY"] == "False", name
    assert bare["FIRST_USE_TYPEOFS"] == "[]", bare["FIRST_USE_TYPEOFS"]
    assert results["defined"]["PLAIN_DEFINED"] == "False 0", results["defined"]["PLAIN_DEFINED"]
    # Ready before any compile, with no family imported yet (the kernel's calls import theirs).
    assert results["defined"]["DEFINED"] == "True ['cuda.coop.backends.numba_mlir.typing'] []", results["defined"]

    for name, out in results.items():
        assert out["COMPILED"] == "True 0 True", f"{name}: {out}"
        assert out["LOADED"] == "True []", f"{name}: {out['LOADED']}"
        assert out["FAMILIES"] == str(_FAMILIES[name]), f"{name}: {out['FAMILIES']}"


def test_the_rewrite_reads_no_attribute_of_a_users_object():
    """Registered beside numba_cuda_mlir, cuda.coop's rewrite looks at every function compiled,
    cooperative or not: it follows attribute chains through modules, classes and tuples only,
    so a user's property is not run by a kernel that does not use cuda.coop."""
    from cuda import coop
    from cuda.coop.backends._deferred import refers_to_coop
    from cuda.coop.backends.numba_mlir import _compat as C

    reads = []

    class Config:
        @property
        def width(self):
            reads.append("width")
            return 32

    config = Config()

    def plain(dst):
        dst[0] = config.width

    def cooperative(dst):
        dst[0] = coop.this_warp().count("block")

    assert not refers_to_coop(C.ir, C.run_frontend(plain))
    assert refers_to_coop(C.ir, C.run_frontend(cooperative))
    assert reads == []


@pytest.mark.parametrize("package", ["numba_mlir", "numba_cuda"])
def test_each_backend_orders_ready_after_its_compilers_compile_lock(package):
    import importlib

    # The compiler's own lock, imported from the compiler first (its import registers the backend).
    lock_module = {"numba_mlir": "numba_cuda_mlir.numba_cuda.core.compiler_lock",
                   "numba_cuda": "numba.cuda.core.compiler_lock"}[package]
    try:
        lock = importlib.import_module(lock_module).global_compiler_lock
    except ImportError as exc:
        pytest.skip(f"{lock_module} is not importable here: {exc!r}")
    backend_class = {"numba_mlir": "NumbaMlirBackend", "numba_cuda": "NumbaCudaBackend"}[package]
    backend = getattr(importlib.import_module(f"cuda.coop.backends.{package}"), backend_class)
    assert backend._compile_lock(object.__new__(backend)) is lock
