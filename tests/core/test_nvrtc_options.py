"""NVRTC options chosen for compile latency (issue #15) keep the generated code the same."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

UNROLL = "-D_CCCL_META_UNROLL_LIMIT=10"


@pytest.mark.unit
def test_unroll_limit_is_an_option_and_so_part_of_the_cache_key():
    from cuda.coop.core.build import NVRTC_OPTIONS

    # build_providers hashes every NVRTC_OPTIONS entry into the provider key, so entries
    # compiled before the option existed are never reused for code compiled with it.
    assert UNROLL in NVRTC_OPTIONS


@pytest.mark.compile
def test_cccl_still_reads_the_unroll_limit():
    """The option only helps while libcu++'s type-list header takes the limit from outside;
    if CCCL renames or drops the macro, this fails and the cost must be measured again."""
    from cuda.coop.core.toolchain import toolchain

    header = next((Path(d) / "cuda/std/__type_traits/type_list.h" for d in toolchain().include_dirs
                   if (Path(d) / "cuda/std/__type_traits/type_list.h").is_file()), None)
    assert header is not None, f"no cuda/std/__type_traits/type_list.h under {toolchain().include_dirs}"
    text = header.read_text()
    assert re.search(r"#\s*if\s+!\s*defined\(_CCCL_META_UNROLL_LIMIT\)", text), header
    assert "_CCCL_PP_REPEAT_REVERSE(_CCCL_META_UNROLL_LIMIT" in text, header


def _providers():
    from cuda.coop.core import spec
    from cuda.coop.core.cpp import make_provider
    from cuda.coop.ops.load_store import plan_load, plan_store
    from cuda.coop.ops.merge_sort import plan_merge_sort_keys
    from cuda.coop.ops.radix import plan_radix_sort_keys
    from cuda.coop.ops.reduce import plan_sum
    from cuda.coop.ops.scan import plan_exclusive_sum

    launch = spec.LaunchFacts(block=(128, 1, 1), cc=(9, 0))
    block = spec.GroupArg("block")
    i32, f32 = np.dtype("int32"), np.dtype("float32")
    plans = [
        plan_load(block, spec.ArrayArg(i32, 1, True), spec.PayloadArg(None, 4),
                  algorithm=spec.StringArg("warp_transpose")),
        plan_store(block, spec.ArrayArg(i32, 1, True), spec.PayloadArg(i32, 4),
                   algorithm=spec.StringArg("transpose")),
        plan_sum(block, spec.PayloadArg(f32, 4)),
        plan_exclusive_sum(block, spec.PayloadArg(i32, 4)),
        plan_radix_sort_keys(block, spec.PayloadArg(np.dtype("uint32"), 4)),
        plan_merge_sort_keys(block, spec.PayloadArg(f32, 4)),
    ]
    return [make_provider(p, launch) for p in plans]


@pytest.mark.compile
def test_unroll_limit_leaves_the_ltoir_unchanged():
    """The same translation unit (every family's headers, six families' providers) gives
    byte-identical LTO-IR with and without the limit: it changes how libcu++ unrolls its
    type computations, not what they compute."""
    from cuda.coop.core.build import NVRTC_OPTIONS, _nvrtc_compile
    from cuda.coop.core.cpp import render_translation_unit
    from cuda.coop.core.toolchain import toolchain
    from cuda.coop.ops._registry import all_headers

    source = render_translation_unit(_providers(), headers=all_headers())
    base = [o for o in NVRTC_OPTIONS if o != UNROLL]
    rest = ["-arch=sm_90", *[f"-I{d}" for d in toolchain().include_dirs]]
    without = _nvrtc_compile(source, [*base, *rest], "unroll")
    with_limit = _nvrtc_compile(source, [*base, UNROLL, *rest], "unroll")  # the same program name: it is in the LTO-IR
    assert len(without) > 10_000
    assert with_limit == without


NVFP8_OFF = ("-DCCCL_DISABLE_NVFP8_SUPPORT", "-D_CCCL_DISABLE_NVFP8_SUPPORT")


def _ptx(source, options, stand_ins=()):
    """``source`` compiled to PTX; ``stand_ins``: the ``(name, source)`` headers that replace
    CCCL's (none: CCCL's own headers)."""
    from cuda.bindings import nvrtc

    from cuda.coop.core.cpp import COMPAT_HEADER_NAME, COMPAT_HEADER_SOURCE

    headers = ((COMPAT_HEADER_NAME, COMPAT_HEADER_SOURCE), *stand_ins)
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"ptx_compare.cu", len(headers),
                                         [text.encode() for _, text in headers],
                                         [name.encode() for name, _ in headers])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    try:
        (result,) = nvrtc.nvrtcCompileProgram(prog, len(options), [o.encode() for o in options])
        assert result == nvrtc.nvrtcResult.NVRTC_SUCCESS, result
        err, size = nvrtc.nvrtcGetPTXSize(prog)
        buffer = b" " * size
        nvrtc.nvrtcGetPTX(prog, buffer)
        return buffer.rstrip(b"\0").decode().splitlines()
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _ptx_with_and_without(source, base, switch, names):
    """``source`` compiled to PTX with ``base`` options, then with ``switch`` added; each as
    (the lines that match none of ``names``, the lines that match one).  PTX rather than
    LTO-IR (-dlto), which is bitcode and cannot be compared line by line."""
    from cuda.coop.core.toolchain import toolchain

    rest = ["-arch=sm_90", *[f"-I{d}" for d in toolchain().include_dirs]]
    base = [o for o in base if o != "-dlto"]
    pattern = re.compile(names)

    def split(ptx):
        return ([line for line in ptx if not pattern.search(line)], [line for line in ptx if pattern.search(line)])

    return split(_ptx(source, [*base, *rest])), split(_ptx(source, [*base, *switch, *rest]))


@pytest.mark.compile
def test_nvfp8_off_removes_only_the_8_bit_float_constants():
    """Every family's headers and six families' providers compiled to PTX with and without
    the NVFP8 macros: the lines that differ are all numeric_limits / trait constants of the
    8-, 6- and 4-bit float types, and the macros removed some (so they still act)."""
    from cuda.coop.core.build import NVRTC_OPTIONS
    from cuda.coop.core.cpp import render_translation_unit
    from cuda.coop.ops._registry import all_headers

    assert set(NVFP8_OFF) <= set(NVRTC_OPTIONS)
    source = render_translation_unit(_providers(), headers=all_headers())
    (rest_with, fp8_with), (rest_without, fp8_without) = _ptx_with_and_without(
        source, [o for o in NVRTC_OPTIONS if o not in NVFP8_OFF], NVFP8_OFF, r"__nv_fp[864]|fp8|fp6|fp4")
    assert rest_with == rest_without
    # CCCL 3 drops them all; CCCL 2.8's CUB includes cuda_fp8.h with bfloat16 whatever the
    # macro, so only libcu++'s share goes there.
    assert len(fp8_without) < len(fp8_with), "the macros removed nothing: did CCCL rename them?"


@pytest.mark.compile
def test_the_pinned_cccl_skips_unused_ptx_wrappers_by_their_guards():
    """Each skipped wrapper still exists under the guard its define names: a renamed guard
    would make the define do nothing (the compile-latency gain lost without a sign), and a
    CCCL outside PTX_WRAPPERS_SKIPPED_FOR (new pins) must have its headers read again."""
    from cuda.coop.core.build import UNUSED_PTX_WRAPPERS, skipped_ptx_wrappers
    from cuda.coop.core.toolchain import toolchain

    tc = toolchain()
    assert skipped_ptx_wrappers(tc.cccl_version), (
        f"CCCL {tc.cccl_version_str} is not in PTX_WRAPPERS_SKIPPED_FOR: read which <cuda/ptx> wrappers "
        "its CUB and libcu++ call, then add it")
    root = next(Path(d) for d in tc.include_dirs if (Path(d) / "cuda/ptx").is_file())
    for name in UNUSED_PTX_WRAPPERS:
        header = root / "cuda/__ptx/instructions" / f"{name.lower()}.h"
        if not header.is_file():  # CCCL 2.8 has no ld/st/exit/trap wrappers yet
            continue
        assert re.search(rf"#ifndef _CUDA_PTX_{name}_H_\b", header.read_text()), header
    assert skipped_ptx_wrappers((3, 9, 0)) == ()


@pytest.mark.compile
def test_skipping_unused_ptx_wrappers_leaves_the_ptx_unchanged():
    """Every family's headers and six families' providers compile with the wrappers skipped
    (so no family calls one) to the same PTX as with them."""
    from cuda.coop.core.build import NVRTC_OPTIONS, skipped_ptx_wrappers
    from cuda.coop.core.cpp import render_translation_unit
    from cuda.coop.core.toolchain import toolchain
    from cuda.coop.ops._registry import all_headers

    tc = toolchain()
    source = render_translation_unit(_providers(), headers=all_headers())
    base = [o for o in NVRTC_OPTIONS if o != "-dlto"]
    rest = ["-arch=sm_90", *[f"-I{d}" for d in tc.include_dirs]]
    with_wrappers = _ptx(source, [*base, *rest])
    without = _ptx(source, [*base, *skipped_ptx_wrappers(tc.cccl_version), *rest])
    assert len(with_wrappers) > 1000
    assert without == with_wrappers


@pytest.mark.unit
def test_bfloat16_is_compiled_out_only_where_the_unit_never_names_it():
    from cuda.coop._dtypes import _CXX
    from cuda.coop.core.build import BF16_CXX_NAME, BF16_OFF, _options, unused_type_options

    assert BF16_CXX_NAME == _CXX["bfloat16"]
    assert unused_type_options("using T = float;") == BF16_OFF
    assert unused_type_options("using T = __nv_bfloat16;") == ()
    assert unused_type_options("__nv_bfloat162 pair;") == ()
    assert unused_type_options(None) == ()
    assert set(BF16_OFF) <= set(_options("sm_90", (), (3, 0, 1), "using T = int;"))
    assert not set(BF16_OFF) & set(_options("sm_90", (), (3, 0, 1), "using T = __nv_bfloat16;"))


@pytest.mark.compile
def test_cccl_still_reads_the_bfloat16_switch():
    """BF16_OFF only saves time while libcu++ asks for the macro before including cuda_bf16.h;
    a renamed macro would leave bfloat16 compiled in without a sign."""
    from cuda.coop.core.build import BF16_OFF
    from cuda.coop.core.toolchain import toolchain

    macro = BF16_OFF[0].removeprefix("-D")
    header = next((Path(d) / "cuda/std/__cccl/extended_data_types.h" for d in toolchain().include_dirs
                   if (Path(d) / "cuda/std/__cccl/extended_data_types.h").is_file()), None)
    assert header is not None
    assert f"!defined({macro})" in header.read_text(), header


@pytest.mark.compile
def test_bfloat16_off_removes_only_the_bfloat16_constants():
    """A unit without bfloat16 (every family's headers, six families' providers and three
    float16 ones; the float16 scan's thread reduction takes CUB's SIMD path, which the
    bfloat16 switch also steers) compiles to the same PTX with bfloat16 off, but for the
    numeric_limits and CUB trait constants of bfloat16 (and, under CCCL 2.8, of the 8-bit
    floats whose traits CUB guards with bfloat16)."""
    from cuda.coop.core import spec
    from cuda.coop.core.build import BF16_CXX_NAME, BF16_OFF, NVRTC_OPTIONS
    from cuda.coop.core.cpp import make_provider, render_translation_unit
    from cuda.coop.ops._registry import all_headers
    from cuda.coop.ops.radix import plan_radix_sort_keys
    from cuda.coop.ops.reduce import plan_sum
    from cuda.coop.ops.scan import plan_exclusive_sum

    launch = spec.LaunchFacts(block=(128, 1, 1), cc=(9, 0))
    f16 = np.dtype("float16")
    halves = [make_provider(plan, launch) for plan in (
        plan_sum(spec.GroupArg("block"), spec.PayloadArg(f16, 8)),
        plan_exclusive_sum(spec.GroupArg("block"), spec.PayloadArg(f16, 4)),
        plan_radix_sort_keys(spec.GroupArg("block"), spec.PayloadArg(f16, 4)))]
    source = render_translation_unit([*_providers(), *halves], headers=all_headers())
    assert BF16_CXX_NAME not in source
    (rest_with, bf16_with), (rest_without, bf16_without) = _ptx_with_and_without(
        source, NVRTC_OPTIONS, BF16_OFF, r"__nv_bfloat16|__nv_fp[864]")
    assert rest_with == rest_without
    assert any("f16x2" in line for line in rest_with), "the float16 scan no longer takes the SIMD path"
    assert not any("__nv_bfloat16" in line for line in bf16_without)
    assert len(bf16_without) < len(bf16_with), "the macro removed nothing: did CCCL rename it?"


# What the stand-in for thrust/iterator/discard_iterator.h may drop from a unit's PTX: global
# constants that the real header's includes instantiate and no code uses (libcu++'s
# numeric_limits and integral_constant members under CCCL 2.8, thrust's sequential
# execution policy object under 3.0).  Data declarations only: never a function's line.
UNUSED_CONSTANTS = re.compile(r"^(\.weak )?\.global \.align \d+ \.[bsu]\d+ [\w$]+(\[\d+\])?( = [^;]+)?;$")


@pytest.mark.compile
def test_cccl_still_includes_the_discard_iterator_for_one_trait():
    """The stand-in pays only while CUB's util_type.cuh includes thrust's discard_iterator
    header, and is right only while it names nothing of it but ``value_type``: if CCCL
    changes that, this fails and the stand-in must be read and measured again."""
    from cuda.coop.core.build import header_stand_ins
    from cuda.coop.core.toolchain import toolchain

    tc = toolchain()
    assert header_stand_ins(tc.cccl_version), f"no stand-in for the pinned CCCL {tc.cccl_version}"
    header = next((Path(d) / "cub/util_type.cuh" for d in tc.include_dirs
                   if (Path(d) / "cub/util_type.cuh").is_file()), None)
    assert header is not None, f"no cub/util_type.cuh under {tc.include_dirs}"
    text = header.read_text()
    assert "#include <thrust/iterator/discard_iterator.h>" in text, header
    assert re.findall(r"discard_iterator<[^>]*>::?\w*", text) == ["discard_iterator<>::value_type"], header


@pytest.mark.compile
def test_cccl_still_includes_span_and_mdspan_for_traits_only():
    """The span and mdspan stand-ins (CCCL 3.0) pay only while CUB's detail/type_traits.cuh
    includes the two headers, and are right only while it names the class templates in
    trait specializations and nothing more: if CCCL changes that, this fails."""
    from cuda.coop.core.build import header_stand_ins
    from cuda.coop.core.toolchain import toolchain

    tc = toolchain()
    names = [name for name, _ in header_stand_ins(tc.cccl_version)]
    if "cuda/std/span" not in names:
        pytest.skip(f"CCCL {tc.cccl_version_str} has no span and mdspan stand-ins (3.0 only)")
    header = next((Path(d) / "cub/detail/type_traits.cuh" for d in tc.include_dirs
                   if (Path(d) / "cub/detail/type_traits.cuh").is_file()), None)
    assert header is not None, f"no cub/detail/type_traits.cuh under {tc.include_dirs}"
    text = header.read_text()
    assert "#include <cuda/std/mdspan>" in text and "#include <cuda/std/span>" in text, header
    uses = re.findall(r"(?:::)?cuda::std::(?:md)?span<[^>]*>", text)
    assert sorted(set(uses)) == ["::cuda::std::mdspan<T, E, L, A>", "::cuda::std::span<T, N>"], (header, uses)
    assert len(uses) == len(re.findall(r"cuda::std::(?:md)?span\b", text)) == 3, (header, uses)


@pytest.mark.compile
def test_the_header_stand_ins_leave_the_code_unchanged():
    """Every family's headers and six families' providers compiled to PTX with CCCL's
    headers and with every stand-in of this CCCL (discard_iterator; span and mdspan under
    3.0): the stand-ins' PTX is CCCL's less some unused constants, line for line in the
    same order."""
    import difflib

    from cuda.coop.core.build import NVRTC_OPTIONS, header_stand_ins, skipped_ptx_wrappers
    from cuda.coop.core.cpp import render_translation_unit
    from cuda.coop.core.toolchain import toolchain
    from cuda.coop.ops._registry import all_headers

    tc = toolchain()
    source = render_translation_unit(_providers(), headers=all_headers())
    options = [o for o in NVRTC_OPTIONS if o != "-dlto"] + list(skipped_ptx_wrappers(tc.cccl_version))
    options += ["-arch=sm_90", *[f"-I{d}" for d in tc.include_dirs]]
    real = _ptx(source, options)
    stand_in = _ptx(source, options, header_stand_ins(tc.cccl_version))
    assert len(real) > 1000
    changed = [line for line in difflib.unified_diff(real, stand_in, lineterm="", n=0)
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert all(line.startswith("-") for line in changed), [line for line in changed if line.startswith("+")][:5]
    assert all(UNUSED_CONSTANTS.search(line[1:]) for line in changed), \
        [line for line in changed if not UNUSED_CONSTANTS.search(line[1:])][:5]
