"""copy-opt's command line: its arguments on top of xdsl-opt's, their checks, and the `-p`
pass pipeline (or the default lowering for GPU outputs)."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
from collections.abc import Callable, Collection, Container, Iterable
from typing import NoReturn

from xdsl.passes import ModulePass, PassPipeline, get_pass_option_infos
from xdsl.utils.arg_spec import parse_pipeline, parse_spec
from xdsl.utils.exceptions import ArgSpecParseError

from copy_dialect.target import TARGETS
from copy_tools.opt_errors import TOOL_NAME, ToolError, UsageError
from copy_tools.opt_output import GPU_OUTPUTS


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a bad command line raises UsageError (exit status 1, not 2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{TOOL_NAME} --help')")


def add_arguments(arg_parser: argparse.ArgumentParser, available_passes: Iterable[str]) -> None:
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
        action="append",
        default=[],
        help="pass pipeline, e.g. 'canonicalize,cse{option=value}'; repeated -p "
        "options are run one after the other. Available passes: " + ",".join(available_passes),
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
    arg_parser.add_argument(
        "--verify-diagnostics",
        default=False,
        action="store_true",
        help="check the diagnostics against the '// expected-error {{...}}' "
        "(and -warning, -note, -remark, -re, @+N, @-N, @above, @below) comments "
        "of the input, like mlir-opt; exit status 0 if they match exactly",
    )


def check_arguments(args: argparse.Namespace, available_targets: Container[str]) -> None:
    """A UsageError for a command line copy-opt cannot run."""
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
    args: argparse.Namespace, available_passes: dict[str, Callable[[], type[ModulePass]]]
) -> PassPipeline:
    """The -p pipeline; a bad spec is a UsageError that says how to fix it. Without -p, a
    GPU output (-t llvm|ptx|cubin) gets the default lowering."""
    spec = ",".join(p for p in args.passes if p)
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
        return PassPipeline(tuple(lowering_passes(args.gpu_target or "", args.debug_guards)))
    try:
        pass_specs = tuple(parse_pipeline(spec))
    except ArgSpecParseError as exc:
        raise UsageError(
            f"invalid pass pipeline -p '{spec}': {_pipeline_error(exc)}; expected "
            "'pass-a,pass-b{option=value other-option=value}'"
        ) from None
    passes: list[ModulePass] = []
    for pass_spec in pass_specs:
        if pass_spec.name not in available_passes:
            raise UsageError(_unknown_pass_message(pass_spec.name, spec, available_passes))
        try:
            pass_type = available_passes[pass_spec.name]()
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
    if args.debug_guards:
        passes = _with_debug_guards(passes, spec)
    return PassPipeline(tuple(passes))


def _with_debug_guards(passes: list[ModulePass], spec: str) -> list[ModulePass]:
    """The pipeline with `debug_guards` set on each pass that has the option (convert-copy-to-
    nvvm, and lower-copy-to-llvm, which runs it); a UsageError where none has it."""
    guarded = [
        dataclasses.replace(p, debug_guards=True)
        if any(f.name == "debug_guards" for f in dataclasses.fields(p))
        else p
        for p in passes
    ]
    if all(new is old for new, old in zip(guarded, passes, strict=True)):
        runs = f"-p '{spec}' does not run it" if spec else "no pass runs"
        raise UsageError(
            f"--debug-guards sets the debug-guards option of convert-copy-to-nvvm, but {runs}: "
            "add convert-copy-to-nvvm (or lower-copy-to-llvm) to -p, or lower with "
            "-t llvm|ptx|cubin"
        )
    return guarded


def _unknown_pass_message(name: str, spec: str, available_passes: Collection[str]) -> str:
    message = f"unknown pass '{name}' in -p '{spec}'"
    if close := difflib.get_close_matches(name, available_passes, n=3):
        message += "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
    return message + "; available passes: " + ", ".join(sorted(available_passes))


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
