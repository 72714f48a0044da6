"""Compiler backends.  Each is a package with ``activate()``; see ``cuda.coop._registration``."""
