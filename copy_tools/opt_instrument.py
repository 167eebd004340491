"""copy-opt's pass instrumentation, as mlir-opt's: IR dumps before and after passes
(`--mlir-print-ir-*`, `--print-between-passes`) and the execution time report
(`--mlir-timing`), both on stderr.

The dump headers are mlir-opt's (LLVM 19): `// -----// IR Dump After ConvertCopyToNVVMPass
(convert-copy-to-nvvm) //----- //`, the pass's class name then its pipeline name; the op the
pass ran on follows (the module, or the anchored op of a nested pipeline; the whole module
with `--mlir-print-ir-module-scope`, whose header then names the op). The time report is
mlir-opt's tree: the wall time of parsing, verifying, each pass (a nested pipeline's and a
pipeline pass's below it, indented) and printing, then the rest and the total.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer


def display_name(pass_: ModulePass) -> str:
    """The pass's class name, as mlir-opt's `Pass::getName` (leading underscores dropped)."""
    return type(pass_).__name__.lstrip("_")


# --- IR printing ---------------------------------------------------------------------


@dataclass
class IRPrinting:
    before: frozenset[str] = frozenset()
    """Pipeline names of the passes to print before (--mlir-print-ir-before)."""
    after: frozenset[str] = frozenset()
    before_all: bool = False
    after_all: bool = False
    module_scope: bool = False
    generic: bool = False
    debuginfo: bool = False
    stream: IO[str] = field(default_factory=lambda: sys.stderr)

    def print_before(self, pass_: ModulePass, op: Operation, *, leaf: bool = True) -> None:
        """`leaf`: a pass that runs (not a pipeline pass, which prints only when named)."""
        if (self.before_all and leaf) or pass_.name in self.before:
            self._dump("Before", pass_, op)

    def print_after(
        self, pass_: ModulePass, op: Operation, *, leaf: bool = True, failed: bool = False
    ) -> None:
        if (self.after_all and leaf) or pass_.name in self.after:
            self._dump("After", pass_, op, failed=failed)

    def print_between(self, pass_: ModulePass, module: ModuleOp) -> None:
        self._write_header("After", pass_, module, False, module_scope=False)
        self._write_op(module)

    def _dump(self, title: str, pass_: ModulePass, op: Operation, failed: bool = False) -> None:
        self._write_header(title, pass_, op, failed, self.module_scope)
        self._write_op(_top(op) if self.module_scope else op)

    def _write_header(
        self, title: str, pass_: ModulePass, op: Operation, failed: bool, module_scope: bool
    ) -> None:
        header = f"// -----// IR Dump {title} {display_name(pass_)}"
        header += f"{' Failed' if failed else ''} ({pass_.name})"
        if module_scope:
            header += f" ('{op.name}' operation"
            symbol = op.properties.get("sym_name") or op.attributes.get("sym_name")
            if isinstance(symbol, StringAttr):
                header += f": @{symbol.data}"
            header += ")"
        print(header + " //----- //", file=self.stream)

    def _write_op(self, op: Operation) -> None:
        printer = Printer(
            stream=self.stream, print_generic_format=self.generic, print_debuginfo=self.debuginfo
        )
        printer.print_op(op)
        self.stream.write("\n\n")


def _top(op: Operation) -> Operation:
    while (parent := op.parent_op()) is not None:
        op = parent
    return op


# --- timing --------------------------------------------------------------------------

TimerKey = tuple[object, str]
"""A timer's identity (the pass node, or a fixed word) and its name in the report."""


@dataclass
class Timer:
    name: str
    wall: float = 0.0
    children: dict[object, Timer] = field(default_factory=dict[object, "Timer"])

    def child(self, key: TimerKey) -> Timer:
        identity, name = key
        if identity not in self.children:
            self.children[identity] = Timer(name)
        return self.children[identity]


DESCRIPTION = "... Execution time report ..."
RULE = "===" + "-" * 73 + "==="


class Timing:
    """mlir-opt's DefaultTimingManager in tree mode, wall time only."""

    def __init__(self) -> None:
        self.root = Timer("Total")
        self.start = time.perf_counter()

    @contextmanager
    def scope(self, path: tuple[TimerKey, ...]) -> Iterator[None]:
        """Adds the time the body takes to the timer at `path` (its parents time their own)."""
        timer = self.root
        for key in path:
            timer = timer.child(key)
        start = time.perf_counter()
        try:
            yield
        finally:
            timer.wall += time.perf_counter() - start

    def report(self) -> str:
        total = max(time.perf_counter() - self.start, 1e-9)
        lines = [
            RULE,
            " " * ((80 - len(DESCRIPTION)) // 2) + DESCRIPTION,
            RULE,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]

        def entry(wall: float, name: str, indent: int = 0) -> str:
            return f"  {wall:8.4f} ({100.0 * wall / total:5.1f}%)  " + " " * indent + name

        def tree(timer: Timer, indent: int) -> None:
            lines.append(entry(timer.wall, timer.name, indent))
            for child in timer.children.values():
                tree(child, indent + 2)

        for child in self.root.children.values():
            tree(child, 0)
        rest = total - sum(child.wall for child in self.root.children.values())
        lines.append(entry(max(rest, 0.0), "Rest"))
        lines.append(entry(total, "Total"))
        return "\n".join(lines) + "\n"
