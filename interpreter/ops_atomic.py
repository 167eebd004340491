"""Threads' atomics, as copy-legalize makes them of TMA reductions on targets without TMA:
`memref.atomic_rmw` (upstream's kinds) and `memref.generic_atomic_rmw` (its body run on
each element's old value), on GMEM or SMEM, each thread's in turn where threads hit the same
element; and `memref.assume_alignment`, which changes nothing. Atomics are not logged as
SMEM accesses (they do not race with each other)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import memref
from xdsl.ir import Operation

from copy_dialect.upstream_memref import AtomicYieldOp, GenericAtomicRMWOp
from interpreter.gmem_log import note_gmem
from interpreter.machine import Agent, Step, run_block, yielded
from interpreter.memory import GmemRef, SmemRef, read_smem, write_smem
from interpreter.ops_std import check_index, handles, set_result, smem_offsets_of
from interpreter.values import InterpretError, lanes, storage_dtype, to_register, to_storage

KINDS: dict[int, Callable[[Any, Any], Any]] = {
    0: np.add, 1: np.add, 2: np.bitwise_and, 3: lambda old, new: new, 4: np.maximum,
    5: np.fmax, 6: np.maximum, 7: np.maximum, 8: np.minimum, 9: np.fmin, 10: np.minimum,
    11: np.minimum, 12: np.multiply, 13: np.multiply, 14: np.bitwise_or, 15: np.bitwise_xor,
}  # fmt: skip
"""memref.atomic_rmw's kinds by upstream's AtomicRMWKind number (7 and 11 compare unsigned:
the values are viewed so)."""
UNSIGNED = (7, 11)


@handles(memref.AssumeAlignmentOp)
def assume_alignment(agent: Agent, op: memref.AssumeAlignmentOp, mask: np.ndarray) -> None:
    agent.env[op.result] = agent.get(op.memref)


class Elements:
    """The elements a thread-wise access reaches: read and written in lane order."""

    def __init__(self, agent: Agent, op: Operation, ref: Any, indices: Any, mask: np.ndarray):
        self.ref = ref
        self.threads = np.nonzero(mask)[0]
        idx = [lanes(agent.get(v), agent.cta.threads) for v in indices]
        if isinstance(ref, GmemRef):
            check_index(ref.array.shape, idx, mask, op, "a GMEM array")
            if agent.cta.machine.gmem_log is not None:
                note_gmem(agent, op, ref, tuple(idx), mask, True)
            self.key = np.ravel_multi_index(tuple(i[self.threads] for i in idx), ref.array.shape)
            self.dtype = ref.array.dtype
        elif isinstance(ref, SmemRef):
            check_index(ref.shape, idx, mask, op, "an SMEM buffer")
            self.key = smem_offsets_of(ref, idx, 1, agent.cta.threads)[self.threads]
            self.dtype = storage_dtype(ref.element_type)
        else:
            raise InterpretError(op, "an atomic on this ref is not modelled by the interpreter")

    def read(self, keys: np.ndarray) -> np.ndarray:
        if isinstance(self.ref, GmemRef):
            return (
                self.ref.array.reshape(-1)[keys]
                if self.ref.array.flags.c_contiguous
                else (self.ref.array[np.unravel_index(keys, self.ref.array.shape)])
            )
        return read_smem(self.ref.smem, keys, self.dtype)

    def write(self, keys: np.ndarray, values: np.ndarray) -> None:
        if isinstance(self.ref, GmemRef):
            self.ref.array[np.unravel_index(keys, self.ref.array.shape)] = values
        else:
            write_smem(self.ref.smem, keys, values, self.dtype)

    def batches(self) -> list[np.ndarray]:
        """Positions (into `threads`) in batches of distinct elements, in lane order."""
        left = np.arange(self.threads.size)
        out = []
        while left.size:
            _, first = np.unique(self.key[left], return_index=True)
            take = np.sort(first)
            out.append(left[take])
            left = np.delete(left, take)
        return out


@handles(memref.AtomicRMWOp)
def atomic_rmw(agent: Agent, op: memref.AtomicRMWOp, mask: np.ndarray) -> None:
    ref = agent.get(op.memref)
    elements = Elements(agent, op, ref, op.indices, mask)
    kind = op.kind.value.data
    fn = KINDS.get(kind)
    if fn is None:
        raise InterpretError(op, f"atomic_rmw kind {kind} is not modelled by the interpreter")
    t = op.memref.type.element_type
    value = lanes(to_storage(t, agent.get(op.value)), agent.cta.threads)[elements.threads]
    old = np.zeros(agent.cta.threads, dtype=elements.dtype)
    for batch in elements.batches():
        keys = elements.key[batch]
        before = elements.read(keys)
        old[elements.threads[batch]] = before
        a, b = before, value[batch]
        if kind in UNSIGNED:
            u = f"uint{a.dtype.itemsize * 8}"
            a, b = a.view(u), b.view(u)
        elements.write(keys, np.asarray(fn(a, b)).astype(a.dtype).view(elements.dtype))
    set_result(agent, op, to_register(t, old))


@handles(GenericAtomicRMWOp)
def generic_atomic_rmw(agent: Agent, op: GenericAtomicRMWOp, mask: np.ndarray) -> Step:
    ref = agent.get(op.memref)
    elements = Elements(agent, op, ref, op.indices, mask)
    t = op.result.type
    block = op.atomic_body.block
    old = np.zeros(agent.cta.threads, dtype=elements.dtype)
    for batch in elements.batches():
        keys = elements.key[batch]
        before = elements.read(keys)
        lanes_of = elements.threads[batch]
        old[lanes_of] = before
        current = np.zeros(agent.cta.threads, dtype=elements.dtype)
        current[lanes_of] = before
        agent.env[block.args[0]] = to_register(t, current)
        only = np.zeros_like(mask)
        only[lanes_of] = True
        yield from run_block(agent, block, only)
        (new,) = yielded(agent, block)
        stored = lanes(to_storage(t, new), agent.cta.threads)[lanes_of]
        elements.write(keys, stored)
    set_result(agent, op, to_register(t, old))


@handles(AtomicYieldOp)
def atomic_yield(agent: Agent, op: AtomicYieldOp, mask: np.ndarray) -> None:
    return None
