"""The protocol analysis sees the SMEM a wgmma reads through its descriptors (issue 31,
item 2): the reads go on from the issue until the `nvvm.wgmma.wait.group.sync.aligned`
that retires their group, and releasing a slot before that is P2 at the release.

As a property over CUTLASS's sm90 consumer mainloop (`wgmma_kernels`): for rings of 2 to 6
stages and one or no wgmma group kept in flight, with the trip count a kernel argument, the
correct kernel has no finding at all, and each mistake is exactly one error, at the op whose
edit fixes it, and the interpreter (the analysis's oracle, which runs the wgmmas and logs
their reads) agrees: the correct kernels run clean, each mistake races or leaves a read in
flight. Then the descriptors as SMEM values (`analysis.smem_values`): the slot a
descriptor points into, kept while the kernel steps along K inside the tile."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import interpreter
from analysis.protocol import check_protocol
from analysis.smem_values import smem_values
from copy_tools.universe import make_context
from tests.analysis.wgmma_kernels import kernel, tcgen05_kernel

STAGES = [2, 3, 4, 5, 6]


def findings(text: str) -> list[tuple[str, str, str, str]]:
    module = Parser(make_context(), text).parse_module()
    return [(f.severity, ",".join(f.rules), f.op.name, str(f)) for f in check_protocol(module)]


@pytest.mark.parametrize("depth", [0, 1])
@pytest.mark.parametrize("stages", STAGES)
def test_cutlass_mainloop_is_proven(stages, depth):
    assert findings(kernel(stages, depth)) == []


@pytest.mark.parametrize("stages", STAGES)
@pytest.mark.parametrize("bug", ["release_before_wait", "release_newest", "declared"])
def test_release_before_the_retiring_wait_is_p2_at_the_release(stages, bug):
    (found,) = findings(kernel(stages, 1, bug))
    severity, rules, op, message = found
    assert (severity, rules, op) == ("error", "P2", "copy.barrier_arrive")
    assert "hands %smem_a[0] back while" in message
    assert "may still be reading it" in message


@pytest.mark.parametrize("stages", STAGES)
def test_a_wgmma_never_committed_is_never_retired(stages):
    found = findings(kernel(stages, 0, "no_commit"))
    assert [(s, r, o) for s, r, o, _ in found] == [
        ("error", "P2", "copy.barrier_arrive"),
        ("error", "P7", "copy.warp_specialize"),
    ]
    assert "never committed" in found[1][3]


@pytest.mark.parametrize("stages", [2, 4])
def test_a_role_ending_with_reads_in_flight_is_p7(stages):
    # With one group kept in flight, the wait after the loop is what retires the last.
    ((severity, rules, op, message),) = findings(kernel(stages, 1, "exit"))
    assert (severity, rules, op) == ("error", "P7", "copy.warp_specialize")
    assert message.startswith("role 1 ends while the wgmma")
    # With none in flight, the loop's own wait retired every group: no wait is missing.
    assert findings(kernel(stages, 0, "exit")) == []


DESCRIPTORS = """
func.func @f(%s: index) {
  %a = copy.alloc_smem : memref<4x64x64xf16, #copy.smem<swizzle = 128>>
  %d = copy.matrix_descriptor %a[%s] major k : memref<4x64x64xf16, #copy.smem<swizzle = 128>> -> i64
  %c2 = arith.constant 2 : i64
  %c510 = arith.constant 510 : i64
  %c512 = arith.constant 512 : i64
  %big = arith.constant 4611686018427387968 : i64
  %d1 = arith.addi %d, %c2 : i64
  %d2 = arith.addi %c510, %d1 : i64
  %d3 = arith.addi %d, %c512 : i64
  %d4 = arith.ori %d, %big : i64
  %s2 = arith.index_cast %s : index to i64
  %d5 = arith.addi %d, %s2 : i64
  func.return
}
"""


def test_a_descriptor_points_into_its_slot_while_it_steps_inside_the_tile():
    module = Parser(make_context(), DESCRIPTORS).parse_module()
    fn = next(op for op in module.walk() if op.name == "func.func")
    values = {v.name_hint: o for v, o in smem_values(fn).origins.items() if v.name_hint}
    s = fn.body.blocks[0].args[0]
    # A 64x64 f16 tile is 512 units of 16 bytes.
    assert (values["d"].slot, values["d"].room) == ((s,), 512)
    assert (values["d1"].slot, values["d1"].room) == ((s,), 510)
    # 2 + 510 reaches the next slot: the slot is no longer known.
    assert values["d2"].slot == (None,)
    assert values["d3"].slot == (None,)
    # An or moves the address by the constant's address bits (64 here, beside the layout
    # bits 62-63) at most.
    assert (values["d4"].slot, values["d4"].room) == ((s,), 512 - 64)
    assert values["d5"].slot == (None,)


@pytest.mark.parametrize("stages", STAGES)
def test_tcgen05_mainloop_releasing_through_the_commit_is_proven(stages):
    assert findings(tcgen05_kernel(stages)) == []


@pytest.mark.parametrize("stages", STAGES)
def test_tcgen05_release_before_the_commit_is_p2_at_the_release(stages):
    (found,) = findings(tcgen05_kernel(stages, "release_before_commit"))
    severity, rules, op, message = found
    assert (severity, rules, op) == ("error", "P2", "copy.barrier_arrive")
    assert "the tcgen05.mma (nvvm.tcgen05.mma) may still be reading it" in message
    found = findings(tcgen05_kernel(stages, "no_commit"))
    assert [(s, r, o) for s, r, o, _ in found] == [
        ("error", "P2", "copy.barrier_arrive"),
        ("error", "P7", "copy.warp_specialize"),
    ]


def test_a_consumer_that_is_not_a_warpgroup_of_the_block_is_p10():
    # With a producer role of one warp, the consumer's warps 1-4 straddle warpgroups 0 and 1.
    # (The wait after the loop is reported too, for the trip count 0.)
    found = findings(kernel(4, 1, producer_warps=1))
    assert [(s, r, o) for s, r, o, _ in found] == [
        ("error", "P10", "nvvm.wgmma.fence.aligned"),
        ("error", "P10", "nvvm.wgmma.wait.group.sync.aligned"),
    ]
    assert "of warpgroup 0 (threads 0-127) only some threads reach it" in found[0][3]


ORACLE = [
    *((stages, depth, None) for stages in STAGES for depth in (0, 1)),
    *((stages, 1, bug) for stages in (2, 5) for bug in ("release_before_wait", "release_newest")),
    (3, 0, "no_commit"),
    (4, 1, "exit"),
]


@pytest.mark.parametrize(("stages", "depth", "bug"), ORACLE, ids=str)
def test_the_interpreter_agrees(stages, depth, bug):
    """Run for 2S + 1 k-blocks (every slot refilled, the ring wrapped twice): violations
    exactly where the analysis reports an error."""
    text = kernel(stages, depth, bug)
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-4, 5, (1024, 1024)).astype(np.float16) for _ in range(2))
    c = np.zeros((128, 64), np.float32)
    module = Parser(make_context(), text).parse_module()
    run = interpreter.run(module, a, b, c, 64 * (2 * stages + 1), grid=(1,), seed=0)
    errors = [f for f in findings(text) if f[0] == "error"]
    assert bool(run.violations) == bool(errors), [str(v) for v in run.violations]
