"""The Blackwell tensor-map forms (copy_dialect/blackwell_maps.py, issue 33 items 2 and 3):
the 128B_ATOM swizzles' addressing against CuTe's `Swizzle<B,M,S>` and cuda.h's words, the
driver arguments the runtime encodes them with (against cuda.h's enum values), the positive
lit kernels assembled by nvJitLink (and ptxas where it is on PATH) for the Blackwell
targets, and a fuzz over configurations: every one the verifier accepts assembles, the rest
are counted by rule id. No Blackwell GPU is here: nothing of this has run on one."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from copy_dialect import layout
from copy_dialect import ops as copy
from copy_dialect.descriptors import MatrixMajor, descriptor
from copy_dialect.errors import CopyVerifyException
from copy_tools.universe import make_context
from facts.abi import TensorMapParam
from passes.pipeline import compile_module, retarget
from runtime import tensor_map
from runtime.arrays import DeviceArray
from tests.ptxas import check_ptxas

ROOT = Path(__file__).resolve().parents[2]
ELF_MAGIC = b"\x7fELF"
BLACKWELL = ("sm_100a", "sm_103a", "sm_110a", "sm_120a")
"""Blackwell targets of facts.target, one per GPU (sm_110a: Jetson Thor)."""

ATOM_32 = layout.Swizzle(128, 32)
FLIP = layout.Swizzle(128, 32, flip=True)
ATOM_64 = layout.Swizzle(128, 64)


def cute_swizzle(offset: np.ndarray, b: int, m: int, s: int) -> np.ndarray:
    """CuTe's `Swizzle<B,M,S>` on byte offsets (cute/swizzle.hpp): the B bits from bit M+S
    XOR-ed into the B bits from bit M."""
    yyy = ((1 << b) - 1) << (m + s)
    return offset ^ ((offset & yyy) >> s)


OFFSETS = np.arange(4096)


def test_16_byte_swizzles_are_cute_swizzle_b_4_3():
    for span, b in ((32, 1), (64, 2), (128, 3)):
        assert (layout.swizzled(OFFSETS, span) == cute_swizzle(OFFSETS, b, 4, 3)).all()


def test_atom_32_is_cute_swizzle_2_5_2():
    """CUTLASS's `Layout_MN_SW128_32B_Atom` and UMMA's SWIZZLE_128B_BASE32B."""
    assert (layout.swizzled(OFFSETS, ATOM_32) == cute_swizzle(OFFSETS, 2, 5, 2)).all()


def test_flip_swaps_the_8_byte_halves_on_odd_rows():
    base = layout.swizzled(OFFSETS, ATOM_32)
    flipped = layout.swizzled(OFFSETS, FLIP)
    odd = (OFFSETS >> 7) & 1 == 1
    assert (flipped[~odd] == base[~odd]).all()
    assert (flipped[odd] == base[odd] ^ 8).all()


def test_atom_64_moves_64_byte_halves_of_odd_rows():
    moved = layout.swizzled(OFFSETS, ATOM_64)
    odd = (OFFSETS >> 7) & 1 == 1
    assert (moved[~odd] == OFFSETS[~odd]).all()
    assert (moved[odd] == OFFSETS[odd] ^ 64).all()


@pytest.mark.parametrize("swizzle", [ATOM_32, FLIP, ATOM_64], ids=layout.mode_name)
def test_atom_swizzles_permute_within_128_bytes(swizzle: int):
    moved = layout.swizzled(OFFSETS, swizzle)
    assert sorted(moved.tolist()) == OFFSETS.tolist()
    assert ((moved >> 7) == (OFFSETS >> 7)).all()  # every byte stays in its 128-byte row
    kept = layout.kept_bytes(swizzle)
    assert ((moved % kept) == (OFFSETS % kept)).all()  # and inside its kept unit


def test_a_swizzle_value_is_its_span():
    """Everything that depends on the span alone (row pitch, sizes, alignment) reads the int."""
    assert ATOM_32 == 128
    assert int(FLIP) == 128
    assert str(ATOM_64) == "128"
    assert layout.size_bytes((64, 64), 16, ATOM_32) == layout.size_bytes((64, 64), 16, 128)
    names = [layout.mode_name(s) for s in (16, 128, ATOM_32, FLIP, ATOM_64)]
    assert names == ["NONE", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B"]


CUDA_H_SWIZZLES = {"128B": 3, "128B_ATOM_32B": 4, "128B_ATOM_32B_FLIP_8B": 5, "128B_ATOM_64B": 6}
"""`CUtensorMapSwizzle` in cuda.h 12.8+ (NONE = 0, 32B, 64B, 128B, then the atoms)."""


@pytest.mark.parametrize(
    ("atom", "flip", "name"),
    [(16, False, "128B"), (32, False, "128B_ATOM_32B"), (32, True, "128B_ATOM_32B_FLIP_8B"),
     (64, False, "128B_ATOM_64B")],
)  # fmt: skip
def test_encoded_swizzle_and_data_type(monkeypatch, atom: int, flip: bool, name: str):
    """The driver arguments of `cuTensorMapEncodeTiled`: the swizzle enum and, for FP4, the
    16U4_ALIGN8B data type (13 in cuda.h), the ABI record's round trip included."""
    pytest.importorskip("cuda.bindings.driver")
    calls = []
    monkeypatch.setattr(tensor_map, "call", lambda name, *args: calls.append((name, args)))
    for dtype, code in (("BFLOAT16", 9), ("16U4_ALIGN8B", 13)):
        param = TensorMapParam(
            0, (64, 64), 128, "zeros", dtype, False, swizzle_atom=atom, swizzle_flip=flip
        )
        param = TensorMapParam.from_dict(param.to_dict())
        assert tensor_map.swizzle_name(param) == name
        array = DeviceArray(1 << 20, (256, 256), (512, 2), "uint16", 2)
        tensor_map.encode(array, param)
        entry, args = calls[-1]
        assert entry == "cuTensorMapEncodeTiled"
        assert int(args[0]) == code
        assert int(args[8]) == CUDA_H_SWIZZLES[name]


def test_encoded_fp4_dims_count_elements(monkeypatch):
    """cuda.h: the dims of a packed map count its 4-bit values; the array's innermost dim
    is bytes (runtime.arrays.PACKED_ELEMENTS)."""
    pytest.importorskip("cuda.bindings.driver")
    calls = []
    monkeypatch.setattr(tensor_map, "call", lambda name, *args: calls.append(args))
    param = TensorMapParam(0, (64, 128), 16, "zeros", "16U4_ALIGN8B", False)
    tensor_map.encode(DeviceArray(1 << 20, (256, 128), (128, 1), "uint8", 1), param)
    dtype, rank, _, dims, strides, box = calls[-1][:6]
    assert (int(dtype), rank) == (13, 2)
    assert [int(d) for d in dims] == [256, 256]  # innermost first: 128 bytes, 256 values
    assert [int(s) for s in strides] == [128]
    assert [int(b) for b in box] == [128, 64]


def verify(text: str, target: str):
    """The module retargeted to `target` if it verifies there, else the rule ids of the error."""
    try:  # an attribute verifies as it is parsed (SW1)
        module = Parser(make_context(), text).parse_module()
        retarget(module, target)
        module.verify()
    except CopyVerifyException as e:
        return e.rules or ("?",)
    except VerifyException as e:
        cause = e.__cause__ if isinstance(e.__cause__, CopyVerifyException) else None
        return (cause.rules if cause is not None else ()) or (type(e).__name__,)
    return module


def assemble(module, target: str, tmp_path: Path) -> None:
    compiled = compile_module(module, make_context(), target)
    assert compiled.cubin.startswith(ELF_MAGIC)
    check_ptxas(compiled.ptx, target, tmp_path)


LIT = ROOT / "lit_tests" / "passes" / "blackwell-maps-ptx.mlir"
KERNELS = [c for c in LIT.read_text().split("// -----") if "gpu.kernel" in c]


@pytest.mark.parametrize("target", BLACKWELL)
@pytest.mark.parametrize("index", range(len(KERNELS)))
def test_lit_kernels_assemble(index: int, target: str, tmp_path: Path):
    module = verify(KERNELS[index], target)
    assert not isinstance(module, tuple), module
    assemble(module, target, tmp_path)


@pytest.mark.parametrize("index", range(len(KERNELS)))
def test_lit_kernels_are_rejected_before_blackwell(index: int):
    assert set(verify(KERNELS[index], "sm_90a")) & {"PK1", "SW2"}


ELEMENTS = ("f4E2M1FN", "f6E2M3FN", "bf16", "i8")
SWIZZLES = {
    "none": "#copy.smem",
    "128": "#copy.smem<swizzle = 128>",
    "atom32": "#copy.smem<swizzle = 128, atom = 32>",
    "flip": "#copy.smem<swizzle = 128, atom = 32, flip>",
    "atom64": "#copy.smem<swizzle = 128, atom = 64>",
    "64/atom32": "#copy.smem<swizzle = 64, atom = 32>",
    "align16": "#copy.smem<align16>",
    "128/align16": "#copy.smem<swizzle = 128, align16>",
    "atom32/align16": "#copy.smem<swizzle = 128, atom = 32, align16>",
    "atom64/align16": "#copy.smem<swizzle = 128, atom = 64, align16>",
}


def fuzz_kernel(element: str, space: str, inner: int, oob: str, load: bool) -> str:
    smem = f"memref<16x{inner}x{element}, {space}>"
    gmem = f"memref<64x512x{element}>"
    types = f"{gmem} to {smem}"
    copy = (
        f"copy.async_copy %x[%c0, %c0] to %buf barrier %bar[%c0]{oob} : {types}, "
        "!copy.barrier<1>\n    %f = arith.constant false\n"
        "    copy.barrier_wait %bar[%c0], %f : !copy.barrier<1>"
        if load
        else f"copy.async_copy %buf to %x[%c0, %c0] : {smem} to {gmem}\n"
        "    copy.commit_group bulk\n    copy.wait_group bulk 0"
    )
    return f"""builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%x: {gmem}) attributes {{gpu.kernel}} {{
    %c0 = arith.constant 0 : index
    %bar = copy.barrier_init arrivals 1 : !copy.barrier<1>
    %buf = copy.alloc_smem : {smem}
    {copy}
    func.return
  }}
}}"""  # noqa: E501


CONFIGURATIONS = [
    (element, swizzle, inner, oob, load, target)
    for element, swizzle, inner, oob, load, target in itertools.product(
        ELEMENTS, SWIZZLES, (32, 64, 128, 256), ("", " oob nan"), (True, False),
        ("sm_90a", *BLACKWELL),
    )
    if load or not oob  # a store has no fill
]  # fmt: skip


def test_fuzz_accepted_configurations_assemble(tmp_path: Path):
    """Every configuration (element, swizzle with its atom and align16, inner box, fill,
    load or store, target): accepted ones compile to a cubin (the first of each element,
    swizzle, direction and target, to bound the time), rejected ones carry the rule that
    rejects them."""
    rejected: Counter[str] = Counter()
    accepted = 0
    assembled = set()
    for element, swizzle, inner, oob, load, target in CONFIGURATIONS:
        result = verify(fuzz_kernel(element, SWIZZLES[swizzle], inner, oob, load), target)
        if isinstance(result, tuple):
            rejected.update(result)
            continue
        accepted += 1
        key = (element, swizzle, load, target)
        if key not in assembled:
            assembled.add(key)
            assemble(result, target, tmp_path)
    print(f"accepted {accepted}, assembled {len(assembled)}, rejected by rule {dict(rejected)}")
    assert accepted
    assert len(assembled) >= 3 * len(BLACKWELL)
    # each new rule the configurations can reach rejects some of them
    assert {"PK1", "PK2", "PK3", "PK4", "PK5", "PK6", "SW1", "SW2", "C5"} <= set(rejected)


def test_tcgen05_base32b_descriptor_places_every_unit_where_the_layout_does():
    """`copy.matrix_descriptor ... major mn tcgen05` of a 32-byte-atom buffer: layout type 1
    (SWIZZLE_128B_BASE32B) at bits 61-63, SBO over the atom's 4 K rows, LBO to the next atom
    of MN, every 16-byte unit where CUTLASS's canonical ((8,n),(4,k)):((1,LBO),(4,SBO)) puts
    it under Swizzle<2,5,2> (make_umma_desc, cute/atom/mma_traits_sm100.hpp)."""
    for element, bits in (("f32", 32), ("f16", 16), ("i8", 8)):
        row = 128 * 8 // bits
        for atoms, k in ((1, 8), (2, 16), (4, 32)):
            space = "#copy.smem<swizzle = 128, atom = 32>"
            t = Parser(make_context(), f"memref<{atoms}x{k}x{row}x{element}, {space}>").parse_type()
            d = descriptor(t, MatrixMajor.MN, tcgen05=True)
            assert (d.leading, d.stride) == (k * 128, 4 * 128)
            assert d.constant_bits >> 61 == 1
            assert (d.constant_bits >> 46) & 7 == 1
            swizzle = copy.swizzle_of(t)
            for a, kk, unit in itertools.product(range(atoms), range(k), range(8)):
                canonical = unit * 16 + a * d.leading + (kk % 4) * 128 + (kk // 4) * d.stride
                place = layout.element_offset(
                    [a, kk, unit * 128 // bits], t.get_shape(), bits, swizzle
                )
                assert place == layout.swizzled(canonical, swizzle)


@pytest.mark.parametrize(
    ("space", "major", "tcgen05"),
    [
        ("#copy.smem<swizzle = 128, atom = 32>", "k", " tcgen05"),
        ("#copy.smem<swizzle = 128, atom = 32>", "mn", ""),
        ("#copy.smem<swizzle = 128, atom = 32, flip>", "mn", " tcgen05"),
        ("#copy.smem<swizzle = 128, atom = 64>", "mn", " tcgen05"),
    ],
)
def test_other_atom_descriptors_are_sw4(space: str, major: str, tcgen05: str):
    text = f"""builtin.module attributes {{copy.target = #copy.target<"sm_100a">}} {{
  func.func @k(%slot: index) attributes {{gpu.kernel}} {{
    %b = copy.alloc_smem : memref<2x2x32x64xf16, {space}>
    %d = copy.matrix_descriptor %b[%slot] major {major}{tcgen05} : memref<2x2x32x64xf16, {space}> -> i64
    func.return
  }}
}}"""  # noqa: E501
    assert verify(text, "sm_100a") == ("SW4",)


def test_copy_layout_draws_the_atom_swizzles_and_align16():
    """copy-layout's picture (copy_tools.copy_layout) of sm_100's swizzles: under atom 32 the
    16-byte chunks of a 128-byte row move in pairs (chunk c of row r to (c // 2 ^ r % 4) * 2 +
    c % 2), under atom 64 in fours; an align16 FP4 row of 128 values takes 128 bytes."""
    from copy_tools.copy_layout import parse_smem_type

    for atom in (32, 64):
        space = f"#copy.smem<swizzle = 128, atom = {atom}>"
        tile = parse_smem_type(f"memref<8x64xbf16, {space}>", None, None)
        per = atom // 16
        for r, c in itertools.product(range(8), range(8)):
            want = ((c // per) ^ (r % (128 // atom))) * per + c % per
            assert tile.stored_chunk(r, c) == want
    packed = parse_smem_type(
        "memref<8x128xf4E2M1FN, #copy.smem<swizzle = 128, align16>>", None, None
    )
    assert (packed.row_bytes, packed.pitch) == (128, 128)


def test_encoded_fp6_dims_and_the_align16_base(monkeypatch):
    """A 16U6_ALIGN16B map counts 6-bit values (3 bytes hold 4), and the runtime wants its
    array's base and row strides on 32 bytes (cuda.h) before it encodes."""
    pytest.importorskip("cuda.bindings.driver")
    calls = []
    monkeypatch.setattr(tensor_map, "call", lambda name, *args: calls.append(args))
    param = TensorMapParam(0, (32, 128), 128, "zeros", "16U6_ALIGN16B", False)
    tensor_map.encode(DeviceArray(1 << 20, (256, 192), (192, 1), "uint8", 1), param)
    dtype, _, _, dims, strides = calls[-1][:5]
    assert int(dtype) == 15
    assert [int(d) for d in dims] == [256, 256]  # innermost first: 192 bytes, 256 values
    assert [int(s) for s in strides] == [192]
    array = DeviceArray((1 << 20) + 16, (256, 192), (192, 1), "uint8", 1)
    with pytest.raises(ValueError, match="multiples of 32 bytes for its 16U6_ALIGN16B"):
        tensor_map.check_tensor_map_array(array, param, "argument 0")
    tensor_map.check_tensor_map_array(
        DeviceArray(1 << 20, (256, 192), (192, 1), "uint8", 1), param, "a"
    )
