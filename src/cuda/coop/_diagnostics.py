"""Point cuda-coop errors at the user's kernel line.

Validation runs inside the compiler, many frames away from the kernel source.
``raise_at`` re-raises an error so that its message ends with the kernel's file
and line, and the *last* traceback frame is that line (a one-line code object
compiled under the user's file name and line number), which is where editors
and pytest put the cursor.
"""

from __future__ import annotations

import linecache

__all__ = ["raise_at", "with_location"]


def with_location(message: str, filename: str | None, line: int | None) -> str:
    if not filename or not line:
        return message
    src = linecache.getline(filename, line).strip()
    where = f"\n  File \"{filename}\", line {line}"
    return message + where + (f"\n    {src}" if src else "")


def raise_at(exc: BaseException, filename: str | None, line: int | None, function: str | None = None):
    """Raise ``exc`` (same class, location appended) from ``filename:line``."""
    if getattr(exc, "_coop_located", False) or not filename or not line or line < 1:
        raise exc
    new = type(exc)(with_location(str(exc), filename, line))
    new._coop_located = True
    new.__suppress_context__ = True
    # One frame, at the kernel line: a one-line code object compiled under the
    # user's file name, renamed after the kernel function.  (A wrapper function
    # would add a second frame, at the line where it is called: the next line.)
    source = "\n" * (line - 1) + "raise __coop_error__\n"
    try:
        code = compile(source, filename, "exec")
    except (SyntaxError, ValueError):  # pragma: no cover - exotic file names
        raise new from None
    name = function.rsplit(".", 1)[-1] if function else None
    if name and name.isidentifier():
        code = code.replace(co_name=name, **({"co_qualname": function} if hasattr(code, "co_qualname") else {}))
    exec(code, {"__coop_error__": new, "__name__": "__cuda_coop_kernel_source__"})
