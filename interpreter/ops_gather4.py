"""TMA gather4 and scatter4 (`copy.gather4`, `copy.scatter4`, `copy.gather4_prefetch`).

Each of the four rows is a tile-mode box of its own (PTX ISA, "`.tile::scatter4` and
`.tile::gather4` modes": four bounding boxes of one row each): a gather4 reads row
`rows[i]`, columns `[col, col + W)`, into row i of the `[4, W]` SMEM tile, elements outside
the array reading as zeros (the map's fill), and completes the tile's bytes on its barrier
as a TMA load does (`ops_copies.load`: the issuer's arrival expecting them, unless `arrive =
false`); a scatter4 writes row i of the tile to row `rows[i]`, the part outside the array
not written, and completes with the bulk group as a TMA store (`ops_copies.store`). The
prefetch is a hint: no effect on memory."""

from __future__ import annotations

import numpy as np

from copy_dialect import ops as copy
from interpreter.gmem_log import note_box
from interpreter.machine import Agent, Step
from interpreter.memory import GmemRef, SmemRef
from interpreter.ops_copies import UNMODELLED, box_origin, load, slot_of, store
from interpreter.ops_std import handles
from interpreter.values import InterpretError, storage_dtype


def gather4_box(
    shape: tuple[int, ...], rows: list[int], column: int, width: int
) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """The GMEM index of each element of the `[4, W]` tile (row-major) and whether it lies
    in an array of `shape`."""
    r = np.repeat(np.asarray(rows, dtype=np.int64), width)
    c = column + np.tile(np.arange(width, dtype=np.int64), len(rows))
    inside = (r >= 0) & (r < shape[0]) & (c >= 0) & (c < shape[1])
    return (r, c), inside


def _operands(
    agent: Agent, op: copy.Gather4Op | copy.Scatter4Op, mask: np.ndarray
) -> tuple[copy.Gather4Geometry, GmemRef, tuple[int, ...], tuple, np.ndarray]:
    g = op.geometry()
    gref = agent.get(g.gmem)
    if not isinstance(gref, GmemRef):
        raise InterpretError(op, f"a {op.name} of this GMEM ref {UNMODELLED}")
    rows = box_origin(agent, op, g.rows, mask)
    (column,) = box_origin(agent, op, g.column, mask)
    sref = agent.get(g.smem)
    assert isinstance(sref, SmemRef)
    slot = slot_of(agent, op, g, sref, mask)
    coords, inside = gather4_box(gref.array.shape, rows, column, g.box_shape[-1])
    note_box(agent, op, gref, coords, inside, mask, isinstance(op, copy.Scatter4Op))  # (PDL)
    return g, gref, slot, coords, inside


@handles(copy.Gather4Op)
def gather4(agent: Agent, op: copy.Gather4Op, mask: np.ndarray) -> Step:
    yield None
    g, gref, slot, coords, inside = _operands(agent, op, mask)
    dtype = storage_dtype(g.element_type)
    issue = agent.release()
    yield from load(agent, op, g, gref, slot, 0, [agent.cta], coords, inside, dtype, issue, mask)


@handles(copy.Scatter4Op)
def scatter4(agent: Agent, op: copy.Scatter4Op, mask: np.ndarray) -> Step:
    yield None
    g, gref, slot, coords, inside = _operands(agent, op, mask)
    dtype = storage_dtype(g.element_type)
    agent.release()
    sref = agent.get(g.smem)
    offsets = sref.slot_offsets(slot, g.box_shape)
    store(agent, op, g, gref, offsets, coords, inside, dtype)


@handles(copy.Gather4PrefetchOp)
def gather4_prefetch(agent: Agent, op: copy.Gather4PrefetchOp, mask: np.ndarray) -> None:
    return None  # a hint: no effect on memory
