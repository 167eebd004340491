"""copy-opt's command line: its arguments on top of xdsl-opt's (mlir-opt's spellings among
them), their checks, and the `-p`/`--pass-pipeline` pipeline built from its text (or the
default lowering for GPU outputs)."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
from collections.abc import Callable, Collection, Container, Sequence
from typing import Any, NoReturn

from xdsl.passes import ModulePass, get_pass_option_infos
from xdsl.utils.arg_spec import ArgSpec, parse_spec
from xdsl.utils.exceptions import ArgSpecParseError

from copy_tools.opt_errors import TOOL_NAME, ToolError, UsageError
from copy_tools.opt_output import GPU_OUTPUTS
from copy_tools.opt_pipeline import (
    ANY_OP,
    ROOT_ANCHOR,
    NestNode,
    NestText,
    Node,
    PassText,
    Pipeline,
    PipelineSyntaxError,
    map_passes,
    parse_pipeline_text,
    pass_node,
)
from facts.target import TARGETS, UnknownTarget


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a bad command line raises UsageError (exit status 1, not 2)."""

    epilog_factory: Callable[[], str] | None = None
    """Makes the epilog when --help is printed (it imports the passes to read their
    summaries, which a run that prints no help need not do)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{TOOL_NAME} --help')")

    def format_help(self) -> str:
        if self.epilog is None and self.epilog_factory is not None:
            self.epilog = self.epilog_factory()
        return super().format_help()


def add_arguments(arg_parser: argparse.ArgumentParser) -> None:
    """copy-opt's arguments, added to (or replacing) xdsl-opt's."""
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
        "--pass-pipeline",
        dest="passes",
        action=PipelineAction,
        default=[],
        metavar="PIPELINE",
        help="the pass pipeline: xDSL's 'pass-a,pass-b{option=value other=value}' or MLIR's "
        "'builtin.module(pass-a,func.func(pass-b{option=value}))' (a nested pipeline runs on "
        "each op of its name directly inside the enclosing op); repeated options run one "
        "after the other. --list-passes lists the passes and their options",
    )
    arg_parser.set_defaults(pipeline_flags=[])
    arg_parser.add_argument(
        "--list-passes",
        default=False,
        action="store_true",
        help="list the passes: the copy dialect's with their summaries and options, then "
        "xDSL's others; then exit",
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
        help="GPU target (sm_80, sm_90a, sm_100a, ...), overriding the module's copy.target "
        "everywhere: the verifier checks the IR against it, so it also changes what -t mlir "
        "accepts, and -t llvm|ptx|cubin compile for it",
    )
    arg_parser.add_argument(
        "--arch",
        dest="gpu_arch",
        default=None,
        help="with -t cubin: the GPU to assemble the target's PTX for, where it is a later "
        "one (--target sm_80 --arch sm_90: sm_80 code that runs on an H100/H200); the ABI "
        "file records it",
    )
    arg_parser.add_argument(
        "--no-verify-protocol",
        dest="verify_protocol",
        default=True,
        action="store_false",
        help="verify each op and SSA dominance only, not the copy protocol of whole "
        "kernels (rules P1-P12): for op fragments that are not complete kernels",
    )
    arg_parser.add_argument(
        "--debug-guards",
        default=False,
        action="store_true",
        help="device-side checks of what the verifier cannot prove (dynamic TMA coordinates "
        "and barrier indices) and bounded barrier waits, each printing its rule id and "
        "trapping when it fails: sets convert-copy-to-nvvm's debug-guards option wherever "
        "the pipeline runs it (the default lowering of -t llvm|ptx|cubin included)",
    )
    _add_printing_arguments(arg_parser)
    arg_parser.add_argument(
        "--verify-diagnostics",
        default=False,
        action="store_true",
        help="check the diagnostics against the '// expected-error {{...}}' "
        "(and -warning, -note, -remark, -re, @+N, @-N, @above, @below) comments "
        "of the input, like mlir-opt; exit status 0 if they match exactly",
    )


class PipelineAction(argparse.Action):
    """-p and --pass-pipeline: each appends its pipeline; the spelling is kept for messages."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        namespace.passes = [*getattr(namespace, "passes", []), str(values)]
        flag = "--pass-pipeline" if option_string == "--pass-pipeline" else "-p"
        namespace.pipeline_flags = [*getattr(namespace, "pipeline_flags", []), flag]


def _add_printing_arguments(arg_parser: argparse.ArgumentParser) -> None:
    """mlir-opt's IR printing and timing flags, and its spellings of xdsl-opt's."""
    arg_parser.add_argument(
        "--mlir-print-ir-before",
        action="append",
        default=[],
        metavar="PASS[,PASS...]",
        help="print the IR (on stderr) before each run of these passes",
    )
    arg_parser.add_argument(
        "--mlir-print-ir-after",
        action="append",
        default=[],
        metavar="PASS[,PASS...]",
        help="print the IR (on stderr) after each run of these passes (a pipeline pass, "
        "lower-copy-to-llvm: after its last stage)",
    )
    arg_parser.add_argument(
        "--mlir-print-ir-before-all",
        default=False,
        action="store_true",
        help="print the IR (on stderr) before every pass",
    )
    arg_parser.add_argument(
        "--mlir-print-ir-after-all",
        default=False,
        action="store_true",
        help="print the IR (on stderr) after every pass (each stage of a pipeline pass)",
    )
    arg_parser.add_argument(
        "--mlir-print-ir-module-scope",
        default=False,
        action="store_true",
        help="print the whole module, not only the op a nested pass ran on",
    )
    arg_parser.add_argument(
        "--print-between-passes",
        default=False,
        action="store_true",
        help="print the IR (on stderr) between each two passes, the stages of "
        "lower-copy-to-llvm included",
    )
    arg_parser.add_argument(
        "--time-passes",
        default=False,
        action="store_true",
        help="print one 'Pass NAME took SECONDS seconds' line per pass (xdsl-opt's; see also "
        "--mlir-timing)",
    )
    arg_parser.add_argument(
        "--disable-verify",
        default=False,
        action="store_true",
        help="verify neither the input nor the IR after each pass",
    )
    arg_parser.add_argument(
        "--mlir-timing",
        default=False,
        action="store_true",
        help="print mlir-opt's execution time report (wall time of parsing, verifying, "
        "each pass and printing) on stderr",
    )
    arg_parser.add_argument(
        "--print-debuginfo",
        "--mlir-print-debuginfo",
        dest="print_debuginfo",
        default=False,
        action="store_true",
        help="print each op's location, loc(\"FILE\":LINE:COL), inline: xDSL's printer has no "
        "#loc aliases, and block arguments print loc(unknown) (copy-opt's parser does not "
        "locate them)",
    )
    arg_parser.add_argument(
        "--print-op-generic",
        "--mlir-print-op-generic",
        dest="print_op_generic",
        default=False,
        action="store_true",
        help="print ops in the generic form",
    )
    # xdsl-opt's flags that copy-opt rejects (check_arguments) stay out of --help.
    for flag in ("--shrink", "--parsing-diagnostics"):
        arg_parser.add_argument(flag, default=False, action="store_true", help=argparse.SUPPRESS)


def check_arguments(
    args: argparse.Namespace,
    available_targets: Container[str],
    available_passes: Collection[str] = (),
) -> None:
    """A UsageError for a command line copy-opt cannot run."""
    for flag in ("mlir_print_ir_before", "mlir_print_ir_after"):
        names = [n.strip() for value in getattr(args, flag) for n in value.split(",")]
        setattr(args, flag, [n for n in names if n])
        for name in getattr(args, flag):
            if name not in available_passes:
                option = "--" + flag.replace("_", "-")
                message = f"unknown pass '{name}' in {option}={name}"
                if close := difflib.get_close_matches(name, available_passes, n=3):
                    message += "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
                raise UsageError(message + f" ({TOOL_NAME} --list-passes lists the passes)")
    if args.gpu_target is not None and args.gpu_target not in TARGETS:
        raise UsageError(f"--target: {UnknownTarget(args.gpu_target)}")
    if args.gpu_arch is not None and args.target != "cubin":
        raise UsageError(f"--arch {args.gpu_arch} names the cubin's GPU: use it with -t cubin")
    if args.gpu_arch is not None and args.gpu_arch not in TARGETS:
        raise UsageError(f"--arch: {UnknownTarget(args.gpu_arch, 'GPU arch')}")
    if args.target == "cubin" and args.output_file in (None, "-"):
        raise UsageError("-t cubin writes a binary: give an output file with -o FILE.cubin")
    if args.target == "cubin" and args.split_input_file:
        raise UsageError("-t cubin compiles one module: drop --split-input-file")
    try:
        target = parse_spec(args.target).name
    except ArgSpecParseError as exc:
        raise UsageError(f"invalid target -t '{args.target}': {_last_line(exc)}") from None
    if target not in available_targets:
        raise UsageError(
            f"unknown target -t '{target}'; available targets: "
            + ", ".join(sorted(available_targets))
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


def build_pipeline(
    args: argparse.Namespace,
    available_passes: dict[str, Callable[[], type[ModulePass]]],
    is_op_name: Callable[[str], bool] = lambda name: True,
) -> Pipeline:
    """The -p/--pass-pipeline pipeline; a bad one is a UsageError that says how to fix it.
    Without one, a GPU output (-t llvm|ptx|cubin) gets the default lowering.
    `is_op_name`: whether a nested pipeline may be anchored on an op name."""
    flag = pipeline_flag(args)
    spec = ",".join(p for p in args.passes if p.strip())
    if not spec and args.target in GPU_OUTPUTS:
        try:
            from passes.pipeline import lowering_passes
        except Exception as exc:
            raise ToolError(
                f"cannot load the lowering passes: {type(exc).__name__}: {exc}"
            ) from exc
        if args.target in ("ptx", "cubin"):
            # LLVM's worker process starts while the input is parsed and lowered.
            from passes import backend

            backend.start_worker()
        lowering = lowering_passes(args.gpu_target or "", args.debug_guards)
        return Pipeline(tuple(pass_node(p) for p in lowering))
    try:
        elements = parse_pipeline_text(spec)
    except PipelineSyntaxError as exc:
        raise UsageError(
            f"invalid pass pipeline {flag} '{spec}': {exc}; expected "
            "'pass-a,pass-b{option=value other-option=value}' or "
            "'builtin.module(pass-a,func.func(pass-b{option=value}))'"
        ) from None
    nodes = _build_nodes(elements, available_passes, is_op_name, flag, spec, top=True)
    if args.debug_guards:
        nodes = _with_debug_guards(nodes, flag, spec)
    return Pipeline(nodes)


def pipeline_flag(args: argparse.Namespace) -> str:
    """How the pipeline was given, for messages: -p or --pass-pipeline."""
    flags = set(getattr(args, "pipeline_flags", ()) or ("-p",))
    return flags.pop() if len(flags) == 1 else "-p/--pass-pipeline"


def _build_nodes(
    elements: tuple[PassText | NestText, ...],
    available_passes: dict[str, Callable[[], type[ModulePass]]],
    is_op_name: Callable[[str], bool],
    flag: str,
    spec: str,
    top: bool = False,
) -> tuple[Node, ...]:
    nodes: list[Node] = []
    for element in elements:
        if isinstance(element, PassText):
            nodes.append(pass_node(_make_pass(element.spec, available_passes, flag, spec)))
            continue
        children = _build_nodes(element.children, available_passes, is_op_name, flag, spec)
        if top and element.anchor == ROOT_ANCHOR:
            nodes.extend(children)  # `builtin.module(...)` at the top: the parsed module
        elif element.anchor != ANY_OP and not is_op_name(element.anchor):
            raise UsageError(
                f"unknown operation '{element.anchor}' anchoring a nested pipeline (column "
                f"{element.column}) in {flag} '{spec}'; a nested pipeline names a registered "
                "op, such as builtin.module, func.func or gpu.module, or 'any'"
            )
        else:
            nodes.append(NestNode(element.anchor, children))
    return tuple(nodes)


def _make_pass(
    pass_spec: ArgSpec,
    available_passes: dict[str, Callable[[], type[ModulePass]]],
    flag: str,
    spec: str,
) -> ModulePass:
    if pass_spec.name not in available_passes:
        raise UsageError(_unknown_pass_message(pass_spec.name, flag, spec, available_passes))
    try:
        pass_type = available_passes[pass_spec.name]()
    except Exception as exc:
        raise ToolError(
            f"cannot load pass '{pass_spec.name}': {type(exc).__name__}: {exc}"
        ) from exc
    try:
        return pass_type.from_pass_spec(pass_spec)
    except Exception as exc:
        raise UsageError(
            f"invalid options for pass '{pass_spec.name}' in {flag} '{spec}': {exc}; "
            + _describe_pass_options(pass_type)
        ) from None


def _with_debug_guards(nodes: tuple[Node, ...], flag: str, spec: str) -> tuple[Node, ...]:
    """The pipeline with `debug_guards` set on each pass that has the option (convert-copy-to-
    nvvm, and lower-copy-to-llvm, which runs it); a UsageError where none has it."""
    changed: list[ModulePass] = []

    def guard(p: ModulePass) -> ModulePass:
        if not any(f.name == "debug_guards" for f in dataclasses.fields(p)):
            return p
        changed.append(p)
        return dataclasses.replace(p, debug_guards=True)

    guarded = map_passes(nodes, guard)
    if not changed:
        runs = f"{flag} '{spec}' does not run it" if spec else "no pass runs"
        raise UsageError(
            f"--debug-guards sets the debug-guards option of convert-copy-to-nvvm, but {runs}: "
            f"add convert-copy-to-nvvm (or lower-copy-to-llvm) to {flag}, or lower with "
            "-t llvm|ptx|cubin"
        )
    return guarded


def _unknown_pass_message(
    name: str, flag: str, spec: str, available_passes: Collection[str]
) -> str:
    message = f"unknown pass '{name}' in {flag} '{spec}'"
    if close := difflib.get_close_matches(name, available_passes, n=3):
        message += "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
    return message + "; available passes: " + ", ".join(sorted(available_passes))


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
