"""Shared memory: `copy.alloc_smem`, the layout of the kernel's SMEM arena (whose budget,
rule TR6, is a kernel rule: `analysis.kernel.smem`) and `copy.fence_async_shared`, which
makes the threads' SMEM writes visible to TMA."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from xdsl.dialects.builtin import (
    I64,
    IntegerAttr,
    MemRefType,
    i64,
)
from xdsl.ir import Operation
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import OpTrait

from copy_dialect.attributes import swizzle_period
from copy_dialect.blackwell_maps import check_align16_buffer
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.memory import SMEM, bitwidth, memory_space, smem_alignment, smem_bytes, swizzle_of
from copy_dialect.portability import legalize_hint
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import check_contiguous_smem, enclosing_target, feature_error
from facts import hardware
from facts.target import FENCE_PROXY_ASYNC


class SmemAllocation(OpTrait, ABC):
    """An op that takes space in the kernel's dynamic-SMEM arena (an SMEM buffer, a barrier
    group): rule TR6 holds them, laid out in order, to the target's limit."""

    @abstractmethod
    def footprint(self, op: Operation) -> tuple[int, int]:
        """The (bytes, alignment) `op` takes in the arena."""


class AllocSmemFootprint(SmemAllocation):
    def footprint(self, op: Operation) -> tuple[int, int]:
        assert isinstance(op, AllocSmemOp)
        return op.size_bytes, op.byte_alignment


def arena_layout(
    kernel: Operation, ops: Iterable[Operation] | None = None
) -> tuple[dict[Operation, int], int]:
    """Where each op of `kernel` that takes SMEM (an `SmemAllocation`: buffers, barrier
    groups, TMEM address slots) lies in the kernel's arena, in walk order, and the arena's
    end: the one layout that rule TR6 checks and the lowering places. `ops`: the kernel's
    ops in walk order where the caller has them (at least those that take SMEM)."""
    offsets: dict[Operation, int] = {}
    end = 0
    for op in kernel.walk() if ops is None else ops:
        if (allocation := op.get_trait(SmemAllocation)) is not None:
            size, align = allocation.footprint(op)
            offsets[op] = _placed(end, align)
            end = offsets[op] + size
    return offsets, end


def _placed(end: int, align: int) -> int:
    """Where the next buffer of alignment `align` starts after `end` bytes of the arena."""
    return -(-end // align) * align


def smem_footprint(buffers: Iterable[tuple[int, int]]) -> int:
    """Bytes of SMEM that `(bytes, alignment)` buffers take, laid out in order (TR6)."""
    end = 0
    for size, align in buffers:
        end = _placed(end, align) + size
    return end


SMEM_ARENA_ALIGNMENT = 1024
"""A kernel's SMEM buffers and barriers lie in one dynamic-SMEM arena whose base the lowering
aligns to this at run time (the largest alignment a swizzle needs): the kernel launches with
the arena plus this pad."""


def block_smem_bytes(footprint: int) -> int:
    """The dynamic SMEM a kernel whose buffers and barriers take `footprint` bytes launches
    with (rule TR6 holds it to the target's limit; the lowering writes it to the ABI)."""
    return footprint + SMEM_ARENA_ALIGNMENT if footprint else 0


@copy_op_definition
class AllocSmemOp(IRDLOperation):
    """
    Allocates a static SMEM buffer, aligned for TMA: 128 bytes, and the swizzle period
    (256, 512 or 1024 bytes for 32, 64 or 128-byte swizzles) when the buffer is swizzled.

    ```mlir
    %buf = copy.alloc_smem : memref<2x64x32xf32, #copy.smem<swizzle = 128>>
    ```
    """

    name = "copy.alloc_smem"

    alignment = opt_prop_def(IntegerAttr[I64])

    result = result_def(MemRefType)

    traits = traits_def(AllocSmemFootprint())

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: MemRefType, alignment: int | None = None):
        super().__init__(
            properties={
                "alignment": None if alignment is None else IntegerAttr(alignment, i64),
            },
            result_types=[result_type],
        )

    @property
    def required_alignment(self) -> int:
        assert isinstance(t := self.result.type, MemRefType)
        return smem_alignment(swizzle_of(t))

    @property
    def byte_alignment(self) -> int:
        return self.required_alignment if self.alignment is None else self.alignment.value.data

    @property
    def size_bytes(self) -> int:
        assert isinstance(t := self.result.type, MemRefType)
        return smem_bytes(t.get_shape(), t.element_type, swizzle_of(t))

    def verify_(self) -> None:
        assert isinstance(t := self.result.type, MemRefType)
        if memory_space(t) != SMEM:
            raise Error(
                f"copy.alloc_smem allocates SMEM, got a ref in {memory_space(t)}",
                note="give the result the memory space #copy.smem",
            )
        check_contiguous_smem(t)
        check_align16_buffer(t)
        if bitwidth(t.element_type) is None:
            raise Error(
                f"cannot allocate SMEM for elements of type {t.element_type}",
                note="use an integer or float element type",
            )
        swizzle, align = swizzle_of(t), self.byte_alignment
        # rule: C16
        if align <= 0 or align & (align - 1):
            raise Error(
                f"alignment must be a power of 2, got {align}",
                note="drop alignment to get the one TMA needs",
            )
        # rule: TR10
        if align < hardware.SMEM_ALIGNMENT:
            raise Error(
                f"TMA needs SMEM buffers aligned to {hardware.SMEM_ALIGNMENT} bytes, got "
                f"alignment {align}",
                note="a TMA copy to a less aligned address faults with "
                "CUDA_ERROR_MISALIGNED_ADDRESS: drop alignment",
            )
        # rule: TR11
        if align < swizzle_period(swizzle):
            raise Error(
                f"a buffer with swizzle {swizzle} must be aligned to its {swizzle_period(swizzle)}"
                f"-byte period, got alignment {align}",
                note="TMA swizzles by absolute address bits: a less aligned buffer is silently "
                "permuted differently. Drop alignment",
            )


@copy_op_definition
class FenceAsyncSharedOp(IRDLOperation):
    """
    Makes SMEM written by the threads visible to the async proxy (TMA, tcgen05):
    `fence.proxy.async.shared::cta`.

    ```mlir
    copy.fence_async_shared
    ```
    """

    name = "copy.fence_async_shared"

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def verify_(self) -> None:
        target = enclosing_target(self)
        # rule: A1
        if target is not None and not FENCE_PROXY_ASYNC.has(target):
            raise feature_error(
                self,
                FENCE_PROXY_ASYNC,
                target,
                note="drop copy.fence_async_shared: cp.async writes SMEM through the generic "
                "proxy, no fence is needed there" + legalize_hint(target),
            )
