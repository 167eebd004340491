"""Grouped copies: matrices of different shapes packed in one pool, each described by a row of
a table (`grouped_layout`, `GROUP_FIELDS` fields). `grouped_copy` re-points a tensor map at
each group in the kernel (`copy.tensormap_replace`); `grouped_view_copy` views the pools at
the group with `memref.reinterpret_cast` and copies with cp.async. Both launch on
`grouped_grid`."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith, gpu, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    i32,
    i64,
)

from copy_dialect import ops as copy
from frontends.dsl import (
    Value,
    block_id,
    boolean,
    emit,
    grid_dim,
    if_,
    index,
    kernel,
    loop,
    parity,
    result,
)
from frontends.kernels.checks import checked
from frontends.kernels.common import CP_ASYNC_BLOCK, TMA_BLOCK, _smem, element_type, grid
from frontends.kernels.parts import inside, load_and_wait, store_inside

GROUP_FIELDS = 4
"""A group's row of the table: its offset in the pool (elements), rows, columns and row
pitch (elements)."""


@checked()
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


@checked(max_shape=2, tile=2)
def grouped_grid(
    max_shape: Sequence[int], tile: Sequence[int], groups: int, persistent: bool = False
) -> tuple[int, ...]:
    """The grid of `grouped_copy`: (tile columns, tile rows) of the largest group, and one z
    per group unless `persistent` (then each block walks the groups)."""
    return (*grid(max_shape, tile), 1 if persistent else groups)


def _group_fields(table: Value, group: Value) -> list[Value]:
    """Group `group`'s row of `table` as indices: offset, rows, cols, pitch."""
    fields = []
    for k in range(GROUP_FIELDS):
        entry = emit(memref.LoadOp.get, table, [group, index(k)]).res
        fields.append(result(arith.IndexCastOp, entry, IndexType()))
    return fields


def _group_origin(dims: Sequence[Value], tile: Sequence[int]) -> tuple[Value, Value]:
    """The first (row, col) of the block's tile (y, x) in its group."""
    return dims[1] * tile[0], dims[0] * tile[1]


@checked(max_shape=2, tile=2)
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
    smem = _smem(elt, tile, 16)
    map_type = copy.TensorMapType(tile, elt)

    def body(x: Value, table: Value, src: Value, dst: Value) -> None:
        dims = [block_id(d) for d in "xyz"]
        ngrid = [grid_dim(d) for d in "xyz"]
        # The block's linear index: its slot of the workspace.
        plane = dims[1] + dims[2] * ngrid[1]
        slot = dims[0] + plane * ngrid[0]
        buf = result(copy.AllocSmemOp, smem)
        bar = result(copy.BarrierInitOp, 1)
        m = Value(emit(copy.TensorMapGlobalOp, x, slot, slots, map_type).map)
        tile_of = _GroupTile(x, table, src, dst, buf, bar, m, tile, bits, dims)
        if not persistent:
            tile_of(dims[2], boolean(False), skip_outside=True)
            return
        with loop(index(groups)) as k:
            tile_of(k, parity(k))
            # The threads have read the tile before the next group's load overwrites it.
            emit(gpu.BarrierOp)

    return kernel(
        "grouped_copy", [tmpl, table_type, pool, pool], body, target=target, block=TMA_BLOCK
    )


@checked(tile=2)
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
    smem = _smem(elt, tile)

    def body(table: Value, src: Value, dst: Value) -> None:
        dims = [block_id(d) for d in "xyz"]
        offset, rows, cols, pitch = _group_fields(table, dims[2])
        src_view, dst_view = (
            result(
                memref.ReinterpretCastOp.from_dynamic, a, [offset], [rows, cols], [pitch, 1], view
            )
            for a in (src, dst)
        )
        origin = _group_origin(dims, tile)
        buf = result(copy.AllocSmemOp, smem)
        if barrier:
            c0 = index(0)
            bar = result(copy.BarrierInitOp, 1, CP_ASYNC_BLOCK)
            emit(copy.AsyncCopyOp, src_view, buf, src_indices=list(origin), barrier=bar,
                 barrier_index=c0, implementation="cp_async", oob="zeros")  # fmt: skip
            emit(copy.BarrierWaitOp, bar, c0, boolean(False))
        else:
            emit(copy.AsyncCopyOp, src_view, buf, src_indices=list(origin),
                 implementation="cp_async", oob="zeros")  # fmt: skip
            emit(copy.CommitGroupOp, "cp_async")
            emit(copy.WaitGroupOp, "cp_async", 0)

        def store(value: Value, row: Value, col: Value) -> None:
            emit(memref.StoreOp.get, value, dst_view, [row, col])

        store_inside(buf, tile, origin, (rows, cols), CP_ASYNC_BLOCK, store)

    return kernel(
        "grouped_view_copy", [table_type, pool, pool], body, target=target, block=CP_ASYNC_BLOCK
    )


class _GroupTile:
    """Emits the copy of the block's tile of one group: read its row of the table, re-point
    the map, fence, load through it, wait, store the in-group elements from the threads."""

    def __init__(
        self,
        x: Value,
        table: Value,
        src: Value,
        dst: Value,
        buf: Value,
        bar: Value,
        m: Value,
        tile: Sequence[int],
        bits: int,
        dims: Sequence[Value],
    ):
        self.x, self.table, self.src, self.dst = x, table, src, dst
        self.buf, self.bar, self.m = buf, bar, m
        self.tile, self.bits, self.dims = tile, bits, dims
        """The block's ids (x, y, z): its tile is (y, x)."""

    def __call__(self, group: Value, phase: Value, skip_outside: bool = False) -> None:
        """With `skip_outside`, a block whose tile lies past the group's rows or columns does
        nothing (no rewrite, no load): the grid covers the largest group for every group."""
        origin = _group_origin(self.dims, self.tile)
        fields = _group_fields(self.table, group)
        if not skip_outside:
            self._copy(fields, origin, phase)
            return
        _, rows, cols, _ = fields
        with if_(inside(origin, (rows, cols))):
            self._copy(fields, origin, phase)

    def _copy(self, fields: Sequence[Value], origin: tuple[Value, Value], phase: Value) -> None:
        m = self.m
        c0 = index(0)
        offset, rows, cols, pitch = fields
        emit(copy.TensorMapReplaceOp, m, "global_address", self.src, indices=[offset])
        for d, extent in enumerate((rows, cols)):
            narrow = result(arith.IndexCastOp, extent, i32)
            emit(copy.TensorMapReplaceOp, m, "global_dim", narrow, dim=d)
        wide = result(arith.IndexCastOp, pitch * (self.bits // 8), i64)
        emit(copy.TensorMapReplaceOp, m, "global_stride", wide, dim=0)
        emit(copy.TensorMapFenceReleaseOp, m)
        emit(copy.TensorMapFenceAcquireOp, m)
        load_and_wait(self.x, self.buf, origin, self.bar, c0, phase, map=m)

        # The block's threads store the tile's elements that lie in the group.
        def store(value: Value, row: Value, col: Value) -> None:
            at = offset + (row * pitch + col)
            emit(memref.StoreOp.get, value, self.dst, [at])

        store_inside(self.buf, self.tile, origin, (rows, cols), TMA_BLOCK, store)
