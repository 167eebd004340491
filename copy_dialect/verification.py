"""One verification run: the entry point that checks a module op by op, and the facts about
an op's surroundings that its verifier needs, derived once per run.

`op_errors(module)` verifies every op, nested ops first, and returns each failing op with
its error. It is what `passes.pipeline.verify_module` (so `compile_module` and
`runtime.compile`) and copy-opt run: one path, whose cost grows linearly with the module.
`verify_op` is the per-op step: xDSL's block-structure checks, then the op's `verify_()`
(xdsl 0.75's `Operation.verify` would print the whole module into the exception's notes,
once per failing op).

A fact that several ops derive from the same surroundings (the enclosing target, the kernel,
a copy's geometry, a value's constant) is derived through
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

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from xdsl.ir import ErasedSSAValue, Operation, Region
from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from copy_dialect.errors import CopyVerifyException

T = TypeVar("T")
OpT = TypeVar("OpT", bound=IRDLOperation)


class VerificationRun:
    """The facts derived during one verification run, by (kind, key)."""

    def __init__(self) -> None:
        self.facts: dict[str, dict[int, Any]] = {}
        """Per kind of fact, by the id of the IR object it is about (the IR lives, unchanged,
        through the run)."""
        self.irdl_checked: set[Signature] = set()
        """The op signatures whose IRDL checks passed in this run."""
        self.passed: set[tuple[object, ...]] = set()
        """The (checks, signature, parent op, operands) that passed (`checked_like`)."""


_RUN: ContextVar[VerificationRun | None] = ContextVar("copy_verification_run", default=None)


def per_run(kind: str, key: object, derive: Callable[[], T]) -> T:
    """`derive()`, derived once per verification run for (`kind`, `key`), where `key` is an
    IR object (an op, block or value: by identity, as the IR hashes them); outside a run,
    derived at each call. A `derive` that raises is not kept: each op that asks gets the
    error."""
    run = _RUN.get()
    if run is None:
        return derive()
    facts = run.facts.get(kind)
    if facts is None:
        facts = run.facts[kind] = {}
    slot = id(key)
    if slot in facts:
        return facts[slot]
    fact = facts[slot] = derive()
    return fact


@contextmanager
def verification_run() -> Iterator[None]:
    """One verification run: the facts derived inside it are kept until it ends (an inner
    `verification_run` joins the outer one). Python's cyclic garbage collector pauses
    meanwhile: the facts a run keeps (several objects per op) would otherwise set off full
    collections, each through the whole IR (a third of the time to verify a 100,000-op
    kernel). Verification makes no cycles that must be collected before it ends."""
    if _RUN.get() is not None:
        yield
        return
    token = _RUN.set(VerificationRun())
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
        _RUN.reset(token)


def op_errors(module: Operation) -> list[tuple[Operation, Exception]]:
    """Verify `module` op by op, nested ops first, in one run: each failing op with its
    error, in that order (empty when every op verifies). SSA dominance is separate
    (`analysis.dominance`)."""
    errors: list[tuple[Operation, Exception]] = []
    with verification_run():
        for op in post_order(module):
            try:
                verify_op(op)
            except (RecursionError, MemoryError):
                raise
            except Exception as exc:
                errors.append((op, exc))
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
    if op.regions:
        _check_no_empty_blocks(op)
    for operand in op.operands:
        if isinstance(operand, ErasedSSAValue):
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
        if _single_block(region):
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
        if (
            _single_block(region)
            and region.blocks[0].first_op is None
            and not op.has_trait(NoTerminator)
        ):
            raise DiagnosticException(
                "contains an empty block in a single-block region that expects "
                "at least a terminator"
            )


def _single_block(region: Region) -> bool:
    """`len(region.blocks) == 1` in constant time (xDSL counts the blocks one by one: per
    terminator, that made verifying a function of many blocks quadratic)."""
    first = region.first_block
    return first is not None and first is region.last_block


class Signature:
    """What an op's IRDL checks read: its class, operand and result types, properties,
    attributes and the number of its regions and successors (hashed once).

    Operand types are keyed by identity: all uses of an SSA value share its type object, and
    the IR, with every type in it, lives unchanged through a run. (Equal types of different
    values only make different signatures.) The rest is compared by value."""

    __slots__ = ("key", "hash")

    def __init__(self, op: Operation) -> None:
        self.key = (
            type(op),
            tuple(map(id, op.operand_types)),
            op.result_types,
            tuple(op.properties.items()),
            tuple(op.attributes.items()),
            len(op.regions),
            len(op.successors),
        )
        self.hash = hash(self.key)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Signature) and self.hash == other.hash and self.key == other.key


def checked_like(op: Operation, checks: str) -> bool:
    """Whether an op of the same signature with the same operands (the same SSA values), in
    the same parent op, passed `checks` earlier in this run (`passed_like`); always False
    outside a run. For checks that read nothing but the op's signature, its operands (their
    types, defining ops and constant values) and what the parent op decides (the enclosing
    target, kernel and cluster shape): not the ops around it."""
    run = _RUN.get()
    return run is not None and _like(op, checks) in run.passed


def passed_like(op: Operation, checks: str) -> None:
    """Record that `op` passed `checks` (see `checked_like`)."""
    run = _RUN.get()
    if run is not None:
        run.passed.add(_like(op, checks))


def _like(op: Operation, checks: str) -> tuple[object, ...]:
    return (checks, signature(op), id(op.parent_op()), tuple(map(id, op.operands)))


def signature(op: Operation) -> Signature:
    """The op's `Signature`, once per run."""
    return per_run("signature", op, lambda: Signature(op))


def copy_op_definition(cls: type[OpT]) -> type[OpT]:
    """`irdl_op_definition`, with the IRDL checks made once per op signature in a run (the
    op's traits and its `verify_` run for every op). For ops that define no regions or
    successors: their IRDL checks depend on the signature (with the number of regions and
    successors) alone. A base class of an op family may define the family's `verify_`
    (it must not be a `copy_op_definition` itself)."""
    # The op's own verifier or one an op family's base class (not decorated itself)
    # defines for all its ops; xDSL's default is no verifier.
    custom_verify = next(
        (
            c.__dict__["verify_"]
            for c in cls.__mro__
            if "verify_" in c.__dict__ and c not in (IRDLOperation, Operation)
        ),
        None,
    )
    cls = irdl_op_definition(cls)
    op_def = cls.get_irdl_definition()
    assert not op_def.regions, f"{cls.name} defines regions"
    assert not op_def.successors, f"{cls.name} defines successors"

    inherent = sorted([*op_def.properties, *op_def.attributes])

    def verify_(self: IRDLOperation) -> None:
        run = _RUN.get()
        if run is None:
            op_def.verify(self)
            check_attribute_names(self, inherent)
        elif (key := signature(self)) in run.irdl_checked:
            for trait in op_def.traits:
                trait.verify(self)
        else:
            op_def.verify(self)
            check_attribute_names(self, inherent)
            run.irdl_checked.add(key)
        if custom_verify is not None:
            custom_verify(self)

    cls.verify_ = verify_  # pyright: ignore[reportAttributeAccessIssue]
    return cls


OP_DISCARDABLE = ("copy.target",)
"""The copy dialect's discardable attributes that any op may carry (the target)."""


def check_attribute_names(op: Operation, inherent: list[str]) -> None:
    """Every attribute of a copy op is used: an inherent one (a property or attribute the op
    defines, however spelled), a discardable one of another dialect (`dialect.name`, which
    keeps its own meaning), or one of the copy dialect's that an op may carry; an unknown
    name, or a copy-dialect attribute the op cannot take, is an error (MLIR's discipline for
    inherent and discardable attributes)."""
    for name in op.attributes:
        dialect, dot, _ = name.partition(".")
        if dot and dialect != "copy" or name in OP_DISCARDABLE:
            continue
        takes = ", ".join(inherent) if inherent else "none"
        # rule: AT1
        raise CopyVerifyException(
            f"unknown attribute '{name}' on {op.name}, whose attributes are: {takes}"
            if not dot
            else f"the copy dialect's attribute '{name}' does not apply to {op.name}, whose "
            f"attributes are: {takes} (and copy.target)",
            note=f"drop '{name}'"
            + ("" if dot else f", or prefix it with its dialect's name (mydialect.{name})"),
        )
