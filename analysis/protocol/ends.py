"""What may not be in flight where a role or the kernel ends (P7, P8, P12): a role's groups
(its stores, cp.async copies and tensor-core reads, `mma.at_end`) at the join of the roles,
and at the kernel's return its issuer's groups, the TMA loads and
tracked cp.async copies not yet waited (`smem`), the TMEM stores not yet waited and the TMEM
not freed (`tmem`)."""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.ir import Operation, SSAValue

from analysis.protocol import mma
from analysis.protocol.findings import Related, Report, error
from analysis.protocol.groups import Groups
from analysis.protocol.records import Fill, PeerRead, describe_key
from analysis.protocol.smem import SharedMemory
from analysis.protocol.tmem import Tmem
from copy_dialect import ops as copy


class Ends:
    def __init__(self, report: Report, smem: SharedMemory, tracked: set[Operation], tmem: Tmem):
        """`tracked`: the cp.async copies that arrive on a barrier (`Mbarriers.tracked`)."""
        self.report = report
        self.smem = smem
        self.tracked = tracked
        self.tmem = tmem

    def role_end(self, op: Operation, groups: Groups) -> None:
        """A role ends at the join: the block's wait_groups after it are issued by thread 0,
        not by the role's elected thread, so the role must leave no group in flight (P7)."""
        who = groups.who
        found = mma.at_end(groups, op, f"{who} ends", self.smem.hb)
        if found is not None:
            self.report(found)
        if groups.bulk_open:
            # rule: P7
            self.report(
                error(
                    op,
                    f"{who} ends with a TMA store it never committed: after the join, the "
                    "block's bulk groups are thread 0's, which do not hold it",
                    f"commit it and wait for it in {who} (copy.commit_group bulk, then "
                    "copy.wait_group bulk 0 read_only) before the role's end",
                    Related(groups.bulk_open[0][0], "the store"),
                )
            )
        unread = [s for group in groups.bulk_fifo for s, _ in group]
        if unread:
            # rule: P7
            self.report(
                error(
                    op,
                    f"{who} ends while a TMA store it committed may still read its SMEM: "
                    "after the join, the block's wait_group is issued by thread 0 and does "
                    f"not wait for {who}'s groups",
                    f"wait for the store's group in {who} (copy.wait_group bulk 0 read_only) "
                    "before the role's end",
                    Related(unread[0], "the store"),
                    *left_in_flight(groups, unread[0]),
                )
            )
        cp = [f for f in groups.cp_open + [f for g in groups.cp_fifo for f in g] if not f.reported]
        if cp:
            fix = "copy.commit_group cp_async, then " if groups.cp_open else ""
            # rule: P7
            self.report(
                error(
                    op,
                    f"{who} ends while a cp.async copy of its threads may still be writing "
                    "its SMEM: after the join, no wait_group waits for it",
                    f"{fix}copy.wait_group cp_async 0 in {who} before the role's end",
                    Related(cp[0].op, "the copy"),
                )
            )

    def exit(self, op: Operation, groups: Groups, classes: tuple[int, ...]) -> None:
        """Nothing may be in flight when the kernel returns (its SMEM is freed). A fragment's
        return (`copy.fragment`: a function that is not a kernel, convert-nvgpu-to-copy's
        `fragments=true`) is not a kernel's end: what is in flight goes on in its caller."""
        if "copy.fragment" in op.parent_op().attributes:  # type: ignore[union-attr]
            return
        found = mma.at_end(groups, op, "the kernel returns", self.smem.hb, classes)
        if found is not None:
            self.report(found)
        unread = [s for s, _ in (*groups.bulk_open, *(s for g in groups.bulk_fifo for s in g))]
        if groups.bulk_open:
            # rule: P7
            self.report(
                error(
                    op,
                    "the kernel returns with a TMA store that was never committed",
                    "commit it (copy.commit_group bulk) and wait for it (copy.wait_group "
                    "bulk 0) before the return",
                    Related(groups.bulk_open[0][0], "the store"),
                )
            )
        elif unread:
            # rule: P7
            self.report(
                error(
                    op,
                    "the kernel returns while a committed TMA store may still read its SMEM",
                    "wait for the store's group (copy.wait_group bulk 0) before the return",
                    Related(unread[0], "the store"),
                    *left_in_flight(groups, unread[0]),
                )
            )
        cp = [f for f in groups.cp_open + [f for g in groups.cp_fifo for f in g] if not f.reported]
        if cp:
            fix = "copy.commit_group cp_async, then " if groups.cp_open else ""
            # rule: P7
            self.report(
                error(
                    op,
                    "the kernel returns while a cp.async copy may still be writing its SMEM",
                    f"{fix}copy.wait_group cp_async 0 before the return",
                    Related(cp[0].op, "the copy"),
                )
            )
        smem = self.smem
        for fill in smem.fills:
            if fill.reported or fill.key is None:
                continue
            if not any(smem.fill_known(fill, (c,)) for c in classes):
                what = "cp.async copy" if fill.op in self.tracked else "TMA load"
                if self.issued_past_the_end(op, fill, what):
                    break
                writer = fill.writer or f"a {what}"  # (another CTA's copy, by its name)
                # rule: P7
                self.report(
                    error(
                        op,
                        f"the kernel returns while {writer} may still be writing its SMEM",
                        f"copy.barrier_wait on {describe_key(fill.key)} for phase "
                        f"{fill.phase} (parity {fill.phase % 2}) before the return",
                        Related(fill.op, f"the {what.split()[-1]}"),
                    )
                )
                break
        for read in smem.reads_done:
            if isinstance(read, PeerRead) and not any(
                smem.hb.knows_all((c,), read.end) for c in classes
            ):
                # rule: P7
                self.report(
                    error(
                        op,
                        f"the kernel returns while its peer copy may still read "
                        f"{read.region.show()}: the CTA's SMEM is freed under the copy",
                        "let the receiver arrive on a barrier of this CTA after its "
                        "copy.barrier_wait (copy.peer_arrive), and copy.barrier_wait on that "
                        "barrier before the return, or end both CTAs with copy.cluster_sync",
                        Related(read.op, "the peer copy"),
                    )
                )
                break
        for store in self.tmem.stores.values():
            # rule: P12
            self.report(
                error(
                    op,
                    "the kernel returns while a tcgen05.st may still be writing TMEM",
                    "copy.tmem_wait store before the return",
                    Related(store, "the store"),
                )
            )
        for tmem, alloc in self.tmem.live.items():
            # rule: P8
            self.report(
                error(
                    op,
                    "the kernel returns without freeing its TMEM",
                    f"copy.tmem_dealloc {'%' + tmem.name_hint if tmem.name_hint else 'it'} "
                    "before the return (TMEM stays allocated to the SM otherwise)",
                    Related(alloc, "the allocation"),
                )
            )

    def issued_past_the_end(self, ret: Operation, fill: Fill, what: str) -> bool:
        """A copy still landing at the return that a loop issued for a later iteration (the
        loop waits on its barrier group): issued in the last iteration, which no iteration
        follows to wait for it (P7, reported at the copy, with its condition when an
        `arith.cmpi` against the loop's bound decides it)."""
        assert fill.key is not None
        loop = waiting_loop(fill.op, fill.key[0])
        if loop is None:
            return False
        region = fill.region.show()
        related = [Related(ret, f"the kernel returns while it may still be writing {region}")]
        fix = (
            "issue it only when an iteration that waits for it follows (a condition false in "
            f"the loop's last iteration), or wait for it after the loop (copy.barrier_wait on "
            f"{describe_key(fill.key)} for phase {fill.phase}, parity {fill.phase % 2})"
        )
        found = bound_test(fill.op, loop)
        if found is not None:
            cmp, name, strict = found
            related.insert(0, Related(cmp, "this condition holds in the loop's last iteration"))
            fix = (
                f"issue it only for an iteration that runs: compare with arith.cmpi {strict}, "
                f"not {name}, so that the condition is false in the last iteration"
            )
        # rule: P7
        self.report(
            error(
                fill.op,
                f"this {what}, issued in the loop's last iteration, is never waited for: the "
                f"loop waits on {describe_key(fill.key)} (copy.barrier_wait) in the "
                "iterations after a load, and none follows the last, so the kernel returns "
                f"while it may still be writing {region}",
                fix,
                *related,
            )
        )
        return True


def waiting_loop(copy_op: Operation, group: SSAValue) -> scf.ForOp | None:
    """The innermost scf.for around `copy_op` whose body waits on barrier group `group`."""
    loop = copy_op.parent_op()
    while loop is not None:
        if isinstance(loop, scf.ForOp) and any(
            isinstance(w, copy.BarrierWaitOp) and w.barrier == group for w in loop.body.walk()
        ):
            return loop
        loop = loop.parent_op()
    return None


STRICT = {"sle": "slt", "ule": "ult"}
STRICT_SWAPPED = {"sge": "sgt", "uge": "ugt"}


def bound_test(copy_op: Operation, loop: scf.ForOp) -> tuple[arith.CmpiOp, str, str] | None:
    """The `arith.cmpi` of an scf.if around `copy_op` (inside `loop`) that compares with the
    loop's upper bound and also holds at it (`x <= ub`, `ub >= x`), its predicate and the
    strict one."""
    parent = copy_op.parent_op()
    while parent is not None and parent is not loop:
        if isinstance(parent, scf.IfOp) and isinstance(parent.cond.owner, arith.CmpiOp):
            cmp = parent.cond.owner
            name = PREDICATES[cmp.predicate.value.data]
            if cmp.rhs == loop.ub and name in STRICT:
                return cmp, name, STRICT[name]
            if cmp.lhs == loop.ub and name in STRICT_SWAPPED:
                return cmp, name, STRICT_SWAPPED[name]
        parent = parent.parent_op()
    return None


PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
"""arith.cmpi's predicates, by their number."""


def left_in_flight(groups: Groups, store: Operation) -> list[Related]:
    """The note at the wait_group whose count left `store`'s group in flight, if any (the
    count is then the mistake: `Groups.left_by`)."""
    left = groups.left_by.get(store)
    return [Related(left, "this wait_group leaves its group in flight")] if left else []
