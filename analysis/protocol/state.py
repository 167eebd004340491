"""The protocol state of one CTA while the analysis walks its kernel, one part per concern
(as MLIR's dataflow framework keeps a state per fact), each with its own fields, checks
(P1..P13, MB8-MB11, TU10-TU12; each hands its findings to `report`) and part of the
snapshot:

- `hb` (`clocks.HappensBefore`): the thread classes and their vector clocks, which every
  other part stamps, syncs and compares through;
- `barriers` (`mbarriers`): the mbarriers' phases, arrivals and bytes, and their life; its
  `waits` (`waits`): which phase a wait waits for, what it observes, the hangs;
- `named` (`named`): the named barriers' generations;
- `group_sets` (`groups`): each issuer's bulk and cp.async groups;
- `smem` (`smem`): what touches SMEM and the races between them;
- `copies` (`copies`): the async copies as they are issued;
- `maps` (`tensormaps`): the tensor maps a kernel rewrites;
- `tmem` (`tmem`): TMEM allocations, loads and stores;
- `ends` (`ends`): what may not be in flight where a role or the kernel ends.

A part gets the parts it reads when it is made; `State` does what spans them: the syncs
after which records every thread knows are dropped (`after_sync`, `prune`), and the snapshot
the steady-state check compares. docs/design.md ("The protocol analysis") says what the
model is (`clocks`, `records`)."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from analysis.protocol.clocks import Clock, End, HappensBefore, Meet, common
from analysis.protocol.copies import AsyncCopies
from analysis.protocol.ends import Ends
from analysis.protocol.findings import Report
from analysis.protocol.groups import Groups, GroupSets
from analysis.protocol.mbarriers import Mbarriers
from analysis.protocol.named import NamedBarriers
from analysis.protocol.records import Key
from analysis.protocol.smem import SharedMemory
from analysis.protocol.tensormaps import TensorMaps
from analysis.protocol.tmem import Tmem

WHOLE_MEET = 1024
"""The most clock components (running classes times the run's components) whose `common`
`State.prune` computes whole, which lets it skip a prune that finds nothing new; above it
(the CTAs of a cluster of 4 or more) it computes only the components the records name
(`clocks.Meet`), which measured cheaper there."""


class State:
    def __init__(self, report: Report, hb: HappensBefore | None = None):
        """`hb`: the clocks of the cluster's other CTAs, when the run models several."""
        self.report = report
        self.hb = hb = HappensBefore() if hb is None else hb
        self.barriers = Mbarriers(hb, report)
        self.waits = self.barriers.waits
        self.named = NamedBarriers(hb, report)
        self.group_sets = GroupSets(hb)
        self.smem = SharedMemory(hb, report, self.barriers, self.group_sets)
        self.copies = AsyncCopies(hb, self.smem, self.barriers)
        self.maps = TensorMaps(hb, report, self.barriers)
        self.tmem = Tmem(report, hb)
        self.ends = Ends(report, self.smem, self.barriers.tracked, self.tmem)
        self.pruned: tuple[Clock | None, tuple[int, int]] = (None, (0, 0))
        """What every running class knew at the last `prune`, and the fills then (the
        list and its length): a later prune with the same finds nothing more to drop."""

    # ---- syncs -------------------------------------------------------------------------------

    def after_sync(self, everyone: bool) -> None:
        """A block barrier (`everyone`) or a role barrier: drop what every thread knows."""
        if everyone and not self.hb.concurrent:
            self.smem.block_barrier()
            return
        self.prune()

    def prune(self) -> None:
        """Drop the records every running class knows: nothing can race with them. A
        record's end holds a stamp made with it (a class's access, the phase a load
        completes, the sync after a wait), which no running class knew when it was made: it
        becomes known only as what they all know (`clocks.common`) grows. So when that has
        not changed since the last prune, nothing new is known; the fills are looked at
        again when new ones came (a later load of a slot stands for an earlier,
        `smem.latest`)."""
        if not self.hb.live:
            return
        live = self.hb.live_clocks()
        if len(live) * self.hb.width > WHOLE_MEET:
            # Many wide clocks (a cluster's CTAs): only the components the records' ends name
            known = Meet(live)
            self.smem.prune(known)  # type: ignore[arg-type]
            self.maps.prune(known)  # type: ignore[arg-type]
            return
        known = common(live)
        fills = self.smem.fills
        pruned = (known, (id(fills), len(fills)))
        if pruned == self.pruned:
            return
        self.smem.prune(known)
        self.maps.prune(known)
        fills = self.smem.fills
        self.pruned = (None if known is None else known.copy(), (id(fills), len(fills)))

    def fence(self, classes: tuple[int, ...], everyone: bool) -> None:
        """`classes` fence their writes and meet (`everyone`: the whole block)."""
        mark = self.hb.sync(classes)
        self.smem.fence(classes, everyone, mark)
        self.after_sync(everyone)

    def wait_group(
        self,
        groups: Groups,
        bulk: bool,
        pending: int,
        read_only: bool,
        classes: tuple[int, ...],
        everyone: bool,
        op: Operation | None = None,
    ) -> None:
        """The issuer of `groups` waits (`op`) for all but `pending` groups, then its
        `classes` meet (`everyone`: a block barrier)."""
        mark = self.hb.sync(classes)
        reads, fills = self.group_sets.wait(groups, bulk, pending, read_only, mark, op)
        self.smem.waited(reads, fills)
        self.after_sync(everyone)

    def observe(
        self, op: Operation, key: Key, targets: list[tuple[int, int]], who: str, role: bool
    ) -> None:
        """The classes of `targets` return from a wait (`PhaseWaits.observe`): drop what
        they now know (with roles, every record; else the fills)."""
        if not self.waits.observe(op, key, targets, who, role):
            return
        if self.hb.concurrent:
            self.prune()
        elif self.smem.fills:
            self.smem.prune_fills()

    def inval_group(self, op: Operation, group: SSAValue) -> bool:
        """`copy.barrier_inval` (`Mbarriers.inval_group`), with the loads still landing."""
        return self.barriers.inval_group(op, group, self.smem.unfinished_on)

    # ---- the snapshot ------------------------------------------------------------------------

    def snapshot(self) -> tuple[object, ...]:
        """The state as far as what follows depends on it, phases counted from each
        barrier's current one (a lap of a ring advances them all: the snapshot repeats),
        each record with the clocks that know it (not the clocks' counts, which grow)."""
        holders = self.hb.live_clocks() + self.barriers.holders() + self.named.holders()
        every = (1 << len(holders)) - 1
        known: dict[tuple[int, int], int] = {}  # per stamp, the holders that know it

        def seen(end: End | None) -> int:
            """The bit set of the holders that know `end` (`knows` of each, a stamp at a
            time across the holders)."""
            if end is None:
                return 0
            bits = every
            for stamp in end:
                got = known.get(stamp)
                if got is None:
                    c, v = stamp
                    got = 0
                    for i, h in enumerate(holders):
                        if c < len(h) and h[c] >= v:
                            got |= 1 << i
                    known[stamp] = got
                bits &= got
            return bits

        fills, accesses, unfenced, fenced, reads_done = self.smem.snapshot(seen)
        tmem_live, tmem_stores = self.tmem.snapshot()
        return (
            self.barriers.lag(holders) + self.named.lag(holders),
            self.barriers.snapshot(),
            fills,
            self.group_sets.snapshot(),
            accesses,
            unfenced,
            fenced,
            reads_done,
            self.named.snapshot(),
            tmem_live,
            tmem_stores,
            self.tmem.order.snapshot(),
            self.maps.snapshot(seen),
        )
