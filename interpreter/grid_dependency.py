"""Programmatic dependent launch under the interpreter: `copy.grid_dependency_wait` and
`copy.launch_dependents`, and chains of kernels (`run_chain`) in which a kernel that waits
for its predecessor overlaps it.

The interpreter runs grids one after the other; on the GPU a dependent kernel launched with
programmatic stream serialization may run any part of itself before its
`griddepcontrol.wait` while its primary still runs (PTX ISA, griddepcontrol). So the overlap
is modelled by what may touch what, not by one interleaving: each GMEM access is logged with
the elements it touches and whether its thread had passed a wait (`GmemLog`), and a
dependent's access made before the wait races with every access of its primary to the same
element where one of the two writes: an early read of an element the primary writes (GD2),
an early write of one the primary reads or writes (GD3), each reported at the dependent's op
with the primary's op as the other. Accesses after the wait, and the primary's writes after
its `launch_dependents` alike, are ordered by the wait (it returns once the primary completed
and its memory is visible), so they never race. A single kernel run alone has no
predecessor: the wait returns at once and the trigger does nothing.

The logged accesses are the threads' loads, stores and atomics (memref, vector) and TMA and
cp.async copies, im2col loads, TMA gather4 and scatter4 (the elements of the box inside
the array, at issue; a gather4 prefetch is a hint and touches no data).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import builtin

from copy_dialect import ops as copy
from copy_dialect.grid_dependency import is_wait
from interpreter.gmem_log import GmemLog
from interpreter.machine import Agent, Violation
from interpreter.ops_std import handles
from passes.nvvm.griddepcontrol import GriddepcontrolOp


@handles(copy.GridDependencyWaitOp)
def grid_dependency_wait(agent: Agent, op: copy.GridDependencyWaitOp, mask: np.ndarray) -> None:
    waited = getattr(agent.cta, "waited", None)
    if waited is None:
        waited = agent.cta.waited = np.zeros(agent.cta.threads, dtype=bool)
    waited |= mask


@handles(copy.LaunchDependentsOp)
def launch_dependents(agent: Agent, op: copy.LaunchDependentsOp, mask: np.ndarray) -> None:
    return None  # lets the dependent start early: no effect on what either computes


@handles(GriddepcontrolOp)
def griddepcontrol(agent: Agent, op: GriddepcontrolOp, mask: np.ndarray) -> None:
    """Upstream NVVM's `nvvm.griddepcontrol` in input IR: its wait is the copy op's."""
    if is_wait(op):
        grid_dependency_wait(agent, op, mask)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Launch:
    """One launch of a chain: the kernel's name, its arguments (the same numpy array given
    to two launches is one buffer), its grid and block."""

    kernel: str
    arguments: Sequence[Any]
    grid: Sequence[int] = (1, 1, 1)
    block: Sequence[int] | None = None


def chain_races(dependent: GmemLog, primary: GmemLog, keys: dict[int, int]) -> list[Violation]:
    """The dependent's early accesses that race with its primary's (GD2, GD3). `keys`: the
    buffer each run's flat array lies in, by the array's id."""
    found: list[Violation] = []
    seen: set[tuple[int, int, tuple[int, int, int]]] = set()
    for early in (a for a in dependent.accesses if a.early):
        for other in primary.accesses:
            if keys[id(early.flat)] != keys[id(other.flat)] or not (early.write or other.write):
                continue
            pair = (id(early.op), id(other.op), early.cta)
            if pair in seen:
                continue
            common = np.intersect1d(early.addresses, other.addresses, assume_unique=True)
            if not common.size:
                continue
            seen.add(pair)
            rule = "GD3" if early.write else "GD2"
            verb = "writes" if early.write else "reads"
            theirs = "writes" if other.write else "reads"
            found.append(
                Violation(
                    rule,
                    early.op,
                    f"{verb} element {int(common[0])} of a buffer the predecessor kernel "
                    f"{theirs} ({common.size} elements in all) before "
                    "copy.grid_dependency_wait: under programmatic dependent launch the two "
                    "kernels overlap, and only the wait orders the predecessor's accesses "
                    "before this one",
                    early.cta,
                    other.op,
                )  # fmt: skip
            )
    return found


def run_chain(
    module: builtin.ModuleOp,
    launches: Sequence[Launch],
    schedule: str = "random",
    seed: int = 0,
) -> tuple[list[np.ndarray], list[Violation]]:
    """Runs `launches` in order on one stream, as the runtime launches them: each kernel
    that waits for its predecessor (`copy.waits_for_predecessor`) with programmatic stream
    serialization, its accesses before the wait checked against the whole of its
    predecessor's. Returns the buffers as the chain leaves them (one per distinct numpy
    argument, in order of first use) and the rules the runs broke."""
    from interpreter.run import kernel_named, run

    buffers: dict[int, np.ndarray] = {}
    violations: list[Violation] = []
    previous: GmemLog | None = None
    keys: dict[int, int] = {}
    for launch in launches:
        for a in launch.arguments:
            if isinstance(a, np.ndarray) and id(a) not in buffers:
                buffers[id(a)] = np.array(a, copy=True)
        arrays = [buffers[id(a)] if isinstance(a, np.ndarray) else a for a in launch.arguments]
        log = GmemLog()
        result = run(
            module, *arrays, grid=launch.grid, block=launch.block, kernel=launch.kernel,
            schedule=schedule, seed=seed, gmem_log=log,
        )  # fmt: skip
        violations += result.violations
        for access in log.accesses:
            for a, copied in zip(launch.arguments, result.arrays, strict=True):
                if isinstance(a, np.ndarray) and np.shares_memory(access.flat, copied):
                    keys[id(access.flat)] = id(a)
        for a, copied in zip(launch.arguments, result.arrays, strict=True):
            if isinstance(a, np.ndarray):
                buffers[id(a)][...] = copied
        fn = kernel_named(module, launch.kernel)
        if previous is not None and copy.waits_for_predecessor(fn):
            violations += chain_races(log, previous, keys)
        previous = log
    return list(buffers.values()), violations
