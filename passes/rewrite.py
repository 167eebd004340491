"""The pattern driver of the lowering passes: xDSL's greedy walk, with less work per op.

`apply_patterns(module, patterns, dce=..., recursive=...)` rewrites the module exactly as

    PatternRewriteWalker(
        GreedyRewritePatternApplier(patterns, dce_enabled=dce), apply_recursively=recursive
    ).rewrite_module(module)

does (xDSL 0.75): the same ops rewritten by the same patterns (the first, in order, that
acts), in the same order, the same dead ops erased, the same error for a pattern that
raises. What it saves is the work that cannot change anything:

- a pattern written with `op_type_rewrite_pattern` does nothing on an op outside its type
  (nor does one that names its types in `OP_TYPES`), so for each op type only the patterns
  that admit it are tried (read once per type);
- without `recursive`, new ops are never visited and the worklist only loses the ops that
  are erased, so the walk is a list of the module's ops with a set of erased ones, and an
  op that no pattern admits and that is not dead is passed over without setting up the
  rewriter for it.

With `recursive` the worklist is xDSL's own (it follows new and changed ops), and an op it
pops is passed over the same way; without `dce` the worklist holds only the ops some pattern
admits (popping any other op does nothing). tests/passes/test_rewrite.py lowers every
example, the kernel builders' modules and fuzz kernels both ways and compares the printed IR.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from types import UnionType
from typing import Any, Union, get_args, get_origin

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import IRDLOperation
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator, MemoryEffect, SymbolOpInterface
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.utils.worklist import Worklist


def apply_patterns(
    module: ModuleOp,
    patterns: Sequence[RewritePattern],
    *,
    dce: bool = True,
    recursive: bool = False,
) -> None:
    """Rewrites `module` as xDSL's PatternRewriteWalker over a GreedyRewritePatternApplier
    of `patterns` does (`dce`: its dce_enabled, `recursive`: apply_recursively)."""
    applier = _TypedApplier(list(patterns), dce_enabled=dce)
    if not recursive:
        _walk_once(module, applier)
        return
    walker = _Walker(applier)
    if not dce:
        # An op that no pattern admits is a no-op when the walker pops it, wherever it is in
        # the worklist; leaving it out changes neither what the other ops see nor their order.
        walker._worklist = _AdmittedWorklist(applier)  # pyright: ignore[reportPrivateUsage]
    walker.rewrite_module(module)


def op_types(pattern: type[RewritePattern]) -> tuple[type[Operation], ...] | None:
    """The op types a pattern class can act on: those of its `op_type_rewrite_pattern`
    annotation, or its `OP_TYPES` (a pattern that looks its op's exact type up in a table
    names the table's types there); None (any op) for a pattern written otherwise."""
    declared = getattr(pattern, "OP_TYPES", None)
    if declared is not None:
        return tuple(declared)
    method = pattern.match_and_rewrite
    code = getattr(method, "__code__", None)
    closure = getattr(method, "__closure__", None)
    if code is None or closure is None or "expected_type" not in code.co_freevars:
        return None
    expected: Any = closure[code.co_freevars.index("expected_type")].cell_contents
    types = get_args(expected) if get_origin(expected) in (Union, UnionType) else (expected,)
    if not all(isinstance(t, type) and issubclass(t, Operation) for t in types):
        return None
    return types


class _TypedApplier(GreedyRewritePatternApplier):
    """GreedyRewritePatternApplier (no folding) that tries, for each op, only the patterns
    whose op types admit it, in their order."""

    def __init__(self, rewrite_patterns: list[RewritePattern], *, dce_enabled: bool):
        super().__init__(rewrite_patterns, dce_enabled=dce_enabled)
        self._admitted = _admitted_by(tuple(type(p) for p in rewrite_patterns))
        self._by_type: dict[type[Operation], tuple[RewritePattern, ...]] = {}
        self._mortal: dict[type[Operation], bool] = {}

    def patterns_for(self, op_type: type[Operation]) -> tuple[RewritePattern, ...]:
        patterns = self._by_type.get(op_type)
        if patterns is None:
            patterns = tuple(self.rewrite_patterns[i] for i in self._admitted(op_type))
            self._by_type[op_type] = patterns
        return patterns

    def is_dead(self, op: Operation) -> bool:
        """`is_trivially_dead(op)` when DCE is on (else False), asked only of an op whose first
        result is unused and whose type lets it be dead: xDSL never finds a terminator, a
        symbol or an op without a `MemoryEffect` trait dead, and these are facts of the
        class (read once per type and pass; an unregistered op is always asked)."""
        if not self.dce_enabled:
            return False
        results = op.results
        if results and results[0].first_use is not None:  # is_trivially_dead's first test
            return False
        op_type = type(op)
        mortal = self._mortal.get(op_type)
        if mortal is None:
            mortal = self._mortal[op_type] = not issubclass(op_type, IRDLOperation) or not (
                op_type.has_trait(IsTerminator)
                or op_type.has_trait(SymbolOpInterface)
                or not op_type.get_traits_of_type(MemoryEffect)
            )
        return mortal and is_trivially_dead(op)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if self.is_dead(op):
            rewriter.erase(op)
            return
        for pattern in self.patterns_for(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


@cache
def _admitted_by(
    pattern_types: tuple[type[RewritePattern], ...],
) -> Callable[[type[Operation]], tuple[int, ...]]:
    """For a list of pattern classes: op type -> the positions of the patterns that admit
    it (kept for the process: it depends on the classes only)."""
    types = [op_types(t) for t in pattern_types]

    @cache
    def admitted(op_type: type[Operation]) -> tuple[int, ...]:
        return tuple(i for i, ts in enumerate(types) if ts is None or issubclass(op_type, ts))

    return admitted


class _AdmittedWorklist(Worklist[Operation]):
    """xDSL's worklist, holding only the ops some pattern of `applier` admits."""

    def __init__(self, applier: _TypedApplier):
        super().__init__()
        self._applier = applier

    def push(self, item: Operation):
        if self._applier.patterns_for(type(item)):
            super().push(item)


def _walk_once(module: ModuleOp, applier: _TypedApplier) -> None:
    """PatternRewriteWalker(applier, apply_recursively=False).rewrite_module(module)."""
    ops = _preorder(module.body, [])
    if not ops:
        return
    # By id: an op hashes through a Python method. The ops of `ops` live until the end, so
    # no erased op shared an id with one of them.
    erased: set[int] = set()

    def removed(op: Operation) -> None:  # the walker's worklist drops it and what it holds
        if op.regions:
            erased.update(map(id, op.walk()))
        else:
            erased.add(id(op))

    rewriter = PatternRewriter(ops[0])
    rewriter.extend_from_listener(PatternRewriterListener(operation_removal_handler=[removed]))
    for op in ops:
        if id(op) not in erased:
            _visit(op, applier, rewriter)


def _preorder(region: Region, ops: list[Operation]) -> list[Operation]:
    """`ops` with the ops of `region` appended in `region.walk()`'s order (each op, then the
    ops of its regions), without a generator per op and region (a third of the time)."""
    for block in region.blocks:
        op = block.first_op
        while op is not None:
            ops.append(op)
            for inner in op.regions:
                _preorder(inner, ops)
            op = op.next_op
    return ops


def _push_postorder_reversed(region: Region, push: Callable[[Operation], None]) -> None:
    """Pushes the ops of `region` in `region.walk(reverse=True, region_first=True)`'s order
    (xDSL's walker's worklist order: the last op's regions' ops, the last op, ...)."""
    for block in reversed(region.blocks):
        op = block.last_op
        while op is not None:
            for inner in reversed(op.regions):
                _push_postorder_reversed(inner, push)
            push(op)
            op = op.prev_op


class _Walker(PatternRewriteWalker):
    """xDSL's walker (its worklist and listeners), visiting each op it pops with `_visit`."""

    def _populate_worklist(self, op: Operation | Region | Block) -> None:
        if not isinstance(op, Region) or self.walk_reverse or self.walk_regions_first:
            super()._populate_worklist(op)
            return
        _push_postorder_reversed(op, self._worklist.push)

    def _process_worklist(self, listener: PatternRewriterListener) -> bool:
        worklist = self._worklist
        if not worklist:
            return False
        applier = self.pattern
        assert isinstance(applier, _TypedApplier)
        op = worklist.pop()
        rewriter = PatternRewriter(op)
        rewriter.extend_from_listener(listener)
        done = False
        while True:
            if _visit(op, applier, rewriter):
                done |= rewriter.has_done_action
            if not worklist:
                return done
            op = worklist.pop()


def _visit(op: Operation, applier: _TypedApplier, rewriter: PatternRewriter) -> bool:
    """What xDSL's walker does with an op it visits (reset the rewriter to it, apply the
    applier, make a pattern's error the op's), unless no pattern admits the op and it is
    not dead: then nothing, and False."""
    patterns = applier.patterns_for(type(op))
    try:
        dead = applier.is_dead(op)
    except Exception as err:
        op.emit_error(f"Error while applying pattern: {err}", underlying_error=err)
    if not patterns and not dead:
        return False
    rewriter.has_done_action = False
    rewriter.current_operation = op
    rewriter.insertion_point = InsertPoint.before(op)
    rewriter.name_hint = None
    try:
        if dead:
            rewriter.erase(op)
            return True
        for pattern in patterns:
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                break
    except Exception as err:
        op.emit_error(f"Error while applying pattern: {err}", underlying_error=err)
    return True
