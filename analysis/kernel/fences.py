"""The fence between the threads' SMEM writes and a TMA store (or scatter4) that reads them
(rule J16),
within one block: a store from a buffer the threads wrote earlier in its block, with
neither a `copy.fence_async_shared` nor another store from that buffer in between. Across
blocks, roles and loops it is the protocol analysis's (P4)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import memref
from xdsl.ir import Block, Operation, SSAValue

from analysis.kernel.kernel import Kernel
from copy_dialect.copies import AsyncCopyOp
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.gather4 import Scatter4Op
from copy_dialect.smem import FenceAsyncSharedOp


def check_fenced_stores(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """Each TMA or bulk store of `kernel` reads SMEM the threads' writes were fenced for."""
    blocks: dict[int, set[Operation]] = {}
    for op in kernel.instances(AsyncCopyOp, Scatter4Op):
        if op.is_load or op.parent is None:
            continue
        impl = op.resolved_implementation()
        if not isinstance(op, Scatter4Op) and (impl is None or not impl.is_bulk_async):
            continue
        block = op.parent
        if id(block) not in blocks:
            blocks[id(block)] = unfenced_stores(block)
        # rule: J16
        if op in blocks[id(block)]:
            yield (
                op,
                Error(
                    "SMEM written by threads must be made visible to the TMA unit before a "
                    "TMA store reads it",
                    note="add copy.fence_async_shared after the writes and before the copy, in "
                    "this block (it includes the block barrier)",
                ),
            )


def unfenced_stores(block: Block) -> set[Operation]:
    """The SMEM -> GMEM copies of `block` whose buffer the threads wrote earlier in the block
    with neither a `copy.fence_async_shared` nor another store from that buffer in between
    (rule J16). One pass over the block."""
    # Buffers the threads wrote since the last fence (and since the last store from them).
    written: set[SSAValue] = set()
    found: set[Operation] = set()
    for op in block.ops:
        if isinstance(op, FenceAsyncSharedOp):
            written.clear()
        elif isinstance(op, AsyncCopyOp | Scatter4Op) and not op.is_load:
            buffer = op.geometry().smem
            if buffer in written:
                found.add(op)
            written.discard(buffer)
        elif op.regions or isinstance(op, memref.StoreOp) or op.name in THREAD_STORES:
            written.update(thread_written(op))
    return found


THREAD_STORES = ("vector.store", "vector.transfer_write", "memref.copy")
"""Ops besides `memref.store` by which the threads write the refs among operands 1.."""


def thread_written(op: Operation) -> Iterator[SSAValue]:
    """The refs `op` (or an op nested in it) stores to from the threads."""
    for inner in op.walk():
        if isinstance(inner, memref.StoreOp):
            yield inner.memref
        elif inner.name in THREAD_STORES:
            yield from inner.operands[1:]
