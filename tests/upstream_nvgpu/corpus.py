"""Upstream MLIR's nvgpu tests as inputs: each function that holds nvgpu data movement, cut
out of its file, imported, raised by convert-nvgpu-to-copy (fragments), verified op by op
and checked by the protocol analysis (SOURCES.md says which files, from which commit).

The files are not in this repository: `COPY_LLVM_PROJECT` names an llvm-project checkout
(or any folder holding the files at their upstream paths), and the tests skip without it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from xdsl.parser import Parser

from analysis.protocol import check_protocol
from analysis.verify import verification_errors
from copy_dialect.upstream_nvgpu import NVGPU
from copy_tools.universe import make_context
from passes.convert_nvgpu_to_copy import ConvertNVGPUToCopyPass

FILES = (
    "mlir/test/Conversion/NVGPUToNVVM/nvgpu-to-nvvm.mlir",
    "mlir/test/Dialect/NVGPU/roundtrip.mlir",
    "mlir/test/Dialect/NVGPU/invalid.mlir",
    "mlir/test/Dialect/NVGPU/optimize-shared-memory.mlir",
    "mlir/test/Dialect/NVGPU/fold-memref-alias-ops.mlir",
    "mlir/test/Dialect/NVGPU/canonicalization.mlir",
)
"""The upstream files whose functions hold TMA, mbarrier or device_async ops."""

DATA_MOVEMENT = tuple(op.name for op in NVGPU.operations)
"""The nvgpu ops `copy_dialect.upstream_nvgpu` reads (TMA, mbarrier, device_async)."""

TARGET = '#copy.target<"sm_90a">'
"""Each function is checked for sm_90a (TMA, mbarrier transaction counts and cp.async)."""

BLOCK = 128
"""The block a function runs in (convert-nvgpu-to-copy's `block-size`): upstream's tests
initialize their mbarriers for 128 threads."""

FUNC = re.compile(r"^\s*(?:func\.func|gpu\.func)\s+(?:private\s+)?@([\w$.-]+)")
ALIAS = re.compile(r"^![\w$.-]+\s*=")


def llvm_project() -> Path | None:
    found = os.environ.get("COPY_LLVM_PROJECT")
    return Path(found) if found else None


def _code(line: str) -> str:
    return line.split("//", 1)[0]


@dataclass(frozen=True)
class Function:
    file: str
    name: str
    text: str
    line: int
    """The line of `func.func` in the upstream file (1-based)."""

    nth: int = 1
    """Which function of that name in the file (upstream's files repeat a few)."""

    @property
    def key(self) -> str:
        suffix = f"#{self.nth}" if self.nth > 1 else ""
        return f"{Path(self.file).name}::{self.name}{suffix}"


def functions(root: Path, file: str) -> list[Function]:
    """The functions of `file` that hold a data-movement op, each with the file's type
    aliases and memref.globals in front of it."""
    lines = (root / file).read_text(encoding="utf-8").splitlines()
    aliases = [s for s in lines if ALIAS.match(s)]
    globals_ = {_code(s).strip() for s in lines if _code(s).strip().startswith("memref.global")}
    found: list[Function] = []
    n = 0
    while n < len(lines):
        match = FUNC.match(lines[n])
        if match is None:
            n += 1
            continue
        start, depth, opened = n, 0, False
        while n < len(lines):
            code = _code(lines[n])
            depth += code.count("{") - code.count("}")
            opened = opened or code.rstrip().endswith("{")  # the body's region, not an attr-dict
            n += 1
            if opened and depth <= 0:
                break
        body = [_code(s).rstrip() for s in lines[start:n]]
        if any(op + " " in s or s.endswith(op) for s in body for op in DATA_MOVEMENT):
            named = sorted(g for g in globals_ if _symbol(g) in "\n".join(body))
            module = f"builtin.module attributes {{copy.target = {TARGET}}} {{"
            text = "\n".join([*aliases, module, *named, *body, "}"])
            nth = 1 + sum(f.name == match.group(1) for f in found)
            found.append(Function(file, match.group(1), text, start + 1, nth))
    return found


def _symbol(global_: str) -> str:
    """`@name` of a `memref.global` line."""
    match = re.search(r"@[\w$.-]+", global_)
    return match.group(0) if match else global_


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _rules(error: Exception) -> str:
    rules = getattr(error, "rules", ())
    return ",".join(rules) if rules else "untagged"


def outcome(function: Function) -> str:
    """`import: ...`, `raise: ...`, `verify: RULES`, `protocol: RULES` (the first stage that
    rejects the function: its error's catalogue ids, or its message where the stage has no
    rule) or `pass`."""
    ctx = make_context()
    try:
        module = Parser(ctx, function.text, function.key).parse_module()
    except Exception as error:  # noqa: BLE001 (any parse failure is this stage's outcome)
        return f"import: {_last_line(error)}"
    try:
        ConvertNVGPUToCopyPass(fragments=True, block_size=BLOCK).apply(ctx, module)
    except Exception as error:  # noqa: BLE001
        return f"raise: {_short(error)}"
    errors = verification_errors(module)
    if errors:
        return f"verify: {_rules(errors[0][1])}"
    findings = [f for f in check_protocol(module) if f.severity == "error"]
    if findings:
        return f"protocol: {_rules(findings[0])}"
    return "pass"


def _short(error: Exception) -> str:
    """The first line of a raise error (the op and what it does that copy cannot say)."""
    return _first_line(error)[:100]


def _last_line(error: Exception) -> str:
    """A parse error's message: its last line (the lines above are the position and the
    source line with the caret)."""
    lines = [s.strip() for s in str(error).splitlines() if s.strip()]
    return lines[-1][:100] if lines else type(error).__name__
