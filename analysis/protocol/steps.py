"""What the walker (`walk`), its op handlers (`ops_*`) and the run (`run`) share: the walk as
a generator of the places an agent blocks (`Steps`, `Blocked`), the exceptions that end or
fork a run (`Stop`, `Choose`), the thread masks, and what an agent sees of its run (`Run`)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from xdsl.ir import Operation, SSAValue

from analysis.protocol.facts import Kernel
from analysis.protocol.findings import Related, Report
from analysis.protocol.state import State

WARP = 32
FIRST_WARP = (1 << WARP) - 1
"""The lanes of a role's first warp, in the role's thread mask (its elected thread is one)."""

ALL = -1
"""The mask of every thread of the block; other masks are bit sets of thread ids (of the
block, or of the role: its thread index %t), None an unknown subset (a thread-dependent
condition the analysis cannot evaluate)."""


class Choose(Exception):
    """The run needs a value for `value` (an SSA value, or a grid-stride loop's
    `facts.LoopCount`): the driver runs again for each of `options`."""

    def __init__(self, value: Hashable, options: Sequence[int]):
        super().__init__()
        self.value = value
        self.options = options


class Stop(Exception):
    """The run ends here: the analysis cannot follow the kernel further (reported)."""


@dataclass
class Blocked:
    """Where an agent waits: it may go on once `ready()`; `stuck(others)` reports the hang
    when every agent waits (`others`: notes on where the others wait). `infeasible`: the
    wait stands for a barrier_test chosen true, and a test that never sees its phase only
    returns false (the run is not one the kernel can take)."""

    op: Operation
    ready: Callable[[], bool]
    stuck: Callable[[list[Related]], None] | None
    infeasible: bool = False
    what: str = ""
    """What it waits for, for the others' hang report."""
    sources: Callable[[], set[int]] | None = None
    """The thread classes that fed what it waits for before but not yet what it waits for
    now (`records.Barrier.phase_sources`)."""
    started: Callable[[], bool] | None = None
    """Whether what it waits for got part of what it needs (a phase some of whose arrivals or
    bytes came): in a hang, such a wait is where the kernel went wrong, and a wait for a
    phase nothing arrived on is likely one that waits on it (`run.Walk.deadlock`)."""


Steps = Generator[Blocked | None, None, Any]

Step = Callable[[Any, Any, int | None], Steps | None]
"""How an agent follows an op (`dispatch`): given the agent, the op and the mask of the
threads that reach it, the steps of its walk (None: done at once)."""


class Run(Protocol):
    """What an agent sees of the run it is in (`run.Walk`)."""

    kernel: Kernel
    bindings: dict[SSAValue, int]
    watched: set[object]
    report: Report
    state: State
    dispatch: Mapping[type[Operation], Step]
    foreign: Step
    events: list[tuple[object, ...]]
    heads: dict[Operation, list[Heads]]
    peer_heads: dict[Operation, list[Heads]]
    ticks: int

    def snapshot(self, agent: Any, i: int) -> tuple[object, ...]: ...

    def beside(self, agent: Any, depth: int) -> tuple[Operation | None, ...]: ...

    def fork(self, roles: list[Any]) -> None: ...

    def join(self, block: Any, roles: list[Any], op: Operation) -> None: ...


@dataclass
class Heads:
    """One walk of a loop whose trip count was chosen (each time the loop is entered: a K
    loop once per tile): the state at the head of each iteration (`Walk.snapshot`), where
    its events start, and where the walk's events end (None while it runs)."""

    states: list[tuple[object, ...]] = field(default_factory=list)
    marks: list[int] = field(default_factory=list)
    end: int | None = None
    times: list[int] = field(default_factory=list)
    """When each head was reached, and `closed` when the walk ended, on the run's clock of
    loop heads and ends (`Walk.ticks`): which heads of one loop came after another ended."""
    closed: int | None = None
    beside: list[tuple[Operation | None, ...]] = field(default_factory=list)
    """Per head (CTA 0's), the loop every other agent is in at this loop's depth
    (`Walk.beside`), for the cuts of its laps (`cuts.cut`)."""

    def __len__(self) -> int:
        return len(self.states)
