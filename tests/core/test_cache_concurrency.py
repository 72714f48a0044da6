"""Real NVRTC in several processes at once over one cache directory: every process
succeeds and the directory ends with exactly one entry per translation unit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.compile

pytest.importorskip("cuda.bindings")

ROOT = Path(__file__).resolve().parents[2]

# Each worker waits for the start file, so the compiles overlap instead of queueing
# behind interpreter start-up; then it builds the same two providers and reports.
WORKER = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    start = sys.argv[1]
    while not os.path.exists(start):
        time.sleep(0.01)
    from cuda.coop.core.build import build_providers
    from cuda.coop.core.cache import provider_cache
    from cuda.coop.core.cpp import make_provider
    from cuda.coop.core import spec
    from cuda.coop.ops.load_store import plan_load
    launch = spec.LaunchFacts(block=(128, 1, 1), cc=(9, 0))
    plan = plan_load(spec.GroupArg("block"), spec.ArrayArg(np.dtype("int32"), 1, True),
                     spec.PayloadArg(None, 4), algorithm=spec.StringArg("transpose"))
    result = build_providers([make_provider(plan, launch)], "sm_90")
    print(json.dumps({"key": result.key, "cache": result.cache, "layouts": result.layouts,
                      "stats": provider_cache().stats.as_dict(), "path": str(provider_cache().path_for(result.key))}))
""")


@pytest.mark.parametrize("processes", [2, 8])
def test_processes_compiling_at_once_share_one_entry(tmp_path, processes):
    cache_dir = tmp_path / "cache"
    start = tmp_path / "start"
    env = dict(os.environ, CUDA_COOP_CACHE_DIR=str(cache_dir), CUDA_COOP_NVRTC_PCH="0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])))
    env.pop("CUDA_COOP_CACHE", None)
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(start)], env=env, cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(processes)]
    time.sleep(1.0)
    start.touch()
    reports = []
    for worker in workers:
        out, err = worker.communicate(timeout=600)
        assert worker.returncode == 0, err[-3000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    assert len({r["key"] for r in reports}) == 1
    assert len({json.dumps(r["layouts"], sort_keys=True) for r in reports}) == 1
    assert all(r["stats"]["corrupt"] == 0 for r in reports)
    entries = [str(p) for p in (cache_dir / "providers").rglob("*") if p.is_file()]
    assert entries == [reports[0]["path"]], entries  # no temporaries left either
    assert [p.name.split("-")[0] for p in (cache_dir / "notes").iterdir()] == ["compiled"]  # core/pch.py
    # And the entry is good: a fresh process reads it from disk.
    start2 = tmp_path / "start2"
    start2.touch()
    again = subprocess.run([sys.executable, "-c", WORKER, str(start2)], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout.strip().splitlines()[-1])["cache"] == "disk"
