"""SSA dominance, checked as MLIR's verifier checks it.

Every operand of an op in a block reachable from its region's entry must be an op result
whose defining op properly dominates the user, or an argument of a block that dominates the
user's block:

- in one block, an op dominates the ops after it; an op never dominates itself nor the ops
  in its own regions (`%0 = "test.op"(%0)` is an error in every region kind);
- across the blocks of a region, the region's CFG (entry block, terminator successors)
  decides; ops in blocks unreachable from the entry are not checked, and a definition in such
  a block dominates nothing;
- a use in a nested region counts as a use by its ancestor op in the definition's region;
  a definition inside a region is not visible outside it;
- graph regions (the bodies of builtin.module and gpu.module, the regions of unregistered
  ops) have no order: there, a value may be used above its definition.

xDSL 0.75 has `xdsl.irdl.dominance.DominanceInfo`, but it intersects the dominators of
unreachable predecessors too (`^entry -> ^b` plus an unreachable `^u -> ^b` makes ^entry not
dominate ^b), which would reject valid IR; the dominator trees here are over reachable blocks.
`non_dominating_uses` is the one check: copy-opt reports each use it finds with mlir-opt's
error and note, and `verify_dominance` (what `compile_module` runs on built modules) raises
the first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.dialects import gpu
from xdsl.dialects.builtin import ModuleOp, UnregisteredOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue

from copy_dialect.errors import CopyVerifyException as Error


def has_ssa_dominance(region: Region) -> bool:
    """False for graph regions (MLIR's `RegionKind::Graph`): module bodies and the regions
    of unregistered ops."""
    op = region.parent
    return not isinstance(op, ModuleOp | gpu.ModuleOp | UnregisteredOp)


def _ancestor_in(region: Region, op: Operation) -> Operation | None:
    """`op`, or the op enclosing it, that lies directly in `region`."""
    current: Operation | None = op
    while current is not None and current.parent_region() is not region:
        current = current.parent_op()
    return current


def _relation(use: Region | None, definition: Region | None) -> str:
    """Where the definition's region lies seen from the use's (MLIR's wording)."""
    if use is definition:
        return "in the same region"
    if definition is not None and use is not None and definition.is_ancestor(use):
        return "in a parent region"
    if definition is not None and use is not None and use.is_ancestor(definition):
        return "in a child region"
    return "neither in a parent nor in a child region"


class DominatorTree:
    """The dominator tree of one region's CFG, over the blocks reachable from its entry
    (Cooper, Harvey and Kennedy's iterative algorithm; near-linear in the blocks and edges),
    with each block's interval in a walk of the tree, so that a query takes constant time."""

    def __init__(self, region: Region) -> None:
        entry = region.blocks.first
        self._interval: dict[Block, tuple[int, int]] = {}
        if entry is None:
            return
        postorder = _postorder(entry)
        number = {block: i for i, block in enumerate(postorder)}
        preds: dict[Block, list[Block]] = {block: [] for block in postorder}
        for block in postorder:
            for succ in _successors(block):
                preds[succ].append(block)
        idom: dict[Block, Block] = {entry: entry}
        changed = True
        while changed:
            changed = False
            for block in reversed(postorder[:-1]):
                new: Block | None = None
                for pred in preds[block]:
                    if pred in idom:
                        new = pred if new is None else _intersect(pred, new, idom, number)
                assert new is not None
                if idom.get(block) is not new:
                    idom[block], changed = new, True
        children: dict[Block, list[Block]] = {block: [] for block in postorder}
        for block, parent in idom.items():
            if block is not entry:
                children[parent].append(block)
        clock = 0
        stack: list[tuple[Block, bool]] = [(entry, False)]
        first: dict[Block, int] = {}
        while stack:
            block, done = stack.pop()
            if done:
                self._interval[block] = (first[block], clock)
                clock += 1
                continue
            first[block] = clock
            clock += 1
            stack.append((block, True))
            stack.extend((child, False) for child in children[block])

    def is_reachable(self, block: Block) -> bool:
        return block in self._interval

    def dominates(self, a: Block, b: Block) -> bool:
        """Whether `a` dominates `b` (both reachable), `a` itself included."""
        start, end = self._interval[a]
        inner_start, inner_end = self._interval[b]
        return start <= inner_start and inner_end <= end


def _successors(block: Block) -> tuple[Block, ...]:
    last = block.last_op
    return tuple(last.successors) if last is not None else ()


def _postorder(entry: Block) -> list[Block]:
    """The blocks reachable from `entry`, in a depth-first postorder (no recursion)."""
    order: list[Block] = []
    seen = {entry}
    stack: list[tuple[Block, Iterator[Block]]] = [(entry, iter(_successors(entry)))]
    while stack:
        block, successors = stack[-1]
        succ = next(successors, None)
        if succ is None:
            stack.pop()
            order.append(block)
        elif succ not in seen:
            seen.add(succ)
            stack.append((succ, iter(_successors(succ))))
    return order


def _intersect(a: Block, b: Block, idom: dict[Block, Block], number: dict[Block, int]) -> Block:
    """The nearest common dominator of `a` and `b` (by postorder numbers)."""
    while a is not b:
        while number[a] < number[b]:
            a = idom[a]
        while number[b] < number[a]:
            b = idom[b]
    return a


class Dominance:
    """Dominance queries over one IR tree; each region's dominator tree is computed once."""

    def __init__(self) -> None:
        self._trees: dict[Region, DominatorTree] = {}
        self._positions: dict[Block, dict[int, int]] = {}
        self._ssa: dict[Region, bool] = {}

    def has_ssa_dominance(self, region: Region) -> bool:
        """`has_ssa_dominance`, once per region."""
        if region not in self._ssa:
            self._ssa[region] = has_ssa_dominance(region)
        return self._ssa[region]

    def tree(self, region: Region) -> DominatorTree:
        if region not in self._trees:
            self._trees[region] = DominatorTree(region)
        return self._trees[region]

    def is_reachable(self, block: Block) -> bool:
        return block.parent is None or self.tree(block.parent).is_reachable(block)

    def positions_in(self, block: Block) -> dict[int, int]:
        """The position of each op of `block`, by the op's id."""
        if block not in self._positions:
            self._positions[block] = {id(o): i for i, o in enumerate(block.ops)}
        return self._positions[block]

    def _position(self, op: Operation) -> int:
        block = op.parent
        assert block is not None
        return self.positions_in(block)[id(op)]

    def block_dominates(self, a: Block, b: Block) -> bool:
        """Whether block `a` dominates block `b` or the block of `a`'s region holding it."""
        region = a.parent
        current: Block | None = b
        while current is not None and current.parent is not region:
            current = current.parent_block()
        if current is None or region is None:
            return False
        if current is a:
            return True
        tree = self.tree(region)
        # A block unreachable from the entry is dominated by every block (as in LLVM).
        return not tree.is_reachable(current) or (
            tree.is_reachable(a) and tree.dominates(a, current)
        )

    def properly_dominates(self, value: SSAValue, user: Operation) -> bool:
        """Whether `value` may be used by `user` (MLIR's `properlyDominates(Value, Op)`)."""
        if not isinstance(value, OpResult):
            if isinstance(value, BlockArgument):
                return user.parent is not None and self.block_dominates(value.block, user.parent)
            return False
        definition = value.op
        block = definition.parent
        if block is not None and block is user.parent:
            # The common case, a use in the definition's block: the order decides.
            region = block.parent
            if definition is user or region is None:
                return False
            if not self.has_ssa_dominance(region):
                return True
            positions = self.positions_in(block)
            return positions[id(definition)] < positions[id(user)]
        region = definition.parent_region()
        anchor = None if region is None else _ancestor_in(region, user)
        if region is None or anchor is None or anchor is definition:
            return False
        if anchor.parent is definition.parent:
            return not self.has_ssa_dominance(region) or (
                self._position(definition) < self._position(anchor)
            )
        tree = self.tree(region)
        use_block, definition_block = anchor.parent, definition.parent
        assert use_block is not None
        assert definition_block is not None
        return not tree.is_reachable(use_block) or (
            tree.is_reachable(definition_block) and tree.dominates(definition_block, use_block)
        )


@dataclass(frozen=True)
class NonDominatingUse:
    """Operand `index` of `user` is not dominated by its definition."""

    user: Operation
    index: int

    @property
    def value(self) -> SSAValue:
        return self.user.operands[self.index]

    @property
    def definer(self) -> Operation | None:
        """The op defining the value, or the op whose region holds its block."""
        value = self.value
        if isinstance(value, OpResult):
            return value.op
        return value.block.parent_op() if isinstance(value, BlockArgument) else None

    @property
    def message(self) -> str:
        return f"operand #{self.index} does not dominate this use"

    @property
    def where(self) -> str:
        """Where the definition lies, seen from the use (mlir-opt's words)."""
        value, use_block = self.value, self.user.parent
        use_region = None if use_block is None else use_block.parent
        if isinstance(value, BlockArgument):
            block = value.block
            if block.parent is None:
                return "block without parent"
            number = list(block.parent.blocks).index(block)
            return f"block #{number} {_relation(use_region, block.parent)}"
        assert isinstance(value, OpResult)
        if value.op.parent is use_block:
            return "op in the same block"
        where = _relation(use_region, value.op.parent_region())
        return f"op {'is ' if where.startswith('neither') else ''}{where}"

    @property
    def defined_here(self) -> str:
        """mlir-opt's note, at the definer's location."""
        if isinstance(self.value, BlockArgument):
            return f"operand defined as a block argument ({self.where})"
        return f"operand defined here ({self.where})"

    @property
    def fix(self) -> str:
        """How to make the use valid (the project's fix note)."""
        value = self.value
        if isinstance(value, OpResult) and value.op.is_ancestor(self.user):
            return "an op cannot use its own result: use a value defined before the op"
        region = value.block.parent if isinstance(value, BlockArgument) else None
        if isinstance(value, OpResult):
            region = value.op.parent_region()
        anchor = None if region is None else _ancestor_in(region, self.user)
        if anchor is None:
            return (
                "a value defined in a region is only visible inside it: return it as a result "
                "of the region's op (through its terminator) and use that result"
            )
        if isinstance(value, OpResult) and anchor.parent is value.op.parent:
            user = "the use" if anchor is self.user else f"the '{anchor.name}' op holding the use"
            return (
                f"define the value before its use: move {user} below the definition, or the "
                "definition above it"
            )
        return (
            "define the value in a block that dominates the use (one that every path from the "
            "entry block to it passes through), or pass it to the use's block as a block argument"
        )


def _ops(root: Operation) -> Iterator[Operation]:
    """The ops nested in `root`, in textual order (no recursion)."""
    stack: list[Operation] = [root]
    while stack:
        op = stack.pop()
        yield op
        if op.regions:
            stack.extend(
                child
                for region in reversed(op.regions)
                for block in reversed(list(region.blocks))
                for child in reversed(list(block.ops))
            )


def non_dominating_uses(root: Operation) -> list[NonDominatingUse]:
    """Each op nested in `root` (in a block reachable in its region) that uses a value its
    definition does not dominate, with the first such operand; in textual order."""
    dominance = Dominance()
    found: list[NonDominatingUse] = []
    block: Block | None = None
    # What the ops of `block` share: whether it is checked, and, for values defined in it
    # (the common case, decided here without `properly_dominates`), the ops' positions.
    checked, ordered, positions = False, False, {}
    for op in _ops(root):
        if op is root or op.parent is None:
            continue
        if op.parent is not block:
            block = op.parent
            region = block.parent
            checked = dominance.is_reachable(block)
            ordered = region is not None and dominance.has_ssa_dominance(region)
            positions = dominance.positions_in(block) if ordered else {}
        if not checked:
            continue
        for index, operand in enumerate(op.operands):
            if isinstance(operand, OpResult) and ordered and operand.op.parent is block:
                valid = positions[id(operand.op)] < positions[id(op)]
            else:
                valid = dominance.properly_dominates(operand, op)
            if not valid:
                found.append(NonDominatingUse(op, index))
                break
    return found


def verify_dominance(root: Operation) -> None:
    """Raise the first non-dominating use under `root` as a verifier error with its fix."""
    for use in non_dominating_uses(root):
        definer = use.definer
        by = "" if definer is None else f" of '{definer.name}'"
        kind = "a block argument" if isinstance(use.value, BlockArgument) else "a result"
        raise Error(
            f"'{use.user.name}' op {use.message}: the operand is {kind}{by} ({use.where})",
            note=use.fix,
        )
