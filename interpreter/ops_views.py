"""GMEM refs the kernel makes or asks about: `memref.reinterpret_cast` (a view of a GMEM
array, numpy's strided view of its elements, checked to lie inside them) and `memref.dim`."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import Operation

from interpreter.machine import Agent
from interpreter.memory import GmemRef, strided_view
from interpreter.ops_std import handles, set_result
from interpreter.values import InterpretError, RuleBroken, uniform


def mixed(
    agent: Agent, op: Operation, static: Any, dynamic: Any, mask: np.ndarray, what: str
) -> list[int]:
    """Static values with the dynamic operands in the DYNAMIC_INDEX slots (one value for
    every thread)."""
    values = iter(dynamic)
    out = []
    for v in static.get_values():
        if v == DYNAMIC_INDEX:
            out.append(int(uniform(agent.get(next(values)), mask, op, what)))
        else:
            out.append(int(v))
    return out


@handles(memref.ReinterpretCastOp)
def reinterpret_cast(agent: Agent, op: memref.ReinterpretCastOp, mask: np.ndarray) -> None:
    """A view of a GMEM array (a group of a pool, say): numpy's strided view of its
    elements, checked to lie inside them."""
    source = agent.get(op.source)
    if not isinstance(source, GmemRef):
        raise InterpretError(
            op, "a view of anything but a GMEM array is not modelled by the interpreter"
        )
    (offset,) = mixed(agent, op, op.static_offsets, op.offsets, mask, "the view's offset")
    sizes = mixed(agent, op, op.static_sizes, op.sizes, mask, "the view's sizes")
    strides = mixed(agent, op, op.static_strides, op.strides, mask, "the view's strides")
    assert source.flat is not None
    start = source.offset + offset
    view = strided_view(source.flat, start, sizes, strides)
    if view is None:
        raise RuleBroken(
            op, "bounds",
            f"views elements from {start} with sizes {sizes} and strides {strides} of an "
            f"array of {source.flat.size}: out of bounds",
        )  # fmt: skip
    agent.env[op.result] = GmemRef(
        view, op.result.type, f"a view of {source.name}", source.flat, start
    )


@handles(memref.DimOp)
def dim(agent: Agent, op: memref.DimOp, mask: np.ndarray) -> None:
    ref = agent.get(op.source)
    d = uniform(agent.get(op.index), mask, op, "the dim")
    shape = ref.array.shape if isinstance(ref, GmemRef) else ref.shape
    set_result(agent, op, np.int64(shape[d]))
