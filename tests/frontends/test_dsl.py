"""frontends.dsl, the concise kernel-building API (issue 32, item 3): the IR it builds is
the text form's (examples/tma_tile_copy.mlir, written by hand, and a ring kernel with a
loop, a branch and roles), Python ints become constants of the other operand's type, a
ring gives slot and parity in one call, loops carry values, each op is located at the
line that made it, and misuse is a clear error. The builders written on it keep their IR
(test_builder_ir_hashes.py); docs/frontend.md walks through it (test_frontend_walkthrough)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DictionaryAttr,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Block
from xdsl.parser import Parser
from xdsl.printer import Printer

from copy_dialect import ops as copy
from copy_dialect.errors import CopyDiagnosticError
from copy_tools.universe import make_context
from frontends.dsl import (
    Ring,
    Value,
    block_id,
    boolean,
    const,
    emit,
    for_range,
    if_,
    index,
    kernel,
    kernel_function,
    loop,
    module,
    result,
    thread_id,
    warp_specialize,
)
from frontends.locations import ImplicitBuilder

ROOT = Path(__file__).resolve().parents[2]
HERE = str(Path(__file__))
LINES = Path(__file__).read_text().splitlines()


def printed(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def parsed(text: str) -> ModuleOp:
    """The module of `text`, its values' names dropped (so that it prints as built IR does:
    `%0`, `%1`, ...)."""
    module = Parser(make_context(), text).parse_module()
    for op in module.walk():
        for value in op.results:
            value.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    return module


def line_of(marker: str) -> int:
    found = [n for n, text in enumerate(LINES, 1) if text.rstrip().endswith(f"# {marker}")]
    assert len(found) == 1, marker
    return found[0]


def test_the_example_tile_copy_is_the_text_forms_ir():
    gmem = MemRefType(f32, [4096, 4096])

    def body(x, y):
        c0, c64, phase = index(0), index(64), boolean(False)
        bx, by = block_id("x"), block_id("y")
        col, row = bx * c64, by * c64
        tile = result(
            copy.AllocSmemOp, MemRefType(f32, [64, 64], memory_space=copy.SmemSpaceAttr(16))
        )
        bar = result(copy.BarrierInitOp, 1)
        emit(copy.AsyncCopyOp, x, tile, src_indices=[row, col], barrier=bar, barrier_index=c0)
        emit(copy.BarrierWaitOp, bar, c0, phase)
        emit(copy.AsyncCopyOp, tile, y, dst_indices=[row, col])
        emit(copy.CommitGroupOp, "bulk")
        emit(copy.WaitGroupOp, "bulk", 0)

    built = kernel("tile_copy", [gmem, gmem], body, target="sm_90a", block=128)
    text = (ROOT / "examples" / "tma_tile_copy.mlir").read_text()
    assert printed(built) == printed(parsed(text))


RING_TEXT = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @ring(%x : memref<256x128xf32>, %y : memref<256x128xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>} {
    %buf = copy.alloc_smem : memref<2x64x128xf32, #copy.smem>
    %full = copy.barrier_init arrivals 1 : !copy.barrier<2>
    %empty = copy.barrier_init arrivals 1 : !copy.barrier<2>
    copy.warp_specialize warps [1, 1] {
    ^bb0(%t0 : index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      scf.for %i = %c0 to %c4 step %c1 {
        %c2 = arith.constant 2 : index
        %slot = arith.remui %i, %c2 : index
        %c2_1 = arith.constant 2 : index
        %lap = arith.divui %i, %c2_1 : index
        %c2_2 = arith.constant 2 : index
        %odd = arith.remui %lap, %c2_2 : index
        %c0_1 = arith.constant 0 : index
        %p = arith.cmpi ne, %odd, %c0_1 : index
        %true = arith.constant true
        %pp = arith.xori %p, %true : i1
        copy.barrier_wait %empty[%slot], %pp : !copy.barrier<2>
        %c64 = arith.constant 64 : index
        %row = arith.muli %i, %c64 : index
        %z = arith.constant 0 : index
        copy.async_copy %x[%row, %z] to %buf[%slot] barrier %full[%slot] : memref<256x128xf32> to memref<2x64x128xf32, #copy.smem>, !copy.barrier<2>
      }
    }, {
    ^bb0(%t1 : index):
      %d0 = arith.constant 0 : index
      %d1 = arith.constant 1 : index
      %d4 = arith.constant 4 : index
      scf.for %i = %d0 to %d4 step %d1 {
        %c2 = arith.constant 2 : index
        %slot = arith.remui %i, %c2 : index
        %c2_1 = arith.constant 2 : index
        %lap = arith.divui %i, %c2_1 : index
        %c2_2 = arith.constant 2 : index
        %odd = arith.remui %lap, %c2_2 : index
        %c0_1 = arith.constant 0 : index
        %p = arith.cmpi ne, %odd, %c0_1 : index
        copy.barrier_wait %full[%slot], %p : !copy.barrier<2>
        %c64 = arith.constant 64 : index
        %row = arith.muli %i, %c64 : index
        %z = arith.constant 0 : index
        copy.async_copy %buf[%slot] to %y[%row, %z] : memref<2x64x128xf32, #copy.smem> to memref<256x128xf32>
        copy.commit_group bulk
        copy.wait_group bulk 0 read_only
        %c1_1 = arith.constant 1 : index
        %started = arith.cmpi uge, %i, %c1_1 : index
        scf.if %started {
          copy.barrier_arrive %empty[%slot] issuer elected : !copy.barrier<2>
        }
      }
      copy.wait_group bulk 0
    }
    func.return
  }
}
"""  # noqa: E501 (MLIR text)


def ring(branch: bool = True) -> ModuleOp:
    gmem = MemRefType(f32, [256, 128])
    ring = Ring(2)

    def body(x, y):
        smem = MemRefType(f32, [2, 64, 128], memory_space=copy.SmemSpaceAttr(16))
        buf = result(copy.AllocSmemOp, smem)
        full, empty = result(copy.BarrierInitOp, 2, 1), result(copy.BarrierInitOp, 2, 1)

        def producer(t):
            with loop(4) as i:
                slot, phase = ring.producer_at(i)
                emit(copy.BarrierWaitOp, empty, slot, phase)
                emit(copy.AsyncCopyOp, x, buf, src_indices=[i * 64, index(0)], dst_indices=[slot],
                     barrier=full, barrier_index=slot)  # fmt: skip

        def storer(t):
            with loop(4) as i:
                slot, phase = ring.at(i)
                emit(copy.BarrierWaitOp, full, slot, phase)
                emit(copy.AsyncCopyOp, buf, y, src_indices=[slot], dst_indices=[i * 64, index(0)])
                emit(copy.CommitGroupOp, "bulk")
                emit(copy.WaitGroupOp, "bulk", 0, read_only=True)
                with if_(i >= 1):
                    emit(copy.BarrierArriveOp, empty, slot, issuer="elected")
            emit(copy.WaitGroupOp, "bulk", 0)

        warp_specialize([(1, producer), (1, storer)])

    return kernel("ring", [gmem, gmem], body, target="sm_90a", block=64, verify=False)


def test_loops_branches_roles_and_a_ring_are_the_text_forms_ir():
    assert printed(ring()) == printed(parsed(RING_TEXT))


def in_block(fn):
    """`fn()`'s ops, built into a fresh block; the block."""
    block = Block(arg_types=[IndexType()])
    with ImplicitBuilder(block):
        fn(Value(block.args[0]))
    return block


def test_ints_become_constants_of_the_other_sides_type():
    def fn(p):
        q = (p + 1) * 3 - 2
        assert q.type == IndexType()
        wide = const(5, i64) + 7
        assert wide.type == i64
        narrow = const(5, i32) // 2
        assert narrow.type == i32
        flag = boolean(True) ^ True
        assert flag.type == i1
        assert (10 - p).type == IndexType()

    ops = list(in_block(fn).ops)
    consts = [op for op in ops if isinstance(op, arith.ConstantOp)]
    types = [IndexType()] * 3 + [i64] * 2 + [i32] * 2 + [i1] * 2 + [IndexType()]
    assert [c.value.type for c in consts] == types
    names = [op.name for op in ops if not isinstance(op, arith.ConstantOp)]
    assert names == [
        "arith.addi", "arith.muli", "arith.subi", "arith.addi", "arith.divui", "arith.xori",
        "arith.subi",
    ]  # fmt: skip


def test_compares_are_unsigned_and_eq_ne_are_methods():
    def fn(p):
        for cmp in (p < 1, p <= 1, p > 1, p >= 1, p.eq(1), p.ne(1)):
            assert cmp.type == i1
        assert (p == p) is True  # Python's identity: a Value stays hashable

    predicates = [
        op.predicate.value.data for op in in_block(fn).ops if isinstance(op, arith.CmpiOp)
    ]
    assert predicates == [6, 7, 8, 9, 0, 1]  # ult, ule, ugt, uge, eq, ne


def test_a_ring_gives_slot_and_parity_in_one_call():
    def fn(p):
        slot, phase = Ring(4).at(p)
        assert slot.type == IndexType()
        assert phase.type == i1
        _, producer = Ring(4).producer_at(p)
        assert producer.type == i1

    names = [op.name for op in in_block(fn).ops if op.name != "arith.constant"]
    assert names == ["arith.remui", "arith.divui", "arith.remui", "arith.cmpi"] * 2 + ["arith.xori"]


@pytest.mark.parametrize("stages", [0, -1, 2.0, "4"])
def test_a_ring_needs_a_positive_int(stages):
    with pytest.raises(ValueError, match="expected a ring of 1 or more stages"):
        Ring(stages)


def test_a_loop_carries_values_and_must_yield_them():
    def fn(p):
        with for_range(8, carry=[p]) as body:
            body.carry(body.carried[0] + body.index)
        assert len(body.results) == 1
        with pytest.raises(ValueError, match="must yield them"):
            with for_range(8, carry=[p]):
                pass
        with pytest.raises(ValueError, match="expected 1 carried values, got 2"):
            with for_range(8, carry=[p]) as again:
                again.carry(p, p)

    in_block(fn)


@pytest.mark.parametrize("bad", [1.5, "3", None])
def test_a_constant_of_no_int_is_a_type_error(bad):
    with pytest.raises(TypeError, match="expected"):
        in_block(lambda p: p + bad)


def test_each_op_is_located_at_the_line_that_made_it():
    block = in_block(lambda p: emit(copy.CommitGroupOp, "bulk"))  # dsl: located here
    (op,) = block.ops
    assert op.location.filename.data == HERE
    assert op.location.line.data == line_of("dsl: located here")
    loop_block = in_block(lambda p: p * 3)  # dsl: operators too
    assert all(op.location.line.data == line_of("dsl: operators too") for op in loop_block.ops)


def test_a_mistake_in_a_dsl_kernel_is_reported_at_its_line():
    gmem = MemRefType(f32, [256, 256])

    def body(x, y):
        buf = result(
            copy.AllocSmemOp, MemRefType(f32, [64, 64], memory_space=copy.SmemSpaceAttr(16))
        )
        bar = result(copy.BarrierInitOp, 1, 0)  # dsl: mistake
        emit(
            copy.AsyncCopyOp,
            x,
            buf,
            src_indices=[index(0), index(0)],
            barrier=bar,
            barrier_index=index(0),
        )

    with pytest.raises(CopyDiagnosticError) as info:
        kernel("k", [gmem, gmem], body, target="sm_90a", block=128)
    assert info.value.location[:2] == (HERE, line_of("dsl: mistake"))
    assert str(info.value).startswith(f"{HERE}:{line_of('dsl: mistake')}:")
    assert "I7" in info.value.rules


TWO_KERNELS_TEXT = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @first(%a: memref<128xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>} {
    %t = gpu.thread_id x
    %v = memref.load %a[%t] : memref<128xf32>
    func.return
  }
  func.func @second(%a: memref<128xf32> {copy.predecessor_access = "none"}, %b: memref<128xf32>) attributes {gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>, copy.cluster = array<i32: 2, 1, 1>} {
    copy.grid_dependency_wait
    %t = gpu.thread_id x
    %v = memref.load %b[%t] : memref<128xf32>
    func.return
  }
}
"""  # noqa: E501


def two_kernels(verify: bool = True, early: bool = False) -> ModuleOp:
    vector = MemRefType(f32, [128])

    def load(array):
        emit(memref.LoadOp.get, array, [thread_id()])

    def second(a, b):
        if early:
            emit(memref.LoadOp.get, b, [thread_id()])  # dsl: early read
        emit(copy.GridDependencyWaitOp)
        load(b)

    marks = [DictionaryAttr({copy.PREDECESSOR_ACCESS: StringAttr("none")}), DictionaryAttr({})]
    return module(
        [
            kernel_function("first", [vector], load, block=128),
            kernel_function(
                "second", [vector] * 2, second, block=128, cluster=[2, 1, 1], arg_attrs=marks
            ),
        ],
        target="sm_90a",
        verify=verify,
    )


def test_a_module_of_several_kernels_is_the_text_forms_ir():
    assert printed(two_kernels()) == printed(parsed(TWO_KERNELS_TEXT))


def test_a_module_of_several_kernels_is_verified():
    two_kernels(early=True, verify=False)  # not verified: built as asked
    with pytest.raises(CopyDiagnosticError) as info:
        two_kernels(early=True)
    assert info.value.location[:2] == (HERE, line_of("dsl: early read"))
    assert "GD2" in info.value.rules
