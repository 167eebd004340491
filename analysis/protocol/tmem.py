"""Tensor memory (TMEM, tcgen05): the allocations not yet freed, the stores (tcgen05.st) not
yet waited (P12), the registers of loads (tcgen05.ld) not yet waited, which no op may
use (P11), and the order of the threads' tcgen05 accesses (`order`, P14: `tmem_order`).
Stores are kept by allocation and the columns of the view they name (`tmem_span`): a load
through a `copy.tmem_slice` meets a store to its parent or to an overlapping slice, not one to
a disjoint slice."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from analysis.protocol.clocks import HappensBefore
from analysis.protocol.findings import Related, Report, error
from analysis.protocol.tmem_order import TmemOrder, overlap, tmem_span


class Tmem:
    def __init__(self, report: Report, hb: HappensBefore):
        self.report = report
        self.order = TmemOrder(hb, report)
        self.live: dict[SSAValue, Operation] = {}
        """Each allocation not yet freed, and its tcgen05.alloc."""
        self.loads: dict[SSAValue, Operation] = {}
        """Each register of a tcgen05.ld not yet waited, and its load."""
        self.stores: dict[tuple[SSAValue, int, int], Operation] = {}
        """Each allocation and columns (first, end) a tcgen05.st may still write, and its
        store."""

    def alloc(self, op: Operation, tmem: SSAValue) -> None:
        self.live[tmem] = op

    def dealloc(self, op: Operation, tmem: SSAValue) -> None:
        self._stores_done(op, tmem, "frees")
        self.live.pop(tmem, None)
        self.order.free(tmem)

    def load(self, op: Operation, tmem: SSAValue) -> None:
        self._stores_done(op, tmem, "reads")
        for result in op.results:
            self.loads[result] = op

    def _stores_done(self, op: Operation, tmem: SSAValue, verb: str) -> None:
        base, columns = tmem_span(tmem)
        pending = [
            key for key in self.stores if key[0] is base and overlap(range(key[1], key[2]), columns)
        ]
        if not pending:
            return
        # rule: P12
        self.report(
            error(
                op,
                f"this op {verb} TMEM that a tcgen05.st may still be writing",
                "wait for the store first: copy.tmem_wait store",
                Related(self.stores[pending[0]], "the store"),
            )
        )
        for key in pending:
            del self.stores[key]

    def store(self, op: Operation, tmem: SSAValue) -> None:
        base, columns = tmem_span(tmem)
        self.stores[base, columns.start, columns.stop] = op

    def wait(self, load: bool) -> None:
        if load:
            self.loads.clear()
        else:
            self.stores.clear()

    def use(self, op: Operation) -> None:
        """`op` uses its operands: none may be a tcgen05.ld result not yet waited for."""
        for operand in op.operands:
            load = self.loads.get(operand)
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
            del self.loads[operand]

    def snapshot(self) -> tuple[tuple[SSAValue, ...], tuple[tuple[SSAValue, int, int], ...]]:
        """The allocations not yet freed, the stores not yet waited."""
        return tuple(self.live), tuple(self.stores)
