"""TMA gather4 and scatter4 (`copy.gather4`, `copy.scatter4`, `copy.gather4_prefetch`).

Each of the four rows is a tile-mode box of its own (PTX ISA, "`.tile::scatter4` and
`.tile::gather4` modes": four bounding boxes of one row each): a gather4 reads row
`rows[i]`, columns `[col, col + W)`, into row i of the `[4, W]` SMEM tile, elements outside
the array reading as zeros (the map's fill), and completes the tile's bytes on its barrier
as a TMA load does (`ops_copies.load`: the issuer's arrival expecting them, unless `arrive =
false`); a scatter4 writes row i of the tile to row `rows[i]`, the part outside the array
not written, and completes with the bulk group as a TMA store (`ops_copies.store`). The
prefetch is a hint: no effect on memory. A multicast gather4 writes the tile into the slot of
every CTA of its mask and completes the bytes on each one's barrier; a leader-tracked one (a
CTA pair's) writes this CTA's slot and completes on the pair leader's barrier."""

from __future__ import annotations

import numpy as np

from copy_dialect import ops as copy
from interpreter.gmem_log import note_box
from interpreter.machine import Agent, Cta, Step
from interpreter.memory import GmemRef, SmemRef
from interpreter.ops_cluster import mask_ctas
from interpreter.ops_copies import (
    UNMODELLED,
    box_origin,
    load,
    pair_transfer,
    slot_of,
    store,
)
from interpreter.ops_std import handles
from interpreter.values import InterpretError, RuleBroken, storage_dtype


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
    if op.is_leader_tracked:  # a CTA pair's: its rows here, its bytes at the pair's leader
        issue = agent.release()
        box = (coords, inside)
        index = agent.cta.rank & 1
        yield from pair_transfer(agent, op, g, gref, box, slot, dtype, issue, mask, index)
        return
    destinations = [agent.cta] if op.multicast is None else multicast_targets(agent, op, mask)
    issue = agent.release()
    yield from load(agent, op, g, gref, slot, 0, destinations, coords, inside, dtype, issue, mask)


def multicast_targets(agent: Agent, op: copy.Gather4Op, mask: np.ndarray) -> list[Cta]:
    """The CTAs a multicast gather4 writes: each CTA of the cluster whose rank is a bit of
    its mask (the ISA's ctaMask). The issuer's own arrival expects bytes only its own SMEM
    receives: with `arrive` it must be one of them."""
    assert op.multicast is not None
    targets = mask_ctas(agent, op, op.multicast, mask, "G6")
    if op.arrives and agent.cta not in targets:
        ranks = ", ".join(str(cta.rank) for cta in targets)
        raise RuleBroken(
            op,
            "P5",
            f"CTA {agent.cta.rank} arrives on its barrier expecting the tile's bytes, but its "
            f"multicast mask names CTAs {ranks}, not it: no byte completes that phase",
        )
    return targets


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
