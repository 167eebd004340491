"""The tcgen05 MMA of sm_100a in the interpreter: `nvvm.tcgen05.mma` and `nvvm.tcgen05.commit`,
with what their kernels name them through: the pointers a memref is
(`builtin.unrealized_conversion_cast` of an SMEM buffer to `!llvm.ptr<3>`, of a TMEM
allocation to `!llvm.ptr<6>`: the interpreter's ref itself), the mbarriers of an SMEM word
(`nvvm.mbarrier.init.shared`, `nvvm.fence.mbarrier.init`, the parity waits
`nvvm.mbarrier.try_wait.parity.shared` / `test_wait`), and the instruction descriptor
(`copy.mma_instruction_descriptor`: its 32 bits).

Each thread that reaches `tcgen05.mma` issues one MMA (it is a single thread's instruction:
kernels issue it under `scf.if` of one thread). The MMA reads its instruction descriptor's
bits (kind's types, D's type, M, N, majors, negation; M 128 of one CTA only), A and B
through their SMEM descriptors' bits (`interpreter.mma.operand_offsets`, the tcgen05 form)
or A from TMEM (row r in lane r, its K elements' bytes in the lane's consecutive 32-bit
columns from the pointer's), and D in TMEM (row r in lane r, column j at the pointer's
column + j). It completes asynchronously, like a copy in flight, in issue order per agent:
at completion it reads SMEM (and A's TMEM) and writes D: `enable_input_d` false gives
A x B, else D * 2^-scale_input_d + A x B (the arithmetic of `interpreter.mma.mma`), and
the lanes `disable_output_lane` names keep their D. A CTA pair's MMA (`cta_group::2`, M 256,
issued by one CTA of the pair) reads A's rows 0-127 from the issuer's SMEM and 128-255 from
its peer's (the CTA whose rank differs in bit 0) at the same descriptor, B's first N/2 rows
from the issuer's and the rest from the peer's, and writes D's rows 0-127 to the issuer's
TMEM and 128-255 to the peer's, at the same columns (PTX ISA, the `.cta_group::2` data path;
not measured); its reads are logged in both CTAs' SMEM. Its SMEM read is logged at issue as the
async proxy's, retired by the thread's next `tcgen05.commit`: the commit arrives once on its
mbarrier when every MMA the agent issued before it completes, publishing their completion,
so a refill of the slots that no wait on that barrier orders after is a race (P2, P3) and
an MMA no wait covers at the return is P7. Its TMEM accesses (D, A in TMEM) go to
`tmem_order` at issue, and a commit is the before fence of its agent's accesses (P14: another
agent's access is ordered after them only through the commit's barrier and its own after
fence); within one agent TMEM is not race-checked: a `copy.tmem_load` of D before that wait
reads what TMEM holds then. A sparse MMA (`nvvm.tcgen05.mma.sp`, kind f16, M 128 of one CTA)
reads its compressed A (16 of K's 32 elements a row) through A's descriptor, B's 32 elements
of K, and the metadata column at its pointer's column plus the descriptor's selector (0 or
1), a TMEM read like A's (`sparse_a`: Mosaic GPU's layout; a group naming one element
twice, undefined in the ISA, leaves its row of D NaN). A commit's pointer may be an
mbarrier that
`nvvm.mbarrier.init.shared` made, or a `copy.barrier_init` group cast to `!llvm.ptr<3>`
(its barrier 0; `llvm.getelementptr` of i64 by an index, a value or a constant, for
another), as the protocol
analysis reads it. A commit with `multicast_mask` arrives on
the barrier at the same pointer in each CTA of the mask (its rank's bit). Not modelled (the
run stops): M 64, M 128 of a pair, an f16 D, sparse MMAs of another kind, shape or
selector, kind f8f6f4 with 6- or 4-bit types.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import builtin, llvm
from xdsl.ir import Operation, SSAValue

from copy_dialect.instruction_descriptor import MmaInstructionDescriptorOp
from interpreter import mma, tmem_order
from interpreter.machine import Agent, Cta, Step, Transfer, Wait
from interpreter.memory import SMEM_BYTES, SmemRef, units
from interpreter.ops_barriers import BarrierGroup, Mbarrier
from interpreter.ops_cluster import mask_ctas
from interpreter.ops_std import handles, set_result
from interpreter.ops_tmem import LANES, TmemRef, peer_of
from interpreter.tcgen05_async import Issued, smem_read, state_of
from interpreter.values import InterpretError, RuleBroken, uniform
from passes.nvvm.attributes import CTAGroupKind
from passes.nvvm.barrier import FenceMbarrierInitOp
from passes.nvvm.mbarrier import (
    MBarrierInitSharedOp,
    MBarrierTestWaitParitySharedOp,
    MBarrierTryWaitParitySharedOp,
)
from passes.nvvm.tcgen05_mma import TCGEN05_MMAS, MMAOpBase, Tcgen05CommitOp, Tcgen05MMASparseOp

UNMODELLED = "is not modelled by the interpreter"


# --- pointers, mbarriers, the instruction descriptor -------------------------------------------


@dataclass(frozen=True)
class BarrierPointer:
    """A `copy.barrier_init` group's pointer (`value`: the group, in each CTA): its barrier
    `index`."""

    group: BarrierGroup
    value: SSAValue
    index: int = 0


@handles(builtin.UnrealizedConversionCastOp)
def cast(agent: Agent, op: builtin.UnrealizedConversionCastOp, mask: np.ndarray) -> None:
    if len(op.inputs) == 1 and len(op.outputs) == 1:
        ref = agent.get(op.inputs[0])
        if isinstance(op.outputs[0].type, llvm.LLVMPointerType) and isinstance(
            ref, SmemRef | TmemRef
        ):
            agent.env[op.outputs[0]] = ref  # a memref is its pointer
            return
        if isinstance(ref, BarrierGroup):
            agent.env[op.outputs[0]] = BarrierPointer(ref, op.inputs[0])
            return
    raise InterpretError(
        op, f"a cast other than of an SMEM or TMEM memref to a pointer {UNMODELLED}"
    )


@handles(llvm.GEPOp)
def gep(agent: Agent, op: llvm.GEPOp, mask: np.ndarray) -> None:
    """A barrier group's pointer plus an i64 index (a value, or a constant of the op's
    `rawConstantIndices`): the group's barrier at that index."""
    base = agent.get(op.ptr)
    raw = tuple(op.rawConstantIndices.iter_values())
    if isinstance(base, BarrierPointer) and op.elem_type == builtin.i64 and len(raw) == 1:
        if raw[0] == llvm.GEP_USE_SSA_VAL and len(op.ssa_indices) == 1:
            i = int(uniform(agent.get(op.ssa_indices[0]), mask, op, "the barrier index"))
        elif raw[0] != llvm.GEP_USE_SSA_VAL and not op.ssa_indices:
            i = raw[0]
        else:
            i = None
        if i is not None:
            agent.env[op.result] = BarrierPointer(base.group, base.value, base.index + i)
            return
    raise InterpretError(
        op, f"a getelementptr other than of a copy.barrier_init group's pointer {UNMODELLED}"
    )


BARRIERS: weakref.WeakKeyDictionary[Cta, dict[int, Mbarrier]] = weakref.WeakKeyDictionary()


def smem_word(agent: Agent, op: Operation, value: object) -> SmemRef:
    ref = agent.get(value)  # type: ignore[arg-type]
    if not isinstance(ref, SmemRef):
        raise InterpretError(op, f"an mbarrier at this pointer {UNMODELLED} (an SMEM buffer's)")
    return ref


def raw_barrier(agent: Agent, op: Operation, value: object, cta: Cta | None = None) -> Mbarrier:
    """The mbarrier a pointer names, in the agent's CTA or in `cta` (a multicast's)."""
    pointer = agent.get(value)  # type: ignore[arg-type]
    if isinstance(pointer, BarrierPointer):
        group = pointer.group
        if cta is not None and cta is not agent.cta:
            group = cta.objects[pointer.value]  # type: ignore[assignment]
        barriers = group.barriers
        if not 0 <= pointer.index < len(barriers):
            raise RuleBroken(
                op, "P9",
                f"names barrier {pointer.index} of a group of {len(barriers)}: out of range",
            )  # fmt: skip
        return barriers[pointer.index]
    ref = smem_word(agent, op, value)
    found = BARRIERS.get(cta or agent.cta, {}).get(ref.base)
    if found is None:
        raise InterpretError(
            op, f"uses the mbarrier at SMEM byte {ref.base}, which no nvvm.mbarrier.init.shared "
            "initialized (before a barrier that orders it)",
        )  # fmt: skip
    return found


@handles(MBarrierInitSharedOp)
def mbarrier_init(agent: Agent, op: MBarrierInitSharedOp, mask: np.ndarray) -> Step:
    yield None
    if op.predicate is not None:
        mask = mask & np.broadcast_to(np.asarray(agent.get(op.predicate), bool), mask.shape)
    if not mask.any():
        return
    ref = smem_word(agent, op, op.addr)
    count = int(uniform(agent.get(op.count), mask, op, "the arrival count"))
    bars = BARRIERS.setdefault(agent.cta, {})
    bars[ref.base] = Mbarrier(agent.cta, f"the mbarrier at SMEM byte {ref.base}", count)


@handles(FenceMbarrierInitOp)
def fence_mbarrier_init(agent: Agent, op: FenceMbarrierInitOp, mask: np.ndarray) -> None:
    return None  # orders the init for the cluster's async proxy: the init is already there


@handles(MBarrierTryWaitParitySharedOp, MBarrierTestWaitParitySharedOp)
def mbarrier_wait(agent: Agent, op: Operation, mask: np.ndarray) -> Step:
    mb = raw_barrier(agent, op, op.operands[0])
    parity = int(uniform(agent.get(op.operands[1]), mask, op, "the parity")) & 1
    if mb.phase % 2 == parity:
        yield Wait(
            lambda: mb.phase % 2 != parity, lambda: f"parity {parity} of {mb.describe()}", op
        )
    mb.acquire(agent, mask)
    yield None


@handles(MmaInstructionDescriptorOp)
def instruction_descriptor(agent: Agent, op: MmaInstructionDescriptorOp, mask: np.ndarray) -> None:
    set_result(agent, op, np.uint32(op.fields.encoded).view(np.int32))


# --- the instruction descriptor's bits -------------------------------------------------------

KIND_TYPES = {
    "f16": {0: "f16", 1: "bf16"},
    "tf32": {2: "tf32"},
    "f8f6f4": {0: "e4m3", 1: "e5m2"},
    "i8": {0: "u8", 1: "s8"},
}
"""The 3-bit A/B formats of each kind that the interpreter multiplies."""


@dataclass(frozen=True)
class Instruction:
    a: str
    b: str
    integer: bool
    saturate: bool
    negate: tuple[bool, bool]
    k_major: tuple[bool, bool]
    m: int
    n: int
    sparse: bool = False
    selector: int = 0


def instruction(op: MMAOpBase, idesc: int) -> Instruction:
    """The fields of instruction descriptor `idesc` (PTX ISA, "Instruction descriptor")."""
    kind = op.kind.data.value
    formats = KIND_TYPES.get(kind, {})
    a, b = (idesc >> 7) & 7, (idesc >> 10) & 7
    d = (idesc >> 4) & 3
    if a not in formats or b not in formats:
        raise InterpretError(op, f"kind {kind} with A/B formats {a}/{b} {UNMODELLED}")
    if d not in (1, 2) or (d == 2) != (kind == "i8"):
        raise InterpretError(op, f"D format {d} with kind {kind} {UNMODELLED} (f32 or s32 D)")
    sparse = bool(idesc >> 2 & 1)
    if sparse != op.SPARSE:
        raise RuleBroken(
            op, "MI9",
            f"an instruction descriptor {'with' if sparse else 'without'} the sparse bit "
            f"under {op.name}: the MMA would read A as {'sparse' if sparse else 'dense'}",
        )  # fmt: skip
    m, n = ((idesc >> 24) & 0x1F) << 4, ((idesc >> 17) & 0x3F) << 3
    pair = op.ctaGroup.data == CTAGroupKind.CTA_2
    if sparse:
        sparse_modelled(op, kind, m, pair, idesc & 3)
    if m != LANES * (2 if pair else 1):
        raise InterpretError(
            op, f"an MMA of M = {m} {UNMODELLED} (M = 128 of one CTA, 256 of a CTA pair)"
        )
    return Instruction(
        formats[a], formats[b], d == 2, bool(idesc >> 3 & 1),
        (bool(idesc >> 13 & 1), bool(idesc >> 14 & 1)),
        (not idesc >> 15 & 1, not idesc >> 16 & 1), m, n, sparse, idesc & 3,
    )  # fmt: skip


def sparse_modelled(op: MMAOpBase, kind: str, m: int, pair: bool, selector: int) -> None:
    """The sparse MMAs the interpreter runs: kind f16 (2:4) of M 128 in one CTA, A in SMEM,
    the selector 0 or 1 (Mosaic GPU's, whose metadata layout `sparse_a` reads)."""
    if kind != "f16" or m != LANES or pair or selector > 1:
        raise InterpretError(
            op, f"a sparse MMA of kind {kind}, M {m}{' of a CTA pair' if pair else ''}, "
            f"selector {selector} {UNMODELLED} (kind f16, M 128 of one CTA, selector 0 or 1)",
        )  # fmt: skip
    if isinstance(op, Tcgen05MMASparseOp) and op.a_in_tmem:
        raise InterpretError(op, f"a sparse MMA with A in TMEM {UNMODELLED}")


def sparse_a(compressed: np.ndarray, words: np.ndarray) -> np.ndarray:
    """The dense A (128, 32) of a kind::f16 sparse MMA from its compressed A (128, 16: the
    two kept elements of each 4 of K, in order) and the metadata column it reads (128 lanes of
    32 bits). The layout is Mosaic GPU's (`format_tcgen05_sparse_metadata` of 16-bit operands,
    PTX ISA 9.7.16.10.8.4, "sparsity selector kind::f16 M 128"): lane 16 m0 + 8 k1 + m2 holds,
    in its 2-bit fields 8 m1 + k2 (the lowest first), the index within its group of 4 of K of
    row 16 m0 + 8 m1 + m2's kept element 8 k1 + k2 (group (8 k1 + k2) // 2, the first or
    second of the group's two by its parity). Two equal indices in a group are undefined
    (PTX ISA, sparse matrix storage: 0b0000, 0b0101, 0b1010, 0b1111): the row of A is NaN,
    and so the row of D (a data fault, not the protocol's: the run goes on)."""
    lane = np.arange(LANES)[:, None]
    field = np.arange(16)[None, :]
    values = (words.astype(np.uint32)[:, None] >> (2 * field).astype(np.uint32)) & 3
    rows = (lane // 16) * 16 + (field // 8) * 8 + lane % 8
    kept = ((lane // 8) % 2) * 8 + field % 8
    index = np.empty((LANES, 16), np.int64)
    index[rows, kept] = values
    pairs = index.reshape(LANES, 8, 2)
    dense = np.zeros((LANES, 32), np.float32)
    groups = np.arange(8)
    for j in (0, 1):
        dense[lane, 4 * groups[None, :] + pairs[:, :, j]] = compressed[:, 2 * groups + j]
    dense[(pairs[:, :, 0] == pairs[:, :, 1]).any(axis=1)] = np.nan
    return dense


# --- the MMA and its commit --------------------------------------------------------------------


def lane_value(agent: Agent, value: object, t: int) -> object:
    v = agent.get(value)  # type: ignore[arg-type]
    return (
        v[t] if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == agent.cta.threads else v
    )


def smem_operand(
    op: Operation, desc: int, k_major: bool, rows: int, kind: str, k: int | None = None
) -> np.ndarray:
    """The SMEM offsets of a `rows` x `k` operand (k: one MMA's 32 bytes of K)."""
    bits = mma.ELEMENT_BITS[kind]
    k = 256 // bits if k is None else k
    swizzle = mma.fields(desc, tcgen05=True).swizzle
    if k_major and swizzle != mma.UNIT and k * bits // 8 > swizzle:
        raise InterpretError(
            op, f"a K-major operand of {k * bits // 8} bytes of K under a {swizzle}-byte "
            f"swizzle {UNMODELLED} (Mosaic GPU refuses it: a wider swizzle, or MN-major)",
        )  # fmt: skip
    try:
        offsets = mma.operand_offsets(desc, k_major, rows, k, bits, tcgen05=True)
    except mma.DecodeError as e:
        raise InterpretError(op, str(e)) from None
    if offsets.min() < 0 or offsets.max() + bits // 8 > SMEM_BYTES:
        raise RuleBroken(op, "bounds", f"descriptor {desc:#018x} reaches outside the CTA's SMEM")
    return offsets


def tmem_columns(op: Operation, ref: TmemRef, columns: int, what: str) -> slice:
    if columns > ref.columns:
        raise RuleBroken(
            op, "bounds", f"{what} takes {columns} TMEM columns of an allocation of {ref.columns}"
        )
    return slice(ref.column, ref.column + columns)


@handles(*TCGEN05_MMAS)
def tcgen05_mma(agent: Agent, op: MMAOpBase, mask: np.ndarray) -> Step:
    yield None
    for t in np.nonzero(mask)[0]:
        issue(agent, op, int(t))


def issue(agent: Agent, op: MMAOpBase, t: int) -> None:
    """The MMA thread `t` issues."""
    state, machine = state_of(agent), agent.cta.machine
    idesc = int(lane_value(agent, op.idesc, t)) & 0xFFFFFFFF
    ins = instruction(op, idesc)
    k = 256 // mma.ELEMENT_BITS[ins.a]
    d = agent.get(op.matrixD)
    if not isinstance(d, TmemRef):
        raise InterpretError(op, "D must be a TMEM allocation's pointer")
    d_cols = tmem_columns(op, d, ins.n, "D")
    pair = op.ctaGroup.data == CTAGroupKind.CTA_2
    peer = peer_of(agent, op) if pair else None
    b_rows = ins.n // 2 if pair else ins.n
    b_desc = int(lane_value(agent, op.matrixB, t))
    b_k = k * (2 if ins.sparse else 1)  # a sparse MMA's B has K = 2 x A's
    offsets = {"B": smem_operand(op, b_desc, ins.k_major[1], b_rows, ins.b, b_k)}
    meta = sparse_metadata(agent, op, ins)
    a_ref = agent.get(op.matrixA)
    a_cols = None
    if op.a_in_tmem:
        if not isinstance(a_ref, TmemRef):
            raise InterpretError(op, "A in TMEM must be a TMEM allocation's pointer")
        a_cols = tmem_columns(op, a_ref, k * mma.ELEMENT_BITS[ins.a] // 32, "A")
    else:
        desc = int(lane_value(agent, op.matrixA, t))
        offsets["A"] = smem_operand(op, desc, ins.k_major[0], LANES, ins.a)
    if pair and a_cols is not None:
        raise InterpretError(op, f"a CTA pair's MMA with A in TMEM {UNMODELLED}")
    if a_cols is not None:
        assert isinstance(a_ref, TmemRef)
        cols = range(a_cols.start, a_cols.stop)
        tmem_order.access(agent, op, a_ref.tmem, cols, write=False, asynchronous=True)
    cols = range(d_cols.start, d_cols.stop)
    tmem_order.access(agent, op, d.tmem, cols, write=True, asynchronous=True)
    if meta is not None:
        meta_ref, meta_col = meta
        tmem_order.access(
            agent, op, meta_ref.tmem, range(meta_col, meta_col + 1), write=False, asynchronous=True
        )
    if peer is not None:
        if peer.tmem is None or not any(
            first <= d.column < first + n for first, (n, _) in peer.tmem.live.items()
        ):
            raise RuleBroken(
                op, "bounds", f"writes D into CTA {peer.rank}'s TMEM, which has no allocation there"
            )
        tmem_order.access(agent, op, peer.tmem, cols, write=True, asynchronous=True)
    touched = np.concatenate([units(o, 1, 16) for o in offsets.values()])
    what = "the tcgen05.mma reads (through its descriptors)"
    access = smem_read(agent, op, np.unique(touched), what)
    epoch = access.epoch
    ctas = [agent.cta] if peer is None else [agent.cta, peer]
    for cta in ctas:
        machine.races(cta.smem.log.check(access, agent.clock), cta)
    enable = bool(lane_value(agent, op.enableInputD, t))
    scale = 0 if op.scaleInputD is None else int(lane_value(agent, op.scaleInputD, t))
    lanes = LANES * len(ctas)
    keep = np.zeros(lanes, bool)
    if op.disableOutputLane is not None:
        words = np.asarray(lane_value(agent, op.disableOutputLane, t)).astype(np.int64)
        keep = ((words[np.arange(lanes) // 32] >> (np.arange(lanes) % 32)) & 1).astype(bool)
    dtype = np.int32 if ins.integer else np.float32
    signs = [-1 if n else 1 for n in ins.negate]

    def compute() -> None:
        if a_cols is None:
            a = np.concatenate([mma.read_operand(c.smem.bytes, offsets["A"], ins.a) for c in ctas])
        else:
            assert isinstance(a_ref, TmemRef)
            raw = np.ascontiguousarray(a_ref.tmem.cells[:, a_cols]).view(np.uint8)
            a = mma.elements(raw.reshape(LANES, k, -1), ins.a)
        if meta is not None:
            meta_ref, meta_col = meta
            a = sparse_a(a, meta_ref.tmem.cells[:, meta_col])
        b = np.concatenate([mma.read_operand(c.smem.bytes, offsets["B"], ins.b) for c in ctas])
        for i, cta in enumerate(ctas):
            tmem = d.tmem if cta is agent.cta else cta.tmem
            assert tmem is not None
            rows = slice(i * LANES, (i + 1) * LANES)
            old = tmem.cells[:, d_cols].view(dtype)
            acc = None
            if enable:
                acc = old if ins.integer else old * np.float32(2.0**-scale)
            out = mma.mma(a[rows] * signs[0], b * signs[1], acc, ins.integer, ins.saturate)
            tmem.cells[:, d_cols] = np.where(keep[rows, None], old, out).view(np.uint32)

    item = Issued(compute)
    done = dict.fromkeys(ctas, epoch)
    item.transfer = Transfer(op, agent.cta, lambda: complete(agent, item), done)
    machine.issue(item.transfer)
    state.pending.append(item)


def sparse_metadata(agent: Agent, op: MMAOpBase, ins: Instruction) -> tuple[TmemRef, int] | None:
    """A sparse MMA's metadata: the TMEM ref and the column it reads (the pointer's column
    plus the selector); None for a dense MMA."""
    if not isinstance(op, Tcgen05MMASparseOp):
        return None
    ref = agent.get(op.sparseMetadata)
    if not isinstance(ref, TmemRef):
        raise InterpretError(op, "the sparse metadata must be a TMEM allocation's pointer")
    col = tmem_columns(op, ref, ins.selector + 1, "the sparse metadata").stop - 1
    return ref, col


def complete(agent: Agent, item: Issued) -> None:
    """The scheduler completes `item`: the agent's earlier MMAs first, in issue order."""
    state, machine = state_of(agent), agent.cta.machine
    while state.pending:
        first = state.pending.pop(0)
        if first is not item:
            assert first.transfer is not None
            first.transfer.done = True
            machine.in_flight.remove(first.transfer)
        first.compute()
        for then in first.after:
            then()
        if first is item:
            return


@handles(Tcgen05CommitOp)
def commit(agent: Agent, op: Tcgen05CommitOp, mask: np.ndarray) -> Step:
    yield None
    state = state_of(agent)
    tmem_order.fence(agent, before=True, commit=True)
    targets = commit_targets(agent, op, mask)
    for t in np.nonzero(mask)[0]:
        bars = [raw_barrier(agent, op, op.addr, cta) for cta in targets]
        state.commits += 1
        one = np.zeros_like(mask)
        one[t] = True
        for mb in bars:
            mb.release(agent, one)
        clock = agent.release()
        clock[state.component] = max(clock.get(state.component, 0), state.commits)

        def arrive(bars: list[Mbarrier] = bars, clock: dict = clock) -> None:
            for mb in bars:
                mb.arrive(op, 1, clock)

        if state.pending:
            state.pending[-1].after.append(arrive)
        else:
            arrive()


def commit_targets(agent: Agent, op: Tcgen05CommitOp, mask: np.ndarray) -> list[Cta]:
    """The CTAs whose mbarrier (at the commit's pointer) receives its arrival: its own, or
    with `multicast_mask` each CTA of the cluster whose rank is a bit of the mask."""
    if op.multicastMask is None:
        return [agent.cta]
    return mask_ctas(agent, op, op.multicastMask, mask, "P5")
