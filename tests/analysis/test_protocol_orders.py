"""The priority orders the driver runs each choice under (analysis/protocol/analysis.py,
`priority_orders`): both orders of 2 roles, and for 3 or more each role first once (its
rotation), where all 6 orders of 3 roles were run before. The rotations must judge every
kernel as all the orders do: on the corpus's 3-role kernels and their one-op mutants, a
kernel the rotations reject all 6 orders reject, and one they prove or warn about all 6
prove or warn about alike. One order alone is not enough in general (`test_one_order_is_not_
enough`), but it is for a run whose barriers counted every arrival after the phase before
(`HappensBefore.ordered`): the other orders find what it finds, on every run of the
corpus's mutants tried here, and the driver runs them only when a run was not ordered. Each
choice runs first under the quick order (`quick_order`, the roles last to first), then, if
that run erred or was not ordered, under the priority orders as before; in a cluster, each
under each CTA first as well (`cta_orders`), which the roles' orders alone do not cover."""

from __future__ import annotations

from itertools import permutations
from pathlib import Path

import pytest
from xdsl.parser import Parser

import analysis.protocol.analysis as driver
from analysis.protocol.run import Infeasible, run_kernel
from copy_tools.universe import make_context
from tests.analysis import corpus_mutations as cm
from tests.analysis.test_protocol_counts import verdict

THREE_ROLES = ("gemm_cooperative", "gemm_pingpong", "fa3_kv_ring")
"""The corpus kernels with three roles (a producer and two consumer warpgroups)."""


def every_order(monkeypatch) -> None:
    """The driver running every order of the roles."""
    monkeypatch.setattr(driver, "priority_orders", lambda roles: list(permutations(range(roles))))


def judged(found: list[tuple[str, tuple[str, ...], int]]) -> object:
    """What the orders must agree on: rejected (the first error may differ, as another
    order may find another mistake first), or every finding."""
    if any(severity == "error" for severity, _, _ in found):
        return "rejected"
    return found


def mutant(case: tuple[str, str, int]):
    kernel_name, mutation, index = case
    module = cm.parse(cm.kernel_named(kernel_name))
    m = cm.mutation_named(mutation)
    m.apply(m.targets(module)[index])
    return module


def test_three_roles_run_under_their_rotations():
    assert driver.priority_orders(2) == [(0, 1), (1, 0)]
    assert driver.priority_orders(3) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]


@pytest.mark.parametrize("name", THREE_ROLES)
def test_the_rotations_judge_the_corpus_as_every_order(name, monkeypatch):
    kernel = cm.kernel_named(name)
    rotations = verdict(cm.parse(kernel))
    every_order(monkeypatch)
    assert rotations == verdict(cm.parse(kernel))


def mutants() -> list[tuple[str, str, int]]:
    """The one-op mutants of the 3-role kernels (every fourth of the two slow kernels)."""
    cases = [case for case in cm.cases() if case[0] in THREE_ROLES]
    return [c for i, c in enumerate(cases) if c[0] == "gemm_cooperative" or i % 4 == 0]


@pytest.mark.parametrize("case", mutants(), ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_the_rotations_judge_the_mutants_as_every_order(case, monkeypatch):
    found: list = []
    made = runs(monkeypatch, found)
    rotations = judged(verdict(mutant(case)))
    if not any(order == driver.priority_orders(3)[0] and not walk.state.hb.ordered
               and not any(f.severity == "error" for f in mine)
               for (_, order, walk), mine in zip(made, found, strict=True)):  # fmt: skip
        # No run of the first priority order left the others to run (each was ordered or
        # erred): the driver with every order makes the same runs, its first order the
        # rotations' first.
        return
    every_order(monkeypatch)
    assert rotations == judged(verdict(mutant(case)))


def test_one_order_is_not_enough(monkeypatch):
    """A consumer warpgroup that releases the next slot's empty barrier: the producer can
    run two phases ahead of the other consumer's wait. Order (0, 1, 2) does not see it;
    (2, 0, 1), one of the rotations, does (P6)."""
    case = ("gemm_cooperative", "next barrier", 7)
    rules = {rule for severity, found, _ in verdict(mutant(case)) if severity == "error"
             for rule in found}  # fmt: skip
    assert rules == {"P6"}
    monkeypatch.setattr(driver, "priority_orders", lambda roles: [tuple(range(roles))])
    assert judged(verdict(mutant(case))) != "rejected"


def runs(monkeypatch, found: list | None = None) -> list[tuple[dict, tuple[int, ...], object]]:
    """Every run the driver makes, as (bindings, order, walk); with `found`, the findings
    of each run too (a list per run, in the same order)."""
    made = []
    run = driver.run_kernel

    def recorded(kernel, bindings, report, order, ctas=(), watched=frozenset()):
        mine: list = []

        def both(finding):
            mine.append(finding)
            report(finding)

        walk = run(kernel, bindings, both, order, ctas, watched)
        made.append((bindings, order, walk))
        if found is not None:
            found.append(mine)
        return walk

    monkeypatch.setattr(driver, "run_kernel", recorded)
    return made


@pytest.mark.parametrize(
    "name", ["gemm_cooperative", "gemm_tcgen05_2cta_persistent", "gather4_multicast_moe"]
)
def test_an_ordered_kernel_runs_one_order(name, monkeypatch):
    """The corpus's kernels count every arrival after the phase before: each choice is run
    under the first order only. The gather4 GEMM's consumers release each slot in both CTAs
    and never wait on the peer's empty barrier: their arrival there knows every arrival of
    the phase before (`mbarriers.knows_arrivals`), through the pair's own ring."""
    made = runs(monkeypatch)
    assert verdict(cm.parse(cm.kernel_named(name))) == []
    assert made
    assert all(walk.state.hb.ordered for _, _, walk in made)
    roles = made[0][2].kernel.roles
    assert {(order, walk.ctas) for _, order, walk in made} == {(driver.quick_order(roles), ())}


def test_an_arrival_before_the_phase_before_completes_runs_every_order(monkeypatch):
    """The consumer that releases the next slot: its arrival on a slot's phase comes before
    it knows the phase before complete, so which phase it counts toward depends on the
    schedule; the rotations run, and (2, 0, 1) sees the wait two phases ahead (P6)."""
    made = runs(monkeypatch)
    rules = {rule for severity, found, _ in verdict(mutant(("gemm_cooperative", "next barrier", 7)))
             if severity == "error" for rule in found}  # fmt: skip
    assert rules == {"P6"}
    assert not made[0][2].state.hb.ordered
    assert {order for _, order, _ in made} == {driver.quick_order(3), *driver.priority_orders(3)}


def test_a_cluster_runs_under_each_cta_first():
    assert driver.cta_orders(1) == [()]
    assert driver.cta_orders(2) == [(), (0, 1), (1, 0)]
    assert driver.cta_orders(4) == [(), (0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]


@pytest.mark.parametrize(
    "case",
    [("gemm_multicast_cluster2", "next barrier", 1), ("gather4_multicast_moe", "next barrier", 2)],
)
def test_an_unordered_cluster_run_runs_every_cta_first(case, monkeypatch):
    """A producer that arrives with its expect_tx on the next slot's full barrier: which
    CTA's arrival over-arrives depends on which CTA runs ahead (P5 only with CTA 0 ahead in
    the multicast GEMM, only with CTA 1 ahead in the gather4 one); the runs are not
    ordered, so each CTA is run first too."""
    made = runs(monkeypatch)
    found = verdict(mutant(case))
    assert {rule for severity, rules, _ in found if severity == "error" for rule in rules} == {"P5"}
    assert not made[0][2].state.hb.ordered
    assert {walk.ctas for _, _, walk in made} == set(driver.cta_orders(2))


def test_an_ordered_cluster_run_finds_what_every_cta_order_finds(monkeypatch):
    """Each ordered run of the cluster kernels' `next barrier` mutants that finds no error
    (the driver then runs no other order): every order of the roles under every order of
    the CTAs finds the same."""
    found: list = []
    made = runs(monkeypatch, found)
    kernels = ("gemm_multicast_cluster2", "gemm_multicast_cluster4", "gemm_2cta_pair")
    for case in (c for c in cm.cases() if c[0] in kernels and c[1] == "next barrier"):
        made.clear()
        found.clear()
        verdict(mutant(case))
        for (bindings, order, walk), mine in zip(list(made), list(found), strict=True):
            if not walk.state.hb.ordered:
                continue
            if any(f.severity == "error" for f in mine):
                continue
            roles = walk.kernel.roles
            every = [driver.quick_order(roles), *driver.priority_orders(roles)]
            for ctas in driver.cta_orders(walk.kernel.cluster.ranks):
                for other in every:
                    if (other, ctas) == (order, walk.ctas):
                        continue  # (the run itself)
                    theirs: list = []
                    try:
                        run_kernel(walk.kernel, bindings, theirs.append, other, ctas)
                    except Infeasible:
                        continue
                    assert keys(theirs) == keys(mine), (case, bindings, other, ctas)


def ordered_cases() -> list[tuple[str, str, int]]:
    """Mutants of a 3-role kernel of each family (those that move a wait or an arrival to
    another barrier, every fourth of the others): their runs that are ordered are checked
    against the other orders."""
    kernels = ("gemm_cooperative", "fa3_kv_ring", "gemm_tcgen05_persistent")
    cases = [case for case in cm.cases() if case[0] in kernels]
    return [c for i, c in enumerate(cases) if c[1] == "next barrier" or i % 4 == 0]


@pytest.mark.parametrize("case", ordered_cases(), ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_an_ordered_run_finds_what_every_order_finds(case, monkeypatch):
    """Each run of the quick order or of the first priority order that is ordered and finds
    no error (the driver then runs no other order): every other order's run of the same
    choices finds the same."""
    found: list = []
    made = runs(monkeypatch, found)
    verdict(mutant(case))
    every = [driver.quick_order(3), *driver.priority_orders(3)]
    for (bindings, order, walk), mine in zip(list(made), list(found), strict=True):
        if order not in every[:2] or not walk.state.hb.ordered:
            continue
        if any(f.severity == "error" for f in mine):
            continue
        for other in every:
            if other == order:
                continue  # (the run itself)
            theirs: list = []
            try:
                run_kernel(walk.kernel, bindings, theirs.append, other)
            except Infeasible:
                continue
            assert keys(theirs) == keys(mine), (bindings, other)


def keys(findings) -> set[tuple[object, ...]]:
    return {(f.severity, f.rules, id(f.op)) for f in findings}


def first_order(monkeypatch, first: tuple[int, ...]) -> None:
    """The driver with `first` as the order each choice is run under first (the quick
    order, and the first of the priority orders)."""
    orders = driver.priority_orders
    monkeypatch.setattr(
        driver, "priority_orders", lambda roles: [first, *(o for o in orders(roles) if o != first)]
    )
    monkeypatch.setattr(driver, "quick_order", lambda roles: first)


def test_a_consumer_run_first_binds_the_count_its_loop_is_computed_from(monkeypatch):
    """A pingpong consumer's loop runs (count + 1) / 2 tiles: run first, it asks for
    `count`, not for its own bound (bound alone, a count of tiles no `count` gives: a hang
    reported on a correct kernel)."""
    first_order(monkeypatch, (1, 0, 2))
    assert verdict(cm.parse(cm.kernel_named("gemm_pingpong"))) == []


LIT = Path(__file__).resolve().parents[2] / "lit_tests" / "dialects" / "copy"


@pytest.mark.parametrize("first", [(0, 1), (1, 0)])
def test_a_tmem_race_is_found_whichever_role_runs_first(first, monkeypatch):
    """An epilogue's tcgen05.ld of the stage the MMA warp may still be writing (the first
    kernel of invalid-protocol-tmem-columns.mlir): the run is ordered, so one order runs; the
    load and the MMA are unordered whichever the walk meets first (P14)."""
    text = (LIT / "invalid-protocol-tmem-columns.mlir").read_text().split("// -----")[0]
    module = Parser(make_context(), text).parse_module()
    first_order(monkeypatch, first)
    found = verdict(module)
    assert [rules for severity, rules, _ in found if severity == "error"] == [("P14",)]
