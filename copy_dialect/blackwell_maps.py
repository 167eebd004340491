"""The Blackwell forms of a TMA tensor map: packed 4- and 6-bit elements and the 128-byte
swizzles with a larger atom (issue 33, items 2 and 3).

- `f4E2M1FN` (FP4) travels as `CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B`: "16 x U4 packed values
  ... no gaps between packed values" (cuda.h, `cuTensorMapEncodeTiled`), so SMEM holds the
  box packed two elements a byte, as GMEM does, and the dialect's layout already places it
  (`copy_dialect.layout`: sub-byte rows packed). The driver's other rules for it are the
  ones every map has in bytes: `globalDim[0]` a multiple of 2 (C12) and the box's inner
  bytes a multiple of 16 (C4: 32 elements). The driver fills out-of-bounds elements of the
  packed types with zeros only: `..._NAN_REQUEST_ZERO_FMA` is not for them (PK2).
- Into a `#copy.smem<align16>` buffer (16 values to a 16-byte unit, their data at its start)
  FP4 travels as `16U4_ALIGN16B`, and FP6 (`f6E2M3FN`, `f6E3M2FN`) as `16U6_ALIGN16B`, its
  only map type (PK4). cuda.h's rules: an align16 buffer holds those types (PK3); a box of
  128 in the innermost dim, `globalDim[0]` a multiple of 128, strides of multiples of 32 bytes
  (PK5); the swizzles each takes for loads and stores (PK6); TMA only (PK7). A box credits
  its barrier with its packed bytes, as CUTLASS's `TmaTransactionBytes` count them.
- `#copy.smem<swizzle = 128, atom = 32 | 64 (, flip)>` is `CU_TENSOR_MAP_SWIZZLE_128B_ATOM_*`:
  rows as under the 128-byte swizzle, larger units permuted (`copy_dialect.layout`).

All are map forms of cuda.h 12.8, which came with sm_100: a kernel that uses them targets
compute capability 10.0 or more (PK1, SW2). None has run here: there is no Blackwell GPU
(docs/design.md).

A tensor-map value (`!copy.tensormap`) has no atom and no align16: a copy through one from
such a buffer is rejected (SW3). The matrix descriptors and `tcgen05.cp` read 16-byte-atom
swizzles (SW4), but for tcgen05's MN-major descriptor of the 32-byte atom, its layout type 1
(`SWIZZLE_128B_BASE32B`, cute/arch/mma_sm100_desc.hpp; `copy_dialect.descriptors`): there is
none for the 64-byte atom or the flip, and none in wgmma's.
"""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType, NoneAttr
from xdsl.ir import Attribute, Operation

from copy_dialect import layout
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.geometry import PACKED_MAP_TYPES, BoxGeometry, OOBMode
from copy_dialect.memory import gmem_row_stride_bytes, swizzle_of
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
    packed = g.tensor_map_type if packed_map_type(g.element_type) is not None else None
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
    verify_align16_map(g, getattr(g, "is_load", None))


ALIGN16_BOX = 128
"""The innermost box dim of an ALIGN16B map: cuda.h's `boxDim[0]` "must be 128"."""
ALIGN16_DIM_MULTIPLE = 128
"""cuda.h: an ALIGN16B map's `globalDim[0]` "must be a multiple of 128"."""
ALIGN16_STRIDE_MULTIPLE = 32
"""cuda.h: an ALIGN16B map's global strides "must be a multiple of 32" (bytes)."""
ALIGN16_SWIZZLES: dict[str, dict[bool, tuple[str, ...]]] = {
    "16U4_ALIGN16B": {True: ("NONE", "128B", "128B_ATOM_32B"), False: ()},
    "16U6_ALIGN16B": {
        True: ("NONE", "128B", "128B_ATOM_32B"),
        False: ("NONE", "128B", "128B_ATOM_32B", "128B_ATOM_64B"),
    },
}
"""cuda.h's swizzle modes of each ALIGN16B map type, for a load (True) and a store (False):
16U4_ALIGN16B loads only."""
ALIGN16_ELEMENTS = ("f4E2M1FN", "f6E2M3FN", "f6E3M2FN")


def check_align16_buffer(t: MemRefType) -> None:
    """`#copy.smem<align16>` holds packed 4- or 6-bit floats (PK3)."""
    element = t.element_type
    # rule: PK3
    if layout.align16_of(swizzle_of(t)) and type(element) not in PACKED_MAP_TYPES:
        raise Error(
            f"Expected {', '.join(ALIGN16_ELEMENTS)} elements in an align16 buffer (16 packed "
            f"values to a 16-byte unit), got {element}",
            note="drop align16: it lays out packed 4- and 6-bit values, 16 to a 16-byte unit",
        )


def verify_align16_map(g: BoxGeometry, is_load: bool | None) -> None:
    """An ALIGN16B map (`16U4_ALIGN16B`, `16U6_ALIGN16B`; `is_load` None for a prefetch): a
    6-bit copy writes an align16 buffer (PK4), a box of 128 elements in its innermost dim and a
    GMEM innermost dim of a multiple of 128 elements, a row stride of a multiple of 32 bytes
    (PK5), and a swizzle cuda.h allows for its type and direction (PK6)."""
    dtype = g.tensor_map_type
    if dtype not in ALIGN16_SWIZZLES:
        return
    align16 = layout.align16_of(g.swizzle_bytes)
    # rule: PK4
    if is_load is not None and not align16:
        raise Error(
            f"Expected an align16 SMEM buffer for a TMA copy of {g.element_type} elements: "
            f"their only map type is {dtype}, which lays 16 values to a 16-byte unit",
            note="add align16 to the buffer's memory space: #copy.smem<align16>",
        )
    shape = g.gmem_type.get_shape()
    row = gmem_row_stride_bytes(g.gmem_type)
    padded = g.gmem_type
    if shape and shape[-1] >= 0 and isinstance(g.gmem_type.layout, NoneAttr):
        inner = -(-shape[-1] // ALIGN16_DIM_MULTIPLE) * ALIGN16_DIM_MULTIPLE
        padded = MemRefType(g.element_type, [*shape[:-1], inner])
    # rule: PK5
    if (
        g.box_shape[-1] != ALIGN16_BOX
        or (shape and shape[-1] >= 0 and shape[-1] % ALIGN16_DIM_MULTIPLE)
        or (row is not None and row % ALIGN16_STRIDE_MULTIPLE)
    ):
        raise Error(
            f"Expected a {dtype} map's box to be {ALIGN16_BOX} elements in its innermost dim "
            f"and its array's innermost dim a multiple of {ALIGN16_DIM_MULTIPLE} elements, "
            f"rows a multiple of {ALIGN16_STRIDE_MULTIPLE} bytes apart, got a box of "
            f"{list(g.box_shape)} over {g.gmem_type}",
            note=f"copy boxes of {ALIGN16_BOX} elements along the innermost dim, and pad the "
            f"array's rows to a multiple of {ALIGN16_DIM_MULTIPLE} elements ({padded})",
        )
    if is_load is None:
        return
    mode = layout.mode_name(g.swizzle_bytes)
    allowed = ALIGN16_SWIZZLES[dtype][is_load]
    # rule: PK6
    if mode not in allowed:
        what = "load" if is_load else "store"
        raise Error(
            f"Expected a {what} through a {dtype} map to use swizzle "
            f"{' or '.join(allowed) or '(none: the map type loads only)'}, got {mode}",
            note="cuda.h lists 16U4_ALIGN16B for loads only (NONE, 128B, 128B_ATOM_32B) and "
            "16U6_ALIGN16B for loads (the same) and stores (and 128B_ATOM_64B)"
            + ("" if allowed else ": store the values from a packed (not align16) buffer"),
        )


def check_align16_by_tma(g: BoxGeometry) -> None:
    """An align16 buffer is written and read by TMA only (PK7): cp.async and bulk copies
    move bytes in order, without the gaps."""
    # rule: PK7
    if layout.align16_of(g.swizzle_bytes):
        raise Error(
            "Expected a TMA copy of an align16 SMEM buffer: only a 16U4_ALIGN16B or "
            "16U6_ALIGN16B tensor map lays packed values 16 to a 16-byte unit",
            note="use impl tma",
        )


def check_described_swizzle(
    t: MemRefType, what: str, flip_only: bool = False, base32b: bool = False
) -> None:
    """A buffer that a matrix descriptor or `tcgen05.cp` describes has a 16-byte-atom
    swizzle, or, for a tcgen05 MN-major descriptor (`base32b`), the 32-byte atom without the
    flip (layout type 1, `SWIZZLE_128B_BASE32B`); `flip_only`: one whose 16-byte rows
    `ldmatrix`/`stmatrix` address has no flip, which splits each 16-byte unit (SW4)."""
    swizzle = swizzle_of(t)
    atom = layout.atom_of(swizzle)
    allowed = (16, 32) if base32b else (16,)
    # rule: SW4
    if layout.flip_of(swizzle) or (not flip_only and atom not in allowed):
        kind = (
            "no flip (which splits each 16-byte unit)"
            if flip_only
            else "16-byte atoms (and 32-byte ones, MN-major, in tcgen05's form)"
        )
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
    if layout.atom_of(swizzle) != layout.UNIT_BYTES or layout.align16_of(swizzle):
        got = "align16" if layout.align16_of(swizzle) else atom_name(swizzle)
        raise Error(
            f"Expected a copy through a tensor-map value to move a buffer of 16-byte swizzle "
            f"atoms without align16, got {got}: a !copy.tensormap type has neither",
            note="drop map(...) to use the kernel's .param map, which carries the atom, or "
            "allocate the buffer with #copy.smem<swizzle = 128>",
        )
