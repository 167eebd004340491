"""The oracle: the protocol analysis and the interpreter on the same kernels.

Each kernel gets the analysis's verdict (`proved`: no finding; `warned`: only what it
cannot prove; `rejected`: an error, with its rule ids) and the interpreter's over several
schedules (`clean`; `violation`, with rule ids; `unsupported`: an op it does not model yet;
`error`: it could not finish). A kernel the analysis proves must run clean under every
schedule tried (else the analysis is unsound there: a known failure for issue N to fix);
one it rejects should break a rule under some schedule (else the analysis is imprecise, or
the schedules too few).

The corpus: the compile fuzz's kernels (tests/passes/test_compile_fuzz.py) that pass the op
and kernel rules, every kernel of the lit tests' protocol and negative files, the examples,
and builder kernels at small shapes. `scripts/oracle.py` prints the table over all of it;
tests/interpreter/test_oracle.py checks a sample.
"""

from __future__ import annotations

import random
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import builtin
from xdsl.dialects.builtin import IndexType, i1
from xdsl.parser import Parser

import interpreter
from analysis.dominance import verify_dominance
from analysis.protocol import check_protocol
from analysis.verify import verification_errors
from copy_dialect.verification import verification_run
from copy_dialect.verify_common import kernel_cluster_shape
from copy_tools.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
LIT_FILES = [
    *sorted((ROOT / "lit_tests" / "dialects" / "copy").glob("protocol-*.mlir")),
    *sorted((ROOT / "lit_tests" / "dialects" / "copy").glob("invalid-*protocol*.mlir")),
    ROOT / "lit_tests" / "dialects" / "copy" / "invalid-mbarriers.mlir",
    ROOT / "lit_tests" / "dialects" / "copy" / "invalid-cp-async-mbarrier.mlir",
    ROOT / "lit_tests" / "dialects" / "copy" / "ops.mlir",
]
SCHEDULES = (("adversarial", 0), ("round_robin", 0), ("random", 0), ("random", 1), ("random", 2))
MAX_STEPS = 200_000


@dataclass
class Case:
    name: str
    text: str
    grid: tuple[int, int, int] | None = None
    """None: one cluster of the kernel's."""
    arguments: list[Any] | None = None


@dataclass
class Verdict:
    case: Case
    analysis: str
    analysis_rules: set[str] = field(default_factory=set)
    run: str = ""
    run_rules: set[str] = field(default_factory=set)
    detail: str = ""

    @property
    def cell(self) -> tuple[str, str]:
        return self.analysis, self.run


def analyse(module: builtin.ModuleOp) -> tuple[str, set[str]] | None:
    """The analysis's verdict; None for a kernel the op or kernel rules reject (no protocol
    case)."""
    with verification_run():
        if verification_errors(module):
            return None
        try:
            verify_dominance(module)
        except Exception:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            findings = check_protocol(module)
    errors = {r for f in findings if f.severity == "error" for r in f.rules}
    if errors:
        return "rejected", errors
    if findings:
        return "warned", {r for f in findings for r in f.rules}
    return "proved", set()


FLOORS = (1, 256)
"""The least index scalars of the argument sets after the first (0): a trip count of one
iteration (a drain that assumes two, a wait only the second waits for), then a few laps of
a ring (a trip count or size that 0 leaves without an iteration)."""


def interpret(case: Case, module: builtin.ModuleOp) -> tuple[str, set[str], str]:
    """The run's verdict, its rules and a few violations. The kernels' scalars take the
    least values their facts allow; where every run is clean, again with the index scalars
    from each of `FLOORS` on (a runtime K of 0 runs no k-block) and the i1 ones true (a
    predicate false issues no copy), whose out-of-bounds accesses do not count (a scalar may
    be an index the caller keeps in range)."""
    rules: set[str] = set()
    details: list[str] = []
    for floor in (0, *FLOORS):
        if floor and (rules or case.arguments):
            break
        for fn in interpreter.copy_kernels(module):
            if floor and not any(
                isinstance(t, IndexType) or (t == i1 and floor == FLOORS[0])
                for t in fn.function_type.inputs.data
            ):
                continue  # (no scalar this set changes: an i1 is true from the first on)
            rng = np.random.default_rng(0)
            cluster = kernel_cluster_shape(fn)
            # A large grid, of which one cluster runs: persistent loops take few trips.
            grid = case.grid or (16 * cluster[0], 16 * cluster[1], cluster[2])
            try:
                args = case.arguments or interpreter.random_arguments(fn, rng, floor=floor)
            except interpreter.InterpretError as exc:
                if floor:
                    continue
                return "unsupported", rules, f"{exc}"
            sized = "gpu.known_block_size" in fn.attributes
            block = None if sized else (128, 1, 1)
            for schedule, seed in SCHEDULES:
                try:
                    run = interpreter.run(
                        module, *args, grid=grid, block=block, kernel=fn.sym_name.data,
                        schedule=schedule,
                        seed=seed, max_steps=MAX_STEPS, clusters=None if case.grid else 1,
                    )  # fmt: skip
                except interpreter.InterpretError as exc:
                    if floor:
                        break  # (the first set's verdict stands)
                    kind = "unsupported" if "not modelled" in str(exc) else "error"
                    return kind, rules, f"{exc}"
                except Exception as exc:  # the interpreter's own failure: reported, not hidden
                    return "error", rules, f"{type(exc).__name__}: {exc}"
                for v in run.violations:
                    if floor and v.rule == "bounds":
                        continue
                    rules.add(v.rule)
                    if len(details) < 3:
                        where = f" (index scalars from {floor})" if floor else ""
                        details.append(f"{schedule}/{seed}{where}: {v}")
    return ("violation" if rules else "clean"), rules, "; ".join(details)


def judge(case: Case) -> Verdict | None:
    ctx = make_context()
    try:
        module = Parser(ctx, case.text).parse_module()
    except Exception:
        return None
    verdict = analyse(module)
    if verdict is None or not interpreter.copy_kernels(module):
        return None
    result = Verdict(case, verdict[0], verdict[1])
    result.run, result.run_rules, result.detail = interpret(case, module)
    return result


# --- the corpus ------------------------------------------------------------------------------


def lit_cases() -> Iterator[Case]:
    for path in LIT_FILES:
        for i, chunk in enumerate(path.read_text().split("// -----")):
            if "func.func" in chunk:
                yield Case(f"lit/{path.name}#{i}", chunk)


def fuzz_cases(count: int, seed: int = 9) -> Iterator[Case]:
    from tests.passes.test_compile_fuzz import random_kernel

    rng = random.Random(seed)
    for i in range(count):
        _, text, _ = random_kernel(rng)
        yield Case(f"fuzz/{seed}/{i}", text)


def example_cases() -> Iterator[Case]:
    for path in sorted((ROOT / "examples").glob("*.mlir")):
        yield Case(f"example/{path.name}", path.read_text())


def builder_cases() -> Iterator[Case]:
    from frontends import kernels as k

    calls = [
        ("tma_copy", lambda: k.tma_copy((130, 200), "f32"), (4, 3, 1)),
        (
            "tma_copy swizzle 128",
            lambda: k.tma_copy((64, 64), "f32", (64, 32), swizzle=128),
            (2, 1, 1),
        ),
        ("tma_copy reduce", lambda: k.tma_copy((130, 72), "f32", reduce="add"), (2, 3, 1)),
        ("cp_async_copy", lambda: k.cp_async_copy((70, 200), "f32"), (2, 3, 1)),
        ("bulk_copy", lambda: k.bulk_copy(5000, "f32", 4096), (2, 1, 1)),
        ("multicast_copy", lambda: k.multicast_copy((256, 256), "f32"), (4, 2, 1)),
        ("dsmem store", lambda: k.dsmem_exchange((128, 256), "f32"), (4, 2, 1)),
        ("dsmem bulk", lambda: k.dsmem_exchange((128, 256), "f32", mode="bulk"), (4, 2, 1)),
        ("dsmem reduce", lambda: k.dsmem_exchange((128, 256), "i32", mode="reduce"), (4, 2, 1)),
        *[
            (
                f"pipelined {s}",
                (lambda s=s: k.tma_copy_pipelined((256, 128), "f32", (64, 64), stages=s)),
                (2, 1, 1),
            )
            for s in (1, 2, 3, 4, 6)
        ],
        *[
            (
                f"ws_copy {s}",
                (lambda s=s: k.ws_copy((256, 256), "f32", (64, 128), stages=s)),
                (3, 1, 1),
            )
            for s in (2, 3, 4)
        ],
        ("ws_elementwise", lambda: k.ws_elementwise("add", (256, 256), "f32", stages=2), (3, 1, 1)),
        ("ws_row_sum", lambda: k.ws_row_sum((256, 256), "f32", stages=2), (3, 1, 1)),
    ]
    for name, build, grid in calls:
        yield Case(f"builder/{name}", str(build()), grid)


# --- the table -------------------------------------------------------------------------------


def table(verdicts: list[Verdict]) -> str:
    cells = Counter(v.cell for v in verdicts)
    runs = ["clean", "violation", "unsupported", "error"]
    lines = [
        "| analysis \\ interpreter | " + " | ".join(runs) + " | total |",
        "|---|" + "---|" * (len(runs) + 1),
    ]
    for a in ("proved", "warned", "rejected"):
        row = [cells[(a, r)] for r in runs]
        lines.append(f"| {a} | " + " | ".join(map(str, row)) + f" | {sum(row)} |")
    return "\n".join(lines)
