"""Run-time argument checks (the default; ``CUDA_COOP_CHECKED=0`` turns them off) compile
for every family with run-time arguments, and only checked kernels carry them: real NVRTC
and numba-cuda-mlir to cubin, no GPU."""

from __future__ import annotations

import re

import pytest


from ..kernelgen import kernel_module
from . import checked_kernels as ck
from .cubin_checks import assert_inlined, compile_cubin, numba_types

pytestmark = pytest.mark.compile

from ..compiler import require  # noqa: E402

require()

_LOAD = """
block = coop.this_block()
t = cuda.threadIdx.x
items = coop.ThreadData(4, dtype=np.int32)
coop.load(block, src, items)
"""

# name -> (kernel body, arguments the checks name); kernels take (src, dst, n).
FAMILIES = {
    "load_store": (_LOAD.replace("coop.load(block, src, items)", "coop.load(block, src, items, valid_items=n)")
                   + "coop.store(block, dst, items, valid_items=n)\n", ["valid_items"]),
    "warp_load": ("""
w = coop.this_warp()
items = coop.ThreadData(4, dtype=np.int32)
coop.load(w, src, items, valid_items=n, oob_default=0)
coop.store(w, dst, items)
""", ["valid_items"]),
    "warp_scan": ("t = cuda.threadIdx.x\ndst[t] = coop.inclusive_sum(coop.this_warp(), src[t], valid_items=n)\n",
                  ["valid_items"]),
    "block_reduce": (_LOAD + "dst[t] = coop.sum(block, items, valid_items=n)\n", ["valid_items"]),
    "shuffle_offset": ("t = cuda.threadIdx.x\n"
                       "dst[t] = coop.shuffle(coop.this_block(), src[t], mode='offset', distance=n)\n", ["distance"]),
    "shuffle_rotate": ("t = cuda.threadIdx.x\n"
                       "dst[t] = coop.shuffle(coop.this_block(), src[t], mode='rotate', distance=n)\n", ["distance"]),
    "shuffle_up": (_LOAD + "r = coop.shuffle(block, items, mode='up', distance=n)\ncoop.store(block, dst, r)\n",
                   ["distance"]),
    "topk_sort": (_LOAD + "r = coop.topk_max_keys(block, items, k=n, valid_items=n)\ncoop.store(block, dst, r)\n",
                  ["k", "valid_items"]),
    "topk_select": (_LOAD + "r = coop.topk_min_keys(block, items, k=n, algorithm='radix_select')\n"
                    "coop.store(block, dst, r)\n", ["k"]),
    "adjacent_difference": (_LOAD + "r = coop.adjacent_difference(block, items, valid_items=n)\n"
                            "coop.store(block, dst, r)\n", ["valid_items"]),
    "discontinuity": (_LOAD + "r = coop.discontinuity(block, items, mode='heads', valid_items=n)\n"
                      "coop.store(block, dst, r)\n", ["valid_items"]),
    "merge_sort": (_LOAD + "r = coop.merge_sort_keys(block, items, valid_items=n)\ncoop.store(block, dst, r)\n",
                   ["valid_items"]),
    "radix_sort": (_LOAD + "r = coop.radix_sort_keys(block, items, begin_bit=n, end_bit=n + 8)\n"
                   "coop.store(block, dst, r)\n", ["begin_bit", "end_bit"]),
    "radix_rank": (_LOAD + "r = coop.radix_rank(block, items, begin_bit=n, radix_bits=4)\n"
                   "coop.store(block, dst, r)\n", ["begin_bit"]),
    "run_length_window": ("""
block = coop.this_block()
t = cuda.threadIdx.x
v = coop.ThreadData(1, dtype=np.int32)
l = coop.ThreadData(1, dtype=np.int32)
v[0] = src[t]
l[0] = src[t]
w = coop.run_length_decode(block, v, l, decoded_items_per_thread=2, decoded_window_offset=n)
coop.store(block, dst, w)
""", ["decoded_window_offset", "run_lengths"]),
}


def _argtypes(types):
    return (types.int32[::1], types.int32[::1], types.int64)


def _compile_in(mode: str, kernel, argtypes, monkeypatch, tmp_path):
    """The kernel's cubin and its generated C++ (the names of the units, their text), compiled
    in ``mode``: one unit per kernel on numba-cuda-mlir, one per call on classic numba-cuda."""
    dump = tmp_path / mode
    monkeypatch.setenv("CUDA_COOP_SOURCE_DUMP_DIR", str(dump))
    if mode == "checked":
        monkeypatch.delenv("CUDA_COOP_CHECKED", raising=False)  # the default
    else:
        monkeypatch.setenv("CUDA_COOP_CHECKED", "0")
    kb = compile_cubin(kernel, argtypes, cc=(9, 0), block=ck.THREADS)
    units = sorted(dump.glob("*.cu"))
    assert units, f"no translation unit dumped to {dump}"
    return kb, tuple(u.name for u in units), "\n".join(u.read_text() for u in units)


def _both_modes(kernel, argtypes, names, monkeypatch, tmp_path, *, kernel_name="kernel"):
    plain, plain_key, plain_src = _compile_in("plain", kernel, argtypes, monkeypatch, tmp_path)
    checked, checked_key, checked_src = _compile_in("checked", kernel, argtypes, monkeypatch, tmp_path)
    assert plain_key != checked_key  # the dump is named by the provider cache key
    # Unchecked kernels are what they always were: no check, no report, no call left.
    assert "cuda_coop_checked" not in plain_src
    assert_inlined(plain)
    assert not re.search(r"\btrap;", plain.ptx)
    # Checked: every run-time argument is tested, the report names the user's line.
    assert "namespace cuda_coop_checked" in checked_src
    for name in names:
        assert re.search(rf'cuda_coop_checked::\w+_failed\([^;]*"{re.escape(name)}', checked_src), name
    sites = re.findall(r'"(coop\.\w+\([^"]*\) at [^"]+)"', checked_src)
    assert sites and all(f"in {kernel_name}" in s for s in sites), sites
    assert checked.cubin[:4] == b"\x7fELF"
    # NVIDIA's contract: the report (printf), then PTX trap; no device assertion.
    assert re.search(r"\btrap;", checked.ptx) and "vprintf" in checked.ptx and "__assertfail" not in checked.ptx
    return plain_src, checked_src


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_compiles_in_both_modes(family, monkeypatch, tmp_path):
    body, names = FAMILIES[family]
    kernel = kernel_module(body).kernel
    plain_src, checked_src = _both_modes(kernel, _argtypes(numba_types()), names, monkeypatch, tmp_path)
    # A checked provider is another symbol (a call without run-time arguments keeps its
    # own); the translation units, and so their cache keys, differ anyway (_both_modes).
    symbols = lambda src: set(re.findall(r'extern "C" __device__ void (coop_\w+)\(', src))  # noqa: E731
    assert symbols(plain_src) != symbols(checked_src)


def test_histogram_compiles_in_both_modes(monkeypatch, tmp_path):
    kernel = kernel_module("""
block = coop.this_block()
t = cuda.threadIdx.x
s = coop.ThreadData(4, dtype=np.uint8)
coop.load(block, src, s)
h = coop.histogram(block, s, bins=256, bins_per_thread=2, valid_items=n)
coop.store(block, dst, h)
""").kernel
    types = numba_types()
    _both_modes(kernel, (types.uint8[::1], types.int32[::1], types.int64), ["valid_items"], monkeypatch, tmp_path)


# The kernels the GPU tests launch in a child process (tests/ops/checked_kernels.py).
GPU_KERNELS = {
    "load_kernel": ["valid_items"],
    "store_kernel": ["valid_items"],
    "reduce_kernel": ["valid_items"],
    "scan_kernel": ["valid_items"],
    "shuffle_kernel": ["distance"],
    "topk_kernel": ["k"],
    "merge_sort_kernel": ["valid_items"],
    "neighbors_kernel": ["valid_items"],
    "radix_kernel": ["begin_bit"],
}


@pytest.mark.parametrize("name", sorted(GPU_KERNELS))
def test_gpu_test_kernels_compile_in_both_modes(name, monkeypatch, tmp_path):
    types = numba_types()
    _both_modes(getattr(ck, name), _argtypes(types), GPU_KERNELS[name], monkeypatch, tmp_path, kernel_name=name)


def test_gpu_run_length_kernel_compiles_in_both_modes(monkeypatch, tmp_path):
    types = numba_types()
    argtypes = (types.int32[::1], types.int32[::1], types.int32[::1], types.int64[::1])
    _, src = _both_modes(ck.run_length_kernel, argtypes, ["total decoded size", "run_lengths"], monkeypatch,
                         tmp_path, kernel_name="run_length_kernel")
    assert "the room in destination" in src


def test_a_failed_check_does_not_return(monkeypatch, tmp_path):
    """The report of a failed check ends the launch (``[[noreturn]]``), so the compiler knows
    the checked range after it: in a tile loop whose load and store take the same count, the
    store's check folds into the load's, and the checked kernel keeps about the unchecked
    one's registers (issue #31's one-block running scan ran at 0.95 of CUB with a returning
    report: 52 registers against 32)."""
    kernel = kernel_module("""
block = coop.this_block()
items = coop.ThreadData(4, dtype=np.int32)
tile = cuda.blockDim.x * 4
for start in range(0, n, tile):
    valid = min(n - start, tile)
    coop.load(block, src, items, offset=start, valid_items=valid, oob_default=0)
    coop.store(block, dst, items, offset=start, valid_items=valid)
""").kernel
    types = numba_types()
    plain, _, _ = _compile_in("plain", kernel, _argtypes(types), monkeypatch, tmp_path)
    checked, _, _ = _compile_in("checked", kernel, _argtypes(types), monkeypatch, tmp_path)
    reports = re.findall(r"call[^;]*cuda_coop_checked\w*_failed", checked.ptx)
    # One report call left per provider unit at most (numba-cuda-mlir: one unit, one call;
    # classic numba-cuda: one unit per call); a returning report left six.
    assert len(reports) <= 2, reports
    # A returning report kept the loop's state alive across its call: +27 registers
    # (numba-cuda-mlir), +14 (classic numba-cuda); now +4 and -6.
    assert checked.registers <= plain.registers + 6, (checked.registers, plain.registers)
