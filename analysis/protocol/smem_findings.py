"""The findings of the SMEM races `smem.SharedMemory` finds (P1-P3): their messages and the
fix notes that fit the copy, the release or the sender involved."""

from __future__ import annotations

from xdsl.ir import Operation

from analysis.protocol.findings import ProtocolFinding, Related, error, warning
from analysis.protocol.mbarriers import Mbarriers
from analysis.protocol.records import Fill, Region, Release, describe_key
from copy_dialect.effects import op_name


def released_early(
    release: Release, region: Region, access: Operation, write: bool, refill: Operation
) -> ProtocolFinding:
    """The threads that make `access` released `region` (`release`) before it, and
    `refill`, a copy ordered after the release, may write it while they access it."""
    how = "write" if write else "read"
    # rule: P3
    return error(
        release.op,
        f"this arrival on {describe_key(release.key)} comes before the threads that "
        f"make it {how} {region.show()}: a copy ordered after the arrival may refill "
        f"{region.show()} while they {how} it",
        f"move this {release.op.name} after the threads' last {how} of "
        f"{region.show()} ({op_name(access)}): release a slot only once its threads "
        "are done with it",
        Related(access, f"the threads {how} {region.show()} here, after the release"),
        Related(refill, "the copy ordered after the release, which may refill it"),
    )


def overwritten(
    op: Operation,
    region: Region,
    writer: str,
    fill: Fill,
    overlap: str,
    concurrent: bool,
    remote: bool = False,
) -> ProtocolFinding:
    """`writer` (`op`) writes `region` while `fill`, an earlier copy, may still be writing
    it (`overlap`: "yes" or "maybe"); `concurrent`: the kernel has roles; `remote`: the
    writer is another CTA's."""
    fix = (
        "wait for the earlier copy first (copy.barrier_wait on its phase, or "
        "copy.wait_group for its group)"
        + (
            "; when another role reads the slot, wait on the barrier it arrives on "
            "once it is done with the slot (copy.barrier_wait on a consumer-release "
            "barrier)"
            if concurrent
            else ""
        )
    )
    earlier = f"the earlier copy ({fill.writer})" if fill.writer else "the earlier copy"
    # rule: P3
    return (warning if overlap == "maybe" else error)(
        op,
        f"{writer} writes {region.show()} while an earlier copy may still be writing it",
        remote_release(writer, region) if remote else fix,
        Related(fill.op, earlier),
    )


def unfinished(
    barriers: Mbarriers, op: Operation, region: Region, fill: Fill, reader: str, how: str
) -> ProtocolFinding:
    """The P1 finding of `reader` reading `region` before `fill` completes (`how`: the
    overlap, "maybe" for a warning), with the fix that fits the copy."""
    filled = "it" if fill.region == region else fill.region.show()
    what = f"{reader} reads {region.show()} before the copy that fills {filled} completes"
    related = [Related(fill.op, "the copy that fills it")]
    if fill.key is None:
        fix = (
            "commit the copy (copy.commit_group cp_async) and wait for its group "
            "(copy.wait_group cp_async 0) before the read"
        )
        if fill.end is not None:
            fix = (
                "the role that issued the copy waited for it, but nothing orders this read "
                "after that wait: arrive on a barrier after the wait_group and wait on it "
                "before the read"
            )
    else:
        b = barriers.table[fill.key]
        parity = fill.phase % 2
        fix = (
            f"wait on {describe_key(fill.key)} for phase {fill.phase} "
            f"(copy.barrier_wait with parity {parity}) before the read"
        )
        if fill.end is not None and fill.end[0][0] != b.comp:
            # A leader-tracked load of a CTA pair: it completes on the leader's barrier.
            fix = (
                f"the copy completes on the pair leader's {describe_key(fill.key)}, which "
                "no wait in this CTA observes: let the leader tell this CTA after its "
                "wait (a copy.peer_arrive on a barrier this CTA waits on before the "
                "read, or copy.cluster_sync in both CTAs after the leader's wait)"
            )
        elif b.early_wait is not None:
            wait_op, q = b.early_wait
            related.append(
                Related(
                    wait_op,
                    f"this wait on parity {q} returns at once: the phase of parity {q} "
                    f"had completed already; the copy arrives on phase {fill.phase}, "
                    f"parity {parity}",
                )
            )
            size = barriers.groups[fill.key[0]][1]
            fix = (
                f"wait on parity {parity}: flip the parity every lap of the ring of {size} "
                f"barriers, (i / {size}) mod 2 (arith.divui, arith.remui, arith.cmpi ne)"
            )
    if how == "maybe":
        maybe = f"cannot prove that {reader} reads {region.show()} only after the copy that "
        maybe += f"fills {filled} completes"
        # rule: P1
        return warning(op, maybe, fix, *related)
    # rule: P1
    return error(op, what, fix, *related)


def remote_release(writer: str, region: Region, relaxed: bool = False) -> str:
    """The fix for another CTA's copy (`writer`) into `region` of this CTA before this CTA
    released it: the release must reach the sender (`relaxed`: the kernel releases with
    relaxed peer arrivals, which order no thread's access)."""
    if relaxed:
        return (
            f"the copy.peer_arrive that releases {region.show()} to the sender is relaxed: "
            "it orders what had completed before it (the copies its threads waited for, "
            "tensor-core reads a wgmma wait retired), not the threads' own reads: drop "
            "relaxed from it, or read the slot with the tensor core"
        )
    return (
        f"{writer} is held back only by what its sending CTA waits on: the sender must "
        f"wait (copy.barrier_wait before the copy) on a barrier this CTA arrives on after "
        f"its last use of {region.show()}; where this CTA releases it only locally, arrive "
        "in the sender too (copy.peer_arrive ... peer <its rank>, beside the local "
        "copy.barrier_arrive) and count one release per CTA in that barrier's arrivals (a "
        "multicast ring's empty barrier: the consumers of every receiving CTA)"
    )
