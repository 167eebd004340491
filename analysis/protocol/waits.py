"""The waits on mbarriers (P6, and the hangs of P5): which phase a `barrier_wait` on a parity
waits for, what its threads learn when it returns, and the waits that can never return or
that a barrier two phases ahead would fool.

`barrier_wait` on parity q, by a class that knows k phases, waits for phase k when
q == k % 2; otherwise it returns at once (the phase of parity q is the one before). A phase
may complete only after every wait on the phase before it has returned (in happens-before
order): else a waiter may miss the parity flip (the barrier runs two phases ahead). The
barriers' phases (`mbarriers`) tell this part when a phase completes (`overtaken`)."""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Operation, SSAValue

from analysis.protocol.clocks import Clock, HappensBefore, at, join
from analysis.protocol.findings import Related, Report, error
from analysis.protocol.records import (
    Barrier,
    Deadlock,
    Key,
    Observation,
    describe_key,
    describe_ops,
    ranks_text,
)


class PhaseWaits:
    def __init__(
        self,
        hb: HappensBefore,
        report: Report,
        table: dict[Key, Barrier],
        groups: dict[SSAValue, tuple[Operation, int]],
        tracked: set[Operation],
    ):
        """`table`, `groups` and `tracked` are the barriers' (`Mbarriers`): their barriers,
        the groups' sizes, and the cp.async copies that arrive on them."""
        self.hb = hb
        self.report = report
        self.table = table
        self.groups = groups
        self.tracked = tracked
        self.pair_loads: dict[Key, Operation] = {}
        """Per barrier of this CTA, a leader-tracked load this CTA issued as the pair's peer:
        its bytes complete on the leader's barrier, never on this one."""
        self.waited: set[tuple[SSAValue, str]] = set()
        """The barrier groups each agent (by name) has returned from a wait on: a hang at an
        agent's first wait on a group may be a producer's acquire that starts at the wrong
        parity (`hang`), a later one is not."""

    def overtaken(self, key: Key, b: Barrier, phase: int, clock: Clock) -> None:
        """Phase `phase` completes (with `clock`): every wait that observes the phase before
        must have returned before, in happens-before order; else a waiter can miss that
        phase and take this one's parity flip for it (P6)."""
        if not (b.waiting or b.observed):
            return
        late: list[tuple[Operation, str]] = [
            (w.op, w.who) for w in b.waiting if w.target == phase - 1
        ]
        overtaken = [o for o in b.observed if o.phase == phase - 1 and at(clock, o.cls) < o.stamp]
        for o in overtaken:
            if o.at_once:
                self.names_next(o.op, key, (phase - 1) % 2, phase, o.who)
        late += [(o.op, o.who) for o in overtaken]
        if not late:
            return
        wait_op, who = late[0]
        threads = who
        if overtaken and not b.waiting:
            threads = self.hb.class_names.get(overtaken[0].cls, who)
        arrivers = describe_ops(b.arrived) or "its copies"
        if threads.startswith("the other warps of "):
            fix = (
                f"let only the first warp of {who} run this loop (scf.if on %t / 32 == 0 "
                "around it: the other warps wait for nothing there), or synchronize "
                f"{who}'s warps after this wait (its barrier: copy.fence_async_shared or "
                "copy.wait_group), so that every warp that waits has observed phase "
                f"{phase - 1} before phase {phase} can complete"
            )
        elif {w for _, w in b.arrived} <= {who}:
            fix = (
                f"synchronize {who} between this wait and the arrivals of phase {phase} (a "
                "block or role barrier: copy.wait_group or copy.fence_async_shared), so that "
                f"all its threads have observed phase {phase - 1} before phase {phase} can "
                "complete"
            )
        else:
            fix = (
                f"throttle {arrivers}: before it arrives on phase {phase} of "
                f"{describe_key(key)}, make it wait (copy.barrier_wait) on a barrier that {who} "
                "arrives on after this wait (a consumer-release barrier per slot)"
            )
        # rule: P6
        self.report(
            error(
                wait_op,
                f"{describe_key(key)} may be two phases ahead of this wait: phase {phase} can "
                f"complete before {threads} observe phase {phase - 1} here (nothing orders the "
                f"arrivals of phase {phase} after this wait), and parity {(phase - 1) % 2} then "
                f"names phase {phase + 1}",
                fix,
                *(Related(a, f"{w} arrives on phase {phase} here") for a, w in b.arrived),
            )
        )
        raise Deadlock

    def wait_targets(
        self,
        op: Operation,
        key: Key,
        parity: int,
        observers: tuple[int, ...],
        who: str,
        role: bool = False,
    ) -> list[tuple[int, int]]:
        """For a wait on `parity` by the classes `observers`: the classes that wait for a
        phase, and the phase (the others return at once). In a role, a wait on the parity
        of the phase before returns at once only while the next phase has not completed:
        that phase must not complete before it (it would then wait for the one after)."""
        b = self.table[key]
        targets = []
        comp = b.comp
        clocks = self.hb.clocks
        for c in observers:
            clock = clocks[c]
            k = clock[comp] if comp < len(clock) else 0
            if k % 2 != parity:
                if role and b.closed > k:
                    self.names_next(op, key, parity, k, who)
                if b.closed == k + 1 and b.completer is not None and b.completer[1] == who:
                    # The block's own arrival completed phase k before this wait: the thread
                    # that made the last one waits for phase k + 1 (the threads are not one
                    # class here: nothing holds the others back).
                    self.names_next(op, key, parity, k, who, b.completer[0])
                if b.closed > k:
                    b.early_wait = (op, parity)
                elif role:  # (k = 0: the wait that returns while phase 0 is open)
                    clock[c] += 1
                    b.observed.append(Observation(c, k - 1, clock[c], op, who, True))
                continue
            if b.closed > k + 1:
                self.check_ahead(op, key, parity, k, who)
            targets.append((c, k))
        if not targets:  # (returned at once: `who` has waited on the group, as `observe`)
            self.waited.add((key[0], who))
        return targets

    def names_next(
        self, op: Operation, key: Key, parity: int, k: int, who: str, own: Operation | None = None
    ) -> None:
        """A wait on the parity of phase k - 1 (observed) once phase k has completed: it
        waits for phase k + 1 (P6). `own`: the waiter's own arrival that completed phase k
        before the wait (the thread that made it then waits for phase k + 1)."""
        size = self.groups[key[0]][1]
        fix = (
            f"wait on parity {k % 2} for phase {k}: flip the parity every lap of the ring of "
            f"{size} barriers, (i / {size}) mod 2 (arith.divui, arith.remui, arith.cmpi ne)"
        )
        related = []
        if own is not None:
            fix = (
                f"wait on parity {k % 2} (arith.constant {'true' if k % 2 else 'false'}) for "
                f"phase {k}, which {who}'s own arrivals complete: every thread then waits for it"
            )
            related.append(
                Related(
                    own,
                    f"{who}'s arrival here completes phase {k} before the wait: the thread "
                    f"that makes the last one waits for phase {k + 1}",
                )
            )
        # rule: P6
        self.report(
            error(
                op,
                f"this wait on parity {parity} can wait for phase {k + 1} of {describe_key(key)}"
                f": {who} has observed "
                + (f"its phases up to {k - 1}, of this parity" if k else "no phase of it yet")
                + f", and the wait returns at once only while phase {k} has not completed "
                f"(then parity {parity} names phase {k + 1})",
                fix,
                *related,
            )
        )
        raise Deadlock

    def check_ahead(self, op: Operation, key: Key, parity: int, k: int, who: str) -> None:
        b = self.table[key]
        # rule: P6
        if b.closed > k + 1:
            others = {w for _, w in b.last_arrived} - {who}
            related = [
                Related(a, f"{w} arrives on phase {k + 1} here")
                for a, w in (b.last_arrived if others and b.closed == k + 2 else [])
            ]
            after = (k + 1) % 2
            fix = (
                "a barrier must not run more than one phase ahead of its waiters: add a "
                f"copy.barrier_wait for phase {k} (parity {parity}) between the arrivals "
                f"of phase {k} and those of phase {k + 1}, and make this wait the one for "
                f"phase {k + 1} (parity {after}: arith.constant {'true' if after else 'false'}; "
                f"once phase {k + 1} completes, parity {parity} names phase {k + 2})"
            )
            if others:
                fix = (
                    f"throttle {', '.join(sorted(others))}: before it arrives on phase {k + 1} "
                    f"of {describe_key(key)}, make it wait (copy.barrier_wait) on a barrier that "
                    f"{who} arrives on after this wait observes phase {k} (a consumer-release "
                    "barrier per slot)"
                )
            remote = [a for a, _ in b.last_arrived if a.name == "copy.peer_arrive"]
            if remote and b.closed == k + 2:
                # A peer's arrival completed the second phase: several CTAs arrive on this
                # CTA's barrier for one phase (a peer rank that is not a permutation).
                related = [
                    Related(a, f"{w} arrives on phase {k + 1} here") for a, w in b.last_arrived
                ]
                fix = (
                    f"each phase of {describe_key(key)} counts {b.count} arrival(s), and the "
                    "CTAs' copy.peer_arrive ops bring more: send to a permutation of the ranks "
                    "(%peer = arith.xori %rank, 1 with %rank = arith.remui of gpu.block_id x "
                    "by 2 in a pair, (rank + 1) % n in a ring), or count every sender's arrival "
                    "in the barrier_init"
                )
            self.report(
                error(
                    op,
                    f"{describe_key(key)} may be two phases ahead of this wait: phases {k} "
                    f"and {k + 1} can both complete before it, and parity {parity} then "
                    f"names phase {k + 2}, which nothing completes",
                    fix,
                    *related,
                )
            )
            raise Deadlock

    def observe(
        self, op: Operation, key: Key, targets: list[tuple[int, int]], who: str, role: bool
    ) -> bool:
        """The classes of `targets` return from the wait: they know the barrier's last phase.
        A role's observation is remembered: the next phase must complete after it. (Outside
        roles, the block barriers of the wait_groups keep the block's threads within a phase
        of each other, docs/design.md; the block's waits are not checked so.) Returns whether
        the classes learned something (the records they now know can be dropped)."""
        b = self.table[key]
        if b.unknown:
            return False
        self.waited.add((key[0], who))
        clocks = self.hb.clocks
        for c, k in targets:
            if b.closed > k + 1:
                self.check_ahead(op, key, (k % 2), k, who)
            clock = join(clocks[c], b.done)
            clocks[c] = clock
            clock[c] += 1
            if role:
                b.observed.append(Observation(c, k, clock[c], op, who))
        return True

    def hang(
        self,
        op: Operation,
        key: Key,
        k: int,
        others: list[Related],
        concurrent: bool,
        receivers: tuple[int, list[int]] | None = None,
    ) -> None:
        """The wait `op` for phase k never returns: report why (P5 or P6). `receivers`: the
        waiting CTA's rank and the CTAs its multicast loads write, where the run models the
        cluster (a release missing from one of them is named)."""
        b = self.table[key]
        related = [Related(b.init, f"initialized with arrivals {b.count}")]
        related += [Related(a, f"an arrival on phase {k}, by {who}") for a, who in b.arrived]
        related += others
        waits = Related(op, "this wait never returns")
        if b.arrivals == b.count:
            # The op that set the phase's bytes is wrong (or a copy is missing), not the wait.
            wrong = b.expecters[-1] if b.expecters else op
            related = [r for r in related if r.op is not wrong]
            # rule: P5
            self.report(
                error(
                    wrong,
                    f"phase {k} of {describe_key(key)} expects {b.expected} bytes but its "
                    f"copies deliver {b.delivered}: it never completes",
                    f"expect {b.delivered} bytes, or issue the copies that deliver the other "
                    f"{b.expected - b.delivered} before the wait",
                    *([waits] if wrong is not op else []),
                    *related,
                )
            )
            raise Deadlock
        copies = [a for a, _ in b.arrived if a in self.tracked]
        if copies and b.arrivals < b.count:
            # The count the barrier was initialized with is wrong, not the wait.
            # rule: P5
            self.report(
                error(
                    b.init,
                    f"{describe_key(key)} counts {b.count} arrivals a phase, but the cp.async "
                    f"copies of phase {k} make {b.arrivals} (one per issuing thread and copy) "
                    "and nothing else arrives: it never completes",
                    f"initialize the barrier with arrivals {b.arrivals} (one per thread that "
                    "issues each cp.async copy of a phase), or arrive on it "
                    f"{b.count - b.arrivals} more times",
                    waits,
                    *related[1:],
                )
            )
            raise Deadlock
        tail = "nothing arrives while it waits"
        fix = (
            f"arrive on {describe_key(key)} ({b.count - b.arrivals} more) before the "
            f"wait, or wait on parity {(k + 1) % 2} (the phase before, complete at once)"
        )
        if concurrent:
            tail = "nothing else arrives: every other role is blocked or has ended"
        arm = b.delivered > b.expected and b.count - b.arrivals == 1
        if arm:
            # Copies deliver bytes no arrival expects (a peer's multicast into this CTA's
            # slot, a load made `arrive = false`): the missing arrival is the one that arms
            # the phase.
            need = b.delivered - b.expected
            arrivers = {a for a, _ in b.arrived}
            silent = [c for c in dict.fromkeys(b.senders) if c not in arrivers]
            fix = (
                f"arm the phase with the {need} bytes its copies deliver before the wait: "
                f"copy.barrier_arrive_expect_tx on {describe_key(key)} with {need} bytes"
            )
            if any(getattr(c.properties.get("arrive"), "value", None) is not None
                   and not c.properties["arrive"].value.data for c in silent):  # fmt: skip
                fix += ", or let the copy arrive itself (drop its arrive = false)"
            related += [
                Related(c, "delivers its bytes to this phase, and nothing arrives for them")
                for c in silent
            ]
        load = self.pair_loads.get(key)
        if load is not None and not b.arrivals:
            # The peer of a leader-tracked pair waits on its own barrier (issue N, item 2).
            what = "this CTA's leader-tracked load: its bytes land on the leader's barrier"
            related.append(Related(load, what))
            fix = (
                f"this CTA is the peer of a leader-tracked pair: the pair's bytes land on the "
                f"leader's {describe_key(key)}, never on this CTA's, so wait on it in the "
                "leader only (scf.if on the rank, rank = gpu.block_id x % 2 == 0) and let the "
                "leader tell this CTA after its wait: a copy.peer_arrive on a barrier this CTA "
                "waits on, or copy.cluster_sync in both CTAs after the leader's wait"
            )
        if others and not arm:
            blocked = "; ".join(r.text.replace(" is blocked here, at", " waits at") for r in others)
            fix = (
                f"arrive on {describe_key(key)} ({b.count - b.arrivals} more) before the wait, "
                f"from a role that does not wait for this one first ({blocked}): let one of "
                "the roles arrive before it waits"
            )
            missing = missing_releases(b, key, receivers)
            if missing:
                fix = missing
            elif b.arrivals:
                # Part of the phase came and the rest never will: the count is the suspect
                # (the others wait on this role, `run.Walk.deadlock`).
                fix = (
                    f"if the arrivals that came ({b.arrivals}) are all that a phase of it "
                    f"gets, initialize it with arrivals {b.arrivals}; else arrive on "
                    f"{describe_key(key)} ({b.count - b.arrivals} more) from a role that does "
                    f"not wait for this one first ({blocked})"
                )
            elif first_lap(op, k) and not any(
                (key[0], w.who) in self.waited for w in b.waiting if w.op is op
            ):
                size = self.groups[key[0]][1]
                fix = (
                    f"the loop's first wait on {describe_key(key)} waits for phase 0, which "
                    "the other roles complete only after this one goes on: a producer's "
                    "acquire of a slot no one has used must return at once, so its parity "
                    f"starts at 1 and flips every lap: wait on ((i / {size}) mod 2) xor 1 "
                    "(arith.xori of the consumer's parity with true), as CUTLASS's "
                    "producer_acquire does"
                )
        # rule: P6
        self.report(
            error(
                op,
                f"this wait never returns: phase {k} of {describe_key(key)} has {b.arrivals} "
                f"of its {b.count} arrivals when the wait is reached, and {tail}",
                fix,
                *related,
            )
        )
        raise Deadlock


def missing_releases(b: Barrier, key: Key, receivers: tuple[int, list[int]] | None) -> str | None:
    """The fix for a multicast ring's empty barrier that one receiving CTA never releases:
    the releases of the phase came from CTAs that the waiting CTA's multicast loads write,
    one each, and the CTAs missing are as many as the arrivals missing (None otherwise)."""
    if receivers is None or not b.phase_ranks:
        return None
    rank, cta = receivers
    came = sorted(b.phase_ranks)
    missing = [r for r in cta if r not in came]
    if len(set(came)) != len(came) or not set(came) <= set(cta):
        return None
    if not missing or len(missing) != b.count - b.arrivals:
        return None
    remote = [r for r in came if r != rank]
    adds = []
    if rank in missing:
        adds.append(
            f"the release of its own consumers (a copy.barrier_arrive on {describe_key(key)})"
        )
    if any(r != rank for r in missing):
        by = f", as {ctas(remote)} {'does' if len(remote) == 1 else 'do'}" if remote else ""
        adds.append(
            f"a release from {ctas([r for r in missing if r != rank])} (a copy.peer_arrive on "
            f"{describe_key(key)} whose peer is CTA {rank}{by})"
        )
    return (
        f"CTA {rank}'s multicast loads write the slots of CTAs {ranks_text(cta)}, and this "
        f"phase's releases came from {ctas(came)} only: add {' and '.join(adds)}, so that CTA "
        f"{rank} refills a slot only once every CTA it writes has released it"
    )


def ctas(ranks: list[int]) -> str:
    """ "CTA 3", "CTAs 0-2"."""
    return f"{'CTA' if len(ranks) == 1 else 'CTAs'} {ranks_text(ranks)}"


def first_lap(op: Operation, k: int) -> bool:
    """Whether `op`, a wait for phase `k` of its barrier, is the first wait of a loop whose
    parity the loop computes (a ring's acquire, lap parity (i / S) mod 2)."""
    parity = getattr(op, "parity", None)
    if k != 0 or not isinstance(parity, SSAValue) or not isinstance(parity.owner, Operation):
        return False
    loop = op.parent_op()
    while loop is not None and not isinstance(loop, scf.ForOp):
        if loop.name == "copy.warp_specialize":
            return False
        loop = loop.parent_op()
    return loop is not None and loop.is_ancestor(parity.owner)
