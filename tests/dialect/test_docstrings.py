"""Every op's docstring example parses and verifies (in a kernel that defines its values)."""

from __future__ import annotations

import inspect
import re

import pytest
from xdsl.parser import Parser

from copy_dialect import attributes as copy_attributes
from copy_dialect import ops as copy

# The values each example uses, as kernel arguments, and the target it needs.
ARGUMENTS = {
    "%x": "memref<4096x4096xf32>",
    "%i": "index",
    "%j": "index",
    "%slot": "index",
    "%col": "index",
    "%parity": "i1",
    "%v": "vector<4xf32>",
    "%peer": "index",
    "%img": "memref<2x9x9x64xf16>",
    "%n": "index",
    "%h": "index",
    "%w": "index",
    "%c": "index",
    "%r": "i16",
    "%s": "i16",
    "%rows": "i32",
    "%mask": "i16",
}
PRELUDE = {
    "%buf": "%buf = copy.alloc_smem : memref<2x64x64xf32, #copy.smem>",
    "%bars": "%bars = copy.barrier_init arrivals 1 : !copy.barrier<2>",
    "%acc": "%acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>",
    "%tile": "%tile = copy.alloc_smem : memref<128x8xf32, #copy.smem<swizzle = 32>>",
    "%pixels": "%pixels = copy.alloc_smem : memref<2x128x64xf16, #copy.smem>",
    "%tiles": "%tiles = copy.alloc_smem : memref<2x4x64xf32, #copy.smem>",
    "%resp": "%resp = copy.alloc_smem : memref<2x16xi8, #copy.smem>",
    "%ring": "%ring = copy.alloc_smem : memref<4x128x64xi2, #copy.smem>",
    "%meta": "%meta = copy.tmem_alloc : memref<128x512xi2, #copy.tmem>",
    "%m": "%m = copy.tensormap_global %x slot %slot of 4 : memref<4096x4096xf32> "
    "-> !copy.tensormap<64x64xf32>",
}


def example(op: type) -> str:
    match = re.search(r"```mlir\n(.*?)```", inspect.getdoc(op) or "", re.S)
    assert match, f"{op.name} has no ```mlir example in its docstring"
    return match.group(1)


@pytest.mark.parametrize("op", list(copy.Copy.operations), ids=lambda op: op.name)
def test_docstring_example_verifies(ctx, op):
    body = example(op)
    used = set(re.findall(r"%\w+", body)) - set(re.findall(r"(%\w+)(?:, %\w+)* =", body))
    prelude = [PRELUDE[name] for name in sorted(used) if name in PRELUDE]
    # The values the prelude's lines use are arguments too (%m's %x and %slot).
    used |= {name for line in prelude for name in re.findall(r"%\w+", line.split("=", 1)[1])}
    args = [f"{name}: {ARGUMENTS[name]}" for name in sorted(used) if name in ARGUMENTS]
    # TMEM, TMA gather4/scatter4 (rule A14) and cluster launch control (LC1) need Blackwell.
    blackwell = re.search(r"copy\.((gather|scatter)4|try_cancel|query_cancel)", body)
    target = "sm_100a" if "tmem" in body or blackwell else "sm_90a"
    attrs = ""
    if roles := re.search(r"warps \[([0-9, ]+)\]", body):
        # Roles must cover the kernel's block (rule W1).
        threads = 32 * sum(int(w) for w in roles.group(1).split(","))
        attrs = f" attributes {{gpu.known_block_size = array<i32: {threads}, 1, 1>}}"
    if " peer " in body or " multicast %" in body:
        # A DSMEM op writes a peer CTA of the kernel's cluster (rule DS2); a multicast
        # gather4, the CTAs of its mask (G6).
        attrs = " attributes {copy.cluster = array<i32: 2, 1, 1>}"
    text = (
        f'builtin.module attributes {{copy.target = #copy.target<"{target}">}} {{\n'
        f"  func.func @k({', '.join(args)}){attrs} {{\n"
        + "\n".join(f"    {line}" for line in prelude)
        + f"\n    {body}\n    func.return\n  }}\n}}"
    )
    module = Parser(ctx, text).parse_module()
    module.verify()
    assert any(o.name == op.name for o in module.walk())


@pytest.mark.parametrize("attr", copy_attributes.ENUM_ATTRIBUTES, ids=lambda a: a.name)
def test_help_of_an_enum_attribute_lists_its_values(attr):
    text = inspect.getdoc(attr) or ""
    for value in attr.enum_type:
        assert str(value) in text, f"help({attr.__name__}) does not name {value}"
    assert attr.name in text
