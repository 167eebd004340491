"""copy-opt's pass pipelines: xDSL's flat `-p 'pass-a,pass-b{opt=v}'` and MLIR's nested
`--pass-pipeline='builtin.module(pass-a,func.func(pass-b{opt=v}))'`, parsed into a tree.

A pipeline is a list of elements, each a pass (`name`, `name{options}`) or a nested pipeline
anchored on an op name (`op.name(elements)`; `any(...)` anchors on every op). The top-level
elements run on the module copy-opt parsed; a top-level `builtin.module(...)` is that module
itself, as in mlir-opt, and any other anchor runs its elements on each op of that name
directly in the enclosing op's regions. The options are xDSL's (`xdsl.utils.arg_spec`).

xDSL's passes all work on a `builtin.module`: a pass anchored on another op runs on a
temporary module holding that op (with the attributes of the modules around it, such as
`copy.target`), and must leave exactly that op there. A pass with `stages()` (a pipeline
pass: `lower-copy-to-llvm`) is run stage by stage, so that IR printing, timing and
verification see each stage.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeAlias

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, parse_spec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException

ANY_OP = "any"
"""The anchor that matches every op (mlir-opt's `any(...)`)."""

ROOT_ANCHOR = "builtin.module"


# --- the tree ------------------------------------------------------------------------


@dataclass(frozen=True)
class PassNode:
    """A pass; `stages` are what a pipeline pass runs, in order (empty for a plain pass)."""

    pass_: ModulePass
    stages: tuple[PassNode, ...] = ()


@dataclass(frozen=True)
class NestNode:
    """Elements run on each op named `anchor` directly inside the enclosing op."""

    anchor: str
    children: tuple[Node, ...]


Node: TypeAlias = PassNode | NestNode


@dataclass(frozen=True)
class Pipeline:
    nodes: tuple[Node, ...] = ()

    @property
    def passes(self) -> tuple[ModulePass, ...]:
        """The passes that run, pipeline passes' stages expanded, in order."""
        return tuple(node.pass_ for node in leaves(self.nodes))


def leaves(nodes: tuple[Node, ...]) -> Iterator[PassNode]:
    for node in nodes:
        if isinstance(node, NestNode):
            yield from leaves(node.children)
        elif node.stages:
            yield from leaves(node.stages)
        else:
            yield node


def pass_node(pass_: ModulePass) -> PassNode:
    """The node of `pass_`, its stages (`pass_.stages()`, if it has them) below it."""
    stages = getattr(pass_, "stages", None)
    if not callable(stages):
        return PassNode(pass_)
    return PassNode(pass_, tuple(pass_node(p) for p in stages()))


def map_passes(nodes: tuple[Node, ...], f: Callable[[ModulePass], ModulePass]) -> tuple[Node, ...]:
    """The tree with each pass `p` written outside a pipeline pass replaced by `f(p)` (a
    pipeline pass's stages are made again from the new pass)."""
    result: list[Node] = []
    for node in nodes:
        if isinstance(node, NestNode):
            result.append(NestNode(node.anchor, map_passes(node.children, f)))
        else:
            new = f(node.pass_)
            result.append(node if new is node.pass_ else pass_node(new))
    return tuple(result)


# --- the text ------------------------------------------------------------------------


class PipelineSyntaxError(Exception):
    """A pipeline that does not parse: `message` at `column` (1-based)."""

    def __init__(self, message: str, column: int):
        super().__init__(f"{message} at column {column}")
        self.message = message
        self.column = column


@dataclass(frozen=True)
class PassText:
    spec: ArgSpec
    column: int


@dataclass(frozen=True)
class NestText:
    anchor: str
    children: tuple[PassText | NestText, ...]
    column: int


_NAME = re.compile(r"[A-Za-z0-9_.$-]+")


def parse_pipeline_text(text: str) -> tuple[PassText | NestText, ...]:
    """The elements of a pipeline (flat or nested); a PipelineSyntaxError if it is not one."""
    return _TextParser(text).pipeline()


class _TextParser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def _skip_space(self) -> str:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def pipeline(self) -> tuple[PassText | NestText, ...]:
        if self._skip_space() == "":
            return ()
        return self._elements(None)

    def _elements(self, closer: str | None) -> tuple[PassText | NestText, ...]:
        items: list[PassText | NestText] = []
        if closer is not None and self._skip_space() == closer:  # `func.func()`
            self.pos += 1
            return ()
        while True:
            items.append(self._element())
            char = self._skip_space()
            if char == ",":
                self.pos += 1
            elif char == (closer or ""):
                self.pos += len(char)
                return tuple(items)
            elif closer is None:
                raise PipelineSyntaxError("Expected ',' after a pass here", self.pos + 1)
            elif char == "":
                raise PipelineSyntaxError(
                    "Expected ')' closing the nested pipeline here (reached the end)",
                    self.pos + 1,
                )
            else:
                raise PipelineSyntaxError("Expected ',' or ')' here", self.pos + 1)

    def _element(self) -> PassText | NestText:
        self._skip_space()
        start = self.pos
        match = _NAME.match(self.text, start)
        if match is None:
            raise PipelineSyntaxError("Expected pass name here", start + 1)
        name = match.group()
        self.pos = match.end()
        char = self.text[self.pos] if self.pos < len(self.text) else ""
        if char == "(":
            self.pos += 1
            return NestText(name, self._elements(")"), start + 1)
        if char in ("{", "["):
            self.pos = self._balanced_end(start, char, "}" if char == "{" else "]")
        return PassText(self._spec(start, self.text[start : self.pos]), start + 1)

    def _balanced_end(self, start: int, opener: str, closer: str) -> int:
        """The position after the `closer` that matches the `opener` at self.pos (quoted
        strings skipped); for an unclosed one, xDSL's own error for what follows."""
        depth, pos, text = 0, self.pos, self.text
        while pos < len(text):
            char = text[pos]
            if char == '"':
                pos += 1
                while pos < len(text) and text[pos] != '"':
                    pos += 2 if text[pos] == "\\" else 1
            elif char == opener:
                depth += 1
            elif char == closer:
                depth -= 1
                if depth == 0:
                    return pos + 1
            pos += 1
        self._spec(start, text[start:])  # raises xDSL's message for the unclosed options
        raise PipelineSyntaxError(f"Expected '{closer}' closing the options", len(text) + 1)

    def _spec(self, start: int, text: str) -> ArgSpec:
        try:
            return parse_spec(text)
        except ArgSpecParseError as exc:
            message, column = _arg_spec_error(exc)
            raise PipelineSyntaxError(message, start + column) from None


def _arg_spec_error(exc: ArgSpecParseError) -> tuple[str, int]:
    """(message, 1-based column) of xDSL's multi-line pipeline syntax error."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    message = lines[-1].strip() if lines else "syntax error"
    try:
        column = int(lines[1].rsplit(":", 1)[-1])
    except (IndexError, ValueError):
        column = 1
    return message, column


# --- running -------------------------------------------------------------------------


class AnchorError(DiagnosticException):
    """A pass anchored on an op that did not leave exactly that op in its place."""


def anchored_ops(parents: list[Operation], anchor: str) -> list[Operation]:
    """The ops named `anchor` (every op for `any`) directly in the parents' regions."""
    return [
        op
        for parent in parents
        for region in parent.regions
        for block in region.blocks
        for op in block.ops
        if anchor == ANY_OP or op.name == anchor
    ]


def apply_on(pass_: ModulePass, ctx: Context, op: Operation) -> None:
    """Run `pass_` on `op`: directly on a module, otherwise on a temporary module that holds
    `op` and has the attributes of the modules around it."""
    if isinstance(op, ModuleOp):
        pass_.apply(ctx, op)
        return
    block = op.parent_block()
    assert block is not None
    following = op.next_op
    attributes = {}
    for ancestor in reversed(list(_ancestors(op))):
        if isinstance(ancestor, ModuleOp):
            attributes.update(ancestor.attributes)
    attributes.pop("sym_name", None)
    op.detach()
    holder = ModuleOp([op], attributes)
    try:
        pass_.apply(ctx, holder)
    finally:
        ops = list(holder.body.block.ops)
        for moved in ops:
            moved.detach()
            if following is None:
                block.add_op(moved)
            else:
                block.insert_op_before(moved, following)
    if len(ops) != 1 or ops[0] is not op:
        what = "replaced that op" if op not in ops else "added ops next to it"
        names = sorted({o.name for o in ops if o is not op})
        found = f" ({', '.join(repr(n) for n in names)})" if names else ""
        raise AnchorError(
            f"a pass anchored on '{op.name}' may change only inside the op it runs on, but "
            f"it {what}{found}: run it on builtin.module instead"
        )


def _ancestors(op: Operation) -> Iterator[Operation]:
    parent = op.parent_op()
    while parent is not None:
        yield parent
        parent = parent.parent_op()
