"""The handler of each op the interpreter runs (the op modules register theirs)."""

from __future__ import annotations

from interpreter import ops_barriers, ops_copies, ops_roles  # noqa: F401  (they register)
from interpreter.ops_std import HANDLERS

__all__ = ["HANDLERS"]
