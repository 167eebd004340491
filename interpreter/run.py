"""Running a kernel: its arguments bound to the caller's arrays, a machine per cluster of
the grid, the rules the run broke."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import lcm, prod
from typing import Any

import numpy as np
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import DenseArrayBase, IndexType, MemRefType, i1

from copy_dialect import ops as copy
from copy_dialect.memory import GMEM, memory_space
from copy_dialect.verify_common import kernel_cluster_shape
from interpreter import packed
from interpreter.machine import Agent, Cta, Machine, Schedule, Violation, run_block
from interpreter.memory import GmemRef
from interpreter.ops_clc import LaunchQueue
from interpreter.ops_tmem import leaks
from interpreter.values import InterpretError, register_dtype, storage_dtype


@dataclass
class Run:
    """What a run did: the arrays as the kernel left them and the rules it broke."""

    arrays: list[np.ndarray]
    violations: list[Violation] = field(default_factory=list)


class KernelViolation(Exception):
    """A run broke rules: each with its id, op, CTA and what happened."""

    def __init__(self, violations: list[Violation]):
        self.violations = violations
        lines = "\n".join(f"  {v}" for v in violations[:20])
        more = f"\n  ... and {len(violations) - 20} more" if len(violations) > 20 else ""
        super().__init__(f"the kernel broke {len(violations)} rule(s):\n{lines}{more}")


def copy_kernels(module: builtin.ModuleOp) -> list[func.FuncOp]:
    """The functions of `module` with a body that hold copy ops, in order."""
    return [
        op for op in module.walk()
        if isinstance(op, func.FuncOp) and op.body.blocks
        and any(o.dialect_name() == "copy" for o in op.walk())
    ]  # fmt: skip


def kernel_named(module: builtin.ModuleOp, name: str | None) -> func.FuncOp:
    kernels = [
        op for op in module.walk()
        if isinstance(op, func.FuncOp) and op.body.blocks and "gpu.kernel" in op.attributes
    ]  # fmt: skip
    if not kernels:
        kernels = [op for op in module.walk() if isinstance(op, func.FuncOp) and op.body.blocks]
    if name is not None:
        kernels = [k for k in kernels if k.sym_name.data == name]
    if len(kernels) != 1:
        names = ", ".join(k.sym_name.data for k in kernels) or "none"
        raise ValueError(
            f"expected one kernel{f' named {name}' if name else ''}, got {names}: pass kernel="
        )
    return kernels[0]


def block_shape(kernel: func.FuncOp, block: Sequence[int] | None) -> tuple[int, int, int]:
    """The block's shape: `block`, else the kernel's gpu.known_block_size."""
    attr = kernel.attributes.get("gpu.known_block_size")
    if block is None and isinstance(attr, DenseArrayBase):
        block = tuple(int(v) for v in attr.get_values())
    if block is None:
        raise ValueError("the kernel has no gpu.known_block_size: pass block=(threads, 1, 1)")
    shape = (*tuple(block), 1, 1, 1)[:3]
    return (int(shape[0]), int(shape[1]), int(shape[2]))


def bind(kernel: func.FuncOp, arrays: Sequence[Any]) -> list[Any]:
    params = kernel.function_type.inputs.data
    if len(arrays) != len(params):
        raise ValueError(
            f"expected {len(params)} arguments for @{kernel.sym_name.data}, got {len(arrays)}"
        )
    values: list[Any] = []
    for i, (t, a) in enumerate(zip(params, arrays, strict=False)):
        if isinstance(t, MemRefType) and memory_space(t) != GMEM:
            raise InterpretError(
                kernel,
                f"argument {i} is a {memory_space(t)} memref ({t}): a kernel's memref "
                "arguments are GMEM arrays",
                note="take the array in GMEM (no memory space) and allocate SMEM and TMEM in "
                "the kernel (copy.alloc_smem, copy.tmem_alloc)",
            )
        if isinstance(t, MemRefType) and packed.is_packed(t.element_type):
            values.append(packed.bind_packed(t, a, i))
        elif isinstance(t, MemRefType):
            dtype = storage_dtype(t.element_type)
            array = np.asarray(a)
            if array.dtype != dtype:
                if array.dtype.itemsize != dtype.itemsize:
                    raise ValueError(
                        f"argument {i}: expected {t.element_type} elements ({dtype}), got "
                        f"{array.dtype}"
                    )
                array = array.view(dtype)
            shape = t.get_shape()
            if len(shape) != array.ndim or any(
                s >= 0 and s != n for s, n in zip(shape, array.shape, strict=False)
            ):
                raise ValueError(
                    f"argument {i}: expected an array of shape {shape}, got {array.shape}"
                )
            values.append(GmemRef(array, t, f"argument {i}"))
        else:
            values.append(register_dtype(t).type(a))
    return values


MAX_ELEMENTS = 1 << 24
"""The largest array `random_arguments` makes (64 MiB of f32)."""


def random_arguments(
    kernel: func.FuncOp, rng: np.random.Generator, size: int = 64, floor: int = 0
) -> list[Any]:
    """Arguments for `kernel`: a random array per memref parameter (`size` for each dynamic
    dim), and for each scalar (a parity, an index) the least value its `copy.assume` facts
    allow from `floor` on (an index), from 1 if `floor` is (an i1: true), else from 0."""
    values: list[Any] = []
    for t in kernel.function_type.inputs.data:
        if isinstance(t, MemRefType):
            shape = [d if d >= 0 else size for d in t.get_shape()]
            if prod(shape) > MAX_ELEMENTS:
                raise InterpretError(
                    kernel, f"an array of {t} is not modelled by the interpreter (too large: "
                    f"more than {MAX_ELEMENTS} elements)",
                )  # fmt: skip
            if packed.is_packed(t.element_type):  # its bytes, random
                nbytes = shape[-1] * packed.bits_of(t.element_type) // 8
                values.append(rng.integers(0, 256, (*shape[:-1], nbytes), np.uint8))
                continue
            try:
                dtype = storage_dtype(t.element_type)
            except NotImplementedError:
                raise InterpretError(
                    kernel, f"arrays of {t.element_type} are not modelled by the interpreter"
                ) from None
            if dtype.kind == "f":
                values.append(rng.standard_normal(shape).astype(dtype))
            elif dtype.kind == "b":
                values.append(rng.integers(0, 2, shape).astype(dtype))
            else:
                info = np.iinfo(dtype)
                values.append(
                    rng.integers(max(info.min, -1000), min(info.max, 1000), shape).astype(dtype)
                )
        else:
            least = floor if isinstance(t, IndexType) else min(floor, 1) if t == i1 else 0
            values.append(assumed(kernel, len(values), least))
    return values


def assumed(kernel: func.FuncOp, index: int, floor: int = 0) -> int:
    """A scalar argument's value: `floor`, or the least value above it that the kernel's
    `copy.assume` facts about the argument allow (the author's claim, which the launch must
    meet)."""
    arg = kernel.body.blocks[0].args[index]
    lo, hi, step = None, None, 1
    for use in arg.uses:
        op = use.operation
        if isinstance(op, copy.AssumeOp):
            if op.lower is not None:
                lo = max(lo, op.lower.value.data) if lo is not None else op.lower.value.data
            if op.upper is not None:
                hi = min(hi, op.upper.value.data) if hi is not None else op.upper.value.data
            if op.divisor is not None:
                step = lcm(step, op.divisor.value.data)
    value = max(floor, lo) if lo is not None else floor
    value = min(value, hi) if hi is not None else value
    up = -(-value // step) * step
    return up if hi is None or up <= hi else (value // step) * step


def run(
    module: builtin.ModuleOp,
    *arrays: Any,
    grid: Sequence[int] = (1, 1, 1),
    block: Sequence[int] | None = None,
    kernel: str | None = None,
    schedule: str = "random",
    seed: int = 0,
    max_steps: int = 10_000_000,
    clusters: int | None = None,
    gmem_log: Any = None,
) -> Run:
    """Runs the kernel on copies of `arrays` (numpy): the arrays it leaves and what it broke.
    `clusters`: run only the first that many clusters of the grid (each still sees the
    whole grid's dims), to check a persistent kernel's protocol quickly. `gmem_log`: where
    to log the GMEM accesses (`interpreter.grid_dependency.GmemLog`, for a chain)."""
    fn = kernel_named(module, kernel)
    shape = block_shape(fn, block)
    threads = prod(shape)
    grid = tuple(grid) + (1,) * (3 - len(tuple(grid)))
    cluster = kernel_cluster_shape(fn)
    if any(g % c for g, c in zip(grid, cluster, strict=True)):
        raise ValueError(f"expected a grid that is a multiple of the cluster {cluster}, got {grid}")
    copies = [np.array(a, copy=True) for a in arrays]
    values = bind(fn, copies)
    violations: list[Violation] = []
    sched = Schedule(schedule, seed)
    maps: dict[Any, dict[int, Any]] = {}  # global memory: every cluster's
    old = np.seterr(all="ignore")
    try:
        ranges = [range(g // c) for g, c in zip(grid, cluster, strict=True)]
        order = [(x, y, z) for z, y, x in itertools.product(*reversed(ranges))]
        launches = LaunchQueue(order, cluster)  # cluster launch control's (ops_clc)
        for x, y, z in itertools.islice(order, clusters):
            if not launches.start((x, y, z)):
                continue  # a try_cancel canceled it: it never runs
            machine = Machine(sched, max_steps)
            machine.maps = maps
            machine.launches = launches
            machine.gmem_log = gmem_log
            machine.grid, machine.cluster = grid, cluster
            body = fn.body.blocks[0]
            for rank, (lz, ly, lx) in enumerate(itertools.product(*map(range, reversed(cluster)))):
                block_id = (x * cluster[0] + lx, y * cluster[1] + ly, z * cluster[2] + lz)
                cta = Cta(machine, rank, (lx, ly, lz), block_id, shape)
                machine.ctas.append(cta)
                env = dict(zip(body.args, values, strict=True))
                root = Agent(cta, "the block", np.ones(threads, dtype=bool), env)
                machine.start(root, finish(root, body))
            machine.run()
            violations += machine.violations
    finally:
        np.seterr(**old)
    return Run(copies, violations)


def finish(agent: Agent, body: Any):
    yield from run_block(agent, body, agent.mask)
    agent.cta.returned = True
    machine = agent.cta.machine
    for alloc in leaks(agent.cta):
        machine.report(
            "P8", alloc, "allocates TMEM that is still allocated when the kernel returns",
            agent.cta,
        )  # fmt: skip
    for transfer in machine.copies_left(agent):
        machine.report(
            "P7", transfer.op,
            "is still in flight when the kernel returns: no wait the returning threads "
            "passed covers it",
            agent.cta,
        )  # fmt: skip


def interpret(module: builtin.ModuleOp, *arrays: Any, **options: Any) -> list[np.ndarray]:
    """The arrays as the kernel leaves them; a KernelViolation if it broke a rule."""
    result = run(module, *arrays, **options)
    if result.violations:
        raise KernelViolation(result.violations)
    return result.arrays
