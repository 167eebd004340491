"""Barriers and fences: the CTA barrier, the cluster barrier's arrive and wait, and the
mbarrier-init and proxy fences (upstream NVVMOps.td's barrier and fence ops)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import UnitAttr
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from passes.llvm_ir import IREmitter
from passes.nvvm.attributes import AngleBracketEnum
from passes.nvvm.emit import Arg, IntrinsicOp, call


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


@irdl_attr_definition
class ProxyKindAttr(AngleBracketEnum, EnumAttribute[ProxyKind]):
    name = "nvvm.proxy_kind"


@irdl_attr_definition
class SharedSpaceAttr(AngleBracketEnum, EnumAttribute[SharedSpace]):
    name = "nvvm.shared_space"


@irdl_op_definition
class Barrier0Op(IntrinsicOp):
    """`bar.sync 0`: CTA-wide barrier 0.

    ```mlir
    nvvm.barrier0
    ```
    """

    name = "nvvm.barrier0"

    INTRINSIC: ClassVar[str] = "llvm.nvvm.barrier.cta.sync.aligned.all"
    ARGS: ClassVar[tuple[Arg, ...]] = (("i32", "0"),)


class _ClusterBarrierOp(IRDLOperation):
    aligned = opt_prop_def(UnitAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "attr-dict"

    def __init__(self, aligned: bool = False):
        super().__init__(properties={"aligned": UnitAttr()} if aligned else {})

    def to_llvm_ir(self, e: IREmitter) -> None:
        suffix = ".aligned" if self.aligned is not None else ""
        call(e, f"llvm.nvvm.barrier.{self.name.removeprefix('nvvm.')}{suffix}", [])


@irdl_op_definition
class ClusterArriveOp(_ClusterBarrierOp):
    """`barrier.cluster.arrive{.aligned}` (sm_90).

    ```mlir
    nvvm.cluster.arrive {aligned}
    ```
    """

    name = "nvvm.cluster.arrive"


@irdl_op_definition
class ClusterArriveRelaxedOp(_ClusterBarrierOp):
    """`barrier.cluster.arrive.relaxed{.aligned}` (sm_90): an arrival without release
    semantics (as upstream's `nvvm.cluster.arrive.relaxed`).

    ```mlir
    nvvm.cluster.arrive.relaxed {aligned}
    ```
    """

    name = "nvvm.cluster.arrive.relaxed"


@irdl_op_definition
class ClusterWaitOp(_ClusterBarrierOp):
    """`barrier.cluster.wait{.aligned}` (sm_90): waits for every CTA of the cluster to arrive.

    ```mlir
    nvvm.cluster.wait
    ```
    """

    name = "nvvm.cluster.wait"


@irdl_op_definition
class FenceMbarrierInitOp(IntrinsicOp):
    """`fence.mbarrier_init.release.cluster` (sm_90): publishes prior mbarrier.inits to
    the cluster.

    ```mlir
    nvvm.fence.mbarrier.init
    ```
    """

    name = "nvvm.fence.mbarrier.init"

    INTRINSIC: ClassVar[str] = "llvm.nvvm.fence.mbarrier_init.release.cluster"


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
        call(e, f"llvm.nvvm.fence.proxy.{kind}", [])
