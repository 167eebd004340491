"""The tensor maps in global memory (`copy.tensormap_global`) a kernel rewrites (rules
TU10-TU12): the copies through each map not yet seen complete, and its last rewrite not yet
made visible to the TMA unit (release, then acquire).

The acquire (`fence.proxy.tensormap::generic.acquire`) is a fence of the thread that runs
it: it orders that thread's later copies through the map, no one else's. So a rewrite is
acquired per thread class (the elected thread of the block or of a role, which issues both
the acquire and the copies), and a copy whose issuer has not acquired the map since its
last rewrite breaks TU11 even when another thread has."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.ir import Operation, SSAValue

from analysis.protocol.clocks import Clock, End, HappensBefore, known_to, knows
from analysis.protocol.findings import Related, Report, error
from analysis.protocol.groups import Groups
from analysis.protocol.mbarriers import Mbarriers
from analysis.protocol.records import Key, describe_key


@dataclass
class MapState:
    """A tensor map in global memory (`copy.tensormap_global`): the copies through it the
    analysis has not seen complete, and its last rewrite not yet made visible to the TMA
    unit (rules TU10-TU12)."""

    loads: dict[tuple[Operation, Key], End] = field(default_factory=dict)
    """Each load through the map (by op and barrier): what completes its latest issue (a
    later phase of one barrier completes after the earlier ones)."""
    stores: dict[Operation, Groups] = field(default_factory=dict)
    """Each store through the map, and the groups of its issuer (in flight while a group
    holds it)."""
    replaced: Operation | None = None
    """The last `tensormap_replace`, until the map is rewritten again."""
    released: bool = False
    acquired: dict[int, tuple[Operation, str]] = field(default_factory=dict)
    """The thread classes that acquired the map since its last rewrite: the acquire each
    ran and who that class is (the fence is per thread)."""


def describe_map(tensor_map: SSAValue) -> str:
    return f"%{tensor_map.name_hint}" if tensor_map.name_hint else "of the copy"


class TensorMaps:
    def __init__(self, hb: HappensBefore, report: Report, barriers: Mbarriers):
        self.hb = hb
        self.report = report
        self.barriers = barriers
        self.maps: dict[SSAValue, MapState] = {}

    def of(self, tensor_map: SSAValue) -> MapState:
        return self.maps.setdefault(tensor_map, MapState())

    def copy(
        self,
        op: Operation,
        tensor_map: SSAValue,
        key: Key | None,
        end: End | None,
        groups: Groups,
        issuer: int,
        who: str,
    ) -> None:
        """A copy through `tensor_map` (a load on barrier `key`, completed at `end`, or a
        store of `groups`) that thread class `issuer` (`who`) issues: that class must have
        acquired the map since its last rewrite."""
        m = self.of(tensor_map)
        if m.replaced is not None and issuer not in m.acquired:
            self.unacquired(op, tensor_map, m, who)
            m.acquired[issuer] = (op, who)
        if key is not None and end is not None:
            m.loads.pop((op, key), None)
            m.loads[(op, key)] = end
        elif key is None:
            m.stores[op] = groups

    def unacquired(self, op: Operation, tensor_map: SSAValue, m: MapState, who: str) -> None:
        """TU11 at copy `op`, which `who` issues through `tensor_map`, rewritten at
        `m.replaced` and not acquired by `who` since."""
        assert m.replaced is not None
        name = describe_map(tensor_map)
        if m.acquired:
            other, by = next(iter(m.acquired.values()))
            # rule: TU11
            self.report(
                error(
                    op,
                    f"Expected the thread that issues this copy ({who}) to acquire the map "
                    f"{name} after its rewrite, got an acquire by {by} only: the acquire "
                    "fence orders the copies of the thread that runs it, and the TMA unit may "
                    "read the old map for this one",
                    f"add copy.tensormap_fence_acquire {name} just before the copy, in the "
                    f"same block or role, so that {who} runs it",
                    Related(other, f"the map is acquired here, by {by}"),
                    Related(m.replaced, "the map is rewritten here"),
                )
            )
            return
        how = (
            "after tensormap_fence_release but with no tensormap_fence_acquire since"
            if m.released
            else "with neither tensormap_fence_release nor tensormap_fence_acquire since"
        )
        # rule: TU11
        self.report(
            error(
                op,
                f"Expected the map {name} to be acquired after it was "
                f"rewritten, got a copy through it {how}: the TMA unit may read the old map",
                "add copy.tensormap_fence_release after the rewrites and "
                f"copy.tensormap_fence_acquire {name} before the copy",
                Related(m.replaced, "the map is rewritten here"),
            )
        )

    def replace(self, op: Operation, tensor_map: SSAValue, issuer: int) -> None:
        """`issuer` rewrites the map: no copy through it may still be in flight (TU10)."""
        m = self.of(tensor_map)
        clock = self.hb.clocks[issuer]
        for (copy_op, key), end in m.loads.items():
            if self.barriers.table[key].unknown or knows(clock, end):
                continue
            # rule: TU10
            self.report(
                error(
                    op,
                    f"Expected the copies through the map {describe_map(tensor_map)} to be "
                    "complete before it is rewritten, got a load through it that may still "
                    f"be in flight (its {describe_key(key)} phase not observed)",
                    f"wait on {describe_key(key)} (copy.barrier_wait) before the "
                    "copy.tensormap_replace, or on a barrier its consumers arrive on after "
                    "they waited for it",
                    Related(copy_op, "the load through the map"),
                )
            )
            break
        for store, groups in m.stores.items():
            if not any(o is store for o, _ in groups.bulk_open) and not any(
                o is store for grp in groups.bulk_fifo for o, _ in grp
            ):
                continue
            # rule: TU10
            self.report(
                error(
                    op,
                    f"Expected the copies through the map {describe_map(tensor_map)} to be "
                    "complete before it is rewritten, got a store through it that may still "
                    "be in flight (its bulk group not waited)",
                    "commit the store (copy.commit_group bulk) and wait for it "
                    "(copy.wait_group bulk 0) before the copy.tensormap_replace",
                    Related(store, "the store through the map"),
                )
            )
            break
        m.loads = {}
        m.stores = {}
        m.replaced = op
        m.released = False
        m.acquired = {}

    def release(self, tensor_map: SSAValue) -> None:
        m = self.of(tensor_map)
        if m.replaced is not None:
            m.released = True

    def acquire(self, op: Operation, tensor_map: SSAValue, issuer: int, who: str) -> None:
        """Thread class `issuer` (`who`) acquires the map: its own later copies through it
        see the released rewrite."""
        m = self.of(tensor_map)
        if m.replaced is None or issuer in m.acquired:
            return
        # rule: TU12
        if not m.released:
            self.report(
                error(
                    op,
                    f"Expected a tensormap_fence_release of {describe_map(tensor_map)} between "
                    "its rewrite and this acquire, got none: the acquire orders nothing",
                    "add copy.tensormap_fence_release after the copy.tensormap_replace ops "
                    "and before the acquire",
                    Related(m.replaced, "the map is rewritten here"),
                )
            )
        m.acquired[issuer] = (op, who)

    def prune(self, known: Clock | None) -> None:
        """Drop the loads the clock `known` knows complete (`clocks.common`)."""
        for m in self.maps.values():
            if m.loads:
                m.loads = {k: end for k, end in m.loads.items() if not known_to(known, end)}

    def snapshot(self, seen: Callable[[End | None], int]) -> tuple[object, ...]:
        return tuple(
            (v, m.replaced, m.released, tuple(sorted(m.acquired)),
             tuple((k, seen(e)) for k, e in m.loads.items()), tuple(m.stores))
            for v, m in self.maps.items()
        )  # fmt: skip
