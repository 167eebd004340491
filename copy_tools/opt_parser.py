"""Parsing for copy-opt: xDSL's MLIR parser with mlir-opt's locations and messages.

Every parsed op carries `loc("FILE":LINE:COL)` (the position of its first token) unless the
text gives an explicit `loc(...)`; with `--split-input-file` the lines are those of the
original file. Exceptions raised while building an op become ParseErrors at the op, and
`parse_error_diagnostics` turns a ParseError into located diagnostics.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, AttributeInvT, Dialect, Operation, SSAValue, TypeAttribute
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.utils.exceptions import DiagnosticException, MultipleSpansParseError, ParseError
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from copy_tools.diagnostics import Chunk, Diagnostic, SourceFile, SourceLocation
from copy_tools.opt_errors import NESTING_TOO_DEEP, RECURSION_LIMIT, internal_error
from copy_tools.opt_verify import op_message


class DialectLoadError(DiagnosticException):
    """A registered dialect whose Python module fails to import or build."""

    def __init__(self, dialect_name: str, cause: Exception):
        super().__init__(
            f"cannot load dialect '{dialect_name}': {type(cause).__name__}: {cause} "
            "(its Python module is missing or broken; check the installation)"
        )


@dataclass
class NotedParseError(ParseError):
    """A ParseError made from a DiagnosticException, keeping its `note` (if any)."""

    note: str | None

    @staticmethod
    def of(span: Span, message: str, exc: Exception) -> NotedParseError:
        note = getattr(exc, "note", None)
        return NotedParseError(span, message, note if isinstance(note, str) else None)


@dataclass
class InternalParseError(ParseError):
    """An unexpected Python exception raised while parsing the op at `span`."""

    where: str
    cause: BaseException


def guarded_dialect_factory(name: str, factory: Callable[[], Dialect]) -> Callable[[], Dialect]:
    """Wrap a dialect factory so that a failing import becomes a DialectLoadError."""

    def load() -> Dialect:
        try:
            return factory()
        except Exception as exc:
            raise DialectLoadError(name, exc) from exc

    return load


# --- parsing with locations ----------------------------------------------------------


def chunk_location(source: SourceFile, chunk: Chunk, pos: int) -> SourceLocation:
    """The location in the original file of position `pos` of `chunk`."""
    return source.location(chunk.start + pos)


STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
"""xDSL's string-literal pattern (xdsl 0.75.0, `MLIRLexer._unescaped_characters_regex`)
without its nested `+` inside `*`: the same strings, but an unterminated one fails in linear
time. xDSL's backtracks exponentially in the length of the line (a stray `"` before 45
characters and a newline took minutes, found by tests/frontends/test_api_fuzz.py)."""


class LocatingParser(Parser):
    """xDSL's MLIR parser that gives each op the FileLineColLoc of its first token.

    It also turns exceptions raised while building an op (verification errors of
    attributes or of the op, failing dialect imports, bugs) into ParseErrors at the
    op, and reports an undefined SSA value at its first use rather than at the end
    of the input.
    """

    def __init__(self, ctx: Context, source: SourceFile, chunk: Chunk):
        super().__init__(ctx, chunk.text, source.name)
        self.lexer._unescaped_characters_regex = STRING_LITERAL  # pyright: ignore
        self._source = source
        self._chunk = chunk
        self._filename = StringAttr(source.name)
        self._pos_after_location = -1
        self._op_starts: list[Span] = []
        """Start of each op being parsed, innermost last."""
        self._op_names: list[str] = []
        """Name of each op being parsed ('' until known), innermost last."""
        self._last_top_level_op: Operation | None = None
        self._first_forward_use: dict[str, Span] = {}

    # Positions and locations.

    def source_location(self, pos: int) -> SourceLocation:
        """The location in the original file of position `pos` of the chunk."""
        return chunk_location(self._source, self._chunk, pos)

    def current_location(self) -> SourceLocation:
        return self.source_location(self._current_token.span.start)

    def _file_loc(self, pos: int) -> FileLineColLoc:
        loc = self.source_location(pos)
        return FileLineColLoc(self._filename, IntAttr(loc.line), IntAttr(loc.col))

    def chunk_loc(self) -> FileLineColLoc:
        """The location of the chunk's start, used for an implicit module."""
        return FileLineColLoc(self._filename, IntAttr(self._chunk.first_line), IntAttr(1))

    # Overrides of xDSL's parser (xdsl 0.75.0).

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if allow_implicit_module and self._current_token.kind == MLIRTokenKind.EOF:
            module = ModuleOp([])  # empty input: an empty module, like mlir-opt
        else:
            try:
                module = super().parse_module(allow_implicit_module)
            except ParseError as exc:
                raise self._better_undefined_value_error(exc) from None
        if module is not self._last_top_level_op:  # implicit module made by xDSL
            module.location = self.chunk_loc()
        return module

    def parse_optional_location(self):
        location = super().parse_optional_location()
        if location is not None:
            self._pos_after_location = self._current_token.span.start
        return location

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        self._op_starts.append(start)
        self._op_names.append("")
        try:
            op = super().parse_operation()
        except (ParseError, RecursionError, MemoryError):
            raise
        except DialectLoadError as exc:
            raise ParseError(start, str(exc)) from exc
        except (DiagnosticException, ValueError) as exc:
            raise NotedParseError.of(start, self._op_message(str(exc)), exc) from exc
        except Exception as exc:
            where = f"parser of '{self._op_names[-1]}'" if self._op_names[-1] else "parser"
            raise InternalParseError(start, "", where, exc) from exc
        finally:
            self._op_starts.pop()
            self._op_names.pop()
        # The op's own `loc(...)` is the last thing parsed for it, if present.
        if self._pos_after_location != self._current_token.span.start:
            op.location = self._file_loc(start.start)
        if not self._op_names:
            self._last_top_level_op = op
        return op

    def parse_optional_attribute(self) -> Attribute | None:
        start = self._current_token.span
        try:
            return super().parse_optional_attribute()
        except ParseError as exc:
            raise self._better_unknown_attribute_error(exc, start) from None
        except DialectLoadError:
            raise
        except DiagnosticException as exc:  # the attribute's own verifier
            raise NotedParseError.of(start, str(exc), exc) from exc

    def parse_optional_type(self) -> TypeAttribute | None:
        start = self._current_token.span
        try:
            return super().parse_optional_type()
        except ParseError as exc:
            raise self._better_unknown_attribute_error(exc, start) from None
        except DialectLoadError:
            raise
        except DiagnosticException as exc:  # the type's own verifier
            raise NotedParseError.of(start, str(exc), exc) from exc

    def _get_op_by_name(self, name: str) -> type[Operation]:
        self._op_names[-1] = name
        op_type = self.ctx.get_optional_op(name, dialect_stack=self._parser_state.dialect_stack)
        if op_type is None:
            self.raise_error(self._unknown_op_message(name), self._op_starts[-1])
        return op_type

    def resolve_operand(
        self, operand: UnresolvedOperand, type: AttributeInvT
    ) -> SSAValue[AttributeInvT]:
        name = operand.operand_name
        if name not in self.ssa_values and name not in self.forward_ssa_references:
            self._first_forward_use[name] = operand.span
        return super().resolve_operand(operand, type)

    # Messages.

    def _op_message(self, message: str) -> str:
        name = self._op_names[-1] if self._op_names else ""
        return op_message(name, message) if name else message

    def _unknown_op_message(self, name: str) -> str:
        dialect, _, _ = name.rpartition(".")
        if dialect and dialect not in self.ctx.registered_dialect_names:
            return (
                f"unknown operation '{name}': dialect '{dialect}' is not registered "
                "(use --allow-unregistered-dialect to accept unregistered operations)"
            )
        return f"unknown operation '{name}'"

    def _better_unknown_attribute_error(self, exc: ParseError, start: Span) -> ParseError:
        """Report an unknown `!d.x`/`#d.x` or alias at its name, not at the next token."""
        name = start.text
        if type(exc) is not ParseError or name[:1] not in ("!", "#"):
            return exc
        if exc.msg == f"undefined symbol alias '{name}'":
            return ParseError(start, exc.msg)
        if exc.msg != f"'{name[1:]}' is not registered":
            return exc
        kind = "type" if name.startswith("!") else "attribute"
        message = f"unknown {kind} '{name}'"
        dialect = name[1:].partition(".")[0]
        if dialect not in self.ctx.registered_dialect_names:
            message += (
                f": dialect '{dialect}' is not registered (use --allow-unregistered-dialect "
                "to accept unregistered attributes and types)"
            )
        return ParseError(start, message)

    def _better_undefined_value_error(self, exc: ParseError) -> ParseError:
        """Report 'values used but not defined' at the first use of the first value."""
        names = [n for n in self.forward_ssa_references if n in self._first_forward_use]
        if not names or not exc.msg.startswith("values used but not defined"):
            return exc
        names.sort(key=lambda n: self._first_forward_use[n].start)
        message = f"use of undefined SSA value %{names[0]}"
        if len(names) > 1:
            message += " (also undefined: " + ", ".join("%" + n for n in names[1:]) + ")"
        return ParseError(self._first_forward_use[names[0]], message)


def parse_error_diagnostics(
    exc: ParseError, source: SourceFile, chunk: Chunk, here: SourceLocation
) -> list[Diagnostic]:
    """The error (and notes: the exception's, the other spans) of an xDSL ParseError."""

    def location(span: Span) -> SourceLocation:
        if span.input.content is chunk.text:
            return chunk_location(source, chunk, span.start)
        return here  # a span of some other text: where the parser stopped

    at_eof = exc.span.input.content is chunk.text and exc.span.start >= len(chunk.text)
    diagnostics = [Diagnostic("error", location(exc.span), _tidy_parse_message(exc.msg, at_eof))]
    if isinstance(exc, NotedParseError) and exc.note:
        diagnostics.append(Diagnostic("note", location(exc.span), exc.note))
    if isinstance(exc, MultipleSpansParseError):
        for span, note in exc.refs:
            text = note or (exc.ref_text or "see here").rstrip(": \n")
            diagnostics.append(Diagnostic("note", location(span), text))
    return diagnostics


def _tidy_parse_message(message: str, at_eof: bool) -> str:
    message = message.strip()
    if not message or message.startswith("in "):  # xDSL's "Expected ..." lost its head
        message = ("unexpected end of input" if at_eof else "unexpected token") + (
            f" {message}" if message else ""
        )
    elif at_eof and message.lower().startswith(("expected", "unexpected")):
        message += " (reached the end of the input)"
    return message


def parse_chunk(
    ctx: Context,
    source: SourceFile,
    chunk: Chunk,
    implicit_module: bool,
    diagnostics: list[Diagnostic],
) -> ModuleOp | None:
    """The chunk's module, or None with the parse errors added to `diagnostics`."""
    parser: LocatingParser | None = None

    def here() -> SourceLocation:  # where the parser stopped
        if parser is None:
            return chunk_location(source, chunk, 0)
        return parser.current_location()

    try:
        parser = LocatingParser(ctx, source, chunk)  # lexes the first token
        return parser.parse_module(implicit_module)
    except InternalParseError as exc:
        loc = chunk_location(source, chunk, exc.span.start)
        diagnostics.extend(internal_error(exc.where, exc.cause, loc))
    except ParseError as exc:
        diagnostics.extend(parse_error_diagnostics(exc, source, chunk, here()))
    except RecursionError:
        message = NESTING_TOO_DEEP.format(limit=RECURSION_LIMIT, stage="parsing")
        diagnostics.append(Diagnostic("error", here(), message))
    except (DiagnosticException, ValueError) as exc:
        diagnostics.append(Diagnostic("error", here(), str(exc)))
    except Exception as exc:
        diagnostics.extend(internal_error("parser", exc, here()))
    return None
