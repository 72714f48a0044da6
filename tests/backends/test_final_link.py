"""The link cache (backends/_final_link.py): a kernel that calls cuda.coop, compiled again by a
new process, gets the cubin an earlier process linked; nothing else is cached.

Each scenario runs real compiles (numba's front end, NVRTC, nvJitLink) in fresh processes
over a private cache directory, with the run's compiler (tests/compiler.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ..compiler import CHILD_ENV, CUDA_IMPORT, NAME, require

require()

ROOT = Path(__file__).resolve().parents[2]
QUALIFIED = {"numba-cuda-mlir": "cuda.coop.numba_mlir", "numba-cuda": "cuda.coop.numba_cuda"}

# Two families, so two providers: classic numba-cuda links them in set order.
KERNEL = """
@cuda.jit
def tile_sums(src, dst):
    block = coop.this_block()
    items = coop.ThreadData(2)
    coop.load(block, src, items, offset=cuda.blockIdx.x * 256, algorithm="transpose")
    total = coop.sum(block, items)
    if cuda.threadIdx.x == 0:
        dst[cuda.blockIdx.x] = total
"""

SCRIPT = textwrap.dedent("""
    import hashlib, json, sys
    import numpy as np
    {cuda_import}
    from cuda import coop
    from {qualified} import compile_cubin
    from cuda.coop.core.cache import link_cache

    {kernel}
    @cuda.jit
    def copy_without_coop(src, dst):
        i = cuda.grid(1)
        if i < src.size:
            dst[i] = src[i]

    args = (np.zeros(1, np.int32), np.zeros(1, np.int32))
    coop_binary = compile_cubin(tile_sums, args, cc=(9, 0), block=128)
    after_coop = link_cache().stats.as_dict()
    plain_binary = compile_cubin(copy_without_coop, args, cc=(9, 0), block=128)
    print(json.dumps({{
        "coop_sha": hashlib.sha256(bytes(coop_binary.cubin)).hexdigest(),
        "plain_sha": hashlib.sha256(bytes(plain_binary.cubin)).hexdigest(),
        "after_coop": after_coop,
        "after_plain": link_cache().stats.as_dict(),
    }}))
""").format(cuda_import=CUDA_IMPORT[NAME], qualified=QUALIFIED[NAME], kernel=KERNEL)


def _run(cache_dir: Path, **env) -> dict:
    full = dict(os.environ, CUDA_COOP_CACHE_DIR=str(cache_dir), **{CHILD_ENV: NAME}, **env)
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    if "CUDA_COOP_CACHE" not in env:
        full.pop("CUDA_COOP_CACHE", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=full,
                          timeout=600, cwd=cache_dir.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.compile
def test_a_new_process_reads_the_cubin_an_earlier_one_linked(tmp_path):
    first = _run(tmp_path / "cache")
    assert first["after_coop"]["misses"] == 1 and first["after_coop"]["writes"] == 1, first
    second = _run(tmp_path / "cache")
    assert second["after_coop"]["disk_hits"] == 1 and second["after_coop"]["writes"] == 0, second
    # The cubin read back is the one the link wrote, byte for byte.
    assert second["coop_sha"] == first["coop_sha"]
    # A kernel without cuda.coop is linked as numba links it, never looked up nor stored.
    for report in (first, second):
        assert report["after_plain"] == report["after_coop"], report
    assert second["plain_sha"] == first["plain_sha"]


@pytest.mark.compile
def test_cache_off_links_every_time(tmp_path):
    reports = [_run(tmp_path / "cache", CUDA_COOP_CACHE="0") for _ in range(2)]
    for report in reports:
        assert report["after_plain"]["disk_hits"] == report["after_plain"]["writes"] == 0, report
    assert reports[0]["coop_sha"] == reports[1]["coop_sha"]  # the link is deterministic: what makes caching it sound


@pytest.mark.unit
def test_the_key_changes_with_every_input_and_option():
    from cuda.coop.backends._final_link import link_key

    options = "LinkerOptions(arch='sm_90')"
    inputs = [("", "ltoir", b"kernel"), ("", "ltoir", b"load provider"), ("", "ltoir", b"store provider")]
    base = link_key(inputs, options)
    # The providers after the kernel are a set: classic numba-cuda adds them in any order.
    assert link_key([inputs[0], inputs[2], inputs[1]], options) == base
    changed = [
        link_key([("", "ltoir", b"kernel!")] + inputs[1:], options),         # a byte of an input
        link_key(inputs[1:2] + inputs[:1] + inputs[2:], options),            # which input is first
        link_key([("", "ptx", b"kernel")] + inputs[1:], options),            # an input's kind
        link_key(inputs, "LinkerOptions(arch='sm_100')"),                     # an option
        link_key(inputs[:2], options),                                        # an input fewer
        link_key([("", "ltoir", b"kernelload provider")] + inputs[2:], options),  # where inputs split
    ]
    assert len({base, *changed}) == 1 + len(changed)


LAUNCH_SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    {cuda_import}
    from cuda import coop
    from cuda.coop.core.cache import link_cache

    {kernel}
    src = np.random.default_rng(7).integers(-1000, 1000, 4 * 256).astype(np.int32)
    dst = np.full(4, -7, np.int32)  # poisoned
    d_src, d_dst = cuda.to_device(src), cuda.to_device(dst)
    tile_sums[4, 128](d_src, d_dst)
    cuda.synchronize()
    got = d_dst.copy_to_host()
    print(json.dumps({{"ok": bool((got == src.reshape(4, 256).sum(axis=1)).all()), "got": got.tolist(),
                      "stats": link_cache().stats.as_dict()}}))
""").format(cuda_import=CUDA_IMPORT[NAME], kernel=KERNEL)


@pytest.mark.gpu
def test_a_kernel_launched_from_a_cached_cubin_computes_the_same(tmp_path):
    """The launch path links through the same _Linker: the second process launches the
    cubin the first one linked, and both match NumPy."""
    reports = []
    for _ in range(2):
        full = dict(os.environ, CUDA_COOP_CACHE_DIR=str(tmp_path / "cache"), **{CHILD_ENV: NAME})
        full["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
        full.pop("CUDA_COOP_CACHE", None)
        proc = subprocess.run([sys.executable, "-c", LAUNCH_SCRIPT], capture_output=True, text=True, env=full,
                              timeout=600, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        reports.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert all(r["ok"] for r in reports), reports
    assert reports[0]["stats"]["writes"] == 1, reports
    assert reports[1]["stats"]["disk_hits"] == 1 and reports[1]["stats"]["writes"] == 0, reports
