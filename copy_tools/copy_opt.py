"""copy-opt: the mlir-opt-style driver of the copy dialect.

It is xDSL's `xdsl-opt` driver (`xDSLOptMain`: dialect/pass/target registration, `-p`
pass pipelines, `-t` targets, the printing flags) with the parts that users see
replaced so that it behaves like mlir-opt:

* every parsed op carries `loc("FILE":LINE:COL)` (the position of its first token)
  unless the text gives an explicit `loc(...)`; with `--split-input-file` the lines
  are those of the original file;
* all problems are diagnostics on stderr, `FILE:LINE:COL: error: MESSAGE` with the
  source line and a caret (see `diagnostics.py`), never a Python traceback, and the
  exit status is 1 when an error was reported;
* the verifier runs op by op (nested ops first) and reports every failing op at its
  location, `'<op name>' op <message>`, plus the `note` of a `CopyVerifyException`;
* `--verify-diagnostics` checks the diagnostics against `// expected-error {{...}}`
  comments, like mlir-opt;
* command-line problems are one `copy-opt: error: ...` line and exit status 1;
* `-o FILE` is written (atomically) only when everything succeeded, and never over
  the input file.

Set COPY_OPT_TRACEBACK=1 to also get the Python traceback of an internal error.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from xdsl.context import Context
from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
)
from xdsl.ir import (
    Attribute,
    AttributeInvT,
    Dialect,
    ErasedSSAValue,
    Operation,
    SSAValue,
    TypeAttribute,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.passes import ModulePass, PassPipeline, get_pass_option_infos
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.universe import Universe
from xdsl.utils.arg_spec import parse_pipeline, parse_spec
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
    VerifyException,
)
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind
from xdsl.xdsl_opt_main import xDSLOptMain

from copy_dialect.dominance import non_dominating_uses
from copy_dialect.target import TARGETS
from copy_tools.diagnostics import (
    SPLIT_MARKER,
    Chunk,
    Diagnostic,
    InvalidInputEncoding,
    SourceFile,
    SourceLocation,
    check_expectations,
    decode_source,
    parse_expectations,
    render_all,
    split_chunks,
)

TOOL_NAME = "copy-opt"
STDIN_NAME = "<stdin>"
TRACEBACK_ENV = "COPY_OPT_TRACEBACK"

RECURSION_LIMIT = 100_000
"""Python frames allowed; about 10 000 levels of nested regions or 12 000 of `[`."""
THREAD_STACK_BYTES = 512 * 1024 * 1024
"""C stack of the worker thread, large enough that RECURSION_LIMIT frames fit."""

INTERNAL_ERROR_NOTE = (
    "this is a bug in copy-opt or in the dialect or pass it ran, not in the input; "
    f"please report it with the input and command line ({TRACEBACK_ENV}=1 prints "
    "the Python traceback)"
)
NESTING_TOO_DEEP = (
    "nesting too deep: more than copy-opt's limit of {limit} Python frames while {stage}"
)


class ToolError(Exception):
    """A problem outside the input text: printed as one `copy-opt: error:` line."""


class UsageError(ToolError):
    """A bad command line."""


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


class _ArgumentParser(argparse.ArgumentParser):
    """argparse, but a bad command line raises UsageError (exit status 1, not 2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{TOOL_NAME} --help')")


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


class LocatingParser(Parser):
    """xDSL's MLIR parser that gives each op the FileLineColLoc of its first token.

    It also turns exceptions raised while building an op (verification errors of
    attributes or of the op, failing dialect imports, bugs) into ParseErrors at the
    op, and reports an undefined SSA value at its first use rather than at the end
    of the input.
    """

    def __init__(self, ctx: Context, source: SourceFile, chunk: Chunk):
        super().__init__(ctx, chunk.text, source.name)
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
        return f"'{name}' op {message}" if name else message

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


# --- locations of ops in diagnostics -------------------------------------------------


def _file_location(loc: Attribute) -> SourceLocation | None:
    """The file position inside a location attribute, if it has one."""
    match loc:
        case FileLineColLoc():
            return SourceLocation(loc.filename.data, loc.line.data, loc.column.data)
        case NameLoc():
            return _file_location(loc.location)
        case CallSiteLoc():
            return _file_location(loc.callee)
        case FusedLoc():
            for inner in loc.locations.data:  # pyright: ignore[reportAttributeAccessIssue]
                if (found := _file_location(inner)) is not None:
                    return found
    return None


def op_location(op: Operation, fallback: SourceLocation) -> SourceLocation:
    """Where to report a diagnostic about `op`.

    The op's own file location, else (ops created by passes have none) that of the
    nearest enclosing op that has one, else `fallback` (the start of the chunk).
    """
    current: Operation | None = op
    while current is not None:
        if (loc := _file_location(current.location)) is not None:
            return loc
        current = current.parent_op()
    return fallback


def post_order(root: Operation) -> Iterator[Operation]:
    """Ops nested in `root` and `root`, nested ops before their parent (no recursion)."""
    stack: list[tuple[Operation, bool]] = [(root, False)]
    while stack:
        op, children_done = stack.pop()
        if children_done:
            yield op
            continue
        stack.append((op, True))
        children = [
            child for region in op.regions for block in region.blocks for child in block.ops
        ]
        stack.extend((child, False) for child in reversed(children))


def verify_op(op: Operation) -> None:
    """`op.verify(verify_nested_ops=False)` without xDSL's error path.

    xdsl 0.75's `Operation.verify` reports a failing `verify_()` through `emit_error`, which
    prints the whole module into the exception's notes, once per failing op: copy-opt took
    8 minutes on a 4000-op module with 4000 errors. The block-structure checks below are
    those of `Operation.verify` (they raise without printing anything); `verify_()` then runs
    directly.
    """
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


GPU_OUTPUTS = ("llvm", "ptx", "cubin")
"""-t values that lower to LLVM and compile with our backend."""


def _gpu_output_target() -> None:
    """Placeholder factory: CopyOptMain.output_resulting_program handles GPU outputs."""
    raise AssertionError("GPU outputs are printed by CopyOptMain.output_resulting_program")


# --- the driver ----------------------------------------------------------------------


@dataclass
class ChunkResult:
    diagnostics: list[Diagnostic] = field(default_factory=list[Diagnostic])
    output: str | None = None
    """The printed result, or None when the chunk failed."""

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)


class CopyOptMain(xDSLOptMain):
    """xDSL's opt driver with mlir-opt behavior for locations, errors and -o."""

    version_format = f"{TOOL_NAME} built from xdsl version {{xdsl_version}}"

    def __init__(self, args: Sequence[str] | None = None):
        # Same steps as xDSLOptMain.__init__, but every failure is a ToolError.
        self.available_frontends = {}
        self.available_passes = {}
        self.available_targets = {}
        self.ctx = Context()
        try:
            self.register_all_dialects()
            self.register_all_frontends()
            self.register_all_passes()
            self.register_all_targets()
        except Exception as exc:
            raise ToolError(
                f"cannot load the registered xDSL dialects and passes: {type(exc).__name__}: {exc}"
            ) from exc
        arg_parser = _ArgumentParser(
            prog=TOOL_NAME,
            description="mlir-opt-style driver for the copy dialect",
            conflict_handler="resolve",
        )
        self.register_all_arguments(arg_parser)
        self.args = arg_parser.parse_args(args=args)
        self._check_arguments()
        self.ctx.allow_unregistered = self.args.allow_unregistered_dialect
        self.setup_pipeline()

    # Registration and arguments.

    def register_all_dialects(self):
        for name, factory in Universe.get_multiverse().all_dialects.items():
            self.ctx.register_dialect(name, guarded_dialect_factory(name, factory))

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "-o",
            "--output-file",
            type=str,
            help="output file ('-': standard output); written only if processing "
            "succeeded, never over the input file",
        )
        arg_parser.add_argument(
            "-p",
            "--passes",
            action="append",
            default=[],
            help="pass pipeline, e.g. 'canonicalize,cse{option=value}'; repeated -p "
            "options are run one after the other. Available passes: "
            + ",".join(self.available_passes),
        )
        arg_parser.add_argument(
            "-t",
            "--emit",
            dest="target",
            default="mlir",
            help="what to print: mlir (default), llvm (LLVM IR), ptx, cubin (with -o; also "
            "writes the kernels' ABI to OUT.json), or another xDSL target. llvm, ptx and "
            "cubin run the default lowering pipeline unless -p is given",
        )
        arg_parser.add_argument(
            "--target",
            dest="gpu_target",
            default=None,
            help="GPU target (sm_80, sm_90a, sm_100a, ...) for -t llvm|ptx|cubin, "
            "overriding the module's copy.target",
        )
        arg_parser.add_argument(
            "--verify-diagnostics",
            default=False,
            action="store_true",
            help="check the diagnostics against the '// expected-error {{...}}' "
            "(and -warning, -note, -remark, -re, @+N, @-N, @above, @below) comments "
            "of the input, like mlir-opt; exit status 0 if they match exactly",
        )

    def register_all_targets(self):
        super().register_all_targets()
        # Ours replace xDSL's `llvm` target, which cannot print GPU code (toolchain.md).
        for name in GPU_OUTPUTS:
            self.available_targets[name] = _gpu_output_target

    def _check_arguments(self) -> None:
        args = self.args
        if args.gpu_target is not None and args.gpu_target not in TARGETS:
            raise UsageError(
                f"unknown GPU target --target '{args.gpu_target}'; expected one of "
                + ", ".join(TARGETS)
            )
        if args.target == "cubin" and args.output_file in (None, "-"):
            raise UsageError("-t cubin writes a binary: give an output file with -o FILE.cubin")
        if args.target == "cubin" and args.split_input_file:
            raise UsageError("-t cubin compiles one module: drop --split-input-file")
        try:
            target = parse_spec(args.target).name
        except ArgSpecParseError as exc:
            raise UsageError(f"invalid target -t '{args.target}': {_last_line(exc)}") from None
        if target not in self.available_targets:
            raise UsageError(
                f"unknown target -t '{target}'; available targets: "
                + ", ".join(sorted(self.available_targets))
            )
        if args.frontend not in (None, "mlir"):
            raise UsageError(
                f"unsupported frontend -f '{args.frontend}': {TOOL_NAME} reads MLIR text "
                "only (leave -f out)"
            )
        for flag in ("shrink", "parsing_diagnostics"):
            if getattr(args, flag):
                raise UsageError(
                    f"--{flag.replace('_', '-')} is not supported by {TOOL_NAME} "
                    "(use --verify-diagnostics)"
                )

    def setup_pipeline(self):
        """Build the -p pipeline; a bad spec is a UsageError that says how to fix it."""
        spec = ",".join(p for p in self.args.passes if p)
        if not spec and self.args.target in GPU_OUTPUTS:
            try:
                from copy_dialect.passes.pipeline import lowering_passes
            except Exception as exc:
                raise ToolError(
                    f"cannot load the lowering passes: {type(exc).__name__}: {exc}"
                ) from exc
            self.pipeline = PassPipeline(tuple(lowering_passes(self.args.gpu_target or "")))
            if self.args.target in ("ptx", "cubin"):
                # LLVM's worker process starts while the input is parsed and lowered.
                from copy_dialect.passes import backend

                backend.start_worker()
            return
        try:
            pass_specs = tuple(parse_pipeline(spec))
        except ArgSpecParseError as exc:
            raise UsageError(
                f"invalid pass pipeline -p '{spec}': {_pipeline_error(exc)}; expected "
                "'pass-a,pass-b{option=value other-option=value}'"
            ) from None
        passes: list[ModulePass] = []
        for pass_spec in pass_specs:
            if pass_spec.name not in self.available_passes:
                raise UsageError(self._unknown_pass_message(pass_spec.name, spec))
            try:
                pass_type = self.available_passes[pass_spec.name]()
            except Exception as exc:
                raise ToolError(
                    f"cannot load pass '{pass_spec.name}': {type(exc).__name__}: {exc}"
                ) from exc
            try:
                passes.append(pass_type.from_pass_spec(pass_spec))
            except Exception as exc:
                raise UsageError(
                    f"invalid options for pass '{pass_spec.name}' in -p '{spec}': {exc}; "
                    + _describe_pass_options(pass_type)
                ) from None
        self.pipeline = PassPipeline(tuple(passes))

    def _unknown_pass_message(self, name: str, spec: str) -> str:
        message = f"unknown pass '{name}' in -p '{spec}'"
        if close := difflib.get_close_matches(name, self.available_passes, n=3):
            message += "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
        return message + "; available passes: " + ", ".join(sorted(self.available_passes))

    # Running.

    def run(self) -> int:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Process the input; return the exit status (0 success, 1 errors)."""
        name, data = self._read_input()
        output_path = self._checked_output_path()
        try:
            source = decode_source(name, data)
        except InvalidInputEncoding as exc:
            sys.stderr.write(render_all([exc.diagnostic], exc.source))
            return 1
        failed = False
        outputs: list[str] = []
        for chunk in split_chunks(source, self.args.split_input_file):
            result = self.process_chunk(source, chunk)
            if self.args.verify_diagnostics:
                problems = self._check_chunk_diagnostics(source, chunk, result)
                sys.stderr.write(render_all(problems, source))
                failed |= bool(problems)
            else:
                sys.stderr.write(render_all(result.diagnostics, source))
                failed |= result.has_errors
            # Like mlir-opt, a chunk with errors prints nothing (but keeps its separator).
            outputs.append(result.output or "")
        text = (SPLIT_MARKER + "\n").join(outputs)
        binary = getattr(self, "binary_output", None)
        if binary is not None and output_path is not None and not failed:
            cubin, abi = binary
            _write_file_atomically(output_path, cubin)
            _write_file_atomically(output_path + ".json", abi)
        elif output_path is None:
            _write_stdout(text)
        elif not failed:
            _write_file_atomically(output_path, text)
        return 1 if failed else 0

    def _check_chunk_diagnostics(
        self, source: SourceFile, chunk: Chunk, result: ChunkResult
    ) -> list[Diagnostic]:
        expectations, malformed = parse_expectations(source, chunk)
        return malformed + check_expectations(result.diagnostics, expectations, source.name)

    def process_chunk(self, source: SourceFile, chunk: Chunk) -> ChunkResult:
        """Parse, verify, run the passes (verifying after each) and print one chunk."""
        result = ChunkResult()
        module = self._parse(source, chunk, result.diagnostics)
        if module is None:
            return result
        fallback = op_location(module, SourceLocation(source.name, chunk.first_line, 1))
        if self.args.gpu_target is not None:
            # --target overrides the IR's target everywhere, so the verifier checks the
            # target the code is compiled for.
            from copy_dialect.passes.pipeline import retarget

            retarget(module, self.args.gpu_target)
        stages: list[tuple[str, Callable[[], list[Diagnostic]]]] = []
        if not self.args.disable_verify:
            stages.append(("verifying the input", lambda: self._verify(module, fallback, None)))
        for index, pass_ in enumerate(self.pipeline.passes):
            stages.append(
                (f"running pass '{pass_.name}'", self._pass_stage(pass_, index, module, fallback))
            )
        for stage, action in stages:
            result.diagnostics.extend(_guard_recursion(stage, fallback, action))
            if result.has_errors:
                return result
        output: list[str] = []

        def emit() -> list[Diagnostic]:
            try:
                output.append(self.output_resulting_program(module))
            except DiagnosticException as exc:
                loc = _exception_location(exc, fallback)
                return [Diagnostic("error", loc, f"cannot print the result: {exc}")]
            except Exception as exc:
                return _internal_error(f"target '{self.args.target}'", exc, fallback)
            return []

        result.diagnostics.extend(_guard_recursion("printing the result", fallback, emit))
        if output and not result.has_errors:
            result.output = output[0]
        return result

    def output_resulting_program(self, prog: ModuleOp) -> str:
        fmt = self.args.target
        if fmt not in GPU_OUTPUTS:
            return super().output_resulting_program(prog)
        from copy_dialect.passes import backend, translate_llvm
        from copy_dialect.passes.abi import kernel_abis
        from copy_dialect.passes.pipeline import module_target

        target = module_target(prog, self.args.gpu_target)
        if target is None:
            raise DiagnosticException(
                f"-t {fmt} needs a GPU target: give the module copy.target = "
                '#copy.target<"sm_90a"> or pass --target sm_90a'
            )
        llvm_ir = translate_llvm.translate_module(prog)
        if fmt == "llvm":
            return llvm_ir
        ptx = backend.compile_ptx(llvm_ir, target)
        if fmt == "ptx":
            return ptx
        abi = kernel_abis(prog, target)
        self.binary_output = (backend.compile_cubin(ptx, target), abi.to_json())
        return ""

    def _parse(
        self, source: SourceFile, chunk: Chunk, diagnostics: list[Diagnostic]
    ) -> ModuleOp | None:
        parser: LocatingParser | None = None

        def here() -> SourceLocation:  # where the parser stopped
            if parser is None:
                return chunk_location(source, chunk, 0)
            return parser.current_location()

        try:
            parser = LocatingParser(self.ctx, source, chunk)  # lexes the first token
            return parser.parse_module(not self.args.no_implicit_module)
        except InternalParseError as exc:
            loc = chunk_location(source, chunk, exc.span.start)
            diagnostics.extend(_internal_error(exc.where, exc.cause, loc))
        except ParseError as exc:
            diagnostics.extend(_parse_error_diagnostics(exc, source, chunk, here()))
        except RecursionError:
            message = NESTING_TOO_DEEP.format(limit=RECURSION_LIMIT, stage="parsing")
            diagnostics.append(Diagnostic("error", here(), message))
        except (DiagnosticException, ValueError) as exc:
            diagnostics.append(Diagnostic("error", here(), str(exc)))
        except Exception as exc:
            diagnostics.extend(_internal_error("parser", exc, here()))
        return None

    def _verify(
        self, module: ModuleOp, fallback: SourceLocation, after_pass: str | None
    ) -> list[Diagnostic]:
        """Verify op by op, nested ops first; one error (plus notes) per failing op."""
        diagnostics: list[Diagnostic] = []
        for op in post_order(module):
            loc = op_location(op, fallback)
            try:
                verify_op(op)
            except (RecursionError, MemoryError):
                raise
            except DiagnosticException as exc:
                diagnostics.append(Diagnostic("error", loc, f"'{op.name}' op {exc}"))
                note = getattr(exc, "note", None)
                if isinstance(note, str) and note:
                    diagnostics.append(Diagnostic("note", loc, note))
                if after_pass is not None:
                    diagnostics.append(
                        Diagnostic("note", loc, f"the op was left invalid by pass '{after_pass}'")
                    )
            except Exception as exc:
                diagnostics.extend(_internal_error(f"verifier of '{op.name}'", exc, loc))
        if diagnostics:
            return diagnostics
        # As in mlir-opt, dominance is checked once every op verified.
        for use in non_dominating_uses(module):
            loc = op_location(use.user, fallback)
            definer = use.definer
            diagnostics.append(Diagnostic("error", loc, use.message))
            where = loc if definer is None else op_location(definer, fallback)
            diagnostics.append(Diagnostic("note", where, use.defined_here))
            diagnostics.append(Diagnostic("note", loc, use.fix))
            if after_pass is not None:
                diagnostics.append(
                    Diagnostic("note", loc, f"the op was left invalid by pass '{after_pass}'")
                )
        return diagnostics

    def _pass_stage(
        self, pass_: ModulePass, index: int, module: ModuleOp, fallback: SourceLocation
    ) -> Callable[[], list[Diagnostic]]:
        def run_pass() -> list[Diagnostic]:
            start = time.perf_counter()
            try:
                pass_.apply(self.ctx, module)
            except (RecursionError, MemoryError):
                raise
            except DiagnosticException as exc:
                loc = _exception_location(exc, fallback)
                diagnostics = [Diagnostic("error", loc, f"pass '{pass_.name}' failed: {exc}")]
                note = getattr(exc, "note", None)
                if isinstance(note, str) and note:
                    diagnostics.append(Diagnostic("note", loc, note))
                return diagnostics
            except Exception as exc:
                return _internal_error(f"pass '{pass_.name}'", exc, fallback)
            if self.args.time_passes:
                print(
                    f"Pass {pass_.name} took {time.perf_counter() - start} seconds", file=sys.stderr
                )
            if self.args.print_between_passes and index + 1 < len(self.pipeline.passes):
                dump = Printer(print_generic_format=self.args.print_op_generic, stream=sys.stderr)
                print(f"// -----// IR Dump After {pass_.name} //----- //", file=sys.stderr)
                dump.print_op(module)
                print(file=sys.stderr)
            if self.args.disable_verify:
                return []
            return self._verify(module, fallback, pass_.name)

        return run_pass

    # Input and output files.

    def _read_input(self) -> tuple[str, bytes]:
        path: str | None = self.args.input_file
        if path in (None, "-"):
            return STDIN_NAME, sys.stdin.buffer.read()
        assert path is not None
        if os.path.isdir(path):
            raise UsageError(
                f"input '{path}' is a directory; expected an MLIR file (or '-' for stdin)"
            )
        try:
            with open(path, "rb") as f:
                return path, f.read()
        except OSError as exc:
            reason = (exc.strerror or str(exc)).lower()
            raise UsageError(
                f"cannot read input file '{path}': {reason} (check the path and its "
                "permissions, or use '-' to read stdin)"
            ) from None

    def _checked_output_path(self) -> str | None:
        """The -o path (None for stdout), refused early if it cannot or must not be written."""
        out: str | None = self.args.output_file
        if out in (None, "-"):
            return None
        assert out is not None
        inp: str | None = self.args.input_file
        if inp not in (None, "-") and os.path.exists(out):
            assert inp is not None
            if os.path.samefile(inp, out):
                raise UsageError(
                    f"output file '{out}' is the input file; refusing to overwrite the "
                    "input (choose another -o path)"
                )
        if os.path.isdir(out):
            raise UsageError(f"cannot write output file '{out}': it is a directory")
        parent = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(parent):
            raise UsageError(
                f"cannot write output file '{out}': directory '{parent}' does not exist"
            )
        if not os.access(parent, os.W_OK) or (os.path.exists(out) and not os.access(out, os.W_OK)):
            raise UsageError(f"cannot write output file '{out}': permission denied")
        return out


# --- helpers -------------------------------------------------------------------------


def _exception_location(exc: BaseException, fallback: SourceLocation) -> SourceLocation:
    """Where a pass or the translation failed: at the op the exception names, if any."""
    op = getattr(exc, "op", None)
    return op_location(op, fallback) if isinstance(op, Operation) else fallback


def _internal_error(where: str, exc: BaseException, loc: SourceLocation) -> list[Diagnostic]:
    """An error and a note for an unexpected Python exception (a bug, not bad input)."""
    if os.environ.get(TRACEBACK_ENV) == "1":
        traceback.print_exception(exc, file=sys.stderr)
    return [
        Diagnostic("error", loc, f"internal error in {where}: {type(exc).__name__}: {exc}"),
        Diagnostic("note", loc, INTERNAL_ERROR_NOTE),
    ]


def _guard_recursion(
    stage: str, loc: SourceLocation, action: Callable[[], list[Diagnostic]]
) -> list[Diagnostic]:
    try:
        return action()
    except RecursionError:
        message = NESTING_TOO_DEEP.format(limit=RECURSION_LIMIT, stage=stage)
        return [Diagnostic("error", loc, message)]


def _parse_error_diagnostics(
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


def _pipeline_error(exc: ArgSpecParseError) -> str:
    """'message at column N' from xDSL's multi-line pipeline syntax error."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    message = lines[-1].strip() if lines else "syntax error"
    column = lines[1].rsplit(":", 1)[-1] if len(lines) > 1 else "?"
    return f"{message} at column {column}"


def _last_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def _describe_pass_options(pass_type: type[ModulePass]) -> str:
    infos = get_pass_option_infos(pass_type)
    if not infos:
        return f"pass '{pass_type.name}' takes no options"
    options = ", ".join(
        f"{info.name.replace('_', '-')}: {info.expected_type}"
        + (f" = {info.default_value}" if info.default_value is not None else "")
        for info in infos
    )
    return f"options of '{pass_type.name}': {options}"


def _write_stdout(text: str) -> None:
    stream = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None
    if stream is None:
        sys.stdout.write(text)
    else:
        stream.write(text.encode("utf-8"))
    sys.stdout.flush()


def _write_file_atomically(path: str, text: str | bytes) -> None:
    """Write `path` through a temporary file and a rename, so it is never half-written.

    Special files (/dev/null, pipes) are written directly.
    """
    target = os.path.realpath(path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    if os.path.exists(target) and not os.path.isfile(target):
        with open(target, "wb") as f:
            f.write(data)
        return
    directory = os.path.dirname(target)
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        mode = os.stat(target).st_mode & 0o7777 if os.path.exists(target) else _default_mode()
        os.chmod(temp, mode)
        os.replace(temp, target)
    except OSError as exc:
        if os.path.exists(temp):
            os.unlink(temp)
        raise ToolError(f"cannot write output file '{path}': {exc.strerror or exc}") from None


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


# --- entry point ---------------------------------------------------------------------


def _main(argv: Sequence[str] | None, tool: type[CopyOptMain]) -> int:
    try:
        return tool(argv).run()
    except ToolError as exc:
        print(f"{TOOL_NAME}: error: {exc}", file=sys.stderr)
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except MemoryError:
        print(f"{TOOL_NAME}: error: out of memory", file=sys.stderr)
    except RecursionError:
        print(f"{TOOL_NAME}: error: nesting too deep", file=sys.stderr)
    except Exception as exc:
        if os.environ.get(TRACEBACK_ENV) == "1":
            traceback.print_exception(exc, file=sys.stderr)
        print(
            f"{TOOL_NAME}: error: internal error: {type(exc).__name__}: {exc}\n"
            f"{TOOL_NAME}: note: {INTERNAL_ERROR_NOTE}",
            file=sys.stderr,
        )
    return 1


def main(argv: Sequence[str] | None = None, tool: type[CopyOptMain] = CopyOptMain) -> int:
    """Run copy-opt (or a subclass, `tool`); return the exit status.

    The work runs in a thread with a large stack and a raised recursion limit, so that
    deeply nested input gives a 'nesting too deep' diagnostic instead of a crash.
    """
    status: list[int] = []

    def work() -> None:
        sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
        status.append(_main(argv, tool))

    try:
        previous = threading.stack_size(THREAD_STACK_BYTES)
    except (ValueError, RuntimeError):  # platform without settable stacks
        return _main(argv, tool)
    try:
        worker = threading.Thread(target=work, name=TOOL_NAME, daemon=True)
        worker.start()
    finally:
        threading.stack_size(previous)
    try:
        worker.join()
    except KeyboardInterrupt:
        return 130
    return status[0] if status else 1


if __name__ == "__main__":
    sys.exit(main())
