"""Tensor memory (tcgen05, sm_100a family): the TMEM tables (columns, registers per
`tcgen05.ld`/`st` shape, bytes per `tcgen05.cp` shape: the one source of them), TMEM refs,
the CTA group (`cta_group 2`: `.cta_group::2`, a CTA pair), and `copy.tmem_alloc`,
`copy.tmem_dealloc`, `copy.tmem_relinquish` and `copy.tmem_wait`. `copy.tmem_load` and
`copy.tmem_store` are in `copy_dialect.tmem_access`, `copy.smem_to_tmem` and
`copy.tmem_shift` (tcgen05.cp, tcgen05.shift) in `copy_dialect.tmem_moves`."""

from __future__ import annotations

from functools import cache

from xdsl.dialects.builtin import (
    I32,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    UnrealizedConversionCastOp,
    i32,
)
from xdsl.ir import (
    Operation,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)

from copy_dialect.attributes import (
    TmemCopyShape,
    TmemShape,
    TmemWaitKind,
    TmemWaitKindAttr,
)
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.instruction_descriptor import MmaInstructionDescriptorOp
from copy_dialect.memory import (
    TMEM,
    bitwidth,
    memory_space,
    static_strides,
)
from copy_dialect.roles import check_block_wide
from copy_dialect.smem import SmemAllocation
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import (
    cluster_shape,
    enclosing_target,
    feature_error,
    retarget_note,
)
from facts import hardware as hw
from facts.target import TCGEN05

SPARSE_METADATA = IntegerType(2)
"""The element type of a sparse MMA's metadata (`tcgen05.mma.sp`, PTX ISA 9.7.16.10.8 "Sparse
Matrices": 2-bit indices of the kept elements of A; Mosaic's i2 refs): copied from SMEM to TMEM
by `copy.smem_to_tmem ... metadata` (J13), the only TMEM element of fewer than 4 bits (J21)."""

TMEM_COLUMNS = hw.TMEM_MAX_COLUMNS
"""The most 32-bit TMEM columns of a CTA on any target (`[tmem]` of hardware.toml, 128 lanes
each); the checks read their own target's (`tmem_capacity`)."""


def tmem_capacity(op: Operation) -> int:
    """The 32-bit TMEM columns of a CTA on `op`'s target (`[tmem]` of hardware.toml); where
    no target is named (or the target has no TMEM, which A14 reports), the most of any."""
    target = enclosing_target(op)
    if target is None:
        return hw.TMEM_MAX_COLUMNS
    return hw.TMEM_COLUMNS.get(target.name, hw.TMEM_MAX_COLUMNS)


TMEM_REGS_PER_NUM = {
    TmemShape.S32X32B: 1,
    TmemShape.S16X64B: 1,
    TmemShape.S16X128B: 2,
    TmemShape.S16X256B: 4,
    TmemShape.S16X32BX2: 1,
}
"""32-bit registers per thread for `.num = x1` of each tcgen05.ld/st shape."""


TMEM_LANES = {
    TmemShape.S32X32B: 32,
    TmemShape.S16X64B: 16,
    TmemShape.S16X128B: 16,
    TmemShape.S16X256B: 16,
    TmemShape.S16X32BX2: 16,
}
"""TMEM lanes one warp's tcgen05.ld/st of each shape touches, from the address's lane (the
lowering gives warp w the lane (w % 4) * 32: a 16-lane shape reads the first half of it)."""


def tmem_fragment(
    shape: TmemShape, thread: int, register: int, offset: int = 0, pack: bool = False
) -> tuple[int, int]:
    """(lane, column) that register `register` of thread `thread` (0-31, of its warp) holds
    after a tcgen05.ld of `shape` (and that a tcgen05.st writes), relative to the address's
    lane and 32-bit column; registers count through every `.num` repeat. `offset` is the
    16x32bx2 half offset (immHalfSplitoff), the column of the half of threads 16-31.
    With `pack` (`.pack::16b` / `.unpack::16b`) a register holds the 16-bit values of two
    adjacent 32-bit columns (the PTX ISA: "two 16-bit elements from adjacent columns"), so
    the shape's columns count pairs: the first of the register's pair is returned, its low
    half; the second is the next column.

    These are the PTX ISA's figures "Matrix fragments for shape .32x32b/.16x64b/.16x128b/
    .16x256b/.16x32bx2" (tcgen05 data-movement shapes) written as formulas (TVM's tcgen05.ld/st
    page has them so); CUTLASS's SM100 TMEM_LOAD copy atoms give the same maps
    (tests/tools/test_copy_layout.py decodes them). Not measured: the H200 has no TMEM."""
    t, r = thread, register
    half = 0  # the 16x32bx2 half offset of this thread
    if shape == TmemShape.S32X32B:
        lane, column = t, r
    elif shape == TmemShape.S16X64B:
        lane, column = t // 4 + 8 * (t % 2), (t // 2) % 2 + 2 * r
    elif shape == TmemShape.S16X128B:
        lane, column = t // 4 + 8 * (r % 2), t % 4 + 4 * (r // 2)
    elif shape == TmemShape.S16X256B:
        lane, column = t // 4 + 8 * ((r // 2) % 2), r % 2 + 2 * (t % 4) + 8 * (r // 4)
    else:
        lane, column, half = t % 16, r, offset * (t // 16)
    return lane, column * (2 if pack else 1) + half


@cache
def tmem_span(shape: TmemShape, num: int, offset: int = 0, pack: bool = False) -> int:
    """The 32-bit columns a tcgen05.ld/st of `shape` x `num` reaches from its address's
    column: one past the largest column of its fragment (`tmem_fragment`; with `pack`, the
    second column of the largest pair). Kept per configuration: the protocol's walk asks it
    of every load and store."""
    regs = num * TMEM_REGS_PER_NUM[shape]
    last = max(tmem_fragment(shape, t, r, offset, pack)[1] for t in range(32) for r in range(regs))
    return last + (2 if pack else 1)


TMEM_COPY_BYTES = {
    TmemCopyShape.S128X256B: 128 * 32,
    TmemCopyShape.S4X256B: 4 * 32,
    TmemCopyShape.S128X128B: 128 * 16,
    TmemCopyShape.S64X128B: 64 * 16,
    TmemCopyShape.S32X128B: 32 * 16,
}
"""SMEM bytes one tcgen05.cp of each shape reads."""


def check_tcgen05(op: Operation) -> None:
    target = enclosing_target(op)
    # rule: A14
    if target is not None and not TCGEN05.has(target):
        raise feature_error(op, TCGEN05, target, note=retarget_note(TCGEN05))


CTA_GROUPS = (1, 2)
"""`.cta_group::1` (the CTA's own TMEM) and `.cta_group::2` (the CTA pair's: the op acts on
the TMEM of the CTA and of its peer, the CTA whose %cluster_ctarank differs in bit 0)."""


def cta_group_attr(group: int | None) -> IntegerAttr | None:
    """The `cta_group` property of an op built with `group` (None or 1: left out)."""
    return None if group in (None, 1) else IntegerAttr(group, i32)


def cta_group_of(op: Operation) -> int:
    """The CTA group a tcgen05 op names (`cta_group N`), 1 when it names none or is no
    tcgen05 op with a CTA group."""
    attr = op.properties.get("cta_group")
    return attr.value.data if isinstance(attr, IntegerAttr) else 1


MMAS = ("nvvm.tcgen05.mma", "nvvm.tcgen05.mma.sp")
"""The tcgen05 MMAs (upstream NVVM's, by name: they live with the lowering), dense and sparse."""
COPY, SHIFT = "copy.smem_to_tmem", "copy.tmem_shift"


def tcgen05_group(op: Operation) -> int:
    """The CTA group of a tcgen05 op: a copy op's `cta_group`, an NVVM MMA's `ctaGroup`."""
    group = op.properties.get("ctaGroup")
    if group is not None:
        kind = getattr(group, "data", None)  # upstream's CTAGroupKind, a str enum
        return 2 if kind == "cta_2" else 1
    return cta_group_of(op)


def mma_shape(op: Operation) -> object:
    """What an MMA's shape is known by: its `copy.mma_instruction_descriptor`'s M, N and
    sparsity, else its instruction descriptor value itself."""
    desc = op.operands[3]
    owner = desc.owner
    if isinstance(owner, MmaInstructionDescriptorOp):
        return (owner.m.value.data, owner.n.value.data, owner.sparse is not None)
    return desc


def uncast(v: SSAValue) -> SSAValue:
    """A TMEM pointer's memref: through `builtin.unrealized_conversion_cast`s."""
    while isinstance(v.owner, UnrealizedConversionCastOp) and len(v.owner.inputs) == 1:
        v = v.owner.inputs[0]
    return v


def pipelined(first: Operation, second: Operation) -> bool:
    """Whether one thread's asynchronous tcgen05 operations `first` then `second` execute in
    their issue order (PTX ISA 9.7.16.6.2, "Pipelined tcgen05 Instructions": the
    asynchronous tcgen05 operations may execute and complete in any order, except the pairs
    tcgen05.mma -> tcgen05.mma of one accumulator and shape, tcgen05.cp -> tcgen05.mma,
    tcgen05.shift -> tcgen05.mma, tcgen05.shift -> tcgen05.cp 4x256b and tcgen05.mma ->
    tcgen05.shift, each of one CTA group). Any other pair that touches the same columns
    (a tcgen05.cp over the metadata or scale factors an earlier MMA reads, say) is ordered
    only by a commit of the first, a wait that observes its arrival and
    tcgen05.fence::after_thread_sync."""
    a, b = first.name, second.name
    if tcgen05_group(first) != tcgen05_group(second):
        return False
    if a in MMAS and b in MMAS:
        same = uncast(first.operands[0]) is uncast(second.operands[0])
        return same and mma_shape(first) == mma_shape(second)
    if b in MMAS:
        return a in (COPY, SHIFT)
    if a == SHIFT and b == COPY:
        shape = second.properties.get("shape")
        return shape is not None and "4x256b" in str(shape)
    return a in MMAS and b == SHIFT


def check_cta_group(op: Operation) -> None:
    """`cta_group` is 1 or 2; `cta_group 2` needs a kernel whose cluster holds CTA pairs
    (the targets with `.cta_group::2` are those with tcgen05: `check_tcgen05`, A14). The
    peer is the CTA whose rank differs in bit 0, so the first cluster dim of extent > 1
    (the fastest-varying one of the rank) must be even, or the pair would straddle two
    rows of the cluster."""
    group = cta_group_of(op)
    # rule: J26
    if group not in CTA_GROUPS:
        raise Error(
            f"cta_group is 1 (the CTA's TMEM) or 2 (a CTA pair's), got {group}",
            note="use cta_group 2 for a CTA pair, or leave cta_group out for the CTA's own",
        )
    if group == 1:
        return
    cluster = cluster_shape(op)
    axis = next((d for d, n in enumerate(cluster) if n > 1), None)
    # rule: J26
    if axis is None or cluster[axis] % 2:
        found = (
            "the kernel has no cluster"
            if axis is None
            else f"its first cluster dim of more than one CTA, {'xyz'[axis]}, has "
            f"{cluster[axis]} CTAs"
        )
        shape = [2 if d == (axis or 0) else n for d, n in enumerate(cluster)]
        if axis is not None:
            shape[axis] = cluster[axis] + 1
        raise Error(
            f"cta_group 2 acts on a CTA pair (the CTAs whose cluster rank differs in bit 0), "
            f"but {found}",
            note="give the kernel a cluster whose first dim of more than one CTA is even: "
            f"copy.cluster = array<i32: {', '.join(map(str, shape))}>",
        )


def check_tmem_ref(t: MemRefType) -> None:
    shape = t.get_shape()
    # rule: J6
    if len(shape) != 2:
        raise Error(
            f"TMEM can only represent 2D shapes, got {list(shape)}",
            note="a TMEM ref is lanes x columns: "
            f"memref<128x{shape[-1] if shape else 'N'}x{t.element_type}, #copy.tmem>",
        )
    # rule: J6
    if shape[0] not in (64, 128):
        raise Error(
            f"Unsupported shape: {list(shape)}. TMEM references must have either 128 or 64 "
            f"rows, but got {shape[0]}.",
            note="TMEM has 128 lanes; a ref covers all of them (or the 64 of a half)",
        )
    # rule: J20
    if not isinstance(t.layout, NoneAttr) and static_strides(t) != (shape[1], 1):
        raise Error(
            f"TMEM refs must have the standard lanes x columns layout, got {t.layout}",
            note=f"drop the layout {t.layout}: TMEM is addressed by lane and column, a "
            "transposed or strided TMEM ref cannot be loaded, stored or allocated",
        )
    bits = bitwidth(t.element_type)
    # rule: J21
    if bits not in (4, 8, 16, 32) and t.element_type != SPARSE_METADATA:
        raise Error(
            f"TMEM holds 32-bit cells, which cannot pack elements of type {t.element_type}",
            note="use an element type of 32, 16, 8 or 4 bits, or i2 for sparse metadata (i1 "
            "values as i8 or i32)",
        )


def tmem_columns(t: MemRefType) -> int:
    """The 32-bit TMEM columns a ref spans: its elements per lane, packed 32 / bits to a
    column, rounded up (65 bf16 elements span 33 columns)."""
    bits = bitwidth(t.element_type) or 32
    return -(-t.get_shape()[1] * bits // 32)


class TmemAddressSlot(SmemAllocation):
    """`tcgen05.alloc` writes the allocation's TMEM address to a 4-byte SMEM slot."""

    def footprint(self, op: Operation) -> tuple[int, int]:
        return 4, 4


@copy_op_definition
class TmemAllocOp(IRDLOperation):
    """
    Allocates TMEM columns for the CTA (`tcgen05.alloc`; after the kernel's last one
    `tcgen05.relinquish_alloc_permit` unless it has a `copy.tmem_relinquish`). With
    `cta_group 2` (`%t = copy.tmem_alloc cta_group 2 : ...`, in a kernel with a cluster)
    warp 0 of each CTA of a pair allocates the same columns in both CTAs together
    (`tcgen05.alloc.cta_group::2`).

    ```mlir
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    ```
    """

    name = "copy.tmem_alloc"

    cta_group = opt_prop_def(IntegerAttr[I32])

    result = result_def(MemRefType)

    traits = traits_def(TmemAddressSlot())

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "(`cta_group` $cta_group^)? attr-dict `:` type($result)"

    def __init__(self, result_type: MemRefType, cta_group: int | None = None):
        super().__init__(
            result_types=[result_type], properties={"cta_group": cta_group_attr(cta_group)}
        )

    def verify_(self) -> None:
        check_block_wide(self, "tmem_alloc (warp 0 allocates, then the block synchronizes)")
        assert isinstance(t := self.result.type, MemRefType)
        # rule: J10
        if memory_space(t) != TMEM:
            raise Error(
                f"copy.tmem_alloc allocates TMEM, got a ref in {memory_space(t)}",
                note="give the result the memory space #copy.tmem",
            )
        check_tcgen05(self)
        check_cta_group(self)
        check_tmem_ref(t)
        ncols = tmem_columns(t)
        least, most = hw.TMEM_MIN_COLUMNS, tmem_capacity(self)
        # rule: J10
        if ncols < least or ncols > most or ncols & (ncols - 1):
            bits = bitwidth(t.element_type) or 32
            sizes = [least << i for i in range((most // least).bit_length())]
            listed = f"{', '.join(map(str, sizes[:-1]))} or {sizes[-1]}"
            raise Error(
                f"ncols must be a power of 2 and within [{least}, {most}], got: {ncols}",
                note=f"{t.get_shape()[1]} elements of {t.element_type} per lane span {ncols} "
                f"columns of 32 bits: allocate {listed} columns "
                f"({', '.join(str(c * 32 // bits) for c in sizes)} elements)",
            )


@copy_op_definition
class TmemDeallocOp(IRDLOperation):
    """
    Frees TMEM allocated by `copy.tmem_alloc` (`tcgen05.dealloc`), with the allocation's
    CTA group (`cta_group 2`: warp 0 of each CTA of the pair frees it together).

    ```mlir
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    ```
    """

    name = "copy.tmem_dealloc"

    tmem = operand_def(MemRefType)

    cta_group = opt_prop_def(IntegerAttr[I32])

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$tmem (`cta_group` $cta_group^)? attr-dict `:` type($tmem)"

    def __init__(self, tmem: SSAValue | Operation, cta_group: int | None = None):
        super().__init__(operands=[tmem], properties={"cta_group": cta_group_attr(cta_group)})

    def verify_(self) -> None:
        check_block_wide(self, "tmem_dealloc (warp 0 allocates, then the block synchronizes)")
        assert isinstance(t := self.tmem.type, MemRefType)
        # rule: J10
        if memory_space(t) != TMEM or not isinstance(self.tmem.owner, TmemAllocOp):
            raise Error(
                "copy.tmem_dealloc frees the result of a copy.tmem_alloc",
                note="pass the TMEM ref that copy.tmem_alloc returned",
            )
        check_tcgen05(self)
        check_cta_group(self)
        mine, allocated = cta_group_of(self), cta_group_of(self.tmem.owner)
        # rule: J27
        if mine != allocated:
            raise Error(
                f"copy.tmem_dealloc of cta_group {mine} frees an allocation of cta_group "
                f"{allocated}",
                note="free TMEM with the CTA group that allocated it: "
                + (f"cta_group {allocated}" if allocated != 1 else "drop cta_group"),
            )


@copy_op_definition
class TmemRelinquishOp(IRDLOperation):
    """
    Gives up the CTA's permit to allocate TMEM (`tcgen05.relinquish_alloc_permit`): no
    `copy.tmem_alloc` may follow it, and a CTA blocked allocating may go on. Warp 0 issues
    it (with `cta_group 2`, warp 0 of each CTA of the pair). Without it, the lowering
    relinquishes after the kernel's last allocation.

    ```mlir
    copy.tmem_relinquish
    ```
    """

    name = "copy.tmem_relinquish"

    cta_group = opt_prop_def(IntegerAttr[I32])

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "(`cta_group` $cta_group^)? attr-dict"

    def __init__(self, cta_group: int | None = None):
        super().__init__(properties={"cta_group": cta_group_attr(cta_group)})

    def verify_(self) -> None:
        check_block_wide(self, "tmem_relinquish (warp 0 relinquishes the CTA's permit)")
        check_tcgen05(self)
        check_cta_group(self)


@copy_op_definition
class TmemWaitOp(IRDLOperation):
    """
    Waits for this thread's TMEM loads or stores to complete (`tcgen05.wait::ld|st`).

    ```mlir
    copy.tmem_wait load
    ```
    """

    name = "copy.tmem_wait"

    kind = prop_def(TmemWaitKindAttr)

    assembly_format = "$kind attr-dict"

    def __init__(self, kind: TmemWaitKind | str):
        super().__init__(properties={"kind": TmemWaitKindAttr(TmemWaitKind(kind))})

    def verify_(self) -> None:
        check_tcgen05(self)
