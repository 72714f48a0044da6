"""``python -m cuda.coop demo``: compile one real cooperative kernel and describe it.

With no arguments and no GPU it compiles the README's tile sum for sm_90 (the GPU's own
architecture where there is one) and prints the kernel's source, its registers, shared
memory, cubin and SASS size, the compile time and the CCCL, NVRTC and numba-cuda-mlir in
use; with a GPU it also runs the kernel on random data, checks the result against NumPy
and prints the time per launch.  ``--family NAME`` picks another family's kernel,
``--all`` compiles one kernel of every family.

This module only builds the command line: ``python -m cuda.coop`` without a command (the
environment report) and ``--help`` must not import the compiler.  ``kernels.py`` holds the
kernels, ``command.py`` compiles, runs and prints them.
"""

from __future__ import annotations

import argparse
import textwrap

__all__ = ["FAMILIES", "DEFAULT_FAMILY", "add_parser", "main"]

# The order of kernels.DEMOS, which the tests keep equal to this tuple and to the registry's
# families; spelled out here so that --help and the --family check need no compiler import.
FAMILIES = ("reduce", "load_store", "scan", "exchange", "shuffle", "merge_sort", "radix", "topk",
            "neighbors", "histogram", "run_length")
DEFAULT_FAMILY = "reduce"

DESCRIPTION = """\
Compile one small, real cooperative kernel for the installed toolkit and describe it: its
Python source, target architecture, block shape, registers, shared memory, whether every
CUB call was inlined, cubin and SASS size, compile time, and the CCCL, NVRTC and
numba-cuda-mlir in use.  No GPU is needed.  With a GPU the kernel also runs on seeded
random data, is checked against NumPy (exit status 1 on a mismatch) and is timed with CUDA
events."""

EPILOG = textwrap.fill(f"families: {', '.join(FAMILIES)} (default: {DEFAULT_FAMILY}, the README's "
                       "tile sum).", 88) + """
exit status: 0 compiled (and, with a GPU, matched NumPy); 1 a compile failed or a result
differed; 2 a wrong argument."""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``demo`` command to ``python -m cuda.coop``'s subparsers."""
    parser = subparsers.add_parser(
        "demo", help="compile (and, with a GPU, run and time) a cooperative kernel of one family",
        description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--family", metavar="NAME", default=DEFAULT_FAMILY,
                       help=f"the family whose kernel to compile (default: {DEFAULT_FAMILY})")
    which.add_argument("--all", action="store_true",
                       help="compile (and run) one kernel of every family, with a progress line")
    arch = parser.add_mutually_exclusive_group()
    arch.add_argument("--arch", metavar="sm_XX",
                      help="target architecture, e.g. sm_80 (default: the GPU's, else sm_90)")
    arch.add_argument("--cc", metavar="X.Y", help="the same as a compute capability, e.g. 8.0")
    parser.add_argument("--items-per-thread", type=int, default=4, metavar="N",
                        help="items each thread holds; the kernels are specialized on it (default: 4)")
    parser.add_argument("--blocks", type=int, default=1024, metavar="N",
                        help="blocks of the GPU run (default: 1024 blocks of 128 threads)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the run's random data (default: 0)")
    parser.add_argument("--sass", action="store_true", help="also print the SASS (needs nvdisasm: the sass extra)")
    # The top-level --json also applies: `python -m cuda.coop --json demo` and `demo --json` agree.
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print one JSON object instead of text")
    parser.add_argument("--verbose", action="store_true",
                        help="print the full traceback of a failure")
    return parser


def main(args, parser, probe_gpu) -> int:
    """Run the demo command for parsed ``args``; ``probe_gpu()`` is the environment report's GPU
    probe (its ``devices`` and the ``reason`` there are none)."""
    from .command import run

    return run(args, parser, probe_gpu)
