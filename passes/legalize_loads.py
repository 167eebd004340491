"""copy-legalize's TMA loads on a target without TMA (passes/legalize.py): each becomes an
mbarrier-tracked cp.async copy on the same barrier (`rewrite_load`; an im2col load, the
cp.async gather of its pixels: `im2col_gather`; through a tensor map rewritten in the
kernel, from a view of the array the map points at: `legalize_maps`), and each barrier
group that tracks them counts one arrival per issuing thread (`rewrite_group`: the
arrivals are the dialect's, `copy.arrivals_of`), checked first to count only the loads'
arrivals (`tracking_groups`, rule LG4).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import SSAValue
from xdsl.rewriter import Rewriter

from copy_dialect import ops as copy
from copy_dialect import portability
from facts.target import Target
from passes.legalize_maps import MapValue, map_view
from passes.legalize_roles import Issuers

Load = copy.AsyncCopyOp | copy.Im2colLoadOp
"""A load the pass rewrites into an mbarrier-tracked cp.async copy: a TMA (or bulk) tile
load, or an im2col load (its cp.async gather)."""

TRACKING_USERS = (copy.BarrierWaitOp, copy.BarrierTestOp, copy.BarrierExpectTxOp)
"""What may use a barrier group besides the TMA loads it tracks (else LG4): the waits and
tests are kept, expect_tx (bytes only) is removed."""


def tracking_groups(loads: list[Load], issuers: Issuers, target: Target) -> dict[SSAValue, int]:
    """The barrier groups of the TMA loads, each with the threads that issue its loads'
    cp.async form, checked to count only the loads' arrivals (LG4)."""
    groups: dict[SSAValue, int] = {}
    for load in loads:
        bar = load.geometry().barrier
        assert bar is not None  # rule A3
        if not isinstance(bar.owner, copy.BarrierInitOp):
            portability.check_no_form(load, "a TMA load on a barrier group passed in", target)
        if copy.arrivals_of(load) is None:
            portability.check_barrier_users(
                bar, load, target,
                "the load leaves its arrival to an explicit arrive_expect_tx (arrive = "
                "false)",
            )  # fmt: skip
        _, threads = issuers(load)
        if groups.setdefault(bar, threads) != threads:
            portability.check_barrier_users(
                bar, load, target,
                f"the group's loads are issued by groups of {groups[bar]} and {threads} "
                "threads",
            )  # fmt: skip
    for group in groups:
        for use in group.uses:
            user = use.operation
            if user not in loads and not isinstance(user, TRACKING_USERS):
                portability.check_barrier_users(group, user, target)
    return groups


def rewrite_load(load: Load, view: MapValue | None) -> None:
    """The mbarrier-tracked cp.async copy of `load`'s box, on its barrier (an im2col
    load: the cp.async gather of its pixels, `im2col_gather`); through a tensor map
    rewritten in the kernel, from a view of the array the map points at (`map_view`)."""
    if isinstance(load, copy.Im2colLoadOp):
        Rewriter.replace_op(load, im2col_gather(load), [])
        return
    g = load.geometry()
    oob = "promise_in_bounds" if g.oob == copy.OOBMode.PROMISE_IN_BOUNDS else "zeros"
    gmem = g.gmem
    if view is not None:  # through a map rewritten in the kernel: a view of its array
        made = map_view(view, g.element_type)
        block = load.parent_block()
        assert block is not None
        block.insert_ops_before(made, load)
        gmem = made[-1].results[0]
    new = copy.AsyncCopyOp(
        gmem,
        g.smem,
        src_indices=g.gmem_indices,
        dst_indices=g.smem_indices,
        barrier=g.barrier,
        barrier_index=g.barrier_index,
        implementation="cp_async",
        oob=oob,
    )
    Rewriter.replace_op(load, new, [])


def rewrite_group(group: SSAValue, threads: int) -> None:
    """Each arrival of the group was a TMA load's, by its issuer (LG4): its cp.async form,
    issued by `threads` threads, makes one per thread instead. Its expect_tx ops (bytes
    that no cp.async delivers) go."""
    init = group.owner
    assert isinstance(init, copy.BarrierInitOp)
    was, now = copy.ISSUER_ARRIVAL.made(threads), copy.PER_THREAD_ARRIVAL.made(threads)
    init.arrivals = IntegerAttr(init.arrivals.value.data // was * now, i32)
    for use in list(group.uses):
        if isinstance(use.operation, copy.BarrierExpectTxOp):
            Rewriter.erase_op(use.operation)


def im2col_gather(load: copy.Im2colLoadOp) -> copy.Im2colLoadOp:
    """`load` gathered by cp.async (`impl cp_async`): the same pixels, offsets, corners and
    strides, on the same barrier, each issuing thread arriving once; the L2 policy and
    promotion (a tensor map's) go."""
    g = load.geometry()
    return copy.Im2colLoadOp(
        g.gmem,
        g.smem,
        coordinates=g.gmem_indices,
        offsets=g.offsets,
        barrier=g.barrier,  # type: ignore[arg-type]
        lower=g.lower,
        upper=g.upper,
        dst_indices=g.smem_indices,
        barrier_index=g.barrier_index,
        strides=None if load.strides is None else g.traversal_strides,
        implementation="cp_async",
    )
