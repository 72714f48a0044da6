"""Operation families: one module per family, listed in ``_registry.FAMILIES``."""
