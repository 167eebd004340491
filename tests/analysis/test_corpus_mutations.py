"""One-op mutations of the corpus's kernels (tests/analysis/corpus_mutations.py), a
deterministic sample judged by the protocol analysis and the interpreter: no mutant the
analysis proves may break a rule when it runs (issue N), except the known failures of the
analysis listed in `KNOWN_UNSOUND`, each a strict xfail that passes once the analysis is
fixed, and the mutants it proved before (`WERE_UNSOUND`) stay rejected. scripts/mutations.py
runs every mutant, with more schedules, and prints the table."""

from __future__ import annotations

import pytest

from tests.analysis import corpus_mutations as cm

MIRRORED_RELEASE = (
    "the consumer's release of slot s {which} moved above its reads of the slot: the empty "
    "barrier counts one arrival from each CTA whose multicast writes the slot, and the "
    "analysis mirrors the cluster (the peer's arrival stands for this CTA's own, made after "
    "its reads), so it proves the kernel; in the run a {writer} refills the slot while this "
    "CTA's consumers read it (P1/P3 at the consumer's memref.load). Issue N, item 2: the "
    "cluster as a set of CTAs"
)
EXIT_WHILE_TARGETED = (
    "{what}: a peer's {arrival} still targets this CTA's barrier when it returns (P7 in "
    "the run: 'reaches CTA r of the cluster after that CTA returned'); the analysis has no "
    "cluster-wide exit rule and proves it. Issue N, item 2"
)
WERE_UNSOUND: dict[tuple[str, str, int], str] = {
    ("gemm_multicast_cluster2", "release before reads", 0): MIRRORED_RELEASE.format(
        which="(the local barrier_arrive on empty[s])", writer="TMA load of this CTA"
    ),
    ("gemm_multicast_cluster2", "release before reads", 1): MIRRORED_RELEASE.format(
        which="(the peer_arrive on the peer's empty[s])", writer="peer's multicast"
    ),
    ("gemm_multicast_cluster4", "release before reads", 0): MIRRORED_RELEASE.format(
        which="(the local barrier_arrive on empty[s])", writer="TMA load of this CTA"
    ),
    ("gemm_multicast_cluster4", "release before reads", 1): MIRRORED_RELEASE.format(
        which="(the peer_arrive to the row peer)", writer="peer's multicast"
    ),
    ("gemm_multicast_cluster4", "release before reads", 2): MIRRORED_RELEASE.format(
        which="(the peer_arrive to the column peer)", writer="peer's multicast"
    ),
    ("gemm_multicast_cluster4", "delete barrier_wait", 1): EXIT_WHILE_TARGETED.format(
        what="the producer's load_tail wait on empty[s] deleted",
        arrival="consumer's peer_arrive (its release of the slot)",
    ),
    ("gemm_multicast_cluster4", "loop bound - 1", 1): EXIT_WHILE_TARGETED.format(
        what="the load_tail one iteration short (3 of the 4 slots drained; only random/1 of "
        "the schedules shows it)",
        arrival="consumer's peer_arrive on the undrained slot",
    ),
    ("dsmem_allreduce_ring", "loop bound - 1", 0): EXIT_WHILE_TARGETED.format(
        what="the ring's step loop one step short (2 of 3): the step-1 acknowledgement is "
        "made and never awaited",
        arrival="peer_arrive on empty[0] (the acknowledgement)",
    ),
    ("dsmem_allreduce_ring", "delete barrier_wait", 1): (
        "the wait on empty[slot] (the next CTA has read what this CTA wrote into its slot a "
        "lap ago) deleted: at step 2 this CTA's st.async into the next CTA's recv[0] races "
        "with its step-0 st.async there and with the next CTA's reads (P3), and a full "
        "phase gets its bytes twice (P5), then a wait hangs (P6); the analysis proves it "
        "(the peer's DSMEM writes into this CTA, mirrored, are not ordered against this "
        "CTA's own). Issue N, item 2: DSMEM writes with their WAR hazards across CTAs"
    ),
    ("dsmem_allreduce_ring", "parity = 1", 1): (
        "the wait on empty[slot] with a constant parity 1: the step-2 wait (which needs "
        "phase 0, parity 0) returns at once, the same race as the deleted wait (P3, P5, P6); "
        "proved. Issue N, item 2"
    ),
}
"""The mutants the analysis proved at d8eda62 that a run breaks (kernel, mutation, index ->
why), found by scripts/mutations.py; the cluster model of 1f39f7b rejects each (P1/P3 at
the consumer's read, P7 at the return). Each runs in the test under the script's
schedules (`cm.SCHEDULES`: the cluster-4 load tail's only under random/1), so that they
stay rejected."""

KNOWN_UNSOUND: dict[tuple[str, str, int], str] = {}
"""Mutants the analysis proves that a run breaks today: (kernel, mutation, index) -> why,
each a strict xfail for the analysis to fix (issue N); scripts/mutations.py marks those
it finds that are not listed. None at 19f197e."""

SAMPLED_KERNELS = (
    "gemm_cooperative",
    "fa3_kv_ring",
    "gemm_2cta_pair",
    "gemm_dynamic_k",
    "gemm_multicast_cluster2",
    "gemm_multicast_cluster4",
    "gemm_multicast_cluster16",
    "dsmem_allreduce_ring",
    "gather4_multicast_moe",
    "fmha_tcgen05",
)
"""The kernels the analysis proves unmutated that the interpreter runs in well under a
second (the others are sampled by scripts/mutations.py only)."""

LATER_COMMIT = (
    "{what}: the {barrier} phase it waits on instead completes with a tcgen05.commit the MMA "
    "warp issued after the MMA in question, and a commit tracks every earlier tcgen05 "
    "operation of its thread, so the kernel is correct (every run clean); the analysis kept "
    "the phases of only the first and the latest commit after an MMA and rejected it ({rule})"
)
WERE_FALSE_ALARMS: dict[tuple[str, str, int], str] = {
    ("fmha_tcgen05_pingpong", "next barrier", 0): LATER_COMMIT.format(
        what="softmax warpgroup 0 waits on s_full[1] (S1's commit) for S0",
        barrier="s_full[1]",
        rule="P14 at the PV MMA, then P2 at the K load",
    ),
    ("fmha_tcgen05_pingpong", "next barrier", 16): LATER_COMMIT.format(
        what="the correction warpgroup waits on pv_done[1] before it loads O0 at the end",
        barrier="pv_done[1]",
        rule="P2 at the K load",
    ),
    ("fmha_tcgen05_pingpong", "next barrier", 19): LATER_COMMIT.format(
        what="the MMA warp waits on pv_done[1] (O1's PV) before S0 overwrites P0",
        barrier="pv_done[1]",
        rule="P14 at the S0 MMA",
    ),
    ("gemm_multicast_cluster2_persistent", "next barrier", 6): (
        "the consumer releases the next slot instead of the one it read: the producer refills "
        "a lap's slots only after the release of the lap before's last slot, which comes after "
        "the reads of every slot, so the kernel is correct (every run clean); its walk of 8 "
        "tiles reached no steady state and the analysis warned (P10) where a longer walk "
        "settles, which a count's walk that did not settle now gets (`walk_further`)"
    ),
}
"""Correct mutants the analysis rejected or warned on: each is proved now, and every run is
clean."""

STRIDE = 12
SCHEDULES = (("adversarial", 0),)
"""Every STRIDE-th mutant of the sampled kernels, under the adversarial schedule (readers
as early, copies as late as they may), the one that exposes every unsound case found."""


def sample() -> list[tuple[str, str, int]]:
    cases = [c for c in cm.cases() if c[0] in SAMPLED_KERNELS]
    picked = cases[::STRIDE]
    listed = [*WERE_UNSOUND, *KNOWN_UNSOUND]
    return picked + [c for c in listed if c in cases and c not in picked]


def param(case: tuple[str, str, int]):
    kernel, mutation, index = case
    marks = []
    if case in KNOWN_UNSOUND:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_UNSOUND[case]))
    return pytest.param(case, marks=marks, id=f"{kernel}-{mutation}-{index}".replace(" ", "_"))


@pytest.mark.parametrize("case", [param(c) for c in sample()])
def test_what_the_analysis_proves_runs_clean(case):
    listed = case in WERE_UNSOUND or case in KNOWN_UNSOUND
    v = cm.judge(*case, schedules=cm.SCHEDULES if listed else SCHEDULES)
    assert v.run != "error", v.detail
    assert not v.unsound, f"{v.name} (at {v.site}) is proved, yet: {v.detail}"
    if case in WERE_UNSOUND:
        assert v.analysis == "rejected", (v.analysis, v.finding)


@pytest.mark.parametrize(
    "case",
    list(WERE_FALSE_ALARMS),
    ids=["-".join(map(str, c)).replace(" ", "_") for c in WERE_FALSE_ALARMS],
)
def test_what_the_analysis_no_longer_rejects(case):
    v = cm.judge(*case, schedules=SCHEDULES)
    assert v.analysis == "proved", (v.analysis, v.finding, WERE_FALSE_ALARMS[case])
    assert v.run == "clean", v.detail


def test_every_kernel_has_mutants():
    """Issue N: at least 300 one-op mutants, of every corpus kernel."""
    cases = cm.cases()
    assert len(cases) >= 300
    assert {c[0] for c in cases} == {k.name for k in cm.KERNELS}


@pytest.mark.parametrize(
    ("kernel", "mutation", "index"),
    [
        ("gemm_pingpong", "delete barrier_arrive", 0),  # a consumer's release
        ("gemm_persistent", "delete barrier_arrive", 0),  # the consumer's release
        ("dsmem_allreduce_ring", "next barrier", 0),  # a wait moved to the next barrier
    ],
)
def test_a_hang_at_a_later_lap_is_not_a_first_lap_parity(kernel: str, mutation: str, index: int):
    """A producer whose acquires of the first lap returned at once (parity 1, as it should)
    and whose wait of a later lap hangs (a release never came: deleted, or its role blocked
    elsewhere) is not told that its loop's first wait must start at parity 1: that note is
    for the acquire that starts at 0, whose very first wait hangs (lit `invalid-protocol`).
    Before, a wait that returned at once did not count as the agent's wait on the group, and
    57 corpus mutants got that note."""
    from analysis.protocol import check_protocol

    m = cm.mutation_named(mutation)
    module = cm.parse(cm.kernel_named(kernel))
    m.apply(m.targets(module)[index])
    errors = [f for f in check_protocol(module) if f.severity == "error"]
    assert errors
    assert "P6" in errors[0].rules
    assert "the loop's first wait" not in errors[0].note, errors[0].note


@pytest.mark.parametrize(
    ("kernel", "mutation", "index", "rule"),
    [
        ("gemm_pingpong", "flip parity", 1, "P6"),  # consumer 1's math_order wait
        ("fa3_pingpong", "next barrier", 12, "P6"),  # a wait on the other K slot's barrier
        ("fa3_kv_ring", "loop bound + 1", 2, "P6"),  # a consumer's loop one block too long
    ],
)
def test_a_hang_is_reported_where_the_roles_wait_on_each_other(kernel, mutation, index, rule):
    """When every role waits and no history says which one owes whom, the hang is reported
    at a wait of the roles that wait on no blocked role outside their own cycle
    (`run.upstream_agents`): pingpong's two consumers waiting on each other's order barrier,
    not the producer whose ring they no longer release (before, the producer's acquire, the
    first role, and for the last two a named barrier that never completes downstream)."""
    from analysis.protocol import check_protocol

    m = cm.mutation_named(mutation)
    module = cm.parse(cm.kernel_named(kernel))
    op = m.targets(module)[index]
    m.apply(op)
    errors = [f for f in check_protocol(module) if f.severity == "error"]
    assert errors
    assert rule in errors[0].rules
    assert cm.first_error_place(errors[0], op, m.deletes) == "at", errors[0].op
