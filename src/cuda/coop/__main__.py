"""``python -m cuda.coop``: what cuda-coop finds on this machine, for bug reports.

Prints the cuda-coop version, the compiler backend, NVRTC, nvJitLink, the CCCL and CUDA
headers (paths and how each was found), the provider cache, the ``CUDA_COOP_*``
variables in effect and the GPU.  Anything missing is reported, never raised.
``--json`` prints the same as one JSON object.

``python -m cuda.coop demo`` compiles a real cooperative kernel and describes it (and, with
a GPU, runs and times it): see ``cuda/coop/_demo``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

__all__ = ["collect", "main"]


def _error(exc) -> str:
    text = " ".join(str(exc).replace("Error at driver init:", "").split()).strip(" :")
    return f"{type(exc).__name__}: {text}"


def _backend() -> dict:
    try:
        import numba_cuda_mlir
    except ImportError as exc:
        return {"name": "numba-cuda-mlir", "version": None,
                "missing": f"not installed ({exc}); pip install 'cuda-coop[cu13]' (or [cu12])"}
    info = {"name": "numba-cuda-mlir", "version": getattr(numba_cuda_mlir, "__version__", "?")}
    try:
        from .backends.numba_mlir._compat import SUPPORTED_TEXT
        info["supported"] = SUPPORTED_TEXT
    except Exception as exc:  # noqa: BLE001  (an unsupported version raises at import)
        info["problem"] = _error(exc)
    return info


def _toolchain() -> dict:
    try:
        from .core.toolchain import toolchain

        t = toolchain()
    except Exception as exc:  # noqa: BLE001  (missing wheels, mismatched toolkits: report, do not raise)
        return {"missing": _error(exc)}
    dotted = ".".join
    return {
        "nvrtc": {"version": dotted(map(str, t.nvrtc_version)), "path": t.nvrtc_path},
        "nvjitlink": {"version": dotted(map(str, t.nvjitlink_version)), "path": t.nvjitlink_path},
        "cccl": {"version": t.cccl_version_str, "include_dirs": list(t.cccl_include_dirs),
                 "found_via": t.cccl_found_via},
        "cuda_headers": {"version": dotted(map(str, t.cudart_version)), "path": t.cuda_include_dir},
        "shared_addresses": _shared_addresses(),
    }


def _shared_addresses() -> dict:
    """How linked kernels address shared memory (core/shared_addresses.py), for sm_90: the
    families that ask for 32-bit addresses, and the others."""
    from .core.shared_addresses import status

    return {"radix_sort_and_topk": status(True), "other_kernels": status(False)}


def _cache() -> dict:
    from . import _env
    from .core.cache import ProviderCache

    directory = ProviderCache.directory()
    entries, size = 0, 0
    if directory.is_dir():  # not created just for a report
        try:
            entries = ProviderCache.count_entries()
        except ImportError:
            # cuda.core (the disk layer) is missing with the toolkit: count the entry files.
            entries = sum(1 for path in (directory / "entries").rglob("*") if path.is_file())
        except OSError:
            pass
        for path in directory.rglob("*"):  # entries and in-flight temporaries: what counts against the limit
            try:
                if path.is_file():
                    size += path.stat().st_size
            except OSError:
                pass
    limit = _env.cache_max_bytes()
    return {"enabled": _env.cache_enabled(), "directory": str(directory), "entries": entries,
            "bytes": size, "limit_bytes": limit}


def _environment() -> dict:
    from . import _env

    return {name: os.environ[name] for name in _env.ENV if name in os.environ}


def _gpu() -> dict:
    try:
        from numba_cuda_mlir import cuda
    except ImportError:
        return {"devices": [], "reason": "numba-cuda-mlir is not installed"}
    try:
        if not cuda.is_available():
            reason = "no CUDA driver or device"
            try:
                cuda.get_current_device()  # raises the driver's reason
            except Exception as exc:  # noqa: BLE001
                reason = _error(exc)
            return {"devices": [], "reason": reason}
        devices = []
        for dev in cuda.gpus:
            devices.append({"id": dev.id, "name": _text(dev.name), "cc": list(dev.compute_capability)})
        return {"devices": devices}
    except Exception as exc:  # noqa: BLE001  (driver errors have many types)
        return {"devices": [], "reason": _error(exc)}


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def collect() -> dict:
    """Everything ``python -m cuda.coop`` reports, as a JSON-serializable dict."""
    from ._version import __version__

    return {
        "cuda_coop": {"version": __version__, "path": os.path.dirname(os.path.abspath(__file__))},
        "python": sys.version.split()[0],
        "backend": _backend(),
        "toolchain": _toolchain(),
        "cache": _cache(),
        "environment": _environment(),
        "gpu": _gpu(),
    }


def _mb(n) -> str:
    return f"{n / 2**20:.1f} MB"


def render(info: dict) -> str:
    lines = [f"cuda-coop {info['cuda_coop']['version']} ({info['cuda_coop']['path']})",
             f"python {info['python']}"]
    b = info["backend"]
    if b.get("version") is None:
        lines.append(f"backend: {b['name']}: missing, {b['missing']}")
    else:
        extra = f" (supported {b['supported']})" if "supported" in b else f" ({b.get('problem', '')})"
        lines.append(f"backend: {b['name']} {b['version']}{extra}")
    t = info["toolchain"]
    if "missing" in t:
        lines.append(f"toolchain: missing, {t['missing']}")
    else:
        lines += [f"NVRTC {t['nvrtc']['version']}: {t['nvrtc']['path']}",
                  f"nvJitLink {t['nvjitlink']['version']}: {t['nvjitlink']['path']}",
                  (f"CCCL {t['cccl']['version']}: {', '.join(t['cccl']['include_dirs'])} "
                   f"(found via {t['cccl']['found_via']})"),
                  f"CUDA headers {t['cuda_headers']['version']}: {t['cuda_headers']['path']}",
                  (f"shared-memory addresses (sm_90): {t['shared_addresses']['radix_sort_and_topk']} in radix "
                   f"sort and TopK kernels, {t['shared_addresses']['other_kernels']} in others")]
    c = info["cache"]
    limit = "no limit" if c["limit_bytes"] is None else _mb(c["limit_bytes"])
    lines.append(f"provider cache: {c['directory']} ({'on' if c['enabled'] else 'off'}): "
                 f"{c['entries']} entries, {_mb(c['bytes'])} of {limit} (CUDA_COOP_CACHE_MAX_MB)")
    env = info["environment"]
    lines.append("environment: " + (", ".join(f"{k}={v}" for k, v in env.items()) or "no CUDA_COOP_* variables set"))
    g = info["gpu"]
    if g["devices"]:
        lines += [f"GPU {d['id']}: {d['name']} (cc {d['cc'][0]}.{d['cc'][1]})" for d in g["devices"]]
    else:
        lines.append(f"GPU: none ({g['reason']})")
    return "\n".join(lines)


# --help is read in a terminal: plain text, not the RST of the docstring above.
_DESCRIPTION = """\
Without a command: print what cuda-coop finds on this machine (its version, numba-cuda-mlir's,
NVRTC, nvJitLink, the CCCL and CUDA headers, the provider cache, the CUDA_COOP_* variables
and the GPU), for bug reports.  Anything missing is reported, not raised."""

_EPILOG = """\
first steps: python -m cuda.coop demo compiles the README's kernel and describes it (no GPU
needed); python -m cuda.coop demo --help lists the families and options."""


def main(argv=None) -> int:
    from . import _demo

    parser = argparse.ArgumentParser(prog="python -m cuda.coop", description=_DESCRIPTION, epilog=_EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    commands = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND")
    demo_parser = _demo.add_parser(commands)
    args = parser.parse_args(argv)
    if args.command == "demo":
        return _demo.main(args, demo_parser, _gpu)
    info = collect()
    print(json.dumps(info, indent=2) if args.json else render(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
