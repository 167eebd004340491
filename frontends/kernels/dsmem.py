"""Distributed shared memory: `dsmem_exchange` passes each CTA's tile to the next CTA of its
cluster, SMEM to SMEM, by one of `EXCHANGE_MODES` (st.async from the threads, red.async add
into the receiver's copy, or one bulk copy); `exchange_grid` is its launch and
`exchange_sources` says whose tile each tile column receives."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import MemRefType, ModuleOp, VectorType

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from frontends.dsl import Value, block_id, boolean, emit, index, kernel, loop, result, thread_id
from frontends.kernels.checks import checked
from frontends.kernels.common import TMA_BLOCK, _smem, element_type, grid
from frontends.kernels.parts import drain_bulk, tile_origin

EXCHANGE_MODES = ("store", "reduce", "bulk")
"""How `dsmem_exchange` moves a tile into the peer: `st.async` (vectors of 16 bytes),
`red.async add` (one element per thread) or the bulk SMEM -> SMEM copy."""


@checked(shape=2, tile=2)
def exchange_grid(shape: Sequence[int], tile: Sequence[int], cluster: int = 2) -> tuple[int, int]:
    """The launch grid of `dsmem_exchange`: one block per tile; the tile columns are a
    multiple of the cluster (a cluster is `cluster` neighbouring tiles of a row)."""
    cols, rows = grid(shape, tile)
    if cols % cluster:
        raise ArgumentError(
            f"expected a number of tile columns ({cols}) that is a multiple of the cluster "
            f"({cluster})"
        )
    return cols, rows


@checked(shape=2, tile=2)
def exchange_sources(shape: Sequence[int], tile: Sequence[int], cluster: int = 2) -> list[int]:
    """For each tile column, the tile column whose tile `dsmem_exchange` delivers to it: CTA
    r of a cluster sends to (r + 1) % n, so it receives the tile of (r - 1) % n."""
    cols, _ = exchange_grid(shape, tile, cluster)
    return [c - c % cluster + (c % cluster - 1) % cluster for c in range(cols)]


def _check_exchange(
    shape: Sequence[int], dtype: str, tile: Sequence[int], cluster: int, mode: str
) -> int:
    """The elements one thread moves per st.async (1 for the other modes)."""
    if mode not in EXCHANGE_MODES:
        raise ArgumentError(f"expected a mode in {EXCHANGE_MODES}, got {mode!r}")
    if cluster not in (2, 4, 8):
        raise ArgumentError(f"expected a cluster of 2, 4 or 8 CTAs, got {cluster}")
    exchange_grid(shape, tile, cluster)
    bits = copy.bitwidth(element_type(dtype)) or 0
    if mode == "reduce" and dtype not in ("i32", "ui32", "si32"):
        raise ArgumentError(f"the reduce mode adds 32-bit integers (red.async add), got {dtype}")
    if mode == "store" and bits not in (32, 64):
        raise ArgumentError(f"st.async stores 32- or 64-bit elements, got {dtype}")
    width = 16 * 8 // bits if mode == "store" else 1
    if tile[1] % width or (tile[0] * tile[1] // width) % TMA_BLOCK:
        raise ArgumentError(
            f"expected a tile of a multiple of {TMA_BLOCK * width} elements with rows of a "
            f"multiple of {width} (each of {TMA_BLOCK} threads moves {width} at a time), got "
            f"{list(tile)}"
        )
    return width


@checked(shape=2, tile=2)
def dsmem_exchange(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int] = (64, 64),
    *,
    cluster: int = 2,
    mode: str = "store",
    target: str = "sm_90a",
) -> ModuleOp:
    """A tile exchange inside clusters of `cluster` CTAs along x, one tile per CTA: each CTA
    loads its tile of x (TMA, zero-filled out of bounds) and sends it to CTA (r + 1) % n of
    its cluster (`exchange_sources`), whose barrier the bytes complete on; each CTA waits
    for what it receives and stores it (TMA, clipped) at its own tile of y. `mode`:
    `store` (y = the sender's tile, by st.async from the threads), `reduce` (y = own tile +
    the sender's, by red.async add into a copy of the receiver's tile, once the receiver
    says, by an arrival on the sender's barrier, that the copy has landed) or `bulk` (y =
    the sender's tile, by one bulk SMEM -> SMEM copy; the receiver then arrives on the
    sender's barrier, and the sender waits for it before it exits, so that its source
    outlives the copy)."""
    width = _check_exchange(shape, dtype, tile, cluster, mode)
    elt = element_type(dtype)
    gmem = MemRefType(elt, list(shape))
    smem = _smem(elt, tile)
    nbytes = copy.smem_bytes(list(tile), elt, 16)

    def body(x: Value, y: Value) -> None:
        c0, phase = index(0), boolean(False)
        row, col = tile_origin(tile)
        rank = block_id() % cluster
        peer, source = (rank + 1) % cluster, (rank + (cluster - 1)) % cluster
        mine = result(copy.AllocSmemOp, smem)
        recv = result(copy.AllocSmemOp, smem)
        loaded = result(copy.BarrierInitOp, 1, 2 if mode == "reduce" else 1)
        full = result(copy.BarrierInitOp, 1)
        signal = result(copy.BarrierInitOp, 1)
        for buf in (mine, recv) if mode == "reduce" else (mine,):
            emit(copy.AsyncCopyOp, x, buf, src_indices=[row, col], barrier=loaded,
                 barrier_index=c0, oob="zeros")  # fmt: skip
        emit(copy.BarrierWaitOp, loaded, c0, phase)
        if mode == "reduce":
            # recv holds this CTA's tile: the sender may add into it now.
            emit(copy.PeerArriveOp, signal, c0, source)
            emit(copy.BarrierWaitOp, signal, c0, phase)
        emit(copy.BarrierArriveExpectTxOp, full, c0, bytes=nbytes)
        if mode == "bulk":
            emit(copy.PeerCopyOp, mine, recv, peer, full, c0)
        else:
            _send_by_threads(mine, recv, peer, full, tile, width, mode == "reduce")
        emit(copy.BarrierWaitOp, full, c0, phase)
        if mode == "bulk":
            # The sender's source may go once its copy has landed here.
            emit(copy.PeerArriveOp, signal, c0, source)
        else:
            # st.async and red.async write through the generic proxy; the TMA store reads
            # through the async one.
            emit(copy.FenceAsyncSharedOp)
        emit(copy.AsyncCopyOp, recv, y, dst_indices=[row, col])
        drain_bulk()
        if mode == "bulk":
            emit(copy.BarrierWaitOp, signal, c0, phase)

    return kernel(
        f"dsmem_exchange_{mode}",
        [gmem, gmem],
        body,
        target=target,
        block=TMA_BLOCK,
        cluster=(cluster, 1, 1),
    )


def _send_by_threads(
    mine: Value,
    recv: Value,
    peer: Value,
    full: Value,
    tile: Sequence[int],
    width: int,
    reduce: bool,
) -> None:
    """Each thread sends `width` elements of `mine` at a time to the peer's `recv`: a
    block-uniform loop over the tile in steps of the block."""
    per_row = tile[1] // width
    steps = tile[0] * tile[1] // width // TMA_BLOCK
    tid = thread_id()
    element = mine.type.element_type  # pyright: ignore[reportAttributeAccessIssue]
    with loop(index(steps)) as k:
        e = tid + k * TMA_BLOCK
        r, c = e // per_row, e % per_row * width
        if reduce:
            value = Value(emit(memref.LoadOp.get, mine, [r, c]).res)
            emit(copy.PeerStoreOp, value, recv, [r, c], peer, full, index(0), reduction="add")
        else:
            value = result(vector.LoadOp, mine, [r, c], VectorType(element, [width]))
            emit(copy.PeerStoreOp, value, recv, [r, c], peer, full, index(0))
