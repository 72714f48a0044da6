"""Assert that cuda-coop, in this environment, finds the toolkit pinned for a CUDA major.

    python ci/check_headers.py --cuda 12     # pixi task check-headers, ci/test_matrix.sh

Prints what cuda.coop.core.toolchain resolved (NVRTC, nvJitLink, CCCL headers and where
they were found) and fails unless NVRTC and nvJitLink are the table's toolkit minor and
the CCCL headers are the table's CCCL release. Catches the system-CUDA fallback: a CUDA 12
environment that lost its CCCL package finds /usr/local/cuda-13.0's CCCL 3.x instead.
Needs no GPU. Standard library + cuda-coop only.
"""

from __future__ import annotations

import argparse

from pinlib import Report, load_pins, main_guard, version_tuple


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cuda", type=int, required=True, choices=(12, 13), help="CUDA major of this environment")
    args = ap.parse_args()
    row = load_pins()[args.cuda]
    rep = Report(f"headers-cu{args.cuda}")
    from cuda.coop.core.toolchain import toolchain

    try:
        tc = toolchain()
    except Exception as exc:  # ToolkitMismatchError, HeaderResolutionError, a missing library
        rep.check(False, "toolchain resolves", f"{type(exc).__name__}: {exc}")
        return rep.finish()
    print(f"toolchain cu{args.cuda}: {tc.describe()}", flush=True)
    minor = version_tuple(row["cuda_version"])
    rep.equal("NVRTC version", tc.nvrtc_version[:2], minor)
    rep.equal("nvJitLink version", tc.nvjitlink_version[:2], minor)
    rep.equal("CCCL version", tc.cccl_version_str, row["cccl"])
    return rep.finish()


if __name__ == "__main__":
    main_guard(main)
