"""The cluster as a set of CTAs (issue N, item 2): which ranks a kernel's runs model, the
values each rank knows from its position in the cluster, and the state the CTAs share.

A kernel whose CTAs never touch each other (no DSMEM op, no multicast or leader-tracked
load, no `copy.cluster_sync`) is modelled by one CTA, which stands for all of them. Any
other clustered kernel is modelled with one CTA per rank (up to 16, any 1-3 D shape): each
rank has its own protocol state (`State`: barriers, SMEM, groups, ...) and its own agents
(the block, its roles), all sharing one `HappensBefore`, so a clock of one CTA can know a
phase of another's barrier, and a peer's write is checked against the clocks of the CTA it
lands in. What crosses CTAs (`ops_cluster`): a multicast load writes its share into the slot
of every CTA of its collective group and completes its bytes on each one's barrier (a
multicast gather4, one CTA's whole tile into every CTA of its mask); a
leader-tracked load writes its issuer's SMEM and completes on the pair leader's barrier
(the even rank), the leader alone arriving; a `tcgen05.commit` with a multicast mask arrives
on the barrier at its pointer's offset in every CTA of the mask (`ops_mma`); DSMEM writes
and arrivals land in the peer their rank names; the cluster barrier (`copy.cluster_sync`,
and the one that ends a clustered barrier_init, inval or reinit) joins what every CTA knew;
and no CTA may return while a peer's async write or arrival may still reach it
(`Cluster.exit`, `Cluster.target`).

Values: `gpu.block_id` is `rank coordinate + extent * k` for an unknown cluster index k. The
arith values computed from it are evaluated for every rank at several k (`SAMPLES`); one
that is the same at every k (`block_id % 2`, its xor with 1, a comparison of those) is that
rank's constant (`ClusterFacts.fixed`); the others stay block-uniform unknowns, as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from analysis.protocol.clocks import Clock, End, HappensBefore, knows
from analysis.protocol.findings import Related, Report, error
from analysis.protocol.values import plan
from copy_dialect import ops as copy
from copy_dialect.verification import ops_of
from copy_dialect.verify_common import constant_int, kernel_cluster_shape

MAX_RANKS = 16
"""The largest cluster (a non-portable cluster size on sm_90 and sm_100)."""

SAMPLES = (0, 1, 2, 3, 5, 7, 64, 1000, 65535, 1 << 20, (1 << 31) // 16 - 1)
"""The cluster indices at which a value computed from `gpu.block_id` is evaluated: a value
the same at all of them is taken as the rank's constant."""

CROSS = (copy.PeerStoreOp, copy.PeerCopyOp, copy.PeerArriveOp, copy.ClusterSyncOp)


@dataclass(frozen=True)
class Collective:
    """A load whose bytes cross CTAs: a multicast one (`pair` False: its share of
    `share` bytes into every CTA of the group over `dims`) or a leader-tracked one (`pair`:
    `share` bytes of its issuer's box onto the pair leader's barrier)."""

    dims: tuple[int, ...]
    share: int
    pair: bool


@dataclass(frozen=True)
class ClusterFacts:
    shape: tuple[int, int, int]
    ranks: int
    """The CTAs the runs model: the cluster's size, or 1 (one CTA stands for every one)."""
    fixed: tuple[dict[SSAValue, int], ...]
    """Per modelled rank, the values its position in the cluster decides."""
    collective: dict[Operation, Collective]

    def coords(self, rank: int) -> tuple[int, int, int]:
        x, y, _ = self.shape
        return (rank % x, (rank // x) % y, rank // (x * y))

    def group(self, rank: int, dims: tuple[int, ...]) -> list[int]:
        """The ranks of `rank`'s collective group over cluster `dims`, in the order of the
        lowering's ctaMask (the first of `dims` fastest)."""
        me = self.coords(rank)

        def index(r: int) -> int:
            i, stride, c = 0, 1, self.coords(r)
            for d in dims:
                i, stride = i + c[d] * stride, stride * self.shape[d]
            return i

        same = [
            r for r in range(self.ranks)
            if all(self.coords(r)[d] == me[d] for d in range(3) if d not in dims)
        ]  # fmt: skip
        return sorted(same, key=index)


def cluster_facts(fn: func.FuncOp) -> ClusterFacts:
    """What the runs of `fn` model of its cluster, derived once per kernel."""
    shape = kernel_cluster_shape(fn)
    size = prod(shape)
    collective: dict[Operation, Collective] = {}
    crossing = False
    for op in ops_of(fn):
        if isinstance(op, CROSS) or (isinstance(op, copy.TryCancelOp) and op.is_multicast):
            crossing = True  # (a multicast try_cancel writes every CTA's slot and barrier)
        elif op.name == "nvvm.tcgen05.commit" and len(op.operands) > 1:
            crossing = True  # (a multicast commit arrives on the barriers of its mask's CTAs)
        elif isinstance(op, copy.Gather4Op) and (op.multicast is not None or op.is_leader_tracked):
            crossing = True  # (its mask's CTAs' slots, or the pair leader's barrier)
        elif isinstance(op, copy.AsyncCopyOp) and size > 1:
            g = op.geometry()
            dims = tuple(g.collective_dims or ())
            if not dims or not g.is_load or g.barrier is None:
                continue
            crossing = True
            if g.leader_tracked:
                collective[op] = Collective(dims, g.credited_bytes // 2, True)
            else:
                group = prod(shape[d] for d in dims)
                collective[op] = Collective(dims, g.credited_bytes // group, False)
    ranks = size if crossing and 1 < size <= MAX_RANKS else 1
    facts = ClusterFacts(shape, ranks, (), collective)
    fixed = rank_values(fn, facts) if ranks > 1 else ({},)
    return ClusterFacts(shape, ranks, fixed, collective)


def rank_values(fn: func.FuncOp, facts: ClusterFacts) -> tuple[dict[SSAValue, int], ...]:
    """Per rank, the values of `fn` that its position in the cluster decides (module
    docstring): `gpu.block_id` and the arith ops on it and on constants, evaluated at every
    cluster index of `SAMPLES`."""
    ranks = range(facts.ranks)
    table: dict[SSAValue, list[tuple[int, ...]]] = {}
    for op in ops_of(fn):
        if op.name == "gpu.block_id" and len(op.results) == 1:
            d = "xyz".index(str(op.properties["dimension"].data))  # type: ignore[attr-defined]
            extent = facts.shape[d]
            table[op.results[0]] = [
                tuple(facts.coords(r)[d] + extent * k for k in SAMPLES) for r in ranks
            ]
            continue
        if not op.name.startswith("arith.") or len(op.results) != 1 or op.regions:
            continue
        how = plan(op)
        if how is None or not op.operands or not any(v in table for v in op.operands):
            continue
        args = []
        for v in op.operands:
            if v in table:
                args.append(table[v])
                continue
            got = constant_int(v)
            if got is None:
                break
            args.append([(got,) * len(SAMPLES) for _ in ranks])
        else:
            rows = []
            for r in ranks:
                row = tuple(how([a[r][k] for a in args]) for k in range(len(SAMPLES)))
                if not all(isinstance(x, int) for x in row):
                    break
                rows.append(row)  # type: ignore[arg-type]
            else:
                table[op.results[0]] = rows
    fixed: list[dict[SSAValue, int]] = [{} for _ in ranks]
    for v, rows in table.items():
        if all(len(set(row)) == 1 for row in rows):
            for r in ranks:
                fixed[r][v] = rows[r][0]
    return tuple(fixed)


@dataclass
class Generation:
    arrived: int = 0
    clock: Clock = field(default_factory=list)
    arrivers: list[tuple[Operation, str]] = field(default_factory=list)
    returned: int = 0
    """The arrivers that returned from their wait: once all have, every running class knows
    what the generation's arrivals knew."""


class Cluster:
    """What the modelled CTAs share in a run: the cluster barrier's generations, the
    arrivals and writes each CTA receives from its peers, and the CTAs that returned."""

    def __init__(self, facts: ClusterFacts, hb: HappensBefore, report: Report):
        self.facts = facts
        self.hb = hb
        self.report = report
        self.generations: dict[int, Generation] = {}
        self.arrived: dict[object, int] = {}
        """Per agent, the generations of the cluster barrier it arrived on."""
        self.pending: dict[object, int] = {}
        """Per agent, the generation of its arrive not yet waited on."""
        self.incoming: list[dict[tuple[Operation, int], tuple[End, str]]] = [
            {} for _ in range(facts.ranks)
        ]
        """Per CTA, the peers' arrivals on its barriers (by op and sender, the latest)."""
        self.pair_fills: set[Operation] = set()
        """The leader-tracked loads: their fills complete on another CTA's barrier."""
        self.exited: set[int] = set()

    def generation(self, g: int) -> Generation:
        return self.generations.setdefault(g, Generation())

    def target(
        self, op: Operation, sender: int, rank: int, what: str, where: str = "the barrier"
    ) -> bool:
        """A peer's async write or arrival reaches CTA `rank`: not after it returned (P7)."""
        if rank not in self.exited:
            return True
        # rule: P7
        self.report(
            error(
                op,
                f"{what} of CTA {sender} reaches CTA {rank} of the cluster after that CTA "
                "returned: its SMEM and barriers are gone (another CTA may own them now)",
                f"make CTA {rank} wait, before its return, for what this op completes there "
                f"(copy.barrier_wait on {where} for the phase it lands in, or a handshake "
                "arrival), or end both CTAs with copy.cluster_sync",
            )
        )
        return False

    def arrival(self, op: Operation, sender: int, rank: int, end: End, who: str) -> None:
        self.incoming[rank][(op, sender)] = (end, who)

    def exit(self, op: Operation, rank: int, classes: tuple[int, ...]) -> None:
        """CTA `rank` returns: every peer's arrival on its barriers must be known to it
        (a phase it completed was waited on, or a cluster barrier came after it)."""
        clocks = [self.hb.clocks[c] for c in classes]
        for (arrival, sender), (end, who) in self.incoming[rank].items():
            if any(knows(k, end) for k in clocks):
                continue
            # rule: P7
            self.report(
                error(
                    op,
                    f"CTA {rank} may return while {who} may still arrive on its barrier: "
                    "nothing this CTA waits for before the return comes after that arrival",
                    "wait, before the return, for the phase that arrival completes (the "
                    "producer's load_tail waits for every slot's release), or end the kernel "
                    "with copy.cluster_sync in every CTA",
                    Related(arrival, f"the arrival of CTA {sender}"),
                )
            )
            break
        self.exited.add(rank)
        self.hb.progress = True
