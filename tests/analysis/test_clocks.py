"""The vector clocks' joins and meets (analysis/protocol/clocks.py): the lazy forms the
protocol analysis takes for a cluster's wide clocks (`Meet`, `join_all`, `Barrier.learn`)
give what the eager ones give, on clocks of different widths as the walk makes them (a
class's clock grows as components are added)."""

from __future__ import annotations

import random

import pytest

from analysis.protocol.clocks import Meet, common, join, join_all, known_to, knows
from analysis.protocol.records import Barrier, ranks_text


def clocks(rng: random.Random, n: int, width: int) -> list[list[int]]:
    return [[rng.randrange(6) for _ in range(rng.randrange(1, width + 1))] for _ in range(n)]


@pytest.mark.parametrize("seed", range(40))
def test_meet_knows_an_end_as_the_whole_common_does(seed: int):
    rng = random.Random(seed)
    live = clocks(rng, rng.randrange(1, 9), 12)
    whole = common(live)
    for _ in range(30):
        end = tuple((rng.randrange(14), rng.randrange(7)) for _ in range(rng.randrange(1, 4)))
        assert knows(Meet(live), end) == known_to(whole, end)  # type: ignore[arg-type]
        assert knows(Meet(live), end) == all(knows(k, end) for k in live)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(40))
def test_join_all_is_the_joins_one_by_one(seed: int):
    rng = random.Random(seed)
    some = clocks(rng, rng.randrange(1, 9), 12)
    one_by_one: list[int] = []
    for c in some:
        one_by_one = join(one_by_one, c)
    assert join_all(some) == one_by_one


def test_a_barrier_learns_what_a_clock_knew_when_it_arrived():
    """`Barrier.learn` keeps a copy: a clock that goes on (its class's next stamp) after it
    arrived does not change what the phase knows."""
    b = Barrier(init=None, count=2, comp=0)  # type: ignore[arg-type]
    first, second = [1, 0, 3], [0, 2]
    b.learn(first)
    first[0] = 9
    b.learn(second)
    assert b.open == [1, 2, 3]
    b.open = []
    assert b.open == []
    assert not b.knew


@pytest.mark.parametrize(
    ("ranks", "text"),
    [([3], "3"), ([0, 1], "0 and 1"), ([0, 1, 2], "0-2"), ([0, 2, 4, 5, 6, 7], "0, 2 and 4-7")],
)
def test_ranks_in_words(ranks: list[int], text: str):
    assert ranks_text(ranks) == text
