"""Tiles that several CTAs of a cluster need: `multicast_copy` (the two CTAs of a pair share
one load, each storing half of it), `broadcast_copy` (every CTA of the cluster writes its own
copy of the tile, loaded once by multicast or by each CTA) and `broadcast_row_dot` (the
cluster's matrix-vector products that share the matrix). The broadcast kernels launch on
`broadcast_grid`, in one of `BROADCAST_ORDERS`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import FloatAttr, IndexType, MemRefType, ModuleOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from facts.target import CLUSTERS, MULTICAST, TARGETS
from frontends.kernels.checks import checked
from frontends.kernels.common import (
    TMA_BLOCK,
    _bin,
    _block_id,
    _bulk_oob,
    _butterfly,
    _check_2d,
    _check_feature,
    _check_float,
    _drain_bulk,
    _false,
    _footprint,
    _i32,
    _if,
    _index,
    _kernel,
    _load_and_wait,
    _smem,
    _smem_budget,
    _thread_id,
    element_type,
    grid,
)
from frontends.locations import LocatingBuilder


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

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        c0, c2 = _index(b, 0), _index(b, 2)
        phase = _false(b)
        bx = _block_id(b, gpu.DimensionEnum.X)
        by = _block_id(b, gpu.DimensionEnum.Y)
        rank = b.insert(arith.RemUIOp(bx, c2)).result
        pair = b.insert(arith.DivUIOp(bx, c2)).result
        col = b.insert(arith.MuliOp(pair, _index(b, tile[1]))).result
        first = b.insert(arith.MuliOp(by, c2)).result
        buf = b.insert(copy.AllocSmemOp(smem)).result
        bar = b.insert(copy.BarrierInitOp(1)).result
        _load_and_wait(
            b,
            x,
            buf,
            [first, c0, col],
            bar,
            c0,
            phase,
            oob=oob or "zeros",
            collective=[0],
            implementation=implementation,
        )
        mine = b.insert(arith.AddiOp(first, rank)).result
        b.insert(
            copy.AsyncCopyOp(
                buf,
                y,
                src_indices=[rank],
                dst_indices=[mine, c0, col],
                oob=oob,
                implementation=implementation,
            )
        )
        _drain_bulk(b)

    return _kernel(
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

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        shared = _shared_tile(b, x, shape, tile, cluster, multicast, order)
        b.insert(copy.AsyncCopyOp(shared.buf, y, dst_indices=[shared.rank, shared.row, shared.col]))
        _drain_bulk(b)

    name = _broadcast_name("broadcast", multicast, order)
    return _kernel(
        name, [x_type, y_type], body, target=target, block=TMA_BLOCK, cluster=(cluster, 1, 1)
    )


@dataclass
class _SharedTile:
    """The tile of x a CTA of a `broadcast_*` kernel holds, loaded and waited for."""

    rank: SSAValue
    tile_col: SSAValue
    row: SSAValue
    """The tile's first row in x."""
    col: SSAValue
    """The tile's first column in x."""
    buf: SSAValue
    """The SMEM tile, whole once the block passes the wait."""


def _shared_tile(
    b: Builder,
    x: SSAValue,
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
    c0 = _index(b, 0)
    phase = _false(b)
    bx = _block_id(b, gpu.DimensionEnum.X)
    by = _block_id(b, gpu.DimensionEnum.Y)
    if order == "cluster":
        c = _index(b, cluster)
        rank = b.insert(arith.RemUIOp(bx, c)).result
        tile_col = b.insert(arith.DivUIOp(bx, c)).result
        tile_row = by
    else:
        width = _index(b, cluster * tiles_n)
        launched = b.insert(arith.AddiOp(b.insert(arith.MuliOp(by, width)).result, bx)).result
        tiles = _index(b, tiles_m * tiles_n)
        rank = b.insert(arith.DivUIOp(launched, tiles)).result
        t = b.insert(arith.RemUIOp(launched, tiles)).result
        tile_row = b.insert(arith.DivUIOp(t, _index(b, tiles_n))).result
        tile_col = b.insert(arith.RemUIOp(t, _index(b, tiles_n))).result
    row = b.insert(arith.MuliOp(tile_row, _index(b, tile[0]))).result
    col = b.insert(arith.MuliOp(tile_col, _index(b, tile[1]))).result
    buf = b.insert(copy.AllocSmemOp(smem)).result
    bar = b.insert(copy.BarrierInitOp(1)).result
    collective = [0] if multicast else None
    _load_and_wait(b, x, buf, [row, col], bar, c0, phase, collective=collective)
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

    def widened(b: Builder, value: SSAValue) -> SSAValue:
        return value if elt == f32 else b.insert(arith.ExtFOp(value, f32)).result

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, v, y = args
        shared = _shared_tile(b, x, shape, tile, cluster, multicast, order)
        t = _thread_id(b)
        warp = _bin(b, arith.DivUIOp, t, copy.WARP)
        lane = _bin(b, arith.RemUIOp, t, copy.WARP)
        zero = b.insert(arith.ConstantOp(FloatAttr(0.0, f32))).result
        last = _index(b, shape[1] - 1)
        # Lane l's columns of the tile, and v[rank] there (0 past N).
        columns, weights = [], []
        for k in range(per_lane):
            c = _bin(b, arith.AddiOp, lane, k * copy.WARP)
            j = _bin(b, arith.AddiOp, shared.col, c)
            inside = b.insert(arith.CmpiOp(j, last, "ule")).result
            clamped = _bin(b, arith.MinUIOp, j, last)
            w = widened(b, b.insert(memref.LoadOp.get(v, [shared.rank, clamped])).res)
            columns.append(c)
            weights.append(b.insert(arith.SelectOp(inside, w, zero)).result)

        # Each iteration takes `together` rows (w + 4 i, ..., w + 4 (i + together - 1)),
        # their sums independent of each other, so that their loads, products and shuffles
        # overlap: one row at a time waits on its chain of adds and shuffles.
        loop = Block(arg_types=[IndexType()])
        lb = LocatingBuilder(InsertPoint.at_end(loop))
        rows = [_bin(lb, arith.AddiOp, loop.args[0], j * warps) for j in range(together)]
        sums = [zero] * together
        for c, w in zip(columns, weights, strict=True):
            for j, r in enumerate(rows):
                xv = widened(lb, lb.insert(memref.LoadOp.get(shared.buf, [r, c])).res)
                product = lb.insert(arith.MulfOp(xv, w)).result
                sums[j] = lb.insert(arith.AddfOp(sums[j], product)).result
        sums = _butterfly(lb, sums, _i32(lb, copy.WARP))
        first = lb.insert(arith.CmpiOp(lane, _index(lb, 0), "eq")).result
        for r, total in zip(rows, sums, strict=True):
            row = _bin(lb, arith.AddiOp, shared.row, r)
            inside = lb.insert(arith.CmpiOp(row, _index(lb, shape[0]), "ult")).result
            store = lb.insert(arith.AndIOp(inside, first)).result
            _if(
                lb,
                store,
                lambda sb, row=row, total=total: sb.insert(
                    memref.StoreOp.get(total, y, [shared.rank, shared.tile_col, row])
                ),
            )
        lb.insert(scf.YieldOp())
        step = _index(b, warps * together)
        b.insert(scf.ForOp(warp, _index(b, tile[0]), step, [], Region(loop)))

    return _kernel(
        _broadcast_name("broadcast_row_dot", multicast, order),
        [x_type, v_type, y_type],
        body,
        target=target,
        block=TMA_BLOCK,
        cluster=(cluster, 1, 1),
    )
