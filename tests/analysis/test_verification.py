"""One verification run (copy_dialect.verification): the benchmark's generated kernel
verifies; facts derived in a run do not outlive it; an op whose signature is new is checked
in full; the one-pass kernel rules (TR16, J16) give the walk's answers; the dominator tree agrees
with dominator sets computed the slow way."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from analysis.dominance import Dominance, non_dominating_uses
from analysis.verify import verification_errors
from copy_dialect import ops as copy
from passes.pipeline import verify_module

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_compile.py"


def generated_module(ops: int) -> str:
    spec = importlib.util.spec_from_file_location("bench_compile", BENCH)
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.generated_module(ops)


@pytest.mark.parametrize("ops", [40, 100])
def test_generated_kernel_verifies(ctx, ops):
    """The benchmark's kernel is valid for every size: a ring of 4 slots whose parity flips
    every 4 repetitions, each store waited (read_only) before its slot is refilled."""
    module = Parser(ctx, generated_module(ops)).parse_module()
    assert verification_errors(module) == []
    assert non_dominating_uses(module) == []
    verify_module(module)
    waits = [op for op in module.walk() if isinstance(op, copy.BarrierWaitOp)]
    parities = [op.parity.owner.value.value.data for op in waits]
    assert parities[:9] == [0, 0, 0, 0, -1, -1, -1, -1, 0][: len(parities)]
    assert len({op.index for op in waits}) == min(4, len(waits))
    assert abs(sum(1 for _ in module.walk()) - ops) <= 7


RING = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<256x256xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %p = arith.constant false
    %buf = copy.alloc_smem : memref<2x64x32xf32, #copy.smem<swizzle = 128>>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    copy.async_copy %x[%c0, %c0] to %buf[%c0] barrier %bars[%c0]
        : memref<256x256xf32> to memref<2x64x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<2>
    copy.barrier_wait %bars[%c0], %p : !copy.barrier<2>
    copy.async_copy %x[%c0, %c0] to %buf[%c1] barrier %bars[%c1]
        : memref<256x256xf32> to memref<2x64x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<2>
    copy.barrier_wait %bars[%c1], %p : !copy.barrier<2>
    func.return
  }
}
"""


def test_facts_do_not_outlive_a_run(ctx):
    """A run keeps an index's constant value; after a pass rewrites the constant the next
    run sees the new value (here: out of the group's range, rule I2)."""
    module = Parser(ctx, RING).parse_module()
    verify_module(module)
    one = next(
        op
        for op in module.walk()
        if isinstance(op, arith.ConstantOp) and op.value == IntegerAttr(1, IndexType())
    )
    one.properties["value"] = IntegerAttr(5, IndexType())
    with pytest.raises(VerifyException, match="Barrier offset 5 is out of bounds"):
        verify_module(module)
    failing = [type(op) for op, _ in verification_errors(module)]
    assert failing == [copy.AsyncCopyOp, copy.BarrierWaitOp]


def test_a_new_signature_is_checked_in_full(ctx):
    """The IRDL checks run once per signature: a later op of the same class whose property
    has another type (i64 for the i32 `pending`) still fails them."""
    text = """
    func.func @k() attributes {copy.target = #copy.target<"sm_90a">} {
      copy.wait_group bulk 0
      "copy.wait_group"() <{group = #copy<group bulk>, pending = 0 : i64}> : () -> ()
      func.return
    }
    """
    module = Parser(ctx, text).parse_module()
    second = list(module.walk())[3]
    assert [(op, str(exc)) for op, exc in verification_errors(module)] == [
        (second, "Expected attribute i32 but got i64")
    ]


EXPECT = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @k(%x: memref<256x256xf32>, %i: index, %q: i1) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %p = arith.constant false
    %buf = copy.alloc_smem : memref<2x64x32xf32, #copy.smem<swizzle = 128>>
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    {body}
    func.return
  }}
}}
"""
LOAD = (
    "copy.async_copy %x[%c0, %c0] to %buf[{slot}] barrier %bars[{slot}] {{arrive = false}} : "
    "memref<256x256xf32> to memref<2x64x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<2>"
)
EXPECT_TX = "copy.barrier_arrive_expect_tx %bars[{slot}], {bytes} : !copy.barrier<2>"
WAIT = "copy.barrier_wait %bars[{slot}], %p : !copy.barrier<2>"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        # Two phases of one barrier, the other barrier's phase between: each counts its own.
        ([("E", "%c0", 8192), ("L", "%c0"), ("W", "%c1"), ("W", "%c0")], None),
        ([("E", "%c0", 4096), ("L", "%c0"), ("W", "%c0")], "deliver"),
        ([("E", "%c0", 8192), ("L", "%c0"), ("L", "%c1"), ("W", "%c0"), ("W", "%c1")], None),
        # The copies of the next phase do not count.
        ([("L", "%c0"), ("E", "%c0", 8192), ("W", "%c0"), ("L", "%c0"), ("W", "%c0")], None),
        ([("W", "%c0"), ("E", "%c0", 16384), ("L", "%c0"), ("L", "%c0"), ("W", "%c0")], None),
        # Unknowable from the block: no wait after it, a dynamic index in the phase.
        ([("E", "%c0", 4096), ("L", "%c0")], None),
        ([("E", "%c0", 4096), ("L", "%c0"), ("W", "%i"), ("W", "%c0")], None),
        # A dynamic index before the phase started does not matter.
        ([("W", "%i"), ("W", "%c0"), ("E", "%c0", 4096), ("L", "%c0"), ("W", "%c0")], "deliver"),
        # A use of the group inside a nested region.
        (
            [("E", "%c0", 4096), ("L", "%c0"), ("R", ""), ("W", "%c0")],
            None,
        ),
    ],
)
def test_expect_tx_counts_its_phase(ctx, body, error):
    """TR16, one pass per block: the bytes of the copies between the previous and the next
    wait on the same barrier, unknown (no error) where the block cannot tell."""
    lines = []
    for kind, slot, *rest in body:
        if kind == "E":
            lines.append(EXPECT_TX.format(slot=slot, bytes=rest[0]))
        elif kind == "L":
            lines.append(LOAD.format(slot=slot))
        elif kind == "W":
            lines.append(WAIT.format(slot=slot))
        else:
            lines.append(f"scf.if %q {{\n {WAIT.format(slot='%c0')}\n }}")
    module = Parser(ctx, EXPECT.format(body="\n    ".join(lines))).parse_module()
    messages = [str(exc) for _, exc in verification_errors(module)]
    if error is None:
        assert messages == []
    else:
        assert len(messages) == 1
        assert error in messages[0]


SMEM_REF = "memref<2x64x32xf32, #copy.smem>"
STORE = "copy.async_copy %{buf}[%c0] to %x[%c0, %c0] : " + SMEM_REF + " to memref<256x256xf32>"


@pytest.mark.parametrize(
    ("body", "failing"),
    [
        (["write a", "store a"], [1]),
        (["write a", "fence", "store a"], []),
        (["write a", "store b", "store a"], [2]),
        (["write a", "store a", "store a"], [1]),
        # An op like one that passed still gets J16, the rule that reads the ops before it.
        (["store a", "write a", "store a"], [2]),
        (["write b", "store a"], []),
        (["write a", "fence", "write a", "store a", "store b"], [3]),
    ],
)
def test_tma_stores_see_the_fence(ctx, body, failing):
    """J16, one pass per block: a TMA store of a buffer the threads wrote since the last
    fence and the last store of that buffer fails."""
    lines = []
    for step in body:
        if step == "fence":
            lines.append("copy.fence_async_shared")
        elif step.startswith("write"):
            buf = step.split()[1]
            lines.append(f"memref.store %f, %{buf}[%c0, %c0, %c0] : {SMEM_REF}")
        else:
            lines.append(STORE.format(buf=step.split()[1]))
    text = f"""
    builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
      func.func @k(%x: memref<256x256xf32>, %f: f32) {{
        %c0 = arith.constant 0 : index
        %a = copy.alloc_smem : memref<2x64x32xf32, #copy.smem>
        %b = copy.alloc_smem : memref<2x64x32xf32, #copy.smem>
        {chr(10).join(lines)}
        func.return
      }}
    }}
    """
    module = Parser(ctx, text).parse_module()
    ops = list(next(op for op in module.walk() if op.name == "func.func").regions[0].block.ops)
    steps = ops[3:-1]
    errors = verification_errors(module)
    assert [steps.index(op) for op, _ in errors] == failing
    assert all("made visible to the TMA unit" in str(exc) for _, exc in errors)


def _naive_dominators(entry, blocks, successors):
    """Dominator sets by the textbook fixed point, over the blocks reachable from entry."""
    reachable, stack = {entry}, [entry]
    while stack:
        for succ in successors[stack.pop()]:
            if succ not in reachable:
                reachable.add(succ)
                stack.append(succ)
    preds = {b: [p for p in reachable if b in successors[p]] for b in reachable}
    dom = {b: set(reachable) for b in reachable}
    dom[entry] = {entry}
    changed = True
    while changed:
        changed = False
        for b in blocks:
            if b in reachable and b != entry:
                new = {b} | set.intersection(*(dom[p] for p in preds[b]))
                if new != dom[b]:
                    dom[b], changed = new, True
    return dom


@pytest.mark.parametrize("seed", range(20))
def test_dominator_tree_matches_dominator_sets(ctx, seed):
    rng = random.Random(seed)
    n = rng.randint(2, 12)
    successors = {i: sorted({rng.randrange(n) for _ in range(rng.randint(0, 2))}) for i in range(n)}
    lines = []
    for i in range(n):
        succ = successors[i]
        if not succ:
            end = "func.return"
        elif len(succ) == 1:
            end = f"cf.br ^b{succ[0]}"
        else:
            end = f"cf.cond_br %q, ^b{succ[0]}, ^b{succ[1]}"
        lines.append(f"^b{i}:\n  {end}")
    text = "func.func @f(%q: i1) {\n  cf.br ^b0\n" + "\n".join(lines) + "\n}"
    module: ModuleOp = Parser(ctx, text).parse_module()
    region = next(op for op in module.walk() if op.name == "func.func").regions[0]
    blocks = list(region.blocks)
    entry, body = blocks[0], blocks[1:]
    succ_blocks = {entry: [body[0]]}
    succ_blocks.update({body[i]: [body[j] for j in successors[i]] for i in range(n)})
    expected = _naive_dominators(entry, blocks, succ_blocks)
    tree = Dominance().tree(region)
    for a in blocks:
        assert tree.is_reachable(a) == (a in expected)
        for b in blocks:
            if a in expected and b in expected:
                assert tree.dominates(a, b) == (a in expected[b]), (seed, a, b)
