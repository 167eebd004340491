"""The order of tcgen05 accesses of TMEM between thread classes (P14).

The PTX ISA ("Memory Consistency Model for 5th generation of TensorCore operations") orders
one thread's asynchronous tcgen05 operations (`tcgen05.ld`, `tcgen05.st`, `tcgen05.cp`,
`tcgen05.mma`, `tcgen05.shift`) before another thread's only through a thread synchronisation
(an mbarrier arrival and its wait, `bar.sync`, a named barrier) fenced on both sides: the
first thread's `tcgen05.fence::before_thread_sync` after its accesses and before the sync,
the second's `tcgen05.fence::after_thread_sync` after the sync and before its accesses.
`tcgen05.commit` performs the before fence itself; a `tcgen05.mma`, `tcgen05.cp` or
`tcgen05.shift` (the async tcgen05 operations a commit tracks) is done only through a commit
(an explicit fence orders its issue, not its end). Within one thread the pipelined
pairs (`tcgen05.cp` then `tcgen05.mma`, one MMA after another on the same accumulator) need
nothing, and `tcgen05.wait::ld/st` orders the loads and stores (P11, P12).

Each access is kept per TMEM allocation (the `copy.tmem_alloc` it is a view or pointer of),
thread class and kind, with the class's stamp at the access and, once the class fences, the
fence's stamp. A later access of overlapping columns of the same allocation by another
class that knows it (a hand-off through a sync the analysis follows), where one of the two
writes and one is a tcgen05.mma, tcgen05.cp or tcgen05.shift (an op of one thread that spans
the allocation's 128 lanes), must know its fence (else the sync was not fenced before) and
have fenced after learning it (its clock at its last after fence). An access's columns are
those of the view it names (`tmem_span`: the allocation's, or a `copy.tmem_slice`'s, so
disjoint slices of one allocation do not meet), not the op's own column, which may vary.
Limits: two loads or stores are not compared (warp w reaches lanes 32 (w % 4) to
32 (w % 4) + 31, so different warps of a warpgroup never meet; warps w and w + 4 would);
threads of one class (the block's other threads, a role's other warps) are not told apart.
A load or store of an MMA's, copy's or shift's columns by a class that does not know it at
all (no sync the analysis follows between them) is unordered with it, and so is an MMA,
copy or shift after another class's load or store it does not know (whichever of the two
the walk meets first: the driver runs one schedule of an ordered run), in a kernel with no
sync the analysis does not follow (`raw_syncs`: a raw `nvvm.mbarrier` op, inline PTX);
in one that has one, such accesses are not judged. A CTA pair's MMA is kept in both CTAs'
states (`ops_mma`), the classes being the cluster's, so the peer's epilogue is checked
against the leader's MMA; fences mark every state's accesses."""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from xdsl.dialects.builtin import IntAttr, MemRefType
from xdsl.ir import Operation, SSAValue

from analysis.protocol.clocks import Clock, End, HappensBefore, at, knows
from analysis.protocol.findings import Related, Report, error
from analysis.protocol.groups import with_later
from copy_dialect.memory import TMEM, memory_space
from copy_dialect.tmem import COPY, MMAS, pipelined, tmem_columns
from copy_dialect.tmem import SHIFT as SHIFT_OP
from copy_dialect.tmem_slice import TmemSliceOp, slice_columns
from copy_dialect.verification import per_run

BEFORE = "nvvm.tcgen05.fence <before>"
AFTER = "nvvm.tcgen05.fence <after>"
SHIFT = "a tcgen05.shift"


@dataclass
class Access:
    op: Operation
    tmem: SSAValue
    """The allocation (`copy.tmem_alloc`'s result)."""
    columns: range
    """The 32-bit columns of the allocation the access may touch (`tmem_span`)."""
    cls: int
    stamp: int
    write: bool
    asynchronous: bool
    """A tcgen05.mma, tcgen05.cp or tcgen05.shift: done (and fenced) only by a later
    tcgen05.commit."""
    fence: int | None = None
    """The stamp of the class's first fence after it that publishes it."""
    end: End | None = None
    """An asynchronous access: the barrier phase the arrival of the first tcgen05.commit
    after it completes (None: no commit yet, or one on a barrier the analysis does not
    follow); its class knows it done once it knows that phase."""
    later: tuple[End, ...] = ()
    """The phases of its class's tcgen05.commits after the first: a commit tracks every
    prior asynchronous tcgen05 operation of its thread, so knowing any of them is enough too
    (an MMA warp commits to the K slot's empty barrier, then to the barrier the softmax
    waits on, and learns the second through the softmax's arrival): the latest
    `groups.LATER_ENDS`, until the class accesses the same columns again."""

    def done_to(self, clock: Clock) -> bool:
        """Whether `clock` knows a phase of a commit that tracks this access."""
        return knows(clock, self.end) or any(knows(clock, e) for e in self.later)


def tmem_base(v: SSAValue) -> SSAValue:
    """The allocation a TMEM value is a pointer or view of: through casts and the ops whose
    first operand is TMEM (slices), up to the op that made it."""
    return tmem_span(v)[0]


def tmem_span(v: SSAValue) -> tuple[SSAValue, range]:
    """The allocation a TMEM value is a pointer or view of, and the 32-bit columns of it the
    value reaches: a `copy.tmem_slice`'s (its first column added to its parent's, through
    slices of slices), else the whole allocation's (`ALL_COLUMNS` when its type does not
    say). Derived once per value in a verification run."""
    return per_run("tmem_span", v, lambda: _span(v))


def _span(v: SSAValue) -> tuple[SSAValue, range]:
    first, width = 0, None
    seen = 0
    while seen < 64:
        owner = v.owner
        if not isinstance(owner, Operation) or owner.name == "copy.tmem_alloc":
            break
        if not owner.operands or not is_tmem(owner.operands[0]):
            break
        if isinstance(owner, TmemSliceOp):
            start, columns = slice_columns(owner)
            first += start
            width = columns if width is None else width
        v = owner.operands[0]
        seen += 1
    if width is None:
        width = tmem_columns(v.type) if isinstance(v.type, MemRefType) else len(ALL_COLUMNS)
    return v, range(first, first + width)


def in_pipeline(first: Operation, second: Operation) -> bool:
    """`pipelined`, derived once per pair of ops in a verification run."""
    known = per_run("pipelined", first, dict)
    got = known.get(second)
    if got is None:
        got = known[second] = pipelined(first, second)
    return got


def op_async(op: Operation) -> bool:
    return op.name in ASYNC_OPS


ASYNC_OPS = (*MMAS, COPY, SHIFT_OP)
"""The asynchronous tcgen05 accesses: done only through a commit."""

RAW_SYNCS = ("nvvm.mbarrier", "nvvm.barrier", "llvm.inline_asm", "nvvm.cluster")
"""Prefixes of the ops whose synchronisation the analysis does not follow."""


def raw_syncs(fn: Operation) -> bool:
    """Whether kernel `fn` holds an op that may synchronise threads behind the analysis'
    back (a raw mbarrier op, inline PTX): then accesses it sees no sync between are not
    judged."""
    found = RAW_FOUND.get(fn)
    if found is None:
        found = RAW_FOUND[fn] = any(o.name.startswith(RAW_SYNCS) for o in fn.walk())
    return found


RAW_FOUND: weakref.WeakKeyDictionary[Operation, bool] = weakref.WeakKeyDictionary()

ALL_COLUMNS = range(1 << 20)
"""The columns of a TMEM value whose allocation's width the analysis cannot see."""


def overlap(a: range, b: range) -> bool:
    return max(a.start, b.start) < min(a.stop, b.stop)


def is_tmem(v: SSAValue) -> bool:
    """A TMEM memref (`#copy.tmem`) or a pointer into TMEM (`!llvm.ptr<6>`), by type (not by
    printing it: the walk asks this of every tcgen05 access)."""
    t = v.type
    if isinstance(t, MemRefType):
        return memory_space(t) == TMEM
    if t.name == "llvm.ptr":  # (by name: the LLVM dialect need not be loaded to check copy ops)
        space = t.addr_space  # type: ignore[attr-defined]
        return isinstance(space, IntAttr) and space.data == 6
    return False


class TmemOrder:
    def __init__(self, hb: HappensBefore, report: Report):
        self.hb = hb
        self.report = report
        self.accesses: list[Access] = []
        self.after: dict[int, Clock] = {}
        """Each class's clock at its last `tcgen05.fence::after_thread_sync`."""
        self.follows_all = False
        """Whether the kernel has no sync the analysis does not follow (`raw_syncs`, set once
        per run): then a tcgen05.ld/st and an MMA's, copy's or shift's access of the same
        columns by a class that does not know the other at all are unordered."""

    def access(
        self,
        op: Operation,
        tmem: SSAValue,
        classes: tuple[int, ...],
        write: bool,
        asynchronous: bool = False,
        reached: range | None = None,
    ) -> None:
        """`classes` issue `op`, a tcgen05 access of `tmem` (the columns of its view, or
        those it `reached`, of the allocation, where the walk knows them)."""
        base, columns = tmem_span(tmem)
        if reached is not None:
            columns = reached
        if asynchronous:
            self._own(op, base, columns, classes, write)
        for c in classes:
            for prior in self.accesses:
                if (
                    prior.tmem is base
                    and prior.cls != c
                    and overlap(prior.columns, columns)
                    and (prior.write or write)
                    and (prior.asynchronous or asynchronous)
                    and self._check(op, c, prior)
                ):
                    break
        for c in classes:
            stamp = self.hb.stamp(c)[1]
            self.accesses = [
                a
                for a in self.accesses
                if not (
                    a.tmem is base
                    and a.columns == columns
                    and a.cls == c
                    and a.write == write
                    and a.asynchronous == asynchronous
                )
            ]
            self.accesses.append(Access(op, base, columns, c, stamp, write, asynchronous))

    def _own(
        self, op: Operation, base: SSAValue, columns: range, classes: tuple[int, ...], write: bool
    ) -> None:
        """A class's asynchronous tcgen05 op after its own earlier one on the same columns
        (one of them a write) that is not one of the ISA's pipelines (`pipelined`): the
        earlier must be known done, its commit's barrier phase known (a wait on it) and a
        tcgen05.fence::after_thread_sync since."""
        names = self.hb.class_names
        for c in classes:
            for prior in self.accesses:
                if (
                    prior.cls != c
                    or prior.tmem is not base
                    or not prior.asynchronous
                    or not (prior.write or write)
                    or not overlap(prior.columns, columns)
                    or in_pipeline(prior.op, op)
                ):
                    continue
                who, kind = names.get(c, "this class"), prior.op.name
                order = (
                    f"{op.name} after {kind} is not one of the ISA's tcgen05 pipelines (PTX "
                    "ISA 9.7.16.6.2: mma -> mma of one accumulator, cp -> mma, shift -> mma, "
                    "shift -> cp 4x256b, mma -> shift), so the two may execute in either order"
                )
                if not prior.done_to(self.hb.clocks[c]):
                    # rule: P14
                    self.report(
                        error(
                            op,
                            f"{who}'s own {kind} may still be accessing this TMEM: {order}",
                            f"in {who}, nvvm.tcgen05.commit after the {kind} on a "
                            "copy.barrier_init barrier, copy.barrier_wait on that phase, then "
                            f"{AFTER} before this op; or give this op other TMEM columns (a "
                            "buffer per stage, each reused after its commit's phase)",
                            Related(prior.op, "the earlier access"),
                        )
                    )
                elif not prior.done_to(self.after.get(c, [])):
                    # rule: P14
                    self.report(
                        error(
                            op,
                            f"{who} waited for its own {kind} to end but issues this op with "
                            f"no tcgen05.fence::after_thread_sync since: {order}",
                            f"add {AFTER} after the wait and before this op",
                            Related(prior.op, "the earlier access"),
                        )
                    )
                else:
                    continue
                self.accesses.remove(prior)
                break

    def ended(self, classes: tuple[int, ...], end: End) -> None:
        """`classes` commit: their asynchronous accesses with no commit yet end with `end`
        (the phase the commit's arrival completes); those with one end with it too
        (`Access.later`)."""
        for a in self.accesses:
            if a.cls in classes and a.asynchronous:
                if a.end is None:
                    a.end = end
                else:
                    a.later = with_later(a.later, end)

    def _check(self, op: Operation, c: int, prior: Access) -> bool:
        """Whether class `c`'s access `op` is ordered after `prior`; else the finding."""
        known = at(self.hb.clocks[c], prior.cls)
        names = self.hb.class_names
        who, other = names.get(c, "this class"), names.get(prior.cls, "another class")
        kind = prior.op.name
        if known < prior.stamp:
            mine = op_async(op)
            if not (self.follows_all and prior.asynchronous != mine):
                return False  # not a hand-off through a sync the analysis follows
            if mine:
                # The load or store came first in this run; it is as unordered with this
                # op as this op would be with it (another schedule runs this op first).
                # rule: P14
                self.report(
                    error(
                        op,
                        f"{who}'s {op.name} may access TMEM that {other}'s {kind} is still "
                        "accessing: no synchronisation orders this op after it",
                        f"in {other}, {BEFORE} after it and an arrival on a copy.barrier_init "
                        f"barrier; in {who}, copy.barrier_wait on that barrier's phase, then "
                        f"{AFTER}, before this op; or give the two other TMEM columns",
                        Related(prior.op, "the access not waited for"),
                    )
                )
                self.accesses.remove(prior)
                return True
            # rule: P14
            self.report(
                error(
                    op,
                    f"{who} accesses TMEM that {other}'s {kind} may still be accessing: no "
                    "synchronisation orders this op after it (a tcgen05.mma, tcgen05.cp or "
                    "tcgen05.shift ends only when a wait observes the arrival of a "
                    "tcgen05.commit issued after it)",
                    f"in {other}, nvvm.tcgen05.commit after it on a copy.barrier_init barrier; "
                    f"in {who}, copy.barrier_wait on that barrier's phase, then {AFTER}, "
                    "before this op",
                    Related(prior.op, "the access not waited for"),
                )
            )
            self.accesses.remove(prior)
            return True
        if prior.fence is None or known < prior.fence:
            ends = SHIFT if kind == "copy.tmem_shift" else "a tcgen05.mma or tcgen05.cp"
            how = (
                f"nvvm.tcgen05.commit ({ends} ends only through a commit, "
                "which fences before the sync itself) on the barrier this side waits on"
                if prior.asynchronous
                else f"{BEFORE} after it and before the arrival or barrier this side syncs on"
            )
            # rule: P14
            self.report(
                error(
                    op,
                    f"{other}'s {kind} of this TMEM is handed to {who} through a thread "
                    "synchronisation that no tcgen05.fence::before_thread_sync orders it "
                    "before: the TMEM access may still be in flight",
                    f"in {other}, {how}",
                    Related(prior.op, "the access not fenced before the sync"),
                )
            )
        elif at(self.after.get(c, []), prior.cls) < prior.fence:
            # rule: P14
            self.report(
                error(
                    op,
                    f"{who} accesses TMEM that {other}'s {kind} touched, after a thread "
                    "synchronisation but with no tcgen05.fence::after_thread_sync between "
                    "them: the access may be issued before the other's is ordered",
                    f"add {AFTER} after the wait or barrier and before this op",
                    Related(prior.op, "the other thread's access"),
                )
            )
        else:
            return False
        self.accesses.remove(prior)
        return True

    def fence(self, classes: tuple[int, ...], before: bool, commit: bool = False) -> None:
        """`classes` fence: before a thread sync (an explicit fence: their loads and stores;
        a commit (`commit`): their MMAs and copies too), or after one."""
        for c in classes:
            if not before:
                self.after[c] = self.hb.clocks[c].copy()
                continue
            stamp = self.hb.stamp(c)[1]
            for a in self.accesses:
                if a.cls == c and a.fence is None and (commit or not a.asynchronous):
                    a.fence = stamp

    def free(self, tmem: SSAValue) -> None:
        base = tmem_base(tmem)
        self.accesses = [a for a in self.accesses if a.tmem is not base]

    def snapshot(self) -> tuple[object, ...]:
        return tuple(
            (a.tmem, a.columns, a.cls, a.write, a.asynchronous, a.fence is not None)
            for a in self.accesses
        )
