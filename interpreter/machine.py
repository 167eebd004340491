"""The machine: the CTAs of a cluster, their agents (the threads of a CTA, or of one role),
the async copies in flight, and the scheduler that interleaves them.

An agent runs its ops in lockstep over its threads (`mask`: numpy masks for divergence) as a
Python generator that yields where another agent or a copy may go first: at each copy-dialect
op and each SMEM access, and where it waits (a `Wait`, resumed once it is ready). The
scheduler picks who goes next: an agent that can run, or the completion of a copy in flight.
`Schedule` says how: `round_robin`, `random` (seeded) or `adversarial` (copies complete as
late as they can, so readers run as early as they can).

All live agents waiting and no copy in flight is a deadlock (P6): each agent's wait is
reported. A kernel that returns with a copy it never waited for (its completion not seen by
the agent that returns) leaves it in flight (P7).

Before an op runs, the threads that reach it are checked against who must (`reach.reaches`,
the lowering's issuing thread, P10): an op of the elected thread that the elected thread does
not reach is not issued, as on the GPU; an op of the whole group or of whole warps that only
some of them reach stops the cluster's run.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.ir import Block, Operation, SSAValue

from interpreter.memory import Smem
from interpreter.races import WARP, Clock, Epoch, Race, join, sees
from interpreter.values import InterpretError, RuleBroken, Value

SPIN_LIMIT = 1000
"""Steps of only failing polls, with no copy in flight, after which a run is deadlocked."""


@dataclass
class Violation:
    """A rule a run broke: its id, the op (and the op it conflicts with), the CTA and
    what happened."""

    rule: str
    op: Operation
    message: str
    cta: tuple[int, int, int]
    other: Operation | None = None

    def __str__(self) -> str:
        where = f"CTA {self.cta}"
        return f"[{self.rule}] {where}: '{self.op.name}' {self.message}"


@dataclass
class Wait:
    """What a blocked agent waits for: `ready()` says whether it may go on."""

    ready: Callable[[], bool]
    describe: Callable[[], str]
    op: Operation
    spin: bool = False
    """A poll that failed (`copy.barrier_test` in a loop): the agent may go on, but it makes
    no progress until something else does, so the scheduler runs others first."""


Step = Generator["Wait | None", None, None]


class Clocks:
    """Allocates clock components."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.agents: set[int] = set()
        """The components of agents (their threads' own accesses), which only a release
        publishes (`relaxed`)."""

    def new(self, name: str, agent: bool = False) -> int:
        self.names.append(name)
        if agent:
            self.agents.add(len(self.names) - 1)
        return len(self.names) - 1

    def relaxed(self, clock: Clock) -> Clock:
        """What a relaxed arrival publishes of `clock`: what had completed (barrier phases,
        group retirements, tensor-core reads a wait retired), not any agent's accesses."""
        return {k: v for k, v in clock.items() if k not in self.agents}


@dataclass(eq=False)
class Transfer:
    """An async copy in flight: `complete()` moves its data and signals its completion."""

    op: Operation
    cta: Any
    """The CTA that issued it."""
    complete: Callable[[], None]
    epochs: dict[Any, Epoch]
    """Each CTA whose SMEM the copy reads or writes, and what a thread of that CTA must have
    seen for the copy to be over for it (the completion of the barrier phase or group that
    tracks the copy there): a CTA that returns before that leaves the copy in flight (P7)."""
    done: bool = False


class Agent:
    """Threads that run in lockstep: a CTA's (outside roles) or one role's."""

    def __init__(self, cta: Cta, name: str, mask: np.ndarray, env: dict[SSAValue, Value]):
        self.cta = cta
        self.name = name
        self.mask = mask
        self.env = env
        self.component = cta.machine.clocks.new(f"{name} of CTA {cta.rank}", agent=True)
        self.clock: Clock = {self.component: 1}
        self.warps: dict[int, int] = {
            int(w): cta.machine.clocks.new(f"warp {w} of {name} of CTA {cta.rank}", agent=True)
            for w in np.unique(np.flatnonzero(mask) // WARP)
        }
        """Per warp of the agent (by its index in the CTA), the component that says up to
        which of the agent's times its threads' accesses are released: a release carries
        the agent's time for the warps of the threads that make it, and for the other warps
        only their `frontier`. The threads of one agent run in lockstep here, but a warp's
        accesses are ordered before another warp's arrival only through a barrier they meet
        (a named barrier before a consumer's elected release), as on the GPU."""
        self.frontier: dict[int, int] = dict.fromkeys(self.warps, 0)
        """Per warp: the agent's time when its threads last published their accesses to
        every thread of the agent (`publish`)."""
        self.warp_clocks: dict[int, Clock] | None = None
        """Per warp, what it knows, once a wait of only some warps (an `scf.if` on the
        thread) made them differ; None while every warp knows `clock` (the join of all),
        until a barrier of all the agent's threads (`publish`) joins them again."""
        self.published = np.zeros(cta.threads, dtype=np.int64)
        """Per thread, how many times its accesses so far were published to the agent's
        threads (a barrier they all met, a wait on a phase the thread released into):
        what orders one thread's SMEM accesses before another's of the same agent."""
        self.groups = cta.machine.group_set(self)
        self.unwaited: set[SSAValue] = set()
        """Registers of TMEM loads no `tmem_wait load` has covered (P11 if used)."""
        self.tmem_stores: list[tuple[Operation, object, range]] = []
        """TMEM stores no `tmem_wait store` has covered, with the TMEM (`ops_tmem.Tmem`) and
        columns each writes (P12 if those columns are read or freed)."""
        self.wait: Wait | None = None
        self.done = False
        self.gen: Iterator[Wait | None] | None = None
        self.parent: Agent | None = None

    @property
    def epoch(self) -> Epoch:
        return (self.component, self.clock[self.component])

    def warps_of(self, lanes: np.ndarray | None) -> set[int]:
        """The agent's warps with a thread in `lanes` (None: all of them)."""
        if lanes is None:
            return set(self.warps)
        return set((np.flatnonzero(lanes) // WARP).tolist()) & self.warps.keys()

    def warp_clock(self, warp: int) -> Clock:
        """What warp `warp` knows (`clock` while the warps agree)."""
        if self.warp_clocks is None:
            return self.clock
        return {**self.warp_clocks[warp], self.component: self.clock[self.component]}

    def release(self, lanes: np.ndarray | None = None) -> Clock:
        """The clock an arrival or a barrier of the threads of `lanes` (a mask; None: all)
        publishes: what their warps know; the agent's own time moves on. Of the other
        warps' accesses it carries only those published to the agent's threads
        (`frontier`)."""
        if self.warp_clocks is None or lanes is None:
            published = dict(self.clock)
        else:
            published = {}
            for w in self.warps_of(lanes):
                join(published, self.warp_clocks[w])
            published[self.component] = self.clock[self.component]
        now = self.clock[self.component]
        releasing = self.warps_of(lanes)
        for w, component in self.warps.items():
            time = now if w in releasing else self.frontier[w]
            if published.get(component, 0) < time:
                published[component] = time
        self.clock[self.component] += 1
        return published

    def lagging(self, clock: Clock, time: int) -> list[int]:
        """The agent's warps whose accesses at `time` `clock` does not know released."""
        return [w for w, c in self.warps.items() if clock.get(c, 0) < time]

    def unpublished(self, time: int) -> list[int]:
        """The warps whose accesses at `time` the elected thread (of the first warp) does
        not know of yet: not published to the agent's threads since."""
        first = min(self.warps)
        return [w for w, at in self.frontier.items() if w != first and at < time]

    def acquire(self, clock: Clock, lanes: np.ndarray | None = None) -> None:
        """The threads of `lanes` (None: all) learn `clock` (a wait, a barrier): their
        warps do; the others only at a later barrier of all the agent's threads."""
        learning = self.warps_of(lanes)
        if self.warp_clocks is None and learning != set(self.warps):
            self.warp_clocks = {w: dict(self.clock) for w in self.warps}
        join(self.clock, clock)
        if self.warp_clocks is not None:
            for w in learning:
                join(self.warp_clocks[w], clock)

    def publish(self, lanes: np.ndarray | None = None) -> None:
        """The accesses of the threads of `lanes` (a mask; None: all) are seen by every
        thread of the agent from now on."""
        if lanes is None:
            self.published += 1
            self.warp_clocks = None  # (they met: each knows what any knew)
        else:
            self.published[lanes] += 1
        for w in self.warps_of(lanes):
            self.frontier[w] = self.clock[self.component]

    def get(self, value: SSAValue) -> Value:
        try:
            return self.env[value]
        except KeyError:
            raise InterpretError(
                value.owner, "uses a value the interpreter has not computed"
            ) from None

    def threads(self) -> np.ndarray:
        return np.nonzero(self.mask)[0]

    def __repr__(self) -> str:
        return f"<{self.name} of CTA {self.cta.rank}>"


class Cta:
    """One CTA: its threads, SMEM and mbarriers."""

    def __init__(
        self,
        machine: Machine,
        rank: int,
        local: tuple[int, int, int],
        block_id: tuple[int, int, int],
        block: tuple[int, int, int],
    ):
        self.machine = machine
        self.rank = rank
        """The CTA's rank in its cluster (x fastest)."""
        self.local = local
        """Its coordinates in its cluster."""
        self.block_id = block_id
        self.tmem: Any = None
        """Its tensor memory, once it allocates some (interpreter.ops_tmem)."""
        self.objects: dict[SSAValue, Any] = {}
        """Its SMEM buffers and barrier groups, by the value that names them: what a peer
        CTA's DSMEM op or a multicast copy finds at the same value's offset here."""
        self.returned = False
        self.block = block
        self.threads = threads = block[0] * block[1] * block[2]
        self.smem = Smem()
        self.named: dict[int, Any] = {}
        """The named barriers, by id (interpreter.ops_roles)."""
        self.thread_ids = np.arange(threads, dtype=np.int64)
        """Each thread's linear index in the block (x fastest): the warps are its runs of 32."""
        self.thread_xyz = (
            self.thread_ids % block[0],
            self.thread_ids // block[0] % block[1],
            self.thread_ids // (block[0] * block[1]),
        )


@dataclass
class GroupSet:
    """An agent's bulk and cp.async groups: per kind, the copies of its open group and of
    the groups it committed, and a clock component per kind whose time n says the first n
    groups are retired (`read`: the first n bulk groups' SMEM reads are done)."""

    component: dict[str, int]
    open: dict[str, list[Transfer]] = field(default_factory=lambda: {"bulk": [], "cp_async": []})
    committed: dict[str, list[list[Transfer]]] = field(
        default_factory=lambda: {"bulk": [], "cp_async": []}
    )


class Schedule:
    """How the scheduler interleaves: `mode` is round_robin, random or adversarial."""

    MODES = ("round_robin", "random", "adversarial")

    def __init__(self, mode: str = "random", seed: int = 0):
        if mode not in self.MODES:
            raise ValueError(f"unknown schedule '{mode}': expected one of {', '.join(self.MODES)}")
        self.mode = mode
        self.rng = random.Random(seed)
        self.turn = 0

    def pick(
        self, agents: list[Agent], copies: list[Transfer], spinning: list[Agent]
    ) -> Agent | Transfer:
        """Who goes next: an agent that can run, a copy in flight, or an agent that spins."""
        if self.mode == "adversarial":
            if agents:
                return agents[0]
            return copies[-1] if copies else spinning[0]
        if self.mode == "round_robin":
            options: list[Agent | Transfer] = [*agents, *spinning, *copies[:1]]
            self.turn += 1
            return options[self.turn % len(options)]
        options = [*agents, *spinning, *copies]
        return options[self.rng.randrange(len(options))]


class Machine:
    """Runs one cluster's CTAs to the end, collecting the rules they break."""

    def __init__(self, schedule: Schedule, max_steps: int = 10_000_000):
        self.schedule = schedule
        self.clocks = Clocks()
        self.agents: list[Agent] = []
        self.copies: list[Transfer] = []
        """Every copy issued (the exit checks read them)."""
        self.in_flight: list[Transfer] = []
        """The copies issued and not yet complete, oldest first."""
        self.violations: list[Violation] = []
        self.max_steps = max_steps
        self.max_ops = 100 * max_steps
        """Ops run, at most (a loop that never yields, a trip count too large)."""
        self.ops = 0
        self.ctas: list[Cta] = []
        self.grid: tuple[int, int, int] = (1, 1, 1)
        self.cluster: tuple[int, int, int] = (1, 1, 1)
        self.maps: dict[Any, dict[int, Any]] = {}
        """The tensor-map workspaces in global memory, by the op that names them: shared by
        every cluster of a run (`interpreter.ops_tensormap`)."""
        self.cluster_barrier: Any = None
        """The cluster's barrier (`barrier.cluster`), interpreter.ops_cluster's."""
        self.cluster_arrivals: dict[Any, int] = {}
        """The agents that arrived on the cluster barrier (`copy.cluster_sync arrive`) and
        have not waited yet: the generation of their arrive."""
        self.reach: dict[Operation, str | None] = {}
        """Who must reach each op run so far (`reach.reach_of`, P10)."""
        self.gmem_log: Any = None
        """Where the GMEM accesses go, for a chain of kernels (`interpreter.grid_dependency`);
        None: not logged."""
        self.launches: Any = None
        """The grid's launch queue, shared by every cluster of a run (cluster launch control,
        `interpreter.ops_clc`); None: a try_cancel finds no cluster to cancel."""

    def group_set(self, agent: Agent) -> GroupSet:
        return GroupSet(
            {
                kind: self.clocks.new(f"{kind} groups of {agent.name}")
                for kind in ("bulk", "cp_async", "read")
            }
        )

    def issue(self, transfer: Transfer) -> None:
        """An async copy issued: in flight until the scheduler completes it."""
        self.copies.append(transfer)
        self.in_flight.append(transfer)

    def report(
        self, rule: str, op: Operation, message: str, cta: Cta, other: Operation | None = None
    ) -> None:
        self.violations.append(Violation(rule, op, message, cta.block_id, other))

    def races(self, races: list[Race], cta: Cta) -> None:
        for r in races:
            self.report(r.rule, r.op, r.message, cta, r.other)

    def start(self, agent: Agent, body: Step) -> None:
        agent.gen = body
        self.agents.append(agent)

    def run(self) -> None:
        steps = spins = 0
        while True:
            live = [a for a in self.agents if not a.done]
            runnable = [a for a in live if a.wait is None or a.wait.ready()]
            spinning = [a for a in runnable if a.wait is not None and a.wait.spin]
            busy = [a for a in runnable if a.wait is None or not a.wait.spin]
            pending = self.in_flight
            if not runnable and not pending:
                if live:
                    self.deadlock(live)
                return
            spins = spins + 1 if not busy and not pending else 0
            if spins > SPIN_LIMIT:  # only polls that fail, and nothing that could change them
                self.deadlock(live)
                return
            steps += 1
            if steps > self.max_steps:
                raise InterpretError(None, f"ran {self.max_steps} steps without finishing")
            choice = self.schedule.pick(busy, pending, spinning)
            if isinstance(choice, Transfer):
                choice.done = True
                self.in_flight.remove(choice)
                choice.complete()
                continue
            choice.wait = None
            try:
                assert choice.gen is not None
                choice.wait = next(choice.gen)
            except StopIteration:
                choice.done = True
            except RuleBroken as broken:  # the cluster's run cannot go on
                self.report(broken.rule, broken.op, str(broken), choice.cta)
                for agent in self.agents:  # the exit checks are left out
                    agent.done = True
                return

    def deadlock(self, live: list[Agent]) -> None:
        for agent in live:
            assert agent.wait is not None
            self.report(
                "P6",
                agent.wait.op,
                f"never returns: every thread of the CTA waits and no copy is in flight; "
                f"{agent.name} waits for {agent.wait.describe()}",
                agent.cta,
            )
        for agent in live:
            agent.done = True

    def copies_left(self, agent: Agent) -> list[Transfer]:
        """The copies that read or write the SMEM of `agent`'s CTA and whose completion
        `agent` has not seen."""
        left = []
        for c in self.copies:
            epoch = c.epochs.get(agent.cta)
            if epoch is not None and not sees(agent.clock, epoch):
                left.append(c)
        return left


def run_block(agent: Agent, block: Block, mask: np.ndarray) -> Step:
    """Runs `block`'s ops for the threads of `mask`; the terminator's operands are left in
    `agent.env` under the terminator (`yielded`)."""
    from interpreter.dispatch import HANDLERS
    from interpreter.reach import reaches

    machine = agent.cta.machine
    for op in block.ops:
        machine.ops += 1
        if machine.ops > machine.max_ops:
            raise InterpretError(op, f"ran {machine.max_ops} ops without finishing")
        if agent.unwaited and any(v in agent.unwaited for v in op.operands):
            agent.cta.machine.report(
                "P11", op,
                "uses registers of a copy.tmem_load before copy.tmem_wait load",
                agent.cta,
            )  # fmt: skip
            agent.unwaited.difference_update(op.operands)
        handler = HANDLERS.get(type(op))
        if handler is None:
            raise InterpretError(
                op,
                f"'{op.name}' is not modelled by the interpreter",
                note="see docs/interpreter.md for the ops it runs",
            )
        if not reaches(agent, op, mask):
            continue
        try:
            result = handler(agent, op, mask)
            if result is not None:
                yield from result
        except NotImplementedError as exc:  # an element type a handler has no form for
            raise InterpretError(
                op, f"'{op.name}' is not modelled by the interpreter here: {exc}"
            ) from exc


def yielded(agent: Agent, block: Block) -> list[Value]:
    term = block.last_op
    assert term is not None
    return [agent.get(v) for v in term.operands]
