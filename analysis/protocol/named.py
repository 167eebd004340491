"""The named barriers of one CTA (`bar.sync` / `bar.arrive` ids, P13): the generation each
arrival joins, the threads each generation counts, and the clock of each completed one
(what its syncers learn); a generation is a component of the clocks, like a barrier's
phase."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Operation

from analysis.protocol.clocks import Clock, HappensBefore, join, lags, raise_to
from analysis.protocol.findings import Related, Report, error
from analysis.protocol.records import SNAPSHOT_LAG, Deadlock, describe_ops


@dataclass
class Generation:
    """The open generation of a named barrier: who arrived, with which thread count."""

    threads: int
    first: Operation
    arrived: int = 0
    clock: Clock = field(default_factory=list)
    members: list[tuple[object, Operation, int, str]] = field(default_factory=list)
    """(agent, op, threads it brings, who)."""


@dataclass
class NamedBarrier:
    comp: int
    completed: int = 0
    current: Generation | None = None
    gens: dict[int, Clock] = field(default_factory=dict)
    """The clocks of the generations completed last (what their syncers learn)."""
    last: list[tuple[Operation, str]] = field(default_factory=list)
    """The ops that met at the last completed generation."""


class NamedBarriers:
    def __init__(self, hb: HappensBefore, report: Report):
        self.hb = hb
        self.report = report
        self.by_id: dict[int, NamedBarrier] = {}
        """Each named barrier the kernel has used, by its id."""

    def arrive(
        self,
        op: Operation,
        barrier: int,
        threads: int,
        brings: int,
        classes: tuple[int, ...],
        agent: object,
        who: str,
        free: int | None,
    ) -> tuple[NamedBarrier, int]:
        """`who` (its classes, `brings` threads) arrives at named barrier `barrier`, counting
        `threads`: the generation it joins (P13)."""
        nb = self.by_id.get(barrier)
        if nb is None:
            nb = self.by_id[barrier] = NamedBarrier(self.hb.new_component())
        cur = nb.current
        g = nb.completed
        previous = ((nb.comp, g),)
        after = g == 0 or self.hb.knows_all(classes, previous)
        if not after:
            self.hb.ordered = False  # (an error when it opens the generation)
        if cur is None:
            # rule: P13
            if not after:
                own = ""
                if free is not None and who not in {w for _, w in nb.last}:
                    own = (
                        f"give {who} a barrier of its own if it should not meet "
                        f"{describe_ops(nb.last)} (copy.named_barrier_sync {free}, {threads}), "
                        "or "
                    )
                self.report(
                    error(
                        op,
                        f"{who}'s arrival at named barrier {barrier} may count toward its "
                        f"generation {g - 1} ({describe_ops(nb.last)} met there): nothing "
                        "orders it after that generation completes, so their warps can meet "
                        "at one generation",
                        f"{own}make {who} wait for generation {g - 1} first: "
                        "copy.named_barrier_sync instead of copy.named_barrier_arrive there, or "
                        "a copy.barrier_wait on a barrier the others arrive on after it",
                        *(Related(o, f"{w} meets at generation {g - 1} here") for o, w in nb.last),
                    )
                )
                raise Deadlock
            cur = nb.current = Generation(threads, op)
        # rule: P13
        if threads != cur.threads:
            self.report(
                error(
                    op,
                    f"named barrier {barrier} counts {threads} threads here but "
                    f"{cur.threads} where {describe_ops([(o, w) for _, o, _, w in cur.members])} "
                    "arrived at the same generation: all who meet at a generation must give "
                    "the same count",
                    "count the threads of all the roles that meet here on every op of this "
                    f"generation: copy.named_barrier_sync {barrier}, {cur.arrived + brings}",
                    Related(cur.first, f"{cur.threads} threads here"),
                )
            )
            raise Deadlock
        # rule: P13
        if any(m[0] is agent for m in cur.members):
            self.report(
                error(
                    op,
                    f"{who} arrives twice at generation {g} of named barrier {barrier} "
                    f"({cur.arrived + brings} of its {threads} threads would be {who}'s)",
                    f"make {who} wait for the generation (copy.named_barrier_sync) before it "
                    "arrives again, or count only the threads that meet here: "
                    f"copy.named_barrier_arrive {barrier}, {cur.arrived + brings}",
                    Related(cur.members[0][1], f"{who} arrives here first"),
                )
            )
            raise Deadlock
        # rule: P13
        if cur.arrived + brings > threads:
            meeting = [(o, w) for _, o, _, w in cur.members] + [(op, who)]
            self.report(
                error(
                    op,
                    f"{cur.arrived + brings} threads meet at generation {g} of named barrier "
                    f"{barrier} ({describe_ops(meeting)}), which counts {threads}: the extra "
                    "threads are undefined behaviour (they may complete it, or the next one)",
                    f"count {cur.arrived + brings} threads on every op that meets here "
                    f"(copy.named_barrier_sync {barrier}, {cur.arrived + brings}), or use "
                    "another barrier id for the roles that should not meet",
                    *(Related(o, f"{w} arrives here") for o, w in meeting[:-1]),
                )
            )
            raise Deadlock
        cur.arrived += brings
        for c in classes:
            cur.clock = join(cur.clock, self.hb.clocks[c])
        cur.members.append((agent, op, brings, who))
        if cur.arrived == cur.threads:
            nb.gens[g] = raise_to(cur.clock, nb.comp, g + 1)
            nb.gens.pop(g - 4, None)
            nb.completed = g + 1
            nb.last = [(o, w) for _, o, _, w in cur.members]
            nb.current = None
            self.hb.progress = True
        return nb, g

    def synced(self, nb: NamedBarrier, g: int, classes: tuple[int, ...]) -> None:
        """The classes return from generation `g` of `nb`: they know what its threads knew."""
        done = nb.gens[g]
        clocks = self.hb.clocks
        for c in classes:
            clocks[c] = join(clocks[c], done)

    def stuck(self, op: Operation, barrier: int, others: list[Related]) -> None:
        nb = self.by_id[barrier]
        cur = nb.current
        assert cur is not None
        meeting = [(o, w) for _, o, _, w in cur.members]
        # rule: P13
        self.report(
            error(
                op,
                f"this named barrier never completes: generation {nb.completed} of named "
                f"barrier {barrier} counts {cur.threads} threads, and {cur.arrived} "
                f"({describe_ops(meeting)}) arrive before every role is blocked or has ended",
                f"count the {cur.arrived} threads that meet here (copy.named_barrier_sync "
                f"{barrier}, {cur.arrived}), or make the missing roles reach named barrier "
                f"{barrier}",
                *others,
            )
        )
        raise Deadlock

    # ---- the snapshot ----------------------------------------------------------------------

    def holders(self) -> list[Clock]:
        """The clocks of the generations: the last completed ones', then the open ones'."""
        named = self.by_id.values()
        return [n.gens[n.completed - 1] for n in named if n.completed] + [
            n.current.clock for n in named if n.current
        ]

    def lag(self, holders: list[Clock]) -> tuple[int, ...]:
        """How far each clock knows each named barrier's generations (as `Mbarriers.lag`)."""
        marks = [(n.comp, n.completed) for n in self.by_id.values()]
        return lags(holders, marks, -SNAPSHOT_LAG)

    def snapshot(self) -> tuple[object, ...]:
        """The open generations."""
        return tuple(
            None
            if n.current is None
            else (n.current.threads, n.current.arrived, tuple(m[1] for m in n.current.members))
            for n in self.by_id.values()
        )
