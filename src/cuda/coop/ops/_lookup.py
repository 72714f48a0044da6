"""One operation's OpSpec, importing its family only.

``_registry`` imports every family (the tools, the public-API checks and the NVRTC
prelude want all of them).  A compile needs the families of the operations it calls:
the backends look specs up here, by name or by stub, so a kernel that calls ``coop.load``
does not pay for importing the other ten families (about 17 ms on the 2-core machine,
docs/compile_latency.rst).  ``_families.OPERATIONS`` says which family defines each name.
"""

from __future__ import annotations

import functools
import importlib

from ._families import OPERATIONS

__all__ = ["spec_named", "spec_of", "prefers_32_bit_shared_addresses"]


@functools.lru_cache(maxsize=None)
def spec_named(name):
    """The OpSpec of the public operation ``name``, or None for any other name."""
    family = OPERATIONS.get(name) if isinstance(name, str) else None
    if family is None:
        return None
    module = importlib.import_module(f"{__package__}.{family}")
    return next((spec for spec in module.SPECS if spec.name == name), None)


def spec_of(stub):
    """The OpSpec whose stub is ``stub`` (a ``coop.load``), or None (``coop.this_block``, any
    other object: the lowering asks this of every callee's typing key)."""
    from .._kernel_api import KernelFunction

    if not isinstance(stub, KernelFunction):
        return None
    spec = spec_named(stub.name)
    return spec if spec is not None and spec.stub is stub else None


@functools.lru_cache(maxsize=None)
def prefers_32_bit_shared_addresses(family: str) -> bool:
    """Whether the family ``family`` (a CallPlan's ``family``, its module's name) declares
    ``SHARED_ADDRESS_BITS = 32``: its kernels measured faster linked with 32-bit shared-memory
    addresses (core/shared_addresses.py)."""
    module = importlib.import_module(f"{__package__}.{family}")
    return getattr(module, "SHARED_ADDRESS_BITS", None) == 32
