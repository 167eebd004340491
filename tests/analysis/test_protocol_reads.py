"""What the protocol reads of a kernel's values (`analysis.protocol.reads`): the math of a
kernel's consumers (values no copy op, condition, bound or SMEM index reads) is skipped by
the walk, and everything an index, a slot or a parity is computed from is still followed,
through loop-carried values and scf.if results."""

from __future__ import annotations

import warnings

from xdsl.dialects import func
from xdsl.parser import Parser

from analysis.protocol import check_protocol, render
from analysis.protocol.analysis import kernel_facts, protocol_ops
from analysis.protocol.reads import unread_ops
from copy_tools.universe import make_context
from tests.corpus import KERNELS

RELEASE = "          copy.barrier_arrive %empty[%s] issuer warps : !copy.barrier<4>\n"


def with_math(ops: int = 40) -> str:
    """The pingpong GEMM with `ops` f32 ops of math on the k-block's sum in the first
    consumer's k loop, before it releases the slot, their result carried to the next
    k-block (as a softmax or a scale is)."""
    text = next(k for k in KERNELS if k.name == "gemm_pingpong").text()
    assert text.count(RELEASE + "          scf.yield %sb : f32") >= 1
    math = ["          %math0 = arith.mulf %sb, %sb : f32"]
    for i in range(1, ops):
        kind = "addf" if i % 2 else "mulf"
        math.append(f"          %math{i} = arith.{kind} %math{i - 1}, %sb : f32")
    return text.replace(
        RELEASE + "          scf.yield %sb : f32",
        "\n".join(math) + "\n" + RELEASE + f"          scf.yield %math{ops - 1} : f32",
        1,
    )


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def kernel_of(module) -> func.FuncOp:
    return next(op for op in module.walk() if isinstance(op, func.FuncOp))


def arith_is_generic(op) -> bool:
    return op.name.startswith("arith.") or op.name == "vector.broadcast"


def unread(fn: func.FuncOp) -> frozenset:
    return unread_ops(fn, arith_is_generic, kernel_facts(fn, protocol_ops(fn)).loops)


def names(ops) -> dict[str, int]:
    found: dict[str, int] = {}
    for op in ops:
        found[op.name] = found.get(op.name, 0) + 1
    return found


def test_the_math_of_a_consumer_is_unread_and_the_proof_is_unchanged():
    text = with_math(40)
    fn = kernel_of(parse(text))
    skipped = unread(fn)
    # the 40 ops of math, each consumer's f32 sum of its k-block's elements (extf, addf)
    # from %zero, the vector of the epilogue's stores, and the producer's unused %lane8:
    # nothing the protocol reads
    assert names(skipped) == {
        "arith.mulf": 20,
        "arith.addf": 20 + 4,
        "arith.extf": 4,
        "arith.constant": 1,
        "vector.broadcast": 2,
        "arith.remui": 1,
    }
    # every op a slot, a parity, a coordinate or a condition comes from is followed
    read = {op.name for op in fn.walk() if arith_is_generic(op) and op not in skipped}
    assert {"arith.remui", "arith.divui", "arith.cmpi", "arith.xori", "arith.muli"} <= read
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [render(f) for f in check_protocol(parse(text))] == []


def test_a_mistake_is_found_the_same_with_the_math_as_without():
    plain = next(k for k in KERNELS if k.name == "gemm_pingpong").text()
    # the first consumer releases the slot before it reads it (the release moved up)
    wait = "          copy.barrier_wait %full[%s], %phase : !copy.barrier<4>\n"
    found = []
    for text in (plain, with_math(40)):
        early = text.replace(RELEASE, "", 1).replace(wait, wait + RELEASE, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found.append([(f.severity, f.rules, str(f)) for f in check_protocol(parse(early))])
    assert found[0] == found[1]
    assert [severity for severity, _, _ in found[0]] == ["error"]


INDEX_THROUGH_MATH = """
builtin.module attributes {copy.target = #copy.target<"sm_90a">} {
  func.func @k(%x: memref<1024xf32>) attributes {gpu.kernel,
      gpu.known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %buf = copy.alloc_smem : memref<4x256xf32, #copy.smem>
    %t = gpu.thread_id x
    %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %one) -> (f32) {
      %scaled = arith.mulf %acc, %half : f32
      %slot = arith.fptoui %scaled : f32 to i32
      %s = arith.index_cast %slot : i32 to index
      %v = memref.load %buf[%s, %t] : memref<4x256xf32, #copy.smem>
      %w = arith.addf %v, %v : f32
      %next = arith.addf %acc, %one : f32
      scf.yield %next : f32
    }
    %flag = arith.cmpi eq, %t, %c0 : index
    %z = scf.if %flag -> (f32) {
      %u = arith.addf %r, %r : f32
      scf.yield %u : f32
    } else {
      scf.yield %r : f32
    }
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    func.return
  }
}
"""


def test_an_index_computed_through_carried_math_is_read():
    fn = kernel_of(parse(INDEX_THROUGH_MATH))
    skipped = unread(fn)
    by_name = {op.results[0].name_hint: op for op in fn.walk() if op.results}
    # the SMEM index comes from the carried %acc: its update and what it starts from count
    for name in ("scaled", "slot", "s", "next", "one", "half"):
        assert by_name[name] not in skipped, name
    # the loaded value's use, the loop's result and the scf.if's math only give floats
    for name in ("w", "u"):
        assert by_name[name] in skipped, name
