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
  the input file;
* mlir-opt's pipeline syntax (`--pass-pipeline='builtin.module(a,func.func(b{x=1}))'`, also
  with `-p`), `--list-passes`, `--mlir-print-ir-before/after(-all)`, `--mlir-timing` and
  mlir-opt's spellings of the printing flags.

Set COPY_OPT_TRACEBACK=1 to also get the Python traceback of an internal error.

This module is the driver and the entry point; its parts: `opt_arguments` (the command
line and the pass pipeline), `opt_pipeline` (the pipeline syntax, nested pipelines),
`opt_instrument` (IR dumps, the time report), `opt_passes` (`--list-passes`, the passes in
`--help`), `opt_parser` (parsing with locations), `opt_verify` (verification diagnostics),
`opt_output` (input, `-o`, `-t llvm|ptx|cubin`), `opt_errors` (the tool's own errors) and
`diagnostics` (rendering, `--verify-diagnostics`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException
from xdsl.xdsl_opt_main import xDSLOptMain

from copy_tools import opt_interpret
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
from copy_tools.opt_arguments import ArgumentParser, add_arguments, build_pipeline, check_arguments
from copy_tools.opt_errors import (
    INTERNAL_ERROR_NOTE,
    RECURSION_LIMIT,
    TOOL_NAME,
    TRACEBACK_ENV,
    ToolError,
    guard_recursion,
    internal_error,
)
from copy_tools.opt_instrument import IRPrinting, TimerKey, Timing, display_name
from copy_tools.opt_output import (
    GPU_OUTPUTS,
    Binary,
    checked_output_path,
    gpu_output,
    gpu_output_target,
    read_input,
    write_file_atomically,
    write_stdout,
)
from copy_tools.opt_parser import guarded_dialect_factory, parse_chunk
from copy_tools.opt_passes import help_epilog, list_passes
from copy_tools.opt_pipeline import (
    NestNode,
    Node,
    PassNode,
    Pipeline,
    anchored_ops,
    apply_on,
    leaves,
    map_passes,
)
from copy_tools.opt_verify import exception_location, op_location, verify_diagnostics
from copy_tools.universe import dialect_factories

LEGALIZE = "copy-legalize"
"""The pass whose target --target names (copy_tools.universe: passes.legalize)."""

THREAD_STACK_BYTES = 512 * 1024 * 1024
"""C stack of the worker thread, large enough that RECURSION_LIMIT frames fit."""


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
        self.binary_output: Binary | None = None
        """What -t cubin writes instead of text (set while printing the result)."""
        try:
            self.register_all_dialects()
            self.register_all_frontends()
            self.register_all_passes()
            self.register_all_targets()
        except Exception as exc:
            raise ToolError(
                f"cannot load the registered xDSL dialects and passes: {type(exc).__name__}: {exc}"
            ) from exc
        arg_parser = ArgumentParser(
            prog=TOOL_NAME,
            description="mlir-opt-style driver for the copy dialect",
            conflict_handler="resolve",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        arg_parser.epilog_factory = lambda: help_epilog(self.available_passes)
        self.register_all_arguments(arg_parser)
        self.args = arg_parser.parse_args(args=args)
        if self.args.list_passes:
            sys.stdout.write(list_passes(self.available_passes))
            raise SystemExit(0)
        check_arguments(self.args, self.available_targets, self.available_passes)
        opt_interpret.check_arguments(self.args)
        self.ctx.allow_unregistered = self.args.allow_unregistered_dialect
        self.timing = Timing() if self.args.mlir_timing else None
        self.printing = IRPrinting(
            before=frozenset(self.args.mlir_print_ir_before),
            after=frozenset(self.args.mlir_print_ir_after),
            before_all=self.args.mlir_print_ir_before_all,
            after_all=self.args.mlir_print_ir_after_all,
            module_scope=self.args.mlir_print_ir_module_scope,
            generic=self.args.print_op_generic,
            debuginfo=self.args.print_debuginfo,
        )
        self.setup_pipeline()

    # Registration, arguments and the pipeline.

    def register_all_dialects(self):
        for name, factory in dialect_factories():
            self.ctx.register_dialect(name, guarded_dialect_factory(name, factory))

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        add_arguments(arg_parser)
        opt_interpret.add_arguments(arg_parser)

    def register_all_targets(self):
        super().register_all_targets()
        # Ours replace xDSL's `llvm` target, which cannot print GPU code (docs/hardware.md).
        for name in GPU_OUTPUTS:
            self.available_targets[name] = gpu_output_target

    def setup_pipeline(self):
        self.pipeline: Pipeline = build_pipeline(self.args, self.available_passes, self._is_op_name)
        target = self.args.gpu_target
        if target is not None and self._legalizes():
            # --target names what copy-legalize rewrites for (when its own option does not):
            # the input is verified for the target it was written for.
            def with_target(p: ModulePass) -> ModulePass:
                if p.name == LEGALIZE and not getattr(p, "target", ""):
                    return replace(p, target=target)  # type: ignore[type-var]
                return p

            self.pipeline = Pipeline(map_passes(self.pipeline.nodes, with_target))

    def _legalizes(self) -> bool:
        """Whether the pipeline runs copy-legalize (then --target is its target, and the
        input is not retargeted before it is verified)."""
        return any(p.name == LEGALIZE for p in self.pipeline.passes)

    def _is_op_name(self, name: str) -> bool:
        try:
            return self.ctx.get_optional_op(name) is not None
        except Exception:  # a dialect that fails to load: not an anchor
            return False

    # Running.

    def run(self) -> int:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Process the input; return the exit status (0 success, 1 errors)."""
        name, data = read_input(self.args.input_file)
        output_path = checked_output_path(self.args.output_file, self.args.input_file)
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
        if self.timing is not None:
            sys.stderr.write(self.timing.report())
        text = (SPLIT_MARKER + "\n").join(outputs)
        binary = self.binary_output
        if binary is not None and output_path is not None and not failed:
            cubin, abi = binary
            write_file_atomically(output_path, cubin)
            write_file_atomically(output_path + ".json", abi)
        elif output_path is None:
            write_stdout(text)
        elif not failed:
            write_file_atomically(output_path, text)
        return 1 if failed else 0

    def _check_chunk_diagnostics(
        self, source: SourceFile, chunk: Chunk, result: ChunkResult
    ) -> list[Diagnostic]:
        expectations, malformed = parse_expectations(source, chunk)
        return malformed + check_expectations(result.diagnostics, expectations, source.name)

    def process_chunk(self, source: SourceFile, chunk: Chunk) -> ChunkResult:
        """Parse, verify, run the passes (verifying after each) and print one chunk."""
        result = ChunkResult()
        implicit_module = not self.args.no_implicit_module
        with self._timed((("parser", "Parser"),)):
            module = parse_chunk(self.ctx, source, chunk, implicit_module, result.diagnostics)
        if module is None:
            return result
        fallback = op_location(module, SourceLocation(source.name, chunk.first_line, 1))
        if self.args.gpu_target is not None and not self._legalizes():
            # --target overrides the IR's target everywhere, so the verifier checks the
            # target the code is compiled for.
            from passes.pipeline import retarget

            retarget(module, self.args.gpu_target)
        if not self.args.disable_verify:
            verify_input = lambda: self._verify(module, fallback, None, ())  # noqa: E731
            result.diagnostics.extend(
                guard_recursion("verifying the input", fallback, verify_input)
            )
            if result.has_errors:
                return result
        self._fallback = fallback
        self._last_leaf = next(reversed(list(leaves(self.pipeline.nodes))), None)
        result.diagnostics.extend(self._run_nodes(self.pipeline.nodes, [module], module, ()))
        if result.has_errors:
            return result
        if self.args.interpret:
            diagnostics, report = opt_interpret.interpret(module, self.args, fallback)
            result.diagnostics.extend(diagnostics)
            result.output = report
            return result
        output: list[str] = []

        def emit() -> list[Diagnostic]:
            try:
                with self._timed((("output", "Output"),)):
                    output.append(self.output_resulting_program(module))
            except DiagnosticException as exc:
                loc = exception_location(exc, fallback)
                return [Diagnostic("error", loc, f"cannot print the result: {exc}")]
            except Exception as exc:
                return internal_error(f"target '{self.args.target}'", exc, fallback)
            return []

        result.diagnostics.extend(guard_recursion("printing the result", fallback, emit))
        if output and not result.has_errors:
            result.output = output[0]
        return result

    # The pass pipeline.

    def _timed(self, path: tuple[TimerKey, ...]):
        return self.timing.scope(path) if self.timing is not None else contextlib.nullcontext()

    def _verify(
        self,
        module: ModuleOp,
        fallback: SourceLocation,
        after_pass: str | None,
        path: tuple[TimerKey, ...],
    ) -> list[Diagnostic]:
        with self._timed((*path, ("verifier", "Verifier"))):
            return verify_diagnostics(module, fallback, after_pass, self.args.verify_protocol)

    def _run_nodes(
        self,
        nodes: tuple[Node, ...],
        ops: list[Operation],
        module: ModuleOp,
        path: tuple[TimerKey, ...],
    ) -> list[Diagnostic]:
        """Run `nodes` on each of `ops` (the module, or the ops a nested pipeline is anchored
        on); stop at the first pass with an error."""
        for node in nodes:
            if isinstance(node, NestNode):
                key = (*path, (node, f"'{node.anchor}' Pipeline"))
                with self._timed(key):
                    targets = anchored_ops(ops, node.anchor)
                    diagnostics = self._run_nodes(node.children, targets, module, key)
            elif node.stages:  # a pipeline pass: its stages, printed when it is named
                key = (*path, (node, display_name(node.pass_)))
                for op in ops:
                    self.printing.print_before(node.pass_, op, leaf=False)
                with self._timed(key):
                    diagnostics = self._run_nodes(node.stages, ops, module, key)
                if not diagnostics:
                    for op in ops:
                        self.printing.print_after(node.pass_, op, leaf=False)
            else:
                diagnostics = self._run_leaf(node, ops, module, path)
            if any(d.severity == "error" for d in diagnostics):
                return diagnostics
        return []

    def _run_leaf(
        self, node: PassNode, ops: list[Operation], module: ModuleOp, path: tuple[TimerKey, ...]
    ) -> list[Diagnostic]:
        pass_ = node.pass_
        fallback = self._fallback

        def run_pass() -> list[Diagnostic]:
            start = time.perf_counter()
            if not ops:  # a nested pipeline whose op is not there: nothing to run or verify
                with self._timed((*path, (node, display_name(pass_)))):
                    return []
            for op in ops:
                self.printing.print_before(pass_, op)
                with self._timed((*path, (node, display_name(pass_)))):
                    diagnostics = self._apply(pass_, op, op_location(op, fallback))
                if diagnostics:
                    self.printing.print_after(pass_, op, failed=True)
                    return diagnostics
                self.printing.print_after(pass_, op)
            if self.args.time_passes:
                print(
                    f"Pass {pass_.name} took {time.perf_counter() - start} seconds", file=sys.stderr
                )
            if self.args.print_between_passes and node is not self._last_leaf:
                self.printing.print_between(pass_, module)
            if self.args.disable_verify:
                return []
            return self._verify(module, fallback, pass_.name, path)

        return guard_recursion(f"running pass '{pass_.name}'", fallback, run_pass)

    def _apply(self, pass_: ModulePass, op: Operation, loc: SourceLocation) -> list[Diagnostic]:
        try:
            apply_on(pass_, self.ctx, op)
        except (RecursionError, MemoryError):
            raise
        except DiagnosticException as exc:
            loc = exception_location(exc, loc)
            diagnostics = [Diagnostic("error", loc, f"pass '{pass_.name}' failed: {exc}")]
            note = getattr(exc, "note", None)
            if isinstance(note, str) and note:
                diagnostics.append(Diagnostic("note", loc, note))
            return diagnostics
        except Exception as exc:
            return internal_error(f"pass '{pass_.name}'", exc, loc)
        return []

    def output_resulting_program(self, prog: ModuleOp) -> str:
        if self.args.target not in GPU_OUTPUTS:
            return super().output_resulting_program(prog)
        text, self.binary_output = gpu_output(
            prog, self.args.target, self.args.gpu_target, self.args.gpu_arch
        )
        return text


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
