"""Lowers the tensor-memory ops (tcgen05, sm_100a).

- `tmem_alloc` is `tcgen05.alloc` by warp 0 into an arena slot (after the kernel's last
  allocation, `tcgen05.relinquish_alloc_permit`, unless the kernel has a `tmem_relinquish`:
  then that, by warp 0); after a block barrier every thread reads the TMEM address from
  the slot, the hand-off fenced (`tcgen05.fence::before_thread_sync` by warp 0 before the
  barrier, `after_thread_sync` by every thread after it). `tmem_dealloc` is a before fence,
  a block barrier, then an after fence and `tcgen05.dealloc` by warp 0. With
  `cta_group 2`, `.cta_group::2` (warp 0 of each CTA of the pair: the same slot offset in
  both, as CUTLASS's Allocator2Sm needs);
- `tmem_load` and `tmem_store` are `tcgen05.ld`/`tcgen05.st` of each warp at its lanes
  (quarter warp % 4), with `.pack::16b`/`.unpack::16b` for `pack`/`unpack` (the 16-bit
  vector bitcast from/to its 32-bit registers); a `tmem_load` with `reduce` is inline PTX
  `tcgen05.ld.red`;
- `tmem_shift` is `tcgen05.shift.down` at the ref's column, by the elected thread (of the
  block, or of the role that holds it);
- `tmem_slice` is its parent's address plus its first 32-bit column (the lane stays 0);
- `smem_to_tmem` is `tcgen05.cp` (of the op's CTA group) by the elected thread (of the block,
  or of the role of `copy.warp_specialize` that issues it), from a
  shared-memory descriptor of the source, whose rows are one core-matrix row (16 bytes,
  unswizzled) or exactly its swizzle span: the layouts whose descriptor is row-major (rule J12).
"""

from __future__ import annotations

from xdsl.dialects import builtin, llvm
from xdsl.dialects.builtin import DenseArrayBase, IntegerType, MemRefType, VectorType, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from copy_dialect import ops as copy
from passes import nvvm
from passes.convert_copy_to_nvvm.dsmem import slot_address
from passes.convert_copy_to_nvvm.emit import Emit
from passes.convert_copy_to_nvvm.kernel import Kernel, KernelPattern
from passes.llvm_types import (
    TENSOR,
    cast,
    lowered,
    ptr,
    replace_with_casts,
    to_llvm_type,
)

SMEM_LAYOUT_TYPES = {16: 0, 32: 6, 64: 4, 128: 2}
"""tcgen05 shared-memory descriptor layout type of each swizzle (16: none)."""


class LowerTmemAlloc(KernelPattern):
    """`copy.tmem_alloc` -> `tcgen05.alloc` (warp 0) into an SMEM slot, block barrier, load."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TmemAllocOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        e = Emit()
        slot = kernel.arena_address(e, op)
        group = nvvm_group(op)
        ncols = allocated_columns(e, op.result)
        alloc: list[Operation] = [nvvm.Tcgen05AllocOp(slot, ncols, group)]
        if op is kernel.relinquish_after:
            alloc.append(nvvm.Tcgen05RelinquishAllocPermitOp(group))
        # The hand-off of a tcgen05 op's effect to the block's other threads (P14's pattern):
        # fenced before the barrier by the allocating warp, after it by every thread.
        alloc.append(nvvm.Tcgen05FenceOp("before"))
        kernel.warp0(e, alloc)
        e(nvvm.Barrier0Op())
        e(nvvm.Tcgen05FenceOp("after"))
        address = e(llvm.LoadOp(slot, i32)).results[0]
        tmem = e.inttoptr(address, ptr(TENSOR))
        rewriter.replace(op, e.ops, [cast(tmem, op.result.type, e.ops)])


class LowerTmemDealloc(KernelPattern):
    """`copy.tmem_dealloc` -> a block barrier, then `tcgen05.dealloc` (warp 0)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TmemDeallocOp, rewriter: PatternRewriter, /):
        e = Emit()
        (tmem,) = lowered([op.tmem], e.ops)
        # Every thread's tcgen05 accesses ordered before the free: fenced before the barrier,
        # and after it by the freeing warp (CuTeDSL's tcgen05 examples fence before it).
        e(nvvm.Tcgen05FenceOp("before"))
        e(nvvm.Barrier0Op())
        ncols = allocated_columns(e, op.tmem)
        dealloc = nvvm.Tcgen05DeallocOp(tmem, ncols, nvvm_group(op))
        self.kernel(op).warp0(e, [nvvm.Tcgen05FenceOp("after"), dealloc])
        rewriter.replace(op, e.ops, [])


class LowerTmemRelinquish(KernelPattern):
    """`copy.tmem_relinquish` -> `tcgen05.relinquish_alloc_permit` (warp 0)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TmemRelinquishOp, rewriter: PatternRewriter, /):
        e = Emit()
        self.kernel(op).warp0(e, [nvvm.Tcgen05RelinquishAllocPermitOp(nvvm_group(op))])
        rewriter.replace(op, e.ops, [])


class LowerTmemLoad(KernelPattern):
    """`copy.tmem_load` -> `tcgen05.ld.sync.aligned` (with `reduce`: PTX `tcgen05.ld.red`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TmemLoadOp, rewriter: PatternRewriter, /):
        e = Emit()
        address = warp_tmem_address(e, self.kernel(op), op)
        offset = half_split_offset(e, op)
        if op.reduce is not None:
            replace_with_casts(rewriter, op, e.ops, tmem_load_reduce(e, op, address))
            return
        registers = tmem_registers(op.result.type, op.pack is not None)
        shape = op.shape.data.value
        raw = e(
            nvvm.Tcgen05LdOp(
                address, shape=shape, result_type=registers, offset=offset, pack=op.pack is not None
            )
        )
        # f32 lanes, or one register for a vector<1x...>
        value = e.bitcast(raw.results[0], to_llvm_type(op.result.type))
        replace_with_casts(rewriter, op, e.ops, [value])


class LowerTmemStore(KernelPattern):
    """`copy.tmem_store` -> `tcgen05.st.sync.aligned` at the warp's lanes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TmemStoreOp, rewriter: PatternRewriter, /):
        e = Emit()
        address = warp_tmem_address(e, self.kernel(op), op)
        (value,) = lowered([op.value], e.ops)
        # f32 lanes, or one register for a vector<1x...>
        unpack = op.unpack is not None
        value = e.bitcast(value, tmem_registers(op.value.type, unpack))
        offset = half_split_offset(e, op)
        e(nvvm.Tcgen05StOp(address, value, shape=op.shape.data.value, offset=offset, unpack=unpack))
        rewriter.replace(op, e.ops, [])


class LowerTmemWait(KernelPattern):
    """`copy.tmem_wait load|store` -> `tcgen05.wait::ld|st`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TmemWaitOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, [nvvm.Tcgen05WaitOp(kind=op.kind.data.value)], [])


class LowerSmemToTmem(KernelPattern):
    """`copy.smem_to_tmem` -> `tcgen05.cp` from an SMEM descriptor (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.SmemToTmemOp, rewriter: PatternRewriter, /):
        kernel = self.kernel(op)
        src_type = op.tile_type
        swizzle = copy.swizzle_of(src_type)
        bits = copy.bitwidth(src_type.element_type) or 8
        row_bytes = src_type.get_shape()[-1] * bits // 8
        # The verifier guarantees the descriptor's row-major layouts (rule J12).
        assert (row_bytes == 16 and swizzle == 16) or row_bytes == swizzle
        body = Emit()
        smem = slot_address(body, op.src, list(op.indices))
        descriptor = smem_descriptor(body, body.ptrtoint(smem), row_bytes, swizzle)
        (tmem,) = lowered([op.tmem], body.ops)
        (column,) = lowered([op.column], body.ops)
        base = body.ptrtoint(tmem, i32)
        taddr = body.inttoptr(body.add(base, body.resize(column, i32)), ptr(TENSOR))
        multicast = None if op.multicast is None else op.multicast.data.value
        shape = op.shape.data.value
        group = nvvm_group(op)
        body(nvvm.Tcgen05CpOp(taddr, descriptor, shape=shape, group=group, multicast=multicast))
        e = Emit()
        kernel.group(op).elected(e, body.ops)
        rewriter.replace(op, e.ops, [])


class LowerTmemShift(KernelPattern):
    """`copy.tmem_shift` -> `tcgen05.shift.down` at the ref's column (elected thread)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TmemShiftOp, rewriter: PatternRewriter, /):
        body = Emit()
        (tmem,) = lowered([op.tmem], body.ops)
        (column,) = lowered([op.column], body.ops)
        base = body.ptrtoint(tmem, i32)
        taddr = body.inttoptr(body.add(base, body.resize(column, i32)), ptr(TENSOR))
        body(nvvm.Tcgen05ShiftOp(taddr, nvvm_group(op)))
        e = Emit()
        self.kernel(op).group(op).elected(e, body.ops)
        rewriter.replace(op, e.ops, [])


class LowerTmemSlice(KernelPattern):
    """`copy.tmem_slice` -> the parent's TMEM address plus the slice's first column."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.TmemSliceOp, rewriter: PatternRewriter, /):
        e = Emit()
        (tmem,) = lowered([op.tmem], e.ops)
        address = e.add(e.ptrtoint(tmem, i32), e.const(op.first_column, i32))
        view = e.inttoptr(address, ptr(TENSOR))
        rewriter.replace(op, e.ops, [cast(view, op.result.type, e.ops)])


def warp_tmem_address(e: Emit, kernel: Kernel, op: copy.TmemLoadOp | copy.TmemStoreOp) -> SSAValue:
    """The TMEM address a warp's tcgen05.ld/st uses: its lane quarter (warp % 4) * 32 in the
    high half, plus the op's column."""
    (base,) = lowered([op.tmem], e.ops)
    (col,) = lowered([op.column], e.ops)
    quarter = e.binary(llvm.URemOp, e.binary(llvm.UDivOp, kernel.tid, 32), 4)
    lane = e.binary(llvm.ShlOp, e.mul(quarter, 32), 16)
    base_int = e.ptrtoint(base, i32)
    address = e.add(e.add(base_int, e.resize(lane, i32)), e.resize(col, i32))
    return e.inttoptr(address, ptr(TENSOR))


def nvvm_group(op: Operation) -> str | None:
    """The NVVM op's `group` of a copy op's `cta_group`: None (NVVM's default, cta_1) or
    `cta_2`."""
    return "cta_2" if copy.cta_group_of(op) == 2 else None


def allocated_columns(e: Emit, tmem: SSAValue) -> SSAValue:
    """i32: the columns the allocation of a TMEM ref holds."""
    assert isinstance(t := tmem.type, MemRefType)
    return e.const(copy.tmem_columns(t), i32)


def half_split_offset(e: Emit, op: copy.TmemLoadOp | copy.TmemStoreOp) -> SSAValue | None:
    """The i64 immHalfSplitoff of a `.16x32bx2` access, None for other shapes."""
    return None if op.offset is None else e.const(op.offset.value.data, i64)


def tmem_registers(vector: Attribute, packed: bool = False) -> Attribute:
    """The 32-bit registers a tcgen05.ld/st of `vector` takes: i32 for one (as NVVM's
    tcgen05.ld/st take it), else vector<n x i32>; `packed` (pack/unpack): one register for
    two of the vector's 16-bit elements."""
    assert isinstance(vector, VectorType)
    n = vector.get_shape()[0] // (2 if packed else 1)
    return i32 if n == 1 else VectorType(i32, [n])


def tmem_load_reduce(e: Emit, op: copy.TmemLoadOp, address: SSAValue) -> list[SSAValue]:
    """A `tcgen05.ld.red`: the loaded vector and the reduced value. No NVVM op or intrinsic
    has it: inline PTX, registers then the reduced value, returned as one struct."""
    assert op.reduce is not None
    assert isinstance(result_type := op.result.type, VectorType)
    n = result_type.get_shape()[0]
    element = result_type.element_type
    suffix = (
        ".f32"
        if isinstance(element, builtin.Float32Type)
        else (
            ".s32"
            if isinstance(element, IntegerType)
            and element.signedness.data == builtin.Signedness.SIGNED
            else ".u32"
        )
    )
    flags = (".abs" if op.abs is not None else "") + (".NaN" if op.nan is not None else "")
    shape = op.shape.data.value.removeprefix("shape_")
    registers = ", ".join(f"${i}" for i in range(n))
    address_operand = f"[${n + 1}]"
    if op.offset is not None:  # immHalfSplitoff follows the address
        address_operand += f", {op.offset.value.data}"
    asm = (
        f"tcgen05.ld.red.sync.aligned.{shape}.x{op.num.value.data}."
        f"{op.reduce.data.value}{flags}{suffix} {{{registers}}}, ${n}, {address_operand};"
    )
    scalar = to_llvm_type(element)
    register = "f" if isinstance(element, builtin.Float32Type) else "r"
    constraints = ",".join([f"={register}"] * (n + 1) + ["r"])
    struct = llvm.LLVMStructType.from_type_list([scalar] * (n + 1))
    call = e(
        llvm.InlineAsmOp(asm, constraints, [address], [struct], has_side_effects=True)
    ).results[0]
    values = [
        e(llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [i]), call, scalar)).results[0]
        for i in range(n + 1)
    ]
    vector: SSAValue = e(llvm.UndefOp(to_llvm_type(result_type))).results[0]
    for i, v in enumerate(values[:n]):
        position = e.const(i, i32)
        vector = e(llvm.InsertElementOp(vector, v, position)).results[0]
    return [vector, values[n]]


def smem_descriptor(e: Emit, address: SSAValue, row_bytes: int, swizzle: int) -> SSAValue:
    """The sm_100 shared-memory matrix descriptor (CUTLASS's UMMA::SmemDescriptor) of a
    K-major buffer whose rows are `row_bytes` wide: start address >> 4 (bits 0-13), leading
    byte offset >> 4 (16-29), stride byte offset >> 4 (32-45: eight rows), version 1 (46),
    layout type (61-63)."""
    start = e.binary(llvm.LShrOp, e.binary(llvm.AndOp, address, 0x3FFFF), 4)
    fields = ((row_bytes * 8) >> 4) << 32 | (128 >> 4) << 16 | 1 << 46
    fields |= SMEM_LAYOUT_TYPES[swizzle] << 61
    return e.binary(llvm.OrOp, start, fields - (1 << 64) if fields >= 1 << 63 else fields)
