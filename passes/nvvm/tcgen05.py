"""tcgen05 (sm_100a): tensor memory allocation, the waits, the SMEM -> TMEM copy, and the
TMEM loads and stores (upstream NVVMOps.td's `NVVM_Tcgen05*` ops).

The shapes of the loads, stores and copies and the registers each load or store shape moves
are the copy dialect's tables (`TmemShape`, `TmemCopyShape`, `TMEM_REGS_PER_NUM`): the copy
ops lower to these ops one to one.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I32, I64, AnyOf, UnitAttr, VectorType, i32
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from copy_dialect.ops import TMEM_REGS_PER_NUM, TmemCopyShape, TmemShape, TmemWaitKind
from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import (
    TENSOR_PTR,
    AngleBracketEnum,
    CTAGroupKind,
    CTAGroupKindAttr,
    addr_space,
    cta_group,
    ptr_in,
)
from passes.nvvm.emit import arg, call, call_bound


class Tcgen05CpMulticast(StrEnum):
    NONE = "none"
    WARPX2_02_13 = "warpx2_02_13"
    WARPX2_01_23 = "warpx2_01_23"
    WARPX4 = "warpx4"


class Tcgen05CpSrcFormat(StrEnum):
    B6x16_P32 = "b6x16_p32"
    B4x16_P64 = "b4x16_p64"


@irdl_attr_definition
class Tcgen05WaitKindAttr(AngleBracketEnum, EnumAttribute[TmemWaitKind]):
    name = "nvvm.tcgen05_wait"


@irdl_attr_definition
class Tcgen05CpShapeAttr(AngleBracketEnum, EnumAttribute[TmemCopyShape]):
    name = "nvvm.tcgen05_cp_shape"


@irdl_attr_definition
class Tcgen05CpMulticastAttr(AngleBracketEnum, EnumAttribute[Tcgen05CpMulticast]):
    name = "nvvm.tcgen05_cp_multicast"


@irdl_attr_definition
class Tcgen05CpSrcFormatAttr(AngleBracketEnum, EnumAttribute[Tcgen05CpSrcFormat]):
    name = "nvvm.tcgen05_cp_src_fmt"


@irdl_attr_definition
class Tcgen05LdStShapeAttr(AngleBracketEnum, EnumAttribute[TmemShape]):
    name = "nvvm.tcgen05_ldst_shape"


# tcgen05.ld/st registers: i32 or vector<N x i32>, N a power of two up to 128.
TMEM_REGS = AnyOf.get(i32, *(VectorType(i32, [n]) for n in (2, 4, 8, 16, 32, 64, 128)))

V4I32 = VectorType(i32, [4])
"""`vector<4xi32>`, the default tcgen05.ld result (32x32b.x4)."""

_CTA_1 = CTAGroupKindAttr(CTAGroupKind.CTA_1)


class _GroupOp(IRDLOperation):
    """A tcgen05 op that one CTA (`cta_1`, the default) or a CTA pair (`cta_2`) issues."""

    group = opt_prop_def(CTAGroupKindAttr, default_value=_CTA_1)

    irdl_options = (ParsePropInAttrDict(),)

    def _cg(self) -> str:
        """The intrinsic-name suffix of the CTA group: `cg1` or `cg2`."""
        return "cg2" if (self.group or _CTA_1).data == CTAGroupKind.CTA_2 else "cg1"


@irdl_op_definition
class Tcgen05AllocOp(_GroupOp):
    """`tcgen05.alloc.cta_group::N.sync.aligned{.shared::cta}.b32 [addr], nCols`: allocates
    `nCols` TMEM columns (a power of two >= 32) and writes their address to `addr`.

    ```mlir
    nvvm.tcgen05.alloc %slot, %ncols : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.tcgen05.alloc"

    addr = operand_def(ptr_in(0, 3))
    n_cols = operand_def(I32)

    assembly_format = "$addr `,` $n_cols attr-dict `:` type(operands)"

    def __init__(
        self, addr: SSAValue | Operation, ncols: SSAValue | Operation, group: str | None = None
    ):
        super().__init__(operands=[addr, ncols], properties=cta_group(group))

    def to_llvm_ir(self, e: IREmitter) -> None:
        shared = ".shared" if addr_space(self.addr.type) == 3 else ""
        callee = f"llvm.nvvm.tcgen05.alloc{shared}.{self._cg()}"
        call(e, callee, [arg(e, self.addr), arg(e, self.n_cols)])


@irdl_op_definition
class Tcgen05DeallocOp(_GroupOp):
    """`tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, nCols`: frees TMEM columns.

    ```mlir
    nvvm.tcgen05.dealloc %taddr, %ncols : !llvm.ptr<6>, i32
    ```
    """

    name = "nvvm.tcgen05.dealloc"

    taddr = operand_def(TENSOR_PTR)
    n_cols = operand_def(I32)

    assembly_format = "$taddr `,` $n_cols attr-dict `:` type(operands)"

    def __init__(
        self, taddr: SSAValue | Operation, ncols: SSAValue | Operation, group: str | None = None
    ):
        super().__init__(operands=[taddr, ncols], properties=cta_group(group))

    def to_llvm_ir(self, e: IREmitter) -> None:
        callee = f"llvm.nvvm.tcgen05.dealloc.{self._cg()}"
        call(e, callee, [arg(e, self.taddr), arg(e, self.n_cols)])


@irdl_op_definition
class Tcgen05RelinquishAllocPermitOp(_GroupOp):
    """`tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned`: the CTA allocates no
    more TMEM.

    ```mlir
    nvvm.tcgen05.relinquish_alloc_permit
    ```
    """

    name = "nvvm.tcgen05.relinquish_alloc_permit"

    assembly_format = "attr-dict"

    def __init__(self, group: str | None = None):
        super().__init__(properties=cta_group(group))

    def to_llvm_ir(self, e: IREmitter) -> None:
        call(e, f"llvm.nvvm.tcgen05.relinq.alloc.permit.{self._cg()}", [])


@irdl_op_definition
class Tcgen05WaitOp(IRDLOperation):
    """`tcgen05.wait::{ld,st}.sync.aligned`: waits for the thread's prior tcgen05.ld/st.

    ```mlir
    nvvm.tcgen05.wait <load>
    ```
    """

    name = "nvvm.tcgen05.wait"

    kind = prop_def(Tcgen05WaitKindAttr)

    assembly_format = "$kind attr-dict"

    def __init__(self, kind: str = "load"):
        super().__init__(properties={"kind": Tcgen05WaitKindAttr(TmemWaitKind(kind))})

    def to_llvm_ir(self, e: IREmitter) -> None:
        kind = "ld" if self.kind.data == TmemWaitKind.LOAD else "st"
        call(e, f"llvm.nvvm.tcgen05.wait.{kind}", [])


@irdl_op_definition
class Tcgen05CpOp(_GroupOp):
    """`tcgen05.cp.cta_group::N.<shape>{.<multicast>}{.<srcFormat>} [taddr], smem_desc`:
    asynchronous copy of the SMEM matrix described by `smem_desc` into TMEM.

    ```mlir
    nvvm.tcgen05.cp %taddr, %desc {shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}
    ```
    """

    name = "nvvm.tcgen05.cp"

    shape = prop_def(Tcgen05CpShapeAttr)
    multicast = opt_prop_def(
        Tcgen05CpMulticastAttr, default_value=Tcgen05CpMulticastAttr(Tcgen05CpMulticast.NONE)
    )
    src_format = opt_prop_def(Tcgen05CpSrcFormatAttr, prop_name="srcFormat")
    taddr = operand_def(TENSOR_PTR)
    smem_desc = operand_def(I64)

    assembly_format = "$taddr `,` $smem_desc attr-dict"

    def __init__(
        self,
        taddr: SSAValue | Operation,
        smem_desc: SSAValue | Operation,
        shape: str = "shape_128x256b",
        group: str | None = None,
        multicast: str | None = None,
        src_format: str | None = None,
    ):
        properties: dict[str, Attribute] = {"shape": Tcgen05CpShapeAttr(TmemCopyShape(shape))}
        properties |= cta_group(group)
        if multicast is not None:
            properties["multicast"] = Tcgen05CpMulticastAttr(Tcgen05CpMulticast(multicast))
        if src_format is not None:
            properties["srcFormat"] = Tcgen05CpSrcFormatAttr(Tcgen05CpSrcFormat(src_format))
        super().__init__(operands=[taddr, smem_desc], properties=properties)

    def _multicast(self) -> Tcgen05CpMulticast:
        return Tcgen05CpMulticast.NONE if self.multicast is None else self.multicast.data

    def verify_(self) -> None:
        shape, mc = self.shape.data, self._multicast()
        if shape == TmemCopyShape.S64X128B:
            if mc not in (Tcgen05CpMulticast.WARPX2_01_23, Tcgen05CpMulticast.WARPX2_02_13):
                raise VerifyException(
                    "Shape 64x128b requires multicast warpx2_01_23 or warpx2_02_13 for "
                    "tcgen05.cp Op"
                )
        elif shape == TmemCopyShape.S32X128B:
            if mc != Tcgen05CpMulticast.WARPX4:
                raise VerifyException("Shape 32x128b requires multicast warpx4 for tcgen05.cp Op")
        elif mc != Tcgen05CpMulticast.NONE:
            raise VerifyException("Invalid multicast type for tcgen05.cp Op")

    def to_llvm_ir(self, e: IREmitter) -> None:
        # llvm.nvvm.tcgen05.cp.<shape>{_<multicast>}{.<src_fmt>}.cg<N>
        name = self.shape.data.value.removeprefix("shape_")
        if self._multicast() != Tcgen05CpMulticast.NONE:
            name += f"_{self._multicast().value}"
        if self.src_format is not None:
            name += f".{self.src_format.data.value}"
        callee = f"llvm.nvvm.tcgen05.cp.{name}.{self._cg()}"
        call(e, callee, [arg(e, self.taddr), arg(e, self.smem_desc)])


@irdl_op_definition
class Tcgen05ShiftOp(_GroupOp):
    """`tcgen05.shift.cta_group::N.down [taddr]`: asynchronously shifts the 32-byte element
    at `taddr`'s column of every TMEM row but the last down by one row (sm_100a, sm_103a,
    sm_110a).

    ```mlir
    nvvm.tcgen05.shift %taddr : !llvm.ptr<6>
    ```
    """

    name = "nvvm.tcgen05.shift"

    taddr = operand_def(TENSOR_PTR)

    assembly_format = "$taddr attr-dict `:` type($taddr)"

    def __init__(self, taddr: SSAValue | Operation, group: str | None = None):
        super().__init__(operands=[taddr], properties=cta_group(group))

    def to_llvm_ir(self, e: IREmitter) -> None:
        call(e, f"llvm.nvvm.tcgen05.shift.down.{self._cg()}", [arg(e, self.taddr)])


def _tmem_regs(t: Attribute) -> int:
    return t.get_shape()[0] if isinstance(t, VectorType) else 1


class _LdStOp(IRDLOperation):
    """tcgen05.ld or st: `regs` registers per thread of a TMEM slice of shape `shape`."""

    shape = prop_def(Tcgen05LdStShapeAttr)

    irdl_options = (ParsePropInAttrDict(),)

    def _verify_regs(self, regs: int, offset: SSAValue | None, what: str) -> None:
        shape = self.shape.data
        if shape == TmemShape.S16X32BX2 and offset is None:
            raise VerifyException("shape 16x32bx2 requires offset argument")
        if regs < TMEM_REGS_PER_NUM[shape]:
            raise VerifyException(f"{what} {regs} for shape {shape.value}")

    def _callee(self, verb: str, regs: int) -> str:
        """`llvm.nvvm.tcgen05.<verb>.<shape>.x<num>`, `num` the repeat factor of `regs`."""
        shape = self.shape.data
        num = regs // TMEM_REGS_PER_NUM[shape]
        return f"llvm.nvvm.tcgen05.{verb}.{shape.value.removeprefix('shape_')}.x{num}"


@irdl_op_definition
class Tcgen05LdOp(_LdStOp):
    """`tcgen05.ld.sync.aligned.<shape>.x<num>{.pack::16b}.b32`: loads a TMEM slice into
    registers across the warp (`num` follows from the result length).

    ```mlir
    %r = nvvm.tcgen05.ld %taddr {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
    ```
    """

    name = "nvvm.tcgen05.ld"

    pack = opt_prop_def(UnitAttr)
    tmem_addr = operand_def(TENSOR_PTR)
    offset = opt_operand_def(I64)
    res = result_def(TMEM_REGS)

    assembly_format = "$tmem_addr (`,` $offset^)? (`pack` $pack^)? attr-dict `:` type($res)"

    def __init__(
        self,
        tmem_addr: SSAValue | Operation,
        shape: str = "shape_32x32b",
        result_type: Attribute = V4I32,
        offset: SSAValue | Operation | None = None,
        pack: bool = False,
    ):
        properties: dict[str, Attribute] = {"shape": Tcgen05LdStShapeAttr(TmemShape(shape))}
        if pack:
            properties["pack"] = UnitAttr()
        super().__init__(
            operands=[tmem_addr, offset], result_types=[result_type], properties=properties
        )

    def verify_(self) -> None:
        self._verify_regs(_tmem_regs(self.res.type), self.offset, "invalid result type length")

    def to_llvm_ir(self, e: IREmitter) -> None:
        args = [arg(e, self.tmem_addr)]
        if self.offset is not None:
            args.append(arg(e, self.offset))  # an immarg: the offset must be a constant
        args.append(("i1", "true" if self.pack is not None else "false"))
        call_bound(e, self.res, self._callee("ld", _tmem_regs(self.res.type)), args)


@irdl_op_definition
class Tcgen05StOp(_LdStOp):
    """`tcgen05.st.sync.aligned.<shape>.x<num>{.unpack::16b}.b32`: stores registers into a
    TMEM slice across the warp (`num` follows from the value's length).

    ```mlir
    nvvm.tcgen05.st %taddr, %v {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
    ```
    """

    name = "nvvm.tcgen05.st"

    unpack = opt_prop_def(UnitAttr)
    tmem_addr = operand_def(TENSOR_PTR)
    val = operand_def(TMEM_REGS)
    offset = opt_operand_def(I64)

    assembly_format = (
        "$tmem_addr `,` $val (`,` $offset^)? (`unpack` $unpack^)? attr-dict `:` type($val)"
    )

    def __init__(
        self,
        tmem_addr: SSAValue | Operation,
        val: SSAValue | Operation,
        shape: str = "shape_32x32b",
        offset: SSAValue | Operation | None = None,
        unpack: bool = False,
    ):
        properties: dict[str, Attribute] = {"shape": Tcgen05LdStShapeAttr(TmemShape(shape))}
        if unpack:
            properties["unpack"] = UnitAttr()
        super().__init__(operands=[tmem_addr, val, offset], properties=properties)

    def verify_(self) -> None:
        self._verify_regs(_tmem_regs(self.val.type), self.offset, "invalid input length")

    def to_llvm_ir(self, e: IREmitter) -> None:
        args = [arg(e, self.tmem_addr)]
        if self.offset is not None:
            args.append(arg(e, self.offset))  # an immarg: the offset must be a constant
        args += [arg(e, self.val), ("i1", "true" if self.unpack is not None else "false")]
        call(e, self._callee("st", _tmem_regs(self.val.type)), args)
