"""What the runs of one kernel share: its function, block size, the unknowns worth choosing
(with the values that are equal to each other, so that every role binds one trip count),
and what each op is to the protocol, decoded once per kernel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import DenseArrayBase
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import MemoryEffectKind, get_effects

from analysis.protocol.assumptions import Assumptions
from analysis.protocol.cluster import ClusterFacts, cluster_facts
from analysis.protocol.periods import LoopShape
from analysis.protocol.values import GenericPlan
from analysis.smem_values import Origin, smem_values
from copy_dialect import ops as copy
from copy_dialect.effects import EffectKind, declared_effects
from copy_dialect.upstream_gpu import UNIFORM_GPU


@dataclass(frozen=True)
class CopyFacts:
    """What a `copy.async_copy` (or a `copy.im2col_load`, a TMA load) is, as the protocol
    sees it."""

    smem: SSAValue
    smem_indices: tuple[SSAValue, ...]
    barrier: SSAValue | None
    barrier_index: SSAValue | None
    predicate: SSAValue | None
    tma: bool
    """Issued to the TMA unit (`impl tma` or `bulk`): completes on its barrier or bulk group."""
    load: bool
    bytes: int
    """Bytes its barrier is credited (the whole box for multicast, both CTAs' boxes for a
    leader-tracked load)."""
    expect: int
    """Bytes it expects itself when it arrives on its barrier (else 0)."""
    arrivals: copy.Arrivals | None
    """The arrivals it makes on its barrier (`copy.arrivals_of`): one by its issuer for a
    TMA load that arrives, one per issuing thread for a cp.async copy; None for none."""
    map: SSAValue | None = None
    """The tensor map in global memory it issues through (`map(%m : ...)`), if any."""

    OPS: ClassVar = (copy.AsyncCopyOp, copy.Im2colLoadOp, copy.Gather4Op, copy.Scatter4Op)
    """The ops the protocol follows as a copy of a box: gather4 and scatter4 are a TMA load
    and store of their 4-row tile."""

    @staticmethod
    def of(
        op: copy.AsyncCopyOp | copy.Im2colLoadOp | copy.Gather4Op | copy.Scatter4Op,
    ) -> CopyFacts:
        g = op.geometry()
        bar = g.barrier
        impl = op.resolved_implementation()
        tma = (bar is not None or not g.is_load) if impl is None else impl.is_bulk_async
        nbytes = g.credited_bytes if tma else 0
        arrivals = copy.arrivals_of(op)
        return CopyFacts(
            g.smem,
            g.smem_indices,
            bar,
            g.barrier_index,
            g.predicate,
            tma,
            g.is_load,
            nbytes,
            nbytes if arrivals is not None else 0,
            arrivals,
            op.map if isinstance(op, copy.AsyncCopyOp) else None,
        )


def segments(op: Operation) -> list[tuple[SSAValue, ...]]:
    """An op's operands by operand definition, from its operandSegmentSizes read once (xDSL's
    accessors read them again for every operand)."""
    sizes = op.properties["operandSegmentSizes"]
    assert isinstance(sizes, DenseArrayBase)
    groups, start = [], 0
    for size in sizes.get_values():
        groups.append(tuple(op.operands[start : start + size]))
        start += size
    return groups


@dataclass(frozen=True)
class Kernel:
    """What the runs of one kernel share: its function, its block size (None when unknown),
    the loop bounds worth choosing, and the trip counts tried for them."""

    fn: func.FuncOp
    block: tuple[int, int, int] | None
    loop_bounds: frozenset[SSAValue]
    trip_counts: int
    """The most iterations the driver walks a loop that is not one of `loops` (each of
    those has its own, `trips_of`)."""
    max_pending: int
    """The largest `pending` count of the kernel's wait_groups."""
    protocol_ops: frozenset[Operation]
    """Ops that hold a copy op (themselves or nested): the ones worth choosing a branch of."""
    plans: dict[Operation, GenericPlan]
    """How the walk computes each op's value (`values.GenericPlan`), made once per kernel."""
    geometry: dict[Operation, CopyFacts]
    """What each copy moves, decoded once per kernel."""
    operands: dict[Operation, tuple[SSAValue | None, ...]]
    """The named operands of each barrier and DSMEM op, read once per kernel
    (`ops_barriers.named_operands`)."""
    canon: dict[SSAValue, SSAValue]
    """Each choosable value computed like an earlier one (the same ops on the same
    block-uniform leaves, e.g. a trip count each role computes): that earlier one, which the
    driver binds for both."""
    aliases: dict[SSAValue, tuple[SSAValue, ...]]
    """Each value `canon` maps to, with the values that map to it."""
    roles: int
    """The most roles of a copy.warp_specialize in the kernel (0 without)."""
    loops: dict[Operation, LoopShape]
    """How the protocol in each loop that holds copy ops depends on the iteration
    (`periods`): what its steady-state proof needs."""
    counts: dict[Operation, LoopCount]
    """The loops whose start or step is block-uniform but not known (a grid-stride loop,
    `for tile = block_id to n step grid_dim`), and the `scf.while` loops (`while tile <
    tiles`): their trip count is chosen, one for every loop computed alike (every role's
    tile loop takes the same count)."""
    assumptions: Assumptions
    """The facts the kernel's `copy.assume` ops state, which the driver's choices and the
    loops' shapes keep to (`assumptions`), collected once per kernel."""
    only: dict[SSAValue, int] = field(default_factory=dict)
    """Values the kernel gives one count (`general`: a long loop's constant bound made an
    argument): of the counts below the longest tried, only the one it stands for runs."""
    results: dict[tuple[object, ...], object] = field(default_factory=dict)
    """Each op's result (`values.GenericPlan`) on each tuple of operand values it met, kept
    across the kernel's agents and runs (`walk.Agent.generic`; ops of no state: the same
    operands give the same result)."""
    bodies: dict[Block, tuple[Operation, ...]] = field(default_factory=dict)
    """Each block's ops as the walk goes through them (listed once per kernel: the IR's
    linked list costs more to step through)."""

    def trips_of(self, loop: Operation) -> int:
        """The most iterations the driver walks `loop` (those of the first loop computed
        alike, for loops that share a chosen count)."""
        count = self.counts.get(loop)
        shape = self.loops.get(count.loop if count is not None else loop)
        return shape.trips if shape is not None else self.trip_counts

    @property
    def threads(self) -> int | None:
        return None if self.block is None else self.block[0] * self.block[1] * self.block[2]

    @cached_property
    def cluster(self) -> ClusterFacts:
        """The CTAs of the cluster the runs model, and what each rank knows from its
        position (`cluster.cluster_facts`), once per kernel."""
        return cluster_facts(self.fn)

    @cached_property
    def foreign(self) -> dict[Operation, Foreign]:
        """The ops that take SMEM and whose effects the analysis does not own, with their
        effects (`foreign_ops`), decoded on first use, once per kernel."""
        return foreign_ops(self.fn)

    @cached_property
    def routes(self) -> dict[int, dict[Operation, object]]:
        """How the agents follow each op (`walk.Agent.route`), per dispatch table, made as
        the runs meet the ops, once per kernel."""
        return {}

    @cached_property
    def pointers(self) -> dict[SSAValue, tuple[SSAValue, int | SSAValue] | None]:
        """The barrier each tcgen05.commit's pointer names, as the IR spells it
        (`ops_mma.pointer_form`), read once per kernel."""
        return {}

    @cached_property
    def unread(self) -> dict[int, frozenset[Operation]]:
        """The generic ops whose results the protocol never reads (`reads`), per dispatch
        table, found once per kernel."""
        return {}


@dataclass(frozen=True)
class LoopCount:
    """The trip count of a grid-stride loop, as a choice of the driver: named by the first
    loop with its bounds."""

    loop: Operation
    """An scf.for or an scf.while."""

    @property
    def name_hint(self) -> str | None:
        block = self.loop.regions[0].blocks[0]
        return block.args[0].name_hint if block.args else None

    def describe(self, chosen: int) -> str:
        name = f"%{self.name_hint}" if self.name_hint else "its induction variable"
        return f"{chosen} iterations of {self.where()}loop over {name}"

    def where(self) -> str:
        """`role N's ` when the loop is in a role of copy.warp_specialize, else `the `."""
        op: Operation | None = self.loop
        while op is not None:
            parent = op.parent_op()
            if isinstance(parent, copy.WarpSpecializeOp):
                region = op.parent_region()
                return f"role {list(parent.regions).index(region)}'s "  # type: ignore[arg-type]
            op = parent
        return "the "

    def how(self) -> str:
        """How the loop computes its trip count: its bounds, or the ops of its while's
        after region that compute what it carries to the next test."""
        if isinstance(self.loop, scf.ForOp):
            lb, ub, step = (name_of(v) for v in (self.loop.lb, self.loop.ub, self.loop.step))
            return f"from {lb} to {ub} step {step}"
        assert isinstance(self.loop, scf.WhileOp)
        last = self.loop.after_region.blocks[0].last_op
        ops = [v.owner for v in (last.operands if last else ()) if isinstance(v.owner, Operation)]
        return (
            ", ".join(
                f"{name_of(op.results[0])} = {op.name} "
                + ", ".join(name_of(o) for o in op.operands)
                for op in ops
                if op.results
            )
            or "its test"
        )


def name_of(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "a value"


def block_size(fn: func.FuncOp) -> tuple[int, int, int] | None:
    attr = fn.attributes.get("gpu.known_block_size")
    if not isinstance(attr, DenseArrayBase):
        return None
    values = attr.get_values()
    if len(values) != 3 or not all(isinstance(v, int) and 0 < v <= 1024 for v in values):
        return None
    x, y, z = (int(v) for v in values)
    return (x, y, z) if x * y * z <= 1024 else None


def equal_values(
    values: Sequence[SSAValue],
) -> tuple[dict[SSAValue, SSAValue], dict[SSAValue, tuple[SSAValue, ...]]]:
    """Values computed alike from the same leaves (`arith` ops and block-uniform gpu ops on
    the same operands; other values are leaves of their own): the first of each kind stands
    for the others."""
    memo: dict[SSAValue, object] = {}

    def key(v: SSAValue) -> object:
        if v in memo:
            return memo[v]
        owner = v.owner
        found: object = v
        if (
            isinstance(owner, Operation)
            and len(owner.results) == 1
            and not owner.regions
            and (owner.name.startswith("arith.") or owner.name in UNIFORM_GPU)
        ):
            props = tuple(sorted((k, str(p)) for k, p in owner.properties.items()))
            found = (owner.name, props, tuple(key(o) for o in owner.operands))
        memo[v] = found
        return found

    first: dict[object, SSAValue] = {}
    canon: dict[SSAValue, SSAValue] = {}
    groups: dict[SSAValue, list[SSAValue]] = {}
    for v in values:
        rep = first.setdefault(key(v), v)
        if rep is not v:
            canon[v] = rep
        groups.setdefault(rep, [rep])
        if rep is not v and v not in groups[rep]:
            groups[rep].append(v)
    return canon, {rep: tuple(vs) for rep, vs in groups.items() if len(vs) > 1}


@dataclass(frozen=True)
class Foreign:
    """What an op the analysis does not own does with the SMEM it takes: its `effects` (a
    kind, the operand, where it points), from its `copy.effects` declaration or else its
    xDSL traits; `unknown`: the SMEM operands whose effects neither says (a warning)."""

    effects: tuple[tuple[EffectKind, int, Origin], ...]
    unknown: tuple[tuple[int, Origin], ...]


TRAIT_KINDS = {MemoryEffectKind.READ: EffectKind.READ, MemoryEffectKind.WRITE: EffectKind.WRITE}


def foreign_ops(fn: func.FuncOp) -> dict[Operation, Foreign]:
    """Each foreign op of the kernel that takes SMEM (`analysis.smem_values`), decoded: a
    declaration names its effects (on SMEM operands: the kernel rule FX1 checked them);
    else xDSL's memory-effect traits, on the value they name or on every SMEM operand;
    else they are unknown."""
    values = smem_values(fn)
    found: dict[Operation, Foreign] = {}
    for op, operands in values.users.items():
        origins = {n: values.origins[op.operands[n]] for n in operands}
        declared = declared_effects(op)
        if declared is not None:
            effects = tuple(
                (e.effect, e.index, origins[e.index]) for e in declared if e.index in origins
            )
            found[op] = Foreign(effects, ())
            continue
        traits = get_effects(op)
        if traits is None:
            found[op] = Foreign((), tuple(origins.items()))
            continue
        effects = []
        for e in sorted(traits, key=lambda e: e.kind.value):
            kind = TRAIT_KINDS.get(e.kind)
            if kind is None:
                continue
            for n, origin in origins.items():
                if e.value is None or e.value is op.operands[n]:
                    effects.append((kind, n, origin))
        found[op] = Foreign(tuple(effects), ())
    return found
