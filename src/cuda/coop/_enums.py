"""CUB's algorithm enumerators as Python enums: NVIDIA's qualified namespace exports them.

``cuda.coop.numba_mlir`` (and ``cuda.coop.numba_cuda``) export these classes, and an
operation's ``algorithm=`` takes one of their members wherever it takes the selector string:
``algorithm=BlockScanAlgorithm.RAKING_MEMOIZE`` is ``algorithm="raking_memoize"``.  A
member in a kernel is a module or closure constant, which the call-site rewrite replaces by
that string before typing (numba types an enum member by its class alone).  Other enums and
plain integers stay refused as selectors: a string names the algorithm unambiguously.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["BlockLoadAlgorithm", "BlockStoreAlgorithm", "WarpLoadAlgorithm", "WarpStoreAlgorithm",
           "BlockScanAlgorithm", "BlockReduceAlgorithm", "BlockHistogramAlgorithm"]


class _CubAlgorithm(IntEnum):
    """A member's selector is its name in lower case; ``str()`` is the CUB enumerator."""

    @property
    def selector(self) -> str:
        return self.name.lower()

    def __str__(self) -> str:
        return f"::cub::{self._cub_prefix}_{self.name}"


class BlockLoadAlgorithm(_CubAlgorithm):
    DIRECT = 0
    STRIPED = 1
    VECTORIZE = 2
    TRANSPOSE = 3
    WARP_TRANSPOSE = 4
    WARP_TRANSPOSE_TIMESLICED = 5


class BlockStoreAlgorithm(_CubAlgorithm):
    DIRECT = 0
    STRIPED = 1
    VECTORIZE = 2
    TRANSPOSE = 3
    WARP_TRANSPOSE = 4
    WARP_TRANSPOSE_TIMESLICED = 5


class WarpLoadAlgorithm(_CubAlgorithm):
    DIRECT = 0
    STRIPED = 1
    VECTORIZE = 2
    TRANSPOSE = 3


class WarpStoreAlgorithm(_CubAlgorithm):
    DIRECT = 0
    STRIPED = 1
    VECTORIZE = 2
    TRANSPOSE = 3


class BlockScanAlgorithm(_CubAlgorithm):
    RAKING = 0
    RAKING_MEMOIZE = 1
    WARP_SCANS = 2


class BlockReduceAlgorithm(_CubAlgorithm):
    RAKING_COMMUTATIVE_ONLY = 0
    RAKING = 1
    WARP_REDUCTIONS = 2


class BlockHistogramAlgorithm(_CubAlgorithm):
    SORT = 0
    ATOMIC = 1


# The CUB enumerator prefixes (``::cub::BLOCK_SCAN_RAKING``); set after the classes exist,
# since an IntEnum class body would make them members.
for _cls, _prefix in ((BlockLoadAlgorithm, "BLOCK_LOAD"), (BlockStoreAlgorithm, "BLOCK_STORE"),
                      (WarpLoadAlgorithm, "WARP_LOAD"), (WarpStoreAlgorithm, "WARP_STORE"),
                      (BlockScanAlgorithm, "BLOCK_SCAN"), (BlockReduceAlgorithm, "BLOCK_REDUCE"),
                      (BlockHistogramAlgorithm, "BLOCK_HISTO")):
    _cls._cub_prefix = _prefix
del _cls, _prefix


def selector_of(value):
    """The selector string of one of these members, else None."""
    return value.selector if isinstance(value, _CubAlgorithm) else None
