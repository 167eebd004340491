"""The handler of each op the interpreter runs (the op modules register theirs)."""

from __future__ import annotations

from interpreter import (  # noqa: F401  (they register their handlers)
    grid_dependency,
    ops_assume,
    ops_atomic,
    ops_barriers,
    ops_clc,
    ops_cluster,
    ops_copies,
    ops_gather4,
    ops_im2col,
    ops_matrix,
    ops_mma,
    ops_roles,
    ops_tcgen05,
    ops_tensormap,
    ops_tmem,
    ops_vector,
    ops_views,
    tmem_order,
)
from interpreter.ops_std import HANDLERS

__all__ = ["HANDLERS"]
