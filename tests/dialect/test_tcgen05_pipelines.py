"""`copy_dialect.tmem.pipelined`: the pairs of one thread's asynchronous tcgen05 operations
that execute in their issue order (PTX ISA 9.7.16.6.2, "Pipelined tcgen05 Instructions"):
tcgen05.mma -> tcgen05.mma of one accumulator and shape, tcgen05.cp -> tcgen05.mma,
tcgen05.shift -> tcgen05.mma, tcgen05.shift -> tcgen05.cp 4x256b and tcgen05.mma ->
tcgen05.shift, each of one CTA group; every other pair may execute in either order, which
the protocol analysis and the interpreter hold against two of a thread's ops on the same
TMEM columns (P14)."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser

from copy_dialect.tmem import pipelined
from copy_tools.universe import make_context

TMEM = "#copy.tmem"
ACC = f"memref<128x128xf32, {TMEM}>"
META = f"memref<128x512xi2, {TMEM}>"
IDESC = "copy.mma_instruction_descriptor kind f16 m 128 n {n} a f16 b f16 d f32{sparse} : i32"
TYPES = "(!llvm.ptr<6>, i64, i64, i32, i1{meta})"


def mma(d: str, idesc: str, group: int = 1, meta: str = "") -> str:
    name = "nvvm.tcgen05.mma.sp" if meta else "nvvm.tcgen05.mma"
    attrs = "{kind = #nvvm.tcgen05_mma_kind<f16>, " f"ctaGroup = #nvvm.cta_group<cta_{group}>}}"
    operands = f"{d}, %a, %b, {idesc}, %e" + (f", {meta}" if meta else "")
    return f"  {name} {operands} {attrs} : " + TYPES.format(meta=", !llvm.ptr<6>" if meta else "")


KERNEL = "\n".join([
    "func.func @ops(%col: index, %a: i64, %b: i64, %e: i1) "
    '  attributes {copy.target = #copy.target<"sm_100a">} {',
    f"  %acc = copy.tmem_alloc : {ACC}",
    f"  %d = builtin.unrealized_conversion_cast %acc : {ACC} to !llvm.ptr<6>",
    f"  %d2 = builtin.unrealized_conversion_cast %acc : {ACC} to !llvm.ptr<6>",
    f"  %other = copy.tmem_alloc : {ACC}",
    f"  %o = builtin.unrealized_conversion_cast %other : {ACC} to !llvm.ptr<6>",
    f"  %meta = copy.tmem_alloc : {META}",
    f"  %m = builtin.unrealized_conversion_cast %meta : {META} to !llvm.ptr<6>",
    "  %i64 = " + IDESC.format(n=64, sparse=""),
    "  %i64b = " + IDESC.format(n=64, sparse=""),
    "  %i128 = " + IDESC.format(n=128, sparse=""),
    "  %sp = " + IDESC.format(n=64, sparse=" sparse selector 1"),
    "  %tile = copy.alloc_smem : memref<128x8xf32, #copy.smem<swizzle = 32>>",
    "  %rows = copy.alloc_smem : memref<4x64xi8, #copy.smem>",
    mma("%d", "%i64"),
    mma("%d2", "%i64b"),
    mma("%d", "%i128"),
    mma("%o", "%i64"),
    mma("%d", "%sp", meta="%m"),
    mma("%d", "%i64", group=2),
    "  copy.smem_to_tmem %tile to %acc[%col] shape shape_128x256b : "
    f"memref<128x8xf32, #copy.smem<swizzle = 32>>, {ACC}",
    "  copy.smem_to_tmem %rows to %acc[%col] shape shape_4x256b : "
    f"memref<4x64xi8, #copy.smem>, {ACC}",
    f"  copy.tmem_shift %acc[%col] : {ACC}",
    "  func.return",
    "}",
])  # fmt: skip


@pytest.fixture(scope="module")
def ops():
    module = Parser(make_context(), KERNEL).parse_module()
    prefixes = ("nvvm.tcgen05.mma", "copy.smem_to")
    found = [op for op in module.walk() if op.name.startswith(prefixes)]
    found += [op for op in module.walk() if op.name == "copy.tmem_shift"]
    mma, mma_alias, mma_wide, mma_other, mma_sp, mma_pair, cp, cp4x256, shift = found
    return locals()


@pytest.mark.parametrize(
    ("first", "second", "ordered"),
    [
        ("mma", "mma_alias", True),  # one accumulator (two casts of it), one shape
        ("mma", "mma_wide", False),  # another N
        ("mma", "mma_other", False),  # another accumulator
        ("mma", "mma_sp", False),  # dense then sparse: another shape
        ("mma", "mma_pair", False),  # another CTA group
        ("cp", "mma", True),
        ("cp", "mma_sp", True),  # the metadata copied, then the sparse MMA that reads it
        ("shift", "mma", True),
        ("shift", "cp4x256", True),
        ("shift", "cp", False),  # only the 4x256b copy follows a shift
        ("mma", "shift", True),
        ("mma", "cp", False),  # a copy over what an earlier MMA reads: either order
        ("mma_sp", "cp", False),
        ("cp", "cp", False),
        ("cp", "shift", False),
    ],
)
def test_the_isa_pipelines(ops, first: str, second: str, ordered: bool):
    assert pipelined(ops[first], ops[second]) is ordered
