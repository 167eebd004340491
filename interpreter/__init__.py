"""Runs a copy-dialect kernel on the CPU, on numpy arrays, and catches the races, hangs and
stale reads of its copies while it runs (docs/interpreter.md)."""

from interpreter.machine import Schedule, Violation
from interpreter.run import (
    KernelViolation,
    Run,
    copy_kernels,
    interpret,
    kernel_named,
    random_arguments,
    run,
)
from interpreter.values import InterpretError

__all__ = [
    "InterpretError",
    "KernelViolation",
    "Run",
    "Schedule",
    "Violation",
    "copy_kernels",
    "interpret",
    "kernel_named",
    "random_arguments",
    "run",
]
