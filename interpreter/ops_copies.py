"""Async copies: SMEM buffers, TMA and bulk tile loads and stores (reductions included),
cp.async copies, their groups and the fence between threads and the async proxy.

A copy is issued at its op and completes when the scheduler says: a load then reads its
GMEM box (elements outside the array read as its OOB fill) and writes the box into the
SMEM slot where the dialect's layout puts each element (swizzled or not); a store reads its
SMEM box and writes (or reduces into) the part of the GMEM box inside the array. A
leader-tracked load of a CTA pair (`pair_load`) writes each CTA's box into its own SMEM and
completes its bytes on the pair leader's barrier. At issue,
the SMEM bytes it will write (a load) or read (a store) go into the CTA's access log, with
the epoch of its completion (interpreter.races), so that any thread access of them that its
completion is not ordered with is a race, whatever the schedule."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
from xdsl.dialects.builtin import FloatTF32Type
from xdsl.ir import Operation

from copy_dialect import ops as copy
from copy_dialect.attributes import Implementation, OOBMode, ReductionKind
from facts.hardware import STORE_CHUNK_BYTES
from interpreter import packed
from interpreter.gmem_log import note_box
from interpreter.machine import Agent, Cta, Step, Transfer, Wait
from interpreter.memory import GmemRef, SmemRef, read_smem, units, write_smem
from interpreter.ops_barriers import executions
from interpreter.ops_cluster import check_returned, collective_group, log_remote, peer_object
from interpreter.ops_roles import block_sync
from interpreter.ops_std import handles
from interpreter.ops_tensormap import map_array, track
from interpreter.races import Access
from interpreter.values import (
    InterpretError,
    RuleBroken,
    bf16_to_f32,
    f32_to_bf16,
    f32_to_tf32,
    storage_dtype,
    uniform,
)


@handles(copy.AllocSmemOp)
def alloc_smem(agent: Agent, op: copy.AllocSmemOp, mask: np.ndarray) -> None:
    t, smem = op.result.type, agent.cta.smem
    ref = packed.allocate(smem, t) if packed.is_packed(t.element_type) else smem.allocate(t)
    agent.env[op.result] = agent.cta.objects[op.result] = ref


@handles(copy.PrefetchOp)
def prefetch(agent: Agent, op: copy.PrefetchOp, mask: np.ndarray) -> None:
    return None  # a hint: no effect on memory


def box_origin(agent: Agent, op: Operation, values: Any, mask: np.ndarray) -> list[int]:
    return [int(uniform(agent.get(v), mask, op, "the copy's coordinates")) for v in values]


def gmem_box(g: Any, ref: GmemRef, origin: list[int]) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """The GMEM index of each box element (row-major) and whether it lies in the array."""
    box = g.issued_box
    n = ref.array.ndim
    lead = n - len(box)
    grid = np.indices(box).reshape(len(box), -1)
    coords = []
    for d in range(n):
        if d < lead:
            coords.append(np.full(grid.shape[1], origin[d], dtype=np.int64))
        else:
            coords.append(origin[d] + grid[d - lead])
    inside = np.ones(grid.shape[1], dtype=bool)
    for d, c in enumerate(coords):
        inside &= (c >= 0) & (c < ref.array.shape[d])
    return tuple(coords), inside


def slot_of(agent: Agent, op: Operation, g: Any, ref: SmemRef, mask: np.ndarray) -> tuple[int, ...]:
    slot = tuple(box_origin(agent, op, g.smem_indices, mask))
    lead = len(ref.shape) - len(g.box_shape)
    slot = slot + (0,) * (lead - len(slot))
    for d, (s, n) in enumerate(zip(slot, ref.shape, strict=False)):
        if not 0 <= s < n:
            raise RuleBroken(
                op, "bounds", f"names slot {s} of dim {d} of an SMEM buffer of {n}: out of range"
            )
    return slot


def log_async(
    agent: Agent,
    op: Operation,
    offsets: np.ndarray,
    size: int,
    write: bool,
    epoch: Any,
    unit: int = 16,
    elected: bool = True,
) -> None:
    """The SMEM an async copy will write or read, in the units it moves (16 bytes for TMA
    and bulk copies, 4 for cp.async's smallest chunk); `elected`: issued by the agent's
    elected thread (every copy but cp.async's, which each thread issues)."""
    access = Access(
        write, True, units(offsets, size, unit), None, epoch, agent, None, op,
        f"the async copy {'writes' if write else 'reads'}", unit=unit, elected=elected,
    )  # fmt: skip
    agent.cta.machine.races(agent.cta.smem.log.check(access, agent.clock), agent.cta)


def predicated_off(agent: Agent, g: Any, op: Operation, mask: np.ndarray) -> bool:
    if g.predicate is None:
        return False
    return not bool(uniform(agent.get(g.predicate), mask, op, "the copy's predicate"))


UNMODELLED = "is not modelled by the interpreter yet"


@handles(copy.AsyncCopyOp)
def async_copy(agent: Agent, op: copy.AsyncCopyOp, mask: np.ndarray) -> Step:
    yield None
    g = op.geometry()
    if g.leader_tracked and not g.is_load:
        raise InterpretError(op, f"a leader-tracked store {UNMODELLED}")
    if predicated_off(agent, g, op, mask):
        return
    tmap = None if op.map is None else agent.get(op.map)
    gref = agent.get(g.gmem) if tmap is None else map_array(agent, op, tmap)
    if not isinstance(gref, GmemRef):
        raise InterpretError(op, f"a copy of this GMEM ref {UNMODELLED}")
    origin = box_origin(agent, op, g.gmem_indices, mask)
    if packed.is_packed(g.element_type):  # FP4, FP6: the copy of their bytes
        g, origin = packed.byte_form(op, g, origin)
    if agent.cta.machine.gmem_log is not None:
        note_box(agent, op, gref, *gmem_box(g, gref, origin), mask, not g.is_load)
    sref = agent.get(g.smem)
    assert isinstance(sref, SmemRef)
    slot = slot_of(agent, op, g, sref, mask)
    dtype = storage_dtype(g.element_type)
    issue = agent.release()
    if not g.is_load:
        coords, inside = gmem_box(g, gref, origin)
        offsets = sref.slot_offsets(slot, g.issued_box)
        track(tmap, store(agent, op, g, gref, offsets, coords, inside, dtype))
        return
    if g.leader_tracked:
        transfer = yield from pair_load(agent, op, g, gref, origin, slot, dtype, issue, mask)
        track(tmap, transfer)
        return
    split = g.multicast
    destinations, extra = [agent.cta], 0
    if split is not None:  # this CTA's share of the box, into every CTA of its group
        destinations, r = collective_group(agent, g.collective_dims)
        origin[g.gmem_dim(split.dim)] += r * split.share_extent
        extra = r * g.share_bytes
    coords, inside = gmem_box(g, gref, origin)
    transfer = yield from load(
        agent, op, g, gref, slot, extra, destinations, coords, inside, dtype, issue, mask
    )
    track(tmap, transfer)


def fill_value(g: Any, dtype: np.dtype) -> Any:
    if g.oob == OOBMode.NAN:
        if dtype == np.uint16:  # bf16
            return np.uint16(0x7FFF)
        return np.array(np.nan).astype(dtype)
    return dtype.type(0)


def loaded(
    op: Operation, g: Any, gref: GmemRef, coords: tuple, inside: np.ndarray, dtype: np.dtype
) -> np.ndarray:
    """The box's elements as a load leaves them in SMEM: the OOB fill outside the array; a
    TMA load of tf32 elements (through a TFLOAT32 map) rounds them to tf32, to nearest
    even (docs/hardware.md, "TFLOAT32 maps"), where cp.async and bulk copies move bits."""
    values = np.full(inside.shape, fill_value(g, dtype), dtype=dtype)
    if inside.any():  # (an array of no elements has none to read)
        values[inside] = gref.array[tuple(c[inside] for c in coords)]
    if isinstance(g.element_type, FloatTF32Type) and (
        op.resolved_implementation() == Implementation.TMA
    ):
        values = f32_to_tf32(values)
    return values


def load(
    agent: Agent,
    op: Operation,
    g: Any,
    gref: GmemRef,
    slot: tuple[int, ...],
    extra: int,
    destinations: list[Cta],
    coords: tuple,
    inside: np.ndarray,
    dtype: np.dtype,
    issue: dict,
    mask: np.ndarray,
) -> Generator[None, None, Transfer]:
    """The box (this CTA's share of it) into the slot of each destination CTA, completing
    its bytes on the barrier there; the issuer's own arrival expects the whole box."""
    machine = agent.cta.machine
    cp_async = op.resolved_implementation() == Implementation.CP_ASYNC
    arrivals = copy.arrivals_of(op)
    made = 0 if arrivals is None else executions(arrivals.issuer, mask) * arrivals.each
    nbytes = int(np.prod(g.issued_box)) * dtype.itemsize
    targets = []
    for cta in destinations:
        if cta is not agent.cta:
            check_returned(agent, op, cta)  # (a peer's write into a CTA that is gone: P7)
        ref = (
            agent.get(g.smem)
            if cta is agent.cta
            else peer_object(agent, op, cta, g.smem, "SMEM buffer")
        )
        offsets = ref.slot_offsets(slot, g.issued_box, extra)
        mb = None
        if g.barrier is not None:
            group = (
                agent.get(g.barrier)
                if cta is agent.cta
                else peer_object(agent, op, cta, g.barrier, "barrier group")
            )
            mb = group.at(agent, op, g.barrier_index, mask)
        targets.append((cta, offsets, mb))
    # the issuer's barrier (None: a multicast gather4's issuer outside its mask, which
    # makes no arrival: `ops_gather4.multicast_targets`)
    own = next((mb for cta, _, mb in targets if cta is agent.cta), None)
    epoch = None
    if g.barrier is None:
        if not cp_async:
            raise InterpretError(op, "a TMA load without a barrier cannot complete")
        groups = agent.groups
        epoch = (groups.component["cp_async"], len(groups.committed["cp_async"]) + 1)
    elif own is not None:
        epoch = (own.component, own.phase + 1)
        if not cp_async and made:  # the issuer arrives, expecting the (whole) box's bytes
            own.arrive(op, made, issue, g.credited_bytes)
    for cta, offsets, mb in targets:
        here = epoch if mb is None else (mb.component, mb.phase + 1)
        unit = 4 if cp_async else 16
        if cta is agent.cta:
            log_async(agent, op, offsets, dtype.itemsize, True, here, unit, not cp_async)
        else:
            log_remote(agent, op, cta, offsets, dtype.itemsize, here, unit)

    def complete() -> None:
        values = loaded(op, g, gref, coords, inside, dtype)
        for cta, offsets, mb in targets:
            write_smem(cta.smem, offsets, values, dtype)
            if mb is None:
                continue
            if cp_async:  # each thread's arrival is its copy's completion
                mb.arrive(op, made, issue)
            else:
                mb.complete_tx(op, nbytes, issue)

    epochs = {
        cta: (epoch if mb is None else (mb.component, mb.phase + 1)) for cta, _, mb in targets
    }
    transfer = Transfer(op, agent.cta, complete, epochs)
    machine.issue(transfer)
    if g.barrier is None:
        agent.groups.open["cp_async"].append(transfer)
    yield None
    return transfer


def pair_load(
    agent: Agent,
    op: Operation,
    g: Any,
    gref: GmemRef,
    origin: list[int],
    slot: tuple[int, ...],
    dtype: np.dtype,
    issue: dict,
    mask: np.ndarray,
) -> Generator[None, None, Transfer]:
    """A leader-tracked load of a CTA pair (`.cta_group::2`): this CTA's box (`partitioned
    d`: its part, index i of the pair starting i box extents along d; `replicated`: the
    whole box) into its own SMEM, its bytes completing on the barrier of the pair's leader
    (the even rank: the lowering clears the peer bit of the barrier's address). As the
    lowering, the CTA of collective index 0 arrives on its own barrier, expecting both CTAs'
    boxes (the leader, where the collective axis is the pair's); the peer's own barrier
    gets nothing."""
    _, index = collective_group(agent, g.collective_dims)
    axis = g.op.leader_tracked.partition_axis
    if axis is not None:
        origin[g.gmem_dim(axis)] += index * g.box_shape[axis]
    coords, inside = gmem_box(g, gref, origin)
    transfer = yield from pair_transfer(
        agent, op, g, gref, (coords, inside), slot, dtype, issue, mask, index
    )
    return transfer


def pair_transfer(
    agent: Agent,
    op: Operation,
    g: Any,
    gref: GmemRef,
    box: tuple[tuple, np.ndarray],
    slot: tuple[int, ...],
    dtype: np.dtype,
    issue: dict,
    mask: np.ndarray,
    index: int,
) -> Generator[None, None, Transfer]:
    """The transfer of a CTA pair's load: the elements `box` (their GMEM indices and which
    lie inside) into this CTA's slot, completing on the pair leader's barrier; the CTA of
    pair `index` 0 arrives on its own barrier expecting both CTAs' bytes."""
    coords, inside = box
    leader = agent.cta.machine.ctas[agent.cta.rank & ~1]
    offsets = agent.get(g.smem).slot_offsets(slot, g.issued_box)
    group = (
        agent.get(g.barrier)
        if leader is agent.cta
        else peer_object(agent, op, leader, g.barrier, "barrier group")
    )
    mb = group.at(agent, op, g.barrier_index, mask)
    arrivals = copy.arrivals_of(op)
    if index == 0 and arrivals is not None:
        mine = agent.get(g.barrier).at(agent, op, g.barrier_index, mask)
        mine.arrive(op, executions(arrivals.issuer, mask) * arrivals.each, issue, g.credited_bytes)
    epoch = (mb.component, mb.phase + 1)
    log_async(agent, op, offsets, dtype.itemsize, True, epoch)
    nbytes = int(np.prod(g.issued_box)) * dtype.itemsize
    own = agent.cta

    def complete() -> None:
        values = loaded(op, g, gref, coords, inside, dtype)
        write_smem(own.smem, offsets, values, dtype)
        mb.complete_tx(op, nbytes, issue)

    transfer = Transfer(op, own, complete, {own: epoch})
    agent.cta.machine.issue(transfer)
    yield None
    return transfer


def store(
    agent: Agent,
    op: Operation,
    g: Any,
    gref: GmemRef,
    offsets: np.ndarray,
    coords: tuple,
    inside: np.ndarray,
    dtype: np.dtype,
) -> Transfer:
    cta = agent.cta
    groups = agent.groups
    number = len(groups.committed["bulk"]) + 1
    log_async(agent, op, offsets, dtype.itemsize, False, (groups.component["read"], number))
    reduction = g.reduction
    over, addresses = overrun(agent, op, gref, coords, dtype)

    def complete() -> None:
        box = read_smem(cta.smem, offsets, dtype)
        target = tuple(c[inside] for c in coords)
        if reduction is None:
            gref.array[target] = box[inside]
            gref.flat[addresses] = box[over]  # the rest of the last 16-byte chunk (TR19)
        else:
            gref.array[target] = reduce(reduction, gref.array[target], box[inside], op)

    # The CTA may return once the store has read its SMEM (wait_group read): its writes
    # to GMEM complete all the same.
    transfer = Transfer(op, cta, complete, {cta: (groups.component["read"], number)})
    agent.cta.machine.issue(transfer)
    groups.open["bulk"].append(transfer)
    return transfer


def overrun(
    agent: Agent, op: Operation, gref: GmemRef, coords: tuple, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """TR19: a TMA store writes whole 16-byte chunks of the innermost dim, so into a tensor
    whose innermost extent is not a multiple of 16 bytes it also writes the box's elements
    from the extent to the chunk's end, into the memory after each innermost row it reaches
    (measured on an H200). The verifier refuses static extents and the runtime the arrays
    it launches with; a dynamic extent run here directly, or a map's dims rewritten in the
    kernel, still reach it. Reported at issue; the box elements written past the extent
    and their indices in the caller's buffer (those inside it) are returned, for a plain
    store to write (a reduction's overrun was not measured: reported only)."""
    none = np.zeros(coords[0].shape, dtype=bool), np.zeros(0, dtype=np.int64)
    if op.resolved_implementation() != Implementation.TMA or gref.array.ndim == 0:
        return none
    extent, chunk = gref.array.shape[-1], max(1, STORE_CHUNK_BYTES // dtype.itemsize)
    end = -(-extent // chunk) * chunk
    last = coords[-1]
    over = (last >= extent) & (last < end)
    for c, n in zip(coords[:-1], gref.array.shape[:-1], strict=True):
        over &= (c >= 0) & (c < n)
    if not over.any():
        return none
    agent.cta.machine.report(
        "TR19", op,
        f"stores into a tensor whose innermost extent is {extent} elements "
        f"({extent * dtype.itemsize} bytes), not a multiple of {STORE_CHUNK_BYTES} bytes: TMA "
        f"writes whole {STORE_CHUNK_BYTES}-byte chunks, so the box's {end - extent} elements "
        "after the extent overwrite the memory after each innermost row it reaches (pad the "
        f"innermost extent to a multiple of {chunk} elements)",
        agent.cta,
    )  # fmt: skip
    indices = [c[over] for c in coords]
    addresses = gref.offset + sum(
        i * (s // dtype.itemsize) for i, s in zip(indices, gref.array.strides, strict=True)
    )
    assert gref.flat is not None
    inside = (addresses >= 0) & (addresses < gref.flat.size)
    mask = over.copy()
    mask[np.nonzero(over)[0][~inside]] = False
    return mask, np.asarray(addresses[inside], dtype=np.int64)


def reduce(kind: ReductionKind, old: np.ndarray, new: np.ndarray, op: Operation) -> np.ndarray:
    """`old` combined with `new` elementwise, in their storage dtype. bf16 (stored as its 16
    bits) is combined in f32 and rounded to nearest even: one rounding, as the hardware's
    bf16 add (an f32 sum of two bf16 values is exact or rounds innocuously)."""
    if old.dtype == np.uint16:  # bf16
        wide = reduce(kind, bf16_to_f32(old), bf16_to_f32(new), op)
        return f32_to_bf16(wide)
    if kind == ReductionKind.ADD:
        return old + new
    if kind in (ReductionKind.UMIN, ReductionKind.UMAX):  # signless ints compared unsigned
        u = f"uint{old.dtype.itemsize * 8}"
        pick = np.minimum if kind == ReductionKind.UMIN else np.maximum
        return pick(old.view(u), new.view(u)).view(old.dtype)
    if kind in (ReductionKind.MIN, ReductionKind.SMIN):
        return np.minimum(old, new)
    if kind in (ReductionKind.MAX, ReductionKind.SMAX):
        return np.maximum(old, new)
    if kind == ReductionKind.AND:
        return old & new
    if kind == ReductionKind.OR:
        return old | new
    if kind == ReductionKind.XOR:
        return old ^ new
    if kind in (ReductionKind.INC, ReductionKind.DEC):  # PTX's wrapping inc and dec (u32)
        o, n = old.view(np.uint32), new.view(np.uint32)
        if kind == ReductionKind.INC:
            out = np.where(o >= n, np.uint32(0), o + np.uint32(1))
        else:
            out = np.where((o == 0) | (o > n), n, o - np.uint32(1))
        return out.astype(np.uint32).view(old.dtype)
    raise InterpretError(op, f"the reduction '{kind}' {UNMODELLED}")


@handles(copy.CommitGroupOp)
def commit_group(agent: Agent, op: copy.CommitGroupOp, mask: np.ndarray) -> Step:
    yield None
    kind = "bulk" if op.group.data is copy.GroupKind.BULK else "cp_async"
    groups = agent.groups
    groups.committed[kind].append(groups.open[kind])
    groups.open[kind] = []


@handles(copy.WaitGroupOp)
def wait_group(agent: Agent, op: copy.WaitGroupOp, mask: np.ndarray) -> Step:
    kind = "bulk" if op.group.data is copy.GroupKind.BULK else "cp_async"
    groups = agent.groups
    committed = groups.committed[kind]
    retired = max(0, len(committed) - op.pending.value.data)
    waited = [t for group in committed[:retired] for t in group]
    if not all(t.done for t in waited):
        yield Wait(
            lambda: all(t.done for t in waited),
            lambda: f"{len([t for t in waited if not t.done])} {kind} copies to complete",
            op,
        )
    read_only = kind == "bulk" and op.is_read_only
    for name in ("read",) if read_only else ((kind, "read") if kind == "bulk" else (kind,)):
        component = groups.component[name]
        if agent.clock.get(component, 0) < retired:
            agent.clock[component] = retired
    yield from block_sync(agent, op, mask)


@handles(copy.FenceAsyncSharedOp)
def fence(agent: Agent, op: copy.FenceAsyncSharedOp, mask: np.ndarray) -> Step:
    yield None
    agent.cta.smem.log.fence(agent)
    yield from block_sync(agent, op, mask)
