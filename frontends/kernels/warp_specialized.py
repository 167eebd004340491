"""Warp-specialized persistent kernels: a producer warp loads each block's tiles into a ring
of SMEM slots (`full` and `empty` barriers per slot) while consumer warps take them, so that
loads and stores overlap. `ws_copy` stores the tiles back, `ws_elementwise` maps them
(`ELEMENTWISE`); the machinery they share with `ws_row_sum` (the tile walks, the producer's
loop, the ring's stage count and checks) is here too. Launch them on `ws_grid` (one
persistent block per SM, or a few) or `tiles_grid` (a few tiles per block)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from math import ceil

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import MemRefType, ModuleOp, VectorType
from xdsl.ir import Attribute

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from facts.target import TARGETS, TMA
from frontends.dsl import (
    Value,
    block_id,
    emit,
    grid_dim,
    if_,
    index,
    kernel,
    loop,
    parity,
    result,
    warp_specialize,
)
from frontends.kernels.checks import checked
from frontends.kernels.common import (
    FLOAT_TYPES,
    _check_2d,
    _check_consumer_warps,
    _check_feature,
    _check_float,
    _smem,
    _stages_limit,
    element_type,
    grid,
)

ELEMENTWISE = ("add", "axpb", "cast")
"""`ws_elementwise` operations: z = x + y, y = a * x + b, y = x converted to `out_dtype`."""


@checked()
def ws_grid(sm_count: int, blocks_per_sm: int = 1) -> tuple[int, int]:
    """The grid of a persistent warp-specialized kernel: `blocks_per_sm` blocks per SM (the
    kernels walk their tiles `block + k * grid`)."""
    return (sm_count * blocks_per_sm, 1)


@checked(shape=2, tile=2)
def tiles_grid(shape: Sequence[int], tile: Sequence[int], per_block: int = 1) -> tuple[int, int]:
    """The grid that gives each block of a warp-specialized kernel `per_block` of its tiles
    (the last block fewer): with 1, the block scheduler deals out the tiles and each block's
    ring turns once. On the H200 this launch streamed 4-6% faster than `ws_grid` for
    `ws_elementwise` and `ws_copy` (benchmarks/RESULTS.md, run 36): many small blocks per
    SM, each with its own producer, keep more copies in flight than one persistent block.
    `ws_row_sum` deals out row bands, not tiles: `tiles_grid(shape, (band_rows, shape[1]))`
    gives each block `per_block` bands."""
    if per_block < 1:
        raise ArgumentError(f"expected per_block >= 1, got {per_block}")
    cols, rows = grid(shape, tile)
    return (ceil(rows * cols / per_block), 1)


@checked(tile=2)
def ws_stages_limit(
    tile: Sequence[int],
    inputs: Sequence[str],
    outputs: Sequence[str] = (),
    target: str = "sm_90a",
    out_buffers: int = 2,
) -> int:
    """The most ring slots a warp-specialized kernel can give `tile`s of its `inputs` (one
    ring each, element types by name) next to `out_buffers` output buffers per name in
    `outputs`, on `target`: everything, with its two barrier groups, must fit the block's
    SMEM (rule TR6, the verifier's layout), and a barrier group holds at most
    `MAX_BARRIERS` (rule I1)."""
    return _stages_limit(tile, inputs, outputs, 2, target, out_buffers)


def _ws_stages(
    stages: int | None,
    tile: Sequence[int],
    inputs: Sequence[str],
    outputs: Sequence[str],
    target: str,
    out_buffers: int = 2,
) -> int:
    """`stages`, or by default the most that fit up to 4; a ValueError when they do not fit."""
    limit = ws_stages_limit(tile, inputs, outputs, target, out_buffers)
    if limit == 0:
        raise ArgumentError(
            f"expected a tile whose ring slots fit the {TARGETS[target].max_smem_bytes} bytes "
            f"of SMEM of a block on {target}, got {tuple(tile)}; use a smaller tile"
        )
    if stages is None:
        return min(4, limit)
    if stages > limit:
        raise ArgumentError(
            f"expected at most {limit} stages of {tuple(tile)} tiles (the rings, output "
            f"buffers and barriers must fit the {TARGETS[target].max_smem_bytes} bytes of SMEM "
            f"of a block on {target}), got stages={stages}; use stages={limit} or fewer, or a "
            "smaller tile"
        )
    return stages


def _check_ws(
    shape: Sequence[int], tile: Sequence[int], stages: int, dtypes: Sequence[str], target: str
) -> None:
    """A ValueError (expected, got, fix) for a target, shape, tile, stage count or element
    type that no warp-specialized kernel can take."""
    _check_feature(
        target,
        TMA,
        "copy.async_copy",
        "warp-specialized kernels load and store with TMA: use sm_90a",
        uses="with impl tma",
    )
    _check_2d(shape, tile)
    if not 1 <= stages <= copy.MAX_BARRIERS:
        raise ArgumentError(f"expected 1 to {copy.MAX_BARRIERS} stages, got stages={stages}")
    for name in dtypes:
        if name not in (*FLOAT_TYPES, "i32", "i16", "i8"):
            raise ArgumentError(f"expected an element type of f32, bf16, f16, got {name!r}")


def _round_robin(total: int) -> tuple[Value, Value, Value]:
    """The block's index, the grid's block count and how many of `total` work items, dealt
    round-robin (item bid + k * blocks), the block gets: ceil((total - bid) / blocks), 0 when
    bid >= total (the unsigned sum wraps below `blocks`)."""
    bid, blocks = block_id(), grid_dim()
    return bid, blocks, (total - bid + (blocks - 1)) // blocks


class _Persistent:
    """The tiles of a persistent kernel's block: `bid + k * nblocks` for k < count, row-major
    over the tile grid of `shape` (the last row and column of tiles may be partial: TMA
    zero-fills the loads and clips the stores there)."""

    def __init__(self, shape: Sequence[int], tile: Sequence[int]):
        self.tile = tile
        self.cols, rows = grid(shape, tile)
        self.bid, self.blocks, self.count = _round_robin(rows * self.cols)

    def origin(self, k: Value) -> tuple[Value, Value]:
        t = self.bid + k * self.blocks
        return t // self.cols * self.tile[0], t % self.cols * self.tile[1]


class _Bands:
    """The tiles of a row-band kernel's block: bands (`tile[0]` rows each) bid, bid + nblocks,
    ..., each walked over all its column tiles in order, so that one block sums a band. Tile
    k is column tile k % cols of the block's band k / cols; count = bands x cols."""

    def __init__(self, shape: Sequence[int], tile: Sequence[int]):
        self.tile = tile
        self.cols, bands = grid(shape, tile)
        self.bid, self.blocks, mine = _round_robin(bands)
        self.count = mine * self.cols

    def band_row(self, k: Value) -> Value:
        """The first row of the band that tile k belongs to."""
        return (self.bid + k // self.cols * self.blocks) * self.tile[0]

    def origin(self, k: Value) -> tuple[Value, Value]:
        col = k % self.cols * self.tile[1]
        return self.band_row(k), col


def _wait_full(full: Value, slot: Value, k: Value, stages: int) -> None:
    """The consumers' wait for tile k in its slot: phase k / stages of the slot's `full`."""
    emit(copy.BarrierWaitOp, full, slot, parity(k // stages))


def _producer(
    tiles: _Persistent | _Bands,
    inputs: Sequence[Value],
    rings: Sequence[Value],
    full: Value,
    empty: Value,
    stages: int,
    cache_hint: str | None = None,
) -> None:
    """The producer's loop: tile k into slot k % stages of every ring, once the consumers
    released the slot (empty, phase k / stages - 1) from the second lap on; `cache_hint`:
    the loads' L2 policy."""
    with loop(tiles.count) as k:
        slot, lap = k % stages, k // stages
        with if_(k >= stages):
            emit(copy.BarrierWaitOp, empty, slot, parity(lap - 1))
        origin = tiles.origin(k)
        for x, ring in zip(inputs, rings, strict=True):
            emit(copy.AsyncCopyOp, x, ring, src_indices=origin, dst_indices=[slot],
                 barrier=full, barrier_index=slot, oob="zeros", l2=cache_hint)  # fmt: skip


@checked(own=("stages", "consumer_warps"), shape=2, tile=2)
def ws_copy(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int] = (64, 128),
    *,
    stages: int | None = None,
    in_flight: int = 1,
    cache_hints: tuple[str | None, str | None] = (None, None),
    target: str = "sm_90a",
) -> ModuleOp:
    """`y = x` by a warp-specialized persistent kernel (launch it on `ws_grid(sms)`, or a few
    tiles per block on `tiles_grid(shape, tile)`, the faster on the H200): warp 0,
    the producer, loads tile k of its block into slot k % stages of a ring as soon as the
    slot is free; warp 1, the storer, waits for the slot (its `full` barrier), stores it with
    TMA and, once all but the last `in_flight` stores have read their slots
    (`wait_group bulk <in_flight> read_only`), releases the slot of store k - in_flight
    (an elected arrive on its `empty` barrier). Any shape: the edge tiles are clipped.
    `stages` defaults to the most that fit up to 4 (`ws_stages_limit`); `cache_hints` are the
    L2 policies of the loads and of the stores (`EVICT_FIRST`, ...)."""
    _check_ws(shape, tile, 1 if stages is None else stages, [dtype], target)
    stages = _ws_stages(stages, tile, [dtype], [], target)
    if not 0 <= in_flight < stages:
        raise ArgumentError(
            f"expected 0 <= in_flight < stages ({stages}), got in_flight={in_flight}: a store "
            "in flight holds its slot"
        )
    elt = element_type(dtype)
    gmem = MemRefType(elt, list(shape))
    ring_type = _smem(elt, [stages, *tile])

    def body(x: Value, y: Value) -> None:
        tiles = _Persistent(shape, tile)
        ring = result(copy.AllocSmemOp, ring_type)
        full = result(copy.BarrierInitOp, stages, 1)
        empty = result(copy.BarrierInitOp, stages, 1)

        def release(k: Value) -> None:
            emit(copy.WaitGroupOp, "bulk", in_flight, read_only=True)
            emit(copy.BarrierArriveOp, empty, (k - in_flight) % stages, issuer="elected")

        def storer(t: Value) -> None:
            with loop(tiles.count) as k:
                slot = k % stages
                _wait_full(full, slot, k, stages)
                row, col = tiles.origin(k)
                emit(copy.AsyncCopyOp, ring, y, src_indices=[slot], dst_indices=[row, col],
                     l2=cache_hints[1])  # fmt: skip
                emit(copy.CommitGroupOp, "bulk")
                if in_flight:
                    with if_(k >= in_flight):
                        release(k)
                else:
                    release(k)
            emit(copy.WaitGroupOp, "bulk", 0)

        producer = partial(_producer, tiles, [x], [ring], full, empty, stages, cache_hints[0])
        warp_specialize([(1, lambda t: producer()), (1, storer)])

    return kernel("ws_copy", [gmem, gmem], body, target=target, block=2 * copy.WARP)


@checked(own=("stages", "consumer_warps"), shape=2, tile=2)
def ws_elementwise(
    op: str,
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int] = (64, 128),
    *,
    out_dtype: str | None = None,
    stages: int | None = None,
    consumer_warps: int = 4,
    out_buffers: int = 2,
    cache_hints: tuple[str | None, str | None] = (None, None),
    maxnreg: tuple[int, int] | None = None,
    target: str = "sm_90a",
) -> ModuleOp:
    """An elementwise map by a warp-specialized persistent kernel (launch it on
    `ws_grid(sms)`, or one tile per block on `tiles_grid(shape, tile)`): `op` is "add"
    (z = x + y: arguments x, y, z), "axpb" (y = a * x + b: arguments x, y and the f32 scalars
    a, b) or "cast" (y = x as `out_dtype`: x, y). Warp 0 loads the inputs' tile k into slot
    k % stages of their rings (one `full` barrier per slot for all inputs); `consumer_warps`
    warps wait for the slot, compute the tile from SMEM into one of `out_buffers` (1 or 2)
    output buffers (thread i takes the 16 bytes of elements at i * n, (i + threads) * n, ...
    with vector loads, n = 16 / element bytes), release the slot (one arrive per warp on its
    `empty` barrier), fence and store the buffer with TMA; before writing a buffer again they
    wait until its previous store has read it (with one buffer, the store of the tile
    before: a block that gets one tile needs no second buffer). bf16 and f16 compute in f32
    and round to nearest even, as PyTorch does; a * x + b is a rounded product and a rounded
    sum (`mul.rn`, `add.rn`: never fused into an fma), as numpy computes it in f32. Any
    shape: edge tiles are zero-filled on load and clipped on store. `stages` defaults to the
    most that fit up to 4 (`ws_stages_limit`); `cache_hints` are the L2 policies of the loads
    and of the stores. With `maxnreg` = (producer, consumer) register limits, the producer is
    a whole warpgroup (4 warps, one of which issues) and each role sets its limit
    (`setmaxnreg`), as CUTLASS's warp-specialized kernels do; `consumer_warps` must then be a
    multiple of 4."""
    if op not in ELEMENTWISE:
        raise ArgumentError(f"expected op to be one of {', '.join(ELEMENTWISE)}, got {op!r}")
    out_name = dtype if out_dtype is None else out_dtype
    if op == "cast" and out_dtype is None:
        raise ArgumentError("expected out_dtype for op='cast' (e.g. 'bf16')")
    for name in (dtype, out_name):
        _check_float(name)
    _check_ws(shape, tile, 1 if stages is None else stages, [dtype, out_name], target)
    inputs = 2 if op == "add" else 1
    stages = _ws_stages(stages, tile, [dtype] * inputs, [out_name], target, out_buffers)
    _check_consumer_warps(consumer_warps)
    if out_buffers not in (1, 2):
        raise ArgumentError(f"expected out_buffers of 1 or 2, got {out_buffers}")
    producer_warps = 1 if maxnreg is None else copy.WARPGROUP_WARPS
    if maxnreg is not None and consumer_warps % copy.WARPGROUP_WARPS:
        raise ArgumentError(
            f"expected a multiple of 4 consumer warps with maxnreg (setmaxnreg is per "
            f"warpgroup), got {consumer_warps}"
        )
    elt, out_elt = element_type(dtype), element_type(out_name)
    f32 = element_type("f32")
    gmem = MemRefType(elt, list(shape))
    out_gmem = MemRefType(out_elt, list(shape))
    ring_type = _smem(elt, [stages, *tile])
    out_type = _smem(out_elt, [out_buffers, *tile])
    threads = consumer_warps * copy.WARP
    elements = tile[0] * tile[1]

    # Each thread takes `lanes` consecutive elements at a time: 16-byte SMEM loads.
    in_bytes = (copy.bitwidth(elt) or 8) // 8
    lanes = 16 // in_bytes if tile[1] % (16 // in_bytes) == 0 else 1
    vf32 = VectorType(f32, [lanes])

    def to_f32(v: Value) -> Value:
        return v if elt == f32 else result(arith.ExtFOp, v, vf32)

    def from_f32(v: Value) -> Value:
        return v if out_elt == f32 else result(arith.TruncFOp, v, VectorType(out_elt, [lanes]))

    def body(*args: Value) -> None:
        xs, z, scalars = list(args[:inputs]), args[inputs], args[inputs + 1 :]
        tiles = _Persistent(shape, tile)
        rings = [result(copy.AllocSmemOp, ring_type) for _ in xs]
        out = result(copy.AllocSmemOp, out_type)
        full = result(copy.BarrierInitOp, stages, inputs)
        empty = result(copy.BarrierInitOp, stages, consumer_warps)
        load = partial(_producer, tiles, xs, rings, full, empty, stages, cache_hints[0])

        def producer(t: Value) -> None:
            if producer_warps == 1:
                return load()
            # Only the warpgroup's first warp runs the ring (its elected lane issues): the
            # others would wait on `empty` unthrottled and could fall two phases behind,
            # and the join would hang (the protocol analysis's P6), as in CUTLASS.
            with if_((t // copy.WARP).eq(0)):
                load()

        def consumer(t: Value) -> None:
            splats = [Value(emit(vector.BroadcastOp, v, vf32).vector) for v in scalars]
            first = t * lanes
            with loop(tiles.count) as k:
                slot = k % stages
                buf = k % out_buffers if out_buffers > 1 else index(0)
                _wait_full(full, slot, k, stages)
                # The store that last read buffer `buf` (tile k - out_buffers) is done with it.
                emit(copy.WaitGroupOp, "bulk", out_buffers - 1, read_only=True)
                with loop(elements, start=first, step=threads * lanes) as i:
                    r, c = i // tile[1], i % tile[1]
                    vin = VectorType(elt, [lanes])
                    vals = [to_f32(result(vector.LoadOp, x, [slot, r, c], vin)) for x in rings]
                    if op == "add":
                        v = result(arith.AddfOp, vals[0], vals[1])
                    elif op == "axpb":
                        ax = result(arith.MulfOp, splats[0], vals[0])
                        v = result(arith.AddfOp, ax, splats[1])
                    else:
                        v = vals[0]
                    emit(vector.StoreOp, from_f32(v), out, [buf, r, c])
                emit(copy.BarrierArriveOp, empty, slot, issuer="warps")
                emit(copy.FenceAsyncSharedOp)
                row, col = tiles.origin(k)
                emit(copy.AsyncCopyOp, out, z, src_indices=[buf], dst_indices=[row, col],
                     l2=cache_hints[1])  # fmt: skip
                emit(copy.CommitGroupOp, "bulk")
            emit(copy.WaitGroupOp, "bulk", 0)

        warp_specialize([(producer_warps, producer), (consumer_warps, consumer)], maxnreg)

    arg_types: list[Attribute] = [gmem] * inputs + [out_gmem]
    if op == "axpb":
        arg_types += [f32, f32]
    block = (producer_warps + consumer_warps) * copy.WARP
    return kernel(f"ws_{op}", arg_types, body, target=target, block=block)
