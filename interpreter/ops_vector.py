"""Vectors, as the kernels use them: a vector value has one row per thread (numpy shape
(threads, n)); `vector.load` and `vector.store` move n consecutive elements along a ref's
last dim (GMEM or SMEM), `vector.broadcast` makes one from a scalar, `vector.extract` and
`vector.insert` read and replace one element (at a static or per-thread position); and
`gpu.shuffle`,
which moves a value between the lanes of a warp."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import vector
from xdsl.ir import Operation

from copy_dialect.upstream_gpu import ShuffleOp
from interpreter.gmem_log import note_gmem
from interpreter.machine import WARP, Agent, Step
from interpreter.memory import GmemRef, SmemRef
from interpreter.ops_std import (
    check_index,
    handles,
    set_result,
    smem_load,
    smem_store,
)
from interpreter.values import InterpretError, lanes, to_register, to_storage, uniform


def width_of(op: Operation, t: object) -> int:
    shape = t.get_shape()  # type: ignore[attr-defined]
    if len(shape) != 1:
        raise InterpretError(op, f"{t} is not modelled by the interpreter (1-D vectors only)")
    return int(shape[0])


def gmem_indices(
    agent: Agent, ref: GmemRef, idx: list, width: int, mask: np.ndarray, op: Operation
):
    threads = agent.cta.threads
    last = lanes(idx[-1], threads)[:, None] + np.arange(width)
    full = [lanes(i, threads)[:, None] for i in idx[:-1]] + [last]
    check_index(
        ref.array.shape, [np.broadcast_to(i, (threads, width))[:, 0] for i in full[:-1]]
        + [last[:, -1]], mask, op, "a GMEM array",
    )  # fmt: skip
    return tuple(np.broadcast_to(np.where(mask[:, None], i, 0), (threads, width)) for i in full)


def _one_lane(agent: Agent, op: vector.LoadOp, load: Step) -> Step:
    """`load` (a scalar SMEM load), its result made a vector of one lane."""
    yield from load  # type: ignore[misc]
    agent.env[op.result] = np.reshape(agent.env[op.result], (-1, 1))


@handles(vector.LoadOp)
def load(agent: Agent, op: vector.LoadOp, mask: np.ndarray) -> Step | None:
    ref = agent.get(op.base)
    idx = [agent.get(v) for v in op.indices]
    width = width_of(op, op.result.type)
    if isinstance(ref, SmemRef):
        if width == 1:  # smem_load's one element is a scalar per thread: a row of one here
            return _one_lane(agent, op, smem_load(agent, op, ref, idx, mask))
        return smem_load(agent, op, ref, idx, mask, width)
    if isinstance(ref, GmemRef):
        at = gmem_indices(agent, ref, idx, width, mask, op)
        if agent.cta.machine.gmem_log is not None:
            note_gmem(agent, op, ref, at, mask, False)
        values = ref.array[at]
        set_result(agent, op, to_register(ref.element_type, values))
        return None
    raise InterpretError(op, "a load from this ref is not modelled by the interpreter")


@handles(vector.StoreOp)
def store(agent: Agent, op: vector.StoreOp, mask: np.ndarray) -> Step | None:
    ref = agent.get(op.base)
    idx = [agent.get(v) for v in op.indices]
    width = width_of(op, op.vector.type)
    value = to_storage(ref.element_type, agent.get(op.vector))
    if isinstance(ref, SmemRef):
        if width == 1 and np.ndim(value) == 2:
            value = value[:, 0]
        return smem_store(agent, op, ref, idx, value, mask, width)
    if isinstance(ref, GmemRef):
        active = np.nonzero(mask)[0]
        full = gmem_indices(agent, ref, idx, width, mask, op)
        if agent.cta.machine.gmem_log is not None:
            note_gmem(agent, op, ref, full, mask, True)
        data = np.broadcast_to(value, (agent.cta.threads, width))
        ref.array[tuple(i[active] for i in full)] = data[active]
        return None
    raise InterpretError(op, "a store to this ref is not modelled by the interpreter")


@handles(vector.BroadcastOp)
def broadcast(agent: Agent, op: vector.BroadcastOp, mask: np.ndarray) -> None:
    width = width_of(op, op.vector.type)
    source = lanes(agent.get(op.source), agent.cta.threads)
    set_result(agent, op, np.repeat(source[:, None], width, axis=1))


def _position(
    agent: Agent, op: vector.ExtractOp | vector.InsertOp, width: int, mask: np.ndarray
) -> np.ndarray:
    """Each thread's position of the element a 1-D `vector.extract`/`insert` names."""
    (position,) = op.get_mixed_position()
    threads = agent.cta.threads
    at = lanes(position if isinstance(position, int) else agent.get(position), threads)
    at = np.asarray(at, dtype=np.int64)
    if np.any(((at < 0) | (at >= width)) & mask):
        raise InterpretError(op, f"a position outside the vector's {width} elements")
    return np.where(mask, at, 0)


@handles(vector.ExtractOp)
def extract(agent: Agent, op: vector.ExtractOp, mask: np.ndarray) -> None:
    width = width_of(op, op.vector.type)
    value = np.asarray(agent.get(op.vector))
    rows = np.broadcast_to(value, (agent.cta.threads, width))
    set_result(agent, op, rows[np.arange(agent.cta.threads), _position(agent, op, width, mask)])


@handles(vector.InsertOp)
def insert(agent: Agent, op: vector.InsertOp, mask: np.ndarray) -> None:
    width = width_of(op, op.dest.type)
    threads = agent.cta.threads
    rows = np.array(np.broadcast_to(agent.get(op.dest), (threads, width)))
    at = _position(agent, op, width, mask)
    rows[np.arange(threads), at] = np.where(
        mask, lanes(agent.get(op.source), threads), rows[np.arange(threads), at]
    )
    set_result(agent, op, rows)


@handles(ShuffleOp)
def shuffle(agent: Agent, op: ShuffleOp, mask: np.ndarray) -> None:
    threads = agent.cta.threads
    ids = agent.cta.thread_ids
    offset = lanes(agent.get(op.offset), threads).astype(np.int64)
    width = int(uniform(agent.get(op.width), mask, op, "the shuffle width"))
    lane = ids % WARP
    base = ids - lane % width
    k = lane % width
    mode = op.mode.data.value if hasattr(op.mode.data, "value") else str(op.mode.data)
    source = {"xor": k ^ offset, "up": k - offset, "down": k + offset, "idx": offset}[mode]
    valid = (source >= 0) & (source < width)
    index = np.where(valid, base + source, ids)
    value = lanes(agent.get(op.value), threads)
    if not np.all(mask[index[mask]]):
        raise InterpretError(op, "reads a lane that does not execute the shuffle")
    set_result(agent, op, value[index])
    set_result(agent, op, valid, 1)
