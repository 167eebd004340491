"""A TMEM pipeline on tcgen05 (sm_100a, issue 33 item 4): C = A B^T for one 128-row tile
(or a CTA pair's 256-row one), f16 in, f32 out, accumulated in TMEM by warp-specialized
roles, with the tcgen05 fences at every TMEM hand-off (P14).

- The producer warp loads k-block kb of A (128 x 64) and of B (n x 64) into ring slot
  kb % stages (TMA, 128-byte swizzle), each load arriving on the slot's `full` barrier with
  its bytes, once the slot's previous use was released (`empty`; its first lap does not
  wait).
- The MMA warp waits on `full`, and its first lane issues four tcgen05.mma of kind f16 (K 16
  each: the slot's descriptors stepped by 32 bytes) into the TMEM accumulator, the first
  without the accumulator's old value; then `nvvm.tcgen05.commit` on the slot's `empty`
  barrier, whose arrival comes once the MMAs have read the slot (CUTLASS's sm100 mainloop
  release). After the last k-block it commits to `acc_full` (the accumulator is final).
- The epilogue warps (4: one per TMEM lane quarter) wait on `acc_full`, fence
  (`nvvm.tcgen05.fence <after>`: the MMA warp's commit is its before fence), load their lane's
  row of the accumulator 8 columns at a time (tcgen05.ld 32x32b), wait, and store the rows to
  C; they fence (`<before>`) before the roles join and the block frees the TMEM.

Warp w of the epilogue (block warp 2 + w) reads TMEM lane quarter (2 + w) % 4, so C's row
32 ((2 + w) % 4) + lane is its.

With `cluster=2` the tile is a CTA pair's (M 256, TMEM of cta_group 2): each CTA loads its
part of the pair's k-block (A's rows 128 i .., B's rows n / 2 i ..: leader-tracked loads
partitioned along the rows, all bytes on the leader's `full`); the leader's (the even
CTA's) MMA warp issues the M 256 MMAs, which read both CTAs' slots and write D's rows
128 i .. into CTA i's TMEM, and multicasts its commits to both CTAs' barriers (mask 3,
CUTLASS's umma_arrive_multicast_2x1SM), so each producer waits on its own `empty` and each
epilogue on its own `acc_full`; a cluster barrier precedes the pair's dealloc.

`runtime.interpret` runs the kernel on the CPU (there is no Blackwell GPU here);
`compile_module` lowers it for the targets with tcgen05."""

from __future__ import annotations

from xdsl.dialects import arith, builtin, llvm, vector
from xdsl.dialects.builtin import MemRefType, ModuleOp, VectorType, i16, i64
from xdsl.dialects.llvm import GEP_USE_SSA_VAL

from copy_dialect import ops as copy
from copy_dialect.instruction_descriptor import MmaInstructionDescriptorOp
from facts.errors import ArgumentError
from facts.target import TCGEN05
from frontends.dsl import Ring, Value, block_id, emit, if_, kernel, loop, result, warp_specialize
from frontends.dsl.values import boolean, const, index
from frontends.kernels.checks import check_target
from frontends.kernels.common import _check_feature, _gmem, _smem, element_type
from passes.nvvm.attributes import ptr
from passes.nvvm.tcgen05_fence import Tcgen05FenceOp
from passes.nvvm.tcgen05_mma import Tcgen05CommitOp, Tcgen05MMAOp

ROWS = 128
"""The tile's rows: TMEM's lanes, the MMA's M (one CTA)."""
K_BLOCK = 64
"""The k-block of a ring slot: 64 f16, one 128-byte swizzle span a row."""
MMA_K = 16
"""The K of one tcgen05.mma of kind f16."""
COLUMNS = 8
"""The accumulator columns an epilogue thread loads at a time (tcgen05.ld 32x32b .x8)."""
ROLE_WARPS = (1, 1, 4)
"""The producer warp, the MMA warp, the epilogue warps."""


def tmem_pipeline(
    k: int, n: int = 128, *, stages: int = 4, cluster: int = 1, target: str = "sm_100a"
) -> ModuleOp:
    """The module of kernel `tmem_pipeline(A: M x k f16, B: n x k f16, C: M x n f32)`,
    C = A B^T, through a ring of `stages` slots; M = 128 `cluster`. `k` a multiple of 64,
    `n` a multiple of 16 from 16 to 256 (of 32 with `cluster=2`). Launch `cluster` blocks
    of 192 threads (one cluster)."""
    check_target(target)
    _check_feature(
        target,
        TCGEN05,
        "copy.tmem_alloc",
        f"a TMEM pipeline needs tcgen05 ({TCGEN05.listed})",
    )
    if cluster not in (1, 2) or isinstance(cluster, bool):
        raise ArgumentError(f"expected cluster 1 or 2 (a CTA pair), got {cluster!r}")
    step = 16 * cluster
    for name, value, ok, want in (
        ("k", k, isinstance(k, int) and k >= K_BLOCK and k % K_BLOCK == 0, "a multiple of 64"),
        ("n", n, isinstance(n, int) and step <= n <= 256 and n % step == 0, f"{step} to 256"),
        ("stages", stages, isinstance(stages, int) and 1 <= stages <= 8, "1 to 8"),
    ):
        if not ok or isinstance(value, bool):
            raise ArgumentError(f"expected {name} {want}, got {value!r}")
    f16, f32 = element_type("f16"), element_type("f32")
    k_blocks = k // K_BLOCK
    ring = Ring(stages)
    pair = cluster == 2
    group = 2 if pair else None
    b_rows = n // cluster
    swizzled = 128

    def body(a: Value, b: Value, c: Value) -> None:
        rank = block_id() % 2 if pair else index(0)
        # TMEM is allocated in powers of two of at least 32 columns (J10); D takes n.
        columns = max(32, 1 << (n - 1).bit_length())
        tmem_type = MemRefType(f32, [ROWS, columns], memory_space=copy.TmemSpaceAttr())
        acc = Value(emit(copy.TmemAllocOp, tmem_type, group).results[0])
        ring_a = Value(emit(copy.AllocSmemOp, _smem(f16, [stages, ROWS, K_BLOCK], swizzled)))
        ring_b = Value(emit(copy.AllocSmemOp, _smem(f16, [stages, b_rows, K_BLOCK], swizzled)))
        full = Value(emit(copy.BarrierInitOp, stages, 2))
        empty = Value(emit(copy.BarrierInitOp, stages, 1))
        acc_full = Value(emit(copy.BarrierInitOp, 1, 1))
        d = cast(acc, ptr(6))
        empty_ptr = cast(empty, ptr(3))
        acc_full_ptr = cast(acc_full, ptr(3))
        m = ROWS * cluster
        idesc = result(MmaInstructionDescriptorOp, "f16", (m, n), (f16, f16, f32), cta_group=group)
        mask = const(3, i16) if pair else None

        def commit(barrier: Value) -> None:
            if pair:
                emit(Tcgen05CommitOp, barrier, mask, "cta_2")
            else:
                emit(Tcgen05CommitOp, barrier)

        def producer(t: Value) -> None:
            with loop(index(k_blocks)) as kb:
                slot, phase = ring.producer_at(kb)
                emit(copy.BarrierWaitOp, empty, slot, phase)
                k0 = kb * K_BLOCK
                for src, buf in ((a, ring_a), (b, ring_b)):
                    # With a pair: CTA i's part of the pair's box (rows from i box extents),
                    # its bytes on the leader's barrier (the leader's loads expect both).
                    emit(
                        copy.AsyncCopyOp, src, buf, src_indices=[index(0), k0],
                        dst_indices=[slot], barrier=full, barrier_index=slot,
                        collective=[0] if pair else None,
                        leader_tracked=copy.LeaderTrackedAttr(0) if pair else None,
                    )  # fmt: skip

        def mma(t: Value) -> None:
            lead = t.eq(0)
            with loop(index(k_blocks)) as kb:
                slot, phase = ring.at(kb)
                emit(copy.BarrierWaitOp, full, slot, phase)
                da = result(copy.MatrixDescriptorOp, ring_a, [slot], tcgen05=True)
                db = result(copy.MatrixDescriptorOp, ring_b, [slot], tcgen05=True)
                with if_(lead):
                    for j in range(K_BLOCK // MMA_K):
                        # 32 bytes of K a step, in the descriptor's 16-byte units
                        offset = const(2 * j, i64)
                        sa = da if j == 0 else result(arith.AddiOp, da, offset)
                        sb = db if j == 0 else result(arith.AddiOp, db, offset)
                        accumulate = kb.ne(0) if j == 0 else boolean(True)
                        emit(
                            Tcgen05MMAOp, d, sa, sb, idesc, accumulate, kind="f16",
                            group="cta_2" if pair else "cta_1",
                        )  # fmt: skip
                    commit(barrier_pointer(empty_ptr, slot))
            with if_(lead):
                commit(acc_full_ptr)

        def leader_mma(t: Value) -> None:
            # The pair's MMAs are the leader's (the even CTA); the peer's MMA warp idles.
            with if_(rank.eq(0)):
                mma(t)

        def epilogue(t: Value) -> None:
            emit(copy.BarrierWaitOp, acc_full, index(0), boolean(False))
            emit(Tcgen05FenceOp, "after")
            warp = t // copy.WARP + (ROLE_WARPS[0] + ROLE_WARPS[1])
            row = rank * ROWS + warp % 4 * copy.WARP + t % copy.WARP
            for j in range(n // COLUMNS):
                v = emit(
                    copy.TmemLoadOp, acc, index(j * COLUMNS), shape="shape_32x32b",
                    num=COLUMNS, result_type=VectorType(f32, [COLUMNS]),
                )  # fmt: skip
                emit(copy.TmemWaitOp, "load")
                emit(vector.StoreOp, v, c, [row, index(j * COLUMNS)])
            emit(Tcgen05FenceOp, "before")

        warp_specialize(
            [
                (ROLE_WARPS[0], producer),
                (ROLE_WARPS[1], leader_mma if pair else mma),
                (ROLE_WARPS[2], epilogue),
            ]
        )
        if pair:
            # Neither CTA frees the pair's TMEM, nor exits, while the other may still touch
            # it or the leader's commits may still arrive on its barriers.
            emit(copy.ClusterSyncOp)
        emit(copy.TmemDeallocOp, acc, group)

    rows = ROWS * cluster
    return kernel(
        "tmem_pipeline",
        [_gmem(f16, (rows, k)), _gmem(f16, (n, k)), _gmem(f32, (rows, n))],
        body,
        target=target,
        block=sum(ROLE_WARPS) * copy.WARP,
        cluster=(cluster, 1, 1) if pair else None,
    )


def cast(value: Value, to: llvm.LLVMPointerType) -> Value:
    """A TMEM ref or barrier group as the pointer the nvvm ops take (a memref is its
    pointer: docs/lowering.md)."""
    op = emit(builtin.UnrealizedConversionCastOp.get, [value.ssa], [to])
    return Value(op.results[0])


def barrier_pointer(group: Value, slot: Value) -> Value:
    """Barrier `slot` of a group's pointer: `llvm.getelementptr` of i64 by the slot (as the
    lowering lays a group out, and the analysis and the interpreter read it)."""
    s64 = result(arith.IndexCastOp, slot, i64)
    gep = emit(
        llvm.GEPOp, group, [GEP_USE_SSA_VAL], i64, ssa_indices=[s64.ssa],
        result_type=ptr(3),
    )  # fmt: skip
    return Value(gep.results[0])


__all__ = ["tmem_pipeline"]
