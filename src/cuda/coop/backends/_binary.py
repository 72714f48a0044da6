"""What ``compile_cubin`` returns, on either backend: a kernel's cubin and its code.

Compiler-neutral: each backend's ``compile_cubin`` gives the cubin and a reader of its
compile result (the post-LTO PTX, the dynamic shared memory a launch reserves).
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import tempfile
import functools
from dataclasses import field
from pathlib import Path

from ..core.pch import arch_for_cc
from ..core.records import record

__all__ = ["KernelBinary", "find_nvdisasm", "dims3"]


@record
class KernelBinary:
    """What :func:`compile_cubin` returns: the cubin of one kernel specialization, and its code.

    ``cubin`` (bytes), ``cc``, ``block`` and ``name`` are fields; ``ptx`` (post-LTO),
    ``sass()``, ``shared_bytes()``, ``registers``, ``calls()`` and ``summary()`` read the
    compiled code.
    """

    cubin: bytes
    cc: tuple
    block: tuple
    name: str
    _compile_result: object = field(default=None, repr=False, compare=False)
    # The backend's reader of ``_compile_result``: ``post_lto_ptx(result)`` and
    # ``required_dynamic_shared_bytes(result)`` (a module or an object).
    _reader: object = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def ptx(self) -> str:
        """The post-LTO PTX (CUB wrappers inlined); a second link, so computed on demand."""
        return (self._reader.post_lto_ptx(self._compile_result) or "") if self._reader is not None else ""

    def sass(self) -> str:
        """The SASS of the cubin, from ``nvdisasm`` (wheel ``nvidia-cuda-nvdisasm``)."""
        tool = find_nvdisasm()
        if tool is None:
            raise FileNotFoundError("nvdisasm not found; pip install nvidia-cuda-nvdisasm")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "kernel.cubin"
            path.write_bytes(self.cubin)
            out = subprocess.run([tool, "-c", str(path)], capture_output=True, text=True, check=True)
        return out.stdout

    def shared_bytes(self) -> int:
        """Bytes of static shared memory the PTX declares."""
        total = 0
        for m in re.finditer(r"\.shared\s+\.align\s+\d+\s+\.b8\s+\w+\[(\d+)\]", self.ptx):
            total += int(m.group(1))
        return total

    def dynamic_shared_bytes(self) -> int:
        """Bytes of dynamic shared memory a launch reserves for the kernel's cooperative scratch
        (0 while the scratch fits in the 48 KiB of static shared memory)."""
        if self._reader is None:  # built by hand, not by a compile_cubin
            return 0
        return self._reader.required_dynamic_shared_bytes(self._compile_result)

    @functools.cached_property
    def registers(self) -> int | None:
        """Registers per thread, as ptxas allocated them (read from the cubin; no GPU needed)."""
        return _cubin_register_count(self.cubin)

    def calls(self) -> int:
        """``call`` instructions left in the post-LTO PTX: 0 when every CUB wrapper was inlined.

        The out-of-line report of a failed run-time check (``cuda_coop_checked::*``, and the
        ``vprintf`` it prints with) is not counted: it runs only on the way to a trap.
        """
        return len(remaining_calls(self.ptx))

    def summary(self) -> str:
        """One line: kernel, architecture, block, registers, shared memory and calls left."""
        calls = self.calls()
        regs = "?" if self.registers is None else self.registers
        block = "x".join(map(str, self.block)) if self.block else "unknown"
        return (f"{self.name}: {arch_for_cc(self.cc)}, block {block}, {regs} registers, "
                f"{self.shared_bytes()} B shared memory{self._dynamic_text()}, "
                f"{'no calls left' if calls == 0 else f'{calls} calls left'}, cubin {len(self.cubin)} B")

    def _dynamic_text(self) -> str:
        dynamic = self.dynamic_shared_bytes()
        return f" + {dynamic} B dynamic" if dynamic else ""

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:  # never the cubin's bytes
        return f"<KernelBinary {self.name} {arch_for_cc(self.cc)} block={self.block} cubin={len(self.cubin)} B>"


_CALL = re.compile(r"^\s*(?:@!?%p\d+\s+)?call(?:\.uni)?\s*(?:\(\s*\w+\s*\)\s*,)?\s*([\w$.]+)", re.MULTILINE)


def remaining_calls(ptx: str) -> list:
    """The callees of the ``call`` instructions in ``ptx``, except the run-time checks' report path."""
    return [callee for callee in _CALL.findall(ptx)
            if "cuda_coop_checked" not in callee and callee != "vprintf"]


_EIATTR_REGCOUNT = 0x2F  # in ".nv.info": (symbol index, registers) per function
_EIFMT_SVAL = 0x04


def _elf_sections(cubin: bytes) -> list:
    """``(name, offset, size)`` of each section of a 64-bit ELF cubin; ValueError otherwise."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("not a 64-bit ELF")
    (shoff,) = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    return [(cubin[names_at + name_off:cubin.index(b"\0", names_at + name_off)], offset, size)
            for name_off, _type, _flags, _addr, offset, size in headers]


def cubin_code_bytes(cubin: bytes) -> int | None:
    """Bytes of the cubin's ``.text.*`` sections (its kernels' SASS, padding included), or None."""
    try:
        return sum(size for name, _offset, size in _elf_sections(cubin) if name.startswith(b".text."))
    except (struct.error, ValueError, IndexError):
        return None


def _cubin_register_count(cubin: bytes) -> int | None:
    """The largest register count a cubin's ``.nv.info`` records (its kernel's), or None."""
    try:
        counts = []
        for name, offset, size in _elf_sections(cubin):
            if name != b".nv.info":
                continue
            data, i = cubin[offset:offset + size], 0
            while i + 4 <= len(data):
                fmt, attr = data[i], data[i + 1]
                if fmt == _EIFMT_SVAL:
                    (length,) = struct.unpack_from("<H", data, i + 2)
                    if attr == _EIATTR_REGCOUNT and length >= 8:
                        counts.append(struct.unpack_from("<I", data, i + 8)[0])
                    i += 4 + length
                else:
                    i += 4
        return max(counts) if counts else None
    except (struct.error, ValueError, IndexError):
        return None


def find_nvdisasm() -> str | None:
    try:
        from cuda import pathfinder

        found = pathfinder.find_nvidia_binary_utility("nvdisasm")
        if found:
            return str(found)
    except Exception:
        pass
    return shutil.which("nvdisasm")


def decorator_options(kernel, names, options: dict) -> dict:
    """``options`` over the kernel's own ``@cuda.jit(...)`` code-generation options among
    ``names`` (``launch_bounds``, ``fastmath``, ...), so ``compile_cubin`` shapes the cubin
    as a launch would; a keyword given to ``compile_cubin`` wins."""
    declared = getattr(kernel, "targetoptions", None) or {}
    return {**{n: declared[n] for n in names if declared.get(n) not in (None, False)}, **options}


def compute_capability(cc, where="compile_cubin()") -> tuple:
    """``cc`` as (major, minor), checked: a pair of ints that names an architecture the
    toolkit's NVRTC compiles for.  Anything else raises a named error here, before the
    compiler sees it (a bare int or "sm_90" failed deep inside the compilers, and an
    architecture NVRTC dropped was reported as a cuda-coop bug by the provider build)."""
    import numbers

    from .._errors import InvalidArgumentTypeError, UnsupportedComputeCapabilityError

    try:
        items = tuple(cc)
    except TypeError:
        items = ()
    if len(items) != 2 or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in items) \
            or not (items[0] >= 1 and 0 <= items[1] <= 9):
        raise InvalidArgumentTypeError(
            f"{where}: cc={cc!r} is not a compute capability; pass (major, minor), e.g. cc=(9, 0) for "
            "an H100 or H200 (sm_90), cc=(8, 0) for an A100")
    major, minor = int(items[0]), int(items[1])
    supported = _known_architectures()
    if supported and major * 10 + minor not in supported:
        raise UnsupportedComputeCapabilityError(
            f"{where}: cc={cc!r} (sm_{major}{minor}) is not an architecture this toolkit's NVRTC compiles "
            f"for ({', '.join(f'sm_{a}' for a in supported)}); pass one of those, or use the CUDA "
            "toolkit that still targets that GPU")
    return major, minor


@functools.lru_cache(maxsize=None)
def _known_architectures() -> tuple:
    """NVRTC's architectures, or () where they cannot be asked (no toolkit yet: the compile
    itself reports that, by name)."""
    from ..core.toolchain import nvrtc_architectures

    try:
        return nvrtc_architectures()
    except Exception:  # noqa: BLE001 (reported by the compile)
        return ()


def dims3(value, name="block", where="compile_cubin()"):
    """A launch dimension (an int or 1 to 3 ints; a grid's and a cluster's at least 1) as
    (x, y, z); anything else raises a named error that says what ``where`` takes."""
    import numbers

    from .._errors import InvalidArgumentTypeError, InvalidArgumentValueError

    example = {"block": "block=128 or block=(32, 4)", "grid": "grid=8 or grid=(8, 2)",
               "cluster": "cluster=2 or cluster=(2, 2)"}[name]
    items = (value,) if isinstance(value, numbers.Integral) else value
    try:
        items = tuple(items)
    except TypeError:
        items = None
    if not items or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in items):
        raise InvalidArgumentTypeError(
            f"{where}: {name}={value!r} is not a launch dimension; pass an int or a tuple of "
            f"1 to 3 ints, e.g. {example}")
    # A block of impossible extents (0, above 1024, ...) is the lowering's to refuse: it names the
    # cooperative call at the user's line, as a launch with that block would.
    if len(items) > 3 or (name != "block" and any(v < 1 for v in items)):
        raise InvalidArgumentValueError(
            f"{where}: {name}={value!r} is not a launch dimension; pass 1 to 3 extents, each "
            f"at least 1, e.g. {example}")
    items = tuple(int(v) for v in items)
    return items + (1,) * (3 - len(items))


