"""One verification run: the entry point that checks a module op by op, and the facts about
an op's surroundings that its verifier needs, derived once per run.

`op_errors(module)` verifies every op, nested ops first, and returns each failing op with
its error. It is what `passes.pipeline.verify_module` (so `compile_module` and
`runtime.compile`) and copy-opt run: one path, whose cost grows linearly with the module.
`verify_op` is the per-op step: xDSL's block-structure checks, then the op's `verify_()`
(xdsl 0.75's `Operation.verify` would print the whole module into the exception's notes,
once per failing op).

A fact that several ops derive from the same surroundings (the enclosing target, the kernel,
its SMEM arena, a copy's geometry, a block's barrier phases) is derived through
`per_run(kind, key, derive)`: once per run and `key`. Passes mutate the IR between runs, so
no fact outlives its run; outside a run (an op verified on its own, xDSL's
`module.verify()`) every call derives the fact afresh.

`copy_op_definition` defines an op of the dialect (`irdl_op_definition`) whose IRDL checks
(operand, result, property and attribute constraints) a run makes once per op signature
(op class, operand and result types, properties, attributes, the number of regions and
successors): they depend on nothing
else, and were most of the cost of verifying a large module. The op's traits and its own
`verify_` run for every op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

from xdsl.ir import ErasedSSAValue, Operation
from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import DiagnosticException, VerifyException

T = TypeVar("T")
OpT = TypeVar("OpT", bound=IRDLOperation)


class VerificationRun:
    """The facts derived during one verification run, by (kind, key)."""

    def __init__(self) -> None:
        self.facts: dict[tuple[str, object], Any] = {}
        self.signatures: set[tuple[object, ...]] = set()
        """The op signatures whose IRDL checks passed in this run."""


_RUN: ContextVar[VerificationRun | None] = ContextVar("copy_verification_run", default=None)


def per_run(kind: str, key: object, derive: Callable[[], T]) -> T:
    """`derive()`, derived once per verification run for (`kind`, `key`); outside a run,
    derived at each call. A `derive` that raises is not kept: each op that asks gets the
    error."""
    run = _RUN.get()
    if run is None:
        return derive()
    facts = run.facts
    slot = (kind, key)
    if slot in facts:
        return facts[slot]
    fact = facts[slot] = derive()
    return fact


def op_errors(module: Operation) -> list[tuple[Operation, Exception]]:
    """Verify `module` op by op, nested ops first, in one run: each failing op with its
    error, in that order (empty when every op verifies). SSA dominance is separate
    (`copy_dialect.dominance`)."""
    run = VerificationRun()
    token = _RUN.set(run)
    errors: list[tuple[Operation, Exception]] = []
    try:
        for op in post_order(module):
            try:
                verify_op(op)
            except (RecursionError, MemoryError):
                raise
            except Exception as exc:
                errors.append((op, exc))
    finally:
        _RUN.reset(token)
    return errors


def post_order(root: Operation) -> Iterator[Operation]:
    """Ops nested in `root` and `root`, nested ops before their parent (no recursion)."""
    stack: list[tuple[Operation, bool]] = [(root, False)]
    while stack:
        op, children_done = stack.pop()
        if children_done:
            yield op
            continue
        stack.append((op, True))
        if op.regions:
            children = [
                child for region in op.regions for block in region.blocks for child in block.ops
            ]
            stack.extend((child, False) for child in reversed(children))


def verify_op(op: Operation) -> None:
    """`op.verify(verify_nested_ops=False)` without xDSL's error path: the block-structure
    checks of `Operation.verify` (they raise without printing anything), then `verify_()`."""
    _check_no_empty_blocks(op)
    if any(isinstance(operand, ErasedSSAValue) for operand in op.operands):
        raise VerifyException("an erased value is still used by the op")
    block = op.parent
    region = None if block is None else block.parent
    if op.successors:
        if block is None or region is None:
            raise VerifyException(
                f"Operation {op.name} with block successors does not belong to a block or a region"
            )
        if block.last_op is not op:
            raise VerifyException(
                f"Operation {op.name} with block successors must terminate its parent block"
            )
        if any(succ.parent != region for succ in op.successors):
            raise VerifyException(
                f"Operation {op.name} is branching to a block of a different region"
            )
    if block is not None and region is not None and block.last_op is op:
        if len(region.blocks) == 1:
            parent = region.parent
            if parent is not None and not parent.has_trait(NoTerminator):
                if not op.has_trait(IsTerminator):
                    raise VerifyException(
                        f"Operation {op.name} terminates block in single-block region but is "
                        "not a terminator"
                    )
        elif not op.has_trait(IsTerminator):
            raise VerifyException(
                f"Operation {op.name} terminates block in multi-block region but is not a "
                "terminator"
            )
    op.verify_()


def _check_no_empty_blocks(op: Operation) -> None:
    """The check that xDSL's Block.verify makes on the blocks of `op` (not recursive)."""
    for region in op.regions:
        if len(region.blocks) == 1 and not region.blocks[0].ops and not op.has_trait(NoTerminator):
            raise DiagnosticException(
                "contains an empty block in a single-block region that expects "
                "at least a terminator"
            )


def copy_op_definition(cls: type[OpT]) -> type[OpT]:
    """`irdl_op_definition`, with the IRDL checks made once per op signature in a run (the
    op's traits and its `verify_` run for every op). For ops that define no regions or
    successors: their IRDL checks depend on the signature (with the number of regions and
    successors) alone."""
    custom_verify = cls.__dict__.get("verify_")
    cls = irdl_op_definition(cls)
    op_def = cls.get_irdl_definition()
    assert not op_def.regions, f"{cls.name} defines regions"
    assert not op_def.successors, f"{cls.name} defines successors"

    def verify_(self: IRDLOperation) -> None:
        run = _RUN.get()
        if run is None:
            op_def.verify(self)
        else:
            signature = (
                cls,
                self.operand_types,
                self.result_types,
                tuple(self.properties.items()),
                tuple(self.attributes.items()),
                len(self.regions),
                len(self.successors),
            )
            if signature in run.signatures:
                for trait in op_def.traits:
                    trait.verify(self)
            else:
                op_def.verify(self)
                run.signatures.add(signature)
        if custom_verify is not None:
            custom_verify(self)

    cls.verify_ = verify_  # pyright: ignore[reportAttributeAccessIssue]
    return cls
