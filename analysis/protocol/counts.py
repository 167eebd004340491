"""How the protocol depends on a trip count the driver chooses, beyond the loops it counts:
the premise on which the runs of a few counts stand for the others (`analysis.Deferred`).

- `count_shape`: what the protocol reads of the count n outside its loops (a prologue's
  `k < n`, an epilogue's slot `(n - 1) mod S`), as `periods.Forms` with n as the variable:
  a `Shape` in n (fixed from some n on, repeating with a period), or None;
- `pace_of` and `scaled`: loops that count the same n at different paces (CUTLASS's pingpong
  consumers, floor((n + 1) / 2) tiles each), whose iterations compare in the units of n."""

from __future__ import annotations

from math import lcm

from xdsl.dialects import scf
from xdsl.ir import BlockArgument, Operation, SSAValue

from analysis.protocol.periods import INVARIANT, Form, Forms, Lin, Multiple, Opaque, Shape, reads
from copy_dialect.verify_common import constant_int


def pace_of(loop: Operation) -> tuple[SSAValue | None, int]:
    """(n, c) when `loop` is an scf.for from a constant by 1 to floor((n + b) / c), b and c
    constants (`LoopShape.pace`)."""
    if not isinstance(loop, scf.ForOp) or constant_int(loop.step) != 1:
        return (None, 1)
    if constant_int(loop.lb) is None or constant_int(loop.ub) is not None:
        return (None, 1)
    v, c = near(loop.ub), 1
    owner = v.owner
    if isinstance(owner, Operation) and owner.name in ("arith.divui", "arith.divsi"):
        d = constant_int(owner.operands[1])
        if d is not None and d > 0:
            v, c = near(owner.operands[0]), d
    return (v, c)


def scaled(shape: Shape, mine: int, theirs: int) -> Shape:
    """`shape`, of a loop whose iteration is `theirs` units of a count, in the iterations
    of a loop whose iteration is `mine` units: a lap must span whole periods of theirs."""
    if mine == theirs:
        return shape
    span = lcm(shape.period * theirs, mine)
    return Shape(
        span // mine,
        -(-shape.start * theirs // mine),
        -(-shape.tail * theirs // mine),
        shape.witness,
        shape.starter,
    )


class CountForms(Forms):
    """The form of each value as a function of a trip count the driver chooses: the upper
    bound n of `loops` (scf.for loops with constant starts and a step of 1), taken by the
    values `chosen` (n and the values equal to it). What the protocol reads outside those
    loops, and reads of n inside them, must be a `Shape` in n for the runs of a few counts
    to stand for the others (`count_shape`): a prologue's `k < n` is fixed from n = k + 1
    on, an epilogue's slot `(n - 1) mod S` repeats every S. A comparison of a loop's
    induction variable with n (`i + 1 < n`) is that loop's tail, its own shape's."""

    def __init__(
        self,
        chosen: set[SSAValue],
        loops: list[scf.ForOp],
        trips: dict[Operation, tuple[int, int]] | None = None,
        multiple: Multiple = None,
        held: dict[Operation, tuple[int, ...]] | None = None,
    ):
        self.chosen = chosen
        self.multiple = multiple
        self.held = held
        """Per loop, the carried values the state at its heads holds (`periods.LoopShape.
        state`: not counters), taken as the same for every count (None: not so): what a
        cut of whole laps keeps (`cuts.cut`), where a run of a few counts does
        not otherwise stand for the others."""
        self.loops = loops
        self.trips = trips or {}
        """(a, b) for the loops of the choice that run a n + b iterations: what a counter
        they carry leaves after them is a function of n."""
        self.loop = None  # type: ignore[assignment]
        self.memo = {}
        self.state = set()
        self.depends: dict[SSAValue, bool] = {}

    def of(self, v: SSAValue) -> Form:
        if not self.reads_count(v):
            return INVARIANT
        return super().of(v)

    def reads_count(self, v: SSAValue) -> bool:
        """Whether `v` is computed from n: from a value equal to it, or from what a loop
        of the choice yields after its last iteration."""
        got = self.depends.get(v)
        if got is None:
            self.depends[v] = False  # a cycle through a carried value adds nothing
            got = self.depends[v] = self.computes(v)
        return got

    def computes(self, v: SSAValue) -> bool:
        if v in self.chosen:
            return True
        if isinstance(v, BlockArgument):
            owner = v.block.parent_op()
            if isinstance(owner, scf.ForOp):
                if v.index == 0:
                    return self.reads_count(owner.lb) or self.reads_count(owner.step)
                yielded = v.block.last_op
                return self.reads_count(owner.iter_args[v.index - 1]) or (
                    yielded is not None and self.reads_count(yielded.operands[v.index - 1])
                )
            return owner is not None and any(self.reads_count(o) for o in owner.operands)
        op = v.owner
        assert isinstance(op, Operation)
        if op in self.loops:
            return True
        return any(self.reads_count(o) for o in op.operands) or any(
            self.reads_count(o)
            for region in op.regions
            for inner in region.walk()
            for o in inner.operands
            if not op.is_ancestor(definer(o))
        )

    def compute(self, v: SSAValue) -> Form:
        if v in self.chosen:
            return Lin(1, 0)
        grows = self.grown(v)
        if grows is not None:
            return grows
        left = self.left(v)
        if left is not None:
            return left
        if isinstance(v, BlockArgument) and v.index == 0:
            loop = v.block.parent_op()
            start = self.shifted(loop) if isinstance(loop, scf.ForOp) else None
            if start is not None:  # lb + j step: a n + b + j step, b + j step for each j
                return Lin(start.a, None, 1, start.g)
        if self.kept(v):
            return INVARIANT
        if isinstance(v, BlockArgument) or (isinstance(v.owner, Operation) and v.owner.regions
                                            and not isinstance(v.owner, scf.IfOp)):  # fmt: skip
            return Opaque(None, "a loop's value computed from the trip count")
        return super().compute(v)

    def kept(self, v: SSAValue) -> bool:
        """Whether `v` is a value an scf.for carries, or gives, that the state at its heads
        holds (`held`): a stage and phase carried as CUTLASS's PipelineState."""
        if self.held is None:
            return False
        if isinstance(v, BlockArgument):
            loop, k = v.block.parent_op(), v.index - 1
        else:
            loop, k = v.owner, v.index
        return isinstance(loop, scf.ForOp) and k in self.held.get(loop, ())

    def left(self, v: SSAValue) -> Lin | None:
        """What a loop of the choice that runs a n + b iterations leaves of a counter it
        carries from a constant x0 by a constant c an iteration: x0 + c (a n + b)."""
        loop = v.owner
        if not isinstance(loop, scf.ForOp) or loop not in self.trips:
            return None
        k = loop.results.index(v)
        step = carried_step(loop, k)
        x0 = constant_int(loop.iter_args[k])
        c = None if step is None else constant_int(step)
        if x0 is None or c is None:
            return None
        a, b = self.trips[loop]
        return Lin(c * a, x0 + c * b)

    def grown(self, v: SSAValue) -> Lin | None:
        """A value an scf.for that is not a loop of the choice carries (or gives) that grows
        by c n + d each iteration from a start that does not read n (a persistent kernel's
        ring position `it0 + k_tiles`, carried by its tile loop): in its j-th iteration
        j (c n + d) + start, a function of n whose coefficient j c is a multiple of c."""
        if isinstance(v, BlockArgument):
            loop, k = v.block.parent_op(), v.index - 1
        else:
            loop, k = v.owner, v.index if isinstance(v.owner, scf.ForOp) else -1
        if not isinstance(loop, scf.ForOp) or loop in self.loops or k < 0:
            return None
        step = carried_step(loop, k)
        if step is None or self.reads_count(loop.iter_args[k]) or loop.is_ancestor(definer(step)):
            return None
        form = self.of(step)
        if not isinstance(form, Lin) or form.c != 1 or form.a is None:
            return None
        return Lin(None, None, 1, abs(form.a))

    def shifted(self, loop: scf.ForOp) -> Lin | None:
        """The form of the start of an scf.for that is not a loop of the choice and whose
        bounds shift together with n (a load_tail over the 4 slots after a persistent
        loop's ring position: `for it = c n to c n + 4`): its trip count is the same for
        every n, and its induction variable is a n plus a constant a iteration; None for
        any other loop."""
        if loop in self.loops or constant_int(loop.step) is None:
            return None
        lb, ub = self.of(loop.lb), self.of(loop.ub)
        if isinstance(lb, Lin) and lb.c == 1 and base(loop.ub) is base(loop.lb):
            return lb  # (to its start plus a constant: `for it = t n to t n + 4`, t unknown)
        if not (isinstance(lb, Lin) and isinstance(ub, Lin) and lb.c == 1 and ub.c == 1):
            return None
        if lb.a is None or lb.a != ub.a or lb.b is None or ub.b is None:
            return None
        return lb

    def inside(self, v: SSAValue) -> bool:
        return True

    def compare(self, op: Operation, x: Form, y: Form, consts: list[int | None]) -> Form:
        if self.tail_of(op):
            return INVARIANT
        # n against a value of known range (a prologue's `k < n`, k in 0 .. S): as against
        # its largest value
        side = 1 if isinstance(x, Lin) else 0
        most = largest(op.operands[side])
        if most is not None:
            consts = [most, most]
        return super().compare(op, x, y, consts)

    def tail_of(self, op: Operation) -> bool:
        """Whether `op` compares the induction variable of a loop of the choice, inside it,
        with n plus a constant: a condition of that loop's last iterations."""
        for loop in self.loops:
            if not loop.is_ancestor(op):
                continue
            iv = loop.body.blocks[0].args[0]
            sides = [base(o) for o in op.operands]
            bound = base(loop.ub)
            if any(s is iv for s in sides) and any(s in self.chosen or s is bound for s in sides):
                return True
        return False

    def bound_offset(self, v: SSAValue) -> int | None:
        return None


def definer(v: SSAValue) -> Operation:
    """The op that defines `v`, or holds the block whose argument it is."""
    if isinstance(v, BlockArgument):
        parent = v.block.parent_op()
        assert parent is not None
        return parent
    assert isinstance(v.owner, Operation)
    return v.owner


def largest(v: SSAValue) -> int | None:
    """The largest value `v` takes: a constant, the induction variable of a loop with
    constant bounds, either plus a constant; None when not known."""
    known = constant_int(v)
    if known is not None:
        return known
    if isinstance(v, BlockArgument):
        loop = v.block.parent_op()
        if isinstance(loop, scf.ForOp) and v.index == 0:
            lb, ub, step = (constant_int(b) for b in (loop.lb, loop.ub, loop.step))
            if lb is not None and ub is not None and step and step > 0 and ub > lb:
                return lb + (ub - lb - 1) // step * step
        return None
    owner = v.owner
    if isinstance(owner, Operation) and owner.name in ("arith.addi", "arith.subi"):
        a, b = owner.operands
        c = constant_int(b)
        base = largest(a)
        if c is not None and base is not None:
            return base + c if owner.name == "arith.addi" else base - c
    return None


def near(v: SSAValue) -> SSAValue:
    """`v`, or x when `v` is x plus or minus a constant."""
    owner = v.owner
    if isinstance(owner, Operation) and owner.name in ("arith.addi", "arith.subi"):
        a, b = owner.operands
        if constant_int(b) is not None:
            return a
        if owner.name == "arith.addi" and constant_int(a) is not None:
            return b
    return v


def carried_step(loop: scf.ForOp, k: int) -> SSAValue | None:
    """c when `loop` carries its k-th value x as x + c (the yield adds c to x)."""
    body = loop.body.blocks[0]
    arg = body.args[k + 1]
    yielded = body.last_op.operands[k] if body.last_op is not None else None
    add = yielded.owner if yielded is not None else None
    if not isinstance(add, Operation) or add.name != "arith.addi" or arg not in add.operands:
        return None
    return add.operands[1] if add.operands[0] is arg else add.operands[0]


def base(v: SSAValue) -> SSAValue:
    """`v` less every constant added to or subtracted from it (`i - 1 + 3`: i)."""
    while (inner := near(v)) is not v:
        v = inner
    return v


def count_shape(
    fn: Operation,
    chosen: set[SSAValue],
    loops: list[scf.ForOp],
    holders: frozenset[Operation],
    trips: dict[Operation, tuple[int, int]] | None = None,
    multiple: Multiple = None,
    held: dict[Operation, tuple[int, ...]] | None = None,
) -> Shape | Opaque:
    """How what the protocol reads depends on the count n of `loops` (their upper bound
    when `chosen` holds it; `trips`: the loops that run a n + b iterations) (`CountForms`),
    or the first read that is not a function of n mod a period from some n on. A loop's
    bound (n, or floor((n + b) / c) for a loop at its own pace) is its count, not a read.
    `multiple`: what the values not known before the run are stated a multiple of;
    `held`: the carried values taken as the same for every count (`CountForms.held`)."""
    forms = CountForms(chosen, loops, trips, multiple, held)
    found = INVARIANT
    for value, reader, _ in reads(fn, holders):
        if reader in loops and value is reader.operands[1]:  # the loop's bound: its count
            continue
        if isinstance(reader, scf.ForOp) and value in (reader.lb, reader.ub):
            if forms.shifted(reader) is not None:  # bounds that shift with n: a fixed count
                continue
        form = forms.of(value)
        if not isinstance(form, Shape):
            if isinstance(form, Opaque) and form.op is not None:
                return form
            return Opaque(reader, f"'{reader.name}' reads a value computed from the count "
                          "that does not repeat with it")  # fmt: skip
        found = found.join(form)
    return found
