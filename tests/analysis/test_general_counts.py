"""A long loop of a constant trip count (a GEMM's K loop over 256 k-blocks) is proven as the
same kernel with the count an argument (analysis/protocol/general.py): proven for every
count of at least one iteration, N among them, in the time of a dynamic-K kernel. Where the
general kernel is not proven (an error at some count, the budget spent), the kernel is
walked as written: its findings are its own, the general form never adds or hides one.
A K loop inside a persistent tile loop too: the laps of its walks are cut in every tile at
once (`cuts.cut`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.parser import Parser

import analysis.protocol.analysis as driver
from analysis.protocol import check_protocol
from copy_tools.universe import make_context

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
K_TILES = re.compile(r"%k_tiles = arith.constant \d+ : index")


def kernel(name: str, k: int, *edits: tuple[str, str]) -> str:
    text = (CORPUS / f"{name}.mlir").read_text()
    text, found = K_TILES.subn(f"%k_tiles = arith.constant {k} : index", text)
    assert found == 1
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    return text


def findings(text: str) -> list[tuple[str, str, str]]:
    module = Parser(make_context(), text).parse_module()
    return sorted((f.severity, str(f.rules), str(f)) for f in check_protocol(module))


def walked(text: str, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The most iterations any run walked a loop (its events' count per run, as a proxy:
    the kernel's runs, longest first)."""
    events: list[int] = []
    run_kernel = driver.run_kernel

    def counted(*args, **kwargs):
        walk = run_kernel(*args, **kwargs)
        events.append(len(walk.events))
        return walk

    monkeypatch.setattr(driver, "run_kernel", counted)
    assert findings(text) == []
    return events


@pytest.mark.parametrize("name", ["gemm_cooperative", "gemm_multicast_cluster2"])
def test_a_long_constant_k_loop_costs_what_a_short_one_does(name, monkeypatch):
    # The runs of K = 1024 walk no more than those of K = 256: each is the general
    # kernel's (the longest count the driver tries and the one 1024 or 256 stands for).
    small = walked(kernel(name, 256), monkeypatch)
    large = walked(kernel(name, 1024), monkeypatch)
    assert max(large) == max(small)
    assert sum(large) <= sum(small) * 1.1
    # As written, a K = 1024 walk alone is some 100 times the longest run's events.
    assert max(large) * 20 < 1024 * 16


def test_a_loop_beyond_the_iterations_the_walk_follows_is_proven():
    # 5000 k-blocks: more than the 4096 iterations a walk follows (a P10 warning when
    # walked as written); the general kernel proves it.
    assert findings(kernel("gemm_cooperative", 5000)) == []


def test_a_mistake_at_the_count_the_kernel_has_is_found():
    # The producer loads 255 k-blocks, the consumers wait for 256: the general kernel
    # (its 256 an argument, the producer's 255 left) errs, so the kernel is walked as
    # written, and its hang is reported as without the general form.
    text = kernel(
        "gemm_cooperative", 256,
        ("%k_tiles = arith.constant 256 : index",
         "%k_tiles = arith.constant 256 : index\n    %k_short = arith.constant 255 : index"),
        ("scf.for %k = %c0 to %k_tiles step %c1 {", "scf.for %k = %c0 to %k_short step %c1 {"),
    )  # fmt: skip
    found = findings(text)
    assert any(severity == "error" for severity, _, _ in found)
    module = Parser(make_context(), text).parse_module()
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    assert found == sorted(
        (f.severity, str(f.rules), str(f))
        for f in driver.check_as_written(fn, driver.protocol_ops(fn))
    )


def test_a_load_tail_to_a_constant_of_its_own_follows_the_count(monkeypatch):
    # The 2-CTA pair's load_tail runs from %k_tiles to %k_end, a constant of its own (8 and
    # 12): in the general kernel it runs from n to n + 4 (the same loop where n = 256), so
    # the kernel is proven for every count, 256 and 1024 at one cost.
    small = walked(kernel("gemm_2cta_pair", 256, ("arith.constant 12 : index",
                                                  "arith.constant 260 : index")),
                   monkeypatch)  # fmt: skip
    large = walked(kernel("gemm_2cta_pair", 1024, ("arith.constant 12 : index",
                                                   "arith.constant 1028 : index")),
                   monkeypatch)  # fmt: skip
    assert max(large) == max(small)
    assert max(large) * 20 < 1024 * 16


def test_the_users_module_is_left_as_it_was():
    text = kernel("gemm_cooperative", 256)
    module = Parser(make_context(), text).parse_module()
    before = str(module)
    assert check_protocol(module) == []
    assert str(module) == before


def as_written(text: str) -> list[tuple[str, str, str]]:
    module = Parser(make_context(), text).parse_module()
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    return sorted(
        (f.severity, str(f.rules), str(f))
        for f in driver.check_as_written(fn, driver.protocol_ops(fn))
    )


@pytest.mark.parametrize(
    "name",
    [
        "gemm_persistent",
        "gemm_pingpong",
        "gemm_multicast_cluster2_persistent",
        "gemm_tcgen05_pipeline_state",
    ],
)
def test_a_k_loop_in_a_persistent_tile_loop_costs_what_a_short_one_does(name, monkeypatch):
    # A grid-stride tile loop (a pingpong's consumers each walking every other tile, a
    # cluster of 2 with multicast, a stage and phase carried from tile to tile as CUTLASS's
    # PipelineState) around a constant K loop: the runs of K = 1024 walk no more than
    # those of K = 256, where the walk as written grows with K.
    small = walked(kernel(name, 256), monkeypatch)
    large = walked(kernel(name, 1024), monkeypatch)
    assert max(large) == max(small)
    assert sum(large) <= sum(small) * 1.1


@pytest.mark.parametrize("k", [100, 130, 257])
def test_a_persistent_kernel_is_proven_as_its_walk_as_written(k):
    # Counts of every residue modulo the ring's lap of 8 (100: a multiple of 4, so the
    # general kernel states n a multiple of 4; 130: of 2; 257: of nothing): each tile
    # starts in another slot and phase, and both the general kernel and the walk of the
    # kernel as written prove it.
    text = kernel("gemm_persistent", k)
    assert findings(text) == as_written(text) == []


def test_a_race_of_a_persistent_kernel_at_its_count_is_found():
    # The sparse tcgen05 GEMM reuses its metadata buffer waiting only from its second
    # tile on: correct for 2 k-blocks a tile, a race from 3 on (P14), as the walk as
    # written finds it at 256.
    text = kernel("gemm_tcgen05_sparse_persistent", 256)
    found = findings(text)
    assert any(severity == "error" and "P14" in rules for severity, rules, _ in found)
    assert found == as_written(text)


def test_a_persistent_epilogue_without_its_store_wait_is_rejected():
    # Issue N's unsound case, as a tile loop: the consumer rewrites the staging buffer
    # while the previous tile's TMA store may still read it; at 256 k-blocks a tile the
    # cut laps of the K loop must not hide the epilogue that follows them.
    text = kernel(
        "gemm_persistent", 256,
        ("        copy.wait_group bulk 0 read_only\n", ""),
    )  # fmt: skip
    found = findings(text)
    assert any(severity == "error" for severity, _, _ in found)
    assert found == as_written(text)
