"""Tensor memory (sm_100a): each CTA's 128 lanes x 512 32-bit columns; `copy.tmem_alloc`
and `copy.tmem_dealloc` (P8: what is allocated is freed before the kernel returns; with
`cta_group 2` each CTA of the pair allocates the same columns, as the lowering's warp 0 of
each does), `copy.tmem_relinquish` (an allocation after it breaks J29);
`copy.tmem_load` and `copy.tmem_store` with each shape's map of registers to lanes and
columns (`copy_dialect.tmem.tmem_fragment`, from the lane of the warp's quarter, (warp % 4)
x 32); `copy.tmem_wait` (P11: loaded registers are used only after `tmem_wait load`; P12:
the columns a store writes are read or freed only after `tmem_wait store`, whichever view,
parent or slice, names them); `copy.smem_to_tmem`
(tcgen05.cp: row i of the source into lane i for the 128-row shapes; 64x128b and 32x128b
multicast their rows to the warps' lane quarters, `copy_lanes`; with `cta_group 2` into the
TMEM of both CTAs of the pair, at the same columns); `copy.tmem_shift` (tcgen05.shift.down:
the 8 columns at its column move one lane down, lane 0 keeps its own); `copy.tmem_slice`
(a view of the parent's TMEM from its first column: its accesses are bounded by it). Each access
is also handed to `tmem_order` (P14: tcgen05 accesses of two agents ordered by a fenced
sync)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from copy_dialect import ops as copy
from copy_dialect.tmem import TMEM_REGS_PER_NUM, tmem_capacity, tmem_columns, tmem_fragment
from copy_dialect.tmem_access import packed
from copy_dialect.tmem_moves import SHIFT_COLUMNS
from copy_dialect.tmem_slice import slice_columns
from facts import hardware as hw
from interpreter import tmem_order
from interpreter.machine import WARP, Agent, Cta, Step
from interpreter.memory import SmemRef, read_smem, units
from interpreter.ops_std import check_index, handles, set_result
from interpreter.tcgen05_async import smem_read
from interpreter.values import InterpretError, RuleBroken, storage_dtype, uniform

LANES = hw.TMEM_LANES


@dataclass(eq=False)
class Tmem:
    """A CTA's tensor memory and its allocations."""

    cells: np.ndarray = field(
        default_factory=lambda: np.zeros((LANES, hw.TMEM_MAX_COLUMNS), np.uint32)
    )
    used: np.ndarray = field(default_factory=lambda: np.zeros(hw.TMEM_MAX_COLUMNS, bool))
    """Every target's columns fit; an allocation searches its own target's
    (`tmem_capacity`)."""
    live: dict[int, tuple[int, Operation]] = field(default_factory=dict)
    """Allocations not yet freed: first column -> (columns, the alloc op)."""
    relinquished: Operation | None = None
    """The `copy.tmem_relinquish` that gave up the CTA's permit to allocate, if one did."""


@dataclass(eq=False)
class TmemRef:
    tmem: Tmem
    column: int
    columns: int
    type: MemRefType


def tmem_of(cta: Cta) -> Tmem:
    if cta.tmem is None:
        cta.tmem = Tmem()
    return cta.tmem


def peer_of(agent: Agent, op: Operation) -> Cta:
    """The CTA of the pair `.cta_group::2` names: the one whose rank differs in bit 0."""
    ctas = agent.cta.machine.ctas
    rank = agent.cta.rank ^ 1
    if rank >= len(ctas):
        raise InterpretError(op, f"has cta_group 2, but CTA {agent.cta.rank} has no peer CTA")
    return ctas[rank]


@handles(copy.TmemAllocOp)
def alloc(agent: Agent, op: copy.TmemAllocOp, mask: np.ndarray) -> Step:
    yield None
    tmem = tmem_of(agent.cta)
    if tmem.relinquished is not None:
        raise RuleBroken(
            op, "J29", "allocates TMEM after the CTA relinquished its permit to allocate"
        )
    if copy.cta_group_of(op) == 2:
        peer_of(agent, op)
    want = tmem_columns(op.result.type)
    columns = max(hw.TMEM_MIN_COLUMNS, 1 << (want - 1).bit_length())
    for start in range(0, tmem_capacity(op), columns):
        if not tmem.used[start : start + columns].any():
            break
    else:
        raise InterpretError(op, f"needs {columns} TMEM columns, and the CTA has no such run free")
    tmem.used[start : start + columns] = True
    tmem.live[start] = (columns, op)
    agent.env[op.result] = TmemRef(tmem, start, columns, op.result.type)


@handles(copy.TmemDeallocOp)
def dealloc(agent: Agent, op: copy.TmemDeallocOp, mask: np.ndarray) -> Step:
    yield None
    ref = agent.get(op.tmem)
    check_stores_waited(agent, op, ref.tmem, range(ref.column, ref.column + ref.columns), "frees")
    if ref.column not in ref.tmem.live:
        raise InterpretError(op, "frees TMEM that is not allocated (freed twice?)")
    del ref.tmem.live[ref.column]
    ref.tmem.used[ref.column : ref.column + ref.columns] = False
    tmem_order.free(ref.tmem, range(ref.column, ref.column + ref.columns))


@handles(copy.TmemSliceOp)
def slice_view(agent: Agent, op: copy.TmemSliceOp, mask: np.ndarray) -> Step:
    """A view of the parent's columns: the same TMEM, from the slice's first column."""
    yield None
    ref = agent.get(op.tmem)
    first, columns = slice_columns(op)
    agent.env[op.result] = TmemRef(ref.tmem, ref.column + first, columns, op.result.type)


@handles(copy.TmemRelinquishOp)
def relinquish(agent: Agent, op: copy.TmemRelinquishOp, mask: np.ndarray) -> Step:
    yield None
    tmem_of(agent.cta).relinquished = op


def cells(
    agent: Agent, op: Operation, ref: TmemRef, column: SSAValue, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The threads of `mask`, and the lane and column of each of their registers (with
    pack / unpack, the first column of each register's pair)."""
    shape = op.shape.data
    regs = op.num.value.data * TMEM_REGS_PER_NUM[shape]
    offset = 0 if op.offset is None else op.offset.value.data
    pack = packed(op)
    start = int(uniform(agent.get(column), mask, op, "the TMEM column"))
    threads = np.nonzero(mask)[0]  # whole warps (interpreter.machine.reaches, P10)
    lanes = np.empty((threads.size, regs), np.int64)
    cols = np.empty((threads.size, regs), np.int64)
    for i, t in enumerate(threads):
        base = (t // WARP % 4) * 32
        for r in range(regs):
            lane, col = tmem_fragment(shape, int(t % WARP), r, offset, pack)
            lanes[i, r], cols[i, r] = base + lane, ref.column + start + col
    last = cols.max() + pack if cols.size else 0
    if cols.size and (last >= ref.column + ref.columns or cols.min() < ref.column):
        raise RuleBroken(
            op,
            "bounds",
            f"accesses TMEM column {int(last) - ref.column} of an allocation of {ref.columns}",
        )
    return threads, lanes, cols


def check_stores_waited(agent: Agent, op: Operation, tmem: Tmem, columns: range, verb: str) -> None:
    """P12: `op` reads or frees `columns` of `tmem`, which no store of the agent not yet
    waited may still write (a store of other columns, through a disjoint slice, may)."""
    pending = [s for s in agent.tmem_stores if s[1] is tmem and tmem_order.overlap(s[2], columns)]
    if pending:
        agent.cta.machine.report(
            "P12", op,
            f"{verb} TMEM that a copy.tmem_store may still write: wait with copy.tmem_wait "
            "store first",
            agent.cta, pending[0][0],
        )  # fmt: skip
        agent.tmem_stores = [s for s in agent.tmem_stores if s not in pending]


@handles(copy.TmemLoadOp)
def load(agent: Agent, op: copy.TmemLoadOp, mask: np.ndarray) -> Step:
    yield None
    ref = agent.get(op.tmem)
    threads, lanes, cols = cells(agent, op, ref, op.column, mask)
    span = tmem_order.span(cols, packed(op))
    check_stores_waited(agent, op, ref.tmem, span, "reads")
    tmem_order.access(agent, op, ref.tmem, span, write=False)
    t = op.result.type
    dtype = storage_dtype(t)
    if op.pack is not None:
        # .pack::16b: the low halves of two adjacent columns, the first in the low half.
        words = np.zeros((agent.cta.threads, lanes.shape[1]), np.uint32)
        low, high = ref.tmem.cells[lanes, cols], ref.tmem.cells[lanes, cols + 1]
        words[threads] = (low & 0xFFFF) | (high << 16)
        set_result(agent, op, words.view(np.uint16).view(dtype))
        agent.unwaited.add(op.result)
        return
    if dtype.itemsize != 4:
        raise InterpretError(
            op, f"a TMEM load of {t} is not modelled by the interpreter (32-bit registers only)"
        )
    values = np.zeros((agent.cta.threads, lanes.shape[1]), np.uint32)
    values[threads] = ref.tmem.cells[lanes, cols]
    set_result(agent, op, values.view(dtype))
    if op.red is not None and len(op.results) > 1:
        raise InterpretError(op, "the fused load-reduce is not modelled by the interpreter yet")
    agent.unwaited.add(op.result)


@handles(copy.TmemStoreOp)
def store(agent: Agent, op: copy.TmemStoreOp, mask: np.ndarray) -> Step:
    yield None
    ref = agent.get(op.tmem)
    threads, lanes, cols = cells(agent, op, ref, op.column, mask)
    span = tmem_order.span(cols, packed(op))
    tmem_order.access(agent, op, ref.tmem, span, write=True)
    value = np.asarray(agent.get(op.value))
    if op.unpack is not None:
        # .unpack::16b: each register's halves to two adjacent columns, low half first.
        pairs = np.broadcast_to(value, (agent.cta.threads, 2 * lanes.shape[1]))
        words = np.ascontiguousarray(pairs[threads]).view(np.uint16).view(np.uint32)
        ref.tmem.cells[lanes, cols] = words & 0xFFFF
        ref.tmem.cells[lanes, cols + 1] = words >> 16
        agent.tmem_stores.append((op, ref.tmem, span))
        return
    if value.dtype.itemsize != 4:
        raise InterpretError(
            op, "a TMEM store of other than 32-bit registers is not modelled by the interpreter"
        )
    value = np.broadcast_to(value, (agent.cta.threads, lanes.shape[1]))
    ref.tmem.cells[lanes, cols] = np.ascontiguousarray(value[threads]).view(np.uint32)
    agent.tmem_stores.append((op, ref.tmem, span))


@handles(copy.TmemWaitOp)
def wait(agent: Agent, op: copy.TmemWaitOp, mask: np.ndarray) -> Step:
    yield None
    if str(op.kind.data.value if hasattr(op.kind.data, "value") else op.kind.data) == "load":
        agent.unwaited.clear()
    else:
        agent.tmem_stores = []


def copy_lanes(op: copy.SmemToTmemOp) -> np.ndarray:
    """The source row each of the 128 TMEM lanes receives from a tcgen05.cp (PTX ISA,
    tcgen05.cp): row i into lane i for the 128-row shapes; 32x128b.warpx4 multicasts its 32
    rows to the 32 lanes of each warp's quarter; 64x128b multicasts to warp pairs, each
    warp of a pair receiving half of the rows: with warpx2::02_13 (pairs 0-2, 1-3) rows
    0-31 to the lanes of warps 0 and 1, rows 32-63 to those of warps 2 and 3; with
    warpx2::01_23 (pairs 0-1, 2-3) rows 0-31 to warps 0 and 2, rows 32-63 to warps 1 and
    3. This reads the ISA's sentence ("each warp in the warp pair receive half of the
    data"); it is not measured (no Blackwell GPU here)."""
    lane = np.arange(LANES)
    warp, row = lane // 32, lane % 32
    shape = op.shape.data
    cast = None if op.multicast is None else op.multicast.data
    if shape == copy.TmemCopyShape.S32X128B:
        return row
    if cast == copy.TmemCopyMulticast.WARPX2_02_13:
        return (warp // 2) * 32 + row
    if cast == copy.TmemCopyMulticast.WARPX2_01_23:
        return (warp % 2) * 32 + row
    return lane


@handles(copy.SmemToTmemOp)
def smem_to_tmem(agent: Agent, op: copy.SmemToTmemOp, mask: np.ndarray) -> Step:
    yield None
    src = agent.get(op.src)
    ref = agent.get(op.tmem)
    assert isinstance(src, SmemRef)
    slot = [int(uniform(agent.get(v), mask, op, "the slot index")) for v in op.indices]
    check_index(src.shape[: len(slot)], slot, mask, op, "an SMEM buffer")
    tile = src.shape[len(slot) :]
    rows = tile[0]
    if op.shape.data == copy.TmemCopyShape.S4X256B:
        raise InterpretError(op, "a tcgen05.cp of shape 4x256b is not modelled by the interpreter")
    want = int(op.shape.data.value.removeprefix("shape_").split("x")[0])
    if rows != want:
        # (the rows the shape copies: which of a source's other rows reach which lane is the
        # descriptor's layout, not modelled here)
        raise InterpretError(
            op, f"a tcgen05.cp of {op.shape.data.value} from a source of {rows} rows "
            f"is not modelled by the interpreter (it models sources of {want} rows)",
        )  # fmt: skip
    start = int(uniform(agent.get(op.column), mask, op, "the TMEM column"))
    dtype = storage_dtype(src.element_type)
    per_row = tile[1] * dtype.itemsize // 4
    grid = np.indices(tile).reshape(2, -1)
    offsets = np.asarray(src.offsets([*slot, grid[0], grid[1]]), np.int64)
    # its read of SMEM (the issuer's, for a pair's too), done at the copy's next commit
    read = smem_read(agent, op, units(offsets, dtype.itemsize, 16), "the tcgen05.cp reads")
    agent.cta.machine.races(agent.cta.smem.log.check(read, agent.clock), agent.cta)
    words = read_smem(agent.cta.smem, offsets, dtype).reshape(rows, -1)
    data = np.ascontiguousarray(words).view(np.uint32).reshape(rows, per_row)
    column = ref.column + start
    if column + per_row > ref.column + ref.columns:
        raise RuleBroken(
            op, "bounds", f"copies to TMEM column {column + per_row - 1 - ref.column} of an "
            f"allocation of {ref.columns}",
        )  # fmt: skip
    for tmem in pair_tmems(agent, op, ref):
        span = range(column, column + per_row)
        tmem_order.access(agent, op, tmem, span, write=True, asynchronous=True)
        tmem.cells[:, column : column + per_row] = data[copy_lanes(op)]


def pair_tmems(agent: Agent, op: Operation, ref: TmemRef) -> list[Tmem]:
    """The TMEM an op of `ref` acts on: its CTA's, and with `cta_group 2` the peer's too,
    which must hold an allocation at the same column."""
    if copy.cta_group_of(op) != 2:
        return [ref.tmem]
    peer = peer_of(agent, op)
    if peer.tmem is None or not any(
        first <= ref.column < first + n for first, (n, _) in peer.tmem.live.items()
    ):
        raise RuleBroken(
            op, "bounds", f"reaches CTA {peer.rank}'s TMEM, which has no allocation there"
        )
    return [ref.tmem, peer.tmem]


@handles(copy.TmemShiftOp)
def shift(agent: Agent, op: copy.TmemShiftOp, mask: np.ndarray) -> Step:
    """tcgen05.shift.down: the 32 bytes (8 columns) at the column of lanes 0-126 move one
    lane down, the last lane's are overwritten; lane 0 keeps its own (the PTX ISA does not
    say what it holds after the shift: the interpreter's choice). It completes at issue, as
    tcgen05.cp does here."""
    yield None
    ref = agent.get(op.tmem)
    start = int(uniform(agent.get(op.column), mask, op, "the TMEM column"))
    column = ref.column + start
    if start < 0 or start + SHIFT_COLUMNS > ref.columns:
        raise RuleBroken(
            op, "bounds", f"shifts TMEM columns {start}-{start + SHIFT_COLUMNS - 1} of an "
            f"allocation of {ref.columns}",
        )  # fmt: skip
    span = range(column, column + SHIFT_COLUMNS)
    for tmem in pair_tmems(agent, op, ref):
        tmem_order.access(agent, op, tmem, span, write=True, asynchronous=True)
        block = tmem.cells[:, column : column + SHIFT_COLUMNS]
        block[1:] = block[:-1].copy()


def leaks(cta: Cta) -> list[Operation]:
    """The allocs whose TMEM is still allocated (P8)."""
    return [] if cta.tmem is None else [op for _, op in cta.tmem.live.values()]
