"""The protocol analysis on every protocol-correct kernel we ship, and on each of them with
one protocol op broken.

The kernels: the examples (examples/*.mlir, shipped as copy_tools.examples), the
builders of frontends.kernels over their documented parameters (tma_copy with every
swizzle, reductions, dynamic shapes, a prefetched destination and cache hints;
cp_async_copy; multicast_copy; broadcast_copy multicast and rank-major; tma_copy_pipelined
with 1 to 6 stages over several tiles; the warp-specialized ws_copy, ws_elementwise and
ws_row_sum),
and the warp-specialized kernels of lit_tests/dialects/copy/protocol-roles.mlir (a producer
warp and a storer or consumer warps on a ring, barrier_test, two consumer warpgroups at a
named barrier). Each has no finding at all: no error, no warning (the issue's "no false
alarm").

Then one mutation per case: a barrier_wait, commit_group or wait_group deleted, a wait's
parity flipped, a wait_group that waits for fewer groups (pending + 1) or only for their
reads (read_only), a load that does not arrive, a barrier that expects one more arrival, a
load's own arrival replaced by a barrier_arrive_expect_tx of the wrong byte count, a TMA
op moved under `scf.if` on thread 1, a block-wide op or a barrier_wait on thread 0 (in a
role: on the thread's index in the role, %t); in the warp-specialized kernels also a
barrier_arrive deleted or made by another issuer (elected, warps, threads), a named barrier
or a fence_async_shared deleted. Each must make the analysis report an error with a P rule
among those the mutation can break (`Mutation.breaks`; `Mutation.breaks_in_roles` for an op
in a role, where a role's refill or a barrier running ahead shows first). Mutations that
leave a still-correct kernel are recognised in `still_correct`, which says why, and must
give no finding; a case id names the kernel, the mutation and the op (its index among the
ops the mutation applies to).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import pytest
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser

from analysis.protocol import ProtocolFinding, check_protocol, render
from copy_dialect import ops as copy
from copy_tools.diagnostics import SourceFile, split_chunks
from copy_tools.universe import make_context
from frontends import kernels
from tests.analysis.mutations import (
    ancestors,
    arrives_as,
    by_thread,
    delete,
    expect_tx,
    fewer_groups,
    flip_parity,
    full_bulk_waits,
    issuer,
    no_arrive,
    one_more_arrival,
    ops_of,
    reads_only,
    role_of,
    tma_loads,
    tma_ops,
)

ROLES = Path(__file__).resolve().parents[2] / "lit_tests/dialects/copy/protocol-roles.mlir"

# --- the kernels we ship --------------------------------------------------------------


def example(name: str) -> Callable[[], ModuleOp]:
    def build() -> ModuleOp:
        text = resources.files("copy_tools.examples").joinpath(name).read_text()
        return Parser(make_context(), text).parse_module()

    return build


EXAMPLES = sorted(
    p.name for p in resources.files("copy_tools.examples").iterdir() if p.name.endswith(".mlir")
)
PIPELINES = [
    ((1024, 1024), "f32", (64, 64), range(1, 7)),
    ((1024, 1024), "f32", (128, 128), range(1, 4)),
    ((1600, 864), "i16", (100, 48), range(1, 7)),
    ((256, 512), "f16", (32, 64), range(1, 7)),
]
"""Shapes, dtypes and tiles of tma_copy_pipelined and the stage counts each admits
(`kernels.pipeline_stages_limit`: 3 slots of 128x128 f32 fit sm_90a's SMEM)."""


def role_kernels() -> dict[str, Callable[[], ModuleOp]]:
    """The chunks of protocol-roles.mlir, by kernel name."""
    found: dict[str, Callable[[], ModuleOp]] = {}
    for chunk in split_chunks(SourceFile(str(ROLES), ROLES.read_text()), True):
        text = chunk.text
        name = text[text.index("func.func @") + len("func.func @") :].split("(", 1)[0]
        found[f"roles/{name}"] = lambda text=text: Parser(make_context(), text).parse_module()
    return found


KERNELS: dict[str, Callable[[], ModuleOp]] = {f"examples/{n}": example(n) for n in EXAMPLES}
KERNELS.update(role_kernels())
KERNELS.update(
    {
        "tma_copy": lambda: kernels.tma_copy((1000, 1000), "f32"),
        **{
            # A tile row of one swizzle span, as the swizzle requires (16: none).
            f"tma_copy swizzle={s}": (
                lambda s=s: kernels.tma_copy(
                    (512, 512), "f32", (64, s // 4 if s > 16 else 64), swizzle=s
                )
            )
            for s in (16, 32, 64, 128)
        },
        "tma_copy bf16 swizzle=128": lambda: kernels.tma_copy(
            (512, 384), "bf16", (64, 64), swizzle=128
        ),
        "tma_copy reduce=add": lambda: kernels.tma_copy((1024, 1024), "f32", reduce="add"),
        "tma_copy reduce=max bf16": lambda: kernels.tma_copy((1024, 1024), "bf16", reduce="max"),
        "tma_copy dynamic": lambda: kernels.tma_copy((0, 0), "f32", dynamic=True),
        "tma_copy dynamic reduce=add": lambda: kernels.tma_copy(
            (0, 0), "f32", dynamic=True, reduce="add"
        ),
        "tma_copy prefetch_destination reduce=add": lambda: kernels.tma_copy(
            (1024, 1024), "f32", (64, 256), reduce="add", prefetch_destination=True
        ),
        "tma_copy prefetch_destination": lambda: kernels.tma_copy(
            (1024, 1024), "f32", prefetch_destination=True
        ),
        "tma_copy cache_hints": lambda: kernels.tma_copy(
            (1024, 1024), "f32", cache_hints=(kernels.EVICT_FIRST, kernels.EVICT_LAST)
        ),
        "cp_async_copy": lambda: kernels.cp_async_copy((1000, 1000), "f32"),
        "cp_async_copy sm_90a": lambda: kernels.cp_async_copy((1024, 1024), "f32", target="sm_90a"),
        "multicast_copy": lambda: kernels.multicast_copy((256, 256), "f32"),
        "broadcast_copy cluster=4": lambda: kernels.broadcast_copy((130, 264), "bf16", cluster=4),
        "broadcast_copy unicast rank_major": lambda: kernels.broadcast_copy(
            (130, 264), "f32", multicast=False, order="rank_major"
        ),
        **{
            f"tma_copy_pipelined {dtype} {t[0]}x{t[1]} stages={n}": (
                lambda shape=shape, dtype=dtype, t=t, n=n: kernels.tma_copy_pipelined(
                    shape, dtype, t, stages=n
                )
            )
            for shape, dtype, t, stages in PIPELINES
            for n in stages
        },
        "tma_copy_pipelined reduce=add stages=2": lambda: kernels.tma_copy_pipelined(
            (1024, 1024), "f32", (64, 64), stages=2, reduce="add"
        ),
        "ws_copy stages=2": lambda: kernels.ws_copy((1024, 1024), "f32", stages=2),
        "ws_copy in_flight=2": lambda: kernels.ws_copy((1024, 1024), "f32", in_flight=2),
        "ws_elementwise add": lambda: kernels.ws_elementwise("add", (1024, 1024), "f32"),
        "ws_row_sum": lambda: kernels.ws_row_sum((1024, 1024), "f32"),
    }
)


def findings_text(findings: list[ProtocolFinding]) -> str:
    return "\n".join(f"[{f.severity} {'/'.join(f.rules)}] {render(f)}" for f in findings)


@pytest.mark.parametrize("name", list(KERNELS))
def test_shipped_kernel_has_no_finding(name):
    module = KERNELS[name]()
    module.verify()
    findings = check_protocol(module)
    assert not findings, findings_text(findings)


# --- mutations ------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    name: str
    targets: Callable[[ModuleOp], list[Operation]]
    apply: Callable[[Operation], None]
    breaks: frozenset[str]
    """The rules a kernel broken this way violates: a read before its copy completes (P1),
    a refill while a store reads (P2, P3), a phase that never completes (P5, P6),
    work in flight at the return (P7)."""
    breaks_in_roles: frozenset[str] | None = None
    """Those rules for an op in a role (None: `breaks`): another role's refill races (P2,
    P3), a barrier runs two phases ahead or every role blocks (P6), a role leaves work in
    flight at the join (P7)."""

    def broken(self, op: Operation) -> frozenset[str]:
        if self.breaks_in_roles is not None and role_of(op) is not None:
            return self.breaks_in_roles
        return self.breaks


P1_P2_P7 = frozenset({"P1", "P2", "P7"})
RACES = frozenset({"P1", "P2", "P3", "P4", "P6", "P7"})
WAITS = ops_of(copy.BarrierWaitOp)
MUTATIONS = [
    Mutation("delete barrier_wait", WAITS, delete, frozenset({"P1", "P3", "P7"}), RACES),
    Mutation("delete commit_group", ops_of(copy.CommitGroupOp), delete, P1_P2_P7, RACES),
    Mutation("delete wait_group", ops_of(copy.WaitGroupOp), delete, P1_P2_P7, RACES),
    Mutation("flip parity", WAITS, flip_parity, frozenset({"P1", "P3", "P6", "P7"}), RACES),
    Mutation("pending + 1", ops_of(copy.WaitGroupOp), fewer_groups, P1_P2_P7, RACES),
    Mutation("read_only", full_bulk_waits, reads_only, P1_P2_P7, RACES),
    Mutation("arrive = false", tma_loads, no_arrive, frozenset({"P6"})),
    Mutation("arrivals + 1", ops_of(copy.BarrierInitOp), one_more_arrival, frozenset({"P6"})),
    Mutation("issued by thread 1", tma_ops, by_thread(1), frozenset({"P10"})),
    Mutation("wait_group by thread 0", ops_of(copy.WaitGroupOp), by_thread(0), frozenset({"P10"})),
    Mutation("barrier_wait by thread 0", WAITS, by_thread(0), frozenset({"P1"}), RACES),
    Mutation("expect_tx exact", tma_loads, expect_tx(0), frozenset()),
    Mutation("expect_tx + 16", tma_loads, expect_tx(16), frozenset({"P5"})),
    Mutation("expect_tx - 16", tma_loads, expect_tx(-16), frozenset({"P5"})),
    # The warp-specialized kernels' own ops.
    Mutation("delete barrier_arrive", ops_of(copy.BarrierArriveOp), delete, frozenset({"P6"})),
    Mutation("issuer elected", arrives_as("elected"), issuer("elected"), frozenset({"P6"})),
    Mutation("issuer warps", arrives_as("warps"), issuer("warps"), frozenset({"P5"})),
    Mutation("issuer threads", arrives_as("threads"), issuer("threads"), frozenset({"P5"})),
    Mutation("delete named_barrier_sync", ops_of(copy.NamedBarrierSyncOp), delete,
             frozenset({"P13"}) | RACES),
    Mutation("delete fence_async_shared", ops_of(copy.FenceAsyncSharedOp), delete,
             frozenset({"P4"}), RACES),
]  # fmt: skip


def still_correct(m: Mutation, op: Operation) -> str | None:
    """Why mutating `op` this way leaves the kernel correct, or None when it breaks it."""
    if not m.breaks:
        return "the load's own arrival and an expect_tx of its box bytes are the same"
    if m.name in ("issuer elected", "issuer warps") and one_warp_role(op):
        assert isinstance(op, copy.BarrierArriveOp)
        if op.arriving in (copy.Issuer.ELECTED, copy.Issuer.WARPS):
            return "in a role of one warp, issuer elected and issuer warps both arrive once"
    if m.name in ("delete barrier_wait", "barrier_wait by thread 0") and met_after(op):
        return (
            "another role waits on the same barrier and meets this one at a named barrier "
            "before it reads: the reads are ordered after that role's wait"
        )
    if m.name == "barrier_wait by thread 0" and role_of(op) is None and not threads_read_smem(op):
        return (
            "only thread 0 reads the tile (its TMA store), and thread 0 still waits; the "
            "other threads never touch it"
        )
    following = op.next_op
    last = following is None and isinstance(op.parent_op(), copy.WarpSpecializeOp)
    last = last or following is not None and following.name == "func.return"
    if m.name == "read_only" and last:
        return (
            "the last bulk wait before the return or the role's end: read_only suffices "
            "there (P7: the stores' GMEM writes complete with the grid, their SMEM reads must "
            "be done)"
        )
    return None


def one_warp_role(op: Operation) -> bool:
    role = role_of(op)
    if role is None:
        return False
    ws, body = role
    index = next(i for i, r in enumerate(ws.roles) if r.blocks[0] is body)
    return ws.role_warps[index] == 1


def met_after(op: Operation) -> bool:
    """A barrier_wait followed, in its role, by a named barrier that a role which waits on
    the same barrier also reaches."""
    role = role_of(op)
    if role is None or not isinstance(op, copy.BarrierWaitOp):
        return False
    ws, body = role
    after = False
    for o in body.walk():
        after = after or o is op
        if after and isinstance(o, copy.NamedBarrierSyncOp):
            break
    else:
        return False
    return any(
        isinstance(w, copy.BarrierWaitOp) and w.barrier is op.barrier and w is not op
        for r in ws.roles
        if r.blocks[0] is not body
        for w in r.blocks[0].walk()
    )


def threads_read_smem(op: Operation) -> bool:
    fn = next(a for a in ancestors(op) if isinstance(a, func.FuncOp))
    return any(isinstance(o, memref.LoadOp) for o in fn.walk())


MUTATED = [
    name
    for name in KERNELS
    if (
        not name.startswith("tma_copy_pipelined ")
        or "f32 64x64" in name
        or int(name.rsplit("=", 1)[1]) <= 2
    )
    and name != "ws_row_sum"
]
"""The kernels mutated: a ring's protocol depends on its stage count, not on its tile, so
rings of other tiles than 64x64 f32 (stages 1 to 6) are mutated with 1 and 2 stages only;
ws_row_sum (a second to analyse: its lap is 8 tiles) is checked unmutated only, its ring is
ws_elementwise's."""


@cache
def built(kernel: str) -> ModuleOp:
    """`kernel` as its builder makes (and checks) it, once per process: each mutation
    mutates a clone."""
    return KERNELS[kernel]()


def cases() -> list[tuple[str, str, int]]:
    found = []
    for kernel in MUTATED:
        module = built(kernel)
        for m in MUTATIONS:
            found += [(kernel, m.name, i) for i in range(len(m.targets(module)))]
    return found


@pytest.mark.parametrize(
    ("kernel", "mutation", "index"), cases(), ids=lambda v: str(v).replace(" ", "_")
)
def test_mutation_is_reported(kernel, mutation, index):
    module = built(kernel).clone()
    m = next(m for m in MUTATIONS if m.name == mutation)
    op = m.targets(module)[index]
    why = still_correct(m, op)
    breaks = m.broken(op)
    m.apply(op)
    findings = check_protocol(module)
    if why is not None:
        assert not findings, f"still correct ({why}), yet:\n{findings_text(findings)}"
        return
    errors = [f for f in findings if f.severity == "error" and set(f.rules) & breaks]
    assert errors, (
        f"{kernel}, {mutation} #{index}: expected an error of {sorted(breaks)}, got:\n"
        + (findings_text(findings) or "no finding")
    )
