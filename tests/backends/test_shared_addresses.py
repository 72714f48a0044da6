"""32-bit shared-memory addresses in a kernel that calls cuda.coop (core/shared_addresses.py,
backends/_final_link.py): the layout module nvJitLink puts first narrows every shared access
of the linked kernel to a 32-bit address, as nvcc's code has, which is what brings a CUB
block radix sort to nvcc's register count.  By default only kernels of the families that
run faster with it (radix sort, TopK) get it; CUDA_COOP_SHARED_ADDRESS_BITS=32 or 64 gives
it to every cuda.coop kernel or to none; a kernel without cuda.coop links as before.

Real NVRTC, libNVVM and nvJitLink throughout, with the run's compiler (tests/compiler.py).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ..compiler import compile_cubin, cuda, require

require()

from cuda import coop  # noqa: E402
from ..kernelgen import module_from_source  # noqa: E402
from ..ops.radix_kernels import TILE_SORT  # noqa: E402
from cuda.coop.core import shared_addresses  # noqa: E402
from cuda.coop.core.toolchain import nvrtc_architectures  # noqa: E402

# A shared-memory load or store through a 64-bit register (%rd) or a 32-bit one (%r).
WIDE = re.compile(r"\b(?:ld|st|atom|red)\.shared(?:::cta)?\.[^\n]*\[%rd\d+")
NARROW = re.compile(r"\b(?:ld|st|atom|red)\.shared(?:::cta)?\.[^\n]*\[%r\d+")

pytestmark = pytest.mark.compile


@pytest.fixture
def fresh_links(isolated_cache, monkeypatch):
    """No link cache between the compiles of one test; the variable unset."""
    monkeypatch.setenv("CUDA_COOP_CACHE", "0")
    monkeypatch.delenv("CUDA_COOP_SHARED_ADDRESS_BITS", raising=False)


def _sort_binary():
    keys = np.zeros(2048, np.uint32)
    kernel = module_from_source(TILE_SORT.format(decorator="")).kernel
    return compile_cubin(kernel, [keys, keys, 16], cc=(9, 0), block=128)


def test_a_coop_kernel_addresses_shared_memory_with_32_bits(fresh_links):
    binary = _sort_binary()
    assert NARROW.search(binary.ptx), "no shared-memory access found in the linked PTX"
    assert not WIDE.search(binary.ptx), WIDE.search(binary.ptx).group(0)
    # nvcc 13.0 -O3 gives the same CUB sort 75 registers on sm_90; 80 is what six
    # 128-thread blocks per SM allow.  With 64-bit addresses it took 91.
    assert binary.registers <= 80, binary.summary()


def _reduce_binary():
    @cuda.jit
    def tile_sums(source, destination, items_per_thread):
        block = coop.this_block()
        items = coop.ThreadData(items_per_thread)
        coop.load(block, source, items, offset=cuda.blockIdx.x * 512, algorithm="transpose")
        total = coop.sum(block, items)
        if cuda.threadIdx.x == 0:
            destination[cuda.blockIdx.x] = total

    values = np.zeros(2048, np.int32)
    return compile_cubin(tile_sums, [values, values, 4], cc=(9, 0), block=128)


def test_other_families_keep_64_bits_unless_asked(fresh_links, monkeypatch):
    assert WIDE.search(_reduce_binary().ptx)
    monkeypatch.setenv("CUDA_COOP_SHARED_ADDRESS_BITS", "32")
    narrow = _reduce_binary()
    assert NARROW.search(narrow.ptx) and not WIDE.search(narrow.ptx)
    assert shared_addresses.status(False) == "32-bit, as nvcc (CUDA_COOP_SHARED_ADDRESS_BITS=32)"


def test_64_bits_when_asked(fresh_links, monkeypatch):
    narrow = _sort_binary()
    monkeypatch.setenv("CUDA_COOP_SHARED_ADDRESS_BITS", "64")
    wide = _sort_binary()
    assert WIDE.search(wide.ptx) and not NARROW.search(wide.ptx)
    assert wide.registers > narrow.registers, (wide.summary(), narrow.summary())
    assert shared_addresses.status(True) == "64-bit (CUDA_COOP_SHARED_ADDRESS_BITS=64)"


def test_the_default_and_a_typo_are_auto(fresh_links, monkeypatch):
    assert shared_addresses.status(True) == "32-bit, as nvcc (CUDA_COOP_SHARED_ADDRESS_BITS=auto)"
    assert shared_addresses.status(False) == "64-bit (CUDA_COOP_SHARED_ADDRESS_BITS=auto)"
    monkeypatch.setenv("CUDA_COOP_SHARED_ADDRESS_BITS", "sixty-four")
    assert shared_addresses.wants_32_bits(True) and not shared_addresses.wants_32_bits(False)


def test_the_radix_and_topk_families_ask_for_32_bits():
    from cuda.coop.ops._families import OPERATIONS
    from cuda.coop.ops._lookup import prefers_32_bit_shared_addresses

    asking = {family for family in set(OPERATIONS.values()) if prefers_32_bit_shared_addresses(family)}
    assert asking == {"radix", "topk"}


def test_a_kernel_without_coop_links_as_the_compiler_links_it(fresh_links):
    @cuda.jit
    def reverse_in_shared(source, destination):
        staged = cuda.shared.array(128, np.int32)
        staged[cuda.threadIdx.x] = source[cuda.threadIdx.x]
        cuda.syncthreads()
        destination[cuda.threadIdx.x] = staged[127 - cuda.threadIdx.x]

    _sort_binary()  # a provider compiled in this process: the final link is wrapped and armed
    values = np.zeros(128, np.int32)
    binary = compile_cubin(reverse_in_shared, [values, values], cc=(9, 0), block=128)
    assert WIDE.search(binary.ptx), "the compiler's own 64-bit shared addresses"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_90a", "sm_100", "sm_120"])
def test_the_layout_module_links_with_nvrtc_code(arch):
    """NVRTC's LTO-IR of a CUDA C++ kernel, linked by nvJitLink with the layout module first
    and without it: 32-bit shared addresses only with it."""
    from cuda.core import Linker, LinkerOptions, ObjectCode, Program, ProgramOptions

    if int(arch.removeprefix("sm_").rstrip("a")) not in nvrtc_architectures():
        pytest.skip(f"this toolkit's NVRTC does not compile for {arch}")
    source = """
    extern "C" __global__ void rotate(int* data, int by) {
        __shared__ int staged[256];
        staged[threadIdx.x] = data[threadIdx.x];
        __syncthreads();
        data[threadIdx.x] = staged[(threadIdx.x + by) & 255];
    }"""
    ltoir = Program(source, "c++", ProgramOptions(arch=arch, link_time_optimization=True,
                                                  relocatable_device_code=True)).compile("ltoir")
    layout = shared_addresses.layout_module(arch)
    assert layout and shared_addresses.is_layout_module(layout)
    options = LinkerOptions(arch=arch, link_time_optimization=True, ptx=True)

    def linked_ptx(*objects):
        code = Linker(*objects, options=options).link("ptx").code
        return code.decode() if isinstance(code, (bytes, bytearray)) else str(code)

    kernel = ObjectCode.from_ltoir(ltoir.code, name="rotate")
    with_layout = linked_ptx(ObjectCode.from_ltoir(layout, name=shared_addresses.LAYOUT_MODULE_NAME), kernel)
    assert NARROW.search(with_layout) and not WIDE.search(with_layout)
    assert ".entry rotate" in with_layout  # the layout module defines nothing of its own
    kernel = ObjectCode.from_ltoir(ltoir.code, name="rotate")
    assert WIDE.search(linked_ptx(kernel))


def test_a_layout_module_libnvvm_refuses_leaves_the_link_as_it_was(monkeypatch):
    from cuda.coop.backends import _final_link

    def refuse(virtual_arch):
        raise RuntimeError(f"no layout for {virtual_arch}")

    monkeypatch.setattr(shared_addresses, "_build", refuse)
    monkeypatch.setattr(shared_addresses, "_built", {})
    monkeypatch.setattr(shared_addresses, "_failures", {})
    monkeypatch.delenv("CUDA_COOP_SHARED_ADDRESS_BITS", raising=False)
    assert shared_addresses.layout_module("sm_90") is None
    assert shared_addresses.status(True, "sm_90") == ("64-bit (libNVVM could not build the layout module: "
                                                           "RuntimeError: no layout for compute_90)")

    class Options:
        link_time_optimization = True
        arch = "sm_90"

    class Kernel:
        name, code_type, code = "kernel", "ltoir", b"kernel"

    class Provider:
        name, code_type, code = "provider", "ltoir", b"a radix sort provider"

    _final_link.note_provider_ltoir(Provider.code, prefers_32_bit_addresses=True)
    objects = [Kernel(), Provider()]
    assert _final_link.with_shared_address_layout(objects, Options()) is objects


def test_the_link_key_keeps_the_layout_module_and_the_kernel_in_place(fresh_links):
    from cuda.coop.backends._final_link import link_key

    layout = shared_addresses.layout_module("sm_90")
    kernel, first, second = (("kernel", "ltoir", b"kernel"), ("a", "ltoir", b"provider a"),
                             ("b", "ltoir", b"provider b"))
    laid_out = ("layout", "ltoir", layout)
    assert link_key([laid_out, kernel, first, second], "o") == link_key([laid_out, kernel, second, first], "o")
    assert link_key([laid_out, kernel, first, second], "o") != link_key([laid_out, first, kernel, second], "o")
    assert link_key([laid_out, kernel, first], "o") != link_key([kernel, first], "o")
