"""``ThreadDataLike`` and ``TempStorageLike``: what a payload and a scratch descriptor offer.

Structural types (``typing.Protocol``) for annotations and ``isinstance`` checks in
host code, e.g. a helper that builds kernels around either a ``coop.ThreadData`` or
a fixed-size local array.  Matching a protocol does not make an object usable in a
kernel: the compiler accepts ``coop.ThreadData``, fixed-size 1-D local arrays and
``coop.TempStorage`` themselves.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["TempStorageLike", "ThreadDataLike"]


@runtime_checkable
class ThreadDataLike(Protocol):
    """Per-thread items: a compile-time item count, an element type, indexed access."""

    items_per_thread: int
    dtype: Any  # a NumPy dtype, or None until the compiler infers it

    def __getitem__(self, index: int) -> Any: ...

    def __setitem__(self, index: int, value: Any) -> None: ...


@runtime_checkable
class TempStorageLike(Protocol):
    """Shared-memory scratch: size and alignment (None: inferred), barrier and sharing policy."""

    size_in_bytes: int | None
    alignment: int | None
    auto_sync: bool | None
    sharing: str

    def reserve(self, count: int, dtype: Any, alignment: int | None = None) -> Any: ...
