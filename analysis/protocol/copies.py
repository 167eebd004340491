"""The async copies as they are issued: what each writes or reads of SMEM (checked against
what may still touch it, `smem`, tensor-core reads included), the
barrier phase it completes on (`mbarriers`) or the group it joins (`groups`), and the record
of its write that readers must wait for; and the tensor-core reads through descriptors as
they are issued."""

from __future__ import annotations

from xdsl.ir import Operation

from analysis.protocol.clocks import Clock, End, HappensBefore
from analysis.protocol.groups import Groups, MmaRead
from analysis.protocol.mbarriers import Mbarriers
from analysis.protocol.records import Fill, Key, Region
from analysis.protocol.smem import SharedMemory


class AsyncCopies:
    def __init__(self, hb: HappensBefore, smem: SharedMemory, barriers: Mbarriers):
        self.hb = hb
        self.smem = smem
        self.barriers = barriers

    def tma_load(
        self,
        op: Operation,
        region: Region,
        key: Key,
        arrivals: int,
        expect: int,
        nbytes: int,
        issuer: int,
        who: str,
    ) -> End:
        """The load, which makes `arrivals` arrivals expecting `expect` bytes (none when it
        leaves them to an arrive_expect_tx); returns what completes it (the phase its
        barrier closes)."""
        smem, barriers = self.smem, self.barriers
        smem.refill(op, region, "the TMA load", (issuer,))
        self.hb.stamp(issuer)
        if arrivals:
            barriers.arrive(op, key, arrivals, expect, (issuer,), who)
        phase = barriers.deliver(op, key, nbytes, None if arrivals else issuer)
        b = barriers.table[key]
        # A later phase of the same barrier is known only after this one: the new fill of
        # the region stands for an earlier one on that barrier.
        if self.hb.concurrent:
            smem.fills = [f for f in smem.fills if f.key != key or f.region != region]
        end = ((b.comp, phase + 1),)
        smem.fills.append(Fill(op, region, key, phase, end, issued=self.issued(issuer)))
        return end

    def peer_write(
        self,
        op: Operation,
        region: Region,
        key: Key,
        nbytes: int,
        issuers: tuple[int, ...],
        writer: str,
        remote: bool = True,
    ) -> End | None:
        """A DSMEM write (`copy.peer_store`, `copy.peer_copy`) of the classes `issuers`, as
        this CTA receives it: every CTA of the cluster runs the same program and sends to a
        permutation of the ranks, so at this point a peer writes `region` of this CTA and
        completes `nbytes` on barrier `key` (docs/design.md, "Distributed shared memory").
        The writes of one phase are parts of one transfer: they do not race each other.
        Returns the phase its bytes complete (None where the barrier's phases are unknown):
        a peer copy reads its source until then."""
        smem = self.smem
        b = self.barriers.table[key]
        phase = b.closed
        end = ((b.comp, phase + 1),)
        done = None if b.unknown else end
        ours = [f for f in smem.fills if f.key == key and f.phase == phase and f.op is op]
        first = Fill(op, region, key, phase, end)
        if not (ours or b.unknown or phase) and smem.read_before_first_fill(first, issuers):
            return done
        if not ours:
            smem.refill(op, region, writer, issuers, remote=remote)
        self.hb.stamps(issuers)
        if not b.unknown:
            b.delivered += nbytes
            b.senders.append(op)
            for c in issuers:
                b.learn(self.hb.clocks[c])
            self.barriers.close(op, key, b)
        if not any(f.region == region for f in ours):
            smem.fills.append(Fill(op, region, key, phase, end, writer=writer if remote else None))
        return done

    def cp_async(
        self, op: Operation, region: Region, groups: Groups, issuers: tuple[int, ...]
    ) -> None:
        self.smem.refill(op, region, "the cp.async copy", issuers)
        self.hb.stamps(issuers)
        groups.cp_open.append(Fill(op, region, None, 0, None))

    def tracked_cp_async(
        self,
        op: Operation,
        region: Region,
        key: Key,
        arrivals: int,
        issuers: tuple[int, ...],
        who: str,
        how: str | None,
    ) -> None:
        """An mbarrier-tracked cp.async copy (`cp.async.mbarrier.arrive.noinc`): the threads
        of the classes `issuers` write `region`, and make `arrivals` arrivals on `key` (one
        each) when their chunks have landed, so the phase its arrivals complete completes
        the copy: a reader must observe that phase, as for a TMA load. (The arrivals are
        counted when the copy is issued: the phase cannot complete before them.)"""
        smem, barriers = self.smem, self.barriers
        smem.refill(op, region, "the cp.async copy", issuers)
        barriers.tracked.add(op)
        b = barriers.table[key]
        phase = b.closed
        barriers.arrive(op, key, arrivals, 0, issuers, who, how)
        if self.hb.concurrent:
            smem.fills = [f for f in smem.fills if f.key != key or f.region != region]
        fill = Fill(op, region, key, phase, ((b.comp, phase + 1),), issued=self.issued(issuers[0]))
        smem.fills.append(fill)

    def issued(self, issuer: int) -> Clock | None:
        """With roles, the issuer's clock as it issues a copy (`Fill.issued`)."""
        return self.hb.clocks[issuer].copy() if self.hb.concurrent else None

    def tma_store(self, op: Operation, region: Region, groups: Groups, issuer: int) -> None:
        self.smem.read(op, region, (issuer,), "the TMA store")
        self.smem.async_read(op, region, "the TMA store", (issuer,))
        self.hb.stamp(issuer)
        groups.bulk_open.append((op, region))

    def grouped_read(
        self, op: Operation, region: Region, groups: Groups, issuers: tuple[int, ...], what: str
    ) -> None:
        """An op's asynchronous read of `region` that its issuer's bulk group tracks (declared
        `async_read ... until wait_group`): checked and kept as a TMA store's."""
        self.smem.read(op, region, issuers, what)
        self.smem.async_read(op, region, what, issuers)
        self.hb.stamps(issuers)
        groups.bulk_open.append((op, region))

    def mma_read(
        self,
        op: Operation,
        regions: list[Region],
        groups: Groups,
        issuers: tuple[int, ...],
        what: str,
        tcgen05: bool = False,
    ) -> None:
        """A tensor-core op's asynchronous reads of `regions` through descriptors (a wgmma's A
        and B): each read only once its fill is complete (P1) and threads' writes fenced
        (P4), then in flight in the issuer's open wgmma group until a wgmma wait retires
        it (`groups.GroupSets.mma_wait`); a tcgen05.mma's (`tcgen05`) until the barrier
        phase of the tcgen05.commit that tracks it (`groups.GroupSets.tc_commit`)."""
        for region in regions:
            self.smem.read(op, region, issuers, what)
            self.smem.async_read(op, region, what, issuers)
        issued = self.hb.stamps(issuers)
        reads = [MmaRead(op, region, issued) for region in regions]
        if tcgen05:
            groups.tc_open += reads
        else:
            groups.mma.open += reads
