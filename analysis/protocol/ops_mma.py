"""How an agent follows the tensor-core MMA ops (upstream NVVM's spelling) that read SMEM
through descriptors (`analysis.smem_values`: a `copy.matrix_descriptor` of a ring slot, and
the descriptors a kernel steps along K by adding a constant). The state keeps and checks
the reads (`copies.mma_read`, `mma`).

- sm_90a: a wgmma reads the slots from its issue until the wait that retires its group;
  the commit closes the warpgroup's open group; the wait retires all but the newest N
  committed groups (PTX ISA, `wgmma.commit_group`, `wgmma.wait_group`). Each is
  `.sync.aligned`: every thread of each warp executes it (P10).
- sm_100a: a tcgen05.mma (dense, or sparse: `tcgen05.mma.sp`, whose metadata in TMEM it
  reads as it reads an A in TMEM), issued by the thread that reaches it, reads the slots until the
  mbarrier that a later `nvvm.tcgen05.commit` of the thread names receives the commit's
  arrival (`.mbarrier::arrive::one`: one per thread that executes it, made once the thread's
  prior tcgen05 operations are complete): a reader of the barrier's phase knows the reads
  done. The barrier is one the analysis follows when the commit's pointer is a
  `copy.barrier_init` group cast to `!llvm.ptr<3>` (its barrier 0; `llvm.getelementptr` of
  i64 by the index for another), as the lowering lays the group out; else the reads' end
  is not known (a warning at the commit). CUTLASS's sm100 consumer releases a slot that way:
  its commit arrives on the slot's empty barrier.

The ops are matched by name: they live with the lowering (`passes.nvvm`), which the analysis
does not import."""

from __future__ import annotations

import weakref

from xdsl.dialects.builtin import IntegerType, i64
from xdsl.ir import Operation, SSAValue

from analysis.protocol.findings import error, warning
from analysis.protocol.foreign import region_of
from analysis.protocol.groups import Groups
from analysis.protocol.mma import reader
from analysis.protocol.ops_cluster import mask_ranks
from analysis.protocol.records import Key, Region, barrier_pointer
from analysis.protocol.state import State
from analysis.protocol.steps import ALL, Stop
from analysis.protocol.tmem_order import is_tmem
from analysis.protocol.walk import Agent
from analysis.smem_values import TENSOR_CORE_READS, Origin, smem_values
from copy_dialect.tmem import MMAS, tcgen05_group

WARPGROUP = 128


_ORIGINS: list[tuple[object, dict[SSAValue, Origin]]] = []
"""The SMEM values of the kernel the analysis checks now (`origins_of`)."""


def origins_of(agent: Agent) -> dict[SSAValue, Origin]:
    """`smem_values(fn).origins`, once per kernel check: outside a verification run
    (`check_protocol` called on its own) `smem_values` derives them at each call."""
    if not _ORIGINS or _ORIGINS[0][0] is not agent.kernel:
        _ORIGINS[:] = [(agent.kernel, smem_values(agent.kernel.fn).origins)]
    return _ORIGINS[0][1]


def descriptor_regions(agent: Agent, op: Operation) -> list[Region]:
    """The slots a tensor-core op reads through its descriptor operands (an i64: an operand
    in TMEM is not SMEM); a descriptor the analysis cannot place is a warning."""
    origins = origins_of(agent)
    regions: list[Region] = []
    for n in TENSOR_CORE_READS[op.name]:
        v = op.operands[n]
        origin = origins.get(v)
        if origin is None and isinstance(v.type, IntegerType):
            # rule: P2
            agent.report(
                warning(
                    op,
                    f"cannot prove what SMEM this op reads through operand {n}: the "
                    "descriptor is not computed from copy.matrix_descriptor (or a view or "
                    "pointer of a copy.alloc_smem buffer), so its slot's refills are not "
                    "checked against the read",
                    "make the descriptor with copy.matrix_descriptor %buffer[%slot] major k|mn "
                    "(step along K by arith.addi of a constant)",
                )
            )
        if origin is not None:
            regions.append(region_of(agent, origin))
    return regions


def mma_async(agent: Agent, op: Operation, mask: int | None) -> None:
    whole_warpgroups(agent, op, mask)
    regions = descriptor_regions(agent, op)
    agent.event(op, *(r.index for r in regions))
    s = agent.state
    s.copies.mma_read(op, regions, agent.groups, agent.members(mask), reader(op))


def fence(agent: Agent, op: Operation, mask: int | None) -> None:
    """`wgmma.fence`: orders the warpgroup's register accesses before the next wgmma (the
    threads' SMEM writes need copy.fence_async_shared, P4, as for a TMA store)."""
    whole_warpgroups(agent, op, mask)


def commit(agent: Agent, op: Operation, mask: int | None) -> None:
    whole_warpgroups(agent, op, mask)
    agent.event(op)
    agent.groups.mma.commit()


def wait(agent: Agent, op: Operation, mask: int | None) -> None:
    whole_warpgroups(agent, op, mask)
    pending = op.properties["group"]
    n = pending.value.data  # type: ignore[attr-defined]
    agent.event(op, n)
    s = agent.state
    retired = s.group_sets.mma_wait(agent.groups, n, agent.observers(mask))
    if retired:
        s.smem.waited(retired, [])


def whole_warpgroups(agent: Agent, op: Operation, mask: int | None) -> None:
    """A wgmma op is a warpgroup's: the four warps 4g..4g+3 of the block (threads 128g..)
    execute it together, so the threads that reach it must be whole such warpgroups (P10):
    a role of warps that does not start at a multiple of 4 warps of the block splits them."""
    agent.whole_warps(op, mask)
    n = agent.n if agent.role is not None else threads_of(agent)
    if n is None or mask is None:
        return
    if (mask == ALL or mask == agent.full) and agent.offset % WARPGROUP == n % WARPGROUP == 0:
        return  # every thread of whole warpgroups
    bits = (1 << n) - 1 if mask == ALL else mask & ((1 << n) - 1)
    reached = {agent.offset + t for t in range(n) if bits >> t & 1}
    touched = {t // WARPGROUP for t in reached}
    split = sorted(
        g for g in touched if any(g * WARPGROUP + i not in reached for i in range(WARPGROUP))
    )
    if not split:
        return
    g = split[0]
    where = f"{agent.name} (threads {agent.offset}-{agent.offset + n - 1} of the block)"
    # rule: P10
    agent.report(
        error(
            op,
            f"{op.name} is a warpgroup's op (the block's warps 4g..4g+3 execute it together), "
            f"but of warpgroup {g} (threads {g * WARPGROUP}-{g * WARPGROUP + WARPGROUP - 1}) "
            f"only some threads reach it: {where}",
            "give the roles before this one whole warpgroups (a producer role of 4 warps, as "
            "CUTLASS's producer warpgroup), so that this role's warps start at a multiple of "
            f"4{grown(agent)}, and issue the wgmma from all 128 threads of each of its "
            "warpgroups",
        )
    )
    raise Stop


def grown(agent: Agent) -> str:
    """The block size once the roles before `agent` are padded to whole warpgroups."""
    block = threads_of(agent)
    pad = -agent.offset % WARPGROUP
    if agent.role is None or block is None or not pad:
        return ""
    return f" (the block then {block + pad} threads: gpu.known_block_size = {block + pad})"


def threads_of(agent: Agent) -> int | None:
    block = agent.kernel.block
    return None if block is None else block[0] * block[1] * block[2]


def tcgen05_mma(agent: Agent, op: Operation, mask: int | None) -> None:
    regions = descriptor_regions(agent, op)
    agent.event(op, *(r.index for r in regions))
    s = agent.state
    members = agent.members(mask)
    s.copies.mma_read(op, regions, agent.groups, members, reader(op), tcgen05=True)
    peer = pair_peer(agent, op)
    if peer is not None:
        what = f"{reader(op)} of the CTA pair (from CTA {agent.rank})"
        peer.copies.mma_read(op, regions, pair_reads(agent, peer), members, what, tcgen05=True)
        # and writes D's rows of the peer into the peer's TMEM (P14 there too)
        peer.tmem.order.access(op, op.operands[0], members, write=True, asynchronous=True)
    order = s.tmem.order
    if is_tmem(op.operands[1]):  # A in TMEM: read
        order.access(op, op.operands[1], members, write=False, asynchronous=True)
    if op.name == SPARSE:  # and its metadata (tcgen05.mma.sp)
        order.access(op, op.operands[5], members, write=False, asynchronous=True)
    order.access(op, op.operands[0], members, write=True, asynchronous=True)


def tcgen05_commit(agent: Agent, op: Operation, mask: int | None) -> None:
    """The threads that execute it arrive once each on its barrier when their tcgen05.mma
    reads are done: the arrival is counted now (its phase cannot complete before it), with
    what they know now; the reads end with that phase."""
    s = agent.state
    for state in agent.walk.states:  # (a pair's MMA touches the peer's TMEM too)
        state.tmem.order.fence(agent.members(mask), before=True, commit=True)
    key = commit_barrier(agent, op.operands[0])
    agent.event(op, None if key is None else key[1])
    if key is None:
        if agent.groups.tc_open:
            # rule: P2
            agent.report(
                warning(
                    op,
                    "cannot prove when the tcgen05.mma reads this commit tracks end: it "
                    "arrives on an mbarrier the protocol analysis does not follow, so the "
                    "refills of their slots are not checked against them",
                    "commit on a copy.barrier_init barrier: its group cast to !llvm.ptr<3> "
                    "(builtin.unrealized_conversion_cast %bars : !copy.barrier<N> to "
                    "!llvm.ptr<3>, barrier 0; llvm.getelementptr of i64 by the index for "
                    "another), and wait on it with copy.barrier_wait",
                )
            )
        agent.groups.tc_open = []
        return
    members = agent.members(mask)
    threads = 1 if mask is None else agent.threads_in(mask)
    stamps = s.hb.stamps(members)
    how = "nvvm.tcgen05.commit makes one arrival per thread that executes it"
    ends: dict[int, tuple[int, int]] = {}
    for rank in commit_ranks(agent, op):
        there = agent.walk.states[rank]
        if there is not s and not agent.walk.cluster.target(op, agent.rank, rank, "the commit"):
            raise Stop
        b = there.barriers.table[key]
        phase = b.closed
        there.barriers.arrive(op, key, threads, 0, members, agent.name, how, rank=agent.cta)
        if there is not s:
            agent.walk.cluster.arrival(op, agent.rank, rank, stamps, agent.name)
        ends[rank] = (b.comp, phase + 1)
    # The reads of this CTA's slots end with its own barrier's phase (else the first CTA's),
    # the pair MMA's reads of the peer's with the peer's (else this CTA's).
    own = ends.get(agent.rank, next(iter(ends.values())))
    s.group_sets.tc_commit(agent.groups, (own,))
    for rank, state in enumerate(agent.walk.states):  # its TMEM accesses end there too
        state.tmem.order.ended(members, (ends.get(rank, own),))
    paired = PAIR_READS.get(agent)
    if paired is not None:
        there = agent.walk.states[agent.rank ^ 1]
        there.group_sets.tc_commit(paired, (ends.get(agent.rank ^ 1, own),))


PAIR_READS: weakref.WeakKeyDictionary[Agent, Groups] = weakref.WeakKeyDictionary()
"""Per agent that issues CTA-pair MMAs, the issuer (in the peer's state) of their reads of
the peer's SMEM."""


def pair_peer(agent: Agent, op: Operation) -> State | None:
    """The peer CTA's state, for a `cta_group::2` MMA of a run that models the pair rank by
    rank: the MMA reads its A and B at the same descriptors in both CTAs (PTX ISA), so the
    peer's slots are read too, until the commit's arrival on the peer's barrier."""
    states = agent.walk.states
    if agent.rank ^ 1 >= len(states):  # one CTA modelled: no peer (asked first: cheap)
        return None
    return states[agent.rank ^ 1] if tcgen05_group(op) == 2 else None


def pair_reads(agent: Agent, peer: State) -> Groups:
    found = PAIR_READS.get(agent)
    if found is None:
        found = PAIR_READS[agent] = peer.group_sets.issuer(f"{agent.name}'s pair MMA")
    return found


def commit_ranks(agent: Agent, op: Operation) -> list[int]:
    """The CTAs whose barrier (at the pointer's offset) a tcgen05.commit arrives on: its own,
    or with `multicast_mask` each CTA whose rank is a bit of the mask (PTX ISA,
    `tcgen05.commit`'s `.multicast::cluster`: the mbarrier at the same offset in each
    destination CTA; `ops_cluster.mask_ranks`)."""
    if len(op.operands) < 2:
        return [agent.rank]
    return mask_ranks(
        agent,
        op,
        op.operands[1],
        "this tcgen05.commit multicasts its arrival",
        "the barriers of the CTAs it arrives on, and so their phases, are not known",
        "give multicast_mask as a constant or a value of the CTA's rank in the cluster (bit "
        "r: CTA r; a CTA pair's leader: 3, both CTAs of the pair)",
    )


def commit_barrier(agent: Agent, ptr: SSAValue) -> Key | None:
    """The barrier a tcgen05.commit's pointer names, when it is a `copy.barrier_init` group
    cast to a pointer (barrier 0), or that plus a known index in i64 (`llvm.getelementptr`)."""
    forms = agent.kernel.pointers
    if ptr not in forms:
        forms[ptr] = pointer_form(ptr)
    form = forms[ptr]
    if form is None:
        return None
    group, index = form
    if isinstance(index, SSAValue):
        got = agent.uniform_int(index)
        index = got if isinstance(got, int) else None
    if index is None:
        return None
    key = (group, index)
    return key if key in agent.state.barriers.table else None


def pointer_form(ptr: SSAValue) -> tuple[SSAValue, int | SSAValue] | None:
    """The group a barrier pointer names and its index in it: a constant, or the i64 value
    of its `llvm.getelementptr` (`commit_barrier`); None for another pointer."""
    found = barrier_pointer(ptr)
    if found is None:
        return None
    group, gep = found
    if gep is None:
        return group, 0
    from xdsl.dialects.llvm import GEP_USE_SSA_VAL  # (loaded where LLVM ops are met)

    raw = tuple(gep.properties["rawConstantIndices"].iter_values())  # type: ignore[attr-defined]
    if gep.properties.get("elem_type") != i64 or len(raw) != 1:
        return None
    return group, gep.operands[1] if raw[0] == GEP_USE_SSA_VAL else raw[0]


SPARSE = MMAS[1]
"""The sparse MMA reads its metadata (operand 5) in TMEM as it reads an A in TMEM."""


STEPS = {
    "nvvm.wgmma.mma_async": mma_async,
    "nvvm.wgmma.fence.aligned": fence,
    "nvvm.wgmma.commit.group.sync.aligned": commit,
    "nvvm.wgmma.wait.group.sync.aligned": wait,
    "nvvm.tcgen05.mma": tcgen05_mma,
    "nvvm.tcgen05.mma.sp": tcgen05_mma,
    "nvvm.tcgen05.commit": tcgen05_commit,
}
"""The handlers by op name (`dispatch.OpTable`)."""
