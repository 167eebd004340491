"""One run of the protocol analysis over a kernel: its agents (the block, and the roles of a
`copy.warp_specialize` once it forks them), scheduled one at a time, each until it blocks,
the highest in the run's priority order first (a role that becomes ready takes over from a
lower one); a deadlock when every agent waits. The checks do not depend on the schedule
(they compare vector clocks, `state`); the priority orders the driver runs let each role run
as far ahead as it can, so that a schedule-dependent mistake shows in one of them, when the
first order's run counted an arrival toward a phase that another schedule may not
(`HappensBefore.ordered`)."""

from __future__ import annotations

from xdsl.ir import Operation, Region, SSAValue

from analysis.protocol.clocks import join
from analysis.protocol.cluster import Cluster
from analysis.protocol.dispatch import CLUSTER_STEPS, FOREIGN, STEPS
from analysis.protocol.facts import Kernel
from analysis.protocol.findings import ProtocolFinding, Related, Report
from analysis.protocol.records import Deadlock, barrier_pointer, ranks_text
from analysis.protocol.smem import role_of
from analysis.protocol.state import State
from analysis.protocol.steps import Heads, Stop
from analysis.protocol.tmem_order import raw_syncs
from analysis.protocol.values import UNIFORM
from analysis.protocol.walk import Agent
from copy_dialect.attributes import BarrierType
from copy_dialect.verification import ops_of, per_run


class Infeasible(Exception):
    """The run took a barrier_test as true whose phase never completes: the kernel cannot
    run this way (the test only ever returns false), so the run says nothing."""


class Walk:
    def __init__(
        self,
        kernel: Kernel,
        bindings: dict[SSAValue, int],
        report: Report,
        order: tuple[int, ...] = (),
        ctas: tuple[int, ...] = (),
        watched: frozenset[object] = frozenset(),
    ):
        self.kernel = kernel
        self.bindings = dict(bindings)
        for rep, chosen in bindings.items():
            for alias in kernel.aliases.get(rep, ()):
                self.bindings[alias] = chosen
        aliases = kernel.aliases
        self.watched = {a for rep in watched for a in (rep, *aliases.get(rep, ()))}  # type: ignore[call-overload]
        """The chosen counts whose loops keep their heads in this run though it is not their
        longest (`choices.Deferred.lapped`)."""
        self.report = report
        self.order = order
        """Roles by priority, highest first (the block after them)."""
        self.ctas = ctas
        """The CTAs of a cluster by priority, highest first (empty: the CTA that forked its
        roles last first, each CTA's roles ahead of its block)."""
        facts = kernel.cluster
        self.state = State(report)
        self.states = [self.state] + [State(report, self.state.hb) for _ in range(facts.ranks - 1)]
        """One state per CTA the run models (`cluster`), sharing one HappensBefore."""
        follows = not raw_syncs(kernel.fn)
        for state in self.states:
            state.group_sets.pending_cap = kernel.max_pending + 1
            state.tmem.order.follows_all = follows
        self.cluster = Cluster(facts, self.state.hb, report)
        self.dispatch = STEPS if facts.ranks == 1 else CLUSTER_STEPS
        """How the agents follow each op (`dispatch`)."""
        self.foreign = FOREIGN
        """How they follow an op that takes SMEM and whose effects they do not own."""
        self.events: list[tuple[object, ...]] = []
        """What the protocol saw, op by op (ring slots, barriers, parities relative to the
        barrier's phase, branches taken), without GMEM coordinates: the trace the steady-
        state check compares lap by lap."""
        self.heads: dict[Operation, list[Heads]] = {}
        """Per loop whose trip count was chosen: each walk of it (`Heads`), in order."""
        self.peer_heads: dict[Operation, list[Heads]] = {}
        """The same walks of the other CTAs of a cluster, their times alone (the state at a
        head of CTA 0's holds every CTA's: `snapshot`)."""
        self.ticks = 0
        """The clock of those walks' heads and ends (`Heads.times`)."""
        self.agents: list[Agent] = []
        self.ranked: list[Agent] = []

    def release(self) -> None:
        """The run is over: drop its agents, whose suspended walks (Python generators) and
        the walk refer to each other, so that reference counting frees them now (the
        verification run pauses the cyclic collector, `verification_run`; what a
        deferral reads of the run, its heads and events, stays)."""
        for agent in self.agents:
            agent.steps = None
            agent.blocked = None
        self.agents = []
        self.ranked = []

    def run(self) -> None:
        hb = self.state.hb
        for rank in range(len(self.states)):
            classes = (hb.new_class([]), hb.new_class([]))
            block = Agent(self, "the block", None, self.kernel.threads, 0, None, classes, rank)
            for arg in self.kernel.fn.args:
                block.env[arg] = UNIFORM
            hb.live += block.classes
            block.steps = block.main()
            self.agents.append(block)
        self.ranked = self.by_cta(self.agents)
        hb.concurrent = len(self.states) > 1  # the CTAs of a cluster run at once
        self.schedule()

    def schedule(self) -> None:
        while True:
            agent = self.pick()
            if agent is None:
                if any(not a.done for a in self.agents):
                    self.deadlock()
                return
            assert agent.steps is not None
            try:
                agent.blocked = next(agent.steps)
            except StopIteration:
                agent.done = True
                agent.blocked = None

    def pick(self) -> Agent | None:
        for agent in self.ranked:
            if agent.done:
                continue
            if agent.blocked is None or agent.blocked.ready():
                agent.blocked = None
                return agent
        return None

    def deadlock(self) -> None:
        stuck = [
            a
            for a in sorted(self.agents, key=lambda a: -1 if a.role is None else a.role)
            if not a.done and a.blocked is not None and a.blocked.stuck is not None
        ]

        # Where the kernel went wrong: first a wait that no other blocked agent still owes
        # (one that arrived on or sent bytes to its barrier before, but not for this phase,
        # would feed it once it went on: that wait waits on it), then one whose phase got
        # part of what it needs (a short arrival count, bytes nothing expects).
        def fed(a: Agent) -> bool:
            sources = a.blocked.sources() if a.blocked and a.blocked.sources else set()
            return any(c in sources for o in others if o is not a for c in o.classes)

        def started(a: Agent) -> bool:
            return bool(a.blocked and a.blocked.started and a.blocked.started())

        others = list(stuck)  # (a list being sorted is empty while it sorts)
        upstream = upstream_agents(self.kernel, others)
        stuck.sort(key=lambda a: (a not in upstream, fed(a), not started(a)))
        if any(a.blocked is not None and a.blocked.infeasible for a in stuck):
            raise Infeasible
        if not stuck:
            raise Deadlock
        first, *others = stuck
        # One note per op, role and what it waits for, with the CTAs blocked so (a cluster of
        # 16 hangs in 16 CTAs at once).
        blocked: dict[tuple[object, ...], list[Agent]] = {}
        for a in others:
            if a.blocked is not None:
                blocked.setdefault((a.blocked.op, a.role_name, a.blocked.what), []).append(a)
        notes = [
            Related(op, f"{blocked_name(agents)} is blocked here, at {what}")
            for (op, _, what), agents in blocked.items()
        ]
        assert first.blocked is not None
        assert first.blocked.stuck is not None
        first.blocked.stuck(notes)
        raise Deadlock

    def fork(self, roles: list[Agent]) -> None:
        hb = self.state.hb
        hb.concurrent = True
        block = roles[0].parent
        assert block is not None
        hb.live = [c for c in hb.live if c not in block.classes] + [
            c for a in roles for c in a.classes
        ]
        self.agents += roles
        rank = {r: i for i, r in enumerate(self.order)}
        ranked = sorted(roles, key=lambda a: rank.get(a.role, len(rank) + (a.role or 0)))
        self.ranked = self.by_cta(ranked + [a for a in self.ranked if a not in roles])

    def by_cta(self, agents: list[Agent]) -> list[Agent]:
        """`agents` CTA by CTA in the order of `ctas`, if any (stable within a CTA)."""
        if not self.ctas:
            return list(agents)
        return sorted(agents, key=lambda a: self.ctas.index(a.rank))

    def join(self, block: Agent, roles: list[Agent], op: Operation) -> None:
        """The roles have ended: what they left in flight (P7), then a block barrier."""
        s = block.state
        hb = s.hb
        for agent in roles:
            s.ends.role_end(op, agent.groups)
            s.group_sets.remove(agent.groups)
        joined = hb.clocks[block.c0]
        for c in (block.c1, *(c for a in roles for c in a.classes)):
            joined = join(joined, hb.clocks[c])
        hb.clocks[block.c0] = joined
        hb.clocks[block.c1] = joined.copy()
        hb.concurrent = len(self.states) > 1
        hb.live = [c for c in hb.live if all(c not in a.classes for a in roles)] + list(
            block.classes
        )
        s.prune()
        self.agents = [a for a in self.agents if a not in roles]
        self.ranked = [a for a in self.ranked if a not in roles]

    def snapshot(self, agent: Agent, i: int) -> tuple[object, ...]:
        """The state at the head of iteration i of `agent`'s innermost loop, with where every
        other agent is (its op, and the iteration of each of its loops, counted from the
        iteration of `agent`'s loop at the same depth where it has one: a role one tile
        ahead in its tile loop, at the third k-block of its k loop), and the values every
        agent's loops carry (`periods`: those that are not counters)."""
        where = []
        for other in self.agents:
            carried = tuple(other.carried)  # what each loop carries that is not a counter
            if other is agent:
                where.append((tuple(other.frames[:-1]), carried))
                continue
            frames = tuple(
                (loop, self.behind(agent, d, loop, it) if d < len(agent.frames) else it)
                for d, (loop, it) in enumerate(other.frames)
            )
            where.append((other.at, other.done, other.blocked is not None, frames, carried))
        return (tuple(s.snapshot() for s in self.states), tuple(where))

    def beside(self, agent: Agent, depth: int) -> tuple[Operation | None, ...]:
        """Per other agent of every CTA, the loop it is in at `depth` (that of `agent`'s
        loop at a head; None: none, or done): a cut of laps at this head moves it as many
        iterations in that loop as `agent` (`cuts.cut`)."""
        return tuple(
            other.frames[depth][0] if len(other.frames) > depth and not other.done else None
            for other in self.agents
            if other is not agent
        )

    def behind(self, agent: Agent, d: int, loop: Operation, it: int) -> int:
        """Iteration `it` of another agent's `loop`, counted from `agent`'s iteration of its
        loop at depth d: in the units of their count where both count the same n at
        different paces (`LoopShape.pace`: a pingpong consumer's tile i is the producer's
        2i + w), else in iterations."""
        mine, at = agent.frames[d]
        loops = self.kernel.loops
        ours, theirs = loops.get(mine), loops.get(loop)
        if ours is not None and theirs is not None and ours.paced_with(theirs):
            return it * theirs.pace[1] - at * ours.pace[1]
        return it - at


def run_kernel(
    kernel: Kernel,
    bindings: dict[SSAValue, int],
    report: Report,
    order: tuple[int, ...] = (),
    ctas: tuple[int, ...] = (),
    watched: frozenset[object] = frozenset(),
) -> Walk:
    """One run, up to its first error (what follows a race or a hang is not the kernel the
    author meant: one error per mistake); `Choose` and `Infeasible` propagate to the
    driver."""

    def first_error(finding: ProtocolFinding) -> None:
        report(finding)
        if finding.severity == "error":
            raise Stop

    walk = Walk(kernel, bindings, first_error, order, ctas, watched)
    try:
        walk.run()
    except (Deadlock, Stop):
        walk.heads.clear()
        walk.peer_heads.clear()
    finally:
        walk.release()
    return walk


def steady_lap(
    walk: Walk, heads: Heads, tail: int, period: int = 1, start: int = 0
) -> tuple[int, int] | None:
    """The steady state a walk of a loop (`heads`) reached, as (k, P), the earliest it settles:
    a lap of P iterations (P a multiple of `period`, from iteration k >= `start` on) that
    leaves the state at the loop's head as it found it and sees the same events as the lap
    after it, both before the last `tail` iterations (whose conditions see the end of the
    loop); None when it reached none. What the protocol reads in the loop repeats with such
    a lap (`periods`), so the trip counts the driver did not try behave like those it did,
    with more such laps: the induction step of the proof. With roles, the state includes
    where the other roles are and the events theirs: the lap repeats for the whole CTA."""
    states = heads.states
    marks = [*heads.marks, len(walk.events) if heads.end is None else heads.end]
    last = len(states) - tail
    best: tuple[int, int] | None = None
    for lap in range(period, (last - start) // 2 + 1, period):
        for k in range(start, last - 2 * lap + 1):
            if best is not None and k + lap >= sum(best):
                break
            if states[k] != states[k + lap]:
                continue
            first = walk.events[marks[k] : marks[k + lap]]
            after = walk.events[marks[k + lap] : marks[k + 2 * lap]]
            if first == after and states[k + lap] == states[k + 2 * lap]:
                best = (k, lap)
                break
    return best


def upstream_agents(kernel: Kernel, stuck: list[Agent]) -> list[Agent]:
    """The blocked agents that wait on no blocked agent outside their own cycle: those of
    the strongly connected components of the waits-for graph that no edge leaves (an agent
    waits for those whose role has an op on the barrier group it waits on, other than a
    wait; on anything but an mbarrier, for every other agent). A hang's cause is there: the
    others wait, through their barriers, for them (a producer whose ring no consumer
    releases, because the consumers wait on each other's order barrier)."""
    feeds = barrier_feeders(kernel.fn)
    edges: dict[int, set[int]] = {}
    for i, a in enumerate(stuck):
        group = getattr(a.blocked.op, "barrier", None) if a.blocked is not None else None
        roles = feeds.get(group) if isinstance(group, SSAValue) else None
        edges[i] = {j for j, o in enumerate(stuck)
                    if j != i and (roles is None or o.role in roles)}  # fmt: skip
    # Reachability closure (a few dozen agents): i and j share a component when each
    # reaches the other; a component is upstream when all it reaches is itself.
    reach = {i: set(e) for i, e in edges.items()}
    changed = True
    while changed:
        changed = False
        for i in reach:
            more = set().union(*(reach[j] for j in reach[i])) - reach[i]
            if more:
                reach[i] |= more
                changed = True
    return [a for i, a in enumerate(stuck) if all(i in reach[j] for j in reach[i])]


def barrier_feeders(fn: Operation) -> dict[SSAValue, set[int | None]]:
    """Per barrier group (a copy.barrier_init result), the roles (their index in
    copy.warp_specialize; None: outside roles) with an op that takes it, directly or as a
    pointer, other than a wait or test on it: those that arrive on it, expect or deliver
    its bytes, commit to it. Once per verification run."""

    def derive() -> dict[SSAValue, set[int | None]]:
        found: dict[SSAValue, set[int | None]] = {}
        for op in ops_of(fn):
            if op.name in WAITS:
                continue
            for v in op.operands:
                pointed = barrier_pointer(v)
                group = pointed[0] if pointed is not None else v
                if isinstance(group.type, BarrierType):
                    found.setdefault(group, set()).add(role_index(op))
        return found

    return per_run("barrier_feeders", fn, derive)


WAITS = frozenset({"copy.barrier_wait", "copy.barrier_test", "copy.barrier_inval"})


def role_index(op: Operation) -> int | None:
    """The index of the role of copy.warp_specialize that `op` is in (None outside)."""
    region = role_of(op)
    if not isinstance(region, Region):
        return None
    parent = region.parent_op()
    assert parent is not None  # (`role_of`: a region of copy.warp_specialize)
    return parent.regions.index(region)


def blocked_name(agents: list[Agent]) -> str:
    """The agents of one role blocked at one op, by name: "role 1 of CTA 3", or of
    several CTAs, "role 1 of CTAs 1-15"."""
    if len(agents) == 1:
        return agents[0].name
    return f"{agents[0].role_name} of CTAs {ranks_text(sorted(a.rank for a in agents))}"
