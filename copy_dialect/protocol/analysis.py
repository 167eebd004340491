"""The driver of the protocol analysis: which functions are kernels, which unknowns are
worth choosing, and the runs over every choice; findings of all runs, once each."""

from __future__ import annotations

from xdsl.dialects import func, scf
from xdsl.ir import Operation, SSAValue

from copy_dialect import ops as copy
from copy_dialect.protocol.findings import ProtocolFinding, warning
from copy_dialect.protocol.walk import Choose, Kernel, Walk, block_size, run_kernel, steady

MAX_RUNS = 512
"""Runs (choices of trip counts and branches) per kernel before the analysis gives up."""

MAX_TRIP_COUNTS = 48


def protocol_ops(fn: func.FuncOp) -> frozenset[Operation]:
    """The copy ops of `fn` and every op that holds one."""
    found: set[Operation] = set()
    for op in fn.walk():
        if op.name.startswith("copy."):
            parent = op.parent_op()
            while parent is not None and parent is not fn and parent not in found:
                found.add(parent)
                parent = parent.parent_op()
            found.add(op)
    return frozenset(found)


def kernel_facts(fn: func.FuncOp, holders: frozenset[Operation]) -> Kernel:
    bounds = frozenset(op.ub for op in holders if isinstance(op, scf.ForOp))
    ring = max(
        (
            op.result.type.count.data
            for op in holders
            if isinstance(op, copy.BarrierInitOp) and isinstance(op.result.type, copy.BarrierType)
        ),
        default=1,
    )
    trips = min(4 * ring + 4, MAX_TRIP_COUNTS)
    pending = max(
        (op.pending.value.data for op in holders if isinstance(op, copy.WaitGroupOp)), default=0
    )
    return Kernel(fn, block_size(fn), bounds, trips, ring, pending, holders, {}, {}, {})


def describe(bindings: dict[SSAValue, int], kernel: Kernel) -> str:
    parts = []
    for value, chosen in bindings.items():
        name = f"%{value.name_hint}" if value.name_hint else "a value"
        if value in kernel.loop_bounds:
            parts.append(f"{name} = {chosen}")
        else:
            parts.append(f"{name} {'true' if chosen else 'false'}")
    return "found for " + ", ".join(parts) if parts else ""


def unsteady_loops(walk: Walk, kernel: Kernel) -> list[ProtocolFinding]:
    """For the run with the most iterations of each loop whose trip count was chosen: a
    warning unless the loop reached a steady state (`walk.steady`): then the counts
    tried stand for every count."""
    found = []
    for loop in walk.heads:
        if len(walk.heads[loop]) < kernel.trip_counts:
            continue
        if not steady(walk, loop, kernel.ring):
            # rule: P10
            found.append(
                warning(
                    loop,
                    f"cannot prove the copies of this loop for more than {kernel.trip_counts} "
                    "iterations: it reaches no steady state the analysis can repeat (a lap "
                    "of iterations that leaves the barriers, groups and buffers as it found "
                    "them)",
                    "compute ring slots and parities from the induction variable (i mod S, "
                    "(i / S) mod 2), or check the kernel at run time with --debug-guards",
                )
            )
    return found


def check_kernel(fn: func.FuncOp) -> list[ProtocolFinding]:
    holders = protocol_ops(fn)
    if not holders:
        return []
    if len(fn.body.blocks) != 1:
        # rule: P10
        return [
            warning(
                fn,
                "cannot prove the copy protocol of a function with several blocks (cf branches)",
                "write the control flow with scf.if and scf.for",
            )
        ]
    kernel = kernel_facts(fn, holders)
    found: dict[tuple[object, ...], ProtocolFinding] = {}
    work: list[dict[SSAValue, int]] = [{}]
    runs = 0
    while work:
        bindings = work.pop()
        runs += 1
        if runs > MAX_RUNS:
            # rule: P10
            finding = warning(
                fn,
                f"cannot prove the copy protocol: it depends on more than {MAX_RUNS} "
                "combinations of trip counts and branch conditions",
                "split the kernel, or check it at run time with --debug-guards",
            )
            found.setdefault(finding.key, finding)
            break
        this_run: list[ProtocolFinding] = []
        try:
            walk = run_kernel(kernel, bindings, this_run.append)
        except Choose as choice:
            work.extend({**bindings, choice.value: o} for o in reversed(choice.options))
            continue
        this_run += unsteady_loops(walk, kernel)
        for finding in this_run:
            if finding.key not in found:
                finding.context = describe(bindings, kernel)
                found[finding.key] = finding
    return list(found.values())


def check_protocol(module: Operation) -> list[ProtocolFinding]:
    """Errors and warnings of every kernel (function holding copy ops) in `module`."""
    findings: list[ProtocolFinding] = []
    for op in module.walk():
        if isinstance(op, func.FuncOp):
            findings += check_kernel(op)
    return findings
