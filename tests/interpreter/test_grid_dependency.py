"""Programmatic dependent launch under the interpreter (interpreter/grid_dependency.py):
`run_chain` runs `kernels.pdl_chain` bit-exact and race-free, and reports the early read of
the chain built with `early_read=True, verify=False` (the proof's GD2) as a race of the
dependent's load with the primary's store, once per block, as it does that of a verified
chain whose false `copy.predecessor_access` mark let the read through; an early write (or
atomic) of what the primary reads is GD3, and a TMA load of the primary's output issued
before the wait is GD2 too (after it, none); the wait is a thread's (threads that skipped it
race, those that passed it do not); a kernel that does not wait is launched without PDL and
never overlaps; a single launch has no predecessor. Runtime: `programmatic=True` on a kernel
that does not wait is refused before CUDA."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from copy_tools import runtime
from copy_tools.universe import make_context
from facts.errors import ArgumentError
from frontends import kernels
from interpreter.grid_dependency import Launch, run_chain
from interpreter.run import interpret

N = 512


def chain(module, x, w, y, z):
    grid = kernels.pdl_grid(N)
    return run_chain(module, [Launch("produce", [x, y], grid), Launch("consume", [w, y, z], grid)])


def arrays():
    rng = np.random.default_rng(33)
    x = rng.standard_normal(N).astype(np.float32)
    w = rng.standard_normal(N).astype(np.float32)
    y = np.full(N, np.nan, dtype=np.float32)
    z = np.full(N, np.nan, dtype=np.float32)
    return x, w, y, z


@pytest.mark.parametrize("trigger", kernels.PDL_TRIGGERS)
def test_chain_is_exact_and_race_free(trigger):
    x, w, y, z = arrays()
    buffers, violations = chain(kernels.pdl_chain(N, trigger=trigger), x, w, y, z)
    assert violations == []
    x2, y2, w2, z2 = buffers  # in order of first use: produce(x, y), consume(w, y, z)
    want_y = x * np.float32(2) + np.float32(1)
    assert np.array_equal(y2, want_y)
    assert np.array_equal(z2, w * want_y + w)
    assert np.array_equal(x2, x)
    assert np.array_equal(w2, w)
    assert np.isnan(y).all()  # the caller's arrays are left as they were


def test_early_read_is_a_race():
    x, w, y, z = arrays()
    module = kernels.pdl_chain(N, early_read=True, verify=False)
    _, violations = chain(module, x, w, y, z)
    assert violations
    assert {v.rule for v in violations} == {"GD2"}
    assert all(v.op.name == "memref.load" and v.other.name == "memref.store" for v in violations)
    # Every block's early read races (one report per block: the first pair of ops).
    assert len({v.cta for v in violations}) == N // kernels.PDL_BLOCK
    assert "before copy.grid_dependency_wait" in violations[0].message


def test_a_false_mark_is_caught():
    # y marked "read" (produce writes it): the proof trusts the mark, the chain run does not.
    x, w, y, z = arrays()
    module = kernels.pdl_chain(N, early_read=True, output_mark="read")
    _, violations = chain(module, x, w, y, z)
    assert {v.rule for v in violations} == {"GD2"}
    assert len({v.cta for v in violations}) == N // kernels.PDL_BLOCK


def parse(text: str):
    return Parser(make_context(), text).parse_module()


KERNELS = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @produce(%x: memref<128xf32>, %y: memref<128xf32>) attributes {{{attributes}}} {{
    copy.launch_dependents
    %t = gpu.thread_id x
    %a = memref.load %x[%t] : memref<128xf32>
    memref.store %a, %y[%t] : memref<128xf32>
    func.return
  }}
  func.func @consume(%x: memref<128xf32>, %y: memref<128xf32>, %z: memref<128xf32>)
      attributes {{{attributes}}} {{
    %t = gpu.thread_id x
    %c64 = arith.constant 64 : index
{body}
    func.return
  }}
}}
"""


def run_text(body: str):
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, dtype=np.float32)
    z = np.zeros(128, dtype=np.float32)
    attributes = "gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>"
    module = parse(KERNELS.format(body=body, attributes=attributes))
    return run_chain(
        module,
        [Launch("produce", [x, y], (1, 1, 1)), Launch("consume", [x, y, z], (1, 1, 1))],
    )


def test_early_write_of_what_the_primary_reads_is_a_race():
    _, violations = run_text(
        """    %one = arith.constant 1.0 : f32
    memref.store %one, %x[%t] : memref<128xf32>
    copy.grid_dependency_wait"""
    )
    assert [(v.rule, v.op.name, v.other.name) for v in violations] == [
        ("GD3", "memref.store", "memref.load")
    ]


def test_the_wait_is_a_thread_s():
    # Threads 0-63 wait, 64-127 do not: each thread reads its own element, so the race is
    # on elements 64-127 only.
    _, violations = run_text(
        """    %low = arith.cmpi ult, %t, %c64 : index
    scf.if %low {
      copy.grid_dependency_wait
    }
    %v = memref.load %y[%t] : memref<128xf32>
    memref.store %v, %z[%t] : memref<128xf32>"""
    )
    assert [v.rule for v in violations] == ["GD2"]
    assert "element 64 " in violations[0].message
    assert "(64 elements in all)" in violations[0].message


def test_reads_after_the_wait_do_not_race():
    buffers, violations = run_text(
        """    copy.grid_dependency_wait
    %v = memref.load %y[%t] : memref<128xf32>
    memref.store %v, %z[%t] : memref<128xf32>"""
    )
    assert violations == []
    assert np.array_equal(buffers[2], np.arange(128, dtype=np.float32))


def test_a_kernel_that_does_not_wait_does_not_overlap():
    # Launched without programmatic serialization: it starts once produce completed.
    _, violations = run_text(
        """    %v = memref.load %y[%t] : memref<128xf32>
    memref.store %v, %z[%t] : memref<128xf32>"""
    )
    assert violations == []


def test_a_single_launch_has_no_predecessor():
    x, w, y, z = arrays()
    module = kernels.pdl_chain(N)
    (out,) = [interpret(module, w, y, z, grid=kernels.pdl_grid(N), kernel="consume")[2]]
    assert np.isnan(out).all()  # y was NaN: the wait returned at once, nothing ran before


def test_programmatic_launch_of_a_kernel_that_does_not_wait_is_refused():
    program = runtime.compile(kernels.pdl_chain(N))
    x, w, y, z = arrays()
    with pytest.raises(ArgumentError, match="programmatic=True only for a kernel that waits"):
        program.kernel("produce").prepare(x, y, grid=kernels.pdl_grid(N), programmatic=True)


TMA_CHAIN = """
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @produce(%y: memref<64x64xf32>) attributes {{{attributes}}} {{
    %t = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    memref.store %one, %y[%c0, %t] : memref<64x64xf32>
    func.return
  }}
  func.func @consume(%y: memref<64x64xf32>, %z: memref<64x64xf32>) attributes {{{attributes}}} {{
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<64x64xf32, #copy.smem>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
{first}
    copy.async_copy %y[%c0, %c0] to %buf barrier %bar[%c0]
      : memref<64x64xf32> to memref<64x64xf32, #copy.smem>, !copy.barrier<1>
{second}
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    copy.async_copy %buf to %z[%c0, %c0] : memref<64x64xf32, #copy.smem> to memref<64x64xf32>
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}
"""


@pytest.mark.parametrize("early", [True, False])
def test_tma_load_before_the_wait(early):
    wait = "    copy.grid_dependency_wait"
    attributes = "gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>"
    text = TMA_CHAIN.format(
        attributes=attributes, first="" if early else wait, second=wait if early else ""
    )
    y = np.zeros((64, 64), dtype=np.float32)
    z = np.zeros((64, 64), dtype=np.float32)
    buffers, violations = run_chain(
        parse(text), [Launch("produce", [y], (1, 1, 1)), Launch("consume", [y, z], (1, 1, 1))]
    )
    if early:
        assert [(v.rule, v.op.name, v.other.name) for v in violations] == [
            ("GD2", "copy.async_copy", "memref.store")
        ]
        assert "(64 elements in all)" in violations[0].message
    else:
        assert violations == []
        assert np.array_equal(buffers[1][0], np.ones(64, dtype=np.float32))


def test_an_early_atomic_is_a_write():
    _, violations = run_text(
        """    %one = arith.constant 1.0 : f32
    %old = "memref.atomic_rmw"(%one, %x, %t) <{kind = 0 : i64}>
      : (f32, memref<128xf32>, index) -> f32
    copy.grid_dependency_wait"""
    )
    assert [(v.rule, v.op.name, v.other.name) for v in violations] == [
        ("GD3", "memref.atomic_rmw", "memref.load")
    ]


@pytest.mark.parametrize("early", [False, True])
def test_an_upstream_griddepcontrol_wait_orders_the_chain(early: bool):
    """`nvvm.griddepcontrol wait` in input IR (a frontend that emits NVVM) is the kernel's
    wait under the interpreter too: the chain is exact and race-free, and a read of the
    predecessor's output moved above it races (GD2)."""
    from tests.passes.test_grid_dependency import upstream_chain

    x, w, y, z = arrays()
    text = upstream_chain(early=early).replace("256", str(N))
    buffers, violations = chain(Parser(make_context(), text).parse_module(), x, w, y, z)
    if early:
        assert violations
        assert {v.rule for v in violations} == {"GD2"}
        return
    assert violations == []
    want_y = x * np.float32(2) + np.float32(1)
    assert np.array_equal(buffers[3], w * want_y + w)


GATHER_CHAIN = """
builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @produce(%y: memref<64x64xf32>) attributes {{{attributes}}} {{
    %t = gpu.thread_id x
    %c2 = arith.constant 2 : index
    %one = arith.constant 1.0 : f32
    memref.store %one, %y[%c2, %t] : memref<64x64xf32>
    func.return
  }}
  func.func @consume(%y: memref<64x64xf32>) attributes {{{attributes}}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %false = arith.constant false
    %buf = copy.alloc_smem : memref<4x32xf32, #copy.smem<swizzle = 128>>
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
{first}
    copy.gather4 %y rows [%c0, %c1, %c2, %c3] column [%c0] to %buf barrier %bar[%c0]
      : memref<64x64xf32> to memref<4x32xf32, #copy.smem<swizzle = 128>>, !copy.barrier<1>
{second}
    copy.barrier_wait %bar[%c0], %false : !copy.barrier<1>
    func.return
  }}
}}
"""


@pytest.mark.parametrize("early", [True, False])
def test_gather4_before_the_wait(early):
    """A TMA gather4 is logged like a tiled copy: its four rows read before the wait race
    with the primary's store of row 2 (GD2)."""
    wait = "    copy.grid_dependency_wait"
    attributes = "gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>"
    text = GATHER_CHAIN.format(
        attributes=attributes, first="" if early else wait, second=wait if early else ""
    )
    y = np.zeros((64, 64), dtype=np.float32)
    _, violations = run_chain(
        parse(text), [Launch("produce", [y], (1, 1, 1)), Launch("consume", [y], (1, 1, 1))]
    )
    if early:
        assert [(v.rule, v.op.name, v.other.name) for v in violations] == [
            ("GD2", "copy.gather4", "memref.store")
        ]
    else:
        assert violations == []


@pytest.mark.parametrize("early", [True, False])
def test_im2col_load_before_the_wait(early):
    """An im2col load is logged like a tiled copy (the pixels' channels inside the array):
    read before the wait, it races with the primary's stores of the rows it reads (GD2)."""
    from tests.interpreter import test_im2col as im2col

    case = im2col.CASES["nwc"]  # x: 3 x 37 x 8 f16
    wait = "    copy.grid_dependency_wait\n"
    body = (wait + "{load}" if not early else "{load}" + wait) + im2col.WAIT + im2col.STORE
    text = im2col.source(case, body=body).replace("func.func @k(", "func.func @consume(")
    produce = (
        "  func.func @produce(%x: memref<3x37x8xf16>) attributes {gpu.kernel, "
        "gpu.known_block_size = array<i32: 64, 1, 1>} {\n"
        "    %t = gpu.thread_id x\n"
        "    %c0 = arith.constant 0 : index\n"
        "    %c8 = arith.constant 8 : index\n"
        "    %row = arith.divui %t, %c8 : index\n"
        "    %ch = arith.remui %t, %c8 : index\n"
        "    %one = arith.constant 1.0 : f16\n"
        "    memref.store %one, %x[%c0, %row, %ch] : memref<3x37x8xf16>\n"
        "    func.return\n"
        "  }\n"
    )
    head, tail = text.split("  func.func @consume(", 1)
    module = parse(head + produce + "  func.func @consume(" + tail)
    x, y = im2col.inputs(case)
    scalars = [*case[7], *case[8]]
    _, violations = run_chain(
        module,
        [Launch("produce", [x], (1, 1, 1)), Launch("consume", [x, y, *scalars], (1, 1, 1))],
    )
    if early:
        assert {(v.rule, v.op.name, v.other.name) for v in violations} == {
            ("GD2", "copy.im2col_load", "memref.store")
        }
    else:
        assert violations == []
