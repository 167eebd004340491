"""im2col loads (`copy.im2col_load`): the TMA unit's im2col mode, and copy-legalize's
cp.async gather of the same pixels (`impl cp_async`).

The load reads `pixels` filter bases of the map's bounding box, from the coordinates' base
on: the innermost spatial dim fastest, each step its traversal stride; a dim whose next step
reaches `extent + upper` restarts at its lower corner and carries one step into the next
dim out (the outermost into the image, n). Each pixel's channels `[c, c + channels)` are
read at its base plus the im2col offsets (unsigned 16 bits), and read as zeros where the
pixel or the channel lies outside the array (the convolution's padding). The box lands as
a TMA tile does (`ops_copies.load`): dense `[pixels, channels]` in the slot, swizzled as the
SMEM ref says, its bytes completing on the barrier (the issuer's arrival expecting the box,
unless `arrive = false`); gathered with cp.async, each issuing thread arrives once on the
barrier when the box has landed. The op has no multicast, predicate or OOB mode (zeros)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from copy_dialect import ops as copy
from interpreter.gmem_log import note_box
from interpreter.machine import Agent, Step
from interpreter.memory import GmemRef, SmemRef
from interpreter.ops_copies import UNMODELLED, box_origin, load, slot_of
from interpreter.ops_std import handles
from interpreter.values import InterpretError, storage_dtype, uniform


def pixel_bases(
    g: copy.Im2colGeometry, extents: Sequence[int], origin: Sequence[int], rows: np.ndarray
) -> list[np.ndarray]:
    """The filter base (n, spatial...) of each pixel row in `rows`, as the TMA unit walks
    the bounding box from `origin` (`convert_copy_to_nvvm.im2col.im2col_pixel`'s closed form,
    which the cp.async gather computes): per dim, the first `max(1, ceil((end - start) /
    stride))` steps stay on the start's lap; the others wrap to the lower corner, `lap =
    ceil((end - lower) / stride)` bases a lap, carrying into the next dim out."""
    steps = rows.astype(np.int64)
    base: list[np.ndarray] = []
    for d in reversed(range(len(extents))):
        start, stride, lower = origin[1 + d], g.traversal_strides[d], g.lower[d]
        end = extents[d] + g.upper[d]
        lap = -(-(end - lower) // stride)  # >= 1: the box is not empty (IC6)
        first = -(-(end - start) // stride) if end > start else 1
        stays = steps < first
        past = np.where(stays, 0, steps - first)
        base.insert(0, np.where(stays, start + steps * stride, lower + (past % lap) * stride))
        steps = np.where(stays, 0, past // lap + 1)
    return [origin[0] + steps, *base]


def im2col_box(
    g: copy.Im2colGeometry, shape: Sequence[int], origin: Sequence[int], offsets: Sequence[int]
) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """The GMEM index of each element of the `[pixels, channels]` box (row-major) and
    whether it lies in an array of `shape`."""
    pixels, channels = g.box_shape
    n, *bases = pixel_bases(g, shape[1:-1], origin, np.arange(pixels))
    row = np.repeat(np.arange(pixels), channels)
    spatial = [(b + o)[row] for b, o in zip(bases, offsets, strict=True)]
    channel = origin[-1] + np.tile(np.arange(channels), pixels)
    coords = (n[row], *spatial, channel)
    inside = np.ones(row.shape, dtype=bool)
    for c, size in zip(coords, shape, strict=True):
        inside &= (c >= 0) & (c < size)
    return coords, inside


@handles(copy.Im2colLoadOp)
def im2col_load(agent: Agent, op: copy.Im2colLoadOp, mask: np.ndarray) -> Step:
    yield None
    g = op.geometry()
    gref = agent.get(g.gmem)
    if not isinstance(gref, GmemRef):
        raise InterpretError(op, f"an im2col load of this GMEM ref {UNMODELLED}")
    origin = box_origin(agent, op, g.gmem_indices, mask)
    offsets = [
        int(uniform(agent.get(v), mask, op, "the im2col offsets")) & 0xFFFF for v in g.offsets
    ]
    sref = agent.get(g.smem)
    assert isinstance(sref, SmemRef)
    slot = slot_of(agent, op, g, sref, mask)
    dtype = storage_dtype(g.element_type)
    issue = agent.release()
    coords, inside = im2col_box(g, gref.array.shape, origin, offsets)
    note_box(agent, op, gref, coords, inside, mask, False)  # (for a chain: PDL)
    yield from load(agent, op, g, gref, slot, 0, [agent.cta], coords, inside, dtype, issue, mask)
