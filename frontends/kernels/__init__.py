"""Copy kernels built with the Python builder API: the frontend path in a few lines.

    from frontends import kernels
    from copy_tools import runtime
    module = kernels.tma_copy((1000, 1000), "f32", tile=(64, 64))
    program = runtime.compile(module)
    program(x, y, grid=kernels.grid((1000, 1000), (64, 64)))

Every kernel copies (or, with `reduce`, reduces) a 2-D array tile by tile, one tile per block
of 128 threads (256 for cp.async); an array that is not a multiple of the tile is handled by
TMA's out-of-bounds fill and clipping.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import ceil, prod

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref, scf, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    UnitAttr,
    VectorType,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.parser import Parser
from xdsl.rewriter import InsertPoint

from analysis.verify import verify_module
from copy_dialect import ops as copy
from copy_dialect.upstream_gpu import ShuffleOp
from facts.target import TARGETS

TMA_BLOCK = 128

# L2 cache policies for the builders' `cache_hints` (copy.async_copy's `l2`).
EVICT_NORMAL = "evict_normal"
EVICT_FIRST = "evict_first"
EVICT_LAST = "evict_last"
EVICT_UNCHANGED = "evict_unchanged"
CP_ASYNC_BLOCK = 256


def element_type(name: str) -> Attribute:
    """`"f32"`, `"bf16"`, `"i32"` ... as an xDSL type (builtin types need no dialect)."""
    return Parser(Context(), name).parse_type()


def grid(shape: Sequence[int], tile: Sequence[int]) -> tuple[int, int]:
    """Blocks covering a 2-D `shape` with `tile`s: (tile columns, tile rows)."""
    return (ceil(shape[1] / tile[1]), ceil(shape[0] / tile[0]))


def _kernel(
    name: str,
    arg_types: Sequence[Attribute],
    body: Callable[[Builder, Sequence[SSAValue]], None],
    *,
    target: str,
    block: int,
    cluster: Sequence[int] | None = None,
) -> ModuleOp:
    entry = Block(arg_types=arg_types)
    builder = Builder(InsertPoint.at_end(entry))
    body(builder, entry.args)
    builder.insert(func.ReturnOp())
    fn = func.FuncOp(name, FunctionType.from_lists(arg_types, []), Region(entry))
    fn.attributes["gpu.kernel"] = UnitAttr()
    fn.attributes["gpu.known_block_size"] = DenseArrayBase.from_list(i32, [block, 1, 1])
    if cluster is not None:
        fn.attributes["copy.cluster"] = DenseArrayBase.from_list(i32, list(cluster))
    module = ModuleOp([fn])
    module.attributes["copy.target"] = copy.TargetAttr(target)
    # A builder's kernel is proven as the user's would be: its ops and its protocol.
    verify_module(module)
    return module


def _index(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def _tile_origin(b: Builder, tile: Sequence[int]) -> tuple[SSAValue, SSAValue]:
    bx = b.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
    by = b.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum.Y))).result
    col = b.insert(arith.MuliOp(bx, _index(b, tile[1]))).result
    row = b.insert(arith.MuliOp(by, _index(b, tile[0]))).result
    return row, col


def tma_copy(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int] = (64, 64),
    *,
    swizzle: int = 16,
    reduce: str | None = None,
    prefetch_destination: bool = False,
    dynamic: bool = False,
    cache_hints: tuple[str | copy.CachePolicy | None, str | copy.CachePolicy | None] = (
        None,
        None,
    ),
    l2_promotion: int | None = None,
    target: str = "sm_90a",
) -> ModuleOp:
    """`y = x` (or `y <reduce>= x`) tile by tile: a TMA load into SMEM (zero-filled out of
    bounds), a wait on its barrier, a TMA store (clipped) or reduction. With
    `prefetch_destination`, the block first prefetches its tile of y into L2 (a reduction
    reads y), so that reading y overlaps loading x. With `dynamic`, the arrays' shapes are
    `?x?`: one compiled kernel serves every shape (the tensor maps are encoded at launch).
    `cache_hints` are the L2 cache policies of the load and of the store (`"evict_first"`,
    `"evict_last"`, `"evict_normal"`, `"evict_unchanged"`: copy.async_copy's `l2`; or a
    `copy.CachePolicy` with a fraction and a secondary priority); the prefetch of the
    destination takes the store's. `l2_promotion` (bytes, 0 for none) is that of the
    load's tensor map and of the prefetch's (the default: 128)."""
    elt = element_type(dtype)
    gmem = MemRefType(elt, [DYNAMIC_INDEX] * 2 if dynamic else list(shape))
    smem = MemRefType(elt, list(tile), memory_space=copy.SmemSpaceAttr(swizzle))

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        c0 = _index(b, 0)
        phase = b.insert(arith.ConstantOp(IntegerAttr(0, i1))).result
        row, col = _tile_origin(b, tile)
        buf = b.insert(copy.AllocSmemOp(smem)).result
        bar = b.insert(copy.BarrierInitOp(1)).result
        if prefetch_destination:
            b.insert(
                copy.PrefetchOp(y, [row, col], tile, l2=cache_hints[1], l2_promotion=l2_promotion)
            )
        b.insert(
            copy.AsyncCopyOp(
                x,
                buf,
                src_indices=[row, col],
                barrier=bar,
                barrier_index=c0,
                oob="zeros",
                l2=cache_hints[0],
                l2_promotion=l2_promotion,
            )
        )
        b.insert(copy.BarrierWaitOp(bar, c0, phase))
        b.insert(
            copy.AsyncCopyOp(buf, y, dst_indices=[row, col], reduction=reduce, l2=cache_hints[1])
        )
        b.insert(copy.CommitGroupOp("bulk"))
        b.insert(copy.WaitGroupOp("bulk", 0))

    name = "tma_reduce" if reduce else "tma_copy"
    return _kernel(name, [gmem, gmem], body, target=target, block=TMA_BLOCK)


def cp_async_copy(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int] = (32, 128),
    *,
    dynamic: bool = False,
    target: str = "sm_80",
) -> ModuleOp:
    """`y = x` tile by tile: a cp.async load into SMEM by all threads (zero-filled out of
    bounds), then plain stores of the in-bounds elements. With `dynamic`, the arrays'
    shapes are `?x?`: one compiled kernel serves every shape (the runtime passes the sizes,
    and the copy picks its chunk size from the row pitch at run time)."""
    elt = element_type(dtype)
    gmem = MemRefType(elt, [DYNAMIC_INDEX] * 2 if dynamic else list(shape))
    smem = MemRefType(elt, list(tile), memory_space=copy.SmemSpaceAttr())

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        row, col = _tile_origin(b, tile)
        if dynamic:
            rows = b.insert(memref.DimOp(y, _index(b, 0))).result
            cols = b.insert(memref.DimOp(y, _index(b, 1))).result
        else:
            rows, cols = _index(b, shape[0]), _index(b, shape[1])
        buf = b.insert(copy.AllocSmemOp(smem)).result
        b.insert(
            copy.AsyncCopyOp(x, buf, src_indices=[row, col], implementation="cp_async", oob="zeros")
        )
        b.insert(copy.CommitGroupOp("cp_async"))
        b.insert(copy.WaitGroupOp("cp_async", 0))
        tid = b.insert(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
        total, step = _index(b, tile[0] * tile[1]), _index(b, CP_ASYNC_BLOCK)
        loop_body = Block(arg_types=[IndexType()])
        lb = Builder(InsertPoint.at_end(loop_body))
        i = loop_body.args[0]
        r = lb.insert(arith.DivUIOp(i, _index(lb, tile[1]))).result
        c = lb.insert(arith.RemUIOp(i, _index(lb, tile[1]))).result
        gr = lb.insert(arith.AddiOp(row, r)).result
        gc = lb.insert(arith.AddiOp(col, c)).result
        inside = lb.insert(
            arith.AndIOp(
                lb.insert(arith.CmpiOp(gr, rows, "ult")).result,
                lb.insert(arith.CmpiOp(gc, cols, "ult")).result,
            )
        ).result
        then = Block()
        tb = Builder(InsertPoint.at_end(then))
        value = tb.insert(memref.LoadOp.get(buf, [r, c])).res
        tb.insert(memref.StoreOp.get(value, y, [gr, gc]))
        tb.insert(scf.YieldOp())
        lb.insert(scf.IfOp(inside, [], Region(then)))
        lb.insert(scf.YieldOp())
        b.insert(scf.ForOp(tid, total, step, [], Region(loop_body)))

    return _kernel("cp_async_copy", [gmem, gmem], body, target=target, block=CP_ASYNC_BLOCK)


def bulk_copy(
    n: int,
    dtype: str,
    tile: int = 4096,
    *,
    prefetch: bool = False,
    target: str = "sm_90a",
) -> ModuleOp:
    """`y = x` for 1-D arrays of `n` elements by non-tensor bulk copies (`impl bulk`): block
    b copies elements [b * tile, (b + 1) * tile) through SMEM, and the last block, when
    `tile` does not divide `n`, the tail with a box of its own. Each part must be a
    multiple of 16 bytes (rule BK2). With `prefetch`, each block first prefetches its part
    into L2 (a bulk prefetch). Launch it on `ceil(n / tile)` blocks."""
    elt = element_type(dtype)
    bits = copy.bitwidth(elt) or 8
    tail = n % tile
    for part in (tile, tail):
        if part * bits % 128:
            raise ValueError(
                f"expected parts of a multiple of 16 bytes, got {part} {dtype} elements "
                f"({part * bits / 8:g} bytes): choose n and tile accordingly"
            )
    gmem = MemRefType(elt, [n])
    full = n // tile

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        phase = b.insert(arith.ConstantOp(IntegerAttr(0, i1))).result
        bx = b.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
        origin = b.insert(arith.MuliOp(bx, _index(b, tile))).result
        # One barrier per part: the analysis need not know that one block takes one part.
        bars = b.insert(copy.BarrierInitOp(2 if tail else 1)).result
        parts = [b.insert(copy.AllocSmemOp(_smem_1d(elt, tile))).result]
        if tail:
            parts.append(b.insert(copy.AllocSmemOp(_smem_1d(elt, tail))).result)

        def copy_part(tb: Builder, part: int) -> None:
            buf, index = parts[part], _index(tb, part)
            if prefetch:
                size = buf.type.get_shape()
                tb.insert(copy.PrefetchOp(x, [origin], size, implementation="bulk"))
            tb.insert(
                copy.AsyncCopyOp(
                    x,
                    buf,
                    src_indices=[origin],
                    barrier=bars,
                    barrier_index=index,
                    oob="promise_in_bounds",
                    implementation="bulk",
                )
            )
            tb.insert(copy.BarrierWaitOp(bars, index, phase))
            tb.insert(
                copy.AsyncCopyOp(
                    buf, y, dst_indices=[origin], oob="promise_in_bounds", implementation="bulk"
                )
            )
            tb.insert(copy.CommitGroupOp("bulk"))
            tb.insert(copy.WaitGroupOp("bulk", 0))

        is_full = b.insert(arith.CmpiOp(bx, _index(b, full), "ult")).result
        _if(b, is_full, lambda tb: copy_part(tb, 0))
        if tail:
            is_tail = b.insert(arith.CmpiOp(bx, _index(b, full), "eq")).result
            _if(b, is_tail, lambda tb: copy_part(tb, 1))

    return _kernel("bulk_copy", [gmem, gmem], body, target=target, block=TMA_BLOCK)


def _smem_1d(elt: Attribute, size: int) -> MemRefType:
    return MemRefType(elt, [size], memory_space=copy.SmemSpaceAttr())


def _bulk_oob(shape: Sequence[int], tile: Sequence[int], implementation: str | None) -> str | None:
    """The `oob` of a builder's copies for `implementation`: a bulk copy moves whole rows
    and promises to stay in bounds (rules BK1, BK4); None (the default) otherwise."""
    if implementation != "bulk":
        return None
    if tile[-1] != shape[-1]:
        raise ValueError(
            f"expected tiles of whole rows ({shape[-1]} elements) for bulk copies, got "
            f"{tuple(tile)}"
        )
    return "promise_in_bounds"


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
    if shape[0] % tile[0]:
        raise ValueError(f"expected rows ({shape[0]}) that are a multiple of {tile[0]}")
    oob = _bulk_oob(shape, tile, implementation)
    # The array seen as (row halves, half rows, columns), so that a CTA stores its half.
    gmem = MemRefType(elt, [shape[0] // half, half, shape[1]])
    smem = MemRefType(elt, [2, half, tile[1]], memory_space=copy.SmemSpaceAttr())

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        c0, c2 = _index(b, 0), _index(b, 2)
        phase = b.insert(arith.ConstantOp(IntegerAttr(0, i1))).result
        bx = b.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
        by = b.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum.Y))).result
        rank = b.insert(arith.RemUIOp(bx, c2)).result
        pair = b.insert(arith.DivUIOp(bx, c2)).result
        col = b.insert(arith.MuliOp(pair, _index(b, tile[1]))).result
        first = b.insert(arith.MuliOp(by, c2)).result
        buf = b.insert(copy.AllocSmemOp(smem)).result
        bar = b.insert(copy.BarrierInitOp(1)).result
        b.insert(
            copy.AsyncCopyOp(
                x,
                buf,
                src_indices=[first, c0, col],
                barrier=bar,
                barrier_index=c0,
                oob=oob or "zeros",
                collective=[0],
                implementation=implementation,
            )
        )
        b.insert(copy.BarrierWaitOp(bar, c0, phase))
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
        b.insert(copy.CommitGroupOp("bulk"))
        b.insert(copy.WaitGroupOp("bulk", 0))

    return _kernel(
        "multicast_copy", [gmem, gmem], body, target=target, block=TMA_BLOCK, cluster=(2, 1, 1)
    )


BROADCAST_ORDERS = ("cluster", "rank_major")
"""How `broadcast_copy` maps blocks to (rank, tile): `cluster` puts the CTAs that need the
same tile of x in one cluster (consecutive blocks); `rank_major` makes the rank the slowest
index of the launch, so the CTAs that need the same tile are a whole x apart."""


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
) -> None:
    """A ValueError (expected, got, fix) for parameters `broadcast_copy` cannot build."""
    if target not in TARGETS:
        raise ValueError(f"expected a target of {', '.join(TARGETS)}, got {target!r}")
    if multicast and not TARGETS[target].has_multicast:
        multicast_targets = ", ".join(n for n, t in TARGETS.items() if t.has_multicast)
        raise ValueError(
            f"expected a target with .multicast::cluster ({multicast_targets}) for "
            f"multicast=True, got {target}; use sm_90a, or multicast=False"
        )
    if not TARGETS[target].has_clusters:
        raise ValueError(f"expected a target with clusters (sm_90 or later), got {target}")
    if order not in BROADCAST_ORDERS:
        raise ValueError(f"expected order of {', '.join(BROADCAST_ORDERS)}, got {order!r}")
    if multicast and order != "cluster":
        raise ValueError(
            f"expected order='cluster' for multicast=True, got order={order!r}: a multicast "
            "is shared by the CTAs of one cluster, so they must need the same tile; use "
            "multicast=False for the rank-major order"
        )
    if not 2 <= cluster <= 8:
        raise ValueError(
            f"expected a cluster of 2 to 8 CTAs (the portable cluster sizes), got {cluster}"
        )
    if len(shape) != 2 or any(d < 1 for d in shape):
        raise ValueError(f"expected a 2-D shape of positive extents, got {tuple(shape)}")
    if len(tile) != 2 or any(not 1 <= d <= 256 for d in tile):
        raise ValueError(
            f"expected a 2-D tile of 1 to 256 elements per dim (a TMA box), got {tuple(tile)}"
        )
    bits = copy.bitwidth(element_type(dtype))
    if bits is None or bits % 8:
        raise ValueError(f"expected an element type of whole bytes, got {dtype}")
    size = bits // 8
    if tile[1] * size % 16:
        raise ValueError(
            f"expected tile rows of a multiple of 16 bytes (a TMA box row), got {tile[1]} "
            f"{dtype} ({tile[1] * size} bytes); use {-(-tile[1] * size // 16) * 16 // size} "
            "columns"
        )
    if shape[1] * size % 16:
        raise ValueError(
            f"expected rows of x and y of a multiple of 16 bytes (TMA strides, rule TR19), got "
            f"{shape[1]} {dtype} ({shape[1] * size} bytes); pad the columns to "
            f"{-(-shape[1] * size // 16) * 16 // size}"
        )
    if multicast:
        share = tile[0] // cluster
        if tile[0] % cluster:
            raise ValueError(
                f"expected tile rows divisible by the cluster ({cluster}) for multicast=True "
                f"(each CTA loads 1/{cluster} of the rows), got {tile[0]}; use "
                f"{-(-tile[0] // cluster) * cluster} rows"
            )
        if share * tile[1] * size % copy.smem_alignment(16):
            raise ValueError(
                f"expected each CTA's share of the tile ({share}x{tile[1]} {dtype}) to be a "
                f"multiple of {copy.smem_alignment(16)} bytes (TMA's SMEM alignment), got "
                f"{share * tile[1] * size} bytes; use more tile rows or columns"
            )
    slot = (copy.smem_bytes(tile, element_type(dtype), 16), copy.smem_alignment(16))
    barrier = (copy.BARRIER_BYTES, copy.BARRIER_BYTES)
    needed = copy.block_smem_bytes(copy.smem_footprint([slot, barrier]))
    budget = TARGETS[target].max_smem_bytes
    if needed > budget:
        raise ValueError(
            f"expected a tile that fits the {budget} bytes of SMEM a block can use on "
            f"{target}, got a {tuple(tile)} {dtype} tile ({needed} bytes with its barrier); "
            "use a smaller tile"
        )


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
    _check_broadcast(shape, dtype, tile, cluster, multicast, order, target)
    elt = element_type(dtype)
    x_type = MemRefType(elt, list(shape))
    y_type = MemRefType(elt, [cluster, *shape])

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        shared = _shared_tile(b, x, shape, tile, cluster, multicast, order)
        b.insert(copy.AsyncCopyOp(shared.buf, y, dst_indices=[shared.rank, shared.row, shared.col]))
        b.insert(copy.CommitGroupOp("bulk"))
        b.insert(copy.WaitGroupOp("bulk", 0))

    name = "broadcast_multicast" if multicast else "broadcast_unicast"
    if order != "cluster":
        name += f"_{order}"
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
    smem = MemRefType(x_type.element_type, list(tile), memory_space=copy.SmemSpaceAttr())
    tiles_n, tiles_m = grid(shape, tile)
    c0 = _index(b, 0)
    phase = b.insert(arith.ConstantOp(IntegerAttr(0, i1))).result
    bx = b.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
    by = b.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum.Y))).result
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
    b.insert(
        copy.AsyncCopyOp(
            x,
            buf,
            src_indices=[row, col],
            barrier=bar,
            barrier_index=c0,
            oob="zeros",
            collective=[0] if multicast else None,
        )
    )
    b.insert(copy.BarrierWaitOp(bar, c0, phase))
    return _SharedTile(rank, tile_col, row, col, buf)


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
    _check_broadcast(shape, dtype, tile, cluster, multicast, order, target)
    if dtype not in FLOAT_TYPES:
        raise ValueError(f"expected a float element type ({', '.join(FLOAT_TYPES)}), got {dtype!r}")
    if tile[1] % copy.WARP:
        raise ValueError(
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
        t = b.insert(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
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
        lb = Builder(InsertPoint.at_end(loop))
        rows = [_bin(lb, arith.AddiOp, loop.args[0], j * warps) for j in range(together)]
        sums = [zero] * together
        for c, w in zip(columns, weights, strict=True):
            for j, r in enumerate(rows):
                xv = widened(lb, lb.insert(memref.LoadOp.get(shared.buf, [r, c])).res)
                product = lb.insert(arith.MulfOp(xv, w)).result
                sums[j] = lb.insert(arith.AddfOp(sums[j], product)).result
        width = lb.insert(arith.ConstantOp(IntegerAttr(copy.WARP, i32))).result
        for offset in (16, 8, 4, 2, 1):
            off = lb.insert(arith.ConstantOp(IntegerAttr(offset, i32))).result
            for j in range(together):
                other = lb.insert(ShuffleOp(sums[j], off, width, "xor")).shuffle_result
                sums[j] = lb.insert(arith.AddfOp(sums[j], other)).result
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

    name = "broadcast_row_dot_" + ("multicast" if multicast else "unicast")
    if order != "cluster":
        name += f"_{order}"
    return _kernel(
        name,
        [x_type, v_type, y_type],
        body,
        target=target,
        block=TMA_BLOCK,
        cluster=(cluster, 1, 1),
    )


def pipeline_stages_limit(tile: Sequence[int], dtype: str, target: str = "sm_90a") -> int:
    """The most ring slots `tma_copy_pipelined` can give `tile`s of `dtype` on `target`: the
    ring and its barriers must fit the block's SMEM (rule TR6, the verifier's layout) and one
    barrier group holds at most `MAX_BARRIERS` (rule I1). 0 when not even one slot fits."""
    return _stages_limit(tile, [dtype], [], 1, target)


def _stages_limit(
    tile: Sequence[int],
    inputs: Sequence[str],
    outputs: Sequence[str],
    barrier_groups: int,
    target: str,
    out_buffers: int = 2,
) -> int:
    """The most ring slots for one ring of `tile`s per input, `out_buffers` buffers per
    output and `barrier_groups` groups of one barrier per slot within the block's SMEM on `target`
    (the verifier's arena layout, rule TR6) and `MAX_BARRIERS` (rule I1); 0 when none fits."""
    align = copy.smem_alignment(16)

    def slot(name: str) -> int:
        return copy.smem_bytes(tile, element_type(name), 16)

    def footprint(stages: int) -> int:
        parts = [(stages * slot(name), align) for name in inputs]
        parts += [(out_buffers * slot(name), align) for name in outputs]
        parts += [(copy.BARRIER_BYTES * stages, copy.BARRIER_BYTES)] * barrier_groups
        return copy.block_smem_bytes(copy.smem_footprint(parts))

    budget = TARGETS[target].max_smem_bytes
    return max((n for n in range(1, copy.MAX_BARRIERS + 1) if footprint(n) <= budget), default=0)


def _check_stages(stages: int, tile: Sequence[int], dtype: str, target: str) -> None:
    """A ValueError (expected, got, fix) for a ring `tma_copy_pipelined` cannot build."""
    if target not in TARGETS:
        raise ValueError(f"expected a target of {', '.join(TARGETS)}, got {target!r}")
    limit = pipeline_stages_limit(tile, dtype, target)
    budget = f"the {TARGETS[target].max_smem_bytes} bytes of SMEM a block can use on {target}"
    if limit == 0:
        raise ValueError(
            f"expected a tile whose SMEM slot fits {budget}, got a {tuple(tile)} tile of "
            f"{dtype}; use a smaller tile"
        )
    if stages < 1:
        raise ValueError(
            f"expected at least 1 pipeline stage, got stages={stages}; use stages=1 to {limit}"
        )
    if stages > limit == copy.MAX_BARRIERS:
        raise ValueError(
            f"expected at most {limit} pipeline stages (one !copy.barrier group holds at most "
            f"{limit} barriers), got stages={stages}; use stages={limit} or fewer"
        )
    if stages > limit:
        raise ValueError(
            f"expected at most {limit} pipeline stages of {tuple(tile)} {dtype} tiles (the ring "
            f"and its barriers must fit {budget}), got stages={stages}; use stages={limit} or "
            "fewer, or a smaller tile"
        )


def tma_copy_pipelined(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int] = (128, 128),
    *,
    stages: int = 3,
    reduce: str | None = None,
    implementation: str | None = None,
    target: str = "sm_90a",
) -> ModuleOp:
    """`y = x` (or `y <reduce>= x`) at full bandwidth: a persistent kernel (launch it on a
    few blocks per SM) in which each block walks its tiles `k = 0, 1, ...` (tile
    `block + k * grid`) through a ring of `stages` SMEM slots, tile k in slot `k % stages`.

    Iteration k waits for tile k (its barrier's phase `k / stages`, parity
    `(k / stages) % 2`), stores it and commits the store. Then, with `pending =
    min(1, stages - 1)`, it waits until all but the last `pending` stores have read their
    slots (`wait_group bulk <pending> read_only`) and refills the slot of tile `k - pending`
    with tile `k - pending + stages`, if the block has it. So loads run `stages - pending`
    tiles ahead of the stores; with one stage, the store of tile k finishes reading the only
    slot before tile k + 1 is loaded into it. The shape must be a multiple of the tile, and
    `stages` between 1 and `pipeline_stages_limit(tile, dtype, target)`. With
    `implementation="bulk"`, the tiles are whole rows (tile[1] == shape[1]) and the loads
    and stores are non-tensor bulk copies that promise to stay in bounds."""
    if shape[0] % tile[0] or shape[1] % tile[1]:
        raise ValueError(f"expected a shape that is a multiple of the tile {tuple(tile)}")
    _check_stages(stages, tile, dtype, target)
    oob = _bulk_oob(shape, tile, implementation)
    pending = min(1, stages - 1)
    elt = element_type(dtype)
    gmem = MemRefType(elt, list(shape))
    ring = MemRefType(elt, [stages, *tile], memory_space=copy.SmemSpaceAttr())
    tiles_n = shape[1] // tile[1]
    total = (shape[0] // tile[0]) * tiles_n

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        c0, c1, c2 = _index(b, 0), _index(b, 1), _index(b, 2)
        s = _index(b, stages)
        bid = b.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
        blocks = b.insert(gpu.GridDimOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
        # Tiles of this block: bid + k * blocks for k < count (0 when bid >= total: the
        # unsigned sum wraps below `blocks`).
        left = b.insert(arith.SubiOp(_index(b, total), bid)).result
        count = b.insert(
            arith.DivUIOp(
                b.insert(arith.AddiOp(left, b.insert(arith.SubiOp(blocks, c1)).result)).result,
                blocks,
            )
        ).result
        buf = b.insert(copy.AllocSmemOp(ring)).result
        bars = b.insert(copy.BarrierInitOp(stages)).result

        def origin(bb: Builder, k: SSAValue) -> tuple[SSAValue, SSAValue]:
            t = bb.insert(arith.AddiOp(bid, bb.insert(arith.MuliOp(k, blocks)).result)).result
            tr = bb.insert(arith.DivUIOp(t, _index(bb, tiles_n))).result
            tc = bb.insert(arith.RemUIOp(t, _index(bb, tiles_n))).result
            row = bb.insert(arith.MuliOp(tr, _index(bb, tile[0]))).result
            col = bb.insert(arith.MuliOp(tc, _index(bb, tile[1]))).result
            return row, col

        def load(bb: Builder, k: SSAValue, slot: SSAValue) -> None:
            row, col = origin(bb, k)
            bb.insert(
                copy.AsyncCopyOp(
                    x,
                    buf,
                    src_indices=[row, col],
                    dst_indices=[slot],
                    barrier=bars,
                    barrier_index=slot,
                    oob=oob,
                    implementation=implementation,
                )
            )

        # Prologue: tiles 0 .. stages - 1 into slots 0 .. stages - 1.
        for i in range(stages):
            k = _index(b, i)
            _if(b, b.insert(arith.CmpiOp(k, count, "ult")).result, lambda tb, k=k: load(tb, k, k))

        loop = Block(arg_types=[IndexType()])
        lb = Builder(InsertPoint.at_end(loop))
        k = loop.args[0]
        slot = lb.insert(arith.RemUIOp(k, s)).result
        lap = lb.insert(arith.DivUIOp(k, s)).result
        parity = lb.insert(arith.CmpiOp(lb.insert(arith.RemUIOp(lap, c2)).result, c0, "ne")).result
        lb.insert(copy.BarrierWaitOp(bars, slot, parity))
        row, col = origin(lb, k)
        lb.insert(
            copy.AsyncCopyOp(
                buf,
                y,
                src_indices=[slot],
                dst_indices=[row, col],
                reduction=reduce,
                oob=oob,
                implementation=implementation,
            )
        )
        lb.insert(copy.CommitGroupOp("bulk"))
        # Refill the slot of tile k - pending (whose store is no longer among the last
        # `pending` groups) with tile k - pending + stages, once that store has read it.
        done = k if pending == 0 else lb.insert(arith.SubiOp(k, _index(lb, pending))).result
        refill = lb.insert(arith.AddiOp(done, s)).result
        cond = lb.insert(arith.CmpiOp(refill, count, "ult")).result
        if pending:
            started = lb.insert(arith.CmpiOp(k, _index(lb, pending), "uge")).result
            cond = lb.insert(arith.AndIOp(started, cond)).result

        def refill_slot(tb: Builder) -> None:
            tb.insert(copy.WaitGroupOp("bulk", pending, read_only=True))
            load(tb, refill, tb.insert(arith.RemUIOp(done, s)).result)

        _if(lb, cond, refill_slot)
        lb.insert(scf.YieldOp())
        b.insert(scf.ForOp(c0, count, c1, [], Region(loop)))
        b.insert(copy.WaitGroupOp("bulk", 0))

    return _kernel("tma_copy_pipelined", [gmem, gmem], body, target=target, block=TMA_BLOCK)


# ===----------------------------------------------------------------------=== #
# Warp-specialized kernels
# ===----------------------------------------------------------------------=== #

ELEMENTWISE = ("add", "axpb", "cast")
"""`ws_elementwise` operations: z = x + y, y = a * x + b, y = x converted to `out_dtype`."""

FLOAT_TYPES = ("f32", "bf16", "f16")


def ws_grid(sm_count: int, blocks_per_sm: int = 1) -> tuple[int, int]:
    """The grid of a persistent warp-specialized kernel: `blocks_per_sm` blocks per SM (the
    kernels walk their tiles `block + k * grid`)."""
    return (sm_count * blocks_per_sm, 1)


def tiles_grid(shape: Sequence[int], tile: Sequence[int], per_block: int = 1) -> tuple[int, int]:
    """The grid that gives each block of a warp-specialized kernel `per_block` of its tiles
    (the last block fewer): with 1, the block scheduler deals out the tiles and each block's
    ring turns once. On the H200 this launch streamed 4-6% faster than `ws_grid` for
    `ws_elementwise` and `ws_copy` (benchmarks/RESULTS.md, run 36): many small blocks per
    SM, each with its own producer, keep more copies in flight than one persistent block.
    `ws_row_sum` deals out row bands, not tiles: `tiles_grid(shape, (band_rows, shape[1]))`
    gives each block `per_block` bands."""
    if per_block < 1:
        raise ValueError(f"expected per_block >= 1, got {per_block}")
    total = ceil(shape[0] / tile[0]) * ceil(shape[1] / tile[1])
    return (ceil(total / per_block), 1)


class _Loop:
    """An `scf.for k = 0 .. count` under construction, and builders of its body."""

    def __init__(self, b: Builder, count: SSAValue):
        self.block = Block(arg_types=[IndexType()])
        self.k = self.block.args[0]
        self.b = Builder(InsertPoint.at_end(self.block))
        self.outer = b
        self.count = count

    def close(self) -> None:
        self.b.insert(scf.YieldOp())
        c0, c1 = _index(self.outer, 0), _index(self.outer, 1)
        self.outer.insert(scf.ForOp(c0, self.count, c1, [], Region(self.block)))


def _if(b: Builder, cond: SSAValue, fill: Callable[[Builder], None]) -> None:
    then = Block()
    tb = Builder(InsertPoint.at_end(then))
    fill(tb)
    tb.insert(scf.YieldOp())
    b.insert(scf.IfOp(cond, [], Region(then)))


def _store_inside(
    b: Builder,
    buf: SSAValue,
    tile: Sequence[int],
    origin: tuple[SSAValue, SSAValue],
    bounds: tuple[SSAValue, SSAValue],
    threads: int,
    store: Callable[[Builder, SSAValue, SSAValue, SSAValue], None],
) -> None:
    """The block's `threads` threads walk the SMEM tile `buf` (element t, t + threads, ...,
    row-major) and `store` each element whose GMEM (row, col), `origin` plus its place in
    the tile, lies inside `bounds` (rows, cols)."""
    tid = b.insert(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
    loop = Block(arg_types=[IndexType()])
    lb = Builder(InsertPoint.at_end(loop))
    r = _bin(lb, arith.DivUIOp, loop.args[0], tile[1])
    c = _bin(lb, arith.RemUIOp, loop.args[0], tile[1])
    row = _bin(lb, arith.AddiOp, origin[0], r)
    col = _bin(lb, arith.AddiOp, origin[1], c)
    inside = lb.insert(
        arith.AndIOp(
            lb.insert(arith.CmpiOp(row, bounds[0], "ult")).result,
            lb.insert(arith.CmpiOp(col, bounds[1], "ult")).result,
        )
    ).result

    def body(tb: Builder) -> None:
        store(tb, tb.insert(memref.LoadOp.get(buf, [r, c])).res, row, col)

    _if(lb, inside, body)
    lb.insert(scf.YieldOp())
    total, step = _index(b, prod(tile)), _index(b, threads)
    b.insert(scf.ForOp(tid, total, step, [], Region(loop)))


def _bin(b: Builder, cls: type, lhs: SSAValue, rhs: SSAValue | int) -> SSAValue:
    if isinstance(rhs, int):
        rhs = _index(b, rhs)
    return b.insert(cls(lhs, rhs)).results[0]


def _parity(b: Builder, lap: SSAValue) -> SSAValue:
    """The i1 parity of phase `lap` of a barrier."""
    odd = _bin(b, arith.RemUIOp, lap, 2)
    return b.insert(arith.CmpiOp(odd, _index(b, 0), "ne")).result


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
        raise ValueError(
            f"expected a tile whose ring slots fit the {TARGETS[target].max_smem_bytes} bytes "
            f"of SMEM of a block on {target}, got {tuple(tile)}; use a smaller tile"
        )
    if stages is None:
        return min(4, limit)
    if stages > limit:
        raise ValueError(
            f"expected at most {limit} stages of {tuple(tile)} tiles (the rings, output "
            f"buffers and barriers must fit the {TARGETS[target].max_smem_bytes} bytes of SMEM "
            f"of a block on {target}), got stages={stages}; use stages={limit} or fewer, or a "
            "smaller tile"
        )
    return stages


def _check_ws(
    shape: Sequence[int], tile: Sequence[int], stages: int, dtypes: Sequence[str], target: str
) -> None:
    if target not in TARGETS or not TARGETS[target].has_tma:
        raise ValueError(
            f"expected a target with TMA (sm_90a, sm_100a, ...), got {target!r}: warp-"
            "specialized kernels use TMA loads and stores"
        )
    if len(shape) != 2 or any(d < 1 for d in shape):
        raise ValueError(f"expected a 2-D shape of positive extents, got {tuple(shape)}")
    if len(tile) != 2 or any(t < 1 or t > 256 for t in tile):
        raise ValueError(f"expected a 2-D tile of 1 to 256 per dim (a TMA box), got {tuple(tile)}")
    if not 1 <= stages <= copy.MAX_BARRIERS:
        raise ValueError(f"expected 1 to {copy.MAX_BARRIERS} stages, got stages={stages}")
    for name in dtypes:
        if name not in (*FLOAT_TYPES, "i32", "i16", "i8"):
            raise ValueError(f"expected an element type of f32, bf16, f16, got {name!r}")


def _round_robin(b: Builder, total: int) -> tuple[SSAValue, SSAValue, SSAValue]:
    """The block's index, the grid's block count and how many of `total` work items, dealt
    round-robin (item bid + k * blocks), the block gets: ceil((total - bid) / blocks), 0 when
    bid >= total (the unsigned sum wraps below `blocks`)."""
    bid = b.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
    blocks = b.insert(gpu.GridDimOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
    left = _bin(b, arith.SubiOp, _index(b, total), bid)
    spare = _bin(b, arith.SubiOp, blocks, 1)
    return bid, blocks, _bin(b, arith.DivUIOp, _bin(b, arith.AddiOp, left, spare), blocks)


class _Persistent:
    """The tiles of a persistent kernel's block: `bid + k * nblocks` for k < count, row-major
    over the tile grid of `shape` (the last row and column of tiles may be partial: TMA
    zero-fills the loads and clips the stores there)."""

    def __init__(self, b: Builder, shape: Sequence[int], tile: Sequence[int]):
        self.tile = tile
        self.cols = ceil(shape[1] / tile[1])
        total = ceil(shape[0] / tile[0]) * self.cols
        self.bid, self.blocks, self.count = _round_robin(b, total)

    def origin(self, b: Builder, k: SSAValue) -> tuple[SSAValue, SSAValue]:
        t = _bin(b, arith.AddiOp, self.bid, _bin(b, arith.MuliOp, k, self.blocks))
        row = _bin(b, arith.MuliOp, _bin(b, arith.DivUIOp, t, self.cols), self.tile[0])
        col = _bin(b, arith.MuliOp, _bin(b, arith.RemUIOp, t, self.cols), self.tile[1])
        return row, col


def _producer(
    b: Builder,
    tiles: _Persistent | _Bands,
    inputs: Sequence[SSAValue],
    rings: Sequence[SSAValue],
    full: SSAValue,
    empty: SSAValue,
    stages: int,
    cache_hint: str | None = None,
) -> None:
    """The producer's loop: tile k into slot k % stages of every ring, once the consumers
    released the slot (empty, phase k / stages - 1) from the second lap on; `cache_hint`:
    the loads' L2 policy."""
    loop = _Loop(b, tiles.count)
    lb, k = loop.b, loop.k
    slot = _bin(lb, arith.RemUIOp, k, stages)
    lap = _bin(lb, arith.DivUIOp, k, stages)
    again = lb.insert(arith.CmpiOp(k, _index(lb, stages), "uge")).result

    def wait_empty(tb: Builder) -> None:
        tb.insert(copy.BarrierWaitOp(empty, slot, _parity(tb, _bin(tb, arith.SubiOp, lap, 1))))

    _if(lb, again, wait_empty)
    row, col = tiles.origin(lb, k)
    for x, ring in zip(inputs, rings, strict=True):
        lb.insert(
            copy.AsyncCopyOp(
                x,
                ring,
                src_indices=[row, col],
                dst_indices=[slot],
                barrier=full,
                barrier_index=slot,
                oob="zeros",
                l2=cache_hint,
            )
        )
    loop.close()


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
        raise ValueError(
            f"expected 0 <= in_flight < stages ({stages}), got in_flight={in_flight}: a store "
            "in flight holds its slot"
        )
    elt = element_type(dtype)
    gmem = MemRefType(elt, list(shape))
    ring_type = MemRefType(elt, [stages, *tile], memory_space=copy.SmemSpaceAttr())

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        tiles = _Persistent(b, shape, tile)
        ring = b.insert(copy.AllocSmemOp(ring_type)).result
        full = b.insert(copy.BarrierInitOp(stages, 1)).result
        empty = b.insert(copy.BarrierInitOp(stages, 1)).result
        ws = b.insert(copy.WarpSpecializeOp([1, 1]))
        _producer(
            Builder(InsertPoint.at_end(ws.role_block(0))),
            tiles,
            [x],
            [ring],
            full,
            empty,
            stages,
            cache_hints[0],
        )
        sb = Builder(InsertPoint.at_end(ws.role_block(1)))
        loop = _Loop(sb, tiles.count)
        lb, k = loop.b, loop.k
        slot = _bin(lb, arith.RemUIOp, k, stages)
        lb.insert(copy.BarrierWaitOp(full, slot, _parity(lb, _bin(lb, arith.DivUIOp, k, stages))))
        row, col = tiles.origin(lb, k)
        lb.insert(
            copy.AsyncCopyOp(ring, y, src_indices=[slot], dst_indices=[row, col], l2=cache_hints[1])
        )
        lb.insert(copy.CommitGroupOp("bulk"))

        def release(tb: Builder) -> None:
            tb.insert(copy.WaitGroupOp("bulk", in_flight, read_only=True))
            done = _bin(tb, arith.SubiOp, k, in_flight)
            tb.insert(
                copy.BarrierArriveOp(empty, _bin(tb, arith.RemUIOp, done, stages), issuer="elected")
            )

        if in_flight:
            _if(lb, lb.insert(arith.CmpiOp(k, _index(lb, in_flight), "uge")).result, release)
        else:
            release(lb)
        loop.close()
        sb.insert(copy.WaitGroupOp("bulk", 0))

    return _kernel("ws_copy", [gmem, gmem], body, target=target, block=2 * copy.WARP)


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
        raise ValueError(f"expected op to be one of {', '.join(ELEMENTWISE)}, got {op!r}")
    out_name = dtype if out_dtype is None else out_dtype
    if op == "cast" and out_dtype is None:
        raise ValueError("expected out_dtype for op='cast' (e.g. 'bf16')")
    for name in (dtype, out_name):
        if name not in FLOAT_TYPES:
            raise ValueError(
                f"expected a float element type ({', '.join(FLOAT_TYPES)}), got {name!r}"
            )
    _check_ws(shape, tile, 1 if stages is None else stages, [dtype, out_name], target)
    inputs = 2 if op == "add" else 1
    stages = _ws_stages(stages, tile, [dtype] * inputs, [out_name], target, out_buffers)
    if not 1 <= consumer_warps <= 16:
        raise ValueError(f"expected 1 to 16 consumer warps, got {consumer_warps}")
    if out_buffers not in (1, 2):
        raise ValueError(f"expected out_buffers of 1 or 2, got {out_buffers}")
    producer_warps = 1 if maxnreg is None else copy.WARPGROUP_WARPS
    if maxnreg is not None and consumer_warps % copy.WARPGROUP_WARPS:
        raise ValueError(
            f"expected a multiple of 4 consumer warps with maxnreg (setmaxnreg is per "
            f"warpgroup), got {consumer_warps}"
        )
    elt, out_elt = element_type(dtype), element_type(out_name)
    f32 = element_type("f32")
    gmem = MemRefType(elt, list(shape))
    out_gmem = MemRefType(out_elt, list(shape))
    ring_type = MemRefType(elt, [stages, *tile], memory_space=copy.SmemSpaceAttr())
    out_type = MemRefType(out_elt, [out_buffers, *tile], memory_space=copy.SmemSpaceAttr())
    threads = consumer_warps * copy.WARP
    elements = tile[0] * tile[1]

    # Each thread takes `lanes` consecutive elements at a time: 16-byte SMEM loads.
    in_bytes = (copy.bitwidth(elt) or 8) // 8
    lanes = 16 // in_bytes if tile[1] % (16 // in_bytes) == 0 else 1
    vf32 = VectorType(f32, [lanes])

    def to_f32(b: Builder, v: SSAValue) -> SSAValue:
        return v if elt == f32 else b.insert(arith.ExtFOp(v, vf32)).result

    def from_f32(b: Builder, v: SSAValue) -> SSAValue:
        if out_elt == f32:
            return v
        return b.insert(arith.TruncFOp(v, VectorType(out_elt, [lanes]))).result

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        xs = list(args[:inputs])
        z = args[inputs]
        scalars = args[inputs + 1 :]
        tiles = _Persistent(b, shape, tile)
        rings = [b.insert(copy.AllocSmemOp(ring_type)).result for _ in xs]
        out = b.insert(copy.AllocSmemOp(out_type)).result
        full = b.insert(copy.BarrierInitOp(stages, inputs)).result
        empty = b.insert(copy.BarrierInitOp(stages, consumer_warps)).result
        ws = b.insert(copy.WarpSpecializeOp([producer_warps, consumer_warps], maxnreg))
        pb = Builder(InsertPoint.at_end(ws.role_block(0)))
        if producer_warps == 1:
            _producer(pb, tiles, xs, rings, full, empty, stages, cache_hints[0])
        else:
            # Only the warpgroup's first warp runs the ring (its elected lane issues): the
            # others would wait on `empty` unthrottled and could fall two phases behind,
            # and the join would hang (the protocol analysis's P6), as in CUTLASS.
            warp = _bin(pb, arith.DivUIOp, ws.role_block(0).args[0], copy.WARP)
            first = pb.insert(arith.CmpiOp(warp, _index(pb, 0), "eq")).result
            _if(
                pb,
                first,
                lambda tb: _producer(tb, tiles, xs, rings, full, empty, stages, cache_hints[0]),
            )
        cb = Builder(InsertPoint.at_end(ws.role_block(1)))
        t = ws.role_block(1).args[0]
        splats = [cb.insert(vector.BroadcastOp(v, vf32)).vector for v in scalars]
        first = _bin(cb, arith.MuliOp, t, lanes)
        loop = _Loop(cb, tiles.count)
        lb, k = loop.b, loop.k
        slot = _bin(lb, arith.RemUIOp, k, stages)
        buf = _bin(lb, arith.RemUIOp, k, out_buffers) if out_buffers > 1 else _index(lb, 0)
        lb.insert(copy.BarrierWaitOp(full, slot, _parity(lb, _bin(lb, arith.DivUIOp, k, stages))))
        # The store that last read buffer `buf` (tile k - out_buffers) is done reading it.
        lb.insert(copy.WaitGroupOp("bulk", out_buffers - 1, read_only=True))
        each = Block(arg_types=[IndexType()])
        eb = Builder(InsertPoint.at_end(each))
        i = each.args[0]
        r = _bin(eb, arith.DivUIOp, i, tile[1])
        c = _bin(eb, arith.RemUIOp, i, tile[1])
        vin = VectorType(elt, [lanes])
        vals = [
            to_f32(eb, eb.insert(vector.LoadOp(ring, [slot, r, c], vin)).result) for ring in rings
        ]
        if op == "add":
            v = eb.insert(arith.AddfOp(vals[0], vals[1])).result
        elif op == "axpb":
            ax = eb.insert(arith.MulfOp(splats[0], vals[0])).result
            v = eb.insert(arith.AddfOp(ax, splats[1])).result
        else:
            v = vals[0]
        eb.insert(vector.StoreOp(from_f32(eb, v), out, [buf, r, c]))
        eb.insert(scf.YieldOp())
        step = _index(lb, threads * lanes)
        lb.insert(scf.ForOp(first, _index(lb, elements), step, [], Region(each)))
        lb.insert(copy.BarrierArriveOp(empty, slot, issuer="warps"))
        lb.insert(copy.FenceAsyncSharedOp())
        row, col = tiles.origin(lb, k)
        lb.insert(
            copy.AsyncCopyOp(out, z, src_indices=[buf], dst_indices=[row, col], l2=cache_hints[1])
        )
        lb.insert(copy.CommitGroupOp("bulk"))
        loop.close()
        cb.insert(copy.WaitGroupOp("bulk", 0))

    arg_types: list[Attribute] = [gmem] * inputs + [out_gmem]
    if op == "axpb":
        arg_types += [f32, f32]
    block = (producer_warps + consumer_warps) * copy.WARP
    return _kernel(f"ws_{op}", arg_types, body, target=target, block=block)


ROW_SUM_MAX_ROWS_PER_WARP = 64
"""`ws_row_sum`: each consumer lane keeps one f32 partial sum per row its warp owns, in
registers; more than this many would spill them."""


class _Bands:
    """The tiles of a row-band kernel's block: bands (`tile[0]` rows each) bid, bid + nblocks,
    ..., each walked over all its column tiles in order, so that one block sums a band. Tile
    k is column tile k % cols of the block's band k / cols; count = bands x cols."""

    def __init__(self, b: Builder, shape: Sequence[int], tile: Sequence[int]):
        self.tile = tile
        self.cols = ceil(shape[1] / tile[1])
        self.bid, self.blocks, mine = _round_robin(b, ceil(shape[0] / tile[0]))
        self.count = _bin(b, arith.MuliOp, mine, self.cols)

    def band_row(self, b: Builder, k: SSAValue) -> SSAValue:
        """The first row of the band that tile k belongs to."""
        nth = _bin(b, arith.DivUIOp, k, self.cols)
        band = _bin(b, arith.AddiOp, self.bid, _bin(b, arith.MuliOp, nth, self.blocks))
        return _bin(b, arith.MuliOp, band, self.tile[0])

    def origin(self, b: Builder, k: SSAValue) -> tuple[SSAValue, SSAValue]:
        col = _bin(b, arith.MuliOp, _bin(b, arith.RemUIOp, k, self.cols), self.tile[1])
        return self.band_row(b, k), col


def balanced_band_rows(rows: int, blocks: int, limit: int = 256, multiple: int = 1) -> int:
    """The band height (a multiple of `multiple`, at most `limit`: a TMA box dim) that
    spreads `rows` rows over `blocks` persistent blocks best: bands go round-robin to the
    blocks, so the busiest block sums ceil(ceil(rows / h) / blocks) bands of h rows; the
    least such rows wins, and of those heights the tallest (fewest, largest tiles). For
    16384 rows on 132 SMs that is 125: 132 bands, the busiest block sums 125 rows, the least
    any split can give (16384 / 132 = 124.1); 64 or 128 leave it 128 rows (3% more)."""

    def busiest(h: int) -> int:
        return ceil(ceil(rows / h) / blocks) * h

    heights = range(multiple, min(limit, max(rows, multiple)) + 1, multiple)
    return min(heights, key=lambda h: (busiest(h), -h))


def _check_row_sum(
    shape: Sequence[int],
    dtype: str,
    tile: Sequence[int],
    stages: int | None,
    consumer_warps: int,
    target: str,
) -> int:
    """The stages of a `ws_row_sum` (`_ws_stages`), or a ValueError (expected, got, fix)
    for one the kernel cannot be."""
    if dtype not in FLOAT_TYPES:
        raise ValueError(f"expected a float element type ({', '.join(FLOAT_TYPES)}), got {dtype!r}")
    _check_ws(shape, tile, 1 if stages is None else stages, [dtype], target)
    if not 1 <= consumer_warps <= 16:
        raise ValueError(f"expected 1 to 16 consumer warps, got {consumer_warps}")
    size = copy.bitwidth(element_type(dtype)) // 8
    if tile[1] % copy.WARP:
        raise ValueError(
            f"expected tile[1] to be a multiple of 32 (lane l of a consumer warp sums columns "
            f"l, l + 32, ... of each tile row), got tile {tuple(tile)}; use tile[1] = "
            f"{min(256, max(32, tile[1] + (-tile[1]) % 32))}"
        )
    if shape[1] * size % 16:
        raise ValueError(
            f"expected rows of a multiple of 16 bytes (TMA's row stride), got {shape[1]} x "
            f"{dtype} = {shape[1] * size} bytes per row; pad the columns to a multiple of "
            f"{16 // size} with zeros (they add nothing to the sums)"
        )
    rows = ceil(tile[0] / consumer_warps)
    if rows > ROW_SUM_MAX_ROWS_PER_WARP:
        raise ValueError(
            f"expected at most {ROW_SUM_MAX_ROWS_PER_WARP} tile rows per consumer warp (each "
            f"lane keeps one partial sum per row in registers), got {rows} ({tile[0]} rows, "
            f"{consumer_warps} warps); use more consumer warps or a smaller tile[0]"
        )
    slot = tile[0] * tile[1] * size
    if slot % 128:
        raise ValueError(
            f"expected a tile of a multiple of 128 bytes (each ring slot is a TMA destination, "
            f"128-byte aligned), got {tuple(tile)} x {dtype} = {slot} bytes; use an even "
            "tile[0] or a tile[1] that is a multiple of 64"
        )
    return _ws_stages(stages, tile, [dtype], [], target)


def ws_row_sum(
    shape: Sequence[int],
    dtype: str = "f32",
    tile: Sequence[int] = (64, 128),
    *,
    stages: int | None = None,
    consumer_warps: int = 4,
    cache_hint: str | None = None,
    target: str = "sm_90a",
) -> ModuleOp:
    """`y[i] = sum_j x[i, j]` (x: (M, N) of f32, bf16 or f16; y: (M,) f32, accumulated in
    f32) by a warp-specialized persistent kernel (launch it on `ws_grid(sms)`).

    A band of `tile[0]` rows is summed by one block, so that no two blocks add into one
    sum (no atomics: the result does not depend on timing). Block `bid` of `nblocks` sums
    bands bid, bid + nblocks, ..., each over its column tiles in order (`balanced_band_rows`
    picks a band height that spreads the rows evenly over the SMs).

    Warp 0, the producer, loads the block's tiles into a ring of `stages` SMEM slots (full
    and empty mbarriers, as in `ws_elementwise`). Consumer warp w owns rows w, w + W, ... of
    each tile (W = `consumer_warps`; when W does not divide `tile[0]`, a warp's last row
    repeats row tile[0] - 1 and is not stored); lane l of it adds columns l, l + 32, ... of
    each of its rows to one f32 partial sum per row, kept in registers across the band's
    column tiles, then releases the slot (one arrive per warp on `empty`). After the band's
    last column tile, a butterfly of warp shuffles (`gpu.shuffle xor` 16, 8, 4, 2, 1) adds
    the lanes' partial sums and lane 0 stores each row's sum to y (rows past M are not
    stored). Every sum is added in a fixed order: lane l's columns in order, then the fixed
    shuffle tree, so each y[i] is within (ceil(N / 32) + 5) * 2**-24 * sum_j |x[i, j]| of the
    exact sum (the recursive-summation bound for that depth).

    Any M, N with rows of a multiple of 16 bytes (TMA's row stride); out-of-bounds tiles are
    zero-filled by TMA (a zero adds nothing). `tile[1]` must be a multiple of 32. `stages`
    defaults to the most that fit up to 4 (`ws_stages_limit`)."""
    stages = _check_row_sum(shape, dtype, tile, stages, consumer_warps, target)
    elt = element_type(dtype)
    f32 = element_type("f32")
    gmem = MemRefType(elt, list(shape))
    out = MemRefType(f32, [shape[0]])
    ring_type = MemRefType(elt, [stages, *tile], memory_space=copy.SmemSpaceAttr())
    warps = consumer_warps
    per_warp = ceil(tile[0] / warps)
    ragged = tile[0] % warps != 0

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        tiles = _Bands(b, shape, tile)
        ring = b.insert(copy.AllocSmemOp(ring_type)).result
        full = b.insert(copy.BarrierInitOp(stages, 1)).result
        empty = b.insert(copy.BarrierInitOp(stages, warps)).result
        ws = b.insert(copy.WarpSpecializeOp([1, warps]))
        _producer(
            Builder(InsertPoint.at_end(ws.role_block(0))),
            tiles,
            [x],
            [ring],
            full,
            empty,
            stages,
            cache_hint,
        )
        cb = Builder(InsertPoint.at_end(ws.role_block(1)))
        t = ws.role_block(1).args[0]
        warp = _bin(cb, arith.DivUIOp, t, copy.WARP)
        lane = _bin(cb, arith.RemUIOp, t, copy.WARP)
        # Row i of this warp in each tile, and the row it reads (in the tile).
        owned = [_bin(cb, arith.AddiOp, warp, i * warps) for i in range(per_warp)]
        read = list(owned)
        if ragged:
            read[-1] = _bin(cb, arith.MinUIOp, owned[-1], tile[0] - 1)
        zero = cb.insert(arith.ConstantOp(FloatAttr(0.0, f32))).result

        loop = Block(arg_types=[IndexType(), *([f32] * per_warp)])
        lb = Builder(InsertPoint.at_end(loop))
        k, sums = loop.args[0], list(loop.args[1:])
        slot = _bin(lb, arith.RemUIOp, k, stages)
        column = _bin(lb, arith.RemUIOp, k, tiles.cols)
        first = lb.insert(arith.CmpiOp(column, _index(lb, 0), "eq")).result
        last = lb.insert(arith.CmpiOp(column, _index(lb, tiles.cols - 1), "eq")).result
        lb.insert(copy.BarrierWaitOp(full, slot, _parity(lb, _bin(lb, arith.DivUIOp, k, stages))))
        # A band's first column tile starts its sums afresh.
        sums = [lb.insert(arith.SelectOp(first, zero, s)).result for s in sums]

        # Lane l adds columns l, l + 32, ... of each of the warp's rows of the tile.
        cols = Block(arg_types=[IndexType(), *([f32] * per_warp)])
        colb = Builder(InsertPoint.at_end(cols))
        c = cols.args[0]
        added = []
        for r, s in zip(read, cols.args[1:], strict=True):
            v = colb.insert(memref.LoadOp.get(ring, [slot, r, c])).res
            if v.type != f32:
                v = colb.insert(arith.ExtFOp(v, f32)).result
            added.append(colb.insert(arith.AddfOp(s, v)).result)
        colb.insert(scf.YieldOp(*added))
        step = _index(lb, copy.WARP)
        sums = list(
            lb.insert(scf.ForOp(lane, _index(lb, tile[1]), step, sums, Region(cols))).results
        )
        # The warp is done reading the slot.
        lb.insert(copy.BarrierArriveOp(empty, slot, issuer="warps"))

        def flush(tb: Builder) -> None:
            width = tb.insert(arith.ConstantOp(IntegerAttr(copy.WARP, i32))).result
            totals = []
            for s in sums:
                for offset in (16, 8, 4, 2, 1):
                    off = tb.insert(arith.ConstantOp(IntegerAttr(offset, i32))).result
                    other = tb.insert(ShuffleOp(s, off, width, "xor")).shuffle_result
                    s = tb.insert(arith.AddfOp(s, other)).result
                totals.append(s)
            band = tiles.band_row(tb, k)

            def store(sb: Builder) -> None:
                for i, (r, total) in enumerate(zip(owned, totals, strict=True)):
                    row = _bin(sb, arith.AddiOp, band, r)
                    inside = sb.insert(arith.CmpiOp(row, _index(sb, shape[0]), "ult")).result
                    if ragged and i == per_warp - 1:
                        in_tile = sb.insert(arith.CmpiOp(r, _index(sb, tile[0]), "ult")).result
                        inside = sb.insert(arith.AndIOp(inside, in_tile)).result
                    _if(
                        sb,
                        inside,
                        lambda ib, row=row, total=total: ib.insert(
                            memref.StoreOp.get(total, y, [row])
                        ),
                    )

            _if(tb, tb.insert(arith.CmpiOp(lane, _index(tb, 0), "eq")).result, store)

        # After the band's last column tile: its rows' sums, across the lanes, to y.
        _if(lb, last, flush)
        lb.insert(scf.YieldOp(*sums))
        c0, c1 = _index(cb, 0), _index(cb, 1)
        initial = [zero] * per_warp
        cb.insert(scf.ForOp(c0, tiles.count, c1, initial, Region(loop)))

    block = (1 + warps) * copy.WARP
    return _kernel("ws_row_sum", [gmem, out], body, target=target, block=block)


# ===----------------------------------------------------------------------=== #
# Distributed shared memory: an exchange between the CTAs of a cluster
# ===----------------------------------------------------------------------=== #

EXCHANGE_MODES = ("store", "reduce", "bulk")
"""How `dsmem_exchange` moves a tile into the peer: `st.async` (vectors of 16 bytes),
`red.async add` (one element per thread) or the bulk SMEM -> SMEM copy."""


def exchange_grid(shape: Sequence[int], tile: Sequence[int], cluster: int = 2) -> tuple[int, int]:
    """The launch grid of `dsmem_exchange`: one block per tile; the tile columns are a
    multiple of the cluster (a cluster is `cluster` neighbouring tiles of a row)."""
    cols, rows = grid(shape, tile)
    if cols % cluster:
        raise ValueError(
            f"expected a number of tile columns ({cols}) that is a multiple of the cluster "
            f"({cluster})"
        )
    return cols, rows


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
        raise ValueError(f"expected a mode in {EXCHANGE_MODES}, got {mode!r}")
    if cluster not in (2, 4, 8):
        raise ValueError(f"expected a cluster of 2, 4 or 8 CTAs, got {cluster}")
    exchange_grid(shape, tile, cluster)
    bits = copy.bitwidth(element_type(dtype)) or 0
    if mode == "reduce" and dtype not in ("i32", "ui32", "si32"):
        raise ValueError(f"the reduce mode adds 32-bit integers (red.async add), got {dtype}")
    if mode == "store" and bits not in (32, 64):
        raise ValueError(f"st.async stores 32- or 64-bit elements, got {dtype}")
    width = 16 * 8 // bits if mode == "store" else 1
    if tile[1] % width or (tile[0] * tile[1] // width) % TMA_BLOCK:
        raise ValueError(
            f"expected a tile of a multiple of {TMA_BLOCK * width} elements with rows of a "
            f"multiple of {width} (each of {TMA_BLOCK} threads moves {width} at a time), got "
            f"{list(tile)}"
        )
    return width


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
    smem = MemRefType(elt, list(tile), memory_space=copy.SmemSpaceAttr())
    nbytes = copy.smem_bytes(list(tile), elt, 16)

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        c0 = _index(b, 0)
        phase = b.insert(arith.ConstantOp(IntegerAttr(0, i1))).result
        row, col = _tile_origin(b, tile)
        bx = b.insert(gpu.BlockIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
        rank = _bin(b, arith.RemUIOp, bx, cluster)
        peer = _bin(b, arith.RemUIOp, _bin(b, arith.AddiOp, rank, 1), cluster)
        source = _bin(b, arith.RemUIOp, _bin(b, arith.AddiOp, rank, cluster - 1), cluster)
        mine = b.insert(copy.AllocSmemOp(smem)).result
        recv = b.insert(copy.AllocSmemOp(smem)).result
        loaded = b.insert(copy.BarrierInitOp(1, 2 if mode == "reduce" else 1)).result
        full = b.insert(copy.BarrierInitOp(1)).result
        signal = b.insert(copy.BarrierInitOp(1)).result
        for buf in (mine, recv) if mode == "reduce" else (mine,):
            b.insert(
                copy.AsyncCopyOp(
                    x, buf, src_indices=[row, col], barrier=loaded, barrier_index=c0, oob="zeros"
                )
            )
        b.insert(copy.BarrierWaitOp(loaded, c0, phase))
        if mode == "reduce":
            # recv holds this CTA's tile: the sender may add into it now.
            b.insert(copy.PeerArriveOp(signal, c0, source))
            b.insert(copy.BarrierWaitOp(signal, c0, phase))
        b.insert(copy.BarrierArriveExpectTxOp(full, c0, bytes=nbytes))
        if mode == "bulk":
            b.insert(copy.PeerCopyOp(mine, recv, peer, full, c0))
        else:
            _send_by_threads(b, mine, recv, peer, full, tile, width, mode == "reduce")
        b.insert(copy.BarrierWaitOp(full, c0, phase))
        if mode == "bulk":
            # The sender's source may go once its copy has landed here.
            b.insert(copy.PeerArriveOp(signal, c0, source))
        else:
            # st.async and red.async write through the generic proxy; the TMA store reads
            # through the async one.
            b.insert(copy.FenceAsyncSharedOp())
        b.insert(copy.AsyncCopyOp(recv, y, dst_indices=[row, col]))
        b.insert(copy.CommitGroupOp("bulk"))
        b.insert(copy.WaitGroupOp("bulk", 0))
        if mode == "bulk":
            b.insert(copy.BarrierWaitOp(signal, c0, phase))

    return _kernel(
        f"dsmem_exchange_{mode}",
        [gmem, gmem],
        body,
        target=target,
        block=TMA_BLOCK,
        cluster=(cluster, 1, 1),
    )


def _send_by_threads(
    b: Builder,
    mine: SSAValue,
    recv: SSAValue,
    peer: SSAValue,
    full: SSAValue,
    tile: Sequence[int],
    width: int,
    reduce: bool,
) -> None:
    """Each thread sends `width` elements of `mine` at a time to the peer's `recv`: a
    block-uniform loop over the tile in steps of the block."""
    per_row = tile[1] // width
    steps = tile[0] * tile[1] // width // TMA_BLOCK
    tid = b.insert(gpu.ThreadIdOp(gpu.DimensionAttr(gpu.DimensionEnum.X))).result
    loop = _Loop(b, _index(b, steps))
    lb = loop.b
    e = _bin(lb, arith.AddiOp, tid, _bin(lb, arith.MuliOp, loop.k, TMA_BLOCK))
    r = _bin(lb, arith.DivUIOp, e, per_row)
    c = _bin(lb, arith.MuliOp, _bin(lb, arith.RemUIOp, e, per_row), width)
    assert isinstance(t := mine.type, MemRefType)
    if reduce:
        value = lb.insert(memref.LoadOp.get(mine, [r, c])).res
        lb.insert(copy.PeerStoreOp(value, recv, [r, c], peer, full, _index(lb, 0), reduction="add"))
    else:
        vtype = VectorType(t.element_type, [width])
        value = lb.insert(vector.LoadOp(mine, [r, c], vtype)).result
        lb.insert(copy.PeerStoreOp(value, recv, [r, c], peer, full, _index(lb, 0)))
    loop.close()


# ===----------------------------------------------------------------------=== #
# im2col: the A operand of an implicit-GEMM convolution
# ===----------------------------------------------------------------------=== #


def _pair(value: int | Sequence[int]) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (value[0], value[1])


@dataclass(frozen=True)
class Conv2d:
    """A 2-D convolution over an NHWC input (`shape`), as im2col sees it: the output's
    spatial size, the im2col matrix `[N*P*Q, R*S*C]` (row (n, p, q), column (r, s, c)) and the
    im2col map's bounding box. With TMA im2col, padding is the box's corners (lower =
    -padding, and the upper corner ends the box after the last filter base) and dilation
    the offsets (tap (r, s) reads at base + (r, s) * dilation); the stride is the traversal
    stride."""

    shape: tuple[int, int, int, int]
    filter: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]

    @property
    def output(self) -> tuple[int, int]:
        """(P, Q): the filter bases along H and W."""
        return tuple(  # type: ignore[return-value]
            (size + 2 * pad - dil * (k - 1) - 1) // st + 1
            for size, k, st, pad, dil in zip(
                self.shape[1:3], self.filter, self.stride, self.padding, self.dilation,
                strict=True,
            )
        )  # fmt: skip

    @property
    def matrix(self) -> tuple[int, int]:
        """The im2col matrix: N*P*Q rows, R*S*C columns."""
        (n, _, _, c), (p, q), (r, s) = self.shape, self.output, self.filter
        return n * p * q, r * s * c

    @property
    def lower(self) -> tuple[int, int]:
        """The box's lower corner: the first filter base, -padding."""
        return (-self.padding[0], -self.padding[1])

    @property
    def upper(self) -> tuple[int, int]:
        """The box's upper corner, relative to the extent: the box [lower, extent + upper)
        ends one element after the last filter base, (out - 1) * stride - padding."""
        return tuple(  # type: ignore[return-value]
            (out - 1) * st + 1 - size - pad
            for out, st, size, pad in zip(
                self.output, self.stride, self.shape[1:3], self.padding, strict=True
            )
        )


def conv2d(
    shape: Sequence[int],
    filter: int | Sequence[int],
    *,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
) -> Conv2d:
    n, h, w, c = shape
    return Conv2d((n, h, w, c), _pair(filter), _pair(stride), _pair(padding), _pair(dilation))


def im2col_grid(conv: Conv2d, pixels: int = 64, channels: int | None = None) -> tuple[int, ...]:
    """Blocks of `im2col_gather`: (pixel tiles, filter taps, channel blocks)."""
    block = conv.shape[3] if channels is None else channels
    return (ceil(conv.matrix[0] / pixels), conv.filter[0] * conv.filter[1], conv.shape[3] // block)


def im2col_gather(
    conv: Conv2d,
    dtype: str,
    *,
    pixels: int = 64,
    channels: int | None = None,
    swizzle: int = 16,
    cache_hint: str | None = None,
    target: str = "sm_90a",
) -> ModuleOp:
    """`y = im2col(x)` for `conv` over the NHWC array x: y is the `[N*P*Q, R*S*C]` matrix of
    an implicit GEMM. Block (i, t, j) loads `pixels` rows from row i * pixels on, for filter
    tap t = r * S + s and channels [j * channels, (j + 1) * channels) (all C by default), with
    one `copy.im2col_load` (the first row's filter base as coordinates, the tap times the
    dilation as offsets), waits on its barrier and stores the tile with TMA (clipped at the
    last row). `cache_hint` is the loads' L2 cache policy (`"evict_last"`: every tap reads
    the input again)."""
    n, h, w, c = conv.shape
    block = c if channels is None else channels
    (_, q), (_, s) = conv.output, conv.filter
    rows, cols = conv.matrix
    elt = element_type(dtype)
    gmem = MemRefType(elt, [n, h, w, c])
    out = MemRefType(elt, [rows, cols])
    smem = MemRefType(elt, [pixels, block], memory_space=copy.SmemSpaceAttr(swizzle))
    p_q = conv.output[0] * q

    def block_id(b: Builder, dim: gpu.DimensionEnum) -> SSAValue:
        return b.insert(gpu.BlockIdOp(gpu.DimensionAttr(dim))).result

    def tap_offset(b: Builder, tap: SSAValue, dilation: int) -> SSAValue:
        at = _bin(b, arith.MuliOp, tap, dilation)
        return b.insert(arith.IndexCastOp(at, i16)).result

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, y = args
        c0 = _index(b, 0)
        phase = b.insert(arith.ConstantOp(IntegerAttr(0, i1))).result
        first = _bin(b, arith.MuliOp, block_id(b, gpu.DimensionEnum.X), pixels)
        tap = block_id(b, gpu.DimensionEnum.Y)
        channel = _bin(b, arith.MuliOp, block_id(b, gpu.DimensionEnum.Z), block)
        # Row `first` is output pixel (image, p, q); its filter base is (p, q) * stride - pad.
        image = _bin(b, arith.DivUIOp, first, p_q)
        rest = _bin(b, arith.RemUIOp, first, p_q)
        base = []
        for at, st, pad in (
            (_bin(b, arith.DivUIOp, rest, q), conv.stride[0], conv.padding[0]),
            (_bin(b, arith.RemUIOp, rest, q), conv.stride[1], conv.padding[1]),
        ):
            base.append(_bin(b, arith.SubiOp, _bin(b, arith.MuliOp, at, st), pad))
        offsets = [
            tap_offset(b, _bin(b, arith.DivUIOp, tap, s), conv.dilation[0]),
            tap_offset(b, _bin(b, arith.RemUIOp, tap, s), conv.dilation[1]),
        ]
        buf = b.insert(copy.AllocSmemOp(smem)).result
        bar = b.insert(copy.BarrierInitOp(1)).result
        b.insert(
            copy.Im2colLoadOp(
                x,
                buf,
                coordinates=[image, *base, channel],
                offsets=offsets,
                barrier=bar,
                barrier_index=c0,
                lower=conv.lower,
                upper=conv.upper,
                strides=conv.stride,
                l2=cache_hint,
            )
        )
        b.insert(copy.BarrierWaitOp(bar, c0, phase))
        column = _bin(b, arith.AddiOp, _bin(b, arith.MuliOp, tap, c), channel)
        b.insert(copy.AsyncCopyOp(buf, y, dst_indices=[first, column]))
        b.insert(copy.CommitGroupOp("bulk"))
        b.insert(copy.WaitGroupOp("bulk", 0))

    return _kernel("im2col_gather", [gmem, out], body, target=target, block=TMA_BLOCK)
# Grouped copies: a tensor map re-pointed in the kernel
# ===----------------------------------------------------------------------=== #

GROUP_FIELDS = 4
"""A group's row of the table: its offset in the pool (elements), rows, columns and row
pitch (elements)."""


def grouped_layout(shapes: Sequence[tuple[int, int]], dtype: str) -> list[tuple[int, ...]]:
    """The table of `grouped_copy` for groups of `shapes` packed one after the other in a pool:
    (offset, rows, cols, pitch) per group, each group's rows padded to a pitch of a multiple
    of 16 bytes and each group starting 16-byte aligned (what TMA needs of an array)."""
    bits = copy.bitwidth(element_type(dtype)) or 8
    align = max(1, 128 // bits)
    table, offset = [], 0
    for rows, cols in shapes:
        pitch = -(-cols // align) * align
        table.append((offset, rows, cols, pitch))
        offset += rows * pitch
    return table


def grouped_grid(
    max_shape: Sequence[int], tile: Sequence[int], groups: int, persistent: bool = False
) -> tuple[int, ...]:
    """The grid of `grouped_copy`: (tile columns, tile rows) of the largest group, and one z
    per group unless `persistent` (then each block walks the groups)."""
    return (*grid(max_shape, tile), 1 if persistent else groups)


def grouped_copy(
    groups: int,
    capacity: int,
    max_shape: Sequence[int],
    dtype: str = "f32",
    tile: Sequence[int] = (8, 64),
    *,
    persistent: bool = False,
    target: str = "sm_90a",
) -> ModuleOp:
    """`dst = src` for up to `groups` matrices of different shapes packed in a pool of
    `capacity` elements (a grouped, variable-shape copy), with one tensor map rewritten in
    the kernel: block (x, y, z) copies tile (y, x) of group z. Its elected thread reads the
    group's row of `table` (`grouped_layout`), re-points its map (a slot of a workspace in
    global memory, one per block) at the group's matrix, shape and pitch
    (`copy.tensormap_replace`), releases and acquires it, and loads the tile through it
    (zero-filled past the group's edges); the block's threads then store the tile's
    elements that lie in the group. A block past its group's tiles does nothing: no
    rewrite, no load (the grid covers the largest group for every group). With
    `persistent`, block (x, y) copies tile (y, x) of every group in turn, re-pointing its
    map once per group after the previous group's load completed (and the
    threads have read the tile: a block barrier). Arguments: `x`, the array the runtime
    encodes the initial map over (any 2-D array of the dtype, the first group's matrix
    say), `table` (groups x 4 i64), `src`, `dst` (the pools, `capacity` elements each).
    Launch it on `grouped_grid` (with the same `persistent`)."""
    elt = element_type(dtype)
    bits = copy.bitwidth(elt) or 8
    slots = prod(grouped_grid(max_shape, tile, groups, persistent))
    tmpl = MemRefType(elt, [DYNAMIC_INDEX] * 2)
    table_type = MemRefType(i64, [groups, GROUP_FIELDS])
    pool = MemRefType(elt, [capacity])
    smem = MemRefType(elt, list(tile), memory_space=copy.SmemSpaceAttr(16))
    map_type = copy.TensorMapType(tile, elt)

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        x, table, src, dst = args
        dims = [b.insert(gpu.BlockIdOp(gpu.DimensionAttr(d))).result for d in _XYZ]
        ngrid = [b.insert(gpu.GridDimOp(gpu.DimensionAttr(d))).result for d in _XYZ]
        # The block's linear index: its slot of the workspace.
        plane = _bin(b, arith.AddiOp, dims[1], _bin(b, arith.MuliOp, dims[2], ngrid[1]))
        slot = _bin(b, arith.AddiOp, dims[0], _bin(b, arith.MuliOp, plane, ngrid[0]))
        buf = b.insert(copy.AllocSmemOp(smem)).result
        bar = b.insert(copy.BarrierInitOp(1)).result
        m = b.insert(copy.TensorMapGlobalOp(x, slot, slots, map_type)).map
        tile_of = _GroupTile(x, table, src, dst, buf, bar, m, tile, bits, dims)
        if not persistent:
            phase = b.insert(arith.ConstantOp(IntegerAttr(0, i1))).result
            tile_of(b, dims[2], phase, skip_outside=True)
            return
        loop = _Loop(b, _index(b, groups))
        tile_of(loop.b, loop.k, _parity(loop.b, loop.k))
        # The threads have read the tile before the next group's load overwrites it.
        loop.b.insert(gpu.BarrierOp())
        loop.close()

    return _kernel(
        "grouped_copy", [tmpl, table_type, pool, pool], body, target=target, block=TMA_BLOCK
    )


def grouped_view_copy(
    groups: int,
    capacity: int,
    dtype: str = "f32",
    tile: Sequence[int] = (8, 64),
    *,
    target: str = "sm_80",
    barrier: bool = False,
) -> ModuleOp:
    """`dst = src` for up to `groups` matrices of different shapes packed in a pool of
    `capacity` elements, as `grouped_copy` but with cp.async (sm_80+) through views made in
    the kernel: block (x, y, z) copies tile (y, x) of group z. Its threads read the group's
    row of `table` (offset, rows, cols, pitch in elements: `grouped_layout`, or any offsets
    and pitches), view both pools at it (`memref.reinterpret_cast` to `?x?` with stride
    `[pitch, 1]` and the offset), cp.async-load the tile from the source view (zero-filled
    past the group's edges; the chunk size picked at run time from the view's address and
    pitch) and store the tile's elements that lie in the group through the destination
    view. With `barrier`, the copy completes on an mbarrier (one arrival per thread) rather
    than a cp.async group. Arguments: `table` (groups x 4 i64), `src`, `dst` (the pools).
    Launch it on `grouped_grid`."""
    elt = element_type(dtype)
    table_type = MemRefType(i64, [groups, GROUP_FIELDS])
    pool = MemRefType(elt, [capacity])
    view = MemRefType(elt, [DYNAMIC_INDEX] * 2, StridedLayoutAttr([None, 1], None))
    smem = MemRefType(elt, list(tile), memory_space=copy.SmemSpaceAttr())

    def body(b: Builder, args: Sequence[SSAValue]) -> None:
        table, src, dst = args
        dims = [b.insert(gpu.BlockIdOp(gpu.DimensionAttr(d))).result for d in _XYZ]
        fields = []
        for k in range(GROUP_FIELDS):
            entry = b.insert(memref.LoadOp.get(table, [dims[2], _index(b, k)])).res
            fields.append(b.insert(arith.IndexCastOp(entry, IndexType())).result)
        offset, rows, cols, pitch = fields
        src_view, dst_view = (
            b.insert(
                memref.ReinterpretCastOp.from_dynamic(
                    a, [offset], [rows, cols], [pitch, 1], view
                )
            ).result
            for a in (src, dst)
        )
        row0 = _bin(b, arith.MuliOp, dims[1], tile[0])
        col0 = _bin(b, arith.MuliOp, dims[0], tile[1])
        buf = b.insert(copy.AllocSmemOp(smem)).result
        origin = [row0, col0]
        if barrier:
            c0 = _index(b, 0)
            bar = b.insert(copy.BarrierInitOp(1, CP_ASYNC_BLOCK)).result
            b.insert(
                copy.AsyncCopyOp(
                    src_view, buf, src_indices=origin, barrier=bar, barrier_index=c0,
                    implementation="cp_async", oob="zeros",
                )
            )  # fmt: skip
            phase = b.insert(arith.ConstantOp(IntegerAttr(0, i1))).result
            b.insert(copy.BarrierWaitOp(bar, c0, phase))
        else:
            b.insert(
                copy.AsyncCopyOp(
                    src_view, buf, src_indices=origin, implementation="cp_async", oob="zeros"
                )
            )
            b.insert(copy.CommitGroupOp("cp_async"))
            b.insert(copy.WaitGroupOp("cp_async", 0))
        def store(tb: Builder, value: SSAValue, row: SSAValue, col: SSAValue) -> None:
            tb.insert(memref.StoreOp.get(value, dst_view, [row, col]))

        _store_inside(b, buf, tile, (row0, col0), (rows, cols), CP_ASYNC_BLOCK, store)

    return _kernel(
        "grouped_view_copy", [table_type, pool, pool], body, target=target, block=CP_ASYNC_BLOCK
    )


class _GroupTile:
    """Emits the copy of the block's tile of one group: read its row of the table, re-point
    the map, fence, load through it, wait, store the in-group elements from the threads."""

    def __init__(
        self,
        x: SSAValue,
        table: SSAValue,
        src: SSAValue,
        dst: SSAValue,
        buf: SSAValue,
        bar: SSAValue,
        m: SSAValue,
        tile: Sequence[int],
        bits: int,
        dims: Sequence[SSAValue],
    ):
        self.x, self.table, self.src, self.dst = x, table, src, dst
        self.buf, self.bar, self.m = buf, bar, m
        self.tile, self.bits, self.dims = tile, bits, dims
        """The block's ids (x, y, z): its tile is (y, x)."""

    def __call__(
        self, b: Builder, group: SSAValue, phase: SSAValue, skip_outside: bool = False
    ) -> None:
        """With `skip_outside`, a block whose tile lies past the group's rows or columns does
        nothing (no rewrite, no load): the grid covers the largest group for every group."""
        tile = self.tile
        row0 = _bin(b, arith.MuliOp, self.dims[1], tile[0])
        col0 = _bin(b, arith.MuliOp, self.dims[0], tile[1])
        fields = []
        for k in range(GROUP_FIELDS):
            entry = b.insert(memref.LoadOp.get(self.table, [group, _index(b, k)])).res
            fields.append(b.insert(arith.IndexCastOp(entry, IndexType())).result)
        if not skip_outside:
            self._copy(b, fields, row0, col0, phase)
            return
        _, rows, cols, _ = fields
        inside = b.insert(
            arith.AndIOp(
                b.insert(arith.CmpiOp(row0, rows, "ult")).result,
                b.insert(arith.CmpiOp(col0, cols, "ult")).result,
            )
        ).result
        _if(b, inside, lambda tb: self._copy(tb, fields, row0, col0, phase))

    def _copy(
        self,
        b: Builder,
        fields: Sequence[SSAValue],
        row0: SSAValue,
        col0: SSAValue,
        phase: SSAValue,
    ) -> None:
        tile, m = self.tile, self.m
        c0 = _index(b, 0)
        offset, rows, cols, pitch = fields
        b.insert(copy.TensorMapReplaceOp(m, "global_address", self.src, indices=[offset]))
        for d, extent in enumerate((rows, cols)):
            narrow = b.insert(arith.IndexCastOp(extent, i32)).result
            b.insert(copy.TensorMapReplaceOp(m, "global_dim", narrow, dim=d))
        stride = _bin(b, arith.MuliOp, pitch, self.bits // 8)
        wide = b.insert(arith.IndexCastOp(stride, i64)).result
        b.insert(copy.TensorMapReplaceOp(m, "global_stride", wide, dim=0))
        b.insert(copy.TensorMapFenceReleaseOp(m))
        b.insert(copy.TensorMapFenceAcquireOp(m))
        b.insert(
            copy.AsyncCopyOp(
                self.x, self.buf, src_indices=[row0, col0], barrier=self.bar, barrier_index=c0,
                oob="zeros", map=m,
            )
        )  # fmt: skip
        b.insert(copy.BarrierWaitOp(self.bar, c0, phase))
        # The block's threads store the tile's elements that lie in the group.
        def store(tb: Builder, value: SSAValue, row: SSAValue, col: SSAValue) -> None:
            linear = _bin(tb, arith.AddiOp, _bin(tb, arith.MuliOp, row, pitch), col)
            at = _bin(tb, arith.AddiOp, offset, linear)
            tb.insert(memref.StoreOp.get(value, self.dst, [at]))

        _store_inside(b, self.buf, tile, (row0, col0), (rows, cols), TMA_BLOCK, store)


_XYZ = (gpu.DimensionEnum.X, gpu.DimensionEnum.Y, gpu.DimensionEnum.Z)
