"""`copy-opt --interpret`: each kernel of the (verified) result runs on the CPU under the
interpreter (docs/interpreter.md), as mlir-cpu-runner runs a module; the rules a run breaks
are diagnostics at their ops (with `--verify-diagnostics`, lit tests of the interpreter), and
the output is a report of the runs instead of the IR.

    copy-opt kernel.mlir --interpret --interpret-grid 4,4 --interpret-schedules 10
    copy-opt kernel.mlir --interpret --interpret-inputs in/ --interpret-outputs out/

Arguments: `argN.npy` from `--interpret-inputs` where there is one, else random arrays (and
0 for scalars); `--interpret-outputs` gets each array argument after the run of the first
schedule, as `argN.npy`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from xdsl.dialects import builtin, func

from copy_tools.diagnostics import Diagnostic, SourceLocation
from copy_tools.opt_errors import UsageError
from copy_tools.opt_verify import op_location


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("running kernels on the CPU (the interpreter)")
    group.add_argument(
        "--interpret", action="store_true", default=False,
        help="run each kernel of the result under the interpreter; the rules a run breaks "
        "are errors at their ops, and the output is a report of the runs",
    )  # fmt: skip
    group.add_argument(
        "--interpret-grid", default=None, metavar="X[,Y[,Z]]",
        help="the grid (default: one cluster of the kernel's)",
    )  # fmt: skip
    group.add_argument(
        "--interpret-schedule", default="random", choices=("random", "round_robin", "adversarial"),
        help="how the interpreter interleaves threads and copies (default random)",
    )  # fmt: skip
    group.add_argument("--interpret-seed", type=int, default=0, metavar="N", help="first seed")
    group.add_argument(
        "--interpret-schedules", type=int, default=1, metavar="N",
        help="runs per kernel, seeds N.. (default 1)",
    )  # fmt: skip
    group.add_argument(
        "--interpret-inputs", default=None, metavar="DIR", help="argN.npy: the kernel's inputs"
    )
    group.add_argument(
        "--interpret-outputs", default=None, metavar="DIR",
        help="writes each array argument after the run as argN.npy",
    )  # fmt: skip


def grid_of(spec: str | None) -> tuple[int, int, int] | None:
    if spec is None:
        return None
    try:
        values = [int(v) for v in spec.split(",")]
    except ValueError:
        values = []
    if not 1 <= len(values) <= 3 or any(v < 1 for v in values):
        raise UsageError(
            f"--interpret-grid: expected 1 to 3 positive integers (X,Y,Z), got '{spec}'"
        )
    return (*values, 1, 1)[:3]  # type: ignore[return-value]


def check_arguments(args: argparse.Namespace) -> None:
    grid_of(args.interpret_grid)
    if args.interpret_schedules < 1:
        raise UsageError(
            f"--interpret-schedules: expected 1 or more, got {args.interpret_schedules}"
        )
    if args.interpret_inputs is not None and not Path(args.interpret_inputs).is_dir():
        raise UsageError(f"--interpret-inputs: '{args.interpret_inputs}' is not a directory")


def arguments(kernel: func.FuncOp, inputs: str | None) -> list[Any]:
    import numpy as np

    import interpreter

    values = interpreter.random_arguments(kernel, np.random.default_rng(0))
    if inputs is not None:
        for i in range(len(values)):
            path = Path(inputs) / f"arg{i}.npy"
            if path.exists():
                values[i] = np.load(path)
    return values


def interpret(
    module: builtin.ModuleOp, args: argparse.Namespace, fallback: SourceLocation
) -> tuple[list[Diagnostic], str]:
    """The diagnostics of the runs of every kernel of `module`, and the report."""
    import numpy as np

    import interpreter
    from copy_dialect.verify_common import kernel_cluster_shape

    diagnostics: list[Diagnostic] = []
    lines: list[str] = []
    for fn in interpreter.copy_kernels(module):
        name = fn.sym_name.data
        grid = grid_of(args.interpret_grid) or kernel_cluster_shape(fn)
        values = arguments(fn, args.interpret_inputs)
        seen: set[tuple[str, int, str]] = set()
        broken = 0
        stopped = ""
        for run_index in range(args.interpret_schedules):
            seed = args.interpret_seed + run_index
            try:
                run = interpreter.run(
                    module, *values, grid=grid, kernel=name,
                    schedule=args.interpret_schedule, seed=seed,
                )  # fmt: skip
            except interpreter.InterpretError as exc:
                loc = op_location(exc.op, fallback) if exc.op is not None else fallback
                diagnostics.append(Diagnostic("error", loc, f"cannot interpret: {exc}"))
                if exc.note:
                    diagnostics.append(Diagnostic("note", loc, exc.note))
                stopped = f"stopped in run {run_index + 1}: an op it cannot interpret"
                break
            except ValueError as exc:
                diagnostics.append(Diagnostic("error", op_location(fn, fallback), str(exc)))
                stopped = f"stopped in run {run_index + 1}: arguments it cannot run"
                break
            if run_index == 0 and args.interpret_outputs is not None:
                out = Path(args.interpret_outputs)
                out.mkdir(parents=True, exist_ok=True)
                for i, array in enumerate(run.arrays):
                    if isinstance(array, np.ndarray):
                        np.save(out / f"arg{i}.npy", array)
            for v in run.violations:
                loc = op_location(v.op, fallback)
                key = (v.rule, id(v.op), v.message)
                if key in seen:
                    continue
                seen.add(key)
                broken += 1
                diagnostics.append(
                    Diagnostic("error", loc, f"'{v.op.name}' op {v.message} [{v.rule}] (CTA "
                               f"{v.cta}, schedule {args.interpret_schedule} seed {seed})")
                )  # fmt: skip
                if v.other is not None:
                    diagnostics.append(
                        Diagnostic("note", op_location(v.other, fallback), "the other access")
                    )
        # A run that stopped proves nothing clean: the report says so, not "clean".
        verdict = "clean" if not broken else f"{broken} violation(s)"
        if stopped:
            verdict = stopped if not broken else f"{verdict}, then {stopped}"
        lines.append(
            f"// @{name}: grid {grid}, {args.interpret_schedules} run(s) of schedule "
            f"{args.interpret_schedule} from seed {args.interpret_seed}: {verdict}"
        )
    return diagnostics, "\n".join(lines) + "\n"
