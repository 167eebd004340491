"""How the protocol inside a loop depends on the iteration: the premise of the steady-state
proof, derived once per kernel.

The driver walks a loop whose trip count is unknown for a few trip counts, and takes a lap
of iterations that leaves the state at the loop's head as it found it (`run.steady_lap`) as the
proof that every longer count behaves like those it walked. That holds only when what the
protocol reads in the loop repeats with the lap too. So each value the protocol reads in a
loop's body (branch conditions, barrier indices, parities, ring slots, SMEM indices, inner
loops' bounds) is classified here as a function of the iteration index j:

- a `Shape`: a function of j mod `period`, from iteration `start` on, except in the last
  `tail` iterations (`i mod 4`, `(i / 4) mod 2`, `i mod 64 == 63`, `i < 2`, `i + 1 < n`);
- a `Lin`, floor((a j + b) / c), only on the way to a shape (`i`, `i / 4`, a counter a loop
  carries, `k * tiles + t`): read by the protocol itself, it is `Opaque`;
- `Opaque`: something the proof cannot repeat (a value loaded in the loop, a comparison with
  a value not known before the run): the loop is then not proven for every trip count, and
  the warning names the op.

A value the loop carries that is not a counter (a phase bit it flips, a slot it wraps) is
part of the state the steady-state check compares (`LoopShape.state`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from math import gcd, lcm

from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType
from xdsl.ir import BlockArgument, Operation, SSAValue

from copy_dialect import ops as copy
from copy_dialect.memory import SMEM, memory_space
from copy_dialect.upstream_gpu import UNIFORM_GPU
from copy_dialect.verify_common import constant_int


@dataclass(frozen=True)
class Shape:
    """A value that is a function of j mod `period` for start <= j < trips - tail."""

    period: int = 1
    start: int = 0
    tail: int = 0
    witness: Operation | None = None
    """The op whose value gives the period (a message names it)."""
    starter: Operation | None = None
    """The op whose value gives the start."""

    def join(self, other: Shape) -> Shape:
        return Shape(
            lcm(self.period, other.period),
            max(self.start, other.start),
            max(self.tail, other.tail),
            self.witness if self.period >= other.period else other.witness,
            self.starter if self.start >= other.start else other.starter,
        )


INVARIANT = Shape()


def fixed(form: object) -> bool:
    """Whether `form` is the same in every iteration."""
    return isinstance(form, Shape) and form.period == 1 and form.start == 0 and form.tail == 0


@dataclass(frozen=True)
class Lin:
    """floor((a j + b) / c); a or b None when not a known constant."""

    a: int | None
    b: int | None
    c: int = 1
    g: int = 1
    """A divisor of a when a is not known (a counter that grows by a K-block count the
    kernel states a multiple of 8, `copy.assume`): what `rem` can still tell of j."""

    @property
    def divisor(self) -> int:
        """A number a is a multiple of (0: a is 0)."""
        return abs(self.a) if self.a is not None else self.g


@dataclass(frozen=True)
class Opaque:
    op: Operation | None
    why: str
    data: bool = False
    """Loaded or computed by an op the analysis does not follow: unknown to the walk in
    every iteration alike, which an SMEM index may be (the walk takes any element)."""


Form = Shape | Lin | Opaque

Multiple = Callable[[SSAValue], int] | None
"""What a value is known to be a multiple of (1: nothing), from the kernel's facts."""


@dataclass
class LoopShape:
    """What the steady-state proof of one loop needs: a lap that is a multiple of
    `shape.period`, that starts at or after iteration `shape.start`, and ends `shape.tail`
    iterations before the last; the carried values it compares at the head (`state`: the
    indices of the iter_args that are not counters); or why it cannot be proven
    (`opaque`)."""

    shape: Shape = INVARIANT
    state: tuple[int, ...] = ()
    opaque: list[Opaque] = field(default_factory=list)
    depth: int = 1
    """The iterations of this loop its state reaches across (`depths.loop_depths`: the
    ring, in this loop's iterations)."""
    trips: int = 0
    """The most iterations the driver walks it (`depths.walked`)."""
    nested: bool = False
    """Whether it runs inside another loop that holds copy ops (walked once per iteration
    of that loop)."""
    lap: Shape = INVARIANT
    """What its lap must repeat: its own shape joined with those of the loops that run
    beside it (the other roles' loops at its depth)."""
    pace: tuple[SSAValue | None, int] = (None, 1)
    """(n, c) when the loop runs floor((n + b) / c) iterations from a constant start by 1:
    its iteration i is about c i of a loop to n (`pace_of`: a pingpong consumer that takes
    every other tile of the producer's loop runs at c = 2); (None, 1) otherwise."""

    def paced_with(self, other: LoopShape) -> bool:
        """Whether both loops count the same n (their iterations compare as i c)."""
        return self.pace[0] is not None and self.pace[0] is other.pace[0]


CASTS = frozenset(
    {"arith.index_cast", "arith.index_castui", "arith.extui", "arith.extsi", "arith.trunci"}
)

PURE_PREFIXES = ("arith.",)

ACCESSES = ("memref.load", "memref.store", "vector.load", "vector.store", "memref.subview")


def loop_shape(
    loop: scf.ForOp | scf.WhileOp, holders: frozenset[Operation], multiple: Multiple = None
) -> LoopShape:
    """The shape of everything the protocol reads in `loop` (`holders`: the ops that hold
    copy ops, whose conditions and bounds it follows; `multiple`: what a value not known
    before the run is stated a multiple of)."""
    forms = Forms(loop, multiple)
    shape = LoopShape()
    for value, reader, index in reads(loop, holders):
        form = forms.parity(value) if parity_operand(reader, value) else forms.of(value)
        if isinstance(form, Opaque) and form.data and index:
            continue
        if isinstance(form, Lin):
            form = Opaque(
                reader,
                f"'{reader.name}' reads a value that grows with the iteration (a slot, an "
                "index or a condition that no ring's modulus bounds)",
            )
        if isinstance(form, Opaque):
            if not any(o.op is form.op for o in shape.opaque):
                shape.opaque.append(form)
            continue
        shape.shape = shape.shape.join(form)
    shape.state = tuple(sorted(forms.state))
    return shape


def reads(loop: scf.ForOp, holders: frozenset[Operation]) -> list[tuple[SSAValue, Operation, bool]]:
    """The integer values the protocol reads in the loop's body, with the op reading each
    and whether it is an SMEM index: the conditions and bounds of the ops that hold copy
    ops, the operands of copy ops (not the GMEM coordinates of copies, prefetches and tensor
    map updates), and the indices of SMEM accesses."""
    found: list[tuple[SSAValue, Operation, bool]] = []
    for op in (o for region in loop.regions for o in region.walk()):
        if isinstance(op, scf.IfOp):
            if op in holders:
                found.append((op.cond, op, False))
        elif isinstance(op, scf.ForOp):
            if op in holders:
                found += [(v, op, False) for v in (op.lb, op.ub, op.step)]
        elif isinstance(op, scf.WhileOp):
            if op in holders:
                found += [(v, op, False) for v in op.arguments if is_int(v)]
        elif op.name.startswith("copy.") and not isinstance(op, UNREAD):
            skip = set(gmem_coordinates(op))
            found += [(v, op, False) for v in op.operands if is_int(v) and v not in skip]
        elif op.name in ACCESSES and any(smem(v) for v in op.operands):
            found += [(v, op, True) for v in op.operands if is_int(v)]
    return found


PARITY_READERS = (copy.BarrierWaitOp, copy.BarrierTestOp)
"""The ops that read a parity of a barrier's phase."""


def parity_operand(reader: Operation, v: SSAValue) -> bool:
    """Whether `v` is the parity `reader` waits on or tests."""
    return isinstance(reader, PARITY_READERS) and v is reader.parity


UNREAD = (
    copy.PrefetchOp,
    copy.Gather4PrefetchOp,
    copy.TensorMapReplaceOp,
    copy.TensorMapFenceReleaseOp,
    copy.TensorMapFenceAcquireOp,
    copy.AssumeOp,
)
"""Copy ops whose integer operands are addresses, map fields or facts, not the protocol's."""


def forwarded(loop: scf.WhileOp) -> tuple[SSAValue, ...]:
    """The values an scf.while's test passes to its after region (and out)."""
    last = loop.before_region.blocks[0].last_op
    return tuple(last.operands[1:]) if last is not None else ()


def gmem_coordinates(op: Operation) -> tuple[SSAValue, ...]:
    if isinstance(op, copy.AsyncCopyOp):
        return op.geometry().gmem_indices
    if isinstance(op, copy.Im2colLoadOp):
        return (*op.coordinates, *op.offsets)
    if isinstance(op, copy.Gather4Op | copy.Scatter4Op | copy.Gather4PrefetchOp):
        return (*op.rows, *op.column)
    return ()


def is_int(v: SSAValue) -> bool:
    return isinstance(v.type, IndexType | IntegerType)


def smem(v: SSAValue) -> bool:
    return isinstance(v.type, MemRefType) and memory_space(v.type) == SMEM


class Forms:
    """The form of each value in one loop's body, memoized. The loop is an `scf.for` (j
    its iteration, `i = lb + j step` its induction variable) or an `scf.while` (the values
    it carries from one test of its condition to the next)."""

    multiple: Multiple = None

    def __init__(self, loop: scf.ForOp | scf.WhileOp, multiple: Multiple = None):
        self.loop = loop
        self.multiple = multiple
        self.body = loop.regions[0].blocks[0]
        """The block whose arguments the loop carries (the for's body, the while's before
        region)."""
        self.memo: dict[SSAValue, Form] = {}
        self.state: set[int] = set()
        """The carried values read that are not counters: compared at the head."""

    def of(self, v: SSAValue) -> Form:
        got = self.memo.get(v)
        if got is None:
            self.memo[v] = INVARIANT  # a cycle through a carried value reads it as state
            got = self.memo[v] = self.compute(v)
        return got

    def inside(self, v: SSAValue) -> bool:
        """Whether `v` is defined in the loop (else it is the same every iteration)."""
        op = v.block.parent_op() if isinstance(v, BlockArgument) else v.owner
        while isinstance(op, Operation):
            if op is self.loop:
                return True
            op = op.parent_op()
        return False

    def compute(self, v: SSAValue) -> Form:
        if not self.inside(v):
            return INVARIANT
        if isinstance(v, BlockArgument):
            return self.argument(v)
        op = v.owner
        assert isinstance(op, Operation)
        if constant_int(v) is not None or op.name in UNIFORM_GPU or op.name == "gpu.thread_id":
            return INVARIANT
        if op.name.startswith("copy.") or op.name == "gpu.lane_id":
            return INVARIANT  # a function of the state (barrier_test) or of the thread
        if isinstance(op, scf.IfOp):
            i = op.results.index(v)
            form = self.of(op.cond)
            for region in (op.true_region, op.false_region):
                if region.blocks and region.blocks[0].last_op is not None:
                    form = both(form, self.of(region.blocks[0].last_op.operands[i]), op)
            return form
        if op.name.startswith(PURE_PREFIXES):
            return self.arith(op, v)
        return Opaque(op, f"'{op.name}' computes a value the protocol reads", data=True)

    def parity(self, v: SSAValue) -> Form:
        """The form of a barrier phase's parity: the low bit of floor((a j + b) / c), with
        constants xor'ed or compared with 0 (`(i / S) mod 2 != 0`, CUTLASS's and Mosaic
        GPU's), is read relative to the barrier's phase, and repeats with period c / gcd(a,
        c), half its value's 2 c / gcd(a, 2 c): a lap of that many iterations shifts the
        quotient by a constant, so each wait's parity flips by the same bit every lap, and
        the walk records each wait's parity relative to its barrier's phase (`ops_barriers`),
        which the steady-state check compares lap by lap (a lap that flips a parity but
        advances its barrier by an even number of phases sees other events). Any other
        form is `of`'s."""
        quotient = self.low_bit(v)
        if quotient is None:
            return self.of(v)
        form = self.of(quotient)
        if not isinstance(form, Lin) or form.a == 0:
            return self.of(v)
        owner = quotient.owner if isinstance(quotient.owner, Operation) else None
        return Shape(form.c // gcd(form.divisor, form.c), 0, 0, owner)

    def low_bit(self, v: SSAValue) -> SSAValue | None:
        """The value q when `v` is the low bit of q (to a constant xor): through casts,
        `xori` with a constant, `cmpi eq/ne` with 0, `trunci` to i1, `remui`/`remsi` by 2
        and `andi` with 1; None for any other computation."""
        seen = 0
        while seen < 16 and self.inside(v) and isinstance(v.owner, Operation):
            op, seen = v.owner, seen + 1
            name, args = op.name, op.operands
            if name in ("arith.extui", "arith.extsi", "arith.index_cast", "arith.index_castui"):
                v = args[0]
            elif name == "arith.xori" and constant_int(args[1]) is not None:
                v = args[0]
            elif name == "arith.xori" and constant_int(args[0]) is not None:
                v = args[1]
            elif name == "arith.cmpi" and constant_int(args[1]) == 0:
                predicate = op.properties["predicate"]
                if getattr(predicate, "value", None) is None or predicate.value.data not in (0, 1):
                    return None
                v = args[0]
            elif name == "arith.trunci":
                if isinstance(v.type, IntegerType) and v.type.width.data == 1:
                    return args[0]
                v = args[0]
            elif name in ("arith.remui", "arith.remsi") and constant_int(args[1]) == 2:
                return args[0]
            elif name == "arith.andi" and constant_int(args[1]) == 1:
                return args[0]
            else:
                return None
        return None

    def argument(self, v: BlockArgument) -> Form:
        block = v.block
        owner = block.parent_op()
        if owner is self.loop:
            if isinstance(owner, scf.WhileOp) and block is not self.body:
                return self.of(forwarded(owner)[v.index])  # after region: what was tested
            if isinstance(owner, scf.ForOp) and v.index == 0:
                lb, step = constant_int(owner.lb), constant_int(owner.step)
                return Lin(step, lb if step is not None else None)
            k = v.index - 1 if isinstance(owner, scf.ForOp) else v.index
            counter = self.counter(k)
            if counter is not None:
                return counter
            self.state.add(k)
            return INVARIANT
        if isinstance(owner, scf.ForOp) and v.index > 0:  # an inner loop's carried value
            k = v.index - 1
            yielded = block.last_op.operands[k] if block.last_op else None
            form = self.of(owner.iter_args[k])
            return both(form, self.of(yielded), owner) if yielded is not None else form
        if isinstance(owner, scf.WhileOp):  # an inner while's carried or tested value
            if block is not owner.before_region.blocks[0]:
                return self.of(forwarded(owner)[v.index])
            last = owner.after_region.blocks[0].last_op
            form = self.of(owner.arguments[v.index])
            return both(form, self.of(last.operands[v.index]), owner) if last else form
        return INVARIANT  # an inner loop's induction variable, a role's thread index

    def counter(self, k: int) -> Lin | None:
        """A carried value that grows by the same amount each iteration (x + c)."""
        loop = self.loop
        if isinstance(loop, scf.ForOp):
            arg, yielded, init = self.body.args[k + 1], loop.body.blocks[0].last_op, None
            start = loop.iter_args[k]
            grows = yielded.operands[k] if yielded is not None else None
        else:
            # the while's after region adds c to the value the test forwarded: x + c
            arg, start = self.body.args[k], loop.arguments[k]
            last = loop.after_region.blocks[0].last_op
            grows = last.operands[k] if last is not None else None
            tested = forwarded(loop)
            after = loop.after_region.blocks[0].args
            init = next((after[p] for p, f in enumerate(tested) if f is arg), None)
            if init is None:
                return None
        if grows is None or not isinstance(grows.owner, Operation):
            return None
        add = grows.owner
        base = arg if init is None else init
        if add.name != "arith.addi" or base not in add.operands:
            return None
        other = add.operands[1] if add.operands[0] is base else add.operands[0]
        if self.inside(other) and (self.reaches(other, arg) or not fixed(self.of(other))):
            return None
        step = constant_int(other)
        if step is None and self.multiple is not None:
            return Lin(None, constant_int(start), 1, self.multiple(other))
        return Lin(step, constant_int(start))

    def reaches(self, v: SSAValue, arg: SSAValue) -> bool:
        """Whether `v` is computed from `arg` in the loop's body."""
        stack, seen = [v], set()
        while stack:
            cur = stack.pop()
            if cur is arg:
                return True
            if cur in seen or not self.inside(cur) or not isinstance(cur.owner, Operation):
                continue
            seen.add(cur)
            stack.extend(cur.owner.operands)
        return False

    def arith(self, op: Operation, v: SSAValue) -> Form:
        name = op.name
        forms = [self.of(o) for o in op.operands]
        opaque = next((f for f in forms if isinstance(f, Opaque)), None)
        if opaque is not None:
            return opaque
        if all(isinstance(f, Shape) for f in forms):
            out = INVARIANT
            for f in forms:
                out = out.join(f)  # type: ignore[arg-type]
            return out
        if name == "arith.trunci" and isinstance(v.type, IntegerType) and v.type.width.data <= 8:
            return rem(forms[0], 1 << v.type.width.data, op)  # the low bits: j mod 2^w
        if name in CASTS:
            return forms[0]
        consts = [constant_int(o) for o in op.operands]
        if len(forms) == 2:
            x, y = forms
            if name in ("arith.addi", "arith.subi"):
                return add(x, y, consts, name == "arith.subi", op)
            if name == "arith.muli":
                # (a factor not known before the run: what the facts say it is a multiple of)
                multiple = self.multiple or (lambda _: 1)
                ms = [
                    multiple(o) if c is None else 1
                    for o, c in zip(op.operands, consts, strict=True)
                ]
                return mul(x, y, consts, op, ms)
            if name in ("arith.divui", "arith.divsi", "arith.floordivsi", "arith.ceildivsi"):
                return div(x, y, consts[1], name == "arith.ceildivsi", op)
            if name in ("arith.remui", "arith.remsi"):
                return rem(x, consts[1], op)
            if name == "arith.andi" and consts[1] is not None and is_mask(consts[1]):
                return rem(x, consts[1] + 1, op)
            if name == "arith.shrui" and consts[1] is not None:
                return div(x, y, 1 << consts[1], False, op)
            if name == "arith.shli" and consts[1] is not None:
                return mul(x, INVARIANT, [None, 1 << consts[1]], op)
            if name == "arith.cmpi":
                return self.compare(op, x, y, consts)
        return Opaque(op, f"'{name}' of a value that grows with the iteration")

    def compare(self, op: Operation, x: Form, y: Form, consts: list[int | None]) -> Form:
        """A comparison of j's linear function with a constant holds the same from some
        iteration on; with the loop's bound (`i + 1 < n`), it changes only in the last
        iterations."""
        lin, other, const = (x, op.operands[1], consts[1])
        if not isinstance(x, Lin):
            lin, other, const = (y, op.operands[0], consts[0])
        assert isinstance(lin, Lin)
        if const is not None and lin.a is not None and lin.a > 0 and lin.b is not None:
            # floor((a j + b) / c) > const from this j on: every predicate is then fixed.
            start = max(0, -(-((const + 1) * lin.c - lin.b) // lin.a))
            return Shape(1, start, 0, None, op)
        offset = self.bound_offset(other) if isinstance(self.loop, scf.ForOp) else None
        if offset is not None and lin.c == 1 and lin.a == 1 and lin.b is not None:
            assert isinstance(self.loop, scf.ForOp)
            lb = constant_int(self.loop.lb)
            step = constant_int(self.loop.step)
            if lb is not None and step == 1:
                # i = lb + j, compared with n + offset, n = lb + trips: j against
                # trips + offset - (b - lb): fixed until that many last iterations.
                return Shape(1, 0, max(0, (lin.b - lb) - offset + 1), op)
        return Opaque(
            op,
            "'arith.cmpi' compares a value that grows with the iteration with one the "
            "analysis does not know before the run",
        )

    def bound_offset(self, v: SSAValue) -> int | None:
        """d when `v` is the loop's upper bound plus the constant d."""
        assert isinstance(self.loop, scf.ForOp)
        if v is self.loop.ub:
            return 0
        owner = v.owner
        if isinstance(owner, Operation) and owner.name in ("arith.addi", "arith.subi"):
            a, b = owner.operands
            c = constant_int(b)
            if a is self.loop.ub and c is not None:
                return c if owner.name == "arith.addi" else -c
            if owner.name == "arith.addi" and b is self.loop.ub and constant_int(a) is not None:
                return constant_int(a)
        return None


def both(x: Form, y: Form, op: Operation) -> Form:
    if isinstance(x, Opaque):
        return x
    if isinstance(y, Opaque):
        return y
    if isinstance(x, Shape) and isinstance(y, Shape):
        return x.join(y)
    return Opaque(op, f"'{op.name}' yields a value that grows with the iteration")


def is_mask(c: int) -> bool:
    return c > 0 and (c + 1) & c == 0


def add(x: Form, y: Form, consts: list[int | None], sub: bool, op: Operation) -> Form:
    if isinstance(x, Lin) and fixed(y):
        k = consts[1]
        b = None if x.b is None or k is None else x.b + (-k if sub else k) * x.c
        return Lin(x.a, b, x.c, x.g)
    if isinstance(y, Lin) and fixed(x):
        if not sub:
            return add(y, x, [consts[1], consts[0]], False, op)
        if y.c == 1:  # k - (a j + b)
            k = consts[0]
            return Lin(None if y.a is None else -y.a,
                       None if y.b is None or k is None else k - y.b, 1, y.g)  # fmt: skip
    if isinstance(x, Lin) and isinstance(y, Lin) and x.c == 1 and y.c == 1:
        a = None if x.a is None or y.a is None else x.a + (-y.a if sub else y.a)
        b = None if x.b is None or y.b is None else x.b + (-y.b if sub else y.b)
        if a == 0:
            return INVARIANT
        return Lin(a, b, 1, gcd(x.divisor, y.divisor))
    return Opaque(op, f"'{op.name}' of a value that grows with the iteration")


def mul(
    x: Form, y: Form, consts: list[int | None], op: Operation, multiples: list[int] | None = None
) -> Form:
    """x times y; `multiples`: what each operand is known a multiple of (a K-block count
    stated a multiple of 8 times the tile index grows by a multiple of 8)."""
    ms = multiples or [1, 1]
    if isinstance(y, Lin):
        x, y, consts, ms = y, x, [consts[1], consts[0]], [ms[1], ms[0]]
    if isinstance(x, Lin) and fixed(y) and x.c == 1:
        k = consts[1]
        if k is None:
            return Lin(None, None, 1, x.divisor * ms[1])
        return (
            INVARIANT
            if k == 0
            else Lin(None if x.a is None else x.a * k, None if x.b is None else x.b * k, 1,
                     x.g * abs(k))
        )  # fmt: skip
    return Opaque(op, f"'{op.name}' of a value that grows with the iteration")


def div(x: Form, y: Form, d: int | None, ceil: bool, op: Operation) -> Form:
    if isinstance(x, Lin) and d is not None and d > 0 and fixed(y):
        b = x.b
        if ceil and b is not None:
            b += (d - 1) * x.c
        return Lin(x.a, None if ceil and x.b is None else b, x.c * d, x.g)
    return Opaque(op, f"'{op.name}' of a value that grows with the iteration")


def rem(x: Form, m: int | None, op: Operation) -> Form:
    if isinstance(x, Lin) and m is not None and m > 0:
        # floor((a j + b) / c) mod m repeats with j every c m / gcd(a, c m) (a divisor of
        # c m / gcd(g, c m) when only g | a is known)
        span = x.c * m
        return Shape(span // gcd(x.divisor, span), 0, 0, op)
    return Opaque(op, f"'{op.name}' of a value that grows with the iteration by a modulus "
                  "the analysis does not know")  # fmt: skip


__all__ = ["INVARIANT", "Form", "Forms", "Lin", "LoopShape", "Opaque", "Shape", "loop_shape"]
