"""Compiler backends.  Each is a package with ``activate()`` (see ``cuda.coop._registration``),
which installs a few hooks; the backend installs the rest on first use (``_deferred.py``)."""
