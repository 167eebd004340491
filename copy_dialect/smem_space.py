"""The SMEM memory space `#copy.smem`, with its swizzle (and sm_100's larger swizzle atoms):
the one attribute every SMEM buffer's layout comes from (`copy_dialect.layout`). Kept out of
`copy_dialect.attributes` for its size; that module re-exports it."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from copy_dialect import layout
from copy_dialect.errors import CopyVerifyException as Error
from facts import hardware

SWIZZLES = (layout.UNSWIZZLED, *hardware.SWIZZLE_SPANS)
"""Swizzle spans in bytes; 16 means no swizzle (Mosaic GPU's convention)."""


@irdl_attr_definition
class SmemSpaceAttr(ParametrizedAttribute):
    """
    Shared memory, optionally swizzled: `#copy.smem` or `#copy.smem<swizzle = 128>`.

    The buffer is row-major (`copy_dialect.layout` defines it; TMA copies, `memref.load` and
    `memref.store` all use that one definition). Under a swizzle of S = 32, 64 or 128 bytes:
    each innermost row occupies its bytes rounded up to a multiple of S (a row narrower than
    the span takes S bytes, where TMA places it), and the byte at linear offset `o` of that
    padded buffer is stored at `o ^ ((o >> 3) & ((S / 16 - 1) << 4))` (CUTLASS's
    `Swizzle<log2(S/16), 4, 3>`): the 16-byte unit within each S-byte block is XOR-ed with
    bits 7.. of the offset, so for rows of one span, 16-byte chunk j of row r of each 8-row
    period lands at chunk j ^ (r % 8) (128), j ^ ((r / 2) % 4) (64), j ^ ((r / 4) % 2) (32).
    The pattern repeats every 8 * S bytes; TMA takes it from absolute address bits, so
    `copy.alloc_smem` aligns a swizzled buffer to that period (TR11).

    sm_100's 128-byte swizzles with a larger unit: `#copy.smem<swizzle = 128, atom = 32>`
    (`CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B`), `#copy.smem<swizzle = 128, atom = 32, flip>`
    (`..._ATOM_32B_FLIP_8B`) and `#copy.smem<swizzle = 128, atom = 64>` (`..._ATOM_64B`): rows
    as under `swizzle = 128`, 32- or 64-byte units permuted (`copy_dialect.layout.Swizzle`).

    `align16` (`#copy.smem<align16>`, `#copy.smem<swizzle = 128, align16>`): packed 4- or
    6-bit floats as a `16U4_ALIGN16B` / `16U6_ALIGN16B` tensor map writes them, each 16 a
    16-byte unit, their data at its start (`copy_dialect.blackwell_maps`).
    """

    name = "copy.smem"

    swizzle: IntAttr = param_def()
    atom: IntAttr = param_def()
    """The unit the swizzle permutes: 16 bytes, or 32 or 64 under `swizzle = 128` (SW1)."""
    flip: IntAttr = param_def()
    """1 where odd rows also swap the 8-byte halves of each 16-byte unit (atom 32 only)."""
    align16: IntAttr = param_def()
    """1 for packed sub-byte elements laid out 16 to a 16-byte unit (`layout.Swizzle`)."""

    def __init__(
        self, swizzle: int = 16, atom: int = 16, flip: bool = False, align16: bool = False
    ):
        super().__init__(IntAttr(swizzle), IntAttr(atom), IntAttr(int(flip)), IntAttr(int(align16)))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        """`<swizzle = S, atom = A, flip, align16>`, each entry optional, in any order."""
        values = {"swizzle": 16, "atom": 16, "flip": 0, "align16": 0}
        if parser.parse_optional_punctuation("<") is not None:
            while True:
                key = parser.parse_identifier()
                if key in ("flip", "align16"):
                    values[key] = 1
                elif key in ("swizzle", "atom"):
                    parser.parse_punctuation("=")
                    values[key] = parser.parse_integer(allow_boolean=False, allow_negative=False)
                else:
                    parser.raise_error("expected swizzle = N, atom = N, flip or align16")
                if parser.parse_optional_punctuation(",") is None:
                    break
            parser.parse_punctuation(">")
        return tuple(IntAttr(v) for v in values.values())

    def print_parameters(self, printer: Printer) -> None:
        entries = [f"swizzle = {self.swizzle.data}"] if self.swizzle.data != 16 else []
        entries += [f"atom = {self.atom.data}"] if self.atom.data != 16 else []
        entries += ["flip"] * self.flip.data + ["align16"] * self.align16.data
        if entries:
            printer.print_string(f"<{', '.join(entries)}>")

    @property
    def layout_swizzle(self) -> int:
        """The swizzle as `copy_dialect.layout` computes with it: the span, a
        `layout.Swizzle` where the atom is larger than 16 bytes or the elements align16."""
        if self.atom.data == 16 and not self.align16.data:
            return self.swizzle.data
        return layout.Swizzle(
            self.swizzle.data, self.atom.data, bool(self.flip.data), bool(self.align16.data)
        )

    def verify(self) -> None:
        # rule: C6
        if self.swizzle.data not in SWIZZLES:
            raise Error(
                f"Unsupported swizzle: {self.swizzle.data}",
                note="the swizzle is 16 (none), 32, 64 or 128 bytes",
            )
        atom, flip = self.atom.data, self.flip.data
        # rule: SW1
        if (
            atom not in layout.ATOMS
            or (atom != 16 and self.swizzle.data != 128)
            or (flip and atom != 32)
        ):
            shown = f"swizzle = {self.swizzle.data}, atom = {atom}" + (", flip" if flip else "")
            raise Error(
                f"Expected a swizzle atom of 16 bytes, or of 32 or 64 bytes under swizzle = "
                f"128 (flip only with atom = 32), got {shown}",
                note="the 128-byte swizzles of sm_100 are #copy.smem<swizzle = 128, atom = 32>, "
                "#copy.smem<swizzle = 128, atom = 32, flip> and "
                "#copy.smem<swizzle = 128, atom = 64> (CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B, "
                "_ATOM_32B_FLIP_8B, _ATOM_64B); other spans permute 16-byte units only",
            )
