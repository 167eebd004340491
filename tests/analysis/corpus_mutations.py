"""One-op mutations of the corpus's kernels (tests/corpus/), each judged by the kernel rules,
the protocol analysis and the interpreter (issue N: no mutation the interpreter finds a
violation in is accepted by the proof).

A mutant is (kernel, mutation, index): the operator of `MUTATIONS` applied to the index-th of
its target ops in the parsed kernel (walk order). Each gets three verdicts:

- the op verifiers and kernel rules (`verification_errors`, then dominance): `rules` when
  they reject it, with the rule ids;
- the protocol analysis (`check_protocol`): `rejected` (an error, with its rule ids and
  whether it is at the mutated op, in a note of it, or elsewhere), `warned` (only what it
  cannot prove), `proved` (no finding);
- the interpreter (`interpreter.run`) on the kernel's small arguments under `SCHEDULES`:
  `violation` (a rule broken under some schedule), `wrong` (every run clean, some output
  differs from the numpy model), `clean` (clean and bit-exact under every schedule), or
  `error` (the interpreter could not finish).

`proved` with `violation` is the analysis's unsoundness (issue N wants none); `rejected`
with `clean` is a false alarm, or a mistake the schedules tried did not expose.
scripts/mutations.py prints the table over every mutant; test_corpus_mutations.py checks a
sample.
"""

from __future__ import annotations

import re
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from xdsl.dialects import gpu
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser

import interpreter
from analysis.dominance import verify_dominance
from analysis.protocol import check_protocol, render
from analysis.verify import verification_errors
from copy_dialect import ops as copy
from copy_dialect.verification import verification_run
from copy_tools.universe import make_context
from tests.analysis import mutations as mu
from tests.corpus import KERNELS, Kernel

SCHEDULES = (("adversarial", 0), ("round_robin", 0), ("random", 0), ("random", 1))
"""The interpreter's runs of each mutant (scripts/mutations.py --schedules changes them)."""

MAX_STEPS = 2_000_000


@dataclass(frozen=True)
class Mutation:
    name: str
    targets: Callable[[ModuleOp], list[Operation]]
    apply: Callable[[Operation], None]
    deletes: bool = False


def deletion(kind: type[Operation]) -> Mutation:
    name = kind.name  # type: ignore[attr-defined]
    return Mutation(f"delete {name.split('.', 1)[1]}", mu.ops_of(kind), mu.delete, True)


MUTATIONS: tuple[Mutation, ...] = (
    *(
        deletion(k)
        for k in (
            copy.BarrierWaitOp,
            copy.BarrierArriveOp,
            copy.BarrierArriveExpectTxOp,
            copy.PeerArriveOp,
            copy.CommitGroupOp,
            copy.WaitGroupOp,
            copy.FenceAsyncSharedOp,
            copy.NamedBarrierSyncOp,
            gpu.BarrierOp,
        )
    ),
    Mutation("flip parity", mu.ops_of(copy.BarrierWaitOp), mu.flip_parity),
    Mutation("parity = 0", mu.waits_not_constant(False), mu.parity(False)),
    Mutation("parity = 1", mu.waits_not_constant(True), mu.parity(True)),
    Mutation("arrivals + 1", mu.ops_of(copy.BarrierInitOp), mu.arrivals(1)),
    Mutation("arrivals - 1", mu.inits_above_one, mu.arrivals(-1)),
    Mutation("expect_tx + 16", mu.ops_of(copy.BarrierArriveExpectTxOp), mu.expect_bytes(16)),
    Mutation("expect_tx - 16", mu.ops_of(copy.BarrierArriveExpectTxOp), mu.expect_bytes(-16)),
    Mutation("arrive = false", mu.tma_loads, mu.no_arrive),
    Mutation("own arrival as expect_tx - 16", mu.tma_loads, mu.expect_tx(-16)),
    Mutation("next barrier", mu.barrier_indexed, mu.next_barrier),
    Mutation("next slot", mu.slotted, mu.next_slot),
    Mutation("release before reads", mu.releases, mu.release_early),
    Mutation("pending = 1", mu.ops_of(copy.WaitGroupOp), mu.pending(1)),
    Mutation("read_only", mu.full_bulk_waits, mu.reads_only),
    Mutation("issuer elected", mu.arrives_as("elected"), mu.issuer("elected")),
    Mutation("issuer warps", mu.arrives_as("warps"), mu.issuer("warps")),
    Mutation("issuer threads", mu.arrives_as("threads"), mu.issuer("threads")),
    Mutation("named barrier + 32", mu.ops_of(copy.NamedBarrierSyncOp), mu.named_threads(32)),
    Mutation("named barrier - 32", mu.ops_of(copy.NamedBarrierSyncOp), mu.named_threads(-32)),
    Mutation("loop bound + 1", mu.ring_loops, mu.loop_bound(1)),
    Mutation("loop bound - 1", mu.ring_loops, mu.loop_bound(-1)),
)


def kernel_named(name: str) -> Kernel:
    return next(k for k in KERNELS if k.name == name)


def parse(kernel: Kernel) -> ModuleOp:
    """A module of its own for `kernel` (a mutant changes it): a clone of the kernel parsed
    once per process, which costs a fraction of parsing it again."""
    return parsed(kernel).clone()


@cache
def parsed(kernel: Kernel) -> ModuleOp:
    return Parser(make_context(), kernel.text(), str(kernel.path)).parse_module()


def mutation_named(name: str) -> Mutation:
    return next(m for m in MUTATIONS if m.name == name)


@cache
def cases() -> tuple[tuple[str, str, int], ...]:
    """Every mutant: (kernel, mutation, index of the target op)."""
    found = []
    for kernel in KERNELS:
        module = parse(kernel)
        for m in MUTATIONS:
            found += [(kernel.name, m.name, i) for i in range(len(m.targets(module)))]
    return tuple(found)


# --- where an op is in the kernel's file ------------------------------------------------------


@cache
def source_lines(kernel: Kernel) -> dict[str, list[int]]:
    """Per op name, the lines (1-based) of the file where that op is written, in order."""
    found: dict[str, list[int]] = {}
    for n, line in enumerate(kernel.text().splitlines(), 1):
        if line.lstrip().startswith("//"):
            continue
        for name in re.findall(r"(?:^|[=\s])\"?([a-z_]+\.[a-z_]+)\"?[\s(]", line):
            found.setdefault(name, []).append(n)
    return found


def locator(kernel: Kernel, module: ModuleOp) -> Callable[[Operation], str]:
    """Names an op of the unmutated kernel as `name@line` (by its rank among the ops of its
    name; `name` alone when the file's spelling cannot be matched)."""
    ranks: dict[int, tuple[str, int]] = {}
    counts: Counter[str] = Counter()
    for op in module.walk():
        ranks[id(op)] = (op.name, counts[op.name])
        counts[op.name] += 1
    lines = source_lines(kernel)

    def where(op: Operation) -> str:
        if id(op) not in ranks:
            return f"{op.name} (inserted)"
        name, rank = ranks[id(op)]
        at = lines.get(name, [])
        return f"{name}@{at[rank]}" if len(at) == counts[name] else name

    return where


# --- the verdicts -----------------------------------------------------------------------------


@dataclass
class Verdict:
    kernel: str
    mutation: str
    index: int
    site: str = ""
    """The mutated op (`name@line` of the kernel's file)."""
    analysis: str = ""
    """rules, rejected, warned or proved."""
    analysis_rules: tuple[str, ...] = ()
    placed: str = ""
    """Where the first error is: `at` the mutated op (or inside the mutated loop), `note`
    (a note names it), `elsewhere`, or `deleted` (the op is gone)."""
    finding: str = ""
    run: str = ""
    """clean, wrong, violation or error."""
    run_rules: tuple[str, ...] = ()
    detail: str = ""
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.kernel}: {self.mutation} #{self.index}"

    @property
    def unsound(self) -> bool:
        return self.analysis == "proved" and self.run == "violation"


def first_error_place(finding, mutated: Operation, deleted: bool) -> str:
    if deleted:
        return "deleted"
    if finding.op is mutated or mutated.is_ancestor(finding.op):
        return "at"
    if any(r.op is mutated for r in finding.related):
        return "note"
    return "elsewhere"


def analyse(verdict: Verdict, module: ModuleOp, mutated: Operation, deleted: bool, where) -> None:
    start = time.perf_counter()
    with verification_run():
        errors = verification_errors(module)
        if not errors:
            try:
                verify_dominance(module)  # type: ignore[arg-type]
            except Exception as exc:  # noqa: BLE001 - a dominance error is the rules' verdict
                errors = [(mutated, exc)]
    if errors:
        op, exc = errors[0]
        verdict.analysis = "rules"
        verdict.analysis_rules = tuple(getattr(exc, "rules", ()))
        verdict.finding = f"{where(op)}: {str(exc).splitlines()[0][:160]}"
        verdict.seconds["analysis"] = time.perf_counter() - start
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        findings = check_protocol(module)
    verdict.seconds["analysis"] = time.perf_counter() - start
    errors_ = [f for f in findings if f.severity == "error"]
    if errors_:
        verdict.analysis = "rejected"
        verdict.analysis_rules = tuple(sorted({r for f in errors_ for r in f.rules}))
        first = errors_[0]
        verdict.placed = first_error_place(first, mutated, deleted)
        verdict.finding = f"{where(first.op)}: {render(first).splitlines()[0][:200]}"
    elif findings:
        verdict.analysis = "warned"
        verdict.analysis_rules = tuple(sorted({r for f in findings for r in f.rules}))
        verdict.finding = f"{where(findings[0].op)}: {render(findings[0]).splitlines()[0][:200]}"
    else:
        verdict.analysis = "proved"


def interpret(verdict: Verdict, kernel: Kernel, module: ModuleOp, schedules, where) -> None:
    start = time.perf_counter()
    rules: set[str] = set()
    details: list[str] = []
    wrong: list[str] = []
    for schedule, seed in schedules:
        arguments = kernel.arguments(np.random.default_rng(0))
        try:
            run = interpreter.run(
                module, *arguments, grid=kernel.grid, clusters=kernel.clusters,
                schedule=schedule, seed=seed, max_steps=MAX_STEPS,
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - the interpreter's failure is a verdict
            verdict.run = "error"
            verdict.detail = f"{schedule}/{seed}: {type(exc).__name__}: {str(exc)[:200]}"
            verdict.seconds["interpreter"] = time.perf_counter() - start
            return
        for v in run.violations:
            rules.add(v.rule)
            if len(details) < 2:
                details.append(f"{schedule}/{seed}: [{v.rule}] at {where(v.op)}: {v.message[:160]}")
        if not run.violations:
            for index, expected in kernel.expected(arguments).items():
                if not np.array_equal(run.arrays[index], expected):
                    differ = int(np.sum(run.arrays[index] != expected))
                    wrong.append(f"{schedule}/{seed}: argument {index}, {differ} elements differ")
    verdict.seconds["interpreter"] = time.perf_counter() - start
    verdict.run_rules = tuple(sorted(rules))
    if rules:
        verdict.run, verdict.detail = "violation", "; ".join(details)
    elif wrong:
        verdict.run, verdict.detail = "wrong", "; ".join(wrong[:2])
    else:
        verdict.run = "clean"


def judge(kernel_name: str, mutation: str, index: int, schedules=SCHEDULES) -> Verdict:
    kernel = kernel_named(kernel_name)
    m = mutation_named(mutation)
    module = parse(kernel)
    where = locator(kernel, module)
    op = m.targets(module)[index]
    verdict = Verdict(kernel_name, mutation, index, site=where(op))
    m.apply(op)
    analyse(verdict, module, op, m.deletes, where)
    interpret(verdict, kernel, module, schedules, where)
    return verdict


# --- the table --------------------------------------------------------------------------------

ANALYSES = ("proved", "warned", "rejected", "rules")
RUNS = ("clean", "wrong", "violation", "error")


def table(verdicts: list[Verdict]) -> str:
    cells = Counter((v.analysis, v.run) for v in verdicts)
    lines = [
        "| analysis \\ interpreter | " + " | ".join(RUNS) + " | total |",
        "|---|" + "---|" * (len(RUNS) + 1),
    ]
    for a in ANALYSES:
        row = [cells[(a, r)] for r in RUNS]
        lines.append(f"| {a} | " + " | ".join(map(str, row)) + f" | {sum(row)} |")
    row = [sum(cells[(a, r)] for a in ANALYSES) for r in RUNS]
    lines.append("| total | " + " | ".join(map(str, row)) + f" | {sum(row)} |")
    return "\n".join(lines)
