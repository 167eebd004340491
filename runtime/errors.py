"""The runtime's error for a bad argument (`facts.errors.ArgumentError`, shared with the
compiler's and the builders' entry points): what was expected, what was got, the fix."""

from __future__ import annotations

from facts.errors import ArgumentError

__all__ = ["ArgumentError"]
