"""The protocol state of one CTA while the analysis walks its kernel: barrier phases, the
async copies in flight, the bulk and cp.async groups, what threads touched since the last
block barrier, and TMEM. Each transition checks the rules it can break (P1..P12) and hands
a finding to `report`.

The model (docs/design.md, "The protocol analysis"):
- A barrier of a group counts arrivals and transaction bytes per phase; a phase *closes*
  when it has `arrivals` arrivals and its bytes expected equal its bytes delivered (it then
  completes once its copies land). Copies deliver to the phase open when they are issued.
- Two classes of threads observe phases: thread 0 (which issues TMA copies, expect_tx and
  bulk groups) and the other threads. A class knows phase j of a barrier once it waited on
  it; a block barrier (`wait_group`, `fence_async_shared`, `barrier_init`, `gpu.barrier`)
  gives every thread what thread 0 knew.
- `barrier_wait` on parity q, by a class that knows k phases, waits for phase k when
  q == k % 2; otherwise it returns at once (the phase of parity q is the one before).
- SMEM is a set of buffers (`copy.alloc_smem` results), each access a region: the buffer
  and its known leading indices (a ring slot); unknown indices may alias any slot, and a
  hazard through them is a warning, not an error."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from copy_dialect.protocol.findings import ProtocolFinding, Related, error, warning

Index = int | None
Key = tuple[SSAValue, int]
"""A barrier: its group (a `copy.barrier_init` result) and its index."""
Report = Callable[[ProtocolFinding], None]


class Deadlock(Exception):
    """The walk cannot go on: the kernel hangs at the op reported."""


@dataclass(frozen=True)
class Region:
    buffer: SSAValue
    index: tuple[Index, ...]

    def overlap(self, other: Region) -> str:
        """ "yes", "maybe" (an unknown index may alias) or "no"."""
        if self.buffer != other.buffer:
            return "no"
        maybe = False
        for a, b in zip(self.index, other.index, strict=False):
            if a is None or b is None:
                maybe = True
            elif a != b:
                return "no"
        return "maybe" if maybe else "yes"

    def show(self) -> str:
        name = f"%{self.buffer.name_hint}" if self.buffer.name_hint else "the SMEM buffer"
        if not self.index:
            return name
        return f"{name}[{', '.join('?' if i is None else str(i) for i in self.index)}]"


@dataclass
class Barrier:
    init: Operation
    count: int
    closed: int = 0
    arrivals: int = 0
    expected: int = 0
    delivered: int = 0
    known: list[int] = field(default_factory=lambda: [0, 0])
    """Phases thread 0 (known[0]) and the other threads (known[1]) observed complete."""
    early_wait: tuple[Operation, int] | None = None
    """The last wait of a parity whose phase had completed already (returned at once)."""
    unknown: bool = False
    """An op on the group had an index or count the analysis could not follow."""
    arrived: list[Operation] = field(default_factory=list)


@dataclass
class Fill:
    """An async write of SMEM: a TMA load (on `key`, `phase`) or a cp.async copy."""

    op: Operation
    region: Region
    key: Key | None
    phase: int
    reported: bool = False
    """A race with it was reported: it is not reported again (one error per mistake)."""


@dataclass
class Access:
    op: Operation
    region: Region
    write: bool


class Classes:
    """Which thread classes (0: thread 0, 1: the others) a set of threads holds."""

    def __init__(self, mask: int | None):
        """`mask`: a bit set of thread ids, -1 for every thread, None for unknown threads."""
        self.members: tuple[int, ...] = (
            (0, 1) if mask is None else tuple(c for c, bits in ((0, 1), (1, ~1)) if mask & bits)
        )


def describe_key(key: Key) -> str:
    group, index = key
    name = f"%{group.name_hint}" if group.name_hint else "the barrier group"
    return f"barrier {index} of {name}"


class State:
    def __init__(self, report: Report):
        self.report = report
        self.barriers: dict[Key, Barrier] = {}
        self.groups: dict[SSAValue, tuple[Operation, int]] = {}
        """Each barrier group: its barrier_init and its size."""
        self.fills: list[Fill] = []
        self.bulk_open: list[tuple[Operation, Region]] = []
        self.pending_cap = 0
        """The largest `pending` of the kernel's wait_groups: read-done groups beyond it
        can no longer make a difference (`snapshot`)."""
        self.bulk_read = 0
        """Committed bulk groups whose reads are done but not their writes: always the
        oldest, so a count (kept apart so that a long kernel's groups cost nothing)."""
        self.bulk_fifo: list[list[tuple[Operation, Region]]] = []
        """Committed bulk groups that may still read SMEM, oldest first."""
        self.cp_open: list[Fill] = []
        self.cp_fifo: list[list[Fill]] = []
        self.accesses: list[Access] = []
        self.unfenced: list[Access] = []
        """Threads' SMEM writes no copy.fence_async_shared has yet made visible to the
        async proxy (TMA, tcgen05.cp)."""
        self.tmem_live: dict[SSAValue, Operation] = {}
        self.tmem_loads: dict[SSAValue, Operation] = {}
        self.tmem_stores: dict[SSAValue, Operation] = {}

    def snapshot(self) -> tuple[object, ...]:
        """The state as far as what follows depends on it, phases counted from each
        barrier's current one (a lap of a ring advances them all: the snapshot repeats)."""

        def region(r: Region) -> tuple[object, ...]:
            return (r.buffer, r.index)

        barriers = tuple(
            (b.arrivals, b.expected, b.delivered, b.known[0] - b.closed, b.known[1] - b.closed,
             b.unknown)
            for b in self.barriers.values()
        )  # fmt: skip
        fills = tuple(
            (f.op, region(f.region), f.key, f.phase - (self.barriers[f.key].closed if f.key else 0))
            for f in self.fills
        )
        return (
            barriers,
            fills,
            tuple((op, region(r)) for op, r in self.bulk_open),
            tuple(tuple((op, region(r)) for op, r in g) for g in self.bulk_fifo),
            min(self.bulk_read, self.pending_cap),
            tuple(f.op for f in self.cp_open),
            tuple(tuple(f.op for f in g) for g in self.cp_fifo),
            tuple((a.op, region(a.region), a.write) for a in self.accesses),
            tuple((a.op, region(a.region)) for a in self.unfenced),
            tuple(self.tmem_live),
            tuple(self.tmem_stores),
        )

    # ---- barriers ----------------------------------------------------------------------

    def init_group(self, op: Operation, group: SSAValue, size: int, count: int) -> None:
        self.groups[group] = (op, size)
        for i in range(size):
            self.barriers[(group, i)] = Barrier(op, count)
        self.block_barrier()

    def barrier(self, key: Key) -> Barrier:
        return self.barriers[key]

    def arrive(self, op: Operation, key: Key, times: int, tx: int) -> None:
        b = self.barriers[key]
        if b.unknown:
            return
        b.expected += tx
        left = b.count - b.arrivals
        # rule: P5
        if times > left:
            self.report(
                error(
                    op,
                    f"{times} arrivals on {describe_key(key)}, whose phase {b.closed} awaits "
                    f"{left} more of its {b.count}",
                    "an arrival beyond the count completes the phase early and counts toward "
                    f"the next one: arrive {left} times (barrier_arrive is made by every "
                    "thread that reaches it: put it under `scf.if` on thread 0), or "
                    f"initialize the barrier with arrivals {b.arrivals + times}",
                    Related(b.init, "the barrier is initialized here"),
                )
            )
            b.unknown = True
            return
        b.arrivals += times
        b.arrived.append(op)
        self._close(op, key, b)

    def deliver(self, op: Operation, key: Key, nbytes: int) -> int:
        """A copy's bytes go to the barrier's open phase; returns that phase."""
        b = self.barriers[key]
        phase = b.closed
        if b.unknown:
            return phase
        b.delivered += nbytes
        self._close(op, key, b)
        return phase

    def _close(self, op: Operation, key: Key, b: Barrier) -> None:
        if b.arrivals < b.count:
            return
        # rule: P5
        if b.delivered > b.expected:
            self.report(
                error(
                    op,
                    f"phase {b.closed} of {describe_key(key)} receives {b.delivered} bytes but "
                    f"expects {b.expected}",
                    "its waiters are released before all the data has landed: expect "
                    f"{b.delivered} bytes (copy.barrier_arrive_expect_tx), or let the copies "
                    "arrive themselves",
                    *(Related(a, "an arrival of the phase") for a in b.arrived),
                )
            )
            b.unknown = True
            return
        if b.delivered == b.expected:
            b.closed += 1
            b.arrivals = b.expected = b.delivered = 0
            b.arrived = []

    def wait(self, op: Operation, key: Key, parity: int, who: Classes) -> None:
        b = self.barriers[key]
        if b.unknown:
            return
        for c in who.members:
            k = b.known[c]
            if k % 2 != parity:
                if b.closed > k:
                    b.early_wait = (op, parity)
                continue
            if b.closed == k:
                self._hang(op, key, b, k)
            # rule: P6
            if b.closed > k + 1:
                self.report(
                    error(
                        op,
                        f"{describe_key(key)} may be two phases ahead of this wait: phases {k} "
                        f"and {k + 1} can both complete before it, and parity {parity} then "
                        f"names phase {k + 2}, which nothing completes",
                        "a barrier must not run more than one phase ahead of its waiters: add a "
                        f"copy.barrier_wait for phase {k} (parity {parity}) between the arrivals "
                        f"of phase {k} and those of phase {k + 1}",
                    )
                )
                raise Deadlock
            b.known[c] = k + 1
        self.fills = [f for f in self.fills if not self._observed(f, (0, 1))]

    def _hang(self, op: Operation, key: Key, b: Barrier, k: int) -> None:
        related = [Related(b.init, f"initialized with arrivals {b.count}")]
        related += [Related(a, f"an arrival on phase {k}") for a in b.arrived]
        # rule: P5
        if b.arrivals == b.count:
            self.report(
                error(
                    op,
                    f"this wait never returns: phase {k} of {describe_key(key)} expects "
                    f"{b.expected} bytes but its copies deliver {b.delivered}",
                    f"expect {b.delivered} bytes, or issue the copies that deliver the other "
                    f"{b.expected - b.delivered} before the wait",
                    *related,
                )
            )
            raise Deadlock
        # rule: P6
        self.report(
            error(
                op,
                f"this wait never returns: phase {k} of {describe_key(key)} has {b.arrivals} "
                f"of its {b.count} arrivals when the wait is reached, and nothing arrives "
                "while it waits",
                f"arrive on {describe_key(key)} ({b.count - b.arrivals} more) before the "
                f"wait, or wait on parity {(k + 1) % 2} (the phase before, complete at once)",
                *related,
            )
        )
        raise Deadlock

    def block_barrier(self) -> None:
        """Every thread reaches a block barrier: what thread 0 knew, everyone knows."""
        for b in self.barriers.values():
            b.known = [max(b.known), max(b.known)]
        self.accesses = []

    # ---- SMEM --------------------------------------------------------------------------

    def _observed(self, fill: Fill, classes: tuple[int, ...]) -> bool:
        if fill.key is None:
            return False
        b = self.barriers[fill.key]
        return b.unknown or all(b.known[c] > fill.phase for c in classes)

    def read(self, op: Operation, region: Region, who: Classes, reader: str) -> None:
        """`reader` (threads, a TMA store, tcgen05.cp) reads `region`."""
        for fill in [*self.fills, *self.cp_open, *(f for g in self.cp_fifo for f in g)]:
            overlap = region.overlap(fill.region)
            if overlap == "no" or fill.reported or self._observed(fill, who.members):
                continue
            self._unfinished(op, region, fill, reader, overlap)
            fill.reported = True
            return

    def _unfinished(self, op: Operation, region: Region, fill: Fill, reader: str, how: str) -> None:
        filled = "it" if fill.region == region else fill.region.show()
        what = f"{reader} reads {region.show()} before the copy that fills {filled} completes"
        related = [Related(fill.op, "the copy that fills it")]
        if fill.key is None:
            fix = (
                "commit the copy (copy.commit_group cp_async) and wait for its group "
                "(copy.wait_group cp_async 0) before the read"
            )
        else:
            b = self.barriers[fill.key]
            parity = fill.phase % 2
            fix = (
                f"wait on {describe_key(fill.key)} for phase {fill.phase} "
                f"(copy.barrier_wait with parity {parity}) before the read"
            )
            if b.early_wait is not None:
                wait_op, q = b.early_wait
                related.append(
                    Related(
                        wait_op,
                        f"this wait on parity {q} returns at once: the phase of parity {q} "
                        f"had completed already; the copy arrives on phase {fill.phase}, "
                        f"parity {parity}",
                    )
                )
                size = self.groups[fill.key[0]][1]
                fix = (
                    f"wait on parity {parity}: flip the parity every lap of the ring of {size} "
                    f"barriers, (i / {size}) mod 2 (arith.divui, arith.remui, arith.cmpi ne)"
                )
        if how == "maybe":
            # rule: P1
            maybe = f"cannot prove that {reader} reads {region.show()} only after the copy that "
            maybe += f"fills {filled} completes"
            self.report(warning(op, maybe, fix, *related))
            return
        # rule: P1
        self.report(error(op, what, fix, *related))

    def refill(self, op: Operation, region: Region, writer: str, by_threads: bool = False) -> None:
        """An async copy, or threads (`by_threads`), `writer`, is about to write `region`.
        (Races between threads are not the copy protocol's: threads after threads are not
        checked.)"""
        self._in_flight_reads(op, region, writer)
        for access in [] if by_threads else self.accesses:
            overlap = region.overlap(access.region)
            if overlap == "no":
                continue
            how = "write" if access.write else "read"
            message = (
                f"{writer} writes {region.show()} while other threads may still access it "
                f"(threads {how} it before, with no block barrier in between)"
            )
            fix = (
                "put a block barrier between the threads' accesses and the copy "
                "(copy.fence_async_shared after thread writes, gpu.barrier after reads)"
            )
            # rule: P3
            self.report(
                (warning if overlap == "maybe" else error)(
                    op, message, fix, Related(access.op, f"the threads {how} it here")
                )
            )
            return
        for fill in [*self.fills, *self.cp_open, *(f for g in self.cp_fifo for f in g)]:
            overlap = region.overlap(fill.region)
            if overlap == "no" or fill.reported or self._observed(fill, (0, 1)):
                continue
            fill.reported = True
            # rule: P3
            self.report(
                (warning if overlap == "maybe" else error)(
                    op,
                    f"{writer} writes {region.show()} while an earlier copy may still be "
                    "writing it",
                    "wait for the earlier copy first (copy.barrier_wait on its phase, or "
                    "copy.wait_group for its group)",
                    Related(fill.op, "the earlier copy"),
                )
            )
            return

    def _in_flight_reads(self, op: Operation, region: Region, writer: str) -> None:
        pending = [*self.bulk_open, *(s for group in self.bulk_fifo for s in group)]
        for store, source in pending:
            overlap = region.overlap(source)
            if overlap == "no":
                continue
            # rule: P2
            self.report(
                (warning if overlap == "maybe" else error)(
                    op,
                    f"{writer} writes {region.show()} while a TMA store from it may still be "
                    "reading it",
                    "commit the store and wait until it has read its source "
                    "(copy.commit_group bulk, then copy.wait_group bulk 0 read_only, or a "
                    "count that covers its group) before the write",
                    Related(store, "the TMA store that reads it"),
                )
            )
            return

    def thread_access(self, op: Operation, region: Region, write: bool, who: Classes) -> None:
        if write:
            self.refill(op, region, "threads' store", by_threads=True)
            self.unfenced.append(Access(op, region, True))
        else:
            self.read(op, region, who, "threads' load")
        if who.members != (0,):
            self.accesses.append(Access(op, region, write))

    def tma_load(self, op: Operation, region: Region, key: Key, expect: int, nbytes: int) -> None:
        self.refill(op, region, "the TMA load")
        if expect:
            self.arrive(op, key, 1, expect)
        phase = self.deliver(op, key, nbytes)
        self.fills.append(Fill(op, region, key, phase))

    def cp_async(self, op: Operation, region: Region) -> None:
        self.refill(op, region, "the cp.async copy")
        self.cp_open.append(Fill(op, region, None, 0))

    def tma_store(self, op: Operation, region: Region) -> None:
        self.read(op, region, Classes(1), "the TMA store")
        self.async_read(op, region, "the TMA store")
        self.bulk_open.append((op, region))

    def async_read(self, op: Operation, region: Region, reader: str) -> None:
        """The async proxy reads `region`: threads' writes to it must be fenced."""
        for access in self.unfenced:
            overlap = region.overlap(access.region)
            if overlap == "no":
                continue
            # rule: P4
            self.report(
                (warning if overlap == "maybe" else error)(
                    op,
                    f"{reader} reads {region.show()}, which threads wrote with no "
                    "copy.fence_async_shared since",
                    "add copy.fence_async_shared after the threads' writes and before the "
                    "copy (it includes the block barrier)",
                    Related(access.op, "the threads write it here"),
                )
            )
            return

    def fence(self) -> None:
        self.unfenced = []
        self.block_barrier()

    # ---- groups --------------------------------------------------------------------------

    def commit(self, bulk: bool) -> None:
        if bulk:
            self.bulk_fifo.append(self.bulk_open)
            self.bulk_open = []
        else:
            self.cp_fifo.append(self.cp_open)
            self.cp_open = []

    def wait_group(self, bulk: bool, pending: int, read_only: bool) -> None:
        if bulk:
            total = self.bulk_read + len(self.bulk_fifo)
            done = max(0, total - pending)
            reads = max(0, done - self.bulk_read)
            del self.bulk_fifo[:reads]
            self.bulk_read = max(self.bulk_read, done)
            if not read_only:
                self.bulk_read -= done
        else:
            self.cp_fifo = self.cp_fifo[max(0, len(self.cp_fifo) - pending) :]
        self.block_barrier()

    # ---- TMEM --------------------------------------------------------------------------

    def tmem_alloc(self, op: Operation, tmem: SSAValue) -> None:
        self.tmem_live[tmem] = op
        self.block_barrier()

    def tmem_dealloc(self, op: Operation, tmem: SSAValue) -> None:
        self._tmem_stores_done(op, tmem, "frees")
        self.tmem_live.pop(tmem, None)
        self.block_barrier()

    def tmem_load(self, op: Operation, tmem: SSAValue) -> None:
        self._tmem_stores_done(op, tmem, "reads")
        for result in op.results:
            self.tmem_loads[result] = op

    def _tmem_stores_done(self, op: Operation, tmem: SSAValue, verb: str) -> None:
        store = self.tmem_stores.get(tmem)
        if store is None:
            return
        # rule: P12
        self.report(
            error(
                op,
                f"this op {verb} TMEM that a tcgen05.st may still be writing",
                "wait for the store first: copy.tmem_wait store",
                Related(store, "the store"),
            )
        )
        del self.tmem_stores[tmem]

    def tmem_store(self, op: Operation, tmem: SSAValue) -> None:
        self.tmem_stores[tmem] = op

    def tmem_wait(self, load: bool) -> None:
        if load:
            self.tmem_loads.clear()
        else:
            self.tmem_stores.clear()

    def use(self, op: Operation) -> None:
        """`op` uses its operands: none may be a tcgen05.ld result not yet waited for."""
        for operand in op.operands:
            load = self.tmem_loads.get(operand)
            if load is None:
                continue
            # rule: P11
            self.report(
                error(
                    op,
                    "this op uses the registers of a tcgen05.ld before they are loaded",
                    "wait for the load first: copy.tmem_wait load",
                    Related(load, "the load"),
                )
            )
            del self.tmem_loads[operand]

    # ---- exit ----------------------------------------------------------------------------

    def exit(self, op: Operation) -> None:
        """Nothing may be in flight when the kernel returns (its SMEM is freed)."""
        unread = [s for s, _ in [*self.bulk_open, *(s for group in self.bulk_fifo for s in group)]]
        if self.bulk_open:
            # rule: P7
            self.report(
                error(
                    op,
                    "the kernel returns with a TMA store that was never committed",
                    "commit it (copy.commit_group bulk) and wait for it (copy.wait_group "
                    "bulk 0) before the return",
                    Related(self.bulk_open[0][0], "the store"),
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
                )
            )
        cp = [f for f in self.cp_open + [f for g in self.cp_fifo for f in g] if not f.reported]
        if cp:
            fix = "copy.commit_group cp_async, then " if self.cp_open else ""
            # rule: P7
            self.report(
                error(
                    op,
                    "the kernel returns while a cp.async copy may still be writing its SMEM",
                    f"{fix}copy.wait_group cp_async 0 before the return",
                    Related(cp[0].op, "the copy"),
                )
            )
        for fill in self.fills:
            if not (fill.reported or self._observed(fill, (0,)) or self._observed(fill, (1,))):
                # rule: P7
                self.report(
                    error(
                        op,
                        "the kernel returns while a TMA load may still be writing its SMEM",
                        f"copy.barrier_wait on {describe_key(fill.key)} for phase "  # type: ignore[arg-type]
                        f"{fill.phase} (parity {fill.phase % 2}) before the return",
                        Related(fill.op, "the load"),
                    )
                )
                break
        for store in self.tmem_stores.values():
            # rule: P12
            self.report(
                error(
                    op,
                    "the kernel returns while a tcgen05.st may still be writing TMEM",
                    "copy.tmem_wait store before the return",
                    Related(store, "the store"),
                )
            )
        for tmem, alloc in self.tmem_live.items():
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
