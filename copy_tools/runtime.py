"""The runtime with the compiler in front: `compile` MLIR (text or a module) into a Program,
or `interpret` it on the CPU.

    from copy_tools import runtime
    program = runtime.compile(open("examples/tma_tile_copy.mlir").read())
    program(x, y, grid=(64, 64))             # on the GPU; on the CPU with COPY_INTERPRET=1
    runtime.interpret(text, x, y, grid=(2, 2))   # on the CPU: the arrays the kernel leaves

Everything else is `runtime`'s, which loads and launches cubins without the
compiler (and without xDSL).

A parse, verification, legalize or compile error raises one `CopyDiagnosticError` (a
`CopyVerifyException`) whose text is copy-opt's for the same IR: `FILE:LINE:COL: error:`,
the source line with a caret, every note and the fix. Text is named `<string>` (or `name=`);
a module built with `frontends.locations`' builders is reported at the Python lines that
made its ops. `verify_module` raises the same for a module. A bad argument to these
functions (a target, a flag) raises `ArgumentError` (a ValueError).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

import interpreter
from copy_dialect.errors import CopyDiagnosticError
from copy_dialect.verify_common import enclosing_kernel
from copy_tools.python_diagnostics import STRING_NAME, Sources, failure, parse, verify
from copy_tools.universe import make_context
from facts.target import TARGETS
from passes import backend
from passes.nvvm.tcgen05_mma import TCGEN05_MMAS
from passes.nvvm.wgmma import WgmmaMmaAsyncOp
from passes.pipeline import compile_module, retarget
from runtime import (
    INTERPRET_ENV,
    ArgumentError,
    CudaError,
    InterpreterMismatch,
    Kernel,
    NoDriverError,
    Program,
    check_device,
    comparing,
    gpu_available,
    interpreting,
    load,
)
from runtime.checks import launch_shape

SCHEDULE_ENV = "COPY_INTERPRET_SCHEDULE"
"""Under COPY_INTERPRET=1: the interpreter's schedule (random, round_robin, adversarial)."""
SEED_ENV = "COPY_INTERPRET_SEED"
"""Under COPY_INTERPRET=1: the first seed of the random schedule (default 0)."""
SCHEDULES_ENV = "COPY_INTERPRET_SCHEDULES"
"""Under COPY_INTERPRET=1: how many schedules (seeds) each call runs (default 1)."""


def compile(  # noqa: A001
    source: str | ModuleOp,
    target: str | None = None,
    *,
    debug_guards: bool = False,
    arch: str | None = None,
    verify: bool = True,
    name: str = STRING_NAME,
) -> Program:
    """Compiles MLIR text or a module (copy dialect) for `target` (default: its copy.target)
    into a Program whose kernels can be called; `debug_guards`: with device-side checks of
    what the verifier cannot prove (docs/lowering.md, "Debug guards"), each failing one
    printing its rule id and trapping. `arch`: the GPU to assemble the target's PTX for,
    where it is a later one than the target's (`compile(m, "sm_80", arch="sm_90")` runs
    sm_80 code on an H100 or H200, as CUDA's compute_80 -> sm_90 does). `verify=False`
    skips the protocol analysis (rules P1-P13, TU10-TU12), by far the costliest part of a
    compile, for a kernel already proven (an autotuner compiling configurations of one
    kernel); the op verifiers, the kernel rules and dominance still run. The program keeps
    the IR it was compiled from, to run its kernels on the CPU under COPY_INTERPRET=1.
    `name`: the file name errors in the text are reported in. Errors: a
    `CopyDiagnosticError` for the IR, an `ArgumentError` for the arguments."""
    check_compile_arguments(source, target, arch, name)
    backend.start_worker()  # a worker that is not running yet starts while this parses
    ctx = make_context()
    module, sources = module_of(ctx, source, name)
    ir = module.clone()
    if target:
        retarget(ir, target)
    try:
        compiled = compile_module(
            module, ctx, target, debug_guards=debug_guards, arch=arch, verify_protocol=verify
        )
    except DiagnosticException as exc:
        raise failure(exc, ir, sources, protocol=verify, stage="compiling") from None
    except ValueError as exc:  # the target, the arch or their pairing (facts.target)
        raise ArgumentError(str(exc)) from None
    mma = frozenset(
        kernel.sym_name.data
        for op in ir.walk()
        if op.name in MMA_OPS and (kernel := enclosing_kernel(op)) is not None
    )
    return Program(compiled.cubin, compiled.abi, interpreter=Interpreter(ir), mma_kernels=mma)


MMA_OPS = (WgmmaMmaAsyncOp.name, *(op.name for op in TCGEN05_MMAS))
"""The tensor-core MMAs: a kernel with one is compared within the MMA tolerance under
COPY_INTERPRET=compare (`runtime.interpreting`)."""


def verify_module(module: ModuleOp, *, protocol: bool = True) -> None:
    """Verifies a module as `compile` does (every op, the kernel rules, dominance and, with
    `protocol`, the copy protocol); raises the CopyDiagnosticError copy-opt would print."""
    if not isinstance(module, ModuleOp):
        raise ArgumentError(
            f"expected an xDSL builtin.ModuleOp to verify, got {type(module).__name__}; "
            "fix: parse the text with runtime.compile, or wrap the ops in ModuleOp([...])"
        )
    verify(module, protocol=protocol)


def module_of(ctx: Context, source: str | ModuleOp, name: str) -> tuple[ModuleOp, Sources]:
    """The module to compile, and the texts its errors are shown in."""
    if isinstance(source, ModuleOp):
        return source, Sources()
    return parse(ctx, source, name)


def check_compile_arguments(source: Any, target: Any, arch: Any, name: Any) -> None:
    """`compile`'s arguments: MLIR text or a module, a known target and arch, a name."""
    if not isinstance(source, str | ModuleOp):
        raise ArgumentError(
            f"expected MLIR text (str) or an xDSL ModuleOp to compile, got "
            f"{type(source).__name__}; fix: pass the text (open(path).read()) or the module"
        )
    for what, value in (("target", target), ("arch", arch)):
        if value is not None and (not isinstance(value, str) or value not in TARGETS):
            raise ArgumentError(
                f"expected {what} to be one of {sorted(TARGETS)} or None, got {value!r}; "
                f"fix: pass a target name such as 'sm_90a'"
            )
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"expected name to be a file name (str), got {name!r}")


class Interpreter:
    """A program's kernels run on the CPU from its IR (what a call does under
    COPY_INTERPRET=1): the schedule and seeds from COPY_INTERPRET_SCHEDULE, _SEED and
    _SCHEDULES; the results written back into the caller's arrays; a
    `interpreter.KernelViolation` for the rules a run broke."""

    def __init__(self, module: ModuleOp):
        self.module = module

    def __call__(
        self, kernel: str, values: list[Any], grid: tuple[int, ...], block: tuple[int, ...]
    ) -> None:
        schedule = os.environ.get(SCHEDULE_ENV, "random")
        seed = int(os.environ.get(SEED_ENV, "0"))
        runs = int(os.environ.get(SCHEDULES_ENV, "1"))
        arrays = run(self.module, values, grid, block, kernel, schedule, seed, runs)
        for value, result in zip(values, arrays, strict=True):
            if isinstance(value, np.ndarray):
                np.copyto(
                    value.view(result.dtype) if value.dtype != result.dtype else value, result
                )


def run(
    module: ModuleOp,
    values: list[Any],
    grid: Any,
    block: Any,
    kernel: str | None,
    schedule: str,
    seed: int,
    schedules: int,
) -> list[np.ndarray]:
    """The arrays of the first of `schedules` runs (seeds `seed`, `seed` + 1, ...); a
    KernelViolation for the first run that breaks a rule."""
    first: list[np.ndarray] | None = None
    for s in range(seed, seed + max(1, schedules)):
        arrays = interpreter.interpret(
            module, *values, grid=grid, block=block, kernel=kernel, schedule=schedule, seed=s
        )
        first = arrays if first is None else first
    assert first is not None
    return first


def interpret(
    source: str | ModuleOp | Program,
    *arrays: Any,
    grid: Any = (1, 1, 1),
    block: Any = None,
    kernel: str | None = None,
    schedule: str = "random",
    seed: int = 0,
    schedules: int = 1,
) -> list[np.ndarray]:
    """Runs a kernel of MLIR text, a module or a compiled Program on the CPU, on numpy
    arrays (copies of them): the arrays as the kernel leaves them. The IR is verified
    first; `schedules` runs try that many seeds of `schedule` (random, round_robin,
    adversarial); an `interpreter.KernelViolation` for the rules a run broke. The IR's
    op rules and kernel rules are verified first; the protocol is what the run checks."""
    if isinstance(source, Program):
        if not isinstance(source.interpreter, Interpreter):
            raise ArgumentError(
                "expected a program compiled from MLIR, got one loaded from a cubin; fix: "
                "interpret the MLIR it was compiled from"
            )
        module = source.interpreter.module
        verify(module, protocol=False)
    else:
        check_compile_arguments(source, None, None, STRING_NAME)
        module, sources = module_of(make_context(), source, STRING_NAME)
        verify(module, protocol=False, sources=sources)  # the run checks the protocol
    check_interpret_arguments(grid, block, kernel, schedule, seed, schedules)
    return run(module, list(arrays), grid, block, kernel, schedule, seed, schedules)


SCHEDULES = ("random", "round_robin", "adversarial")


def check_interpret_arguments(
    grid: Any, block: Any, kernel: Any, schedule: Any, seed: Any, schedules: Any
) -> None:
    """`interpret`'s launch and schedule arguments (the arrays: the interpreter's own
    checks against the kernel, the same as a Program call's)."""
    name = kernel if isinstance(kernel, str) else "the kernel"
    launch_shape(grid, "grid", name)
    if block is not None:
        launch_shape(block, "block", name)
    if kernel is not None and not isinstance(kernel, str):
        raise ArgumentError(f"expected kernel to be a kernel's name or None, got {kernel!r}")
    if schedule not in SCHEDULES:
        raise ArgumentError(f"expected schedule to be one of {SCHEDULES}, got {schedule!r}")
    for what, value, least in (("seed", seed, 0), ("schedules", schedules, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise ArgumentError(f"expected {what} to be an int of at least {least}, got {value!r}")


__all__ = [
    "INTERPRET_ENV",
    "ArgumentError",
    "CopyDiagnosticError",
    "CudaError",
    "InterpreterMismatch",
    "Kernel",
    "NoDriverError",
    "Program",
    "check_device",
    "comparing",
    "compile",
    "gpu_available",
    "interpret",
    "interpreting",
    "load",
    "verify_module",
]
