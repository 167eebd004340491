"""The records the parts of the protocol state share (`state`): a barrier and what waits on
it, an SMEM region and the accesses and async writes of it, the exception that ends a run
that hangs, and how messages name barriers and who made an access.

The model (docs/design.md, "The protocol analysis"):
- A barrier of a group counts arrivals and transaction bytes per phase; a phase *closes*
  when it has `arrivals` arrivals and its bytes expected equal its bytes delivered (it then
  completes once its copies land). Copies deliver to the phase open when they are issued.
  A phase's clock joins its arrivals' and copies' clocks (and the phase before); a class
  that observes the phase (`barrier_wait`) joins it, and then knows the phase (the barrier's
  component of its clock).
- SMEM is a set of buffers (`copy.alloc_smem` results), each access a region: the buffer
  and its known leading indices (a ring slot); unknown indices may alias any slot, and a
  hazard through them is a warning, not an error. Each access, copy and TMA store read is a
  record with the stamps (`End`) a later conflicting access must know."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from analysis.protocol.clocks import Clock, End, join_all
from copy_dialect.attributes import BarrierType

Index = int | None
Key = tuple[SSAValue, int]
"""A barrier: its group (a `copy.barrier_init` result) and its index."""


def barrier_pointer(ptr: SSAValue) -> tuple[SSAValue, Operation | None] | None:
    """The `copy.barrier_init` group a pointer names (the group cast to `!llvm.ptr<3>`, as a
    tcgen05.commit takes it) and the `llvm.getelementptr` that offsets it to another of its
    barriers, if any; None for any other pointer."""
    gep, owner = None, ptr.owner
    if isinstance(owner, Operation) and owner.name == "llvm.getelementptr":
        gep, owner = owner, owner.operands[0].owner
    if (
        isinstance(owner, Operation)
        and owner.name == "builtin.unrealized_conversion_cast"
        and isinstance(owner.operands[0].type, BarrierType)
    ):
        return owner.operands[0], gep
    return None


SNAPSHOT_LAG = 1
"""How far behind a barrier's current phase a clock's knowledge of it is told apart in a
snapshot: a class that lags further has its wait two phases ahead reported in the run with
the most iterations (its fills are told apart by `seen` too)."""


class Deadlock(Exception):
    """The walk cannot go on: the kernel hangs at the op reported."""


@dataclass(frozen=True)
class Region:
    buffer: SSAValue
    index: tuple[Index, ...]

    def __hash__(self) -> int:
        # SSA values are equal only to themselves: their identity hashes alike, without
        # xDSL's hash method (the walk keys records by region at every commit)
        return hash((id(self.buffer), self.index))

    def overlap(self, other: Region) -> str:
        """ "yes", "maybe" (an unknown index may alias) or "no"."""
        if self.buffer is not other.buffer:  # (SSA values are equal when they are one)
            return "no"
        maybe = False
        for a, b in zip(self.index, other.index, strict=False):
            if a is None or b is None:
                maybe = True
            elif a != b:
                return "no"
        return "maybe" if maybe else "yes"

    def show(self) -> str:
        name = f"%{self.buffer.name_hint}" if self.buffer.name_hint else "the SMEM buffer"
        if not self.index:
            return name
        return f"{name}[{', '.join('?' if i is None else str(i) for i in self.index)}]"

    def part(self) -> tuple[object, ...]:
        """The region in a snapshot."""
        return (self.buffer, self.index)


@dataclass
class Observation:
    """A class observed phase `phase` of a barrier by a wait (`op`, by `who`); its clock then
    read `stamp` in its own component. The next phase must complete after it."""

    cls: int
    phase: int
    stamp: int
    op: Operation
    who: str
    at_once: bool = False
    """A wait on the parity of a phase the class observed already: it returns at once only
    while the next phase has not completed."""


@dataclass
class Waiter:
    """Threads blocked in `op` until phase `target` of a barrier completes."""

    op: Operation
    who: str
    target: int


@dataclass
class Barrier:
    init: Operation
    count: int
    comp: int
    """Its component of the clocks: the phases a class knows complete."""
    closed: int = 0
    arrivals: int = 0
    expected: int = 0
    delivered: int = 0
    joined: Clock = field(default_factory=list)
    """Part of `open`: what the arrivals and copies of the open phase joined so far know."""
    knew: list[Clock] = field(default_factory=list)
    """The rest of `open`: copies of the clocks of those whose knowledge `learn` has not
    joined yet (joined once, when `open` is read: a cluster's clocks are wide, and a phase
    gets one of them per arrival and multicast share)."""
    done: Clock = field(default_factory=list)
    """The clock of the last completed phase (`closed - 1`): what its observers learn."""
    observed: list[Observation] = field(default_factory=list)
    waiting: list[Waiter] = field(default_factory=list)
    early_wait: tuple[Operation, int] | None = None
    """The last wait of a parity whose phase had completed already (returned at once)."""
    unknown: bool = False
    """An op on the group had an index or count the analysis could not follow."""
    arrived: list[tuple[Operation, str]] = field(default_factory=list)
    """The arrivals of the open phase, and who made them."""
    last_arrived: list[tuple[Operation, str]] = field(default_factory=list)
    """The arrivals of the phase that completed last."""
    phase_ranks: list[int] = field(default_factory=list)
    """The CTAs whose releases (barrier_arrive, peer_arrive, tcgen05.commit) arrived on the
    open phase, in a run that models the cluster's CTAs (`waits.PhaseWaits.hang`)."""
    dropped: int = 0
    """Arrivals the open phase's arrive_drops take off every later phase's count."""
    invalid: Operation | None = None
    """The copy.barrier_inval that ended the barrier (until a copy.barrier_reinit)."""
    expecters: list[Operation] = field(default_factory=list)
    """The ops that expect the open phase's bytes (an arrive_expect_tx, an expect_tx)."""
    senders: list[Operation] = field(default_factory=list)
    """The ops that delivered the open phase's bytes (copies, complete_tx), in order."""
    closed_by: Closer | None = None
    """The copy that completed the last phase, when a copy did."""
    sources: set[int] = field(default_factory=set)
    """The thread classes that ever arrived on it or sent it bytes (its copies' issuers)."""
    phase_sources: set[int] = field(default_factory=set)
    """Those of them that did for the open phase. In a hang, a wait for a phase that a
    blocked class fed before but not yet this phase waits on that class (`run.Walk.
    deadlock`)."""
    completer: tuple[Operation, str] | None = None
    """The thread arrival that completed the last phase, and its agent, when one did (not
    a copy's bytes)."""
    last_expected: int = 0
    """The bytes the last completed phase expected."""

    @property
    def open(self) -> Clock:
        """What the arrivals and copies of the open phase know (joined)."""
        if self.knew:
            clocks = [self.joined, *self.knew] if self.joined else self.knew
            self.joined = join_all(clocks)
            self.knew = []
        return self.joined

    @open.setter
    def open(self, clock: Clock) -> None:
        self.joined, self.knew = clock, []

    def learn(self, clock: Clock) -> None:
        """The open phase comes to know what `clock` knows now."""
        self.knew.append(clock.copy())


@dataclass(frozen=True)
class Closer:
    """A copy that completed a phase: its issuer's class, that class's clock then, and the
    ops that expected the phase's bytes. A copy the same class issues next, knowing nothing
    more, was meant for the same phase: if it lands in the next one, the phase's count or
    its bytes are short (P5)."""

    op: Operation
    cls: int
    clock: Clock
    expecters: tuple[Operation, ...]


@dataclass(frozen=True)
class Release:
    """An arrival of a class (`op`, a copy.barrier_arrive), its stamp and its clock then:
    what a copy ordered after it may overwrite is what the class was done with (P3)."""

    op: Operation
    key: Key
    stamp: int
    clock: Clock


@dataclass
class Fill:
    """An async write of SMEM: a TMA load (on `key`, `phase`) or a cp.async copy, by `who`."""

    op: Operation
    region: Region
    key: Key | None
    phase: int
    end: End | None
    """What a reader must know: the phase that completes the load, the sync after the
    wait_group that completes the cp.async group (None while it is in flight)."""
    reported: bool = False
    """A race with it was reported: it is not reported again (one error per mistake)."""
    issued: Clock | None = None
    """Its issuer's clock when it was issued (with roles): which releases it is ordered
    after."""
    writer: str | None = None
    """What writes it, where another CTA does (a message's subject: "CTA 0's multicast
    gather4"); None for this CTA's own copy."""
    barrier: Barrier | None = None
    """The barrier `phase` counts on where it may be another CTA's (a leader-tracked load's
    bytes complete on the pair leader's); None: this CTA's own at `key`."""


@dataclass
class Access:
    op: Operation
    region: Region
    write: bool
    end: End
    """The stamps of the classes that made it."""
    who: str
    seen: tuple[Clock, ...] = ()
    """With roles, the clock of each class of `end` when it made the access."""


@dataclass
class StoreRead:
    """A TMA store whose issuer waited its reads, at `end`; others must know `end`."""

    op: Operation
    region: Region
    end: End


@dataclass
class PeerRead(StoreRead):
    """A peer copy's read of its source in this CTA (`copy.peer_copy`): done with the phase
    of the receiver's barrier its bytes complete (`end`), which a thread of this CTA learns
    only from the receiver (an arrival the receiver makes after its wait), not from a barrier
    of its own block."""


def describe_key(key: Key) -> str:
    group, index = key
    name = f"%{group.name_hint}" if group.name_hint else "the barrier group"
    return f"barrier {index} of {name}"


def learned_since(then: Clock, now: Clock, c: int) -> bool:
    """Whether class c, whose clock was `then` and is `now`, learned anything in between
    (beyond its own events): a wait that returned, a sync."""
    return any(v > (then[x] if x < len(then) else 0) for x, v in enumerate(now) if x != c)


def describe_ops(ops: list[tuple[Operation, str]]) -> str:
    return ", ".join(sorted({who for _, who in ops}))


def ranks_text(ranks: list[int]) -> str:
    """Ranks in words: runs of three or more as "a-b" ("0, 2 and 4-7")."""
    runs: list[list[int]] = []
    for r in ranks:
        if runs and r == runs[-1][-1] + 1:
            runs[-1].append(r)
        else:
            runs.append([r])
    parts: list[str] = []
    for run in runs:
        parts += [f"{run[0]}-{run[-1]}"] if len(run) >= 3 else [str(r) for r in run]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
