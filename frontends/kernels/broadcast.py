"""Tiles that several CTAs of a cluster need: `multicast_copy` (the two CTAs of a pair share
one load, each storing half of it), `broadcast_copy` (every CTA of the cluster writes its own
copy of the tile, loaded once by multicast or by each CTA) and `broadcast_row_dot` (the
cluster's matrix-vector products that share the matrix). The broadcast kernels launch on
`broadcast_grid`, in one of `BROADCAST_ORDERS`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, MemRefType, ModuleOp

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from facts.target import CLUSTERS, MULTICAST, TARGETS
from frontends.dsl import (
    Value,
    block_id,
    boolean,
    emit,
    i32_const,
    if_,
    index,
    kernel,
    loop,
    result,
    thread_id,
)
from frontends.kernels.checks import checked
from frontends.kernels.common import (
    TMA_BLOCK,
    _bulk_oob,
    _check_2d,
    _check_feature,
    _check_float,
    _footprint,
    _smem,
    _smem_budget,
    element_type,
    grid,
)
from frontends.kernels.parts import butterfly, drain_bulk, load_and_wait


@checked(shape=2, tile=2)
def multicast_copy(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int] = (64, 64),
    *,
    implementation: str | None = None,
    target: str = "sm_90a",
) -> ModuleOp:
    """`y = x` with multicast: the two CTAs of a (2, 1, 1) cluster share one tile load (each
    issues half of it with .multicast::cluster); CTA r of the pair stores rows
    [r * tile/2, (r + 1) * tile/2) of the tile. Rows must be a multiple of the tile's. With
    `implementation="bulk"`, the tiles are whole rows (tile[1] == shape[1]) and the copies
    are non-tensor bulk copies that promise to stay in bounds."""
    elt = element_type(dtype)
    half = tile[0] // 2
    if tile[0] % 2:
        raise ArgumentError(
            f"expected an even number of tile rows (each CTA of the pair stores half), got "
            f"{tile[0]}; fix: pass tile=({tile[0] + 1}, {tile[1]})"
        )
    if shape[0] % tile[0]:
        raise ArgumentError(f"expected rows ({shape[0]}) that are a multiple of {tile[0]}")
    oob = _bulk_oob(shape, tile, implementation)
    # The array seen as (row halves, half rows, columns), so that a CTA stores its half.
    gmem = MemRefType(elt, [shape[0] // half, half, shape[1]])
    smem = _smem(elt, [2, half, tile[1]])

    def body(x: Value, y: Value) -> None:
        c0, c2 = index(0), index(2)
        phase = boolean(False)
        bx, by = block_id("x"), block_id("y")
        rank, pair = bx % c2, bx // c2
        col = pair * tile[1]
        first = by * c2
        buf = result(copy.AllocSmemOp, smem)
        bar = result(copy.BarrierInitOp, 1)
        load_and_wait(x, buf, [first, c0, col], bar, c0, phase, oob=oob or "zeros",
                      collective=[0], implementation=implementation)  # fmt: skip
        mine = first + rank
        emit(copy.AsyncCopyOp, buf, y, src_indices=[rank], dst_indices=[mine, c0, col], oob=oob,
             implementation=implementation)  # fmt: skip
        drain_bulk()

    return kernel(
        "multicast_copy", [gmem, gmem], body, target=target, block=TMA_BLOCK, cluster=(2, 1, 1)
    )


BROADCAST_ORDERS = ("cluster", "rank_major")
"""How `broadcast_copy` maps blocks to (rank, tile): `cluster` puts the CTAs that need the
same tile of x in one cluster (consecutive blocks); `rank_major` makes the rank the slowest
index of the launch, so the CTAs that need the same tile are a whole x apart."""


@checked(shape=2, tile=2)
def broadcast_grid(shape: Sequence[int], tile: Sequence[int], cluster: int = 2) -> tuple[int, int]:
    """Blocks of `broadcast_copy`: `cluster` CTAs per tile of x, (cluster x tile columns,
    tile rows)."""
    cols, rows = grid(shape, tile)
    return (cluster * cols, rows)


def _check_broadcast(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int],
    cluster: int,
    multicast: bool,
    order: str,
    target: str,
    builder: str,
) -> None:
    """A ValueError (expected, got, fix) for parameters `builder` (`broadcast_copy`,
    `broadcast_row_dot`) cannot build."""
    if multicast:
        _check_feature(
            target,
            MULTICAST,
            "copy.async_copy",
            "use sm_90a, or multicast=False",
            uses="with collective (multicast=True)",
        )
    _check_feature(target, CLUSTERS, builder, "use sm_90 or newer", f"with cluster={cluster}")
    if order not in BROADCAST_ORDERS:
        raise ArgumentError(f"expected order of {', '.join(BROADCAST_ORDERS)}, got {order!r}")
    if multicast and order != "cluster":
        raise ArgumentError(
            f"expected order='cluster' for multicast=True, got order={order!r}: a multicast "
            "is shared by the CTAs of one cluster, so they must need the same tile; use "
            "multicast=False for the rank-major order"
        )
    if not 2 <= cluster <= 8:
        raise ArgumentError(
            f"expected a cluster of 2 to 8 CTAs (the portable cluster sizes), got {cluster}"
        )
    _check_2d(shape, tile, "elements per dim")
    bits = copy.bitwidth(element_type(dtype))
    if bits is None or bits % 8:
        raise ArgumentError(f"expected an element type of whole bytes, got {dtype}")
    size = bits // 8
    if tile[1] * size % 16:
        raise ArgumentError(
            f"expected tile rows of a multiple of 16 bytes (a TMA box row), got {tile[1]} "
            f"{dtype} ({tile[1] * size} bytes); use {-(-tile[1] * size // 16) * 16 // size} "
            "columns"
        )
    if shape[1] * size % 16:
        raise ArgumentError(
            f"expected rows of x and y of a multiple of 16 bytes (TMA strides, rule TR19), got "
            f"{shape[1]} {dtype} ({shape[1] * size} bytes); pad the columns to "
            f"{-(-shape[1] * size // 16) * 16 // size}"
        )
    if multicast:
        share = tile[0] // cluster
        if tile[0] % cluster:
            raise ArgumentError(
                f"expected tile rows divisible by the cluster ({cluster}) for multicast=True "
                f"(each CTA loads 1/{cluster} of the rows), got {tile[0]}; use "
                f"{-(-tile[0] // cluster) * cluster} rows"
            )
        if share * tile[1] * size % copy.smem_alignment(16):
            raise ArgumentError(
                f"expected each CTA's share of the tile ({share}x{tile[1]} {dtype}) to be a "
                f"multiple of {copy.smem_alignment(16)} bytes (TMA's SMEM alignment), got "
                f"{share * tile[1] * size} bytes; use more tile rows or columns"
            )
    # One slot of the tile and its barrier.
    needed = _footprint(tile, [dtype], [], 1, 1)
    if needed > TARGETS[target].max_smem_bytes:
        raise ArgumentError(
            f"expected a tile that fits {_smem_budget(target)}, got a {tuple(tile)} {dtype} "
            f"tile ({needed} bytes with its barrier); use a smaller tile"
        )


def _broadcast_name(stem: str, multicast: bool, order: str) -> str:
    """The kernel's name: `stem`, how the tile is loaded, the order if not `cluster`."""
    name = f"{stem}_" + ("multicast" if multicast else "unicast")
    return name if order == "cluster" else f"{name}_{order}"


@checked(shape=2, tile=2)
def broadcast_copy(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int] = (64, 256),
    *,
    cluster: int = 2,
    multicast: bool = True,
    order: str = "cluster",
    target: str = "sm_90a",
) -> ModuleOp:
    """`y[r] = x` for r < `cluster`: x (M, N) -> y (cluster, M, N), as
    `x.expand(cluster, M, N).contiguous()`. Every tile of x is needed by `cluster` CTAs, each
    writing its own copy of it (rank r writes y[r]); launch on `broadcast_grid(shape, tile,
    cluster)` with clusters of (`cluster`, 1, 1).

    With `order="cluster"` the CTAs that need a tile form one cluster (block x = tile column
    x cluster + rank). With `multicast`, each of them loads 1/cluster of the tile's rows with
    .multicast::cluster, so that every CTA receives the whole tile and x is read once; without,
    each CTA loads the whole tile itself (the unicast twin: same kernel, cluster and grid).
    `order="rank_major"` (unicast only) gives the same grid another order: block (bx, by) is
    number `by * grid_x + bx` of the launch, and the rank is that number over the tile count,
    so the CTAs that need the same tile are a whole x apart in launch order (no L2 reuse when
    x is larger than L2). Tails (M, N not multiples of the tile) are zero-filled on load and
    clipped on store."""
    _check_broadcast(shape, dtype, tile, cluster, multicast, order, target, "broadcast_copy")
    elt = element_type(dtype)
    x_type = MemRefType(elt, list(shape))
    y_type = MemRefType(elt, [cluster, *shape])

    def body(x: Value, y: Value) -> None:
        shared = _shared_tile(x, shape, tile, cluster, multicast, order)
        emit(copy.AsyncCopyOp, shared.buf, y, dst_indices=[shared.rank, shared.row, shared.col])
        drain_bulk()

    name = _broadcast_name("broadcast", multicast, order)
    return kernel(
        name, [x_type, y_type], body, target=target, block=TMA_BLOCK, cluster=(cluster, 1, 1)
    )


@dataclass
class _SharedTile:
    """The tile of x a CTA of a `broadcast_*` kernel holds, loaded and waited for."""

    rank: Value
    tile_col: Value
    row: Value
    """The tile's first row in x."""
    col: Value
    """The tile's first column in x."""
    buf: Value
    """The SMEM tile, whole once the block passes the wait."""


def _shared_tile(
    x: Value,
    shape: Sequence[int],
    tile: Sequence[int],
    cluster: int,
    multicast: bool,
    order: str,
) -> _SharedTile:
    """The block's place in a `broadcast_*` launch (`broadcast_grid`, in `order`) and its
    tile of x: loaded by TMA (zero-filled out of bounds; with `multicast`, 1/`cluster` of
    the rows by each CTA of the cluster, to every CTA) and waited for."""
    x_type = x.type
    assert isinstance(x_type, MemRefType)
    smem = _smem(x_type.element_type, tile)
    tiles_n, tiles_m = grid(shape, tile)
    c0, phase = index(0), boolean(False)
    bx, by = block_id("x"), block_id("y")
    if order == "cluster":
        c = index(cluster)
        rank, tile_col, tile_row = bx % c, bx // c, by
    else:
        width = index(cluster * tiles_n)
        launched = by * width + bx
        tiles = index(tiles_m * tiles_n)
        rank, t = launched // tiles, launched % tiles
        tile_row, tile_col = t // tiles_n, t % tiles_n
    row, col = tile_row * tile[0], tile_col * tile[1]
    buf = result(copy.AllocSmemOp, smem)
    bar = result(copy.BarrierInitOp, 1)
    load_and_wait(x, buf, [row, col], bar, c0, phase, collective=[0] if multicast else None)
    return _SharedTile(rank, tile_col, row, col, buf)


@checked(shape=2, tile=2)
def broadcast_row_dot(
    shape: Sequence[int],
    dtype: str = "f32",
    tile: Sequence[int] = (64, 256),
    *,
    cluster: int = 2,
    multicast: bool = True,
    order: str = "cluster",
    target: str = "sm_90a",
) -> ModuleOp:
    """`cluster` matrix-vector products that share the matrix, as a parallel split-K:
    x (M, N) and v (C, N) of f32, bf16 or f16 (C = `cluster`), y (C, T, M) of f32 with T =
    ceil(N / tile[1]) and `y[r, t, i] = sum over the columns j of tile column t of x[i, j] *
    v[r, j]`, so that `y.sum(axis=1)` is `x @ v.T` transposed. Launch on `broadcast_grid(
    shape, tile, cluster)` with clusters of (`cluster`, 1, 1).

    Every tile of x is needed by the `cluster` CTAs of its cluster (rank r computes with
    v[r]), and each writes only its tile's `tile[0]` sums, so the kernel reads about
    `cluster` times what it writes per rank: unlike `broadcast_copy`, whose stores of
    `cluster` copies dominate, its time is the loads'. `multicast`, `order` and the tile
    loads are `broadcast_copy`'s (the unicast twin with the same cluster and grid, the
    rank-major order whose CTAs of a tile are far apart in launch order).

    After the tile's wait, warp w of the block's 4 takes tile rows w, w + 4, ... (4 or 2
    of them at a time where they divide the tile's rows, their sums interleaved); lane l
    keeps v[r] at columns l, l + 32, ... of the tile in registers (0 past N; x's columns
    there are zero-filled), multiplies them with its columns of each row, adds the products
    in column order in f32 (bf16 and f16 widened first, so their products are exact), then
    a butterfly of warp shuffles (xor 16, 8, 4, 2, 1) adds the lanes' sums and lane 0 stores
    the row's (rows past M are not stored). Each y[r, t, i] is so within (tile[1] / 32 + 6)
    * 2**-24 * sum_j |x[i, j] v[r, j]| of the exact sum. Any M, N with rows of a multiple of
    16 bytes; `tile[1]` a multiple of 32."""
    _check_broadcast(shape, dtype, tile, cluster, multicast, order, target, "broadcast_row_dot")
    _check_float(dtype)
    if tile[1] % copy.WARP:
        raise ArgumentError(
            f"expected tile[1] to be a multiple of 32 (lane l of a warp multiplies columns "
            f"l, l + 32, ... of each tile row), got tile {tuple(tile)}; use tile[1] = "
            f"{min(256, tile[1] + (-tile[1]) % 32)}"
        )
    elt = element_type(dtype)
    f32 = element_type("f32")
    tiles_n, _ = grid(shape, tile)
    x_type = MemRefType(elt, list(shape))
    v_type = MemRefType(elt, [cluster, shape[1]])
    y_type = MemRefType(f32, [cluster, tiles_n, shape[0]])
    warps = TMA_BLOCK // copy.WARP
    per_lane = tile[1] // copy.WARP
    together = next(n for n in (4, 2, 1) if tile[0] % (warps * n) == 0 or n == 1)

    def widened(value: Value) -> Value:
        return value if elt == f32 else result(arith.ExtFOp, value, f32)

    def body(x: Value, v: Value, y: Value) -> None:
        shared = _shared_tile(x, shape, tile, cluster, multicast, order)
        t = thread_id()
        warp, lane = t // copy.WARP, t % copy.WARP
        zero = result(arith.ConstantOp, FloatAttr(0.0, f32))
        last = index(shape[1] - 1)
        # Lane l's columns of the tile, and v[rank] there (0 past N).
        columns, weights = [], []
        for k in range(per_lane):
            c = lane + k * copy.WARP
            j = shared.col + c
            inside = j <= last
            clamped = result(arith.MinUIOp, j, last)
            w = widened(Value(emit(memref.LoadOp.get, v, [shared.rank, clamped]).res))
            columns.append(c)
            weights.append(result(arith.SelectOp, inside, w, zero))

        # Each iteration takes `together` rows (w + 4 i, ..., w + 4 (i + together - 1)),
        # their sums independent of each other, so that their loads, products and shuffles
        # overlap: one row at a time waits on its chain of adds and shuffles.
        with loop(tile[0], start=warp, step=warps * together) as i:
            rows = [i + j * warps for j in range(together)]
            sums = [zero] * together
            for c, w in zip(columns, weights, strict=True):
                for j, r in enumerate(rows):
                    xv = widened(Value(emit(memref.LoadOp.get, shared.buf, [r, c]).res))
                    product = result(arith.MulfOp, xv, w)
                    sums[j] = result(arith.AddfOp, sums[j], product)
            sums = butterfly(sums, i32_const(copy.WARP))
            first = lane.eq(0)
            for r, total in zip(rows, sums, strict=True):
                row = shared.row + r
                with if_((row < shape[0]) & first):
                    emit(memref.StoreOp.get, total, y, [shared.rank, shared.tile_col, row])

    return kernel(
        _broadcast_name("broadcast_row_dot", multicast, order),
        [x_type, v_type, y_type],
        body,
        target=target,
        block=TMA_BLOCK,
        cluster=(cluster, 1, 1),
    )
