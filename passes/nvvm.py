"""
The `nvvm` dialect: the subset of MLIR's NVVM dialect that the copy lowering emits.

Mirrors MLIR's [NVVM dialect](https://mlir.llvm.org/docs/Dialects/NVVMDialect/): op names,
property names and custom assembly are upstream's, so what `copy-opt` prints after the
lowering reads as upstream NVVM. For the ops that LLVM 19 has, the syntax is release/19.x's
(it parses in Debian's `mlir-opt-19`); the ops that came later (`nvvm.mapa`, the TMA reduce
and prefetch, tcgen05) use the current upstream syntax. Python field names are snake_case;
property names keep upstream's spelling (`redKind`, `srcFormat`, `operandSegmentSizes`).

Each op prints its own LLVM IR (`to_llvm_ir`, see `llvm_ir.IREmitter`), like an upstream
op's `llvmBuilder`: a call of the LLVM 22 NVPTX intrinsic where LLVM 22 has one, inline PTX
(`call void asm sideeffect`) otherwise and wherever an op carries a predicate.

Deviations from upstream:
- `nvvm.mbarrier.test_wait.parity.shared` is ours (sm_80 has no `try_wait`);
- the special registers have no `range` attribute;
- `nvvm.cp.async.bulk.tensor.shared.cluster.global` has no `mode`/`isCTAOnly`: as in
  LLVM 19 im2col is implied by im2col offsets; `group` is current upstream's; the
  destination may be `!llvm.ptr<3>` (LLVM 19; the op casts it to addrspace 7) or `<7>`;
- `nvvm.cp.async.bulk.tensor.global.shared.cta` prints LLVM 19's `type(operands)` but
  has current upstream's `l2CacheHint` operand (its generic form has 4 segments where
  LLVM 19's has 3);
- the TMA store, reduce and prefetch have no `mode` property (tile mode; prefetch takes
  im2col offsets like the load).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I1,
    I16,
    I32,
    I64,
    IntAttr,
    IntegerAttr,
    IntegerType,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    AnyOf,
    AttrConstraint,
    AttrSetConstraint,
    AttrSizedOperandSegments,
    BaseAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from copy_dialect.passes.llvm_ir import IREmitter

# ===----------------------------------------------------------------------=== #
# Pointer types (NVVMMemorySpace: 0 generic, 1 global, 3 shared, 6 tensor, 7 cluster)
# ===----------------------------------------------------------------------=== #


def ptr(addr_space: int | None = None) -> LLVMPointerType:
    """`!llvm.ptr` (generic) or `!llvm.ptr<N>`."""
    return LLVMPointerType() if addr_space is None else LLVMPointerType(IntAttr(addr_space))


def addr_space(t: Attribute) -> int:
    """The address space of an `!llvm.ptr` type; 0 for the generic `!llvm.ptr`."""
    assert isinstance(t, LLVMPointerType)
    return t.addr_space.data if isinstance(t.addr_space, IntAttr) else 0


def _ptr_in(*spaces: int) -> AttrConstraint[LLVMPointerType]:
    """`!llvm.ptr` in one of `spaces` (0 is the generic space: `!llvm.ptr` or `<0>`)."""
    types = [ptr(s) for s in spaces] + ([ptr()] if 0 in spaces else [])
    return AttrSetConstraint.get(*types)


GENERIC_PTR = _ptr_in(0)
GLOBAL_PTR = _ptr_in(1)
SHARED_PTR = _ptr_in(3)
TENSOR_PTR = _ptr_in(6)
SHARED_CLUSTER_PTR = _ptr_in(7)
ANY_PTR = BaseAttr(LLVMPointerType)

# tcgen05.ld/st registers: i32 or vector<N x i32>, N a power of two up to 128.
TMEM_REGS = AnyOf.get(i32, *(VectorType(i32, [n]) for n in (2, 4, 8, 16, 32, 64, 128)))

# ===----------------------------------------------------------------------=== #
# Enums and their attributes
# ===----------------------------------------------------------------------=== #


class ProxyKind(StrEnum):
    ALIAS = "alias"
    ASYNC = "async"
    ASYNC_GLOBAL = "async.global"
    ASYNC_SHARED = "async.shared"
    TENSORMAP = "tensormap"
    GENERIC = "generic"


class SharedSpace(StrEnum):
    CTA = "cta"
    CLUSTER = "cluster"


class LoadCacheModifier(StrEnum):
    CA = "ca"
    CG = "cg"
    CS = "cs"
    LU = "lu"
    CV = "cv"


class CTAGroupKind(StrEnum):
    CTA_1 = "cta_1"
    CTA_2 = "cta_2"


class TMAReduxKind(StrEnum):
    ADD = "add"
    MIN = "min"
    MAX = "max"
    INC = "inc"
    DEC = "dec"
    AND = "and"
    OR = "or"
    XOR = "xor"


class Tcgen05WaitKind(StrEnum):
    LOAD = "load"
    STORE = "store"


class Tcgen05CpShape(StrEnum):
    SHAPE_128x256b = "shape_128x256b"
    SHAPE_4x256b = "shape_4x256b"
    SHAPE_128x128b = "shape_128x128b"
    SHAPE_64x128b = "shape_64x128b"
    SHAPE_32x128b = "shape_32x128b"


class Tcgen05CpMulticast(StrEnum):
    NONE = "none"
    WARPX2_02_13 = "warpx2_02_13"
    WARPX2_01_23 = "warpx2_01_23"
    WARPX4 = "warpx4"


class Tcgen05CpSrcFormat(StrEnum):
    B6x16_P32 = "b6x16_p32"
    B4x16_P64 = "b4x16_p64"


class Tcgen05LdStShape(StrEnum):
    SHAPE_16X64B = "shape_16x64b"
    SHAPE_16X128B = "shape_16x128b"
    SHAPE_16X256B = "shape_16x256b"
    SHAPE_32X32B = "shape_32x32b"
    SHAPE_16X32BX2 = "shape_16x32bx2"


class _AngleBracketEnum:
    """Upstream's `assemblyFormat = "`<` $value `>`"`: `#nvvm.cta_group<cta_2>`."""

    enum_type: ClassVar[type[StrEnum]]
    data: StrEnum

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.value}>")

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> StrEnum:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(cls.enum_type)


@irdl_attr_definition
class ProxyKindAttr(_AngleBracketEnum, EnumAttribute[ProxyKind]):
    name = "nvvm.proxy_kind"


@irdl_attr_definition
class SharedSpaceAttr(_AngleBracketEnum, EnumAttribute[SharedSpace]):
    name = "nvvm.shared_space"


@irdl_attr_definition
class LoadCacheModifierAttr(EnumAttribute[LoadCacheModifier], SpacedOpaqueSyntaxAttribute):
    """Upstream's default enum syntax: `#nvvm<load_cache_modifier cg>`."""

    name = "nvvm.load_cache_modifier"


@irdl_attr_definition
class CTAGroupKindAttr(_AngleBracketEnum, EnumAttribute[CTAGroupKind]):
    name = "nvvm.cta_group"


@irdl_attr_definition
class TMAReduxKindAttr(_AngleBracketEnum, EnumAttribute[TMAReduxKind]):
    name = "nvvm.tma_redux_kind"


@irdl_attr_definition
class Tcgen05WaitKindAttr(_AngleBracketEnum, EnumAttribute[Tcgen05WaitKind]):
    name = "nvvm.tcgen05_wait"


@irdl_attr_definition
class Tcgen05CpShapeAttr(_AngleBracketEnum, EnumAttribute[Tcgen05CpShape]):
    name = "nvvm.tcgen05_cp_shape"


@irdl_attr_definition
class Tcgen05CpMulticastAttr(_AngleBracketEnum, EnumAttribute[Tcgen05CpMulticast]):
    name = "nvvm.tcgen05_cp_multicast"


@irdl_attr_definition
class Tcgen05CpSrcFormatAttr(_AngleBracketEnum, EnumAttribute[Tcgen05CpSrcFormat]):
    name = "nvvm.tcgen05_cp_src_fmt"


@irdl_attr_definition
class Tcgen05LdStShapeAttr(_AngleBracketEnum, EnumAttribute[Tcgen05LdStShape]):
    name = "nvvm.tcgen05_ldst_shape"


# ===----------------------------------------------------------------------=== #
# LLVM IR emission helpers
# ===----------------------------------------------------------------------=== #

Arg = tuple[str, str]
"""An LLVM IR call operand: (type, value)."""


def _arg(e: IREmitter, value: SSAValue) -> Arg:
    return (e.type(value.type), e.value(value))


def _call(e: IREmitter, callee: str, args: Sequence[Arg], ret: str = "void") -> str | None:
    """Declares the intrinsic `callee` and calls it; returns the result's name, if any."""
    e.declare(f"declare {ret} @{callee}({', '.join(t for t, _ in args)})")
    call = f"call {ret} @{callee}({', '.join(f'{t} {v}' for t, v in args)})"
    if ret == "void":
        e.emit(call)
        return None
    # Always name results: an unnamed value would take the function's next %N.
    name = e.fresh()
    e.emit(f"{name} = {call}")
    return name


def _constraint(t: Attribute) -> str:
    """The NVPTX inline-asm register constraint of an operand type."""
    if isinstance(t, IntegerType):
        return {1: "b", 16: "h", 32: "r", 64: "l"}[t.width.data]
    # LLVM's NVPTX data layout (e-p6:32:32-...) makes TMEM pointers 32-bit, the others 64.
    return "r" if addr_space(t) == 6 else "l"


def _asm(e: IREmitter, ptx: str, operands: Sequence[SSAValue]) -> None:
    """Emits `ptx` as a side-effecting inline asm statement reading `operands` ($0...)."""
    text = ptx.replace("\\", "\\5C").replace('"', "\\22")
    constraints = ",".join([*(_constraint(v.type) for v in operands), "~{memory}"])
    args = ", ".join(f"{t} {v}" for t, v in (_arg(e, v) for v in operands))
    e.emit(f'call void asm sideeffect "{text}", "{constraints}"({args})')


def _predicated(ptx: str, predicate: SSAValue | None, index: int) -> str:
    """Guards `ptx` with the predicate operand `$index` when there is one."""
    return ptx if predicate is None else f"@${index} {ptx}"


def _cast(e: IREmitter, value: SSAValue, space: int) -> Arg:
    """`value` as a pointer in address space `space` (an addrspacecast if it is not)."""
    t, v = _arg(e, value)
    if addr_space(value.type) == space:
        return (t, v)
    target = "ptr" if space == 0 else f"ptr addrspace({space})"
    name = e.fresh()
    e.emit(f"{name} = addrspacecast {t} {v} to {target}")
    return (target, name)


def _cache_hint(e: IREmitter, hint: SSAValue | None) -> tuple[Arg, Arg]:
    """The TMA intrinsics' (i64 cache hint, i1 immarg flag) pair."""
    if hint is None:
        return ("i64", "0"), ("i1", "false")
    return _arg(e, hint), ("i1", "true")


# ===----------------------------------------------------------------------=== #
# Special registers
# ===----------------------------------------------------------------------=== #


class _SpecialRegisterOp(IRDLOperation):
    """Reads the PTX special register its name ends with (`llvm.nvvm.read.ptx.sreg.*`)."""

    res = result_def(I32)

    traits = traits_def(Pure())

    assembly_format = "attr-dict `:` type($res)"

    def __init__(self, result_type: Attribute = i32):
        super().__init__(result_types=[result_type])

    def to_llvm_ir(self, e: IREmitter) -> None:
        name = _call(e, f"llvm.{self.name}", [], ret="i32")
        assert name is not None
        e.bind(self.res, name)


@irdl_op_definition
class ThreadIdXOp(_SpecialRegisterOp):
    """`%tid.x`: `%0 = nvvm.read.ptx.sreg.tid.x : i32`."""

    name = "nvvm.read.ptx.sreg.tid.x"


@irdl_op_definition
class ThreadIdYOp(_SpecialRegisterOp):
    """`%tid.y`."""

    name = "nvvm.read.ptx.sreg.tid.y"


@irdl_op_definition
class ThreadIdZOp(_SpecialRegisterOp):
    """`%tid.z`."""

    name = "nvvm.read.ptx.sreg.tid.z"


@irdl_op_definition
class BlockDimXOp(_SpecialRegisterOp):
    """`%ntid.x`: threads per CTA along x."""

    name = "nvvm.read.ptx.sreg.ntid.x"


@irdl_op_definition
class BlockDimYOp(_SpecialRegisterOp):
    """`%ntid.y`."""

    name = "nvvm.read.ptx.sreg.ntid.y"


@irdl_op_definition
class BlockDimZOp(_SpecialRegisterOp):
    """`%ntid.z`."""

    name = "nvvm.read.ptx.sreg.ntid.z"


@irdl_op_definition
class BlockIdXOp(_SpecialRegisterOp):
    """`%ctaid.x`: the CTA's x index in the grid."""

    name = "nvvm.read.ptx.sreg.ctaid.x"


@irdl_op_definition
class BlockIdYOp(_SpecialRegisterOp):
    """`%ctaid.y`."""

    name = "nvvm.read.ptx.sreg.ctaid.y"


@irdl_op_definition
class BlockIdZOp(_SpecialRegisterOp):
    """`%ctaid.z`."""

    name = "nvvm.read.ptx.sreg.ctaid.z"


@irdl_op_definition
class GridDimXOp(_SpecialRegisterOp):
    """`%nctaid.x`: CTAs per grid along x."""

    name = "nvvm.read.ptx.sreg.nctaid.x"


@irdl_op_definition
class GridDimYOp(_SpecialRegisterOp):
    """`%nctaid.y`."""

    name = "nvvm.read.ptx.sreg.nctaid.y"


@irdl_op_definition
class GridDimZOp(_SpecialRegisterOp):
    """`%nctaid.z`."""

    name = "nvvm.read.ptx.sreg.nctaid.z"


@irdl_op_definition
class ClusterIdXOp(_SpecialRegisterOp):
    """`%clusterid.x` (sm_90): the cluster's x index in the grid."""

    name = "nvvm.read.ptx.sreg.clusterid.x"


@irdl_op_definition
class ClusterIdYOp(_SpecialRegisterOp):
    """`%clusterid.y` (sm_90)."""

    name = "nvvm.read.ptx.sreg.clusterid.y"


@irdl_op_definition
class ClusterIdZOp(_SpecialRegisterOp):
    """`%clusterid.z` (sm_90)."""

    name = "nvvm.read.ptx.sreg.clusterid.z"


@irdl_op_definition
class ClusterDimXOp(_SpecialRegisterOp):
    """`%nclusterid.x` (sm_90): clusters per grid along x."""

    name = "nvvm.read.ptx.sreg.nclusterid.x"


@irdl_op_definition
class ClusterDimYOp(_SpecialRegisterOp):
    """`%nclusterid.y` (sm_90)."""

    name = "nvvm.read.ptx.sreg.nclusterid.y"


@irdl_op_definition
class ClusterDimZOp(_SpecialRegisterOp):
    """`%nclusterid.z` (sm_90)."""

    name = "nvvm.read.ptx.sreg.nclusterid.z"


@irdl_op_definition
class BlockInClusterIdXOp(_SpecialRegisterOp):
    """`%cluster_ctaid.x` (sm_90): the CTA's x index in its cluster."""

    name = "nvvm.read.ptx.sreg.cluster.ctaid.x"


@irdl_op_definition
class BlockInClusterIdYOp(_SpecialRegisterOp):
    """`%cluster_ctaid.y` (sm_90)."""

    name = "nvvm.read.ptx.sreg.cluster.ctaid.y"


@irdl_op_definition
class BlockInClusterIdZOp(_SpecialRegisterOp):
    """`%cluster_ctaid.z` (sm_90)."""

    name = "nvvm.read.ptx.sreg.cluster.ctaid.z"


@irdl_op_definition
class ClusterDimBlocksXOp(_SpecialRegisterOp):
    """`%cluster_nctaid.x` (sm_90): CTAs per cluster along x."""

    name = "nvvm.read.ptx.sreg.cluster.nctaid.x"


@irdl_op_definition
class ClusterDimBlocksYOp(_SpecialRegisterOp):
    """`%cluster_nctaid.y` (sm_90)."""

    name = "nvvm.read.ptx.sreg.cluster.nctaid.y"


@irdl_op_definition
class ClusterDimBlocksZOp(_SpecialRegisterOp):
    """`%cluster_nctaid.z` (sm_90)."""

    name = "nvvm.read.ptx.sreg.cluster.nctaid.z"


@irdl_op_definition
class ClusterCtaRankOp(_SpecialRegisterOp):
    """`%cluster_ctarank` (sm_90): the CTA's linear rank in its cluster (upstream's
    `NVVM_ClusterId`)."""

    name = "nvvm.read.ptx.sreg.cluster.ctarank"


@irdl_op_definition
class ClusterNCtaRankOp(_SpecialRegisterOp):
    """`%cluster_nctarank` (sm_90): CTAs per cluster (upstream's `NVVM_ClusterDim`)."""

    name = "nvvm.read.ptx.sreg.cluster.nctarank"


@irdl_op_definition
class LaneIdOp(_SpecialRegisterOp):
    """`%laneid`."""

    name = "nvvm.read.ptx.sreg.laneid"


@irdl_op_definition
class WarpIdOp(_SpecialRegisterOp):
    """`%warpid` (the warp's current slot on its SM, not `tid / 32`)."""

    name = "nvvm.read.ptx.sreg.warpid"


@irdl_op_definition
class WarpDimOp(_SpecialRegisterOp):
    """`%nwarpid`."""

    name = "nvvm.read.ptx.sreg.nwarpid"


@irdl_op_definition
class WarpSizeOp(_SpecialRegisterOp):
    """`WARP_SZ` (32)."""

    name = "nvvm.read.ptx.sreg.warpsize"


SREGS: dict[str, type[_SpecialRegisterOp]] = {
    op.name.removeprefix("nvvm.read.ptx.sreg."): op
    for op in (
        ThreadIdXOp,
        ThreadIdYOp,
        ThreadIdZOp,
        BlockDimXOp,
        BlockDimYOp,
        BlockDimZOp,
        BlockIdXOp,
        BlockIdYOp,
        BlockIdZOp,
        GridDimXOp,
        GridDimYOp,
        GridDimZOp,
        ClusterIdXOp,
        ClusterIdYOp,
        ClusterIdZOp,
        ClusterDimXOp,
        ClusterDimYOp,
        ClusterDimZOp,
        BlockInClusterIdXOp,
        BlockInClusterIdYOp,
        BlockInClusterIdZOp,
        ClusterDimBlocksXOp,
        ClusterDimBlocksYOp,
        ClusterDimBlocksZOp,
        ClusterCtaRankOp,
        ClusterNCtaRankOp,
        LaneIdOp,
        WarpIdOp,
        WarpDimOp,
        WarpSizeOp,
    )
}
"""Special-register ops by register name as in their mnemonic: `"tid.x"`, `"cluster.ctarank"`."""


def read_sreg(name: str) -> Operation:
    """A new op reading the special register `name` (a key of `SREGS`), e.g. `"ctaid.x"`."""
    return SREGS[name]()


# ===----------------------------------------------------------------------=== #
# Barriers and fences
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
class Barrier0Op(IRDLOperation):
    """`bar.sync 0`: CTA-wide barrier 0.

    ```mlir
    nvvm.barrier0
    ```
    """

    name = "nvvm.barrier0"

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def to_llvm_ir(self, e: IREmitter) -> None:
        _call(e, "llvm.nvvm.barrier.cta.sync.aligned.all", [("i32", "0")])


class _ClusterBarrierOp(IRDLOperation):
    aligned = opt_prop_def(UnitAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "attr-dict"

    def __init__(self, aligned: bool = False):
        super().__init__(properties={"aligned": UnitAttr()} if aligned else {})

    def to_llvm_ir(self, e: IREmitter) -> None:
        suffix = ".aligned" if self.aligned is not None else ""
        _call(e, f"llvm.nvvm.barrier.{self.name.removeprefix('nvvm.')}{suffix}", [])


@irdl_op_definition
class ClusterArriveOp(_ClusterBarrierOp):
    """`barrier.cluster.arrive{.aligned}` (sm_90).

    ```mlir
    nvvm.cluster.arrive {aligned}
    ```
    """

    name = "nvvm.cluster.arrive"


@irdl_op_definition
class ClusterWaitOp(_ClusterBarrierOp):
    """`barrier.cluster.wait{.aligned}` (sm_90): waits for every CTA of the cluster to arrive.

    ```mlir
    nvvm.cluster.wait
    ```
    """

    name = "nvvm.cluster.wait"


@irdl_op_definition
class FenceMbarrierInitOp(IRDLOperation):
    """`fence.mbarrier_init.release.cluster` (sm_90): publishes prior mbarrier.inits to
    the cluster.

    ```mlir
    nvvm.fence.mbarrier.init
    ```
    """

    name = "nvvm.fence.mbarrier.init"

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def to_llvm_ir(self, e: IREmitter) -> None:
        _call(e, "llvm.nvvm.fence.mbarrier_init.release.cluster", [])


@irdl_op_definition
class FenceProxyOp(IRDLOperation):
    """`fence.proxy.<kind>{::space}`: orders accesses made through different proxies (the
    generic proxy's SMEM writes before a TMA store reads them: `async.shared`, `cta`).

    ```mlir
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    ```
    """

    name = "nvvm.fence.proxy"

    kind = prop_def(ProxyKindAttr)
    space = opt_prop_def(SharedSpaceAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "attr-dict"

    def __init__(self, kind: str = "async.shared", space: str | None = "cta"):
        properties: dict[str, Attribute] = {"kind": ProxyKindAttr(ProxyKind(kind))}
        if space is not None:
            properties["space"] = SharedSpaceAttr(SharedSpace(space))
        super().__init__(properties=properties)

    def verify_(self) -> None:
        kind = self.kind.data
        if kind == ProxyKind.TENSORMAP:
            raise VerifyException("tensormap proxy is not a supported proxy kind")
        if kind == ProxyKind.GENERIC:
            raise VerifyException("generic proxy not a supported proxy kind")
        if kind == ProxyKind.ASYNC_SHARED and self.space is None:
            raise VerifyException("async_shared fence requires space attribute")
        if kind != ProxyKind.ASYNC_SHARED and self.space is not None:
            raise VerifyException("only async_shared fence can have space attribute")

    def to_llvm_ir(self, e: IREmitter) -> None:
        kind = self.kind.data.value
        if self.space is not None:
            kind = f"{kind}_{'cta' if self.space.data == SharedSpace.CTA else 'cluster'}"
        _call(e, f"llvm.nvvm.fence.proxy.{kind}", [])


# ===----------------------------------------------------------------------=== #
# mbarrier
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
class MBarrierInitSharedOp(IRDLOperation):
    """`mbarrier.init.shared.b64 [addr], count` (sm_80), predicated when `predicate` is given.

    ```mlir
    nvvm.mbarrier.init.shared %bar, %count : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.init.shared"

    addr = operand_def(SHARED_PTR)
    count = operand_def(I32)
    predicate = opt_operand_def(I1)

    assembly_format = (
        "$addr `,` $count (`,` `predicate` `=` $predicate^)? attr-dict `:` type(operands)"
    )

    def __init__(
        self,
        addr: SSAValue | Operation,
        count: SSAValue | Operation,
        predicate: SSAValue | Operation | None = None,
    ):
        super().__init__(operands=[addr, count, predicate])

    def to_llvm_ir(self, e: IREmitter) -> None:
        if self.predicate is None:
            _call(e, "llvm.nvvm.mbarrier.init.shared", [_arg(e, self.addr), _arg(e, self.count)])
            return
        ptx = _predicated("mbarrier.init.shared.b64 [$0], $1;", self.predicate, 2)
        _asm(e, ptx, [self.addr, self.count, self.predicate])


@irdl_op_definition
class MBarrierArriveSharedOp(IRDLOperation):
    """`mbarrier.arrive.shared.b64 state, [addr]` (sm_80): arrives once, returns the phase
    state.

    ```mlir
    %state = nvvm.mbarrier.arrive.shared %bar : !llvm.ptr<3> -> i64
    ```
    """

    name = "nvvm.mbarrier.arrive.shared"

    addr = operand_def(SHARED_PTR)
    res = result_def(I64)

    assembly_format = "$addr attr-dict `:` type($addr) `->` type($res)"

    def __init__(self, addr: SSAValue | Operation):
        super().__init__(operands=[addr], result_types=[i64])

    def to_llvm_ir(self, e: IREmitter) -> None:
        name = _call(e, "llvm.nvvm.mbarrier.arrive.shared", [_arg(e, self.addr)], ret="i64")
        assert name is not None
        e.bind(self.res, name)


@irdl_op_definition
class MBarrierArriveExpectTxSharedOp(IRDLOperation):
    """`mbarrier.arrive.expect_tx.shared.b64 _, [addr], txcount` (sm_90): expects `txcount`
    more transaction bytes, then arrives once.

    ```mlir
    nvvm.mbarrier.arrive.expect_tx.shared %bar, %bytes : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.arrive.expect_tx.shared"

    addr = operand_def(SHARED_PTR)
    txcount = operand_def(I32)
    predicate = opt_operand_def(I1)

    assembly_format = (
        "$addr `,` $txcount (`,` `predicate` `=` $predicate^)? attr-dict `:` type(operands)"
    )

    def __init__(
        self,
        addr: SSAValue | Operation,
        txcount: SSAValue | Operation,
        predicate: SSAValue | Operation | None = None,
    ):
        super().__init__(operands=[addr, txcount, predicate])

    def to_llvm_ir(self, e: IREmitter) -> None:
        if self.predicate is None:
            # The intrinsic returns the phase state, which the op drops (PTX's `_`).
            _call(
                e,
                "llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta",
                [_arg(e, self.addr), _arg(e, self.txcount)],
                ret="i64",
            )
            return
        ptx = _predicated("mbarrier.arrive.expect_tx.shared.b64 _, [$0], $1;", self.predicate, 2)
        _asm(e, ptx, [self.addr, self.txcount, self.predicate])


@irdl_op_definition
class MBarrierTryWaitParitySharedOp(IRDLOperation):
    """Waits until the phase with parity `phase` of the mbarrier completes (sm_90): loops
    on `mbarrier.try_wait.parity.shared::cta.b64`, with `ticks` as its suspend-time hint,
    like upstream's lowering.

    ```mlir
    nvvm.mbarrier.try_wait.parity.shared %bar, %phase, %ticks : !llvm.ptr<3>, i32, i32
    ```
    """

    name = "nvvm.mbarrier.try_wait.parity.shared"

    addr = operand_def(SHARED_PTR)
    phase = operand_def(I32)
    ticks = operand_def(I32)

    assembly_format = "$addr `,` $phase `,` $ticks attr-dict `:` type(operands)"

    def __init__(
        self, addr: SSAValue | Operation, phase: SSAValue | Operation, ticks: SSAValue | Operation
    ):
        super().__init__(operands=[addr, phase, ticks])

    def to_llvm_ir(self, e: IREmitter) -> None:
        # The loop is one asm block: the emitter has no basic blocks of its own. Braces
        # scope the predicate and the labels, ${:uid} keeps copies of the asm distinct.
        ptx = (
            "{ .reg .pred P1; LAB_WAIT_${:uid}: "
            "mbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1, $2; "
            "@P1 bra DONE_${:uid}; bra LAB_WAIT_${:uid}; DONE_${:uid}: }"
        )
        _asm(e, ptx, [self.addr, self.phase, self.ticks])


@irdl_op_definition
class MBarrierTestWaitParitySharedOp(IRDLOperation):
    """Waits until the phase with parity `phase` of the mbarrier completes, on sm_80: loops
    on `mbarrier.test_wait.parity.shared.b64` (PTX 7.1). Not upstream: NVVM has no parity
    test_wait op, and `try_wait` needs sm_90.

    ```mlir
    nvvm.mbarrier.test_wait.parity.shared %bar, %phase : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.mbarrier.test_wait.parity.shared"

    addr = operand_def(SHARED_PTR)
    phase = operand_def(I32)

    assembly_format = "$addr `,` $phase attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue | Operation, phase: SSAValue | Operation):
        super().__init__(operands=[addr, phase])

    def to_llvm_ir(self, e: IREmitter) -> None:
        ptx = (
            "{ .reg .pred P1; LAB_WAIT_${:uid}: "
            "mbarrier.test_wait.parity.shared.b64 P1, [$0], $1; "
            "@P1 bra DONE_${:uid}; bra LAB_WAIT_${:uid}; DONE_${:uid}: }"
        )
        _asm(e, ptx, [self.addr, self.phase])


# ===----------------------------------------------------------------------=== #
# cp.async (sm_80)
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
class CpAsyncSharedGlobalOp(IRDLOperation):
    """`cp.async.{ca,cg}.shared.global [dst], [src], size{, cpSize}` (sm_80): copies `size`
    bytes; with `cpSize`, only that many are read and the rest are zero-filled.

    ```mlir
    nvvm.cp.async.shared.global %dst, %src, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
    ```
    """

    name = "nvvm.cp.async.shared.global"

    dst = operand_def(SHARED_PTR)
    src = operand_def(GLOBAL_PTR)
    size = prop_def(IntegerAttr[I32])
    modifier = prop_def(LoadCacheModifierAttr)
    cp_size = opt_operand_def(I32)

    assembly_format = (
        "$dst `,` $src `,` $size `,` `cache` `=` $modifier (`,` $cp_size^)? attr-dict "
        "`:` type(operands)"
    )

    def __init__(
        self,
        dst: SSAValue | Operation,
        src: SSAValue | Operation,
        size: int = 16,
        modifier: str = "cg",
        cp_size: SSAValue | Operation | None = None,
    ):
        super().__init__(
            operands=[dst, src, cp_size],
            properties={
                "size": IntegerAttr(size, i32),
                "modifier": LoadCacheModifierAttr(LoadCacheModifier(modifier)),
            },
        )

    def verify_(self) -> None:
        modifier = self.modifier.data
        size = self.size.value.data
        if modifier not in (LoadCacheModifier.CG, LoadCacheModifier.CA):
            raise VerifyException("Only CG and CA cache modifiers are supported.")
        if size not in (4, 8, 16):
            raise VerifyException("expected byte size to be either 4, 8 or 16.")
        if modifier == LoadCacheModifier.CG and size != 16:
            raise VerifyException("CG cache modifier is only support for 16 bytes copy.")

    def to_llvm_ir(self, e: IREmitter) -> None:
        callee = (
            f"llvm.nvvm.cp.async.{self.modifier.data.value}.shared.global.{self.size.value.data}"
        )
        args = [_arg(e, self.dst), _arg(e, self.src)]
        if self.cp_size is not None:
            callee += ".s"
            args.append(_arg(e, self.cp_size))
        _call(e, callee, args)


@irdl_op_definition
class CpAsyncCommitGroupOp(IRDLOperation):
    """`cp.async.commit_group` (sm_80).

    ```mlir
    nvvm.cp.async.commit.group
    ```
    """

    name = "nvvm.cp.async.commit.group"

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def to_llvm_ir(self, e: IREmitter) -> None:
        _call(e, "llvm.nvvm.cp.async.commit.group", [])


@irdl_op_definition
class CpAsyncWaitGroupOp(IRDLOperation):
    """`cp.async.wait_group n` (sm_80): waits until at most `n` groups are pending.

    ```mlir
    nvvm.cp.async.wait.group 0
    ```
    """

    name = "nvvm.cp.async.wait.group"

    n = prop_def(IntegerAttr[I32])

    assembly_format = "$n attr-dict"

    def __init__(self, n: int = 0):
        super().__init__(properties={"n": IntegerAttr(n, i32)})

    def to_llvm_ir(self, e: IREmitter) -> None:
        _call(e, "llvm.nvvm.cp.async.wait.group", [("i32", str(self.n.value.data))])


# ===----------------------------------------------------------------------=== #
# Bulk (TMA) copies (sm_90)
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
class CpAsyncBulkCommitGroupOp(IRDLOperation):
    """`cp.async.bulk.commit_group` (sm_90).

    ```mlir
    nvvm.cp.async.bulk.commit.group
    ```
    """

    name = "nvvm.cp.async.bulk.commit.group"

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def to_llvm_ir(self, e: IREmitter) -> None:
        _call(e, "llvm.nvvm.cp.async.bulk.commit.group", [])


@irdl_op_definition
class CpAsyncBulkWaitGroupOp(IRDLOperation):
    """`cp.async.bulk.wait_group{.read} group` (sm_90): waits until at most `group` bulk
    groups are pending (with `read`, only until they have read their sources).

    ```mlir
    nvvm.cp.async.bulk.wait_group 0 {read}
    ```
    """

    name = "nvvm.cp.async.bulk.wait_group"

    group = prop_def(IntegerAttr[I32])
    read = opt_prop_def(UnitAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$group attr-dict"

    def __init__(self, group: int = 0, read: bool = True):
        properties: dict[str, Attribute] = {"group": IntegerAttr(group, i32)}
        if read:
            properties["read"] = UnitAttr()
        super().__init__(properties=properties)

    def verify_(self) -> None:
        if self.group.value.data < 0:
            raise VerifyException(
                "attribute 'group' failed to satisfy constraint: 32-bit signless integer "
                "attribute whose minimum value is 0"
            )

    def to_llvm_ir(self, e: IREmitter) -> None:
        read = ".read" if self.read is not None else ""
        _call(e, f"llvm.nvvm.cp.async.bulk.wait.group{read}", [("i32", str(self.group.value.data))])


def _verify_tensor_dims(dims: int, im2col_offsets: int = 0) -> None:
    """Upstream's `cpAsyncBulkTensorCommonVerifier` (im2col when there are offsets)."""
    if not 1 <= dims <= 5:
        raise VerifyException("expects coordinates between 1 to 5 dimension")
    if im2col_offsets:
        if dims < 3:
            raise VerifyException("to use im2col mode, the tensor has to be at least 3-dimensional")
        if dims != im2col_offsets + 2:
            raise VerifyException("im2col offsets must be 2 less than number of coordinates")


def _box(first: int, count: int) -> str:
    """`{$first, ..., $(first + count - 1)}`: inline PTX operands of a TMA box."""
    return "{" + ", ".join(f"${first + i}" for i in range(count)) + "}"


_CTA_GROUP = {None: 0, CTAGroupKind.CTA_1: 1, CTAGroupKind.CTA_2: 2}
"""The g2s intrinsics' `cta_group` immarg (0: none)."""


@irdl_op_definition
class CpAsyncBulkTensorSharedClusterGlobalOp(IRDLOperation):
    """`cp.async.bulk.tensor.Nd.shared::cluster.global{.im2col}.mbarrier::complete_tx::bytes`
    (sm_90): TMA load of a box at `coordinates` (innermost first) into SMEM, completing on
    `mbar`; with `multicast_mask`, into the SMEM of every CTA of the cluster in the mask.

    ```mlir
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %tmap, %bar, box[%c0, %c1]
        multicast_mask = %mask : !llvm.ptr<3>, !llvm.ptr
    ```
    """

    name = "nvvm.cp.async.bulk.tensor.shared.cluster.global"

    dst = operand_def(_ptr_in(3, 7))
    tma_descriptor = operand_def(GENERIC_PTR)
    coordinates = var_operand_def(I32)
    mbar = operand_def(SHARED_PTR)
    im2col_offsets = var_operand_def(I16)
    multicast_mask = opt_operand_def(I16)
    l2_cache_hint = opt_operand_def(I64)
    predicate = opt_operand_def(I1)
    group = opt_prop_def(CTAGroupKindAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$dst `,` $tma_descriptor `,` $mbar `,` `box` `[` $coordinates `]` "
        "(`im2col` `[` $im2col_offsets^ `]`)? "
        "(`multicast_mask` `=` $multicast_mask^)? "
        "(`l2_cache_hint` `=` $l2_cache_hint^)? "
        "(`predicate` `=` $predicate^)? "
        "attr-dict `:` type($dst) `,` type($tma_descriptor)"
    )

    def __init__(
        self,
        dst: SSAValue | Operation,
        tma_descriptor: SSAValue | Operation,
        coordinates: Sequence[SSAValue | Operation],
        mbar: SSAValue | Operation,
        multicast_mask: SSAValue | Operation | None = None,
        l2_cache_hint: SSAValue | Operation | None = None,
        predicate: SSAValue | Operation | None = None,
        group: str | None = None,
        im2col_offsets: Sequence[SSAValue | Operation] = (),
    ):
        super().__init__(
            operands=[
                dst,
                tma_descriptor,
                coordinates,
                mbar,
                im2col_offsets,
                multicast_mask,
                l2_cache_hint,
                predicate,
            ],
            properties={} if group is None else {"group": CTAGroupKindAttr(CTAGroupKind(group))},
        )

    def verify_(self) -> None:
        _verify_tensor_dims(len(self.coordinates), len(self.im2col_offsets))

    def to_llvm_ir(self, e: IREmitter) -> None:
        if self.predicate is not None:
            self._inline_ptx(e)
            return
        dims, mode = len(self.coordinates), "im2col" if self.im2col_offsets else "tile"
        mask = ("i16", "0") if self.multicast_mask is None else _arg(e, self.multicast_mask)
        hint, hint_flag = _cache_hint(e, self.l2_cache_hint)
        group = None if self.group is None else self.group.data
        _call(
            e,
            f"llvm.nvvm.cp.async.bulk.tensor.g2s.{mode}.{dims}d",
            [
                # The intrinsic's destination is a shared::cluster (addrspace 7) pointer.
                _cast(e, self.dst, 7),
                _arg(e, self.mbar),
                _arg(e, self.tma_descriptor),
                *(_arg(e, c) for c in self.coordinates),
                *(_arg(e, o) for o in self.im2col_offsets),
                mask,
                hint,
                ("i1", "false" if self.multicast_mask is None else "true"),
                hint_flag,
                ("i32", str(_CTA_GROUP[group])),
            ],
        )

    def _inline_ptx(self, e: IREmitter) -> None:
        dims, offsets = len(self.coordinates), len(self.im2col_offsets)
        operands = [self.dst, self.tma_descriptor, *self.coordinates, self.mbar]
        ptx = f"cp.async.bulk.tensor.{dims}d.shared::cluster.global"
        ptx += ".im2col" if offsets else ""
        ptx += ".mbarrier::complete_tx::bytes"
        ptx += "" if self.multicast_mask is None else ".multicast::cluster"
        if self.group is not None:
            ptx += f".cta_group::{_CTA_GROUP[self.group.data]}"
        ptx += "" if self.l2_cache_hint is None else ".L2::cache_hint"
        ptx += f" [$0], [$1, {_box(2, dims)}], [${dims + 2}]"
        if offsets:
            ptx += f", {_box(len(operands), offsets)}"
            operands += self.im2col_offsets
        for extra in (self.multicast_mask, self.l2_cache_hint):
            if extra is not None:
                ptx += f", ${len(operands)}"
                operands.append(extra)
        assert self.predicate is not None
        _asm(e, _predicated(ptx + ";", self.predicate, len(operands)), [*operands, self.predicate])


@irdl_op_definition
class CpAsyncBulkTensorGlobalSharedCtaOp(IRDLOperation):
    """`cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group` (sm_90): TMA store of the
    SMEM box at `src` to `coordinates` (innermost first); completes with the bulk group.

    ```mlir
    nvvm.cp.async.bulk.tensor.global.shared.cta %tmap, %src, box[%c0, %c1]
        : !llvm.ptr, !llvm.ptr<3>, i32, i32
    ```
    """

    name = "nvvm.cp.async.bulk.tensor.global.shared.cta"

    tma_descriptor = operand_def(GENERIC_PTR)
    src = operand_def(SHARED_PTR)
    coordinates = var_operand_def(I32)
    l2_cache_hint = opt_operand_def(I64)
    predicate = opt_operand_def(I1)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    # LLVM 19's format, which ends in `type(operands)`: a declarative format cannot parse
    # that after variadic and optional operands, hence `parse` and `print`.
    #   $tma_descriptor `,` $src `,` `box` `[` $coordinates `]`
    #   (`l2_cache_hint` `=` $l2_cache_hint^)? (`,` `predicate` `=` $predicate^)?
    #   attr-dict `:` type(operands)

    @classmethod
    def parse(cls, parser: Parser) -> CpAsyncBulkTensorGlobalSharedCtaOp:
        pos = parser.pos
        tma_descriptor = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        parser.parse_keyword("box")
        coordinates = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        l2_cache_hint = predicate = None
        if parser.parse_optional_keyword("l2_cache_hint") is not None:
            parser.parse_punctuation("=")
            l2_cache_hint = parser.parse_unresolved_operand()
        if parser.parse_optional_punctuation(",") is not None:
            parser.parse_keyword("predicate")
            parser.parse_punctuation("=")
            predicate = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        optional = [u for u in (l2_cache_hint, predicate) if u is not None]
        unresolved = [tma_descriptor, src, *coordinates, *optional]
        if len(types) != len(unresolved):
            parser.raise_error(
                f"{len(unresolved)} operands present, but expected {len(types)}", pos
            )
        values = [parser.resolve_operand(u, t) for u, t in zip(unresolved, types, strict=True)]
        rest = iter(values[2 + len(coordinates) :])
        op = cls(
            values[0],
            values[1],
            values[2 : 2 + len(coordinates)],
            l2_cache_hint=None if l2_cache_hint is None else next(rest),
            predicate=None if predicate is None else next(rest),
        )
        attributes.pop("operandSegmentSizes", None)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.tma_descriptor)
        printer.print_string(", ")
        printer.print_operand(self.src)
        printer.print_string(", box[")
        printer.print_list(self.coordinates, printer.print_operand)
        printer.print_string("]")
        if self.l2_cache_hint is not None:
            printer.print_string(" l2_cache_hint = ")
            printer.print_operand(self.l2_cache_hint)
        if self.predicate is not None:
            printer.print_string(", predicate = ")
            printer.print_operand(self.predicate)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list((o.type for o in self.operands), printer.print_attribute)

    def __init__(
        self,
        tma_descriptor: SSAValue | Operation,
        src: SSAValue | Operation,
        coordinates: Sequence[SSAValue | Operation],
        l2_cache_hint: SSAValue | Operation | None = None,
        predicate: SSAValue | Operation | None = None,
    ):
        super().__init__(operands=[tma_descriptor, src, coordinates, l2_cache_hint, predicate])

    def verify_(self) -> None:
        # With a predicate the op lowers to inline PTX, which upstream writes without hint.
        if self.predicate is not None and self.l2_cache_hint is not None:
            raise VerifyException("Inline-ptx lowering unsupported with L2 cache-hint.")
        _verify_tensor_dims(len(self.coordinates))

    def to_llvm_ir(self, e: IREmitter) -> None:
        dims = len(self.coordinates)
        if self.predicate is not None:
            ptx = (
                f"cp.async.bulk.tensor.{dims}d.global.shared::cta.bulk_group "
                f"[$0, {_box(2, dims)}], [$1];"
            )
            operands = [self.tma_descriptor, self.src, *self.coordinates]
            _asm(e, _predicated(ptx, self.predicate, dims + 2), [*operands, self.predicate])
            return
        hint, hint_flag = _cache_hint(e, self.l2_cache_hint)
        _call(
            e,
            f"llvm.nvvm.cp.async.bulk.tensor.s2g.tile.{dims}d",
            [
                _arg(e, self.src),
                _arg(e, self.tma_descriptor),
                *(_arg(e, c) for c in self.coordinates),
                hint,
                hint_flag,
            ],
        )


@irdl_op_definition
class CpAsyncBulkTensorReduceOp(IRDLOperation):
    """`cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<redKind>.tile.bulk_group` (sm_90):
    reduces the SMEM box at `src` into the tensor at `coordinates`.

    ```mlir
    nvvm.cp.async.bulk.tensor.reduce %tmap, %src, box[%c0, %c1]
        {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
    ```
    """

    name = "nvvm.cp.async.bulk.tensor.reduce"

    tma_descriptor = operand_def(ANY_PTR)
    src = operand_def(SHARED_PTR)
    red_kind = prop_def(TMAReduxKindAttr, prop_name="redKind")
    coordinates = var_operand_def(I32)
    l2_cache_hint = opt_operand_def(I64)

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$tma_descriptor `,` $src `,` `box` `[` $coordinates `]` "
        "(`l2_cache_hint` `=` $l2_cache_hint^)? "
        "attr-dict `:` type($tma_descriptor) `,` type($src)"
    )

    def __init__(
        self,
        tma_descriptor: SSAValue | Operation,
        src: SSAValue | Operation,
        coordinates: Sequence[SSAValue | Operation],
        red_kind: str = "add",
        l2_cache_hint: SSAValue | Operation | None = None,
    ):
        super().__init__(
            operands=[tma_descriptor, src, coordinates, l2_cache_hint],
            properties={"redKind": TMAReduxKindAttr(TMAReduxKind(red_kind))},
        )

    def verify_(self) -> None:
        _verify_tensor_dims(len(self.coordinates))

    def to_llvm_ir(self, e: IREmitter) -> None:
        dims = len(self.coordinates)
        hint, hint_flag = _cache_hint(e, self.l2_cache_hint)
        _call(
            e,
            f"llvm.nvvm.cp.async.bulk.tensor.reduce.{self.red_kind.data.value}.tile.{dims}d",
            [
                _arg(e, self.src),
                _cast(e, self.tma_descriptor, 0),
                *(_arg(e, c) for c in self.coordinates),
                hint,
                hint_flag,
            ],
        )


@irdl_op_definition
class CpAsyncBulkTensorPrefetchOp(IRDLOperation):
    """`cp.async.bulk.prefetch.tensor.Nd.L2.global{.im2col}` (sm_90): prefetches the box at
    `coordinates` into L2.

    ```mlir
    nvvm.cp.async.bulk.tensor.prefetch %tmap, box[%c0, %c1] : !llvm.ptr
    ```
    """

    name = "nvvm.cp.async.bulk.tensor.prefetch"

    tma_descriptor = operand_def(GENERIC_PTR)
    coordinates = var_operand_def(I32)
    im2col_offsets = var_operand_def(I16)
    l2_cache_hint = opt_operand_def(I64)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = (
        "$tma_descriptor `,` `box` `[` $coordinates `]` "
        "(`im2col` `[` $im2col_offsets^ `]`)? "
        "(`l2_cache_hint` `=` $l2_cache_hint^)? "
        "attr-dict `:` type($tma_descriptor)"
    )

    def __init__(
        self,
        tma_descriptor: SSAValue | Operation,
        coordinates: Sequence[SSAValue | Operation],
        l2_cache_hint: SSAValue | Operation | None = None,
        im2col_offsets: Sequence[SSAValue | Operation] = (),
    ):
        super().__init__(operands=[tma_descriptor, coordinates, im2col_offsets, l2_cache_hint])

    def verify_(self) -> None:
        _verify_tensor_dims(len(self.coordinates), len(self.im2col_offsets))

    def to_llvm_ir(self, e: IREmitter) -> None:
        dims, mode = len(self.coordinates), "im2col" if self.im2col_offsets else "tile"
        hint, hint_flag = _cache_hint(e, self.l2_cache_hint)
        _call(
            e,
            f"llvm.nvvm.cp.async.bulk.tensor.prefetch.{mode}.{dims}d",
            [
                _arg(e, self.tma_descriptor),
                *(_arg(e, c) for c in self.coordinates),
                *(_arg(e, o) for o in self.im2col_offsets),
                hint,
                hint_flag,
            ],
        )


@irdl_op_definition
class MapaSharedClusterOp(IRDLOperation):
    """`mapa{.shared::cluster}.u64 res, a, b` (sm_90): the address of the variable at `a`
    in the SMEM of the cluster's CTA `b` (shared `<3>` -> shared::cluster `<7>`, or
    generic -> generic).

    ```mlir
    %peer = nvvm.mapa %a, %rank : !llvm.ptr<3> -> !llvm.ptr<7>
    ```
    """

    name = "nvvm.mapa"

    a = operand_def(_ptr_in(0, 3))
    b = operand_def(I32)
    res = result_def(_ptr_in(0, 7))

    assembly_format = "$a `,` $b attr-dict `:` type($a) `->` type($res)"

    def __init__(self, a: SSAValue | Operation, b: SSAValue | Operation):
        a_type = SSAValue.get(a).type
        super().__init__(operands=[a, b], result_types=[ptr(7) if addr_space(a_type) else a_type])

    def verify_(self) -> None:
        if (addr_space(self.a.type) == 3) != (addr_space(self.res.type) == 7):
            raise VerifyException(
                "failed to verify that Valid address-space check(or mapping) for mapa Op"
            )

    def to_llvm_ir(self, e: IREmitter) -> None:
        shared = addr_space(self.a.type) == 3
        name = _call(
            e,
            "llvm.nvvm.mapa.shared.cluster" if shared else "llvm.nvvm.mapa",
            [_arg(e, self.a), _arg(e, self.b)],
            ret="ptr addrspace(7)" if shared else "ptr",
        )
        assert name is not None
        e.bind(self.res, name)


# ===----------------------------------------------------------------------=== #
# tcgen05 (sm_100a)
# ===----------------------------------------------------------------------=== #

_CTA_1 = CTAGroupKindAttr(CTAGroupKind.CTA_1)


def _cg(group: CTAGroupKindAttr) -> str:
    """The intrinsic-name suffix of a CTA group: `cg1` or `cg2`."""
    return "cg2" if group.data == CTAGroupKind.CTA_2 else "cg1"


@irdl_op_definition
class Tcgen05AllocOp(IRDLOperation):
    """`tcgen05.alloc.cta_group::N.sync.aligned{.shared::cta}.b32 [addr], nCols`: allocates
    `nCols` TMEM columns (a power of two >= 32) and writes their address to `addr`.

    ```mlir
    nvvm.tcgen05.alloc %slot, %ncols : !llvm.ptr<3>, i32
    ```
    """

    name = "nvvm.tcgen05.alloc"

    addr = operand_def(_ptr_in(0, 3))
    n_cols = operand_def(I32)
    group = opt_prop_def(CTAGroupKindAttr, default_value=_CTA_1)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$addr `,` $n_cols attr-dict `:` type(operands)"

    def __init__(
        self, addr: SSAValue | Operation, ncols: SSAValue | Operation, group: str | None = None
    ):
        super().__init__(
            operands=[addr, ncols],
            properties={} if group is None else {"group": CTAGroupKindAttr(CTAGroupKind(group))},
        )

    def to_llvm_ir(self, e: IREmitter) -> None:
        shared = ".shared" if addr_space(self.addr.type) == 3 else ""
        callee = f"llvm.nvvm.tcgen05.alloc{shared}.{_cg(self.group or _CTA_1)}"
        _call(e, callee, [_arg(e, self.addr), _arg(e, self.n_cols)])


@irdl_op_definition
class Tcgen05DeallocOp(IRDLOperation):
    """`tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, nCols`: frees TMEM columns.

    ```mlir
    nvvm.tcgen05.dealloc %taddr, %ncols : !llvm.ptr<6>, i32
    ```
    """

    name = "nvvm.tcgen05.dealloc"

    taddr = operand_def(TENSOR_PTR)
    n_cols = operand_def(I32)
    group = opt_prop_def(CTAGroupKindAttr, default_value=_CTA_1)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$taddr `,` $n_cols attr-dict `:` type(operands)"

    def __init__(
        self, taddr: SSAValue | Operation, ncols: SSAValue | Operation, group: str | None = None
    ):
        super().__init__(
            operands=[taddr, ncols],
            properties={} if group is None else {"group": CTAGroupKindAttr(CTAGroupKind(group))},
        )

    def to_llvm_ir(self, e: IREmitter) -> None:
        callee = f"llvm.nvvm.tcgen05.dealloc.{_cg(self.group or _CTA_1)}"
        _call(e, callee, [_arg(e, self.taddr), _arg(e, self.n_cols)])


@irdl_op_definition
class Tcgen05RelinquishAllocPermitOp(IRDLOperation):
    """`tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned`: the CTA allocates no
    more TMEM.

    ```mlir
    nvvm.tcgen05.relinquish_alloc_permit
    ```
    """

    name = "nvvm.tcgen05.relinquish_alloc_permit"

    group = opt_prop_def(CTAGroupKindAttr, default_value=_CTA_1)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "attr-dict"

    def __init__(self, group: str | None = None):
        super().__init__(
            properties={} if group is None else {"group": CTAGroupKindAttr(CTAGroupKind(group))}
        )

    def to_llvm_ir(self, e: IREmitter) -> None:
        _call(e, f"llvm.nvvm.tcgen05.relinq.alloc.permit.{_cg(self.group or _CTA_1)}", [])


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
        super().__init__(properties={"kind": Tcgen05WaitKindAttr(Tcgen05WaitKind(kind))})

    def to_llvm_ir(self, e: IREmitter) -> None:
        kind = "ld" if self.kind.data == Tcgen05WaitKind.LOAD else "st"
        _call(e, f"llvm.nvvm.tcgen05.wait.{kind}", [])


@irdl_op_definition
class Tcgen05CpOp(IRDLOperation):
    """`tcgen05.cp.cta_group::N.<shape>{.<multicast>}{.<srcFormat>} [taddr], smem_desc`:
    asynchronous copy of the SMEM matrix described by `smem_desc` into TMEM.

    ```mlir
    nvvm.tcgen05.cp %taddr, %desc {shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}
    ```
    """

    name = "nvvm.tcgen05.cp"

    shape = prop_def(Tcgen05CpShapeAttr)
    group = opt_prop_def(CTAGroupKindAttr, default_value=_CTA_1)
    multicast = opt_prop_def(
        Tcgen05CpMulticastAttr, default_value=Tcgen05CpMulticastAttr(Tcgen05CpMulticast.NONE)
    )
    src_format = opt_prop_def(Tcgen05CpSrcFormatAttr, prop_name="srcFormat")
    taddr = operand_def(TENSOR_PTR)
    smem_desc = operand_def(I64)

    irdl_options = (ParsePropInAttrDict(),)

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
        properties: dict[str, Attribute] = {"shape": Tcgen05CpShapeAttr(Tcgen05CpShape(shape))}
        if group is not None:
            properties["group"] = CTAGroupKindAttr(CTAGroupKind(group))
        if multicast is not None:
            properties["multicast"] = Tcgen05CpMulticastAttr(Tcgen05CpMulticast(multicast))
        if src_format is not None:
            properties["srcFormat"] = Tcgen05CpSrcFormatAttr(Tcgen05CpSrcFormat(src_format))
        super().__init__(operands=[taddr, smem_desc], properties=properties)

    def _multicast(self) -> Tcgen05CpMulticast:
        return Tcgen05CpMulticast.NONE if self.multicast is None else self.multicast.data

    def verify_(self) -> None:
        shape, mc = self.shape.data, self._multicast()
        if shape == Tcgen05CpShape.SHAPE_64x128b:
            if mc not in (Tcgen05CpMulticast.WARPX2_01_23, Tcgen05CpMulticast.WARPX2_02_13):
                raise VerifyException(
                    "Shape 64x128b requires multicast warpx2_01_23 or warpx2_02_13 for "
                    "tcgen05.cp Op"
                )
        elif shape == Tcgen05CpShape.SHAPE_32x128b:
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
        callee = f"llvm.nvvm.tcgen05.cp.{name}.{_cg(self.group or _CTA_1)}"
        _call(e, callee, [_arg(e, self.taddr), _arg(e, self.smem_desc)])


V4I32 = VectorType(i32, [4])
"""`vector<4xi32>`, the default tcgen05.ld result (32x32b.x4)."""


def _tmem_regs(t: Attribute) -> int:
    return t.get_shape()[0] if isinstance(t, VectorType) else 1


def _tcgen05_num(shape: Tcgen05LdStShape, regs: int) -> int:
    """The `.num` repeat factor: registers per thread over the shape's registers at x1."""
    per_x1 = {Tcgen05LdStShape.SHAPE_16X128B: 2, Tcgen05LdStShape.SHAPE_16X256B: 4}
    return regs // per_x1.get(shape, 1)


def _verify_tmem_regs(
    shape: Tcgen05LdStShape, regs: int, offset: SSAValue | None, what: str
) -> None:
    if shape == Tcgen05LdStShape.SHAPE_16X32BX2 and offset is None:
        raise VerifyException("shape 16x32bx2 requires offset argument")
    if (shape == Tcgen05LdStShape.SHAPE_16X128B and regs < 2) or (
        shape == Tcgen05LdStShape.SHAPE_16X256B and regs < 4
    ):
        raise VerifyException(f"{what} {regs} for shape {shape.value}")


@irdl_op_definition
class Tcgen05LdOp(IRDLOperation):
    """`tcgen05.ld.sync.aligned.<shape>.x<num>{.pack::16b}.b32`: loads a TMEM slice into
    registers across the warp (`num` follows from the result length).

    ```mlir
    %r = nvvm.tcgen05.ld %taddr {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
    ```
    """

    name = "nvvm.tcgen05.ld"

    pack = opt_prop_def(UnitAttr)
    shape = prop_def(Tcgen05LdStShapeAttr)
    tmem_addr = operand_def(TENSOR_PTR)
    offset = opt_operand_def(I64)
    res = result_def(TMEM_REGS)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$tmem_addr (`,` $offset^)? (`pack` $pack^)? attr-dict `:` type($res)"

    def __init__(
        self,
        tmem_addr: SSAValue | Operation,
        shape: str = "shape_32x32b",
        result_type: Attribute = V4I32,
        offset: SSAValue | Operation | None = None,
        pack: bool = False,
    ):
        properties: dict[str, Attribute] = {"shape": Tcgen05LdStShapeAttr(Tcgen05LdStShape(shape))}
        if pack:
            properties["pack"] = UnitAttr()
        super().__init__(
            operands=[tmem_addr, offset], result_types=[result_type], properties=properties
        )

    def verify_(self) -> None:
        regs = _tmem_regs(self.res.type)
        _verify_tmem_regs(self.shape.data, regs, self.offset, "invalid result type length")

    def to_llvm_ir(self, e: IREmitter) -> None:
        shape = self.shape.data
        num = _tcgen05_num(shape, _tmem_regs(self.res.type))
        args = [_arg(e, self.tmem_addr)]
        if self.offset is not None:
            args.append(_arg(e, self.offset))  # an immarg: the offset must be a constant
        args.append(("i1", "true" if self.pack is not None else "false"))
        callee = f"llvm.nvvm.tcgen05.ld.{shape.value.removeprefix('shape_')}.x{num}"
        name = _call(e, callee, args, ret=e.type(self.res.type))
        assert name is not None
        e.bind(self.res, name)


@irdl_op_definition
class Tcgen05StOp(IRDLOperation):
    """`tcgen05.st.sync.aligned.<shape>.x<num>{.unpack::16b}.b32`: stores registers into a
    TMEM slice across the warp (`num` follows from the value's length).

    ```mlir
    nvvm.tcgen05.st %taddr, %v {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
    ```
    """

    name = "nvvm.tcgen05.st"

    unpack = opt_prop_def(UnitAttr)
    shape = prop_def(Tcgen05LdStShapeAttr)
    tmem_addr = operand_def(TENSOR_PTR)
    val = operand_def(TMEM_REGS)
    offset = opt_operand_def(I64)

    irdl_options = (ParsePropInAttrDict(),)

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
        properties: dict[str, Attribute] = {"shape": Tcgen05LdStShapeAttr(Tcgen05LdStShape(shape))}
        if unpack:
            properties["unpack"] = UnitAttr()
        super().__init__(operands=[tmem_addr, val, offset], properties=properties)

    def verify_(self) -> None:
        regs = _tmem_regs(self.val.type)
        _verify_tmem_regs(self.shape.data, regs, self.offset, "invalid input length")

    def to_llvm_ir(self, e: IREmitter) -> None:
        shape = self.shape.data
        num = _tcgen05_num(shape, _tmem_regs(self.val.type))
        args = [_arg(e, self.tmem_addr)]
        if self.offset is not None:
            args.append(_arg(e, self.offset))  # an immarg: the offset must be a constant
        args += [_arg(e, self.val), ("i1", "true" if self.unpack is not None else "false")]
        _call(e, f"llvm.nvvm.tcgen05.st.{shape.value.removeprefix('shape_')}.x{num}", args)


NVVM = Dialect(
    "nvvm",
    [
        *SREGS.values(),
        Barrier0Op,
        ClusterArriveOp,
        ClusterWaitOp,
        FenceMbarrierInitOp,
        FenceProxyOp,
        MBarrierInitSharedOp,
        MBarrierArriveSharedOp,
        MBarrierArriveExpectTxSharedOp,
        MBarrierTryWaitParitySharedOp,
        MBarrierTestWaitParitySharedOp,
        CpAsyncSharedGlobalOp,
        CpAsyncCommitGroupOp,
        CpAsyncWaitGroupOp,
        CpAsyncBulkCommitGroupOp,
        CpAsyncBulkWaitGroupOp,
        CpAsyncBulkTensorSharedClusterGlobalOp,
        CpAsyncBulkTensorGlobalSharedCtaOp,
        CpAsyncBulkTensorReduceOp,
        CpAsyncBulkTensorPrefetchOp,
        MapaSharedClusterOp,
        Tcgen05AllocOp,
        Tcgen05DeallocOp,
        Tcgen05RelinquishAllocPermitOp,
        Tcgen05WaitOp,
        Tcgen05CpOp,
        Tcgen05LdOp,
        Tcgen05StOp,
    ],
    [
        ProxyKindAttr,
        SharedSpaceAttr,
        LoadCacheModifierAttr,
        CTAGroupKindAttr,
        TMAReduxKindAttr,
        Tcgen05WaitKindAttr,
        Tcgen05CpShapeAttr,
        Tcgen05CpMulticastAttr,
        Tcgen05CpSrcFormatAttr,
        Tcgen05LdStShapeAttr,
    ],
)
