"""Memory spaces and sizes: which memory a ref lies in, the bits of an element, and the
bytes, strides and alignment of SMEM buffers (their layout is `copy_dialect.layout`) and
GMEM refs."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects.builtin import (
    AnyFloat,
    FloatTF32Type,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
)
from xdsl.dialects.memref import ReinterpretCastOp
from xdsl.ir import Attribute, SSAValue

from copy_dialect import layout
from copy_dialect.attributes import SmemSpaceAttr, TmemSpaceAttr, swizzle_period
from facts import hardware

GMEM, SMEM, TMEM = "GMEM", "SMEM", "TMEM"


def memory_space(t: MemRefType) -> str:
    """GMEM, SMEM, TMEM or the printed memory space when it is none of them."""
    space = t.memory_space
    if isinstance(space, NoneAttr):
        return GMEM
    if isinstance(space, SmemSpaceAttr):
        return SMEM
    if isinstance(space, TmemSpaceAttr):
        return TMEM
    if isinstance(space, IntegerAttr) and space.value.data in (0, 1, 3):
        return SMEM if space.value.data == 3 else GMEM
    return str(space)


def swizzle_of(t: MemRefType) -> int:
    """The swizzle of an SMEM ref's buffer (16: none), as `copy_dialect.layout` takes it: the
    span, a `layout.Swizzle` that also names the atom where it is larger than 16 bytes."""
    space = t.memory_space
    return space.layout_swizzle if isinstance(space, SmemSpaceAttr) else 16


def bitwidth(t: Attribute) -> int | None:
    """Bits an element occupies in memory (every size the dialect computes goes through
    here). tf32 has 19 significant bits but is stored, and moved by TMA, in 32."""
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, FloatTF32Type):
        return 32
    if isinstance(t, AnyFloat):
        return t.bitwidth
    return None


def smem_bytes(shape: Sequence[int], element_type: Attribute, swizzle: int) -> int:
    """Bytes a row-major SMEM buffer occupies (`copy_dialect.layout`: rows padded to the
    swizzle span)."""
    return layout.size_bytes(shape, bitwidth(element_type) or 8, swizzle)


def smem_strides(shape: Sequence[int], element_type: Attribute, swizzle: int) -> tuple[int, ...]:
    """Byte strides of every dim but the innermost of a row-major SMEM buffer
    (`copy_dialect.layout`)."""
    return layout.dim_strides(shape, bitwidth(element_type) or 8, swizzle)


def smem_alignment(swizzle: int) -> int:
    """The alignment a `copy.alloc_smem` buffer gets by default: 128 bytes for TMA (TR10),
    or the swizzle's period when that is larger (TR11)."""
    return max(hardware.SMEM_ALIGNMENT, swizzle_period(swizzle))


def element_strides(t: MemRefType) -> tuple[int | None, ...] | None:
    """The element strides of a ref, each None where it is dynamic: a `?` of a strided
    layout, or, in a row-major ref (no layout), a stride over a dynamic size (known at run
    time from the array's sizes); None for a layout that is neither."""
    shape = t.get_shape()
    if isinstance(t.layout, StridedLayoutAttr):
        return tuple(s.data if isinstance(s, IntAttr) else None for s in t.layout.strides)
    if isinstance(t.layout, NoneAttr):
        return tuple(
            prod(shape[i + 1 :]) if all(d >= 0 for d in shape[i + 1 :]) else None
            for i in range(len(shape))
        )
    return None


def recorded_strides(t: MemRefType) -> tuple[int, ...] | None:
    """The element strides the kernel ABI records for the GMEM ref `t` of a kernel argument
    (`PointerParam.strides`): its strided layout's, -1 for a `?`, where they are not the
    row-major strides of its shape; None for a row-major ref (and for a layout that is not
    strided, which the verifier and the lowering reject)."""
    if not isinstance(t.layout, StridedLayoutAttr):
        return None
    strides = element_strides(t)
    assert strides is not None
    row_major = element_strides(MemRefType(t.element_type, t.get_shape()))
    if None not in strides and strides == row_major:
        return None
    return tuple(-1 if s is None else s for s in strides)


LAYOUT_OFFSET_FIX = (
    "drop the offset, and pass the view of the array that starts where it pointed (e.g. "
    "padded[:, 8:] for offset: 8)"
)
"""How to mend a GMEM ref's nonzero layout offset (`layout_offset_problem`)."""


def layout_offset_problem(t: MemRefType) -> str | None:
    """What is wrong with the offset of `t`'s strided layout, None where it has none or 0.
    The runtime passes the address of the array's first element (a view's own address) and
    the lowering addresses from it: an offset would have to be added in every address and
    subtracted from every array, for nothing a view cannot say (rule B14)."""
    if not isinstance(t.layout, StridedLayoutAttr):
        return None
    offset = t.layout.offset
    if isinstance(offset, IntAttr) and offset.data == 0:
        return None
    shown = offset.data if isinstance(offset, IntAttr) else "?"
    return (
        f"expected the layout of a GMEM ref to have offset 0 (the runtime passes the address "
        f"of the array's first element, and every address starts there), got offset {shown} "
        f"in {t}"
    )


def static_strides(t: MemRefType) -> tuple[int, ...] | None:
    """The element strides of a ref (row-major when it has no layout), when all are static."""
    strides = element_strides(t)
    if strides is None or any(s is None for s in strides):
        return None
    return strides  # type: ignore[return-value]


def has_dynamic_layout_stride(t: MemRefType) -> bool:
    """Whether a strided layout gives the ref a dynamic stride (`strided<[?, 1]>`): one that
    no size of the array tells (a row-major ref's strides follow from its sizes)."""
    return isinstance(t.layout, StridedLayoutAttr) and any(
        not isinstance(s, IntAttr) for s in t.layout.strides
    )


def gmem_view(ref: SSAValue) -> ReinterpretCastOp | None:
    """The `memref.reinterpret_cast` that made GMEM ref `ref` in the kernel (a view of an
    array whose offset, sizes and strides may be values the kernel computes: a group of a
    pool, say), None for any other ref. The lowerings take the view's sizes and strides
    from the cast's operands, and its base from its source and offset: rule H9 checks that
    its type says what they are."""
    cast = ref.owner
    if not isinstance(cast, ReinterpretCastOp) or not isinstance(ref.type, MemRefType):
        return None
    return cast if memory_space(ref.type) == GMEM else None


def gmem_row_stride_bytes(t: MemRefType) -> int | None:
    """Bytes between consecutive rows (innermost dim) of a GMEM ref, when static."""
    bits = bitwidth(t.element_type) or 8
    shape = t.get_shape()
    if len(shape) < 2:
        return None
    if isinstance(t.layout, StridedLayoutAttr):
        stride = t.layout.strides.data[-2]
        return stride.data * bits // 8 if isinstance(stride, IntAttr) else None
    if isinstance(t.layout, NoneAttr) and shape[-1] >= 0:
        return shape[-1] * bits // 8
    return None


def padded_stride(elements: int, element_type: Attribute, align: int) -> int:
    """`elements` rounded up to the fewest elements that span a multiple of `align` bytes."""
    step = max(1, align * 8 // (bitwidth(element_type) or 8))
    return -(-elements // step) * step
