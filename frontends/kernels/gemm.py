"""A warp-specialized Hopper GEMM: `gemm` builds C = A * B^T on the tensor cores (sm_90a),
as CUTLASS's `KernelTmaWarpSpecializedCooperative` and `...Pingpong` kernels do; `gemm_grid`
is its launch.

Operands ("TN", CUTLASS's default for 16-bit types): A is M x K row-major, B is N x K
row-major (each row of B is a column of the product's B: both operands K-major), C is M x N
row-major; f16 or bf16 in, f32 accumulation, C in bf16, f16 or f32.

The kernel is persistent: block b (cluster b / 2 with `cluster=2`) takes the output tiles
b, b + G, ... (G the grid's blocks, or clusters), `group` tile rows at a time (8 by default),
column by column within each group (`group=1`: row-major over the tile grid). Its 384
threads are three warpgroups (`copy.warp_specialize warps [4, 4, 4] maxnreg [40, 232,
232]`):

- warpgroup 0, the producer: its first warp walks the block's tiles and their K-blocks,
  loading the A tile (tile[0] x tile[2]) and the B tile (tile[1] x tile[2]) of each into
  the next slot of a `stages`-deep ring (128-byte swizzled for tile[2] = 64), completing on
  the slot's `full` barrier, once the consumers released the slot (`empty`);
- warpgroups 1 and 2, the consumers: for each K-block they wait on `full`, issue
  `nvvm.wgmma.mma_async` m64nNk16 steps on `copy.matrix_descriptor`s of the slots (K-major,
  stepping K by 32 bytes), commit them, `wait.group 1` and release the slot of the previous
  K-block (its reads are then retired); after the K loop, `wait.group 0` and the release of
  the last slot. "cooperative": both take every tile, warpgroup w its rows
  w * tile[0] / 2 .. (in m64 blocks); "pingpong": they take the block's tiles in turn
  (warpgroup w tiles 2i + w), each a whole tile, their mainloops and their epilogues in
  turns (CUTLASS's ordered sequence barriers), so that one's epilogue overlaps the other's
  mainloop.
- the epilogue: the accumulator, converted to C's type, goes into the warpgroup's swizzled
  SMEM tile (`copy.stmatrix` x4 for 16-bit C, 8-byte vector stores for f32), then TMA
  stores of its column blocks (one swizzle atom wide); before rewriting the tile the
  warpgroup waits until its previous stores have read it.

With `cluster=2`, the two blocks of a cluster compute the tiles (m, 2p) and (m, 2p + 1),
which share A's rows: each block loads half the A tile multicast to both (`collective`
dim 0), and a consumer releases a slot in its own block and in its peer's (whose next
multicast writes it); the producer waits for the last releases before it exits.

Odd shapes: loads outside A or B are zero-filled (a K-block past K adds nothing) and stores
clipped at C's edges. TMA needs rows of a multiple of 16 bytes: K a multiple of 8, N of 8
(16-bit C) or 4 (f32 C).

The accumulator is a struct of f32 per m64 block that the K loop carries; before its first
use and after the final `wait.group 0` it goes through `fence_operand` (CUTLASS's
`warpgroup_fence_operand`): an empty `llvm.inline_asm` with side effects whose outputs are
tied to the registers, so that LLVM cannot move a use of the accumulator above the wait
(docs/lowering.md, "Accumulator registers")."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from math import ceil

from xdsl.dialects.builtin import MemRefType, ModuleOp

from copy_dialect import ops as copy
from facts.errors import ArgumentError
from frontends.dsl import Value, kernel, result, warp_specialize
from frontends.kernels.common import element_type
from frontends.kernels.gemm_plan import (
    IN_TYPES,
    MAXNREG,
    OUT_TYPES,
    SCHEDULES,
    WARPGROUP,
    check_grid_arguments,
    plan_of,
)
from frontends.kernels.gemm_roles import Consumer, Roles, Work, fence_operand, producer, turns

__all__ = ["IN_TYPES", "OUT_TYPES", "SCHEDULES", "fence_operand", "gemm", "gemm_grid"]


def gemm_grid(
    M: int,
    N: int,
    tile: Sequence[int] = (128, 128, 64),
    *,
    sms: int | None = None,
    cluster: int = 1,
    schedule: str = "cooperative",
) -> tuple[int, int]:
    """The grid of `gemm`'s persistent kernel: one block per output tile (a pair of them
    per cluster of 2; "pingpong": two tiles per block, one per consumer warpgroup), or at
    most `sms` blocks (each walks its tiles `b + k * grid`). For a persistent launch, `sms`
    is the blocks the GPU runs at once: `runtime.Kernel.max_active_clusters()` times
    `cluster` (a cluster's blocks share a GPC, so a cluster of 2 may fit fewer than one per
    pair of SMs), as bench_gemm passes it."""
    check_grid_arguments(M, N, tile, sms, cluster, schedule)
    rows, cols = ceil(M / tile[0]), ceil(N / tile[1])
    units = rows * ceil(cols / cluster)
    if schedule == "pingpong":
        units = ceil(units / 2)
    if sms is not None:
        units = min(units, max(1, sms // cluster))
    return (units * cluster, 1)


def gemm(
    M: int,
    N: int,
    K: int,
    dtype: str = "bf16",
    out: str = "bf16",
    tile: Sequence[int] = (128, 128, 64),
    *,
    stages: int | None = None,
    cluster: int = 1,
    schedule: str = "cooperative",
    target: str = "sm_90a",
    group: int | None = 8,
    verify: bool = True,
) -> ModuleOp:
    """C = A * B^T (A: M x K, B: N x K, both row-major, i.e. K-major; C: M x N) by a
    warp-specialized persistent kernel on wgmma (module docstring); arguments (A, B, C).
    Launch it on `gemm_grid(M, N, tile, sms=..., cluster=cluster, schedule=schedule)`
    blocks.

    `dtype`: bf16 or f16 operands; `out`: C's type (bf16, f16 or f32; f32 accumulation
    either way, rounded to nearest even once). `tile`: (M, N, K) of a block's output tile
    and of a ring slot's K: M 128 or 256 for "cooperative" (each consumer warpgroup half),
    64 or 128 for "pingpong"; N a multiple of 16 up to 256; K 64 (128-byte swizzle), 32 or
    16. `stages`: the ring's slots, by default the most that fit up to 4. `cluster=2`
    multicasts A to the two blocks of a cluster (which compute neighbouring tiles of a row).
    `group`: walk the tiles `group` tile rows at a time, column by column within the group
    (CUTLASS's raster swizzle: the blocks working at once share more of A and B in L2);
    the largest divisor of the tile rows up to it is taken; None or 1: row-major. The
    default, 8, was the fastest of 1, 8 and 16 on an H100 at 8192^3 (benchmarks/RESULTS.md,
    run 79: 128x128 cooperative 0.63 -> 0.77 of torch.matmul, before the i32 division).
    Any M; K a multiple of 8 and N of 16 bytes of C (TMA's row pitch): the edges are
    zero-filled on load and clipped on store. `verify=False` returns the module without
    verifying it (the protocol proof at 8192^3 takes 0.5-2.6 s on a 2-core machine, the
    pingpong schedule and a cluster of 2 the longest: an autotuner's sweep may prove only
    the configuration it keeps, with `runtime.verify_module`)."""
    if not isinstance(verify, bool):
        raise ArgumentError(f"expected verify to be a bool, got {verify!r}; pass True or False")
    shape = (M, N, K)
    plan = plan_of(shape, dtype, out, tile, stages, cluster, schedule, target, group)
    elt, out_elt = element_type(dtype), element_type(out)
    ring_a, ring_b = plan.ring_types()

    def body(a: Value, b: Value, c: Value) -> None:
        k = Roles(
            plan, Work(plan), a, b, c,
            result(copy.AllocSmemOp, ring_a),
            result(copy.AllocSmemOp, ring_b),
            result(copy.AllocSmemOp, plan.out_type()),
            result(copy.BarrierInitOp, plan.stages, 2),
            result(copy.BarrierInitOp, plan.stages, plan.releases()),
            None if schedule == "cooperative" else (turns(), turns()),
        )  # fmt: skip
        consumers = [partial(lambda w, t: Consumer(k, w, t).run(), w) for w in (0, 1)]
        roles = [partial(producer, k), *consumers]
        warp_specialize([(copy.WARPGROUP_WARPS, role) for role in roles], MAXNREG)

    arg_types = [MemRefType(elt, [M, K]), MemRefType(elt, [N, K]), MemRefType(out_elt, [M, N])]
    return kernel(
        f"gemm_{schedule}",
        arg_types,
        body,
        target=target,
        block=3 * WARPGROUP,
        cluster=(2, 1, 1) if cluster == 2 else None,
        verify=verify,
    )
