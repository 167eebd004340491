"""How far a loop's state reaches (analysis/protocol/depths.py, `loop_depths`): each barrier
group's ring counted in the loop's own iterations by how often its ops run an iteration,
the widest of them, not the kernel's widest ring. In the persistent tcgen05 GEMMs, the
producer's tile loop steps through the k ring of 4 four times a tile (1 tile); the MMA warp's
and the epilogue's through the accumulator ring of 2 once a tile (2 tiles); the K loops
through the ring of 4 once a k-block (4). A tcgen05.commit names its group through a pointer
cast, which counts as the group. A group's ring advances as often as its most frequent op
runs: a consumer's release of a tile's last slot after its K loop does not make the ring
reach four tiles."""

from __future__ import annotations

import pytest
from xdsl.dialects import func, scf
from xdsl.parser import Parser

from analysis.protocol.analysis import kernel_facts, protocol_ops
from analysis.protocol.depths import groups_of
from copy_tools.universe import make_context
from tests.corpus import KERNELS


def parse(name: str):
    kernel = next(k for k in KERNELS if k.name == name)
    return Parser(make_context(), kernel.text()).parse_module()


def depths(name: str) -> dict[str, list[int]]:
    module = parse(name)
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    facts = kernel_facts(fn, protocol_ops(fn))
    found: dict[str, list[int]] = {"tile": [], "k": []}
    for loop, shape in facts.loops.items():
        parent, nested = loop.parent_op(), False
        while parent is not None and not nested:
            nested, parent = isinstance(parent, scf.ForOp), parent.parent_op()
        found["k" if nested else "tile"].append(shape.depth)
    return found


@pytest.mark.parametrize(
    "name",
    ["gemm_tcgen05_persistent", "gemm_tcgen05_2cta_persistent", "gemm_tcgen05_pipeline_state"],
)
def test_each_ring_reaches_across_its_own_iterations(name):
    assert depths(name) == {"tile": [1, 2, 2], "k": [4, 4]}


def test_a_commits_group_counts_through_its_pointer():
    module = parse("gemm_tcgen05_2cta_persistent")
    commits = [op for op in module.walk() if op.name == "nvvm.tcgen05.commit"]
    assert commits
    assert {width for op in commits for _, width in groups_of(op)} == {2, 4}


def test_a_load_tail_does_not_set_the_tile_loops_lap():
    """The persistent multicast GEMM's producer counts on from its tile loop's ring position in
    a load_tail (slots it mod 4, a period of 4 of its own iterations) after its tile loop: it
    runs once that loop has ended, not beside the tile loops (`depths.runs_after`), so their
    lap stays the tile's (1), not 4 tiles, and they are walked 6 tiles, not 12."""
    module = parse("gemm_multicast_cluster2_persistent")
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    facts = kernel_facts(fn, protocol_ops(fn))
    tiles = [
        shape
        for loop, shape in facts.loops.items()
        if isinstance(loop, scf.ForOp) and loop.ub.name_hint == "count"
    ]
    assert len(tiles) == 2
    assert [(s.lap.period, s.trips) for s in tiles] == [(1, 6), (1, 6)]


@pytest.mark.parametrize(("schedule", "reach"), [("cooperative", {1}), ("pingpong", {1, 2})])
def test_a_release_after_the_k_loop_reaches_as_far_as_the_ring_does(schedule, reach):
    """kernels.gemm's consumers release each k-block's slot in the K loop but the tile's
    last one after it, once a tile: the ring of 4 still advances 128 slots a tile (8192 / 64
    k-blocks), so it reaches one tile back (each op on its own: 4 tiles, and walked 18 tiles
    where 6 settle). The pingpong's consumers also take turns through an order barrier of 2,
    once a tile: 2 tiles."""
    from frontends.kernels.gemm import gemm

    module = gemm(8192, 8192, 8192, schedule=schedule, stages=4, verify=False)
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    releases = [op for op in fn.walk() if op.name == "copy.barrier_arrive"]
    assert any(fors_around(op) == 1 for op in releases)  # (the last slot's, in the tile loop)
    facts = kernel_facts(fn, protocol_ops(fn))
    tiles = [shape for loop, shape in facts.loops.items() if fors_around(loop) == 0]
    assert len(tiles) >= 2
    assert {shape.depth for shape in tiles} == reach


def fors_around(op) -> int:
    """How many scf.for loops hold `op`."""
    fors, parent = 0, op.parent_op()
    while parent is not None:
        fors += isinstance(parent, scf.ForOp)
        parent = parent.parent_op()
    return fors
