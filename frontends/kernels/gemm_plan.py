"""What `kernels.gemm` derives from its arguments: the checks (an ArgumentError, a
ValueError, with expected, got and fix for each argument it cannot build a kernel of), the
plan of the kernel (its warpgroups' rows, the rings' and C's SMEM types, the arrivals that
release a slot) and its SMEM footprint."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from math import ceil

from xdsl.dialects.builtin import MemRefType

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from facts.target import TARGETS
from frontends.kernels.common import _smem, element_type

SCHEDULES = ("cooperative", "pingpong")
"""How the two consumer warpgroups share the work: both on every tile (its M split), or
whole tiles in turn."""

IN_TYPES = ("bf16", "f16")
OUT_TYPES = ("bf16", "f16", "f32")
MMA_M = 64
"""Rows of one wgmma (m64)."""
MMA_K_BYTES = 32
"""Bytes of K of one wgmma step (k16 of a 16-bit type)."""
MAX_ACCUMULATORS = 128
"""The most f32 accumulators a consumer thread holds (CUTLASS's largest tiles: 64 x 256 per
warpgroup); more would spill under the consumers' 232 registers."""
WARPGROUP = copy.WARP * copy.WARPGROUP_WARPS
ROLE_BARRIERS = 4
"""The first named barrier id the kernel may use (0 is the block's, 1-3 its roles')."""
MAXNREG = (40, 232, 232)
"""The producer's and the consumers' register limits (`setmaxnreg`), as CUTLASS sets them."""


@dataclass(frozen=True)
class Plan:
    """Everything the kernel's shape follows from, derived once from the arguments."""

    shape: tuple[int, int, int]
    dtype: str
    out: str
    tile: tuple[int, int, int]
    stages: int
    cluster: int
    schedule: str
    group: int = 1
    """Tile rows the grid walks together (column by column within a group of rows;
    CUTLASS's raster swizzle), a divisor of the tile rows; 1: row-major."""

    @property
    def wg_rows(self) -> int:
        """Rows of the tile a consumer warpgroup computes."""
        return self.tile[0] // 2 if self.schedule == "cooperative" else self.tile[0]

    @property
    def m_blocks(self) -> int:
        """m64 blocks (accumulator structs) of a consumer warpgroup."""
        return self.wg_rows // MMA_M

    @property
    def in_swizzle(self) -> int:
        """The rings' swizzle: one row of a slot (tile[2] 16-bit elements) is one atom."""
        return self.tile[2] * 2

    @property
    def out_bytes(self) -> int:
        return 4 if self.out == "f32" else 2

    @property
    def sub(self) -> int:
        """Columns of C's SMEM blocks: the widest swizzle atom (128, 64 or 32 bytes) that
        divides tile[1], so that each block is one TMA store under its swizzle."""
        for width in (128, 64, 32):
            if self.tile[1] % (width // self.out_bytes) == 0:
                return width // self.out_bytes
        raise AssertionError("tile[1] is a multiple of 16")

    @property
    def k_tiles(self) -> int:
        return ceil(self.shape[2] / self.tile[2])

    @property
    def tiles(self) -> tuple[int, int]:
        """(tile rows, tile columns) of C."""
        return ceil(self.shape[0] / self.tile[0]), ceil(self.shape[1] / self.tile[1])

    @property
    def units(self) -> int:
        """The work the grid deals out: tiles, or pairs of neighbouring tiles of a row."""
        rows, cols = self.tiles
        return rows * ceil(cols / self.cluster)

    def ring_types(self) -> tuple[MemRefType, MemRefType]:
        elt, tm, tn, tk = element_type(self.dtype), *self.tile
        swizzle = self.in_swizzle
        return _smem(elt, [self.stages, tm, tk], swizzle), _smem(
            elt, [self.stages, tn, tk], swizzle
        )

    def out_type(self) -> MemRefType:
        """Each consumer warpgroup's C tile, in column blocks of `sub`."""
        sub = self.sub
        shape = [2, self.tile[1] // sub, self.wg_rows, sub]
        return _smem(element_type(self.out), shape, sub * self.out_bytes)

    def releases(self) -> int:
        """The arrivals that release a slot: 4 warps of each consumer warpgroup that reads
        it, or, in a cluster, one per warpgroup of each block whose multicast writes it."""
        readers = 2 if self.schedule == "cooperative" else 1
        return readers * (copy.WARPGROUP_WARPS if self.cluster == 1 else self.cluster)


def smem_footprint(plan: Plan) -> int:
    """The block's dynamic SMEM bytes (rule TR6's arena layout, in allocation order)."""
    parts = []
    for t in (*plan.ring_types(), plan.out_type()):
        swizzle = copy.swizzle_of(t)
        parts.append(
            (copy.smem_bytes(t.get_shape(), t.element_type, swizzle), copy.smem_alignment(swizzle))
        )
    parts += [(copy.BARRIER_BYTES * plan.stages, copy.BARRIER_BYTES)] * 2
    return copy.block_smem_bytes(copy.smem_footprint(parts))


def _fail(expected: str, got: str, fix: str) -> ArgumentError:
    """The error of an argument `gemm` cannot take (a ValueError)."""
    return ArgumentError(f"expected {expected}, got {got}; {fix}")


def check_arguments(
    shape: tuple[int, int, int],
    dtype: str,
    out: str,
    tile: Sequence[int],
    cluster: int,
    schedule: str,
    target: str,
) -> None:
    """An ArgumentError (expected, got, fix) for each argument `gemm` cannot build a kernel
    of."""
    if not isinstance(target, str) or target != "sm_90a":
        raise _fail(
            "target sm_90a (wgmma.mma_async exists only there; sm_100a has tcgen05.mma)",
            repr(target),
            "use target='sm_90a'",
        )
    if any(not _is_int(d) or d < 1 for d in shape):
        raise _fail("positive integer M, N and K", f"{shape}", "give the product's sizes")
    if not isinstance(dtype, str) or dtype not in IN_TYPES:
        raise _fail(f"dtype one of {', '.join(IN_TYPES)}", repr(dtype), "use dtype='bf16'")
    if not isinstance(out, str) or out not in OUT_TYPES:
        raise _fail(f"out one of {', '.join(OUT_TYPES)}", repr(out), "use out='bf16' or 'f32'")
    if not isinstance(schedule, str) or schedule not in SCHEDULES:
        raise _fail(f"schedule one of {', '.join(SCHEDULES)}", repr(schedule), "use 'cooperative'")
    if not _is_int(cluster) or cluster not in (1, 2):
        raise _fail("cluster 1 or 2", repr(cluster), "use cluster=2 to multicast A to a pair")
    M, N, K = shape
    if K % 8:
        raise _fail(
            "K a multiple of 8 (TMA reads rows of A and B at 16-byte multiples)",
            f"K={K}",
            f"pad K to {ceil(K / 8) * 8} with zero columns in A and B",
        )
    align = 16 // (4 if out == "f32" else 2)
    if N % align:
        raise _fail(
            f"N a multiple of {align} (TMA stores rows of {out} C at 16-byte multiples)",
            f"N={N}",
            f"pad N to {ceil(N / align) * align} (zero rows in B) and drop the extra columns",
        )
    _check_tile(tile, schedule)


def check_grid_arguments(
    M: object, N: object, tile: object, sms: object, cluster: object, schedule: object
) -> None:
    """An ArgumentError (expected, got, fix) for each argument `gemm_grid` cannot take."""
    if not _is_int(M) or not _is_int(N) or M < 1 or N < 1:
        raise _fail("positive integer M and N", f"{M!r}, {N!r}", "give C's sizes")
    items = tuple(tile) if isinstance(tile, (tuple, list)) else ()
    if len(items) not in (2, 3) or not all(_is_int(d) and d >= 1 for d in items):
        raise _fail("the gemm's tile (M, N, K)", repr(tile), "pass the tile gemm was built with")
    if sms is not None and (not _is_int(sms) or sms < 1):
        raise _fail("sms None or a positive integer", repr(sms), "pass the GPU's SM count")
    if not _is_int(cluster) or cluster not in (1, 2):
        raise _fail("cluster 1 or 2", repr(cluster), "pass the cluster gemm was built with")
    if not isinstance(schedule, str) or schedule not in SCHEDULES:
        raise _fail(f"schedule one of {', '.join(SCHEDULES)}", repr(schedule), "use 'cooperative'")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_tile(tile: Sequence[int], schedule: str) -> None:
    items = tuple(tile) if isinstance(tile, (tuple, list)) else None
    if items is None or len(items) != 3 or not all(_is_int(d) for d in items):
        raise _fail("a tile of three integers (M, N, K)", repr(tile), "use (128, 128, 64)")
    tm, tn, tk = tile
    rows = (128, 256) if schedule == "cooperative" else (64, 128)
    if tm not in rows:
        raise _fail(
            f"tile M in {rows} for schedule {schedule!r} (each consumer warpgroup takes "
            f"{'half the tile' if schedule == 'cooperative' else 'whole tiles'} in m64 blocks)",
            f"tile M {tm}",
            f"use tile M {rows[0]}",
        )
    if tk not in (16, 32, 64):
        raise _fail(
            "tile K of 16, 32 or 64 (a slot's row is one 32, 64 or 128-byte swizzle atom, "
            "as the wgmma descriptor requires)",
            f"tile K {tk}",
            "use tile K 64 (128-byte swizzle)",
        )
    if tn % 16 or not 16 <= tn <= 256:
        raise _fail(
            "tile N a multiple of 16 from 16 to 256 (wgmma's n, in the epilogue's 16-column "
            "stmatrix blocks)",
            f"tile N {tn}",
            "use tile N 128",
        )
    accumulators = (tm // 2 if schedule == "cooperative" else tm) // MMA_M * tn // 2
    if accumulators > MAX_ACCUMULATORS:
        raise _fail(
            f"at most {MAX_ACCUMULATORS} f32 accumulators per consumer thread",
            f"{accumulators} for tile {tuple(tile)} with schedule {schedule!r}",
            "use a smaller tile N or M (128 x 128 holds 64 cooperative, 128 pingpong)",
        )


def choose_stages(plan: Plan, stages: int | None, target: str) -> int:
    """`stages`, or by default the most that fit up to 4; a ValueError otherwise."""
    budget = TARGETS[target].max_smem_bytes
    fits = [
        n for n in range(1, copy.MAX_BARRIERS + 1) if smem_footprint(with_stages(plan, n)) <= budget
    ]
    limit = max(fits, default=0)
    if limit == 0:
        raise _fail(
            f"a tile whose ring slot and C tiles fit the {budget} bytes of SMEM of a block "
            f"on {target}",
            f"tile {plan.tile} with out={plan.out!r} and schedule {plan.schedule!r}",
            "use a smaller tile",
        )
    if stages is None:
        return min(4, limit)
    if not _is_int(stages) or not 2 <= stages <= limit:
        raise _fail(
            f"2 to {limit} stages (the ring of {plan.tile} tiles, C's tiles and the barriers "
            f"must fit the {budget} bytes of SMEM of a block on {target}; the consumers "
            "hold two slots at a time)",
            f"stages={stages!r}",
            f"use stages={min(4, limit)}",
        )
    return stages


def with_stages(plan: Plan, stages: int) -> Plan:
    return replace(plan, stages=stages)


def choose_group(plan: Plan, group: int | None) -> int:
    """The largest divisor of the tile rows up to `group` (default 1: row-major), so that
    every group has the same rows; an ArgumentError for other than a positive int."""
    if group is None:
        return 1
    if not _is_int(group) or group < 1:
        raise _fail(
            "group None or a positive integer (tile rows walked together)",
            repr(group),
            "use group=8, or None for row-major order",
        )
    rows = plan.tiles[0]
    return max(g for g in range(1, min(group, rows) + 1) if rows % g == 0)


def plan_of(
    shape: tuple[int, int, int],
    dtype: str,
    out: str,
    tile: Sequence[int],
    stages: int | None,
    cluster: int,
    schedule: str,
    target: str,
    group: int | None = None,
) -> Plan:
    """The plan of `gemm`'s arguments, or a ValueError (expected, got, fix)."""
    check_arguments(shape, dtype, out, tile, cluster, schedule, target)
    plan = Plan(shape, dtype, out, (tile[0], tile[1], tile[2]), 2, cluster, schedule)
    plan = replace(plan, group=choose_group(plan, group))
    return with_stages(plan, choose_stages(plan, stages, target))
