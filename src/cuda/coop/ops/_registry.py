"""The operation families.  Adding a family = its module + one line in FAMILIES."""

from __future__ import annotations

from . import exchange, load_store
from . import merge_sort, radix, topk
from . import neighbors, shuffle
from . import histogram, run_length
from . import reduce, scan

FAMILIES = (
    load_store,
    exchange,
    merge_sort,
    radix,
    topk,
    shuffle,
    neighbors,
    histogram,
    run_length,
    reduce,
    scan,
)


def all_specs():
    """Every OpSpec, in family order."""
    return tuple(spec for family in FAMILIES for spec in family.SPECS)


def public_operations() -> dict:
    """Public name -> stub (what ``cuda.coop`` exports)."""
    return {spec.name: spec.stub for spec in all_specs()}


def spec_for_stub(stub):
    for spec in all_specs():
        if spec.stub is stub:
            return spec
    return None


def all_headers() -> tuple:
    """Every family's CUB headers, in a fixed order (the canonical NVRTC prelude)."""
    seen = []
    for family in FAMILIES:
        for header in getattr(family, "HEADERS", ()):
            if header not in seen:
                seen.append(header)
    return tuple(seen)
