"""The thread-collective matrix copies (`copy.ldmatrix`, `copy.stmatrix`): each warp moves
its matrices between the 16-byte rows its threads address and its threads' registers, in
the fragment layout of the PTX ISA.

Per warp, thread `s` (of the first `rows * num`) addresses row `s` of the warp's rows
(matrix `s // rows`, `copy_dialect.matrix.ROWS`); its 16 bytes are read (or written) as
that thread's SMEM access (race-checked as the thread's, as any thread access). Which row
byte each register byte of each lane holds (`fragment`):

- m8n8 (b16), lane `t`, register `m` (matrix `m`): the row `8m + t // 4`, bytes
  `4 (t % 4)` .. `+ 3` (elements `2 (t % 4)`, `+ 1`); with `trans`, half `h` of the register
  is element `t // 4` of row `8m + 2 (t % 4) + h`;
- m16n16 .trans (b8, ldmatrix), lane `t = a + 4b`, registers `2m + q`: byte `k` (`v = k % 2`,
  `w = k // 2`) is byte `b + 8w` of row `16m + 4a + 2q + v`: each thread holds 4
  consecutive rows (columns of the transposed matrix) across 2 columns (`b`, `b + 8`), as
  the PTX ISA's figure and CUTLASS's `SM100_U8x8_LDSM_T` / `SM100_U8x16_LDSM_T` traits say;
- m16n8 .trans (b8, stmatrix), lane `t = a + 4b`, register `m`: byte `k` is byte `b + 8w`
  of row `8m + 2a + v` (CUTLASS's `SM100_U8x4/8/16_STSM_T`): an 8-bit accumulator
  fragment's rows `b` and `b + 8`, columns `2a`, `2a + 1`.

The decompressing sources (`format b6x16_p32 / b4x16_p64`) are not modelled (the run stops
there).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from copy_dialect import matrix
from copy_dialect import ops as copy
from interpreter.machine import WARP, Agent, Step
from interpreter.memory import SmemRef, read_smem, write_smem
from interpreter.ops_std import handles, indices, set_result, smem_access
from interpreter.values import InterpretError, storage_dtype, to_register, to_storage


@cache
def fragment(shape: copy.MatrixShape, num: int, trans: bool) -> tuple[np.ndarray, np.ndarray]:
    """(row, byte) of the warp's rows that each (lane, register byte) holds: two int arrays
    of shape (32, 4 * registers)."""
    regs = matrix.registers(shape, num)
    row = np.zeros((WARP, 4 * regs), np.int64)
    byte = np.zeros((WARP, 4 * regs), np.int64)
    for t in range(WARP):
        a, b = t % 4, t // 4
        for r in range(regs):
            for k in range(4):
                v, w = k % 2, k // 2
                if shape == copy.MatrixShape.M8N8 and not trans:
                    row[t, 4 * r + k], byte[t, 4 * r + k] = 8 * r + b, 4 * a + k
                elif shape == copy.MatrixShape.M8N8:
                    row[t, 4 * r + k], byte[t, 4 * r + k] = 8 * r + 2 * a + w, 2 * b + v
                elif shape == copy.MatrixShape.M16N16:
                    m, q = divmod(r, 2)
                    row[t, 4 * r + k] = 16 * m + 4 * a + 2 * q + v
                    byte[t, 4 * r + k] = b + 8 * w
                else:
                    row[t, 4 * r + k], byte[t, 4 * r + k] = 8 * r + 2 * a + v, b + 8 * w
    return row, byte


def _rows(agent: Agent, op: copy.LdmatrixOp | copy.StmatrixOp, mask: np.ndarray):
    """The SMEM ref, its row width in elements, the element dtype, and the threads that
    address rows (lane < rows * num of each warp that runs the op)."""
    if isinstance(op, copy.LdmatrixOp) and op.format is not None:
        raise InterpretError(
            op, f"ldmatrix format {op.format.data} is not modelled by the interpreter"
        )
    ref = agent.get(op.smem)
    if not isinstance(ref, SmemRef):
        raise InterpretError(op, "a matrix copy of this ref is not modelled by the interpreter")
    dtype = storage_dtype(ref.element_type)
    width = matrix.ROW_BYTES // dtype.itemsize
    lane = agent.cta.thread_ids % WARP
    addressing = mask & (lane < matrix.address_threads(op.matrix_shape, op.matrices))
    return ref, width, dtype, addressing


def _warps(mask: np.ndarray) -> np.ndarray:
    return np.unique(np.nonzero(mask)[0] // WARP)


@handles(copy.LdmatrixOp)
def ldmatrix(agent: Agent, op: copy.LdmatrixOp, mask: np.ndarray) -> Step:
    ref, width, dtype, addressing = _rows(agent, op, mask)
    idx = indices(agent, op, op.indices)
    offsets, _, _ = yield from smem_access(agent, op, ref, idx, addressing, width, False)
    threads = agent.cta.threads
    data = np.zeros((threads, width), dtype)
    active = np.nonzero(addressing)[0]
    data[active] = read_smem(agent.cta.smem, offsets[active], dtype)
    row_bytes = data.view(np.uint8).reshape(threads, matrix.ROW_BYTES)
    row, byte = fragment(op.matrix_shape, op.matrices, op.trans is not None)
    out = np.zeros((threads, row.shape[1]), np.uint8)
    for w in _warps(mask):
        base = w * WARP
        out[base : base + WARP] = row_bytes[base + row, byte]
    t = op.result.type
    element = storage_dtype(t)
    set_result(agent, op, to_register(t, np.ascontiguousarray(out).view(element)))


@handles(copy.StmatrixOp)
def stmatrix(agent: Agent, op: copy.StmatrixOp, mask: np.ndarray) -> Step:
    ref, width, dtype, addressing = _rows(agent, op, mask)
    idx = indices(agent, op, op.indices)
    threads = agent.cta.threads
    t = op.value.type
    value = to_storage(t, np.broadcast_to(agent.get(op.value), (threads, t.get_shape()[0])))
    registers = np.ascontiguousarray(value).view(np.uint8).reshape(threads, -1)
    row, byte = fragment(op.matrix_shape, op.matrices, op.trans is not None)
    row_bytes = np.zeros((threads, matrix.ROW_BYTES), np.uint8)
    for w in _warps(mask):
        base = w * WARP
        row_bytes[base + row, byte] = registers[base : base + WARP]
    offsets, active, _ = yield from smem_access(agent, op, ref, idx, addressing, width, True)
    data = row_bytes.view(dtype).reshape(threads, width)
    write_smem(agent.cta.smem, offsets[active].reshape(-1), data[active].reshape(-1), dtype)
