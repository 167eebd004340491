"""Tensor-core ops: `copy.matrix_descriptor` (the 64-bit SMEM matrix descriptor, the bits the
lowering makes), the warpgroup MMA of sm_90a (`nvvm.wgmma.fence.aligned`, `.mma_async`,
`.commit.group.sync.aligned`, `.wait.group.sync.aligned N`) and the LLVM struct ops that
hold its accumulator (`llvm.mlir.zero`, `llvm.mlir.undef`, `llvm.extractvalue`,
`llvm.insertvalue`, and the empty `llvm.inline_asm` whose outputs are tied to its inputs,
CUTLASS's `warpgroup_fence_operand`).

A struct is `Registers`: one row of fields per thread. `mma_async` is the warpgroup's: each
warpgroup of the threads that reach it (all 128 threads of each, or P10) decodes its two
descriptors from their bits alone (`interpreter.mma.operand_offsets`: a wrong descriptor
reads the wrong bytes), and issues an asynchronous MMA that the scheduler completes like a
copy in flight, in issue order per warpgroup: at completion it reads A and B from SMEM as the
bytes are then, and writes D into the result's registers (`interpreter.mma.mma`, the
accumulator's fragment layout `accumulator_fragment`). Its SMEM read is logged at issue as
the async proxy's (interpreter.races), until the `wait.group` that retires its group, so a
thread store or a TMA load into those bytes that the retirement does not happen before is
a race (P2, P3), and threads' writes it reads must be fenced (P4). Groups are per
warpgroup (of an agent): `commit` closes the warpgroup's open group, `wait N` waits until
at most its newest N are pending and retires the rest (a clock component per warpgroup, as
the bulk groups' per agent; happens-before stays per agent, as everywhere in the
interpreter).

Reading the result of an mma (`llvm.extractvalue`, `llvm.insertvalue`) before the wait that
retires it is reported (rule `wgmma`: its registers are undefined on the GPU until then),
and the read gets what the registers hold (NaN where the MMA has not completed); passing
it on as another mma_async's accumulator is not a use (the ISA orders accumulators of
same-shape MMAs). An mma_async whose accumulator the threads wrote (zero, insertvalue)
with no `wgmma.fence` since is reported under `wgmma` too. An MMA that no wait retires
before the kernel returns is P7.

A from registers (`wgmma.mma_async` with an A fragment) is not expressible in the op
(upstream's `nvvm.wgmma.mma_async` takes two descriptors), so it is not modelled.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.llvm import LLVMStructType
from xdsl.ir import Operation

from copy_dialect import ops as copy
from interpreter import mma
from interpreter.machine import Agent, Machine, Step, Transfer, Wait
from interpreter.memory import SMEM_BYTES, SmemRef, units
from interpreter.ops_std import check_index, handles, indices, set_result
from interpreter.races import Access, Epoch, sees
from interpreter.reach import describe_threads
from interpreter.values import InterpretError, RuleBroken, lanes, register_dtype
from passes.nvvm.matrix import MMALayout
from passes.nvvm.wgmma import (
    MMAIntOverflow,
    WgmmaFenceAlignedOp,
    WgmmaGroupSyncAlignedOp,
    WgmmaMmaAsyncOp,
    WGMMAScaleIn,
    WGMMAScaleOut,
    WgmmaWaitGroupSyncOp,
)

RULE = "wgmma"
"""The rule id of the accumulator's misuses, which no catalogue rule covers."""


# --- copy.matrix_descriptor ------------------------------------------------------------------


@handles(copy.MatrixDescriptorOp)
def matrix_descriptor(agent: Agent, op: copy.MatrixDescriptorOp, mask: np.ndarray) -> None:
    ref = agent.get(op.smem)
    if not isinstance(ref, SmemRef):
        raise InterpretError(op, "a descriptor of this ref is not modelled by the interpreter")
    idx = indices(agent, op, op.indices)
    check_index(ref.shape[: len(idx)], idx, mask, op, "an SMEM buffer")
    start = ref.offsets([*idx, *([0] * (len(ref.shape) - len(idx)))])
    address = np.asarray(start, dtype=np.int64).astype(np.uint64)
    value = np.uint64(op.descriptor.constant_bits) | (
        (address & np.uint64(0x3FFFF)) >> np.uint64(4)
    )
    set_result(agent, op, np.asarray(value, dtype=np.uint64).view(np.int64))


# --- registers -------------------------------------------------------------------------------


@dataclass(eq=False)
class Issued:
    """An mma_async in flight: its transfer and the group retirement that covers it."""

    op: WgmmaMmaAsyncOp
    epoch: Epoch
    shape: tuple[int, int, int]
    compute: Callable[[], None]
    """Reads A and B from SMEM and writes D into the result's registers."""
    transfer: Transfer | None = None


@dataclass(eq=False)
class Registers:
    """An LLVM struct of scalars: one row of fields per thread of the CTA."""

    values: np.ndarray
    fence: dict[int, int] | None = None
    """Per warpgroup, its count of wgmma.fence when threads wrote the registers (None: no
    thread wrote them: an mma's result, or an identity asm's)."""
    mma: dict[int, Issued] = field(default_factory=dict)
    """Per warpgroup, the mma_async that writes its rows (of an mma's result)."""
    reported: bool = False


@dataclass
class Groups:
    """A warpgroup's wgmma groups (of one agent): the MMAs of its open group, of each
    committed group, and those issued and not complete (in issue order); the clock
    component whose time n says the first n groups are retired; its wgmma.fence count."""

    component: int
    open: list[Issued] = field(default_factory=list)
    committed: list[list[Issued]] = field(default_factory=list)
    pending: list[Issued] = field(default_factory=list)
    fences: int = 0


GROUPS: weakref.WeakKeyDictionary[Agent, dict[int, Groups]] = weakref.WeakKeyDictionary()


def groups_of(agent: Agent, group: int) -> Groups:
    """Warpgroup `group`'s wgmma groups, in `agent`."""
    mine = GROUPS.setdefault(agent, {})
    found = mine.get(group)
    if found is None:
        name = f"wgmma groups of warpgroup {group} of {agent.name}"
        found = mine[group] = Groups(agent.cta.machine.clocks.new(name))
    return found


def fences_now(agent: Agent) -> dict[int, int]:
    """Each warpgroup's wgmma.fence count so far (in `agent`)."""
    return {g: groups.fences for g, groups in GROUPS.get(agent, {}).items()}


def struct_fields(t: object, op: Operation) -> tuple[int, np.dtype]:
    if not isinstance(t, LLVMStructType) or not t.types.data:
        raise InterpretError(op, f"a value of type {t} is not modelled by the interpreter")
    kinds = {register_dtype(x) for x in t.types.data}
    if len(kinds) != 1:
        raise InterpretError(op, f"a struct of mixed types {t} is not modelled by the interpreter")
    return len(t.types.data), kinds.pop()


@handles(llvm.ZeroOp, llvm.UndefOp)
def zero(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    n, dtype = struct_fields(op.results[0].type, op)
    values = np.zeros((agent.cta.threads, n), dtype)
    agent.env[op.results[0]] = Registers(values, fences_now(agent))


def used(agent: Agent, op: Operation, regs: Registers, mask: np.ndarray) -> None:
    """The threads of `mask` read `regs`: before the wait that retires the mma writing
    their warpgroup's rows, a violation."""
    if not regs.mma or regs.reported:
        return
    for g in np.unique(np.nonzero(mask)[0] // mma.WARPGROUP):
        item = regs.mma.get(int(g))
        if item is None or sees(agent.clock, item.epoch):
            continue
        regs.reported = True
        agent.cta.machine.report(
            RULE, op,
            "reads the accumulator of an nvvm.wgmma.mma_async before the "
            f"nvvm.wgmma.wait.group.sync.aligned that retires its group (warpgroup {int(g)}): "
            "its registers are undefined until then (wait for the group first)",
            agent.cta, item.op,
        )  # fmt: skip
        return


def registers(agent: Agent, op: Operation, value: object) -> Registers:
    regs = agent.get(value)  # type: ignore[arg-type]
    if not isinstance(regs, Registers):
        raise InterpretError(op, "a struct the interpreter has not computed")
    return regs


@handles(llvm.ExtractValueOp)
def extract_value(agent: Agent, op: llvm.ExtractValueOp, mask: np.ndarray) -> None:
    regs = registers(agent, op, op.container)
    used(agent, op, regs, mask)
    (position,) = op.position.get_values()
    set_result(agent, op, regs.values[:, position].copy())


@handles(llvm.InsertValueOp)
def insert_value(agent: Agent, op: llvm.InsertValueOp, mask: np.ndarray) -> None:
    regs = registers(agent, op, op.container)
    used(agent, op, regs, mask)
    (position,) = op.position.get_values()
    values = regs.values.copy()
    new = lanes(agent.get(op.value), agent.cta.threads)
    values[mask, position] = new[mask]
    agent.env[op.res] = Registers(values, fences_now(agent))


FENCES = ("tcgen05.fence::after_thread_sync;", "tcgen05.fence::before_thread_sync;")
"""Asm the interpreter runs as no-ops: tcgen05's fences order its async operations around
a thread synchronization, which the interpreter's happens-before already takes."""


@handles(llvm.InlineAsmOp)
def inline_asm(agent: Agent, op: llvm.InlineAsmOp, mask: np.ndarray) -> None:
    """An empty asm whose outputs are tied to its inputs ("=f,...,0,1,..."): CUTLASS's
    `warpgroup_fence_operand`, which keeps LLVM from moving the registers' uses across it
    and emits no instruction. Its result is its inputs (a struct of them, or one value).
    tcgen05's fences (`FENCES`) are no-ops; any other asm is not modelled."""
    if op.asm_string.data.strip() in FENCES and op.res is None and not op.operands_:
        return None
    constraints = op.constraints.data.split(",")
    outputs = [c for c in constraints if c.startswith("=")]
    tied = [c for c in constraints if not c.startswith("=")]
    identity = tied == [str(i) for i in range(len(outputs))]
    if op.asm_string.data.strip() or op.res is None or not identity:
        raise InterpretError(
            op,
            "an llvm.inline_asm other than an empty one whose outputs are tied to its inputs "
            "is not modelled by the interpreter",
        )
    inputs = [lanes(agent.get(v), agent.cta.threads) for v in op.operands_]
    if not isinstance(op.res.type, LLVMStructType):
        set_result(agent, op, agent.get(op.operands_[0]))
        return
    n, dtype = struct_fields(op.res.type, op)
    if n != len(inputs):
        raise InterpretError(op, f"expected {n} inputs tied to the struct's fields")
    agent.env[op.res] = Registers(np.stack(inputs, axis=1).astype(dtype, copy=False))


# --- the warpgroup ops -----------------------------------------------------------------------


def warpgroups(agent: Agent, op: Operation, mask: np.ndarray) -> list[int]:
    """The warpgroups that run `op`: each must reach it whole (P10 otherwise: the op is
    .sync.aligned over the warpgroup's 128 threads)."""
    threads = np.nonzero(mask)[0]
    found = []
    for g in np.unique(threads // mma.WARPGROUP):
        lo = int(g) * mma.WARPGROUP
        if lo + mma.WARPGROUP > agent.cta.threads or not mask[lo : lo + mma.WARPGROUP].all():
            some = threads[threads // mma.WARPGROUP == g]
            raise RuleBroken(
                op, "P10",
                f"is a warpgroup's op that all 128 threads of each warpgroup execute, and of "
                f"warpgroup {int(g)} (threads {lo}-{lo + mma.WARPGROUP - 1}) only "
                f"{describe_threads(some)} {'reaches' if some.size == 1 else 'reach'} it",
            )  # fmt: skip
        found.append(int(g))
    return found


@handles(WgmmaFenceAlignedOp)
def fence(agent: Agent, op: WgmmaFenceAlignedOp, mask: np.ndarray) -> Step:
    found = warpgroups(agent, op, mask)
    yield None
    for g in found:
        groups_of(agent, g).fences += 1


@handles(WgmmaGroupSyncAlignedOp)
def commit(agent: Agent, op: WgmmaGroupSyncAlignedOp, mask: np.ndarray) -> Step:
    found = warpgroups(agent, op, mask)
    yield None
    for g in found:
        groups = groups_of(agent, g)
        groups.committed.append(groups.open)
        groups.open = []


@handles(WgmmaWaitGroupSyncOp)
def wait(agent: Agent, op: WgmmaWaitGroupSyncOp, mask: np.ndarray) -> Step:
    found = warpgroups(agent, op, mask)
    yield None
    retired: dict[int, int] = {}
    waited: list[Transfer] = []
    for g in found:
        groups = groups_of(agent, g)
        retired[g] = max(0, len(groups.committed) - op.group.value.data)
        waited += [m.transfer for grp in groups.committed[: retired[g]] for m in grp if m.transfer]
    if not all(t.done for t in waited):
        yield Wait(
            lambda: all(t.done for t in waited),
            lambda: f"{len([t for t in waited if not t.done])} wgmma.mma_async to complete",
            op,
        )
    for g, n in retired.items():
        component = groups_of(agent, g).component
        if agent.clock.get(component, 0) < n:
            agent.clock[component] = n


def descriptor(agent: Agent, op: Operation, value: object, group: int) -> int:
    """The descriptor warpgroup `group` gives (the same in its 128 threads)."""
    v = agent.get(value)  # type: ignore[arg-type]
    if isinstance(v, np.ndarray) and v.ndim:
        mine = v[group * mma.WARPGROUP : (group + 1) * mma.WARPGROUP]
        if not np.all(mine == mine[0]):
            raise InterpretError(
                op, f"expected one descriptor in all threads of warpgroup {group}, got "
                f"{sorted({int(x) & (2**64 - 1) for x in mine})[:4]} (hex: the GPU's is undefined)",
            )  # fmt: skip
        v = mine[0]
    return int(v) & (2**64 - 1)


def operand(
    agent: Agent, op: WgmmaMmaAsyncOp, which: str, rows: int, k: int, group: int
) -> tuple[np.ndarray, str]:
    """The SMEM address of each element of operand A (rows 64) or B (rows N) of
    warpgroup `group`, and its type."""
    kind = (op.typeA if which == "A" else op.typeB).data.value
    layout = (op.layoutA if which == "A" else op.layoutB).data
    k_major = layout == (MMALayout.ROW if which == "A" else MMALayout.COL)
    value = op.descriptorA if which == "A" else op.descriptorB
    desc = descriptor(agent, op, value, group)
    try:
        offsets = mma.operand_offsets(desc, k_major, rows, k, mma.ELEMENT_BITS[kind])
    except (mma.DecodeError, KeyError) as e:
        raise InterpretError(op, f"operand {which}: {e}") from None
    size = mma.ELEMENT_BITS[kind] // 8
    if offsets.min() < 0 or offsets.max() + size > SMEM_BYTES:
        raise RuleBroken(
            op, "bounds",
            f"operand {which}'s descriptor {desc:#018x} reaches SMEM byte "
            f"{int(offsets.max())}, outside the CTA's {SMEM_BYTES}",
        )  # fmt: skip
    return offsets, kind


@handles(WgmmaMmaAsyncOp)
def mma_async(agent: Agent, op: WgmmaMmaAsyncOp, mask: np.ndarray) -> Step:
    found = warpgroups(agent, op, mask)
    yield None
    shape = op.shape.mnk
    m, n, k = shape
    acc = registers(agent, op, op.inouts)
    check_accumulator(agent, op, acc, found, shape, mask)
    dtype = register_dtype(op.res.type.types.data[0])
    out = Registers(np.full((agent.cta.threads, n // 2), np.nan if dtype.kind == "f" else 0, dtype))
    for g in found:
        reads = (operand(agent, op, "A", m, k, g), operand(agent, op, "B", n, k, g))
        out.mma[g] = issue(agent, op, g, reads, acc, out)
    agent.env[op.res] = out


def issue(
    agent: Agent,
    op: WgmmaMmaAsyncOp,
    g: int,
    reads: tuple[tuple[np.ndarray, str], tuple[np.ndarray, str]],
    acc: Registers,
    out: Registers,
) -> Issued:
    """Warpgroup `g`'s MMA: its SMEM read logged until its group retires, in flight until
    the scheduler completes it (then it reads A and B and writes its rows of `out`)."""
    machine, groups = agent.cta.machine, groups_of(agent, g)
    m, n, _ = shape = op.shape.mnk
    epoch = (groups.component, len(groups.committed) + 1)
    touched = np.concatenate([units(o, mma.ELEMENT_BITS[kind] // 8, 16) for o, kind in reads])
    access = Access(
        False, True, np.unique(touched), None, epoch, agent, None, op,
        "the wgmma.mma_async reads (through its descriptors)", tensor_core=True, unit=16,
    )  # fmt: skip
    machine.races(agent.cta.smem.log.check(access, agent.clock), agent.cta)
    scale_d = op.scaleD.data == WGMMAScaleOut.ONE
    signs = [-1 if s.data == WGMMAScaleIn.NEG else 1 for s in (op.scaleA, op.scaleB)]
    integer = op.typeD.data.value == "s32"
    satfinite = op.satfinite is not None and op.satfinite.data == MMAIntOverflow.SATFINITE
    rows, cols = mma.accumulator_fragment(n)
    smem, threads = agent.cta.smem.bytes, slice(g * mma.WARPGROUP, (g + 1) * mma.WARPGROUP)
    (oa, ka), (ob, kb) = reads

    def compute() -> None:
        a = mma.read_operand(smem, oa, ka) * signs[0]
        b = mma.read_operand(smem, ob, kb) * signs[1]
        d = None
        if scale_d:
            d = np.zeros((m, n), out.values.dtype)
            d[rows, cols] = acc.values[threads]
        out.values[threads] = mma.mma(a, b, d, integer, satfinite)[rows, cols]

    item = Issued(op, epoch, shape, compute)
    done = {agent.cta: epoch}
    item.transfer = Transfer(op, agent.cta, lambda: complete(groups, machine, item), done)
    machine.issue(item.transfer)
    groups.open.append(item)
    groups.pending.append(item)
    return item


def complete(groups: Groups, machine: Machine, item: Issued) -> None:
    """The scheduler completes `item`: its warpgroup's earlier MMAs complete first, in issue
    order (an accumulator chain reads its predecessor's result)."""
    while groups.pending:
        first = groups.pending.pop(0)
        if first is not item:
            assert first.transfer is not None
            first.transfer.done = True
            machine.in_flight.remove(first.transfer)
        first.compute()
        if first is item:
            return


def check_accumulator(
    agent: Agent, op: WgmmaMmaAsyncOp, acc: Registers, found: list[int], shape: tuple,
    mask: np.ndarray,
) -> None:  # fmt: skip
    """The accumulator an mma_async takes: another same-shape MMA's result (ordered by the
    hardware), or registers the threads wrote before a wgmma.fence of their warpgroup."""
    if acc.mma:
        if any(i.shape != shape for i in acc.mma.values()):
            used(agent, op, acc, mask)
        return
    if acc.fence is None:
        return
    for g in found:
        if acc.fence.get(g, 0) >= groups_of(agent, g).fences:
            agent.cta.machine.report(
                RULE, op,
                "takes accumulator registers the threads wrote with no nvvm.wgmma.fence.aligned "
                f"since (warpgroup {g}): the MMA may read them before the writes (put the fence "
                "after the last write and before the first mma_async)",
                agent.cta,
            )  # fmt: skip
            return
