"""The upstream ops the kernels use, per thread, vectorised over the agent's threads: arith,
math, scf (structured control flow, with masks where threads diverge), memref (GMEM and
SMEM element accesses), gpu (ids, dims, the block barrier) and func.return."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, gpu, math, memref, scf
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Operation

from interpreter import packed
from interpreter.gmem_log import note_gmem
from interpreter.machine import WARP, Agent, Step, run_block, yielded
from interpreter.memory import GmemRef, SmemRef, read_smem, write_smem
from interpreter.races import Access
from interpreter.values import (
    InterpretError,
    RuleBroken,
    Value,
    lanes,
    merge,
    register_dtype,
    round_register,
    storage_dtype,
    to_register,
    to_storage,
)

Handler = Callable[[Agent, Any, np.ndarray], Step | None]
HANDLERS: dict[type[Operation], Handler] = {}


def handles(*types: type[Operation]) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for t in types:
            HANDLERS[t] = fn
        return fn

    return register


def result_type(op: Operation) -> Any:
    return op.results[0].type


def unsigned(x: Value, t: Any) -> Value:
    dtype = register_dtype(t)
    return np.asarray(x, dtype=dtype).view(f"uint{dtype.itemsize * 8}")


def set_result(agent: Agent, op: Operation, value: Value, i: int = 0) -> None:
    t = op.results[i].type
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    dtype = register_dtype(t)
    if isinstance(value, np.ndarray):
        agent.env[op.results[i]] = round_register(t, value.astype(dtype, copy=False))
    else:
        agent.env[op.results[i]] = round_register(t, dtype.type(value))


# --- arith --------------------------------------------------------------------------------


@handles(arith.ConstantOp)
def constant(agent: Agent, op: arith.ConstantOp, mask: np.ndarray) -> None:
    value = op.value
    if isinstance(value, IntegerAttr | FloatAttr):
        set_result(agent, op, value.value.data)
        return
    raise InterpretError(
        op, f"a constant {value} is not modelled by the interpreter (scalars only)"
    )


def maximumf(a: Value, b: Value) -> Value:
    """IEEE 754-2019 `maximum` (`arith.maximumf`, PTX `max.NaN`): NaN if either is NaN, and
    +0.0 above -0.0 (numpy's `maximum` returns its first operand of two equal zeros)."""
    r = np.maximum(a, b)
    both_zero = (np.asarray(a) == 0) & (np.asarray(b) == 0)
    return np.where(both_zero, np.where(np.signbit(a) & np.signbit(b), a, np.abs(a)), r)


def minimumf(a: Value, b: Value) -> Value:
    """IEEE 754-2019 `minimum` (`arith.minimumf`, PTX `min.NaN`): NaN if either is NaN, and
    -0.0 below +0.0."""
    r = np.minimum(a, b)
    both_zero = (np.asarray(a) == 0) & (np.asarray(b) == 0)
    return np.where(both_zero, np.where(np.signbit(a) | np.signbit(b), -np.abs(a), a), r)


BINARY: dict[type[Operation], Callable[[Value, Value], Value]] = {
    arith.AddiOp: np.add,
    arith.SubiOp: np.subtract,
    arith.MuliOp: np.multiply,
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.MaxSIOp: np.maximum,
    arith.MinSIOp: np.minimum,
    arith.MaximumfOp: maximumf,
    arith.MinimumfOp: minimumf,
    arith.MaxnumfOp: np.fmax,
    arith.MinnumfOp: np.fmin,
}


@handles(*BINARY)
def binary(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    a, b = agent.get(op.operands[0]), agent.get(op.operands[1])
    set_result(agent, op, BINARY[type(op)](a, b))


def _safe(b: Value) -> Value:
    return np.where(np.asarray(b) == 0, 1, b)


@handles(arith.DivSIOp, arith.RemSIOp, arith.FloorDivSIOp, arith.CeilDivSIOp)
def signed_division(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    a, b = agent.get(op.operands[0]), _safe(agent.get(op.operands[1]))
    q = np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))  # toward zero
    if isinstance(op, arith.DivSIOp):
        set_result(agent, op, q)
    elif isinstance(op, arith.RemSIOp):
        set_result(agent, op, a - q * b)
    elif isinstance(op, arith.FloorDivSIOp):
        set_result(agent, op, np.floor_divide(a, b))
    else:
        set_result(agent, op, -np.floor_divide(-a, b))


@handles(
    arith.DivUIOp, arith.RemUIOp, arith.CeilDivUIOp, arith.ShRUIOp, arith.MaxUIOp, arith.MinUIOp
)
def unsigned_binary(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    t = result_type(op)
    a = unsigned(agent.get(op.operands[0]), t)
    b = unsigned(agent.get(op.operands[1]), t)
    if isinstance(op, arith.DivUIOp):
        r = a // _safe(b)
    elif isinstance(op, arith.RemUIOp):
        r = a % _safe(b)
    elif isinstance(op, arith.CeilDivUIOp):
        r = -(-a // _safe(b))
    elif isinstance(op, arith.ShRUIOp):
        r = a >> b
    elif isinstance(op, arith.MaxUIOp):
        r = np.maximum(a, b)
    else:
        r = np.minimum(a, b)
    set_result(agent, op, np.asarray(r).view(register_dtype(t)))


@handles(arith.ShLIOp, arith.ShRSIOp)
def shift(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    a, b = agent.get(op.operands[0]), agent.get(op.operands[1])
    set_result(
        agent, op, np.left_shift(a, b) if isinstance(op, arith.ShLIOp) else np.right_shift(a, b)
    )


CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
COMPARE: dict[str, Callable[[Value, Value], Value]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}  # fmt: skip


@handles(arith.CmpiOp)
def cmpi(agent: Agent, op: arith.CmpiOp, mask: np.ndarray) -> None:
    name = CMPI[op.predicate.value.data]
    a, b = agent.get(op.lhs), agent.get(op.rhs)
    if name[0] == "u":
        a, b = unsigned(a, op.lhs.type), unsigned(b, op.lhs.type)
    set_result(agent, op, COMPARE[name[-2:] if name not in ("eq", "ne") else name](a, b))


CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult",
        "ule", "une", "uno", "true"]  # fmt: skip


@handles(arith.CmpfOp)
def cmpf(agent: Agent, op: arith.CmpfOp, mask: np.ndarray) -> None:
    name = CMPF[op.predicate.value.data]
    a, b = agent.get(op.lhs), agent.get(op.rhs)
    nan = np.isnan(a) | np.isnan(b)
    if name == "false":
        r = np.zeros_like(nan)
    elif name == "true":
        r = np.ones_like(nan)
    elif name == "ord":
        r = ~nan
    elif name == "uno":
        r = nan
    else:
        base = {"eq": np.equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
                "le": np.less_equal, "ne": np.not_equal}[name[1:]](a, b)  # fmt: skip
        r = (base & ~nan) if name[0] == "o" else (base | nan)
    set_result(agent, op, r)


@handles(arith.SelectOp)
def select(agent: Agent, op: arith.SelectOp, mask: np.ndarray) -> None:
    cond = agent.get(op.cond)
    a, b = agent.get(op.lhs), agent.get(op.rhs)
    set_result(agent, op, merge(cond, a, b) if np.ndim(cond) else np.where(cond, a, b))


@handles(
    arith.IndexCastOp, arith.ExtSIOp, arith.TruncIOp, arith.SIToFPOp, arith.FPToSIOp,
    arith.ExtFOp, arith.TruncFOp, arith.FPToUIOp,
)  # fmt: skip
def convert(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    x = agent.get(op.operands[0])
    t = result_type(op)
    if isinstance(op, arith.FPToSIOp | arith.FPToUIOp):
        x = np.trunc(x)
    if (
        isinstance(t, IntegerType)
        and t.width.data == 1
        and isinstance(op, arith.IndexCastOp | arith.TruncIOp)
    ):
        x = (np.asarray(x).astype(np.int64) & 1).astype(bool)  # truncation keeps bit 0
    elif isinstance(op, arith.TruncIOp | arith.IndexCastOp) and isinstance(t, IntegerType):
        x = np.asarray(x).astype(np.int64).astype(register_dtype(t))  # wraps, as truncation
    set_result(agent, op, x)


@handles(arith.ExtUIOp, arith.UIToFPOp)
def convert_unsigned(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    source = op.operands[0].type
    x = agent.get(op.operands[0])
    if not (isinstance(source, IntegerType) and source.width.data == 1):
        x = unsigned(x, source)
    set_result(agent, op, x)


@handles(arith.BitcastOp)
def bitcast(agent: Agent, op: arith.BitcastOp, mask: np.ndarray) -> None:
    x = to_storage(op.operands[0].type, agent.get(op.operands[0]))
    raw = np.asarray(x).view(storage_dtype(result_type(op)))
    set_result(agent, op, to_register(result_type(op), raw))


@handles(arith.NegfOp)
def negf(agent: Agent, op: arith.NegfOp, mask: np.ndarray) -> None:
    set_result(agent, op, np.negative(agent.get(op.operand)))


UNARY_MATH: dict[type[Operation], Callable[[Value], Value]] = {
    math.AbsFOp: np.abs, math.AbsIOp: np.abs, math.SqrtOp: np.sqrt, math.ExpOp: np.exp,
    math.Exp2Op: np.exp2, math.LogOp: np.log, math.Log2Op: np.log2, math.TanhOp: np.tanh,
    math.FloorOp: np.floor, math.CeilOp: np.ceil, math.SinOp: np.sin, math.CosOp: np.cos,
    math.RsqrtOp: lambda x: 1 / np.sqrt(x),
}  # fmt: skip


@handles(*UNARY_MATH)
def unary_math(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    set_result(agent, op, UNARY_MATH[type(op)](agent.get(op.operands[0])))


@handles(math.FmaOp)
def fma(agent: Agent, op: math.FmaOp, mask: np.ndarray) -> None:
    a, b, c = (agent.get(v) for v in op.operands)
    set_result(agent, op, a * b + c)


# --- gpu ----------------------------------------------------------------------------------

DIMS = {"x": 0, "y": 1, "z": 2}


def dim_of(op: Operation) -> int:
    return DIMS[str(op.dimension.data).split(".")[-1].strip("<>#gpu dim").strip() or "x"]


@handles(gpu.ThreadIdOp)
def thread_id(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    ids = agent.cta.thread_xyz[dim_of(op)]
    set_result(agent, op, ids if agent.cta.block[dim_of(op)] > 1 else np.int64(0))


@handles(gpu.BlockIdOp)
def block_id(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    set_result(agent, op, np.int64(agent.cta.block_id[dim_of(op)]))


@handles(gpu.BlockDimOp)
def block_dim(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    set_result(agent, op, np.int64(agent.cta.block[dim_of(op)]))


@handles(gpu.GridDimOp)
def grid_dim(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    set_result(agent, op, np.int64(agent.cta.machine.grid[dim_of(op)]))


@handles(gpu.LaneIdOp)
def lane_id(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    set_result(agent, op, agent.cta.thread_ids % 32)


@handles(gpu.BarrierOp)
def block_barrier(agent: Agent, op: Operation, mask: np.ndarray) -> Step:
    from interpreter.ops_roles import block_sync

    yield from block_sync(agent, op, mask)


@handles(func.ReturnOp, scf.YieldOp, scf.ConditionOp)
def terminator(agent: Agent, op: Operation, mask: np.ndarray) -> None:
    return None


# --- scf ----------------------------------------------------------------------------------


@handles(scf.IfOp)
def if_op(agent: Agent, op: scf.IfOp, mask: np.ndarray) -> Step:
    cond = np.asarray(agent.get(op.cond), dtype=bool)
    then_mask = mask & cond
    else_mask = mask & ~cond
    outs: list[list[Value]] = []
    taken: list[np.ndarray] = []
    for region, m in ((op.true_region, then_mask), (op.false_region, else_mask)):
        if not region.blocks:
            continue
        if m.any():
            yield from run_block(agent, region.blocks[0], m)
            outs.append(yielded(agent, region.blocks[0]))
            taken.append(m)
    for i, r in enumerate(op.results):
        value: Value = None
        for m, out in zip(taken, outs, strict=False):
            value = out[i] if value is None else merge(m, out[i], value)
        if value is None:
            value = register_dtype(r.type).type(0) if not isinstance(r.type, MemRefType) else None
        agent.env[r] = value


@handles(scf.ForOp)
def for_op(agent: Agent, op: scf.ForOp, mask: np.ndarray) -> Step:
    lb, ub, step = agent.get(op.lb), agent.get(op.ub), agent.get(op.step)
    body = op.body.blocks[0]
    carried = [agent.get(v) for v in op.iter_args]
    if all(not isinstance(x, np.ndarray) or x.ndim == 0 for x in (lb, ub, step)):
        i = lb
        while i < ub:
            agent.env[body.args[0]] = i
            for arg, value in zip(body.args[1:], carried, strict=False):
                agent.env[arg] = value
            yield from run_block(agent, body, mask)
            carried = yielded(agent, body)
            i = i + step
    else:  # bounds that differ between threads: each thread runs its own trips
        i = lanes(lb, agent.cta.threads)
        ub, step = lanes(ub, agent.cta.threads), lanes(step, agent.cta.threads)
        while True:
            active = mask & (i < ub)
            if not active.any():
                break
            agent.env[body.args[0]] = i
            for arg, value in zip(body.args[1:], carried, strict=False):
                agent.env[arg] = value
            yield from run_block(agent, body, active)
            out = yielded(agent, body)
            carried = [merge(active, o, c) for o, c in zip(out, carried, strict=False)]
            i = np.where(active, i + step, i)
    for r, value in zip(op.results, carried, strict=False):
        agent.env[r] = value


@handles(scf.WhileOp)
def while_op(agent: Agent, op: scf.WhileOp, mask: np.ndarray) -> Step:
    before, after = op.before_region.blocks[0], op.after_region.blocks[0]
    values = [agent.get(v) for v in op.arguments]
    active = mask.copy()
    results: list[Value] = [None] * len(op.results)
    while True:
        for arg, value in zip(before.args, values, strict=False):
            agent.env[arg] = value
        yield from run_block(agent, before, active)
        condition = before.last_op
        assert isinstance(condition, scf.ConditionOp)
        cond = np.asarray(agent.get(condition.condition), dtype=bool)
        passed = [agent.get(v) for v in condition.args]
        leaving = active & ~cond
        for k, value in enumerate(passed):
            results[k] = value if results[k] is None else merge(leaving, value, results[k])
        active = active & cond
        if not active.any():
            break
        for arg, value in zip(after.args, passed, strict=False):
            agent.env[arg] = value
        yield from run_block(agent, after, active)
        values = yielded(agent, after)
    for r, value in zip(op.results, results, strict=False):
        agent.env[r] = value


# --- memref -------------------------------------------------------------------------------


def indices(agent: Agent, op: Operation, values: Any) -> list[Value]:
    return [agent.get(v) for v in values]


def check_index(shape: Any, idx: list[Value], mask: np.ndarray, op: Operation, what: str) -> None:
    """An InterpretError for an index outside `shape` in a thread of `mask`."""
    for d, (i, n) in enumerate(zip(idx, shape, strict=True)):
        arr = np.asarray(i)
        bad = (arr < 0) | (arr >= n)
        if arr.ndim:
            bad &= mask
        if np.any(bad):
            first = int(arr[bad][0]) if arr.ndim else int(arr)
            raise RuleBroken(
                op, "bounds", f"accesses index {first} of dim {d} of {what} of {n}: out of bounds"
            )


def gmem_index(ref: GmemRef, idx: list[Value], mask: np.ndarray, op: Operation) -> tuple:
    check_index(ref.array.shape, idx, mask, op, "a GMEM array")
    return tuple(np.asarray(i) for i in idx)


@handles(memref.LoadOp)
def load(agent: Agent, op: memref.LoadOp, mask: np.ndarray) -> Step | None:
    ref = agent.get(op.memref)
    idx = indices(agent, op, op.indices)
    t = op.memref.type.element_type
    packed.check_thread_access(op, t)
    if isinstance(ref, GmemRef):
        gi = gmem_index(ref, idx, mask, op)
        if agent.cta.machine.gmem_log is not None:
            note_gmem(agent, op, ref, gi, mask, False)
        if all(np.ndim(i) == 0 for i in gi):
            set_result(agent, op, to_register(t, ref.array[gi]))
            return None
        full = tuple(lanes(i, agent.cta.threads) for i in gi)
        safe = tuple(np.where(mask, i, 0) for i in full)
        set_result(agent, op, to_register(t, ref.array[safe]))
        return None
    if isinstance(ref, SmemRef):
        return smem_load(agent, op, ref, idx, mask)
    raise InterpretError(op, "a load from this ref is not modelled by the interpreter")


def smem_offsets_of(ref: SmemRef, idx: list[Value], width: int, threads: int) -> np.ndarray:
    """Each thread's SMEM byte offset of element `idx` (shape (threads,)), or of the `width`
    consecutive elements along the last dim from it (shape (threads, width))."""
    if width == 1:
        return lanes(ref.offsets(idx), threads)
    last = lanes(idx[-1], threads)
    rows = [lanes(ref.offsets([*idx[:-1], last + k]), threads) for k in range(width)]
    return np.stack(rows, axis=1)


def smem_load(
    agent: Agent, op: Operation, ref: SmemRef, idx: list[Value], mask: np.ndarray, width: int = 1
) -> Step:
    """Each thread of `mask` reads element `idx` (or `width` elements from it) of `ref`."""
    offsets, active, dtype = yield from smem_access(agent, op, ref, idx, mask, width, False)
    values = np.zeros(offsets.shape, dtype=dtype)
    values[active] = read_smem(agent.cta.smem, offsets[active], dtype)
    set_result(agent, op, to_register(ref.element_type, values))


def smem_access(
    agent: Agent,
    op: Operation,
    ref: SmemRef,
    idx: list[Value],
    mask: np.ndarray,
    width: int,
    write: bool,
) -> Generator[None, None, tuple[np.ndarray, np.ndarray, np.dtype]]:
    """A thread access of `ref` checked, made a scheduling point and logged: each thread's
    offsets, the active threads and the element dtype."""
    check_smem_index(ref, idx, mask, op, width)
    offsets = smem_offsets_of(ref, idx, width, agent.cta.threads)
    dtype = storage_dtype(ref.element_type)
    yield None
    active = np.nonzero(mask)[0]
    verb = "writes" if write else "reads"
    log_thread_access(agent, op, ref, offsets[active], active, dtype.itemsize, write, verb)
    return offsets, active, dtype


def check_smem_index(
    ref: SmemRef, idx: list[Value], mask: np.ndarray, op: Operation, width: int = 1
) -> None:
    check_index(ref.shape, idx, mask, op, "an SMEM buffer")
    if width > 1:
        check_index(
            ref.shape, [*idx[:-1], np.asarray(idx[-1]) + width - 1], mask, op, "an SMEM buffer"
        )


def log_thread_access(
    agent: Agent,
    op: Operation,
    ref: SmemRef,
    offsets: np.ndarray,
    threads: np.ndarray,
    size: int,
    write: bool,
    verb: str,
) -> None:
    per_thread = offsets.size // max(1, threads.size)
    byte_offsets = (offsets.reshape(-1)[:, None] + np.arange(size)).reshape(-1)
    byte_threads = np.repeat(threads, per_thread * size)
    order = np.argsort(byte_offsets, kind="stable")
    byte_offsets, byte_threads = byte_offsets[order], byte_threads[order]
    # one entry per byte: the last thread that touches it
    keep = np.ones(byte_offsets.size, dtype=bool)
    keep[:-1] = byte_offsets[1:] != byte_offsets[:-1]
    byte_offsets, byte_threads = byte_offsets[keep], byte_threads[keep]
    # One access, checked with what the agent knows; where its warps know different things
    # (a wait that only some of them made), one access per warp, each with its warp's.
    parts = [(byte_offsets, byte_threads, agent.clock)]
    if agent.warp_clocks is not None:
        warps = byte_threads // WARP
        parts = []
        for w in np.unique(warps):
            mine = warps == w
            parts.append((byte_offsets[mine], byte_threads[mine], agent.warp_clock(int(w))))
    for part_offsets, part_threads, clock in parts:
        access = Access(
            write, False, part_offsets, part_threads, agent.epoch, agent,
            agent.published[part_threads],
            op, f"{agent.name} {verb}",
        )  # fmt: skip
        agent.cta.machine.races(agent.cta.smem.log.check(access, clock), agent.cta)


@handles(memref.StoreOp)
def store(agent: Agent, op: memref.StoreOp, mask: np.ndarray) -> Step | None:
    ref = agent.get(op.memref)
    idx = indices(agent, op, op.indices)
    t = op.memref.type.element_type
    packed.check_thread_access(op, t)
    value = to_storage(t, agent.get(op.value))
    threads = agent.cta.threads
    if isinstance(ref, GmemRef):
        gi = gmem_index(ref, idx, mask, op)
        if agent.cta.machine.gmem_log is not None:
            note_gmem(agent, op, ref, gi, mask, True)
        active = np.nonzero(mask)[0]
        full = tuple(lanes(i, threads)[active] for i in gi)
        ref.array[full] = lanes(value, threads)[active]
        return None
    if isinstance(ref, SmemRef):
        return smem_store(agent, op, ref, idx, value, mask)
    raise InterpretError(op, "a store to this ref is not modelled by the interpreter")


def smem_store(
    agent: Agent,
    op: Operation,
    ref: SmemRef,
    idx: list[Value],
    value: Value,
    mask: np.ndarray,
    width: int = 1,
) -> Step:
    """Each thread of `mask` writes its `value` (of `width` elements) at `idx` of `ref`."""
    offsets, active, dtype = yield from smem_access(agent, op, ref, idx, mask, width, True)
    values = np.broadcast_to(np.asarray(value), offsets.shape)
    write_smem(agent.cta.smem, offsets[active].reshape(-1), values[active].reshape(-1), dtype)


__all__ = ["HANDLERS", "handles", "set_result"]
