"""Tensor-core operands as data movement: `copy.matrix_descriptor`, the 64-bit SMEM matrix
descriptor through which `wgmma.mma_async` (sm_90a) reads an operand tile of a buffer slot,
and the facts of its fields that the verifier, the lowering and the tests read.

The descriptor (PTX ISA, "Matrix Descriptor Format" of the asynchronous warpgroup-level
matrix instructions; CUTLASS's `GmmaDescriptor`):

| bits | field |
|---|---|
| 0-13 | the tile's SMEM address, `(addr & 0x3FFFF) >> 4` |
| 16-29 | leading dimension byte offset >> 4 (LBO) |
| 32-45 | stride dimension byte offset >> 4 (SBO) |
| 49-51 | base offset (0: every slot starts at a multiple of the swizzle's repeat) |
| 62-63 | layout: 0 none (interleave), 1 128B, 2 64B, 3 32B swizzle |

Every field but the address is a constant of the buffer's type, derived from its layout
(`copy_dialect.layout`): the tile is the buffer's trailing dims after the op's indices,
row-major, each row (innermost dim) one swizzle atom wide, rows in groups of 8 (a core
matrix, and the swizzle's repeat). In 16-byte units, the canonical layouts CUTLASS's
`make_gmma_desc` accepts are, with the tile's shape in elements:

| major | swizzle S | tile | LBO | SBO |
|---|---|---|---|---|
| k | 32/64/128 | (MN, S bytes) | 16 (unused) | 8 rows: 8 * S |
| k | none | (2.., MN, 16 bytes) | the next 16 bytes of K: MN * 16 | 8 rows: 128 |
| mn | 32/64/128 | ([atoms,] K, S bytes) | the next atom of MN: K * S | 8 K rows: 8 * S |
| mn | none | (atoms, K, 16 bytes) | 8 K rows: 128 | the next 16 bytes of MN: K * 16 |

With `tcgen05`, the op yields the sm_100a form that `tcgen05.mma` and `tcgen05.cp` read
(upstream NVVMOps.td, `nvvm.tcgen05.mma_smem_desc`; CUTLASS's `UMMA::SmemDescriptor`): the
same address, LBO, SBO and base offset, the fixed version bits 46-48 = 0b001, LBO mode
(bit 52) 0 (relative offsets), and a 3-bit layout at 61-63: 0 none, 2 128B, 4 64B, 6 32B,
and 1 for `#copy.smem<swizzle = 128, atom = 32>` (`SWIZZLE_128B_BASE32B`, CuTe's
`Swizzle<2,5,2>`), MN-major only, whose atom holds 4 K rows: SBO spans 4 rows (CUTLASS's
canonical `((8,n),(4,k)):((1,LBO),(4,SBO))` in 16-byte units; `make_umma_desc`).
tcgen05.mma transposes A and B through its instruction descriptor for kind::f16, tf32,
f8f6f4 and i8, so `major mn` takes every type of `ELEMENT_TYPES` there.

One instruction reads 32 bytes of K (k16 of f16/bf16, k8 of tf32, k32 of 8-bit types): a
kernel steps along K within the tile by adding the step's bytes >> 4 to the descriptor
(CUTLASS's `DescriptorIterator`), which stays inside the 14-bit address field.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import I64, IndexType, MemRefType, NoneAttr, UnitAttr, f16, i64
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Operation, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.str_enum import StrEnum

from copy_dialect import layout
from copy_dialect.blackwell_maps import check_described_swizzle
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.memory import SMEM, bitwidth, memory_space, swizzle_of
from copy_dialect.verification import copy_op_definition
from facts.target import TCGEN05


class MatrixMajor(StrEnum):
    """Which dim of a tensor-core operand is contiguous in SMEM: K (`k`, each row of the
    tile is a row of A or B along K) or M/N (`mn`, the transposed operand)."""

    K = "k"
    MN = "mn"


@irdl_attr_definition
class MatrixMajorAttr(EnumAttribute[MatrixMajor], SpacedOpaqueSyntaxAttribute):
    name = "copy.matrix_major"


K_BYTES = 32
"""The bytes of K one wgmma instruction reads, for every operand type."""

GROUP_ROWS = 8
"""Rows of a core matrix, and of the swizzle's repeat: a tile holds whole groups of them."""

ELEMENT_TYPES = ("f16", "bf16", "tf32", "f32", "f8E4M3FN", "f8E5M2", "i8", "si8", "ui8")
"""The operand types of wgmma (f32 as the tf32 it reads)."""

MN_MAJOR_BITS = 16
"""wgmma transposes only 16-bit operands (PTX: imm-trans-a/b for .f16/.bf16)."""

LAYOUT_TYPE = {layout.UNSWIZZLED: 0, 128: 1, 64: 2, 32: 3}
"""The descriptor's 2-bit layout field of each swizzle."""

TCGEN05_LAYOUT = {layout.UNSWIZZLED: 0, 128: 2, 64: 4, 32: 6}
"""The sm_100a descriptor's 3-bit layout field of each swizzle."""
BASE32B = 1
"""Its layout field for the 128B swizzle with 32-byte atoms (`SWIZZLE_128B_BASE32B`)."""
BASE32B_ROWS = 4
"""K rows of a 32-byte-atom tile's atom: its SBO spans them."""

START_BIT, LEADING_BIT, STRIDE_BIT, BASE_BIT, LAYOUT_BIT = 0, 16, 32, 49, 62
TCGEN05_VERSION_BIT, TCGEN05_LAYOUT_BIT = 46, 61
"""The sm_100a form's fixed version (0b001 in bits 46-48) and its layout field."""
ADDRESS_MASK = 0x3FFFF
"""The address bits a field keeps before the shift by 4 (14 bits of 16-byte units)."""


def encode(byte_offset: int) -> int:
    """A 14-bit field: bytes in 16-byte units, `(x & 0x3FFFF) >> 4`."""
    return (byte_offset & ADDRESS_MASK) >> 4


@dataclass(frozen=True)
class Descriptor:
    """The constant fields of a tile's descriptor, in bytes."""

    leading: int
    stride: int
    swizzle: int
    tcgen05: bool = False

    @property
    def constant_bits(self) -> int:
        """Every bit but the address: LBO, SBO, base offset 0, the layout (and, for
        tcgen05, the version)."""
        offsets = encode(self.leading) << LEADING_BIT | encode(self.stride) << STRIDE_BIT
        if self.tcgen05:
            kind = BASE32B if layout.atom_of(self.swizzle) == 32 else TCGEN05_LAYOUT[self.swizzle]
            return offsets | 1 << TCGEN05_VERSION_BIT | kind << TCGEN05_LAYOUT_BIT
        return offsets | LAYOUT_TYPE[self.swizzle] << LAYOUT_BIT

    def encoded(self, address: int) -> int:
        """The descriptor of the tile at SMEM byte address `address`."""
        return self.constant_bits | encode(address) << START_BIT


def retyped(t: MemRefType, shape: list[int] | None = None, element: Attribute | None = None) -> str:
    """`t` with another shape or element type, for a fix note."""
    return str(
        MemRefType(
            element or t.element_type,
            shape if shape is not None else t.get_shape(),
            t.layout,
            t.memory_space,
        )
    )


def tile_ranks(major: MatrixMajor, swizzle: int) -> tuple[int, ...]:
    """The ranks a tile of each form has (the buffer's dims after the op's indices)."""
    if swizzle == layout.UNSWIZZLED:
        return (3,)
    return (2,) if major == MatrixMajor.K else (2, 3)


def row_bytes(swizzle: int) -> int:
    """The bytes of a tile's row: one swizzle atom, or one 16-byte core-matrix row."""
    return swizzle if swizzle != layout.UNSWIZZLED else layout.UNIT_BYTES


def descriptor(t: MemRefType, major: MatrixMajor, tcgen05: bool = False) -> Descriptor:
    """The fields of the descriptor of a tile of `t`'s layout (a verified op's)."""
    shape, bits, swizzle = t.get_shape(), bitwidth(t.element_type) or 8, swizzle_of(t)
    # pitch: the bytes between rows; block: between blocks of the tile's rows (the next
    # 16 bytes of K, or atom of MN)
    pitch, block = layout.dim_strides((2, *shape[-2:]), bits, swizzle)[::-1]
    group = (BASE32B_ROWS if layout.atom_of(swizzle) == 32 else GROUP_ROWS) * pitch
    if major == MatrixMajor.K:
        leading = layout.UNIT_BYTES if swizzle != layout.UNSWIZZLED else block
        return Descriptor(leading, group, swizzle, tcgen05)
    if swizzle != layout.UNSWIZZLED:
        return Descriptor(block, group, swizzle, tcgen05)
    return Descriptor(group, block, swizzle, tcgen05)


@copy_op_definition
class MatrixDescriptorOp(IRDLOperation):
    """
    The SMEM matrix descriptor (i64) of an operand tile for `wgmma.mma_async` (sm_90a):
    the tile is the buffer's trailing dims after `indices` (a slot of a ring, say), each row
    one swizzle atom (`major k`: rows of M or N along K; `major mn`: rows of K along M or N,
    16-bit types). The address is the slot's; the offsets and the swizzle come from the
    buffer's type (module docstring). The descriptor is an integer: a kernel steps along K
    by adding bytes >> 4. With `tcgen05`, the sm_100a form that `tcgen05.mma` reads.

    ```mlir
    %a = copy.alloc_smem : memref<4x128x64xf16, #copy.smem<swizzle = 128>>
    %d = copy.matrix_descriptor %a[%slot] major k
        : memref<4x128x64xf16, #copy.smem<swizzle = 128>> -> i64
    ```
    """

    name = "copy.matrix_descriptor"

    smem = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    major = prop_def(MatrixMajorAttr)
    tcgen05 = opt_prop_def(UnitAttr)
    result = result_def(I64)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$smem `[` $indices `]` `major` $major (`tcgen05` $tcgen05^)? attr-dict `:` type($smem) "
        "`->` type($result)"
    )

    def __init__(
        self,
        smem: SSAValue | Operation,
        indices: list[SSAValue] | list[Operation],
        *,
        major: MatrixMajor | str = MatrixMajor.K,
        tcgen05: bool = False,
    ):
        super().__init__(
            operands=[smem, indices],
            properties={
                "major": MatrixMajorAttr(MatrixMajor(major)),
                "tcgen05": UnitAttr() if tcgen05 else None,
            },
            result_types=[i64],
        )

    @property
    def matrix_major(self) -> MatrixMajor:
        return self.major.data

    @property
    def descriptor(self) -> Descriptor:
        assert isinstance(t := self.smem.type, MemRefType)
        return descriptor(t, self.matrix_major, self.tcgen05 is not None)

    def verify_(self) -> None:
        assert isinstance(t := self.smem.type, MemRefType)
        # rule: MD1
        if memory_space(t) != SMEM:
            raise Error(
                f"describes an SMEM tile, got a ref in {memory_space(t)}",
                note="give it a buffer of copy.alloc_smem (memref<..., #copy.smem<swizzle "
                "= 128>>) that a TMA load fills",
            )
        element, major = t.element_type, self.matrix_major
        bits = bitwidth(element) or 0
        # rule: MD2
        if str(element) not in ELEMENT_TYPES:
            shape = list(t.get_shape())
            if shape and shape[-1] > 0 and bits:
                shape[-1] = shape[-1] * bits // 16
            raise Error(
                f"wgmma reads f16, bf16, tf32 (f32), f8E4M3FN, f8E5M2 or 8-bit integer "
                f"operands, got {element}",
                note="use a buffer of one of those types, e.g. "
                f"{retyped(t, shape, f16)} (the same bytes a row; convert the elements "
                "before they are stored, or in registers)",
            )
        # rule: MD2
        if major == MatrixMajor.MN and bits != MN_MAJOR_BITS and self.tcgen05 is None:
            raise Error(
                f"major mn (a transposed operand) of wgmma needs 16-bit elements, got {element}",
                note="use major k: store the tile with K innermost (or tcgen05, on "
                f"{TCGEN05.listed}, whose MMA transposes 8- and 32-bit operands too)",
            )
        self._verify_tile(t, major, bits)

    def _verify_tile(self, t: MemRefType, major: MatrixMajor, bits: int) -> None:
        check_described_swizzle(
            t, "a matrix descriptor", base32b=self.tcgen05 is not None and major == MatrixMajor.MN
        )
        shape, swizzle = t.get_shape(), swizzle_of(t)
        ranks = tile_ranks(major, swizzle)
        rank = t.get_num_dims() - len(self.indices)
        form = f"major {major} under {'no swizzle' if swizzle == 16 else f'{swizzle}B swizzle'}"
        # rule: MD3
        if rank not in ranks:
            want = " or ".join(str(t.get_num_dims() - r) for r in ranks if r <= t.get_num_dims())
            raise Error(
                f"the tile is the buffer's dims after the indices: {form} it has "
                f"{' or '.join(map(str, ranks))} dims, got {rank}",
                note=f"give {want or 'no'} {'index' if want == '1' else 'indices'} (the slot: "
                "[%slot]), and a buffer whose trailing dims are the tile"
                + (
                    ""
                    if swizzle != 16
                    else " (16-byte rows, 8-row core matrices, 2 or more blocks of them)"
                ),
            )
        # rule: MD3
        if not isinstance(t.layout, NoneAttr) or any(d < 0 for d in shape[-rank:]):
            raise Error(
                f"the tile must be row-major with static sizes, got {t}",
                note="describe a copy.alloc_smem buffer (row-major, static shape) itself",
            )
        elem_bytes = bits // 8
        want_row = row_bytes(swizzle)
        inner = shape[-1] * elem_bytes
        # rule: MD4
        if inner != want_row:
            what = f"the {swizzle}B swizzle's atom" if swizzle != 16 else "a core matrix's row"
            raise Error(
                f"{form}, a tile row (the innermost dim) is {what}: {want_row} bytes "
                f"({want_row // elem_bytes} {t.element_type}), got {shape[-1]} ({inner} bytes)",
                note=f"make the innermost dim {want_row // elem_bytes} (a TMA box of that "
                f"width under swizzle {swizzle}): "
                f"{retyped(t, [*shape[:-1], want_row // elem_bytes])}, or the swizzle "
                f"{inner} where that is one of 32, 64, 128",
            )
        rows = shape[-2]
        # rule: MD5
        if rows % GROUP_ROWS:
            raise Error(
                f"a tile holds whole groups of {GROUP_ROWS} rows (core matrices, and the "
                f"swizzle's repeat, which every slot must start at), got {rows} rows",
                note=f"make the rows a multiple of {GROUP_ROWS}: "
                f"{retyped(t, [*shape[:-2], -(-rows // 8) * 8, shape[-1]])}",
            )
        k_bytes = (shape[-3] * inner if major == MatrixMajor.K else rows * elem_bytes) if (
            major == MatrixMajor.MN or swizzle == 16) else inner  # fmt: skip
        # rule: MD5
        if k_bytes < K_BYTES:
            need = K_BYTES // (inner if major == MatrixMajor.K else elem_bytes)
            dim = "the blocks of 16 bytes of K (dim -3)" if major == MatrixMajor.K else "K rows"
            raise Error(
                f"one wgmma reads {K_BYTES} bytes of K, but the tile holds {k_bytes}",
                note=f"make {dim} at least {need}",
            )
