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

An op's IRDL checks (operand, result, property and attribute constraints) a run makes once
per op signature (op class, operand and result types, properties, attributes, the number of
regions and successors), for every op whose definition has no regions or successors: they
depend on nothing else, and were most of the cost of verifying a large module. The op's
traits and its own `verify_` run for every op. `copy_op_definition` defines an op of the
dialect (`irdl_op_definition`) this way; `verify_op` does the same for the ops of other
dialects (`arith.constant`, `memref.load`, `gpu.barrier`: `irdl_verifier`), without changing
their classes.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any, NamedTuple, TypeVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Attribute, ErasedSSAValue, Operation, Region
from xdsl.irdl import IRDLOperation, OpDef, irdl_op_definition
from xdsl.parser import Parser
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
        self.types: dict[Attribute, int] = {}
        """A number for each type (by value) that a `Signature` of the run read."""
        self.type_numbers: dict[int, int] = {}
        """The number of each type object (by identity) that a `Signature` of the run read."""
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


def ops_of(op: Operation) -> tuple[Operation, ...]:
    """`op` and every op nested in it, in `walk` order (pre-order), listed once per
    verification run: the op verifiers' kernel rules and the protocol analysis each go
    through a kernel's ops several times, and xDSL's nested walk costs more than the
    look-up (the IR does not change during a run)."""
    return per_run("ops", op, lambda: tuple(op.walk()))


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
    run = _RUN.get()
    verifier = irdl_verifier(type(op)) if run is not None and not op.regions else None
    if verifier is None:
        op.verify_()
        return
    op_def, custom_verify = verifier
    try:
        key = Signature(op, run)
    except TypeError:  # an attribute that cannot be hashed: no signature, every check
        op.verify_()
        return
    if key in run.irdl_checked:
        for trait in op_def.traits:
            trait.verify(op)
    else:
        op_def.verify(op)
        run.irdl_checked.add(key)
    if custom_verify is not None:
        custom_verify(op)


class IrdlVerifier(NamedTuple):
    """What the `verify_` that `irdl_op_definition` gives an op class runs: the class's IRDL
    checks (`op_def.verify`, traits included), then its own verifier, if any."""

    op_def: OpDef
    custom_verify: Callable[[Operation], None] | None


@cache
def irdl_verifier(cls: type[Operation]) -> IrdlVerifier | None:
    """The `IrdlVerifier` of an op class whose IRDL checks depend on the op's `Signature`
    alone (its definition has no regions or successors), so that a run makes them once per
    signature; None for any other class (verified by its own `verify_`): one that is not an
    IRDL op, defines regions or successors, is a `copy_op_definition` (which memoises its
    IRDL checks itself), or whose `verify_` is not the one xdsl 0.75's `irdl_op_definition`
    makes (read from that function's closure: its `op_def` and `custom_verify`)."""
    if not issubclass(cls, IRDLOperation):
        return None
    verify = cls.__dict__.get("verify_")
    code = getattr(verify, "__code__", None)
    if (
        code is None
        or getattr(verify, "__qualname__", "") != "get_accessors_from_op_def.<locals>.verify_"
        or verify.__closure__ is None
    ):
        return None
    cells = dict(zip(code.co_freevars, (c.cell_contents for c in verify.__closure__), strict=True))
    op_def = cells.get("op_def")
    if op_def is not cls.get_irdl_definition() or set(cells) - {"op_def", "custom_verify"}:
        return None
    if op_def.regions or op_def.successors:
        return None
    custom_verify = cells.get("custom_verify")
    if custom_verify is Operation.verify_:  # xDSL's default: no verifier
        custom_verify = None
    return IrdlVerifier(op_def, custom_verify)


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
    """What an op's IRDL checks read: its class, operand and result types, properties (of an
    `arith.constant` of an integer or float, the value's kind and type: its constraint reads
    no more), attributes and the number of its regions and successors (hashed once).

    Everything is compared by value: equal types of different values make one signature
    (each value has a type object of its own, so keying types by identity would make nearly
    every op's signature its own). In a run, a type is keyed by its number in the run
    (`VerificationRun.types`), found by the type object's identity after its first use (the
    IR, with every type object in it, lives unchanged through a run): a type is hashed
    once per object, not once per use."""

    __slots__ = ("key", "hash")

    def __init__(self, op: Operation, run: VerificationRun | None = None) -> None:
        operand_types = op.operand_types
        result_types = op.result_types
        if run is not None:
            operand_types = _type_numbers(operand_types, run)
            result_types = _type_numbers(result_types, run)
        properties = tuple(op.properties.items())
        if type(op) is arith.ConstantOp and isinstance(op.value, IntegerAttr | FloatAttr):
            # its IRDL constraint reads the value's kind and type, not the number: one
            # signature for all the constants of a type (a straight kernel's coordinates)
            properties = (("value", type(op.value), op.value.type),)
        self.key = (
            type(op),
            operand_types,
            result_types,
            properties,
            tuple(op.attributes.items()),
            len(op.regions),
            len(op.successors),
        )
        self.hash = hash(self.key)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Signature) and self.hash == other.hash and self.key == other.key


def _type_numbers(types: tuple[Attribute, ...], run: VerificationRun) -> tuple[int, ...]:
    """The numbers of `types` in `run` (equal types, equal numbers)."""
    numbers = run.type_numbers
    found = []
    for t in types:
        number = numbers.get(id(t))
        if number is None:
            number = numbers[id(t)] = run.types.setdefault(t, len(run.types))
        found.append(number)
    return tuple(found)


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
    return per_run("signature", op, lambda: Signature(op, _RUN.get()))


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
    strict_optional_operands(cls, op_def)
    return cls


COMMENT = re.compile(r"//[^\n]*")
OPTIONAL_OPERAND_GROUP = re.compile(r"\(`(\w+)` \$(\w+)\^")
"""An optional group of the assembly format led by a keyword and anchored on a variable."""


def strict_optional_operands(cls: type[IRDLOperation], op_def: OpDef) -> None:
    """xDSL 0.75's declarative format reads the anchor operand of an optional group as
    optional even once the group's keyword was read (`OptionalOperandVariable.parse`):
    `if :` or `multicast :` parse as no predicate, no mask, the input silently dropped.
    The op's parse then checks the text it read: each such keyword is followed by an SSA
    value, else a parse error at the keyword."""
    operands = {name for name, _ in op_def.operands}
    groups = OPTIONAL_OPERAND_GROUP.findall(cls.assembly_format or "")
    keywords = [keyword for keyword, variable in groups if variable in operands]
    if not keywords:
        return
    # a keyword not inside a name (`%if`, `!copy.barrier`), and what follows it
    pattern = re.compile(rf"(?<![\w%#@^.!$])({'|'.join(map(re.escape, keywords))})\b\s*(.?)")
    parse = cls.parse

    def strict(klass: type[IRDLOperation], parser: Parser) -> IRDLOperation:
        start = parser.pos
        op = parse(parser)
        # what it read (blanking the comments up to the next op, offsets kept)
        text = COMMENT.sub(
            lambda c: " " * len(c.group()), parser.lexer.input.content[start : parser.pos]
        )
        for found in pattern.finditer(text):
            if found.group(2) != "%":
                parser.raise_error(
                    f"expected an SSA value (%name) after `{found.group(1)}`",
                    start + found.start(1),
                    start + found.end(1),
                )
        return op

    cls.parse = classmethod(strict)  # type: ignore[method-assign, assignment]


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
