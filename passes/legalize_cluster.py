"""copy-legalize's cluster folding: a kernel whose CTAs write each other's SMEM (the DSMEM ops
`copy.peer_store`, `copy.peer_copy`, `copy.peer_arrive`) runs on a target without clusters
as one block per cluster, each CTA of the cluster a role of it.

Before sm_90 no CTA addresses another's SMEM, and CTAs that wait on each other through GMEM
may deadlock (nothing makes them co-resident). A block of n x B threads holds the n CTAs of a
cluster of B threads each instead: `fold_cluster` rewrites the kernel into

- the SMEM of each CTA, once per rank: every buffer and barrier group of the kernel, in rank
  order (the arena is n times the CTA's, checked against the target);
- a `copy.warp_specialize` of n roles of B / 32 warps: role r runs the kernel's body as CTA
  r of the cluster, on rank r's buffers and barriers; its `gpu.thread_id x` is the role's
  thread index, `gpu.block_dim x` is B, and `gpu.block_id` is the cluster's first block's
  plus the rank's place in the cluster (x fastest, as `%cluster_ctarank`). The launch keeps
  its grid: the first block of each cluster runs the cluster, the others do nothing;
- each peer op addresses the peer rank's copy, which must be the same rank in every cluster
  (its `peer` a constant once the rank is known, `_rank_value`), else LG3:
  `peer_store` becomes a store to (`reduce`: an atomic into) the peer's buffer, `peer_copy`
  the role's threads copying the slot, and the bytes they complete on the peer's barrier
  become one arrival: after the role's outermost op that holds them and neither waits nor
  arrives (the loop over a tile's pieces, once per phase of a loop over phases), the role
  meets at its barrier (every thread's stores are done) and its elected thread arrives on
  the peer's barrier (release; the peer's wait acquires). A barrier group that receives
  peer bytes counts one more arrival per sender, and its `barrier_arrive_expect_tx` becomes
  a plain arrival of the elected thread (`barrier_expect_tx` goes); `peer_arrive` is an
  arrival of the elected thread on the peer's barrier (with `expect_tx`: LG3);
- the block barriers of the body (`gpu.barrier`) become the role's, and a cluster barrier
  (`copy.cluster_sync`, whole) a named barrier of every role's threads (id n + 1: the roles
  take 1 to n), the folded block's own.

The rest of copy-legalize then rewrites the TMA copies inside the roles as it does in any
warp-specialized kernel. What cannot be folded is reported at the op (LG3): a block that is
not 1-D whole warps, n x B over 1024 threads, an arena over the target's SMEM, SMEM taken
inside a loop or branch, roles or named barriers of the kernel's own, a peer ref that is not
a buffer of the kernel, a peer rank that differs between clusters, half a cluster barrier
(`copy.cluster_sync arrive` or `wait`), a cluster barrier in a cluster of 15 or 16 CTAs.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith, func, gpu, memref, scf, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    MemRefType,
    VectorType,
    i32,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from copy_dialect import ops as copy
from copy_dialect import portability
from copy_dialect.roles import NAMED_BARRIERS, kernel_block_threads
from copy_dialect.smem import SmemAllocation, arena_layout
from facts.target import Target
from passes.legalize_common import appender, box_coords, role_barrier, thread_condition
from passes.legalize_common import index_constant as _index

PEER_OPS = (copy.PeerStoreOp, copy.PeerCopyOp, copy.PeerArriveOp)
MAX_BLOCK_THREADS = 1024
DIMS = (gpu.DimensionEnum.X, gpu.DimensionEnum.Y, gpu.DimensionEnum.Z)
COPY_BYTES = 16
"""The bytes a thread moves at a time in a folded `peer_copy` (where the slot's rows allow)."""


def needs_folding(kernel: func.FuncOp) -> bool:
    """Whether `kernel` writes a peer CTA's SMEM (then it folds on a target without
    clusters)."""
    return any(isinstance(op, PEER_OPS) for op in kernel.walk())


def fold_cluster(kernel: func.FuncOp, target: Target) -> None:
    """Rewrites `kernel` (a clone the caller may drop) into one block per cluster, or raises
    LG3 at the first op that cannot be folded."""
    first_peer = next(op for op in kernel.walk() if isinstance(op, PEER_OPS))
    shape = copy.kernel_cluster_shape(kernel)
    n = prod(shape)
    threads = kernel_block_threads(kernel)

    def refuse(op: Operation, what: str, note: str = "") -> None:
        portability.check_no_form(op, what, target, note)

    assert n >= 2, "DS2: a kernel with peer ops has a cluster of 2 or more CTAs"
    if threads is None or threads % copy.WARP:
        block = kernel.attributes.get("gpu.known_block_size", "none")
        whole = 128 if threads is None else -(-threads // copy.WARP) * copy.WARP
        refuse(
            first_peer,
            f"DSMEM in a kernel whose block is not 1-D whole warps (gpu.known_block_size: "
            f"{block}): the pass folds each cluster into one block, a role of B / 32 warps "
            "per CTA of B threads",
            note=f"give the kernel gpu.known_block_size = array<i32: {whole}, 1, 1>",
        )
    assert threads is not None
    if n * threads > MAX_BLOCK_THREADS:
        refuse(
            first_peer,
            f"DSMEM in clusters of {n} CTAs of {threads} threads: the pass folds each cluster "
            f"into one block, and {n * threads} threads exceed a block's {MAX_BLOCK_THREADS}",
            note=f"use clusters of at most {max(1, MAX_BLOCK_THREADS // threads)} CTAs, or "
            f"blocks of at most {MAX_BLOCK_THREADS // n} threads",
        )
    body = kernel.body.block
    for op in kernel.walk():
        if isinstance(op, copy.WarpSpecializeOp):
            refuse(
                op,
                "roles (copy.warp_specialize) in a kernel with DSMEM: the pass folds each "
                "cluster into one block whose roles are the cluster's CTAs",
            )
        if isinstance(op, copy.NamedBarrierSyncOp | copy.NamedBarrierArriveOp):
            refuse(
                op,
                "a named barrier in a kernel with DSMEM: the pass folds each cluster into one "
                "block whose roles are the cluster's CTAs, and their barriers take the ids",
                note="meet at gpu.barrier where the whole block meets (it becomes each CTA's "
                "own barrier)",
            )
        if isinstance(op, copy.ClusterSyncOp):
            if op.arrive is not None or op.wait is not None:
                half = "arrive" if op.arrive is not None else "wait"
                refuse(
                    op,
                    f"half a cluster barrier (copy.cluster_sync {half}) in a kernel with DSMEM: "
                    "the pass folds each cluster into one block, where it becomes a named "
                    "barrier of the whole block, which a thread cannot arrive on and wait on "
                    "apart",
                    note="use the whole copy.cluster_sync (arrive and wait at one point)",
                )
            if n + 1 >= NAMED_BARRIERS:
                refuse(
                    op,
                    f"a cluster barrier in clusters of {n} CTAs: the pass folds each cluster "
                    f"into one block, whose roles take named barriers 1 to {n}, leaving none "
                    "for the cluster's",
                    note=f"use clusters of at most {NAMED_BARRIERS - 2} CTAs",
                )
        if op.get_trait(SmemAllocation) is not None and op.parent_block() is not body:
            refuse(
                op,
                "SMEM taken inside a loop or branch of a kernel with DSMEM: the pass folds each "
                "cluster into one block and gives each CTA's buffers a copy per rank",
                note="take the kernel's SMEM at its top level",
            )
    _Fold(kernel, target, shape, threads).run()
    _, arena = arena_layout(kernel)
    if arena > target.max_smem_bytes:
        refuse(
            first_peer,
            f"DSMEM in clusters of {n} CTAs: the pass folds each cluster into one block, whose "
            f"SMEM ({arena} bytes: each CTA's buffers and barriers once per rank) exceeds the "
            f"{target.max_smem_bytes} bytes a block can use",
            note=f"use smaller tiles or clusters (at most {target.max_smem_bytes} bytes of SMEM "
            "for the whole cluster)",
        )


class _Fold:
    def __init__(
        self, kernel: func.FuncOp, target: Target, shape: tuple[int, int, int], threads: int
    ):
        self.kernel = kernel
        self.target = target
        self.shape = shape
        self.n = prod(shape)
        self.threads = threads
        self.copies: list[dict[SSAValue, SSAValue]] = [{} for _ in range(self.n)]
        """Each rank's copy of each buffer and barrier group of the kernel."""
        self.original: dict[SSAValue, SSAValue] = {}
        """The kernel's buffer or barrier group that each rank's copy stands for."""
        self.senders: dict[SSAValue, int] = {}
        """Each barrier group (a rank's copy) that receives peer bytes: the arrivals its
        senders make (one each, by the role's elected thread)."""

    def place(self, rank: int) -> tuple[int, int, int]:
        """The rank's coordinates in the cluster (x fastest, as `%cluster_ctarank`)."""
        cx, cy, _ = self.shape
        return (rank % cx, rank // cx % cy, rank // (cx * cy))

    def run(self) -> None:
        body = self.kernel.body.block
        taken = [op for op in body.ops if op.get_trait(SmemAllocation) is not None]
        rest = [op for op in body.ops if op not in taken and not isinstance(op, func.ReturnOp)]
        ret = body.last_op
        assert isinstance(ret, func.ReturnOp)
        hoisted: list[Operation] = []
        for rank in range(self.n):
            for op in taken:
                twin = op.clone()
                hoisted.append(twin)
                for old, new in zip(op.results, twin.results, strict=True):
                    self.copies[rank][old] = new
                    self.original[new] = old
        ws = copy.WarpSpecializeOp([self.threads // copy.WARP] * self.n)
        for rank in range(self.n):
            self.fill_role(ws, rank, rest)
        for op in [*rest, *taken]:
            op.detach()
        for op in reversed(rest):
            op.erase(safe_erase=False)
        for op in taken:
            op.erase(safe_erase=False)
        body.insert_ops_before([*hoisted, ws], ret)
        for group, senders in self.senders.items():
            init = group.owner
            assert isinstance(init, copy.BarrierInitOp)
            init.arrivals = IntegerAttr(init.arrivals.value.data + senders, i32)
            # The bytes the group expected are the senders' arrivals now; its
            # arrive_expect_tx becomes an arrival of the same count (the elected thread's).
            for use in list(group.uses):
                user = use.operation
                if isinstance(user, copy.BarrierArriveExpectTxOp):
                    Rewriter.replace_op(
                        user, copy.BarrierArriveOp(group, user.index, issuer="elected")
                    )
                elif isinstance(user, copy.BarrierExpectTxOp):
                    Rewriter.erase_op(user)
        self.kernel.attributes.pop("copy.cluster", None)
        self.kernel.attributes["gpu.known_block_size"] = DenseArrayBase.from_list(
            i32, [self.n * self.threads, 1, 1]
        )

    def fill_role(self, ws: copy.WarpSpecializeOp, rank: int, rest: Sequence[Operation]) -> None:
        """Role `rank`: the body as CTA `rank` of the cluster, run by the first block of each
        cluster only."""
        block = ws.role_block(rank)
        place = self.place(rank)
        lead: SSAValue | None = None
        for size, d in zip(self.shape, DIMS, strict=True):
            if size == 1:
                continue
            made = gpu.BlockIdOp(gpu.DimensionAttr(d))
            c_size, c0 = _index(size), _index(0)
            rem = arith.RemUIOp(made, c_size)
            first = arith.CmpiOp(rem, c0, "eq")
            block.add_ops([made, c_size, c0, rem, first])
            if lead is None:
                lead = first.result
            else:
                both = arith.AndIOp(lead, first)
                block.add_ops([both])
                lead = both.result
        assert lead is not None  # n >= 2
        then = Block()
        mapper = dict(self.copies[rank])
        for op in rest:
            then.add_op(op.clone(value_mapper=mapper))
        then.add_op(scf.YieldOp())
        block.add_op(scf.IfOp(lead, [], Region(then)))
        self.rebase_ids(then, block.args[0], place)
        self.rewrite_peers(then, block.args[0])

    def rebase_ids(self, then: Block, thread: SSAValue, place: tuple[int, int, int]) -> None:
        """The CTA's ids in the role: thread x is the role's thread index, the block is B
        threads, and block ids are the cluster's first block's plus the rank's place."""
        for op in list(then.walk()):
            if isinstance(op, gpu.ThreadIdOp):
                d = op.dimension.data
                if d is gpu.DimensionEnum.X:
                    Rewriter.replace_op(op, [], [thread])
                else:
                    Rewriter.replace_op(op, _index(0))
            elif isinstance(op, gpu.BlockDimOp):
                d = op.dimension.data
                Rewriter.replace_op(op, _index(self.threads if d is gpu.DimensionEnum.X else 1))
            elif isinstance(op, gpu.BlockIdOp):
                offset = place[DIMS.index(op.dimension.data)]
                if offset:
                    fresh = gpu.BlockIdOp(op.dimension)
                    c = _index(offset)
                    add = arith.AddiOp(fresh, c)
                    name = op.result.name_hint
                    Rewriter.replace_op(op, [fresh, c, add], [add.result])
                    fresh.result.name_hint = c.result.name_hint = None
                    add.result.name_hint = name
            elif isinstance(op, gpu.BarrierOp):
                Rewriter.replace_op(op, role_barrier())
            elif isinstance(op, copy.ClusterSyncOp):  # every CTA's threads: the whole block
                Rewriter.replace_op(op, copy.NamedBarrierSyncOp(self.n + 1, self.n * self.threads))

    def rewrite_peers(self, then: Block, thread: SSAValue) -> None:
        sends: dict[tuple[Operation, SSAValue, SSAValue | None], Operation] = {}
        for op in list(then.walk()):
            if not isinstance(op, PEER_OPS):
                continue
            peer = self.peer_rank(op)
            bar = self.peer_value(op, op.barrier, peer)
            if isinstance(op, copy.PeerArriveOp):
                if op.expect_tx is not None:
                    portability.check_no_form(
                        op,
                        "an arrival on a peer CTA's barrier that expects bytes (expect_tx)",
                        self.target,
                        note=f"drop expect_tx from the arrival and expect its {op.tx_bytes} "
                        "bytes in the peer CTA itself (copy.barrier_expect_tx, or its own "
                        "barrier_arrive_expect_tx)",
                    )
                Rewriter.replace_op(
                    op, copy.BarrierArriveOp(bar, op.barrier_index, issuer="elected")
                )
                continue
            top = self.send_end(op, then)
            if isinstance(op, copy.PeerStoreOp):
                made = self.store(op, self.peer_value(op, op.ref, peer))
            else:
                made = self.copy_loop(op, self.peer_value(op, op.dst, peer), thread)
            sends.setdefault((made[-1] if top is op else top, bar, op.barrier_index), op)
            Rewriter.replace_op(op, made, [])
        for (top, bar, index), op in sends.items():
            # Every thread of the role has stored: its elected thread arrives for them.
            done: list[Operation] = [role_barrier()]
            if index is not None and top.is_ancestor(index.owner):  # type: ignore[arg-type]
                if not isinstance(index.owner, arith.ConstantOp):
                    portability.check_no_form(
                        op,
                        "a peer store whose barrier index is computed inside its loop (the "
                        "folded sender arrives once, after the loop)",
                        self.target,
                        note="compute the barrier index before the loop",
                    )
                done.insert(0, index.owner.clone())
                index = done[0].results[0]
            arrive = copy.BarrierArriveOp(bar, index, issuer="elected")
            done.append(arrive)
            Rewriter.insert_op(done, InsertPoint.after(top))
            made = copy.arrivals_of(arrive).made(self.threads)
            self.senders[bar] = self.senders.get(bar, 0) + made

    def send_end(self, op: Operation, then: Block) -> Operation:
        """The op after which the role's threads have made `op`'s writes of one phase: its
        outermost enclosing op (below the role's body) that neither waits nor arrives nor
        meets (a loop over the tile's pieces, a guard), so that a loop over phases, which
        also waits, gets an arrival per iteration. LG3 where the threads do not all reach
        that point (it lies under a condition that depends on the thread)."""
        top = op
        while top.parent_block() is not then:
            parent = top.parent_op()
            assert parent is not None
            if any(_synchronizes(inner) for inner in parent.walk() if inner is not op):
                break
            top = parent
        varying = thread_condition(top, then)
        if varying is not None:
            portability.check_no_form(
                op,
                f"a peer write whose phase ends under {varying.name}, whose condition or "
                "bounds depend on the thread (the folded role meets at its barrier there, "
                "every thread of it)",
                self.target,
                note="keep the loop that holds the peer writes and the waits of each phase "
                "uniform over the block",
            )
        return top

    def peer_rank(self, op: Operation) -> int:
        """The constant rank of `op`'s peer in this role (`_rank_value`), else LG3."""
        assert isinstance(op, PEER_OPS)
        value = _rank_value(op.peer, self.shape, {})
        if value is None or value[0] != (0, 0, 0) or not 0 <= value[1] < self.n:
            portability.check_no_form(
                op,
                "a peer op whose peer rank is not the same in every cluster (the pass folds "
                "each cluster into one block and needs the peer's rank to pick its buffers)",
                self.target,
                note="compute the peer from the CTA's rank in its cluster and constants "
                "(`arith.remui` of the block id by the cluster's size, then arith.xori, "
                "arith.addi, arith.remui)",
            )
        assert value is not None
        return value[1]

    def peer_value(self, op: Operation, local: SSAValue, peer: int) -> SSAValue:
        """The peer rank's copy of `local` (one of this rank's buffers or barrier groups)."""
        if local in self.original:
            return self.copies[peer][self.original[local]]
        portability.check_no_form(
            op,
            f"a peer op on {local.type}, which is not a buffer or barrier group the kernel "
            "takes at its top level (the pass gives each rank its own copy of those)",
            self.target,
        )
        raise AssertionError("unreachable")

    def store(self, op: copy.PeerStoreOp, ref: SSAValue) -> list[Operation]:
        indices = list(op.indices)
        if op.reduction is None:
            if isinstance(op.value.type, VectorType):
                return [vector.StoreOp(op.value, ref, indices)]
            return [memref.StoreOp.get(op.value, ref, indices)]
        ref_type = ref.type
        assert isinstance(ref_type, MemRefType)
        atomic = portability.thread_atomic(
            op, op.reduction.data, ref_type.element_type, self.target
        )
        assert not isinstance(op.value.type, VectorType)  # red.async reduces one element (DS6)
        return [portability.thread_atomic_op(atomic, op.value, ref, indices)]

    def copy_loop(self, op: copy.PeerCopyOp, dst: SSAValue, thread: SSAValue) -> list[Operation]:
        """The role's threads copy the slot `src[src_indices]` to `dst[dst_indices]`, 16 bytes
        at a time where the slot's rows allow (else an element), consecutive threads on
        consecutive items."""
        src_type = op.src.type
        assert isinstance(src_type, MemRefType)
        lead_src, lead_dst = list(op.src_indices), list(op.dst_indices)
        box = list(src_type.get_shape())[len(lead_src) :]
        element = src_type.element_type
        size = (copy.bitwidth(element) or 8) // 8
        width = (
            COPY_BYTES // size if COPY_BYTES % size == 0 and box[-1] * size % COPY_BYTES == 0 else 1
        )
        made: list[Operation] = []
        emit = appender(made)
        total = emit(_index(prod(box) // width))
        step = emit(_index(self.threads))
        loop = Block(arg_types=[IndexType()])
        inner: list[Operation] = []
        put = appender(inner)
        coords = box_coords(loop.args[0], box, width, put, lambda v: put(_index(v)))
        if width == 1:
            value = put(memref.LoadOp.get(op.src, [*lead_src, *coords]))
            inner.append(memref.StoreOp.get(value, dst, [*lead_dst, *coords]))
        else:
            value = put(vector.LoadOp(op.src, [*lead_src, *coords], VectorType(element, [width])))
            inner.append(vector.StoreOp(value, dst, [*lead_dst, *coords]))
        inner.append(scf.YieldOp())
        loop.add_ops(inner)
        made.append(scf.ForOp(thread, total, step, [], Region(loop)))
        return made


SYNC_OPS = (copy.WaitGroupOp, copy.CommitGroupOp, copy.NamedBarrierSyncOp, gpu.BarrierOp)


def _synchronizes(op: Operation) -> bool:
    """Whether `op` waits, arrives or meets: an op on a barrier group other than a peer
    write, or a group wait or commit, or a block or named barrier."""
    if isinstance(op, SYNC_OPS):
        return True
    if isinstance(op, copy.PeerStoreOp | copy.PeerCopyOp):
        return False
    return any(isinstance(v.type, copy.BarrierType) for v in op.operands)


Affine = tuple[tuple[int, int, int], int]
"""a_x Q_x + a_y Q_y + a_z Q_z + c, where Q_d is the block id along d of the first block of a
cluster (a multiple of the cluster's size along d)."""


def _rank_value(
    value: SSAValue, shape: tuple[int, int, int], memo: dict[SSAValue, Affine | None]
) -> Affine | None:
    """`value` in a folded role as an `Affine` of the cluster's first block ids, when it is
    computed from block ids and constants with arith (remainders by a divisor of the
    cluster's size drop the Q terms); else None."""
    if value in memo:
        return memo[value]
    found: Affine | None = None
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        found = ((0, 0, 0), owner.value.value.data)
    elif isinstance(owner, gpu.BlockIdOp):
        d = DIMS.index(owner.dimension.data)
        found = (tuple(int(k == d) for k in range(3)), 0)  # type: ignore[assignment]
    elif isinstance(owner, arith.IndexCastOp):
        found = _rank_value(owner.input, shape, memo)
    elif (
        isinstance(owner, Operation)
        and len(owner.operands) == 2
        and owner.name.startswith("arith.")
    ):
        a, b = (_rank_value(v, shape, memo) for v in owner.operands)
        if a is not None and b is not None:
            found = _combine(owner.name, a, b, shape)
    memo[value] = found
    return found


_CONSTANT = {
    "arith.xori": lambda a, b: a ^ b,
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
    "arith.shli": lambda a, b: a << b if b >= 0 else None,
    "arith.shrui": lambda a, b: a >> b if b >= 0 else None,
}
"""Bitwise ops, evaluated where both operands are known constants (a rank `^ 1`)."""


def _combine(name: str, a: Affine, b: Affine, shape: tuple[int, int, int]) -> Affine | None:
    (qa, ca), (qb, cb) = a, b
    if name in _CONSTANT:
        if qa != (0, 0, 0) or qb != (0, 0, 0) or ca < 0 or cb < 0:
            return None
        value = _CONSTANT[name](ca, cb)
        return None if value is None else ((0, 0, 0), value)
    if name == "arith.addi":
        return (tuple(x + y for x, y in zip(qa, qb, strict=True)), ca + cb)  # type: ignore[return-value]
    if name == "arith.subi":
        return (tuple(x - y for x, y in zip(qa, qb, strict=True)), ca - cb)  # type: ignore[return-value]
    if name == "arith.muli":
        if qa == (0, 0, 0):
            return (tuple(ca * y for y in qb), ca * cb)  # type: ignore[return-value]
        if qb == (0, 0, 0):
            return (tuple(cb * x for x in qa), ca * cb)  # type: ignore[return-value]
        return None
    if qb != (0, 0, 0) or cb <= 0 or min(qa) < 0 or ca < 0:
        return None
    if name == "arith.remui":
        if all(q * size % cb == 0 for q, size in zip(qa, shape, strict=True)):
            return ((0, 0, 0), ca % cb)
        return None
    if name == "arith.divui" and qa == (0, 0, 0):
        return ((0, 0, 0), ca // cb)
    return None
