"""Every TMA reduction op x every element type a tensor map admits: accepted iff the design's
mapping (docs/design.md) gives a tensor-map type on which the H200 ran the op, and then
compiled to that map type (in the ABI) and to that PTX op; rejected with one error and a note.

The expectations are written here from the design text and the H200's measurements, not
taken from copy_dialect.ops."""

from __future__ import annotations

import re

import pytest
from xdsl.parser import Parser

from copy_dialect.errors import CopyVerifyException
from copy_dialect.ops import ReductionKind
from copy_tools.universe import make_context
from passes.pipeline import compile_module

# The H200's `ok` cells: map type -> the ops `cp.reduce.async.bulk.tensor` ran bit-exact on
# it (every other op was CUDA_ERROR_ILLEGAL_INSTRUCTION). UINT8 and UINT16 took none.
H200_OK = {
    "UINT8": set(),
    "UINT16": set(),
    "UINT32": {"add", "min", "max", "inc", "dec", "and", "or", "xor"},
    "INT32": {"add", "min", "max", "and", "or", "xor"},
    "UINT64": {"add", "min", "max", "and", "or", "xor"},
    "INT64": {"min", "max"},
    "FLOAT16": {"add", "min", "max"},
    "BFLOAT16": {"add", "min", "max"},
    "FLOAT32": {"add"},
    "TFLOAT32": {"add"},
    "FLOAT64": {"add"},
}

FLOAT_MAPS = {"f16": "FLOAT16", "bf16": "BFLOAT16", "f32": "FLOAT32", "tf32": "TFLOAT32"}
FLOAT_MAPS["f64"] = "FLOAT64"
INTS = [f"{sign}{width}" for width in (4, 8, 16, 32, 64) for sign in ("i", "si", "ui")]
SMALL_FLOATS = ["f8E4M3FN", "f8E5M2", "f8E4M3", "f8E3M4", "f8E4M3FNUZ", "f8E5M2FNUZ"]
SMALL_FLOATS += ["f8E4M3B11FNUZ", "f8E8M0FNU", "f4E2M1FN"]
ELEMENT_TYPES = INTS + list(FLOAT_MAPS) + SMALL_FLOATS
"""Every element type a tensor map can describe; those the dialect admits for TMA copies
include all but the 4-bit ones (which may be refused until they lower) for certain."""


def documented_mapping(op: str, element: str) -> tuple[str, str] | None:
    """(tensor-map type, op the map is asked for) by docs/design.md, None where it gives none.

    Floats: add, min and max as written, on the float map of their type. 32- and 64-bit
    integers: `smin`/`smax` ask for a signed map and `umin`/`umax` for an unsigned one, which
    then takes min/max; otherwise the type's signedness decides (si: INT, ui and signless:
    UINT); an op contradicting the type, and min/max on a signless type, have no mapping.
    8- and 16-bit integers map to UINT8/UINT16; 4-bit integers and the 8- and 4-bit floats
    have no reduction map."""
    if element in FLOAT_MAPS:
        return (FLOAT_MAPS[element], op) if op in ("add", "min", "max") else None
    match = re.fullmatch(r"(i|si|ui)(\d+)", element)
    if match is None:
        return None
    sign, width = match[1], int(match[2])
    if width in (8, 16):
        return f"UINT{width}", op.removeprefix("u").removeprefix("s")
    if width not in (32, 64):
        return None
    asked = {"smin": "signed", "smax": "signed", "umin": "unsigned", "umax": "unsigned"}.get(op)
    of_type = {"si": "signed", "ui": "unsigned"}.get(sign)
    if asked and of_type and asked != of_type:
        return None
    if op in ("min", "max") and of_type is None:
        return None
    signed = (asked or of_type) == "signed"
    return f"{'INT' if signed else 'UINT'}{width}", op.removeprefix("u").removeprefix("s")


def expected(op: str, element: str) -> tuple[str, str] | None:
    """(map type, PTX op) for a legal pair, None for one the verifier must reject."""
    mapped = documented_mapping(op, element)
    if mapped is None or mapped[1] not in H200_OK[mapped[0]]:
        return None
    return mapped


def kernel(element: str, op: str | None) -> str:
    gmem, smem = f"memref<256x256x{element}>", f"memref<64x64x{element}, #copy.smem>"
    reduce = "" if op is None else f" reduce {op}"
    attributes = "gpu.kernel, gpu.known_block_size = array<i32: 128, 1, 1>"
    return f"""
builtin.module attributes {{copy.target = #copy.target<"sm_90a">}} {{
  func.func @red(%x: {gmem}) attributes {{{attributes}}} {{
    %c0 = arith.constant 0 : index
    %buf = copy.alloc_smem : {smem}
    copy.async_copy %buf to %x[%c0, %c0]{reduce} : {smem} to {gmem}
    copy.commit_group bulk
    copy.wait_group bulk 0
    func.return
  }}
}}
"""


def module(text: str):
    return Parser(make_context(), text).parse_module()


def test_the_element_types_are_admitted_for_tma():
    for element in ELEMENT_TYPES:
        if element not in ("i4", "si4", "ui4", "f4E2M1FN"):
            module(kernel(element, None)).verify()  # a plain TMA store of it verifies


PAIRS = [(op.value, element) for op in ReductionKind for element in ELEMENT_TYPES]
PTX_REDUCE = re.compile(r"cp\.reduce\.async\.bulk\.tensor\.2d\.global\.shared::cta\.(\w+)\.tile")


@pytest.mark.parametrize(("op", "element"), PAIRS, ids=[f"{op}-{e}" for op, e in PAIRS])
def test_reduction_pair(op, element):
    want = expected(op, element)
    m = module(kernel(element, op))
    if want is None:
        with pytest.raises(CopyVerifyException) as info:
            m.verify()
        assert info.value.note, "a rejected pair gets a note with the fix"
        if element in FLOAT_MAPS and op in ("umin", "umax", "smin", "smax"):
            base = op[1:]
            if base in H200_OK[FLOAT_MAPS[element]]:
                assert f"use reduce {base}" in info.value.note
        return
    map_type, ptx_op = want
    compiled = compile_module(m, make_context())
    params = compiled.abi.kernels["red"].params
    maps = [p for p in params if p.kind == "tensor_map"]
    assert [(m.dtype, m.written) for m in maps] == [(map_type, True)]
    assert PTX_REDUCE.findall(compiled.ptx) == [ptx_op]


def test_the_table_is_not_vacuous():
    legal = [pair for pair in PAIRS if expected(*pair)]
    # 10 + 8 + 10 integer pairs of 32 bits, 8 + 4 + 8 of 64, 3 + 3 float16/bfloat16, 3 adds.
    assert len(legal) == 57
    assert ("add", "tf32") in legal
    assert ("umin", "f16") not in legal
    assert ("add", "si64") not in legal  # INT64 add faulted
