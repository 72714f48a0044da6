"""What ``cuda.coop.numba_mlir`` and ``cuda.coop.numba_cuda`` share: each is cuda.coop's API
plus its compiler's extras, and forwards cuda.coop's own names lazily."""

from __future__ import annotations


def forward_coop_names(module_globals: dict, all_names: list):
    """``__getattr__`` and ``__dir__`` for a compiler's module: cuda.coop's names, each looked
    up there on first use, so that an operation imports its family then (as ``cuda.coop.load``
    does), not every family at this import."""
    import cuda.coop as coop

    common = frozenset(coop.__all__)

    def __getattr__(name):
        if name in common:
            value = getattr(coop, name)
            module_globals[name] = value
            return value
        raise AttributeError(f"module {module_globals['__name__']!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(module_globals) | set(all_names))

    return __getattr__, __dir__
