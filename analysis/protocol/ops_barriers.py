"""How an agent follows the mbarrier ops: which barrier an op names (P9), which threads an
op of each issuer runs for (`issued`; the arrivals they make are the dialect's,
`copy.arrivals_of`), the arrivals, expected and completed bytes, init, inval and reinit
(`state.barriers`), and the waits and tests, which block the agent until their phase
completes (`state.waits`)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import scf
from xdsl.ir import Operation, SSAValue

from analysis.protocol.findings import Related, error, warning
from analysis.protocol.ops_scf import choose
from analysis.protocol.records import Key, Waiter, describe_key
from analysis.protocol.steps import Blocked, Steps, Stop
from analysis.protocol.values import VARYING
from analysis.protocol.walk import Agent
from copy_dialect import ops as copy


@dataclass(frozen=True)
class IssueWords:
    """How a fix note says an op of each issuer counts (`issued`)."""

    elected: str
    unknown: str
    """What the op does for the threads that reach it, before "every thread ..." (P6)."""
    unknown_fix: str
    warps: str
    """With `{}` for the number of warps."""
    threads_text: str
    """With `{}` for the number of threads."""
    threads_only_in_roles: bool
    """Whether the threads' wording is given only inside a role (else always)."""

    def threads(self, threads: int, in_role: bool) -> str | None:
        if self.threads_only_in_roles and not in_role:
            return None
        return self.threads_text.format(threads)


ARRIVAL = IssueWords(
    elected="issuer elected makes one arrival per execution",
    unknown="this arrival is made by",
    unknown_fix="give the kernel gpu.known_block_size, and put the arrival under scf.if on "
    "the thread id when one thread should arrive",
    warps="issuer warps makes one arrival per warp that reaches it, {} here; issuer elected "
    "makes one per execution",
    threads_text="issuer threads makes one arrival per thread, {} here; issuer warps makes one "
    "per warp, issuer elected one per execution",
    threads_only_in_roles=True,
)
"""copy.barrier_arrive's wording."""

ACTION = IssueWords(
    elected="issuer elected acts once per execution",
    unknown="this op acts for",
    unknown_fix="give the kernel gpu.known_block_size, and put the op under scf.if on the "
    "thread id when one thread should act (or use issuer elected)",
    warps="issuer warps acts once per warp that reaches it, {} here",
    threads_text="issuer threads acts once per thread, {} here; issuer elected once",
    threads_only_in_roles=False,
)
"""The wording of the other ops that take an issuer (arrive_drop, complete_tx)."""

TRACKED = IssueWords(
    elected="",
    unknown="a cp.async copy on a barrier arrives once for",
    unknown_fix="give the kernel gpu.known_block_size (each thread that issues the copy "
    "arrives once)",
    warps="",
    threads_text="a cp.async copy on a barrier makes one arrival per issuing thread, {} here",
    threads_only_in_roles=False,
)
"""An mbarrier-tracked cp.async copy's wording (`copy.async_copy ... impl cp_async` with a
barrier: one arrival per issuing thread)."""


def barrier_key(agent: Agent, op: Operation, group: SSAValue, index: SSAValue | None) -> object:
    """The barrier an op names, or None (reported) when the analysis cannot tell."""
    barriers = agent.state.barriers
    found = barriers.groups.get(group)
    if found is None:
        return None
    init, size = found
    got = 0 if index is None else agent.uniform_int(index)
    if isinstance(got, int):
        if 0 <= got < size:
            if not barriers.live_barrier(op, (group, got)):
                raise Stop
            return (group, got)
        # rule: P9
        agent.report(
            error(
                op,
                f"barrier index {got} is out of range: the group holds barriers 0 to {size - 1}",
                f"compute the index modulo {size} (arith.remui: the ring's slot), or make the "
                "group larger",
                Related(init, "the group"),
            )
        )
        raise Stop
    # rule: P9
    agent.report(
        warning(
            op,
            "cannot prove this op's barrier: its index is not known statically",
            "compute it from constants and the loop's induction variable (i mod S), or "
            "check it at run time with --debug-guards",
        )
    )
    for i in range(size):
        barriers.table[(group, i)].unknown = True
    return None


def issued(
    agent: Agent,
    op: Operation,
    mask: int | None,
    key: object,
    issuer: copy.Issuer,
    words: IssueWords = ACTION,
) -> tuple[int, tuple[int, ...], str | None] | None:
    """The threads an op of `issuer` (threads, warps, elected) runs for when the threads
    of `mask` reach it (the elected one alone for `elected`: `copy.executions` and
    `copy.Arrivals.made` count what they do), the classes that take part, and how it
    counts (for a fix note, in `words`); None when nothing acts or the analysis cannot tell
    (reported, P6)."""
    hb = agent.state.hb
    if issuer is copy.Issuer.ELECTED:
        if not agent.elected(op, mask):
            return None
        hb.stamp(agent.c0)
        return 1, (agent.c0,), words.elected
    n = agent.n
    if mask is None or n is None:
        why = "the threads that reach it are not known" if n else "the block size is unknown"
        # rule: P6
        agent.report(
            warning(
                op,
                f"cannot prove the phases of {describe_key(key)}: {words.unknown} "  # type: ignore[arg-type]
                f"every thread that reaches it, and {why}",
                words.unknown_fix,
            )
        )
        agent.state.barriers.table[key].unknown = True  # type: ignore[index]
        return None
    members = agent.members(mask)
    for c in members:
        hb.stamp(c)
    threads = agent.threads_in(mask)
    if issuer is copy.Issuer.WARPS:
        agent.whole_warps(op, mask)
        return threads, members, words.warps.format(copy.executions(issuer, threads))
    return threads, members, words.threads(threads, agent.role is not None)


# ---- arrivals and bytes ------------------------------------------------------------------


def barrier_init(agent: Agent, op: copy.BarrierInitOp, mask: int | None) -> None:
    agent.whole_group(op, mask, "initializes barriers with a block barrier")
    assert isinstance(op.result.type, copy.BarrierType)
    agent.state.barriers.init_group(
        op, op.result, op.result.type.count.data, op.arrivals.value.data
    )
    agent.sync()


def arrive(agent: Agent, op: copy.BarrierArriveOp, mask: int | None) -> None:
    agent.operand_event(op)
    key = barrier_key(agent, op, *named_operands(agent, op, "barrier", "index"))
    if key is None:
        return
    arrivals = copy.arrivals_of(op)
    got = issued(agent, op, mask, key, arrivals.issuer, ARRIVAL)
    if got is not None:
        threads, members, how = got
        made = arrivals.made(threads)
        agent.state.barriers.arrive(op, key, made, 0, members, agent.name, how, rank=agent.cta)  # type: ignore[arg-type]
        agent.state.barriers.releases.released(op, key, members)  # type: ignore[arg-type]


def expect_tx(agent: Agent, op: copy.BarrierArriveExpectTxOp, mask: int | None) -> None:
    agent.operand_event(op)
    key = barrier_key(agent, op, *named_operands(agent, op, "barrier", "index"))
    if agent.elected(op, mask) and key is not None:
        agent.state.hb.stamp(agent.c0)
        made = copy.arrivals_of(op).made(1)  # the elected thread's
        agent.state.barriers.arrive(op, key, made, op.bytes.value.data, (agent.c0,), agent.name)  # type: ignore[arg-type]


def arrive_drop(agent: Agent, op: copy.BarrierArriveDropOp, mask: int | None) -> None:
    agent.operand_event(op)
    key = barrier_key(agent, op, *named_operands(agent, op, "barrier", "index"))
    if key is None:
        return
    arrivals = copy.arrivals_of(op)
    got = issued(agent, op, mask, key, arrivals.issuer)
    if got is None:
        return
    threads, members, how = got
    tx = 0 if op.expect_tx is None else op.expect_tx.value.data
    agent.state.barriers.arrive_drop(
        op, key, arrivals.made(threads), copy.executions(arrivals.issuer, threads) * tx,
        members, agent.name, how,  # type: ignore[arg-type]
    )  # fmt: skip


def expect_tx_only(agent: Agent, op: copy.BarrierExpectTxOp, mask: int | None) -> None:
    agent.operand_event(op)
    key = barrier_key(agent, op, *named_operands(agent, op, "barrier", "index"))
    if agent.elected(op, mask) and key is not None:
        agent.state.hb.stamp(agent.c0)
        agent.state.barriers.expect(op, key, op.bytes.value.data, (agent.c0,))  # type: ignore[arg-type]


def complete_tx(agent: Agent, op: copy.BarrierCompleteTxOp, mask: int | None) -> None:
    agent.operand_event(op)
    key = barrier_key(agent, op, *named_operands(agent, op, "barrier", "index"))
    if key is None:
        return
    got = issued(agent, op, mask, key, op.arriving)
    if got is not None:
        threads, members, _ = got
        nbytes = copy.executions(op.arriving, threads) * op.bytes.value.data
        agent.state.barriers.complete_tx(op, key, nbytes, members)  # type: ignore[arg-type]


def barrier_inval(agent: Agent, op: copy.BarrierInvalOp, mask: int | None) -> None:
    agent.event(op)
    agent.whole_group(op, mask, "invalidates barriers after a block barrier")
    agent.sync()
    if not agent.state.inval_group(op, op.barrier):
        raise Stop


def barrier_reinit(agent: Agent, op: copy.BarrierReinitOp, mask: int | None) -> None:
    agent.event(op)
    agent.whole_group(op, mask, "initializes barriers with a block barrier")
    if not agent.state.barriers.reinit_group(op, op.barrier, op.arrivals.value.data):
        raise Stop
    agent.sync()


# ---- waits -------------------------------------------------------------------------------


def named_operands(agent: Agent, op: Operation, *names: str) -> tuple[SSAValue | None, ...]:
    """`op`'s operands of those names (each op asks for the same ones), read once per
    kernel: xDSL's accessors of an op with optional operands decode its operandSegmentSizes
    on every read."""
    operands = agent.kernel.operands.get(op)
    if operands is None:
        operands = agent.kernel.operands[op] = tuple(getattr(op, n) for n in names)
    return operands


def wait_key(agent: Agent, op: Operation) -> tuple[object, int] | None:
    """The barrier and parity of a barrier_wait or barrier_test, or None (reported)."""
    barrier, index, parity_value = named_operands(agent, op, "barrier", "index", "parity")
    key = barrier_key(agent, op, barrier, index)
    if key is None:
        return None
    parity = agent.uniform_int(parity_value)
    if not isinstance(parity, int):
        # rule: P6
        agent.report(
            warning(
                op,
                f"cannot prove this wait on {describe_key(key)}: its parity is not known "  # type: ignore[arg-type]
                "statically",
                "compute the parity from the loop's induction variable ((i / S) mod 2) or "
                "carry it through the loop, or check the wait at run time with "
                "--debug-guards",
            )
        )
        agent.state.barriers.table[key].unknown = True  # type: ignore[index]
        return None
    return key, parity


def wait(agent: Agent, op: copy.BarrierWaitOp, mask: int | None) -> Steps | None:
    found = wait_key(agent, op)
    if found is None:
        return None
    key, parity = found
    b = agent.state.barriers.table[key]  # type: ignore[index]
    agent.event(op, key[1], parity ^ (b.closed & 1))  # type: ignore[index]
    return wait_for(agent, op, key, parity, agent.observers(mask))  # type: ignore[arg-type]


def multicast_receivers(agent: Agent) -> tuple[int, list[int]] | None:
    """Where the run models the cluster's CTAs and `agent`'s CTA issues multicast loads: its
    rank and the CTAs those loads write (its collective groups, itself among them), whose
    consumers release the slots in it before it refills them."""
    rank = agent.cta
    if rank is None:
        return None
    facts = agent.walk.cluster.facts
    groups = [facts.group(rank, c.dims) for c in facts.collective.values() if not c.pair]
    if not groups:
        return None
    return rank, sorted({r for g in groups for r in g})


def wait_for(
    agent: Agent,
    op: Operation,
    key: Key,
    parity: int,
    observers: tuple[int, ...],
    infeasible: bool = False,
) -> Steps:
    """The classes `observers` wait on `parity`: those whose phase has not completed
    block until it has; all observe it."""
    s = agent.state
    waits = s.waits
    b = s.barriers.table[key]
    if b.unknown:
        return
    role = agent.role is not None
    targets = waits.wait_targets(op, key, parity, observers, agent.name, role)
    if not targets:
        return
    need = max(t for _, t in targets)
    if b.closed <= need:
        waiter = Waiter(op, agent.name, min(t for _, t in targets))
        b.waiting.append(waiter)
        yield Blocked(
            op,
            lambda: b.closed > need or b.unknown,
            lambda others: waits.hang(
                op, key, need, others, s.hb.concurrent, multicast_receivers(agent)
            ),
            infeasible,
            f"{op.name} on {describe_key(key)} (phase {need})",
            lambda: b.sources - b.phase_sources if b.closed == need else set(),
            lambda: b.closed == need and (b.arrivals > 0 or b.delivered > 0),
        )
        b.waiting.remove(waiter)
    s.observe(op, key, targets, agent.name, role)


def test(agent: Agent, op: copy.BarrierTestOp, mask: int | None) -> Steps:
    """`copy.barrier_test`: true once the phase of its parity has completed. In a spin
    loop (the `before` region of an scf.while) the loop ends once it holds, so the test
    stands for a wait; elsewhere its result is chosen: true (the tester then observes the
    phase, as after a wait) or false (it learns nothing)."""
    result = op.results[0]
    found = wait_key(agent, op)
    if found is None:
        agent.env[result] = VARYING
        return
    key, parity = found
    barriers = agent.state.barriers
    b = barriers.table[key]  # type: ignore[index]
    observers = agent.observers(mask)
    # Knows the phase of this parity already (the phase before): true at once.
    if all(barriers.known(c, key) % 2 != parity for c in observers) and observers:  # type: ignore[arg-type]
        agent.env[result] = 1
        return
    parent = op.parent_op()
    spin = isinstance(parent, scf.WhileOp) and op.parent_block() is parent.before_region.block
    if not spin:
        bound = agent.bindings.get(result)
        if bound is None:
            choose(agent, result, (1, 0))
        agent.event(op, key[1], parity ^ (b.closed & 1), bound)  # type: ignore[index]
        if not bound:
            agent.env[result] = 0
            return
    yield from wait_for(agent, op, key, parity, observers, infeasible=not spin)  # type: ignore[arg-type]
    agent.env[result] = 1
