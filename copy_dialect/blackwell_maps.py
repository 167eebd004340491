"""The Blackwell forms of a TMA tensor map: packed 4-bit elements and the 128-byte swizzles
with a larger atom (issue 33, items 2 and 3).

- `f4E2M1FN` (FP4) travels as `CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B`: "16 x U4 packed values
  ... no gaps between packed values" (cuda.h, `cuTensorMapEncodeTiled`), so SMEM holds the
  box packed two elements a byte, as GMEM does, and the dialect's layout already places it
  (`copy_dialect.layout`: sub-byte rows packed). The driver's other rules for it are the
  ones every map has in bytes: `globalDim[0]` a multiple of 2 (C12) and the box's inner
  bytes a multiple of 16 (C4: 32 elements). The driver fills out-of-bounds elements with
  zeros only: `..._NAN_REQUEST_ZERO_FMA` is not for the packed types (PK2). The padded
  SMEM forms (`16U4_ALIGN16B`, `16U6_ALIGN16B` for FP6) are not modelled: their SMEM holds
  gaps that no layout of the dialect has, and their transaction bytes are not documented.
- `#copy.smem<swizzle = 128, atom = 32 | 64 (, flip)>` is `CU_TENSOR_MAP_SWIZZLE_128B_ATOM_*`:
  rows as under the 128-byte swizzle, larger units permuted (`copy_dialect.layout`).

Both are map forms of cuda.h 12.8, which came with sm_100: a kernel that uses them targets
compute capability 10.0 or more (PK1, SW2). Neither has run here: there is no Blackwell GPU
(docs/design.md).

A tensor-map value (`!copy.tensormap`) has no atom: a copy through one from an atom-swizzled
buffer is rejected (SW3). The matrix descriptors (wgmma's, tcgen05's) and `tcgen05.cp` read
16-byte-atom swizzles only (SW4): tcgen05's descriptor has a layout type for the 32-byte
atom (`SWIZZLE_128B_BASE32B` = 1, cute/arch/mma_sm100_desc.hpp) whose canonical tile
offsets the dialect does not model, and none for the 64-byte atom or the flip.
"""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, Operation

from copy_dialect import layout
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import PACKED_MAP_TYPES, BoxGeometry, OOBMode
from copy_dialect.memory import swizzle_of
from copy_dialect.verify_common import enclosing_target, feature_error, retarget_note
from facts.target import BLACKWELL_TENSOR_MAPS


def packed_map_type(element_type: Attribute) -> str | None:
    """The packed map type of `element_type`, None where it is not a packed type."""
    return PACKED_MAP_TYPES.get(type(element_type))


def atom_name(swizzle: int) -> str:
    """`#copy.smem<swizzle = 128, atom = 32, flip>`'s mode, as the messages name it."""
    return f"CU_TENSOR_MAP_SWIZZLE_{layout.mode_name(swizzle)}"


def verify_blackwell_map(op: Operation, g: BoxGeometry) -> None:
    """A TMA copy's or prefetch's map in a Blackwell form: a target of compute capability
    10.0 or more (PK1, SW2), and no NaN fill of a packed type (PK2)."""
    packed = packed_map_type(g.element_type)
    atom = layout.atom_of(g.swizzle_bytes) != layout.UNIT_BYTES
    if packed is None and not atom:
        return
    target = enclosing_target(op)
    if target is not None and not BLACKWELL_TENSOR_MAPS.has(target):
        uses = (
            f"with {g.element_type} elements (a {packed} map)"
            if packed is not None
            else f"with {atom_name(g.swizzle_bytes)}"
        )
        fix = (
            f"{retarget_note(BLACKWELL_TENSOR_MAPS)}, or carry the values as i8 pairs"
            if packed is not None
            else f"{retarget_note(BLACKWELL_TENSOR_MAPS)}, or allocate the buffer with "
            "#copy.smem<swizzle = 128> (16-byte atoms)"
        )
        # rule: PK1
        if packed is not None:
            raise feature_error(op, BLACKWELL_TENSOR_MAPS, target, fix, uses)
        # rule: SW2
        raise feature_error(op, BLACKWELL_TENSOR_MAPS, target, fix, uses)
    # rule: PK2
    if packed is not None and g.oob == OOBMode.NAN:
        raise Error(
            f"Expected oob zeros for a {packed} map ({g.element_type} elements), got oob nan: "
            "the driver fills out-of-bounds elements of packed types with zeros only",
            note="drop oob nan (the fill is then zeros)",
        )


def check_described_swizzle(t: MemRefType, what: str, flip_only: bool = False) -> None:
    """A buffer that a matrix descriptor or `tcgen05.cp` describes has a 16-byte-atom
    swizzle; `flip_only`: one whose 16-byte rows `ldmatrix`/`stmatrix` address has no flip,
    which splits each 16-byte unit (SW4)."""
    swizzle = swizzle_of(t)
    # rule: SW4
    if layout.flip_of(swizzle) or (not flip_only and layout.atom_of(swizzle) != 16):
        kind = "no flip (which splits each 16-byte unit)" if flip_only else "16-byte atoms"
        raise Error(
            f"{what} takes swizzles of {kind} only, got {atom_name(swizzle)} in {t}",
            note="drop the atom: allocate the buffer with #copy.smem<swizzle = 128> (a TMA "
            "load writes it with CU_TENSOR_MAP_SWIZZLE_128B)",
        )


def check_map_value_swizzle(g: BoxGeometry) -> None:
    """A copy through a tensor-map value moves a 16-byte-atom swizzle: `!copy.tensormap`
    has no atom (SW3)."""
    swizzle = g.swizzle_bytes
    # rule: SW3
    if layout.atom_of(swizzle) != layout.UNIT_BYTES:
        raise Error(
            f"Expected a copy through a tensor-map value to move a buffer of 16-byte swizzle "
            f"atoms, got {atom_name(swizzle)}: a !copy.tensormap type has no atom",
            note="drop map(...) to use the kernel's .param map, which carries the atom, or "
            "allocate the buffer with #copy.smem<swizzle = 128>",
        )
