"""
The `copy` dialect: asynchronous GMEM/SMEM/TMEM copies on NVIDIA GPUs.

TMA tile copies and reductions, cluster multicast and leader-tracked copies, cp.async,
mbarriers, bulk groups and tcgen05 TMEM loads, stores and copies. Op names and semantics
follow JAX's Mosaic GPU (`LaunchContext.async_copy`, Pallas `plgpu`) and MLIR's
`nvgpu`/`nvvm` dialects; the verifiers encode the catalogue `rules.toml` (ids such as `C4`
refer to it, each written in a `# rule:` comment at its check) so that what Mosaic GPU only
checks while tracing, and what nobody checks before ptxas or the GPU fails, is rejected
here, statically, with a note that says how to fix it.

Memory: a `memref` with no memory space is GMEM; `#copy.smem` (or the integer space 3)
marks shared memory, `#copy.smem<swizzle = 128>` swizzled shared memory; `#copy.tmem`
marks tensor memory. Target-dependent rules are checked whenever an enclosing op carries
`copy.target = #copy.target<"sm_90a">`; kernel-dependent rules read `copy.cluster` (the
cluster shape, `array<i32: x, y, z>`) on the enclosing function.

Deviations from Mosaic GPU, each settled in docs/design.md:
- the implementation (`tma` | `cp_async`) may be chosen in the IR; the target only decides
  when the IR leaves it open;
- cp.async accepts `oob = zeros` (zero-filled tails, jax#40048) and rejects a user
  predicate instead of dropping it;
- TMA reductions accept exactly the op x element-type pairs an H200 ran;
- a swizzled copy's innermost box may be narrower than the swizzle span (the driver's
  `<=`); the SMEM buffer then pads each row to the span.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import auto
from functools import cached_property
from math import gcd, prod

from xdsl.dialects import arith, func, gpu, memref
from xdsl.dialects.builtin import (
    I1,
    I32,
    I64,
    AnyFloat,
    BFloat16Type,
    BoolAttr,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatTF32Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    Signedness,
    StridedLayoutAttr,
    StringAttr,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    param_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.str_enum import StrEnum

from copy_dialect import layout
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.target import (
    MULTICAST_TARGETS,
    TARGETS,
    TCGEN05_TARGETS,
    TMEM_LOAD_REDUCE_TARGETS,
    Target,
)

# ===----------------------------------------------------------------------=== #
# Enums
# ===----------------------------------------------------------------------=== #


class Implementation(StrEnum):
    TMA = auto()
    CP_ASYNC = auto()


class ReductionKind(StrEnum):
    ADD = "add"
    MIN = "min"
    MAX = "max"
    UMIN = "umin"
    UMAX = "umax"
    SMIN = "smin"
    SMAX = "smax"
    INC = "inc"
    DEC = "dec"
    AND = "and"
    OR = "or"
    XOR = "xor"


class OOBMode(StrEnum):
    """What a load puts in SMEM for elements outside the GMEM array."""

    ZEROS = auto()
    NAN = auto()
    UNDEFINED = auto()
    PROMISE_IN_BOUNDS = auto()


class CacheMode(StrEnum):
    """cp.async cache operator: `.ca` (L1 and L2) or `.cg` (L2 only, 16-byte copies)."""

    CA = auto()
    CG = auto()


class GroupKind(StrEnum):
    """Which async-group mechanism a commit/wait refers to."""

    BULK = auto()
    CP_ASYNC = auto()


class BarrierScope(StrEnum):
    CTA = auto()
    CLUSTER = auto()


class TmemShape(StrEnum):
    """tcgen05.ld/st data-movement shapes (lanes x bits)."""

    S32X32B = "shape_32x32b"
    S16X64B = "shape_16x64b"
    S16X128B = "shape_16x128b"
    S16X256B = "shape_16x256b"
    S16X32BX2 = "shape_16x32bx2"


class TmemReduce(StrEnum):
    MIN = auto()
    MAX = auto()


class TmemWaitKind(StrEnum):
    LOAD = auto()
    STORE = auto()


class TmemCopyShape(StrEnum):
    """tcgen05.cp shapes (rows x bits)."""

    S128X256B = "shape_128x256b"
    S4X256B = "shape_4x256b"
    S128X128B = "shape_128x128b"
    S64X128B = "shape_64x128b"
    S32X128B = "shape_32x128b"


class TmemCopyMulticast(StrEnum):
    WARPX2_02_13 = auto()
    WARPX2_01_23 = auto()
    WARPX4 = auto()


@irdl_attr_definition
class ImplementationAttr(EnumAttribute[Implementation], SpacedOpaqueSyntaxAttribute):
    name = "copy.implementation"


@irdl_attr_definition
class ReductionKindAttr(EnumAttribute[ReductionKind], SpacedOpaqueSyntaxAttribute):
    name = "copy.reduction"


@irdl_attr_definition
class OOBModeAttr(EnumAttribute[OOBMode], SpacedOpaqueSyntaxAttribute):
    name = "copy.oob"


@irdl_attr_definition
class CacheModeAttr(EnumAttribute[CacheMode], SpacedOpaqueSyntaxAttribute):
    name = "copy.cache"


@irdl_attr_definition
class GroupKindAttr(EnumAttribute[GroupKind], SpacedOpaqueSyntaxAttribute):
    name = "copy.group"


@irdl_attr_definition
class BarrierScopeAttr(EnumAttribute[BarrierScope], SpacedOpaqueSyntaxAttribute):
    name = "copy.scope"


@irdl_attr_definition
class TmemShapeAttr(EnumAttribute[TmemShape], SpacedOpaqueSyntaxAttribute):
    name = "copy.tmem_shape"


@irdl_attr_definition
class TmemReduceAttr(EnumAttribute[TmemReduce], SpacedOpaqueSyntaxAttribute):
    name = "copy.tmem_reduce"


@irdl_attr_definition
class TmemWaitKindAttr(EnumAttribute[TmemWaitKind], SpacedOpaqueSyntaxAttribute):
    name = "copy.tmem_wait_kind"


@irdl_attr_definition
class TmemCopyShapeAttr(EnumAttribute[TmemCopyShape], SpacedOpaqueSyntaxAttribute):
    name = "copy.tmem_copy_shape"


@irdl_attr_definition
class TmemCopyMulticastAttr(EnumAttribute[TmemCopyMulticast], SpacedOpaqueSyntaxAttribute):
    name = "copy.tmem_copy_multicast"


# ===----------------------------------------------------------------------=== #
# Attributes and types
# ===----------------------------------------------------------------------=== #

SWIZZLES = (16, 32, 64, 128)
"""Swizzle spans in bytes; 16 means no swizzle (Mosaic GPU's convention)."""


def swizzle_period(swizzle: int) -> int:
    """Bytes after which a swizzle pattern repeats (8 rows of the span); 0 for none."""
    return 0 if swizzle == 16 else 8 * swizzle


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """The compilation target, e.g. `#copy.target<"sm_90a">` (see `copy_dialect.target`)."""

    name = "copy.target"

    arch: StringAttr = param_def()

    def __init__(self, arch: str | StringAttr):
        super().__init__(StringAttr(arch) if isinstance(arch, str) else arch)

    @property
    def target(self) -> Target:
        return TARGETS[self.arch.data]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_str_literal('target name, e.g. "sm_90a"')),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f'<"{self.arch.data}">')

    def verify(self) -> None:
        if self.arch.data not in TARGETS:
            raise Error(
                f"unknown target '{self.arch.data}'",
                note=f"expected one of {', '.join(TARGETS)}",
            )


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
    """

    name = "copy.smem"

    swizzle: IntAttr = param_def()

    def __init__(self, swizzle: int = 16):
        super().__init__(IntAttr(swizzle))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        swizzle = 16
        if parser.parse_optional_punctuation("<") is not None:
            parser.parse_keyword("swizzle")
            parser.parse_punctuation("=")
            swizzle = parser.parse_integer(allow_boolean=False, allow_negative=False)
            parser.parse_punctuation(">")
        return (IntAttr(swizzle),)

    def print_parameters(self, printer: Printer) -> None:
        if self.swizzle.data != 16:
            printer.print_string(f"<swizzle = {self.swizzle.data}>")

    def verify(self) -> None:
        # rule: C6
        if self.swizzle.data not in SWIZZLES:
            raise Error(
                f"Unsupported swizzle: {self.swizzle.data}",
                note="the swizzle is 16 (none), 32, 64 or 128 bytes",
            )


@irdl_attr_definition
class TmemSpaceAttr(ParametrizedAttribute):
    """Tensor memory (tcgen05, sm_100a family): `#copy.tmem`."""

    name = "copy.tmem"


@irdl_attr_definition
class LeaderTrackedAttr(ParametrizedAttribute):
    """
    How a leader-tracked 2-CTA copy splits its slice: `#copy.leader_tracked<replicated>`
    (each CTA gets the whole slice, the leader CTA's barrier tracks both) or
    `#copy.leader_tracked<partitioned 0>` (the slice is split along dim 0; each CTA's SMEM
    ref holds its part).
    """

    name = "copy.leader_tracked"

    axis: IntAttr | NoneAttr = param_def()

    def __init__(self, axis: int | None = None):
        super().__init__(NoneAttr() if axis is None else IntAttr(axis))

    @property
    def partition_axis(self) -> int | None:
        return None if isinstance(self.axis, NoneAttr) else self.axis.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            kind = parser.parse_optional_keyword("replicated")
            if kind is not None:
                return (NoneAttr(),)
            parser.parse_keyword("partitioned", " (expected replicated or partitioned N)")
            return (IntAttr(parser.parse_integer(allow_boolean=False, allow_negative=False)),)

    def print_parameters(self, printer: Printer) -> None:
        axis = self.partition_axis
        printer.print_string("<replicated>" if axis is None else f"<partitioned {axis}>")


@irdl_attr_definition
class BarrierType(ParametrizedAttribute, TypeAttribute):
    """A group of `count` mbarriers in shared memory: `!copy.barrier<4>`."""

    name = "copy.barrier"

    count: IntAttr = param_def()

    def __init__(self, count: int):
        super().__init__(IntAttr(count))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer(allow_boolean=False)),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.count.data}>")

    def verify(self) -> None:
        # rule: I1
        if not 1 <= self.count.data <= MAX_BARRIERS:
            raise Error(
                f"Only up to {MAX_BARRIERS} barriers per group supported",
                note=f"got {self.count.data}; the phase bits of a group are one i32: use at most "
                f"{MAX_BARRIERS}, or split larger rings into several groups",
            )


# ===----------------------------------------------------------------------=== #
# Helpers shared by the verifiers
# ===----------------------------------------------------------------------=== #

GMEM, SMEM, TMEM = "GMEM", "SMEM", "TMEM"
MAX_BARRIERS = 32
"""Barriers in one `!copy.barrier` group: the group's phase bits are one i32 (I1)."""
BARRIER_BYTES = 8
"""An mbarrier is one 8-byte, 8-byte aligned word of SMEM."""
MAX_TX_BYTES = 1 << 20
"""The mbarrier tx-count is below 2**20 (an H200 faults at 2**20: tma-rules Q5)."""
MAX_ARRIVALS = 1 << 20
"""The mbarrier arrival count is below 2**20 (PTX: mbarrier.init's count is 20 bits)."""


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
    space = t.memory_space
    return space.swizzle.data if isinstance(space, SmemSpaceAttr) else 16


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
    return max(128, swizzle_period(swizzle))


def smem_footprint(buffers: Iterable[tuple[int, int]]) -> int:
    """Bytes of SMEM that `(bytes, alignment)` buffers take, laid out in order (TR6)."""
    end = 0
    for size, align in buffers:
        end = -(-end // align) * align + size
    return end


SMEM_ARENA_ALIGNMENT = 1024
"""A kernel's SMEM buffers and barriers lie in one dynamic-SMEM arena whose base the lowering
aligns to this at run time (the largest alignment a swizzle needs): the kernel launches with
the arena plus this pad."""


def block_smem_bytes(footprint: int) -> int:
    """The dynamic SMEM a kernel whose buffers and barriers take `footprint` bytes launches
    with (rule TR6 holds it to the target's limit; the lowering writes it to the ABI)."""
    return footprint + SMEM_ARENA_ALIGNMENT if footprint else 0


def enclosing_target(op: Operation) -> Target | None:
    """The target named by the nearest `copy.target` attribute around `op`, if any."""
    node: Operation | None = op
    while node is not None:
        attr = node.attributes.get("copy.target")
        if attr is not None:
            if not isinstance(attr, TargetAttr):
                raise Error(
                    f"expected the 'copy.target' attribute of '{node.name}' to be a "
                    f"#copy.target, got {attr}",
                    note='write it as copy.target = #copy.target<"sm_90a">',
                )
            return attr.target
        node = node.parent_op()
    return None


def enclosing_kernel(op: Operation) -> Operation | None:
    node = op.parent_op()
    while node is not None and not isinstance(node, func.FuncOp | gpu.FuncOp):
        node = node.parent_op()
    return node


def cluster_shape(op: Operation) -> tuple[int, int, int]:
    """The cluster shape of the kernel around `op`, (1, 1, 1) when it has none."""
    kernel = enclosing_kernel(op)
    return (1, 1, 1) if kernel is None else kernel_cluster_shape(kernel)


def multicast_split_dim(box: Sequence[int]) -> int:
    """The box dim a multicast load splits over its collective group: the outermost dim
    larger than 1, so that each CTA's share is contiguous in SMEM."""
    return next((i for i, d in enumerate(box) if d > 1), len(box) - 1)


def kernel_cluster_shape(kernel: Operation) -> tuple[int, int, int]:
    """The cluster shape in a kernel's `copy.cluster`, (1, 1, 1) when it has none."""
    attr = kernel.attributes.get("copy.cluster")
    if attr is None:
        return (1, 1, 1)
    values = attr.get_values() if isinstance(attr, DenseArrayBase) else ()
    if len(values) != 3 or any(not isinstance(v, int) or v < 1 for v in values):
        raise Error(
            f"expected 'copy.cluster' to be three positive integers, got {attr}",
            note="write the cluster shape as copy.cluster = array<i32: 2, 1, 1>",
        )
    return (int(values[0]), int(values[1]), int(values[2]))


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


def merged_leading_dims_example(t: MemRefType) -> str:
    """`, e.g. to memref<...>` with the leading dims of row-major `t` merged down to 5 dims."""
    shape = t.get_shape()
    if not isinstance(t.layout, NoneAttr) or len(shape) <= 5 or min(shape) < 0:
        return ""
    merged = MemRefType(t.element_type, [prod(shape[: len(shape) - 4]), *shape[-4:]])
    return f", e.g. to {merged} (merging leading dims)"


def static_strides(t: MemRefType) -> tuple[int, ...] | None:
    """The element strides of a ref (row-major when it has no layout), when all are static."""
    shape = t.get_shape()
    if isinstance(t.layout, StridedLayoutAttr):
        strides = [s.data if isinstance(s, IntAttr) else -1 for s in t.layout.strides]
    elif isinstance(t.layout, NoneAttr):
        strides = [
            prod(shape[i + 1 :]) if all(d >= 0 for d in shape[i + 1 :]) else -1
            for i in range(len(shape))
        ]
    else:
        return None
    return None if any(s < 0 for s in strides) else tuple(strides)


def cp_async_chunk_bytes(g: CopyGeometry) -> int | None:
    """The bytes each cp.async of a copy moves: the largest of 16, 8 and 4 that divides the
    box row, every GMEM stride and a constant innermost coordinate (in bytes), since cp.async
    needs its global address aligned to its size; None when none does. The verifier (H2, H6)
    and the lowering both take the chunk from here."""
    bits = bitwidth(g.element_type) or 8
    row_bytes = g.box_shape[-1] * bits // 8
    strides = static_strides(g.gmem_type) or ()
    offsets = [s * bits // 8 for s in strides[:-1]]
    inner = constant_int(g.gmem_indices[-1]) if g.gmem_indices else None
    if inner is not None:
        offsets.append(inner * bits // 8)
    return next(
        (c for c in (16, 8, 4) if row_bytes % c == 0 and all(o % c == 0 for o in offsets)), None
    )


def constant_int(value: SSAValue) -> int | None:
    """The value of an integer constant: an `arith.constant`, or one cast to `index`
    (`arith.index_cast` of an i32 constant, say); None for anything else."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    if isinstance(owner, arith.IndexCastOp):
        return constant_int(owner.input)
    return None


def value_name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "the GMEM operand"


def require_target(op: Operation, has: bool, what: str, targets: str) -> None:
    """Raise the arch-gate error for `what` when the enclosing target lacks it."""
    target = enclosing_target(op)
    if target is not None and not has:
        raise Error(
            f"{what} needs {targets}, but the target is {target.name}",
            note=f"set copy.target to {'' if targets.startswith('a ') else 'one of '}{targets}, "
            f"or do without {what}",
        )


def check_tcgen05(op: Operation) -> None:
    target = enclosing_target(op)
    # rule: A14
    if target is not None and not target.has_tcgen05:
        reason = " (consumer Blackwell has no TMEM)" if target.sm >= 120 else ""
        raise Error(
            f"'{op.name}' uses tcgen05 (TMEM), which needs {TCGEN05_TARGETS}, "
            f"but the target is {target.name}{reason}",
            note=f"set copy.target to one of {TCGEN05_TARGETS}",
        )


def check_barrier_index(barrier: SSAValue, index: SSAValue | None) -> None:
    assert isinstance(barrier.type, BarrierType)
    count = barrier.type.count.data
    # rule: I2
    if index is None:
        if count != 1:
            raise Error(
                "Operation is only valid for a single barrier, but barrier ref contains "
                f"{count}. Individual barriers can be accessed by indexing into the ref.",
                note="index the group: %bars[%i]",
            )
        return
    offset = constant_int(index)
    if offset is not None and not 0 <= offset < count:
        raise Error(
            f"Barrier offset {offset} is out of bounds",
            note=f"the group {barrier.type} holds barriers 0 to {count - 1}: use an index in "
            f"that range, or a larger group (!copy.barrier<{offset + 1}>)",
        )


def check_contiguous_smem(t: MemRefType) -> None:
    # rule: C14
    if any(d < 0 for d in t.get_shape()):
        raise Error(
            f"the SMEM memref must be static shaped, got {t}",
            note="allocate SMEM buffers with copy.alloc_smem and a static shape",
        )
    # rule: C10
    if not isinstance(t.layout, NoneAttr):
        strides = (
            [s.data if isinstance(s, IntAttr) else "?" for s in t.layout.strides]
            if isinstance(t.layout, StridedLayoutAttr)
            else t.layout
        )
        contiguous = [prod(t.get_shape()[i + 1 :]) for i in range(t.get_num_dims())]
        if strides != contiguous or t.layout.offset != IntAttr(0):  # type: ignore[union-attr]
            raise Error(
                "async_copy needs the SMEM reference to be contiguous, but got strides "
                f"{strides} for shape {list(t.get_shape())}",
                note="use a row-major SMEM buffer (no layout) from copy.alloc_smem",
            )


def thread_writes(op: Operation, buffer: SSAValue) -> bool:
    """Whether `op` (or an op nested in it) stores to `buffer` from the threads."""
    for inner in op.walk():
        if isinstance(inner, memref.StoreOp) and inner.memref == buffer:
            return True
        if isinstance(inner, TmemStoreOp | AsyncCopyOp):
            continue
        if inner.name in ("vector.store", "vector.transfer_write", "memref.copy"):
            if buffer in inner.operands[1:]:
                return True
    return False


# The TMA reduction table an H200 ran (tma-reduce-table.md): which ops each tensor-map
# type takes. The map type comes from the element type and, for integers, the signedness
# the op or the type asks for.
REDUCTIONS_BY_MAP = {
    "UINT32": {"add", "min", "max", "inc", "dec", "and", "or", "xor"},
    "INT32": {"add", "min", "max", "and", "or", "xor"},
    "UINT64": {"add", "min", "max", "and", "or", "xor"},
    "INT64": {"min", "max"},
    "FLOAT16": {"add", "min", "max"},
    "BFLOAT16": {"add", "min", "max"},
    "FLOAT32": {"add"},
    "TFLOAT32": {"add"},
    "FLOAT64": {"add"},
}


def reduction_map_type(kind: ReductionKind, element_type: Attribute) -> str | None:
    """The tensor-map type a reduction of `kind` on `element_type` is encoded with.

    Raises for an integer min/max whose signedness neither the op nor the type gives
    (rule E2): the map type, not the instruction, decides it (jax#27086).
    """
    if isinstance(element_type, Float16Type):
        return "FLOAT16"
    if isinstance(element_type, BFloat16Type):
        return "BFLOAT16"
    if isinstance(element_type, Float32Type):
        return "FLOAT32"
    if isinstance(element_type, FloatTF32Type):
        return "TFLOAT32"
    if isinstance(element_type, Float64Type):
        return "FLOAT64"
    if not isinstance(element_type, IntegerType) or element_type.width.data not in (32, 64):
        return None
    signedness = element_type.signedness.data
    wants_signed = kind in (ReductionKind.SMIN, ReductionKind.SMAX)
    wants_unsigned = kind in (ReductionKind.UMIN, ReductionKind.UMAX)
    # rule: E2
    if (wants_signed and signedness == Signedness.UNSIGNED) or (
        wants_unsigned and signedness == Signedness.SIGNED
    ):
        raise Error(
            f"reduction {kind} contradicts the signedness of the element type {element_type}",
            note="the tensor-map type decides signedness: use "
            f"{'u' if wants_signed else 's'}{base_reduction(kind)} (the min/max that matches "
            "the type), or a signless element type",
        )
    if kind in (ReductionKind.MIN, ReductionKind.MAX) and signedness == Signedness.SIGNLESS:
        raise Error(
            f"reduction {kind} on the signless integer type {element_type} does not say "
            "whether to compare signed or unsigned",
            note=f"use u{kind} or s{kind} (or a si/ui element type): the tensor-map type "
            "decides signedness, and a wrong one silently changes the result (jax#27086)",
        )
    signed = wants_signed or (not wants_unsigned and signedness == Signedness.SIGNED)
    return f"{'INT' if signed else 'UINT'}{element_type.width.data}"


def reduction_map_op(kind: ReductionKind, element_type: Attribute) -> str:
    """The op a reduction asks of its tensor map (a key of REDUCTIONS_BY_MAP's sets): for
    integers the signedness of `umin`/`smax`... has gone into the map type, leaving `min`/
    `max`; floats take the op as written (no float map takes `umin`)."""
    return base_reduction(kind) if isinstance(element_type, IntegerType) else kind.value


def base_reduction(kind: ReductionKind) -> str:
    return (
        kind.value.removeprefix("u").removeprefix("s")
        if kind
        in (
            ReductionKind.UMIN,
            ReductionKind.UMAX,
            ReductionKind.SMIN,
            ReductionKind.SMAX,
        )
        else kind.value
    )


def tma_supports_dtype(t: Attribute) -> bool:
    """Element types a tensor map of this compiler can describe (C11): ints of 8..64 bits,
    f16/bf16/tf32/f32/f64, and the 8-bit floats (encoded as unsigned bytes). Packed 4-bit
    elements (i4, f4E2M1FN: the 16U4 map types with their own alignment rules) have no
    tensor-map data type in the lowering yet."""
    return tensor_map_type(t) is not None


def check_tma_dtype(elt: Attribute) -> None:
    # rule: C11
    if not tma_supports_dtype(elt):
        raise Error(
            f"unsupported TMA dtype {elt}",
            note="TMA copies 8- to 64-bit integers, f16, bf16, tf32, f32, f64 and 8-bit floats "
            "(4-bit elements are not lowered yet); "
            + (
                "pack 4-bit elements into i8"
                if bitwidth(elt) == 4
                else "store the values as i8"
                if isinstance(elt, IntegerType) and elt.width.data < 8
                else "bitcast other types to an integer of the same width"
            ),
        )


# ===----------------------------------------------------------------------=== #
# Geometry: what a TMA or cp.async op moves, decoded once
# ===----------------------------------------------------------------------=== #

TENSOR_MAP_TYPES = {
    "f16": "FLOAT16",
    "bf16": "BFLOAT16",
    "f32": "FLOAT32",
    "tf32": "TFLOAT32",
    "f64": "FLOAT64",
}
"""The `CUtensorMapDataType` (without its prefix) of each float type with a map type of its
own; integers and 8-bit floats are mapped in `tensor_map_type`."""


def tensor_map_type(element_type: Attribute, reduction: ReductionKind | None = None) -> str | None:
    """The `CUtensorMapDataType` name (FLOAT32, UINT64, ...) a TMA op on `element_type`
    encodes its tensor map with, or None where no map type exists (rule C11). For a
    reduction the reduction table decides (`reduction_map_type`: the signedness of a min/max
    goes into the map type); otherwise integers are unsigned unless the type is signed, and
    8-bit floats travel as bytes."""
    if reduction is not None:
        return reduction_map_type(reduction, element_type)
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width in (32, 64):
            signed = element_type.signedness.data == Signedness.SIGNED
            return f"{'INT' if signed else 'UINT'}{width}"
        return {8: "UINT8", 16: "UINT16"}.get(width)
    if (name := str(element_type)) in TENSOR_MAP_TYPES:
        return TENSOR_MAP_TYPES[name]
    if isinstance(element_type, AnyFloat) and bitwidth(element_type) == 8:
        return "UINT8"
    return None


@dataclass(frozen=True)
class MulticastSplit:
    """How a multicast load shares its box: each of the `size` CTAs of the collective group
    issues 1/size of the box along box dim `dim` (the outermost dim larger than 1, so that
    the shares lie back to back in SMEM) and multicasts it to the whole group."""

    dim: int
    """The box dim the box is split along (`multicast_split_dim`)."""
    size: int
    """The CTAs of the collective group: the cluster's extent over the collective dims."""
    box_shape: tuple[int, ...]
    """The whole box."""

    @property
    def divides(self) -> bool:
        """Whether `size` divides the box along `dim` (rule D5 requires it)."""
        return self.box_shape[self.dim] % self.size == 0

    @property
    def share_extent(self) -> int:
        """Elements along `dim` each CTA issues: CTA `r` of the group starts `r` times this
        further along the split dim."""
        return self.box_shape[self.dim] // self.size

    @property
    def share(self) -> tuple[int, ...]:
        """The box each CTA issues."""
        box, dim = self.box_shape, self.dim
        return box[:dim] + (self.share_extent,) + box[dim + 1 :]


@dataclass(frozen=True, kw_only=True)
class BoxGeometry:
    """The box of a GMEM array that a copy or a prefetch addresses, and the tensor map that
    describes it (for TMA). `PrefetchOp.geometry()` gives this; `AsyncCopyOp.geometry()` a
    `CopyGeometry`, which adds the SMEM side."""

    gmem: SSAValue
    gmem_type: MemRefType
    gmem_indices: tuple[SSAValue, ...]
    """The box origin, one index per GMEM dim (rule K1)."""
    box_shape: tuple[int, ...]
    """The box, outermost dim first; it may leave out leading GMEM dims (copied with size 1)."""
    swizzle_bytes: int
    """The SMEM swizzle span in bytes, 16 for none."""
    oob: OOBMode
    """What out-of-bounds parts of the box do (the op's `oob`, else its default)."""
    reduction: ReductionKind | None
    """The reduction a TMA store applies, None for a plain copy."""

    @property
    def element_type(self) -> Attribute:
        return self.gmem_type.element_type

    @property
    def element_bits(self) -> int:
        """Bits an element occupies in memory (`bitwidth`; 8 for a non-numeric element type,
        which rule B8 rejects)."""
        return bitwidth(self.element_type) or 8

    @property
    def row_bytes(self) -> int:
        """Bytes of one innermost row of the box (whole bytes: rules B8, C12)."""
        return self.box_shape[-1] * self.element_bits // 8

    @property
    def box_bytes(self) -> int:
        """Bytes the copy delivers (what a barrier is credited, OOB parts included)."""
        return prod(self.box_shape) * (bitwidth(self.element_type) or 0) // 8

    @property
    def issued_box(self) -> tuple[int, ...]:
        """The box each CTA issues: the whole box."""
        return self.box_shape

    def gmem_dim(self, box_dim: int) -> int:
        """The GMEM dim that box dim `box_dim` runs along (the box aligns with the innermost
        GMEM dims)."""
        return self.gmem_type.get_num_dims() - len(self.box_shape) + box_dim

    @property
    def gmem_box(self) -> tuple[int, ...]:
        """`issued_box` with a 1 for each GMEM dim it leaves out: one entry per GMEM dim,
        outermost first (the box of the tensor map)."""
        box = self.issued_box
        return (1,) * (self.gmem_type.get_num_dims() - len(box)) + box

    @property
    def gmem_argument(self) -> int:
        """The index of the GMEM ref among the kernel's arguments: for a TMA op, whose GMEM
        ref is a kernel argument (rule B11)."""
        assert isinstance(self.gmem, BlockArgument)
        return self.gmem.index

    @property
    def tensor_map_type(self) -> str | None:
        """The tensor map's `CUtensorMapDataType` name (`tensor_map_type`); a TMA op that
        verifies has one (rules C11, E1)."""
        return tensor_map_type(self.element_type, self.reduction)

    @property
    def tensor_map_oob(self) -> str:
        """The tensor map's out-of-bounds fill: "nan" or "zeros"."""
        return "nan" if self.oob == OOBMode.NAN else "zeros"


@dataclass(frozen=True, kw_only=True)
class CopyGeometry(BoxGeometry):
    """What a `copy.async_copy` moves, by memory space rather than by src/dst: the GMEM box,
    the SMEM slot and, for a multicast load, each CTA's share."""

    is_load: bool
    """GMEM -> SMEM (else SMEM -> GMEM)."""
    smem: SSAValue
    smem_type: MemRefType
    smem_indices: tuple[SSAValue, ...]
    """Slot indices on the SMEM ref's leading dims; the remaining dims are the box."""
    collective_dims: tuple[int, ...]
    """The cluster dims a collective copy is shared over, () for none."""
    leader_tracked: bool
    """A leader-tracked copy of a CTA pair (each CTA issues its whole box)."""
    op: Operation = field(compare=False, repr=False)
    """The op decoded, whose kernel gives the cluster shape."""

    @cached_property
    def cluster(self) -> tuple[int, int, int]:
        """The cluster shape of the kernel around the copy, (1, 1, 1) when it has none."""
        return cluster_shape(self.op)

    @cached_property
    def multicast(self) -> MulticastSplit | None:
        """How a multicast load splits its box over its collective group (collective dims
        valid: rule D7); None for a copy that is not collective or is leader-tracked."""
        if not self.collective_dims or self.leader_tracked:
            return None
        size = prod(self.cluster[d] for d in self.collective_dims)
        return MulticastSplit(multicast_split_dim(self.box_shape), size, self.box_shape)

    @property
    def issued_box(self) -> tuple[int, ...]:
        """The box each CTA issues: its share for a multicast load, else the whole box."""
        return self.box_shape if self.multicast is None else self.multicast.share

    @property
    def share_bytes(self) -> int:
        """The SMEM bytes the box each CTA issues occupies (`smem_bytes`: rows padded to the
        swizzle span); the shares of a multicast load lie back to back, CTA `r`'s at
        `r * share_bytes` into the slot (rules D5, TR11 keep each aligned)."""
        return smem_bytes(self.issued_box, self.element_type, self.swizzle_bytes)


# ===----------------------------------------------------------------------=== #
# copy.async_copy
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
class AsyncCopyOp(IRDLOperation):
    """
    Starts an asynchronous copy of a box between GMEM and SMEM; the direction follows the
    memory spaces. The GMEM side is indexed with the box origin (one index per GMEM dim);
    the SMEM side may be indexed on its leading dims to pick a slot of a multi-buffer, and
    its remaining dims are the box. A load signals `barrier` when its bytes have landed
    (and, unless `arrive = false`, arrives on it expecting them); a store completes
    through bulk groups (`copy.commit_group bulk`).

    ```mlir
    copy.async_copy %x[%i, %j] to %buf[%slot] barrier %bars[%slot] oob zeros
        : memref<4096x4096xf32> to memref<2x64x64xf32, #copy.smem>, !copy.barrier<2>
    ```
    """

    name = "copy.async_copy"

    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    src_indices = var_operand_def(IndexType)
    dst_indices = var_operand_def(IndexType)
    barrier = opt_operand_def(BarrierType)
    barrier_index = opt_operand_def(IndexType)
    predicate = opt_operand_def(I1)

    implementation = opt_prop_def(ImplementationAttr)
    reduction = opt_prop_def(ReductionKindAttr)
    collective = opt_prop_def(DenseArrayBase.constr(i64))
    leader_tracked = opt_prop_def(LeaderTrackedAttr)
    oob = opt_prop_def(OOBModeAttr)
    swizzle = opt_prop_def(IntegerAttr[I64])
    arrive = opt_prop_def(BoolAttr)
    cache = opt_prop_def(CacheModeAttr)
    cache_hint = opt_prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    assembly_format = (
        "$src (`[` $src_indices^ `]`)? `to` $dst (`[` $dst_indices^ `]`)? "
        "(`barrier` $barrier^ `[` $barrier_index `]`)? (`if` $predicate^)? "
        "(`impl` $implementation^)? (`reduce` $reduction^)? (`oob` $oob^)? "
        "(`leader_tracked` $leader_tracked^)? (`cache` $cache^)? "
        "attr-dict `:` type($src) `to` type($dst) (`,` type($barrier)^)?"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        dst: SSAValue | Operation,
        *,
        src_indices: Sequence[SSAValue | Operation] = (),
        dst_indices: Sequence[SSAValue | Operation] = (),
        barrier: SSAValue | Operation | None = None,
        barrier_index: SSAValue | Operation | None = None,
        predicate: SSAValue | Operation | None = None,
        implementation: Implementation | str | None = None,
        reduction: ReductionKind | str | None = None,
        collective: Sequence[int] | None = None,
        leader_tracked: LeaderTrackedAttr | None = None,
        oob: OOBMode | str | None = None,
        swizzle: int | None = None,
        arrive: bool | None = None,
        cache: CacheMode | str | None = None,
        cache_hint: int | None = None,
    ):
        super().__init__(
            operands=[
                src,
                dst,
                src_indices,
                dst_indices,
                barrier,
                barrier_index,
                predicate,
            ],
            properties={
                "implementation": _enum(ImplementationAttr, Implementation, implementation),
                "reduction": _enum(ReductionKindAttr, ReductionKind, reduction),
                "collective": None
                if collective is None
                else DenseArrayBase.from_list(i64, collective),
                "leader_tracked": leader_tracked,
                "oob": _enum(OOBModeAttr, OOBMode, oob),
                "swizzle": None if swizzle is None else IntegerAttr(swizzle, i64),
                "arrive": None if arrive is None else BoolAttr.from_bool(arrive),
                "cache": _enum(CacheModeAttr, CacheMode, cache),
                "cache_hint": None if cache_hint is None else IntegerAttr(cache_hint, i64),
            },
        )

    # -- derived facts, used by the verifier and by the lowering ------------------------

    def geometry(self) -> CopyGeometry:
        """Direction, operands by memory space, the box and its tensor map, decoded once
        (for the verifier and the lowering)."""
        src, dst = self.operands[0], self.operands[1]
        assert isinstance(src_type := src.type, MemRefType)
        assert isinstance(dst_type := dst.type, MemRefType)
        sizes = self.properties["operandSegmentSizes"]
        assert isinstance(sizes, DenseArrayBase)
        n_src, n_dst = (int(v) for v in sizes.get_values()[2:4])
        src_indices = tuple(self.operands[2 : 2 + n_src])
        dst_indices = tuple(self.operands[2 + n_src : 2 + n_src + n_dst])
        is_load = memory_space(src_type) == GMEM
        gmem, gmem_type, gmem_indices = (
            (src, src_type, src_indices) if is_load else (dst, dst_type, dst_indices)
        )
        smem, smem_type, smem_indices = (
            (dst, dst_type, dst_indices) if is_load else (src, src_type, src_indices)
        )
        return CopyGeometry(
            gmem=gmem,
            gmem_type=gmem_type,
            gmem_indices=gmem_indices,
            box_shape=smem_type.get_shape()[len(smem_indices) :],
            swizzle_bytes=swizzle_of(smem_type),
            oob=self.oob_mode,
            reduction=None if self.reduction is None else self.reduction.data,
            is_load=is_load,
            smem=smem,
            smem_type=smem_type,
            smem_indices=smem_indices,
            collective_dims=self.collective_dims,
            leader_tracked=self.leader_tracked is not None,
            op=self,
        )

    @property
    def is_load(self) -> bool:
        """GMEM -> SMEM (else SMEM -> GMEM)."""
        assert isinstance(self.src.type, MemRefType)
        return memory_space(self.src.type) == GMEM

    @property
    def box_bytes(self) -> int:
        """Bytes the copy delivers (what a barrier is credited, OOB parts included)."""
        return self.geometry().box_bytes

    @property
    def collective_dims(self) -> tuple[int, ...]:
        return () if self.collective is None else tuple(self.collective.get_values())

    @property
    def oob_mode(self) -> OOBMode:
        if self.oob is not None:
            return self.oob.data
        return OOBMode.ZEROS if self.is_load else OOBMode.UNDEFINED

    @property
    def arrives(self) -> bool:
        """Whether the copy itself arrives on its barrier expecting its bytes."""
        return self.barrier is not None and (self.arrive is None or self.arrive.value.data)

    def resolved_implementation(self) -> Implementation | None:
        """The implementation the IR asks for or, when it leaves it open, the target's."""
        if self.implementation is not None:
            return self.implementation.data
        target = enclosing_target(self)
        return None if target is None else Implementation(target.default_implementation)

    def _cp_async_alternative(self, g: CopyGeometry) -> str:
        """`, or use impl cp_async` where cp.async can do this copy instead of TMA, else ''."""
        if not g.is_load or g.swizzle_bytes != 16 or self.oob_mode == OOBMode.NAN:
            return ""
        if any(a is not None for a in (self.collective, self.leader_tracked, self.predicate)):
            return ""
        without = " without the barrier" if self.barrier is not None else ""
        return ", or use impl cp_async" + without

    def _tma_alternative(self, g: CopyGeometry) -> str:
        """`, or use impl tma` (with a barrier for a load) where the target has TMA, else ''."""
        target = enclosing_target(self)
        if target is None or not target.has_tma:
            return ""
        with_barrier = " with a barrier" if g.is_load and self.barrier is None else ""
        return ", or use impl tma" + with_barrier

    def _tma_note(self, g: CopyGeometry, targets: str, has: bool = False) -> str:
        """The note of a rule that only TMA supports: `impl tma` on `targets` (on the enclosing
        target where it has the feature: `has`), plus what a TMA copy needs."""
        if has:
            target = enclosing_target(self)
            assert target is not None
            targets = target.name
        elif ", " in targets:
            targets = f"one of {targets}"
        needs = []
        if self.leader_tracked is not None and self.collective is None:
            axis = next((d for d, n in enumerate(cluster_shape(self)) if n > 1), 0)
            needs.append(f"collective = array<i64: {axis}>")
        if g.is_load and self.barrier is None:
            needs.append("a barrier (barrier %bar[%i])")
        return f"use impl tma on {targets}" + (f", with {' and '.join(needs)}" if needs else "")

    # -- verifier ------------------------------------------------------------------------

    def verify_(self) -> None:
        assert isinstance(src_type := self.src.type, MemRefType)
        assert isinstance(dst_type := self.dst.type, MemRefType)
        src_space, dst_space = memory_space(src_type), memory_space(dst_type)

        # rule: B2
        if {src_space, dst_space} != {GMEM, SMEM}:
            raise Error(
                "Only SMEM <-> GMEM copies supported",
                note=f"got a copy from {src_space} to {dst_space}; a GMEM ref has no memory "
                "space and an SMEM ref has #copy.smem"
                + (
                    "; TMEM is reached with copy.tmem_load, copy.tmem_store and copy.smem_to_tmem"
                    if TMEM in (src_space, dst_space)
                    else ""
                ),
            )
        # rule: B1
        if src_type.element_type != dst_type.element_type:
            raise Error(
                f"Expected same element type, got {src_type.element_type} and "
                f"{dst_type.element_type}",
                note="copies do not convert: give both refs the same element type, "
                f"{src_type.element_type} or {dst_type.element_type}",
            )
        self._verify_barrier_operands()
        g = self.geometry()
        gmem_type, smem_type = g.gmem_type, g.smem_type
        check_contiguous_smem(smem_type)
        impl = self.resolved_implementation()
        self._verify_indices(g, gmem_type, smem_type)
        self._verify_element_type(g, impl)
        self._verify_gmem_layout(g, gmem_type, impl)
        # What no implementation can do comes before what only another one can (E3 and B4
        # before A9, A4, A5): the direction's rules are the more specific.
        self._verify_direction(g)
        self._verify_implementation(g, impl)
        if impl == Implementation.TMA:
            # rule: A3
            if g.is_load and self.barrier is None:
                raise Error(
                    "Barriers are required for TMA GMEM -> SMEM copies",
                    note="give the load a barrier (barrier %bar[%i], from copy.barrier_init) and "
                    "wait on it with copy.barrier_wait"
                    + self._cp_async_alternative(g),
                )
            check_kernel_argument(self, g.gmem)
            self._verify_tma_box(g, gmem_type)
            self._verify_reduction(g)
            self._verify_collective(g)
            self._verify_smem_alignment(g)
            self._verify_fenced(g)
        elif impl == Implementation.CP_ASYNC:
            self._verify_cp_async(g)
        self._verify_constant_coordinates(g, gmem_type, impl)

    def _verify_barrier_operands(self) -> None:
        if self.barrier is not None:
            check_barrier_index(self.barrier, self.barrier_index)
            return
        # rule: I2
        if self.barrier_index is not None:
            raise Error(
                "a barrier index needs a barrier, but the copy has none",
                note="drop barrier_index, or pass the barrier group it indexes (barrier=)",
            )

    def _verify_gmem_layout(
        self, g: CopyGeometry, gmem_type: MemRefType, impl: Implementation | None
    ) -> None:
        layout = gmem_type.layout
        if isinstance(layout, NoneAttr):
            if impl == Implementation.TMA:
                # Rows as wide as the innermost extent: where it breaks TR19 it breaks C1
                # too, and only TR19's fix (padding the extent) mends both.
                self._verify_store_extent(g, gmem_type)
            row_stride = gmem_row_stride_bytes(gmem_type)
            # rule: C1
            if impl == Implementation.TMA and row_stride is not None and row_stride % 16:
                padded = padded_stride(gmem_type.get_shape()[-1], g.element_type, 16)
                raise Error(
                    "async_copy requires all GMEM strides except the last one to be a "
                    "multiple of 16 bytes",
                    note=f"the rows of {gmem_type} are {row_stride} bytes apart: pad them to "
                    f"{padded} elements, a multiple of 16 bytes (strided<[{padded}, 1]>)"
                    + self._cp_async_alternative(g),
                )
            return
        # rule: B10
        if not isinstance(layout, StridedLayoutAttr):
            raise Error(
                "async_copy assumes the GMEM reference is contiguous",
                note=f"got the layout {layout}; use a row-major ref or a strided<...> layout "
                "with unit innermost stride",
            )
        strides = [s.data if isinstance(s, IntAttr) else None for s in layout.strides]
        if strides and strides[-1] != 1:
            found = "?" if strides[-1] is None else strides[-1]
            if impl == Implementation.CP_ASYNC:
                # rule: H7
                raise Error(
                    "source memref most minor dim must have unit stride",
                    note=f"the innermost stride is {found}; cp.async copies contiguous chunks: "
                    "use a ref with innermost stride 1",
                )
            # rule: C2
            raise Error(
                "TMA requires the stride of the last dimension after transforming the GMEM "
                f"reference to be 1, but it is {found}.",
                note="copy from a ref whose innermost dimension is contiguous (stride 1)",
            )
        bits = bitwidth(gmem_type.element_type) or 8
        if impl != Implementation.TMA:
            return
        self._verify_store_extent(g, gmem_type)
        for i, stride in enumerate(strides[:-1]):
            # rule: C1
            if stride is not None and (stride * bits // 8) % 16:
                raise Error(
                    "async_copy requires all GMEM strides except the last one to be a "
                    "multiple of 16 bytes",
                    note=f"stride {i} is {stride} elements = {stride * bits // 8} bytes; pad "
                    f"it to {padded_stride(stride, gmem_type.element_type, 16)} elements, a "
                    "multiple of 16 bytes",
                )
            # rule: C1
            if stride is not None and stride * bits // 8 >= 1 << 40:
                raise Error(
                    f"Byte strides must be divisible by 16 and less than 2**40, but got "
                    f"{stride * bits // 8} at index {i}",
                    note="split the array: a tensor map cannot stride that far",
                )

    def _verify_store_extent(self, g: CopyGeometry, gmem_type: MemRefType) -> None:
        """A TMA store or reduction writes whole 16-byte chunks (TR19): into a tensor whose
        innermost extent is not a multiple of 16 bytes it writes past that extent, into
        what follows the tensor (the next row of a wider array, or the next buffer). A
        dynamic extent is checked by the runtime on the array passed at launch."""
        if g.is_load or not gmem_type.get_num_dims():
            return
        extent = gmem_type.get_shape()[-1]
        bits = bitwidth(g.element_type) or 8
        # rule: TR19
        if extent >= 0 and (extent * bits) % 128:
            chunk = max(1, 128 // bits)
            padded = -(-extent // chunk) * chunk
            over = (padded - extent) * bits // 8
            padded_type = MemRefType(
                g.element_type, [*gmem_type.get_shape()[:-1], padded], gmem_type.layout
            )
            raise Error(
                "a TMA store or reduction writes whole 16-byte chunks: expected the innermost "
                f"GMEM extent to be a multiple of 16 bytes, got {extent} elements of "
                f"{g.element_type} ({extent * bits // 8} bytes), which overwrites {over} bytes "
                "after each innermost row",
                note=f"pad the innermost dimension to a multiple of {chunk} elements (here "
                f"{padded}: {padded_type}), or store the elements with threads (memref.store)",
            )

    def _verify_indices(
        self, g: CopyGeometry, gmem_type: MemRefType, smem_type: MemRefType
    ) -> None:
        rank = gmem_type.get_num_dims()
        # rule: K1
        if len(g.gmem_indices) != rank:
            raise Error(
                f"expected {rank} coordinates, but got {len(g.gmem_indices)}",
                note=f"index the GMEM ref with the box origin, one index per dimension ({rank})",
            )
        slots = len(g.smem_indices)
        # rule: B12
        if slots >= smem_type.get_num_dims() and smem_type.get_num_dims() > 0:
            raise Error(
                f"The size of the SMEM `indices` must be smaller than the rank of the SMEM "
                f"ref ({smem_type.get_num_dims()}), got {slots}",
                note="SMEM indices pick a slot along leading dims; the remaining dims are the box: "
                f"use at most {smem_type.get_num_dims() - 1}",
            )
        # rule: B6
        if len(g.box_shape) > rank or not g.box_shape:
            src, dst = (gmem_type, g.box_shape) if g.is_load else (g.box_shape, gmem_type)
            src_shape = list(src.get_shape()) if isinstance(src, MemRefType) else list(src)
            dst_shape = list(dst.get_shape()) if isinstance(dst, MemRefType) else list(dst)
            raise Error(
                f"Expected shapes to match, but src has shape {src_shape} and dst has shape "
                f"{dst_shape}",
                note="the box (the SMEM ref's dims after its slot indices) may leave out "
                "leading GMEM dims, which are then copied with size 1, but not add dims: index "
                "a slot of the SMEM ref, or give the GMEM ref more dims",
            )

    def _verify_element_type(self, g: CopyGeometry, impl: Implementation | None) -> None:
        elt = g.element_type
        bits = bitwidth(elt)
        box = list(g.box_shape)
        # rule: B8
        if bits is None or (prod(box) * bits) % 8:
            raise Error(
                f"Can only transfer integer bytes (shape={box}, dtype={elt})",
                note="copy whole bytes: a box of sub-byte elements needs a multiple of "
                f"{8 // bits if bits else 8} elements, e.g. "
                f"{box[:-1] + [-(-box[-1] // (8 // bits)) * (8 // bits)] if box else [8 // bits]}"
                if bits
                else "use a numeric element type",
            )
        if impl == Implementation.TMA:
            check_tma_dtype(elt)
        # rule: C12
        if bits < 8:
            packing = 8 // bits
            assert isinstance(gmem_type := g.gmem.type, MemRefType)
            minor = gmem_type.get_shape()[-1] if gmem_type.get_num_dims() else 1
            if box[-1] % packing or (minor >= 0 and minor % packing):
                pads = []
                if minor >= 0 and minor % packing:
                    shape = [*gmem_type.get_shape()[:-1], padded_stride(minor, elt, 1)]
                    pads.append(f"the GMEM ref to {MemRefType(elt, shape)}")
                if box[-1] % packing:
                    pads.append(f"the box dim to {padded_stride(box[-1], elt, 1)}")
                raise Error(
                    f"sub-byte element type {elt}: the innermost GMEM dim ({minor}) and box "
                    f"dim ({box[-1]}) must be multiples of the packing {packing}",
                    note=f"pad the innermost dimension to whole bytes: {' and '.join(pads)}",
                )

    def _verify_implementation(self, g: CopyGeometry, impl: Implementation | None) -> None:
        target = enclosing_target(self)
        # rule: A1
        if impl == Implementation.TMA and target is not None and not target.has_tma:
            cp_async = self._cp_async_alternative(g).removeprefix(", or ")
            if not g.is_load:
                note = "cp.async cannot store or reduce: target sm_90 or newer, or store from "
                note += "threads with memref.store"
            elif cp_async and self.barrier is None:
                note = f"{cp_async}, or leave the implementation open to let the target choose"
            else:
                note = (f"{cp_async}, or " if cp_async else "") + "target sm_90 or newer"
            raise Error(
                f"the TMA implementation needs sm_90 or newer, but the target is {target.name}",
                note=note,
            )
        if impl == Implementation.TMA or impl is None:
            return
        # rule: A9
        if self.reduction is not None:
            raise Error(
                "Only the TMA implementation supports reductions",
                note=self._tma_note(g, "sm_90 or newer"),
            )
        # A leader-tracked copy is also collective (D3): A5, the more specific rule, first.
        # rule: A5
        if self.leader_tracked is not None:
            raise Error(
                "Only the TMA implementation supports leader_tracked copies",
                note=self._tma_note(g, TCGEN05_TARGETS, target is not None and target.has_tcgen05),
            )
        # rule: A4
        if self.collective is not None:
            raise Error(
                "Only the TMA implementation supports collective copies",
                note=self._tma_note(
                    g, MULTICAST_TARGETS, target is not None and target.has_multicast
                ),
            )
        # rule: B5
        if not g.is_load:
            raise Error(
                "CP_ASYNC implementation only supports GMEM -> SMEM copies",
                note="cp.async cannot store: use impl tma on sm_90 or newer, or store from threads "
                "with memref.store",
            )
        # rule: A2
        if self.barrier is not None:
            raise Error(
                "copy_gmem_to_smem with a barrier is only supported Hopper and newer GPUs, "
                "which use the TMA implementation",
                note="drop the barrier and wait with copy.commit_group cp_async + "
                "copy.wait_group cp_async, or use impl tma on sm_90+",
            )
        # rule: A10, H1
        if self.predicate is not None:
            raise Error(
                "The cp.async implementation does not support user-defined predicates",
                note="all threads of the block issue a cp.async copy together: guard the "
                "whole copy with scf.if on a block-uniform condition"
                + (", or use impl tma" if target is not None and target.has_tma else ""),
            )

    def _verify_direction(self, g: CopyGeometry) -> None:
        if g.is_load:
            # rule: E3
            if self.reduction is not None:
                raise Error(
                    "Reductions are only supported for SMEM -> GMEM copies",
                    note="drop reduce for a plain load; a reduction is a store that combines "
                    "SMEM into GMEM: swap src and dst (and drop the barrier)",
                )
            return
        # rule: B3
        if self.barrier is not None:
            raise Error(
                "Barriers are unsupported for SMEM -> GMEM copies",
                note="drop the barrier: stores complete through bulk groups "
                "(copy.commit_group bulk, then copy.wait_group bulk)",
            )
        # rule: B4
        if self.collective is not None or self.leader_tracked is not None:
            raise Error(
                "Only GMEM -> SMEM copies can be collective",
                note="drop collective/leader_tracked: each CTA stores its own SMEM",
            )
        # rule: F1
        if self.oob is not None and self.oob.data in (OOBMode.ZEROS, OOBMode.NAN):
            raise Error(
                f"oob {self.oob.data} only applies to GMEM -> SMEM copies",
                note="a TMA store never writes outside the array (it clips); drop oob",
            )

    def _verify_tma_box(self, g: CopyGeometry, gmem_type: MemRefType) -> None:
        box, bits = g.box_shape, bitwidth(g.element_type) or 8
        # rule: C3
        if not 1 <= gmem_type.get_num_dims() <= 5:
            raise Error(
                "Async copies only support striding up to 5 dimensions",
                note=f"the GMEM ref has rank {gmem_type.get_num_dims()}; a tensor map has 1 "
                f"to 5 dims: reshape the array{merged_leading_dims_example(gmem_type)}",
            )
        for size in box:
            # rule: C7, TR5
            if not 1 <= size <= 256:
                raise Error(
                    f"Async copies only support copying <=256 elements along each "
                    f"dimension, got {size}",
                    note=f"split the box {list(box)} into several copies of at most 256 "
                    "elements per dimension",
                )
        minor_bits = box[-1] * bits
        # rule: C4, TR5
        if minor_bits % 128:
            raise Error(
                "Async copies require the number of bits copied along the last dimension "
                f"to be divisible by 128, but got {minor_bits}",
                note=f"make the innermost box dim a multiple of {max(1, 128 // bits)} "
                f"elements ({g.element_type}): {padded_stride(box[-1], g.element_type, 16)} "
                f"rather than {box[-1]}",
            )
        for i, size in enumerate(gmem_type.get_shape()):
            # rule: C8
            if size > 1 << 32:
                raise Error(
                    f"TMA size must be at most 2**32, but got {size} at index {i}",
                    note="split the array: a tensor-map dimension holds at most 2**32 elements",
                )
        swizzle = g.swizzle_bytes
        # rule: C15
        if self.swizzle is not None and self.swizzle.value.data != swizzle:
            raise Error(
                "TMA descriptor layout must match shared layout, but got descriptor layout "
                f"swizzle {self.swizzle.value.data} and shared memory layout swizzle {swizzle}",
                note=f"drop the copy's swizzle, or allocate the buffer as "
                f"#copy.smem<swizzle = {self.swizzle.value.data}>",
            )
        # rule: C5, TR8
        if swizzle != 16 and minor_bits > swizzle * 8:
            raise Error(
                f"Async copies with swizzle={swizzle} require the last dimension of the slice "
                f"to be at most {swizzle} bytes i.e. {swizzle * 8 // bits} elements, but got "
                f"{box[-1]} elements.",
                note=f"narrow the innermost box dim to {swizzle * 8 // bits} elements (one "
                "swizzle span) and copy the rest separately, or use "
                + next(
                    (f"swizzle = {s}" for s in SWIZZLES if s > swizzle and minor_bits <= s * 8),
                    "an unswizzled buffer",
                ),
            )
        # rule: TR15
        if self.oob_mode == OOBMode.NAN and not isinstance(g.element_type, AnyFloat):
            raise Error(
                f"oob nan needs a floating-point element type, got {g.element_type}",
                note="the NaN fill (NAN_REQUEST_ZERO_FMA) exists only for float tensor maps: "
                "use oob zeros",
            )

    def _verify_reduction(self, g: CopyGeometry) -> None:
        if self.reduction is None:
            return
        kind, elt = self.reduction.data, g.element_type
        map_type = g.tensor_map_type
        # rule: E1, E5
        if map_type is None or reduction_map_op(kind, elt) not in REDUCTIONS_BY_MAP[map_type]:
            supported = sorted(REDUCTIONS_BY_MAP.get(map_type or "", ()))
            base = base_reduction(kind)
            if base != kind.value and not isinstance(elt, IntegerType) and base in supported:
                # umin/smax... pick an integer comparison; a float map compares as floats.
                note = (
                    f"use reduce {base}: {kind} names the signedness of an integer comparison, "
                    f"and {elt} (tensor map {map_type}) takes {', '.join(supported)}"
                )
            elif supported:
                note = f"{elt} (tensor map {map_type}) takes {', '.join(supported)}"
            else:
                note = f"no TMA reduction exists for {elt}"
            raise Error(
                f"Reduction op {kind} not supported by the TMA implementation for element "
                f"type {elt}",
                note=note + " (measured on an H200; anything else is an illegal instruction)",
            )

    def _verify_collective(self, g: CopyGeometry) -> None:
        dims = self.collective_dims
        if not dims and self.leader_tracked is None:
            return
        # rule: D7
        if len(set(dims)) != len(dims):
            raise Error(
                "The `collective` attribute must not contain duplicate dimensions.",
                note=f"got {list(dims)}: name each cluster dim once",
            )
        if any(d not in (0, 1, 2) for d in dims):
            raise Error(
                f"collective dims are cluster dims 0 (x), 1 (y) or 2 (z), got {list(dims)}",
                note="name each cluster dimension the copy is shared over once",
            )
        target = enclosing_target(self)
        if self.leader_tracked is not None:
            self._verify_leader_tracked(g, dims, g.cluster, target)
            return
        # rule: A4
        if target is not None and not target.has_multicast:
            raise Error(
                f"collective (multicast) copies need {MULTICAST_TARGETS}, but the target is "
                f"{target.name}",
                note=".multicast::cluster is an arch-specific feature: use sm_90a rather than "
                "sm_90",
            )
        split = g.multicast
        assert split is not None
        size, dim, box = split.size, split.dim, g.box_shape
        # rule: D5
        if size < 2:
            raise Error(
                f"a collective copy over cluster dims {list(dims)} needs a cluster larger "
                f"than 1 along them, got cluster {list(g.cluster)}",
                note="set copy.cluster = array<i32: x, y, z> on the kernel, or drop collective",
            )
        share = split.share
        innermost = dim == len(box) - 1
        # rule: D5
        if not split.divides or (
            innermost and (g.swizzle_bytes != 16 or share[-1] * g.element_bits % 128)
        ):
            raise Error(
                f"None of the leading dimensions in the transformed slice shape {list(box)} "
                f"is divisible by the collective size {size}",
                note=f"each CTA of the collective loads 1/{size} of the box along its outermost "
                f"dim larger than 1 (here dim {dim}) and multicasts it: make that dim a multiple "
                f"of {size}, e.g. {-(-box[dim] // size) * size}"
                + (" (an unswizzled innermost dim of whole 16-byte chunks)" if innermost else ""),
            )
        share_bytes = g.share_bytes
        required = max(128, swizzle_period(g.swizzle_bytes))
        # rule: D5, TR11
        if share_bytes % required:
            grown = box[dim] * (required // gcd(share_bytes, required))
            raise Error(
                f"each CTA's share of the multicast box is {share_bytes} bytes, not a multiple "
                f"of the {required} bytes TMA needs its SMEM destination aligned to",
                note=f"make the box's share per CTA ({list(share)}) a multiple of {required} bytes"
                + (f", e.g. a box dim {dim} of {grown}" if grown <= 256 else ""),
            )

    def _verify_leader_tracked(
        self,
        g: CopyGeometry,
        dims: Sequence[int],
        cluster: tuple[int, int, int],
        target: Target | None,
    ) -> None:
        assert self.leader_tracked is not None
        # rule: D3
        if not dims:
            raise Error(
                "`collective_axes` must be specified when `leader_tracked` is set",
                note="give the cluster dim of the CTA pair: collective = array<i64: 0>",
            )
        # rule: D1
        if len(dims) != 1:
            raise Error(
                f"Expected exactly one collective axis, got collective_axes={list(dims)}",
                note="a leader-tracked copy is shared by a pair of CTAs along one cluster dim: "
                f"keep one of the collective dims {list(dims)}",
            )
        # rule: D2
        if prod(cluster) != 2:
            raise Error(
                "Partitioned loads only supported for clusters of size 2. Got cluster size "
                f"{prod(cluster)}.",
                note="set copy.cluster = array<i32: 2, 1, 1> (or 1, 2, 1 / 1, 1, 2) on the kernel",
            )
        axis = self.leader_tracked.partition_axis
        box = g.box_shape
        # rule: D4
        if axis is not None and axis >= len(box):
            raise Error(
                f"partition axis {axis} is out of range for the rank-{len(box)} slice {list(box)}",
                note=f"partition along a dim of the box (0 to {len(box) - 1}); each CTA's SMEM ref "
                "holds its half",
            )
        # rule: A5, A14
        if target is not None and not target.has_tcgen05:
            raise Error(
                f"leader_tracked copies emit .cta_group::2, which needs {TCGEN05_TARGETS}, "
                f"but the target is {target.name}",
                note="drop leader_tracked for a plain collective copy (multicast), or target "
                "sm_100a",
            )

    def _verify_smem_alignment(self, g: CopyGeometry) -> None:
        alloc = g.smem.owner
        if not isinstance(alloc, AllocSmemOp):
            return
        assert isinstance(smem_type := g.smem.type, MemRefType)
        swizzle = g.swizzle_bytes
        required = max(128, swizzle_period(swizzle))
        slot_bytes = smem_bytes(g.box_shape, g.element_type, swizzle)
        slot_offsets = [constant_int(i) for i in g.smem_indices]
        if not g.smem_indices:
            return
        strides = smem_strides(smem_type.get_shape(), g.element_type, swizzle)[
            : len(g.smem_indices)
        ]
        if all(o is not None for o in slot_offsets):
            offset = sum(o * s for o, s in zip(slot_offsets, strides, strict=True))  # type: ignore[operator]
            misaligned = offset % required
            where = f"slot {[o for o in slot_offsets]} starts at byte {offset}"
        else:
            misaligned = min(strides) % required
            where = f"slots are {slot_bytes} bytes apart"
        if misaligned:
            grown = g.box_shape[0] * (required // gcd(slot_bytes, required))
            # rule: TR10, TR11
            raise Error(
                f"TMA needs its SMEM address aligned to {required} bytes"
                + (f" (swizzle {swizzle} repeats every {required} bytes)" if swizzle != 16 else "")
                + f", but {where}",
                note=f"make each slot a multiple of {required} bytes"
                + (f" (e.g. a box {[grown, *g.box_shape[1:]]})" if grown <= 256 else "")
                + "; a misaligned TMA "
                + (
                    "address faults with CUDA_ERROR_MISALIGNED_ADDRESS"
                    if required == 128
                    else "copy silently swizzles by absolute address bits"
                ),
            )

    def _verify_fenced(self, g: CopyGeometry) -> None:
        """SMEM written by threads must be fenced before a TMA store reads it (J16)."""
        if g.is_load:
            return
        buffer = g.smem
        op = self.prev_op
        while op is not None:
            if isinstance(op, FenceAsyncSharedOp):
                return
            if isinstance(op, AsyncCopyOp) and not op.is_load and op.geometry().smem == buffer:
                return
            # rule: J16
            if thread_writes(op, buffer):
                raise Error(
                    "SMEM written by threads must be made visible to the TMA unit before a "
                    "TMA store reads it",
                    note="add copy.fence_async_shared after the writes and before the copy, in "
                    "this block (it includes the block barrier)",
                )
            op = op.prev_op

    def _verify_cp_async(self, g: CopyGeometry) -> None:
        bits = bitwidth(g.element_type) or 8
        row_bytes = g.box_shape[-1] * bits // 8
        # rule: A6
        if self.oob_mode not in (OOBMode.ZEROS, OOBMode.PROMISE_IN_BOUNDS):
            raise Error(
                "The cp.async implementation only supports oob promise_in_bounds or zeros, "
                f"got {self.oob_mode}",
                note="cp.async zero-fills out-of-bounds bytes (src-size) and cannot fill NaN: use "
                "oob zeros",
            )
        # rule: H2
        if g.swizzle_bytes != 16:
            raise Error(
                "Swizzle is not supported for CP_ASYNC copies",
                note="drop the swizzle (cp.async writes a plain #copy.smem buffer)"
                + self._tma_alternative(g),
            )
        # rule: H2
        if row_bytes % 4:
            raise Error(
                "CP_ASYNC requires at least 4 bytes per transfer",
                note=f"the innermost box row is {row_bytes} bytes; cp.async moves 4, 8 or 16 "
                "bytes at a time: make the row a multiple of 4 bytes",
            )
        row_stride = gmem_row_stride_bytes(g.gmem_type)
        # rule: H2
        if row_stride is not None and row_stride % 4:
            raise Error(
                "CP_ASYNC requires at least 4 bytes per transfer",
                note=f"the GMEM rows are {row_stride} bytes apart, so a row can start at an "
                "address no cp.async copy may read: pad the rows to a multiple of 4 bytes "
                f"({padded_stride(g.gmem_type.get_shape()[-1], g.element_type, 4)} elements)",
            )
        inner = constant_int(g.gmem_indices[-1]) if g.gmem_indices else None
        # rule: H2
        if inner is not None and (inner * bits // 8) % 4:
            raise Error(
                "CP_ASYNC requires at least 4 bytes per transfer",
                note=f"the innermost coordinate {inner} starts {inner * bits // 8} bytes into a "
                "row, not at a 4-byte boundary that a cp.async copy may read from: start at a "
                f"multiple of {max(1, 32 // bits)} elements",
            )
        # rule: H8
        if any(d < 0 for d in g.gmem_type.get_shape()) or not static_strides(g.gmem_type):
            raise Error(
                f"the cp.async implementation needs a GMEM ref of static shape and strides, got "
                f"{g.gmem_type}",
                note="every thread computes its chunks' addresses and bounds from the shape: give "
                "every dimension a size, or use impl tma (sm_90+), whose tensor map takes the "
                "shape at launch",
            )
        chunk = cp_async_chunk_bytes(g)
        # rule: H2
        if chunk is None:
            raise Error(
                "CP_ASYNC requires at least 4 bytes per transfer",
                note=f"a GMEM stride of {g.gmem_type} is not a multiple of 4 bytes, so a row can "
                "start at an address no cp.async copy may read: pad the rows to a multiple of 4 "
                "bytes",
            )
        # rule: H6
        if self.cache is not None and self.cache.data == CacheMode.CG and chunk != 16:
            why = (
                f"the innermost box row is {row_bytes} bytes"
                if row_bytes % 16
                else "a GMEM row stride or the innermost coordinate is not a multiple of 16 "
                "bytes"
            )
            raise Error(
                "CG cache modifier is only support for 16 bytes copy.",
                note=f"this copy moves {chunk}-byte chunks ({why}); use cache ca",
            )

    def _verify_constant_coordinates(
        self, g: CopyGeometry, gmem_type: MemRefType, impl: Implementation | None
    ) -> None:
        coords = [constant_int(i) for i in g.gmem_indices]
        bits = bitwidth(g.element_type) or 8
        box = (1,) * (gmem_type.get_num_dims() - len(g.box_shape)) + g.box_shape
        if impl == Implementation.TMA:
            inner = coords[-1] if coords else None
            # rule: TR12
            if inner is not None and (inner * bits // 8) % 16:
                raise Error(
                    f"the innermost TMA coordinate must be a multiple of 16 bytes, got {inner} "
                    f"({inner * bits // 8} bytes)",
                    note="any other innermost coordinate is an illegal instruction on the GPU: "
                    f"start boxes at multiples of {max(1, 128 // bits)} elements",
                )
            for i, c in enumerate(coords):
                # rule: TR13
                if not g.is_load and c is not None and c < 0:
                    raise Error(
                        f"TMA store coordinates must be >= 0, got {c} at index {i}",
                        note="a negative store coordinate is an illegal instruction on the GPU "
                        "(loads may start out of bounds, stores may not): start at 0 or more",
                    )
        if self.oob_mode != OOBMode.PROMISE_IN_BOUNDS:
            return
        for i, (c, size, n) in enumerate(zip(coords, box, gmem_type.get_shape(), strict=True)):
            # rule: F3
            if c is not None and n >= 0 and not (0 <= c and c + size <= n):
                raise Error(
                    f"the copy window [{c}, {c + size}) along dim {i} is out of bounds of the "
                    f"GMEM ref (size {n}), but oob is promise_in_bounds",
                    note="use oob zeros to fill the out-of-bounds part",
                )


def _enum(attr_type: type, enum_type: type[StrEnum], value: object) -> Attribute | None:
    if value is None:
        return None
    return attr_type(enum_type(value))


# ===----------------------------------------------------------------------=== #
# copy.prefetch
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """
    Prefetches a box of a GMEM array into L2 (TMA `cp.async.bulk.prefetch.tensor`).

    ```mlir
    copy.prefetch %x[%i, %j] {box = array<i64: 64, 64>} : memref<4096x4096xf32>
    ```
    """

    name = "copy.prefetch"

    src = operand_def(MemRefType)
    indices = var_operand_def(IndexType)

    box = prop_def(DenseArrayBase.constr(i64))

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$src `[` $indices `]` attr-dict `:` type($src)"

    def __init__(
        self,
        src: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
        box: Sequence[int],
    ):
        super().__init__(
            operands=[src, indices],
            properties={"box": DenseArrayBase.from_list(i64, box)},
        )

    def geometry(self) -> BoxGeometry:
        """The prefetched box and its tensor map (unswizzled, out-of-bounds parts zeros),
        decoded once (for the verifier and the lowering)."""
        assert isinstance(src_type := self.src.type, MemRefType)
        return BoxGeometry(
            gmem=self.src,
            gmem_type=src_type,
            gmem_indices=tuple(self.indices),
            box_shape=tuple(int(b) for b in self.box.get_values()),
            swizzle_bytes=layout.UNSWIZZLED,
            oob=OOBMode.ZEROS,
            reduction=None,
        )

    def verify_(self) -> None:
        g = self.geometry()
        src_type, box = g.gmem_type, g.box_shape
        # rule: B2
        if memory_space(src_type) != GMEM:
            raise Error(
                f"copy.prefetch reads GMEM, got a ref in {memory_space(src_type)}",
                note="prefetch a GMEM ref (a memref with no memory space)",
            )
        target = enclosing_target(self)
        # rule: A1
        if target is not None and not target.has_tma:
            raise Error(
                f"copy.prefetch uses TMA, which needs sm_90 or newer, but the target is "
                f"{target.name}",
                note="drop copy.prefetch on this target, or target sm_90 or newer",
            )
        # rule: K1
        if len(self.indices) != src_type.get_num_dims():
            raise Error(
                f"expected {src_type.get_num_dims()} coordinates, but got {len(self.indices)}",
                note="index the GMEM ref with the box origin, one index per dimension",
            )
        rank = src_type.get_num_dims()
        # rule: C3
        if not 1 <= len(box) <= rank <= 5:
            raise Error(
                "Async copies only support striding up to 5 dimensions",
                note=f"the box {list(box)} needs 1 to 5 dims and at most the ref's rank {rank}"
                + (
                    f": reshape the array{merged_leading_dims_example(src_type)}"
                    if rank > 5
                    else ""
                ),
            )
        for size in box:
            # rule: C7
            if not 1 <= size <= 256:
                raise Error(
                    "Async copies only support copying <=256 elements along each dimension, "
                    f"got {size}",
                    note="prefetch 1 to 256 elements per dimension",
                )
        check_tma_dtype(src_type.element_type)
        bits = bitwidth(src_type.element_type) or 8
        # rule: C4
        if (box[-1] * bits) % 128:
            raise Error(
                "Async copies require the number of bits copied along the last dimension "
                f"to be divisible by 128, but got {box[-1] * bits}",
                note=f"make the innermost box dim a multiple of {max(1, 128 // bits)} elements "
                f"({src_type.element_type}): "
                f"{padded_stride(box[-1], src_type.element_type, 16)} rather than {box[-1]}",
            )
        check_kernel_argument(self, self.src)


def check_kernel_argument(op: Operation, gmem: SSAValue) -> None:
    kernel = enclosing_kernel(op)
    entry = None if kernel is None or not kernel.regions[0].blocks else kernel.regions[0].block
    # rule: B11
    if not (isinstance(gmem, BlockArgument) and gmem.block is entry):
        raise Error(
            f"Expected {value_name(gmem)} to be a GMEM kernel argument.",
            note="a TMA descriptor is encoded on the host before launch: make "
            f"{value_name(gmem)} an argument of the kernel and index it, instead of a view made "
            "in the kernel",
        )


# ===----------------------------------------------------------------------=== #
# Bulk and cp.async groups
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
class CommitGroupOp(IRDLOperation):
    """
    Closes the current group of async copies: `bulk` for TMA stores and reductions
    (`cp.async.bulk.commit_group`), `cp_async` for cp.async loads (`cp.async.commit_group`).

    ```mlir
    copy.commit_group bulk
    ```
    """

    name = "copy.commit_group"

    group = prop_def(GroupKindAttr)

    assembly_format = "$group attr-dict"

    def __init__(self, group: GroupKind | str):
        super().__init__(properties={"group": GroupKindAttr(GroupKind(group))})

    def verify_(self) -> None:
        verify_group_target(self, self.group.data)


@irdl_op_definition
class WaitGroupOp(IRDLOperation):
    """
    Waits until at most `pending` committed groups are still in flight. For bulk groups,
    `read_only` waits only until their SMEM sources may be overwritten
    (`cp.async.bulk.wait_group.read`).

    ```mlir
    copy.wait_group bulk 0 read_only
    ```
    """

    name = "copy.wait_group"

    group = prop_def(GroupKindAttr)
    pending = prop_def(IntegerAttr[I32])
    read_only = opt_prop_def(UnitAttr)

    assembly_format = "$group $pending (`read_only` $read_only^)? attr-dict"

    def __init__(self, group: GroupKind | str, pending: int = 0, read_only: bool = False):
        super().__init__(
            properties={
                "group": GroupKindAttr(GroupKind(group)),
                "pending": IntegerAttr(pending, i32),
                "read_only": UnitAttr() if read_only else None,
            }
        )

    @property
    def is_read_only(self) -> bool:
        return self.read_only is not None

    def verify_(self) -> None:
        group = self.group.data
        verify_group_target(self, group)
        pending = self.pending.value.data
        if not 0 <= pending <= 63:
            raise Error(
                f"pending must be in [0, 63], got {pending}",
                note="it counts committed groups still allowed in flight",
            )
        if self.is_read_only and group != GroupKind.BULK:
            raise Error(
                "read_only applies to bulk groups only",
                note="cp.async groups complete when their writes land; drop read_only",
            )
        target = enclosing_target(self)
        if group == GroupKind.CP_ASYNC and target is not None and target.has_tma:
            kernel = enclosing_kernel(self)
            uses_cp_async = kernel is not None and any(
                isinstance(op, AsyncCopyOp)
                and op.resolved_implementation() == Implementation.CP_ASYNC
                for op in kernel.walk()
            )
            # rule: A8
            if not uses_cp_async:
                raise Error(
                    "wait_gmem_to_smem is only supported on pre-Hopper GPUs, which use "
                    "cp.async for GMEM->SMEM copies.",
                    note=f"on {target.name} the kernel's loads use TMA and complete on their "
                    "barrier: wait with copy.barrier_wait, or give the loads impl cp_async",
                )


def verify_group_target(op: Operation, group: GroupKind) -> None:
    target = enclosing_target(op)
    # rule: A1
    if group == GroupKind.BULK and target is not None and not target.has_tma:
        raise Error(
            f"bulk groups (TMA stores and reductions) need sm_90 or newer, but the target is "
            f"{target.name}",
            note="use copy.commit_group cp_async / copy.wait_group cp_async for cp.async loads",
        )


# ===----------------------------------------------------------------------=== #
# Barriers
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
class BarrierInitOp(IRDLOperation):
    """
    Allocates a group of mbarriers in SMEM and initializes each to expect `arrivals`
    arrivals per phase (one thread initializes, then the block synchronizes).

    ```mlir
    %bars = copy.barrier_init arrivals 1 : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_init"

    arrivals = prop_def(IntegerAttr[I32])

    result = result_def(BarrierType)

    assembly_format = "`arrivals` $arrivals attr-dict `:` type($result)"

    def __init__(self, count: int, arrivals: int = 1):
        super().__init__(
            properties={"arrivals": IntegerAttr(arrivals, i32)},
            result_types=[BarrierType(count)],
        )

    def verify_(self) -> None:
        arrivals = self.arrivals.value.data
        # rule: I7
        if arrivals < 1:
            raise Error(
                f"count must be greater than or equal to 1, got {arrivals}",
                note="arrivals is the number of arrive operations that complete a phase: use 1 "
                "or more",
            )
        # rule: I8
        if arrivals >= MAX_ARRIVALS:
            raise Error(
                f"arrivals must be below 2**20, got {arrivals}",
                note=f"the mbarrier arrival count is a 20-bit field: use at most "
                f"{MAX_ARRIVALS - 1} arrivals",
            )
        self._verify_cluster_target()

    def _verify_cluster_target(self) -> None:
        """A kernel with a cluster initializes its barriers for the cluster (a cluster
        barrier after the init), which needs a target with clusters (A15)."""
        kernel = enclosing_kernel(self)
        target = enclosing_target(self)
        if kernel is None or target is None or target.has_clusters:
            return
        cluster = kernel_cluster_shape(kernel)
        # rule: A15
        if prod(cluster) > 1:
            raise Error(
                f"a cluster ({list(cluster)}) needs sm_90 or newer, but the target is "
                f"{target.name}",
                note="drop copy.cluster from the kernel, or target sm_90 or newer",
            )


@irdl_op_definition
class BarrierArriveOp(IRDLOperation):
    """
    Arrives on a barrier of the group (`mbarrier.arrive`), `count` times.

    ```mlir
    copy.barrier_arrive %bars[%i] : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_arrive"

    barrier = operand_def(BarrierType)
    index = opt_operand_def(IndexType)

    count = opt_prop_def(IntegerAttr[I32])
    scope = opt_prop_def(BarrierScopeAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$barrier (`[` $index^ `]`)? (`count` $count^)? (`scope` $scope^)? attr-dict "
        "`:` type($barrier)"
    )

    def __init__(
        self,
        barrier: SSAValue | Operation,
        index: SSAValue | Operation | None = None,
        *,
        count: int | None = None,
        scope: BarrierScope | str | None = None,
    ):
        super().__init__(
            operands=[barrier, index],
            properties={
                "count": None if count is None else IntegerAttr(count, i32),
                "scope": _enum(BarrierScopeAttr, BarrierScope, scope),
            },
        )

    def verify_(self) -> None:
        check_barrier_index(self.barrier, self.index)
        target = enclosing_target(self)
        count = 1 if self.count is None else self.count.value.data
        if count < 1:
            raise Error(f"count must be at least 1, got {count}", note="drop count to arrive once")
        # rule: A12
        if target is not None and not target.has_tma and count != 1:
            raise Error(
                "Only single-thread arrival is supported on pre-Hopper hardware",
                note=f"{target.name} has no mbarrier.arrive count: arrive {count} times, or "
                "target sm_90+",
            )
        # rule: I6
        if self.scope is not None and self.scope.data == BarrierScope.CLUSTER:
            require_target(
                self,
                target is not None and target.has_clusters,
                "mbarrier scope cluster",
                "a target with clusters (sm_90 or newer)",
            )


@irdl_op_definition
class BarrierArriveExpectTxOp(IRDLOperation):
    """
    Arrives on a barrier and raises its transaction count by `bytes`
    (`mbarrier.arrive.expect_tx`), for copies issued with `arrive = false`.

    ```mlir
    copy.barrier_arrive_expect_tx %bars[%i], 16384 : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_arrive_expect_tx"

    barrier = operand_def(BarrierType)
    index = opt_operand_def(IndexType)

    bytes = prop_def(IntegerAttr[I64])

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$barrier (`[` $index^ `]`)? `,` $bytes attr-dict `:` type($barrier)"

    def __init__(
        self,
        barrier: SSAValue | Operation,
        index: SSAValue | Operation | None = None,
        *,
        bytes: int,
    ):
        super().__init__(operands=[barrier, index], properties={"bytes": IntegerAttr(bytes, i64)})

    def verify_(self) -> None:
        check_barrier_index(self.barrier, self.index)
        target = enclosing_target(self)
        # rule: A11
        if target is not None and not target.has_tma:
            raise Error(
                "arrive_expect_tx is only supported on Hopper+ hardware",
                note=f"{target.name} has no transaction counts: use copy.barrier_arrive",
            )
        expected = self.bytes.value.data
        # rule: TR17
        if not 0 <= expected < MAX_TX_BYTES:
            raise Error(
                f"expect_tx must be in [0, 2**20), got {expected} bytes",
                note="the mbarrier tx-count has 20 bits (2**20 kills the kernel with "
                "CUDA_ERROR_LAUNCH_FAILED): split the transfer over several phases",
            )
        delivered = self._bytes_delivered()
        # rule: TR16, D10
        if delivered is not None and delivered != expected:
            raise Error(
                f"expect_tx of {expected} bytes does not match the {delivered} bytes the copies "
                "on this barrier deliver",
                note="a larger count hangs the waiters, a smaller one releases them before the "
                f"data has landed: expect {delivered}",
            )

    def _same_barrier(self, barrier: SSAValue, index: SSAValue | None) -> bool | None:
        """Whether (barrier, index) names this op's barrier; None when a dynamic index of
        the same group makes that unknowable. A missing index means barrier 0."""
        if barrier != self.barrier:
            return False
        here = 0 if self.index is None else constant_int(self.index)
        there = 0 if index is None else constant_int(index)
        return None if here is None or there is None else here == there

    def _bytes_delivered(self) -> int | None:
        """Bytes the copies of this barrier phase deliver: those between the previous and
        the next wait on the same barrier. None when that cannot be told from this block
        (no next wait here, a copy that arrives itself, or a use inside a nested region)."""
        if self.index is not None and constant_int(self.index) is None:
            return None
        total = 0
        for direction in ("prev_op", "next_op"):
            op = getattr(self, direction)
            while op is not None:
                if isinstance(op, BarrierWaitOp | AsyncCopyOp):
                    index = op.index if isinstance(op, BarrierWaitOp) else op.barrier_index
                    same = op.barrier is not None and self._same_barrier(op.barrier, index)
                    if same is None:
                        return None
                    if same and isinstance(op, BarrierWaitOp):
                        break
                    if same and isinstance(op, AsyncCopyOp):
                        if op.arrives:
                            return None
                        # A collective load credits each CTA's barrier with the whole box.
                        total += op.box_bytes
                elif op.regions and any(
                    operand == self.barrier for inner in op.walk() for operand in inner.operands
                ):
                    return None
                op = getattr(op, direction)
            if op is None and direction == "next_op":
                return None
        return total


@irdl_op_definition
class BarrierWaitOp(IRDLOperation):
    """
    Waits until the barrier's phase with the given parity has completed
    (`mbarrier.try_wait.parity` on sm_90+, a `test_wait` loop before).

    ```mlir
    copy.barrier_wait %bars[%i], %parity : !copy.barrier<2>
    ```
    """

    name = "copy.barrier_wait"

    barrier = operand_def(BarrierType)
    index = opt_operand_def(IndexType)
    parity = operand_def(I1)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = "$barrier (`[` $index^ `]`)? `,` $parity attr-dict `:` type($barrier)"

    def __init__(
        self,
        barrier: SSAValue | Operation,
        index: SSAValue | Operation | None,
        parity: SSAValue | Operation,
    ):
        super().__init__(operands=[barrier, index, parity])

    def verify_(self) -> None:
        check_barrier_index(self.barrier, self.index)


@irdl_op_definition
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
        if target is not None and not target.has_tma:
            raise Error(
                f"fence.proxy.async needs sm_90 or newer, but the target is {target.name}",
                note="drop copy.fence_async_shared: cp.async writes SMEM through the generic "
                "proxy, no fence is needed there",
            )


# ===----------------------------------------------------------------------=== #
# Shared memory allocation
# ===----------------------------------------------------------------------=== #


@irdl_op_definition
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
        if bitwidth(t.element_type) is None:
            raise Error(
                f"cannot allocate SMEM for elements of type {t.element_type}",
                note="use an integer or float element type",
            )
        swizzle, align = swizzle_of(t), self.byte_alignment
        if align <= 0 or align & (align - 1):
            raise Error(
                f"alignment must be a power of 2, got {align}",
                note="drop alignment to get the one TMA needs",
            )
        # rule: TR10
        if align < 128:
            raise Error(
                f"TMA needs SMEM buffers aligned to 128 bytes, got alignment {align}",
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
        self._verify_kernel_smem()

    def _verify_kernel_smem(self) -> None:
        """The first allocation of a block checks the block's total (TR6)."""
        block = self.parent_block()
        target = enclosing_target(self)
        if block is None or target is None:
            return
        op = self.prev_op
        while op is not None:
            if isinstance(op, AllocSmemOp | BarrierInitOp):
                return
            op = op.prev_op
        total = smem_footprint(
            (op.size_bytes, op.byte_alignment)
            if isinstance(op, AllocSmemOp)
            else (BARRIER_BYTES * op.result.type.count.data, BARRIER_BYTES)  # type: ignore[union-attr]
            for op in block.ops
            if isinstance(op, AllocSmemOp | BarrierInitOp)
        )
        launch = block_smem_bytes(total)
        # rule: TR6
        if launch > target.max_smem_bytes:
            raise Error(
                f"the kernel's SMEM buffers and barriers take {total} bytes ({launch} with the "
                f"{SMEM_ARENA_ALIGNMENT}-byte alignment pad of the arena), more than the "
                f"{target.max_smem_bytes} bytes a block can use on {target.name}",
                note="use fewer pipeline stages or smaller boxes",
            )


# ===----------------------------------------------------------------------=== #
# Tensor memory (tcgen05)
# ===----------------------------------------------------------------------=== #

TMEM_COLUMNS = 512
"""32-bit columns of tensor memory per SM (128 lanes each)."""

TMEM_REGS_PER_NUM = {
    TmemShape.S32X32B: 1,
    TmemShape.S16X64B: 1,
    TmemShape.S16X128B: 2,
    TmemShape.S16X256B: 4,
    TmemShape.S16X32BX2: 1,
}
"""32-bit registers per thread for `.num = x1` of each tcgen05.ld/st shape."""

TMEM_COPY_BYTES = {
    TmemCopyShape.S128X256B: 128 * 32,
    TmemCopyShape.S4X256B: 4 * 32,
    TmemCopyShape.S128X128B: 128 * 16,
    TmemCopyShape.S64X128B: 64 * 16,
    TmemCopyShape.S32X128B: 32 * 16,
}
"""SMEM bytes one tcgen05.cp of each shape reads."""


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
    if bits not in (4, 8, 16, 32):
        raise Error(
            f"TMEM holds 32-bit cells, which cannot pack elements of type {t.element_type}",
            note="use an element type of 32, 16, 8 or 4 bits (i1 values as i8 or i32)",
        )


def resized_rows_example(t: MemRefType, want_bytes: int) -> str:
    """`, e.g. to memref<...>`: 2-D SMEM ref `t` with as many rows as make `want_bytes`."""
    shape = t.get_shape()
    row = smem_bytes(shape[1:], t.element_type, 16) if len(shape) == 2 else 0
    if not row or want_bytes % row:
        return ""
    resized = MemRefType(t.element_type, [want_bytes // row, shape[1]], memory_space=t.memory_space)
    return f", e.g. to {resized}"


def tmem_columns(t: MemRefType) -> int:
    """The 32-bit TMEM columns a ref spans: its elements per lane, packed 32 / bits to a
    column, rounded up (65 bf16 elements span 33 columns)."""
    bits = bitwidth(t.element_type) or 32
    return -(-t.get_shape()[1] * bits // 32)


@irdl_op_definition
class TmemAllocOp(IRDLOperation):
    """
    Allocates TMEM columns for the CTA (`tcgen05.alloc`, `tcgen05.relinquish_alloc_permit`).

    ```mlir
    %acc = copy.tmem_alloc : memref<128x128xf32, #copy.tmem>
    ```
    """

    name = "copy.tmem_alloc"

    result = result_def(MemRefType)

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: MemRefType):
        super().__init__(result_types=[result_type])

    def verify_(self) -> None:
        assert isinstance(t := self.result.type, MemRefType)
        # rule: J10
        if memory_space(t) != TMEM:
            raise Error(
                f"copy.tmem_alloc allocates TMEM, got a ref in {memory_space(t)}",
                note="give the result the memory space #copy.tmem",
            )
        check_tcgen05(self)
        check_tmem_ref(t)
        ncols = tmem_columns(t)
        # rule: J10
        if ncols < 32 or ncols > 512 or ncols & (ncols - 1):
            bits = bitwidth(t.element_type) or 32
            raise Error(
                f"ncols must be a power of 2 and within [32, 512], got: {ncols}",
                note=f"{t.get_shape()[1]} elements of {t.element_type} per lane span {ncols} "
                "columns of 32 bits: allocate 32, 64, 128, 256 or 512 columns "
                f"({', '.join(str(c * 32 // bits) for c in (32, 64, 128, 256, 512))} elements)",
            )
        self._verify_kernel_columns(ncols)

    def _verify_kernel_columns(self, ncols: int) -> None:
        """The kernel's live allocations fit in TMEM's 512 columns (J19): those before this
        one that no copy.tmem_dealloc has freed yet."""
        kernel = enclosing_kernel(self)
        if kernel is None:
            return
        live: dict[SSAValue, int] = {}
        for op in kernel.walk():
            if op is self:
                break
            if isinstance(op, TmemAllocOp) and isinstance(t := op.result.type, MemRefType):
                live[op.result] = tmem_columns(t)
            elif isinstance(op, TmemDeallocOp):
                live.pop(op.tmem, None)
        total = sum(live.values()) + ncols
        # rule: J19
        if total > TMEM_COLUMNS:
            raise Error(
                "The number of allocated columns must be less than or equal to 512 but got: "
                f"{total}",
                note=f"{total - ncols} columns are still allocated here and this allocation "
                f"adds {ncols}: free earlier TMEM with copy.tmem_dealloc first, or allocate "
                "fewer columns",
            )


@irdl_op_definition
class TmemDeallocOp(IRDLOperation):
    """
    Frees TMEM allocated by `copy.tmem_alloc` (`tcgen05.dealloc`).

    ```mlir
    copy.tmem_dealloc %acc : memref<128x128xf32, #copy.tmem>
    ```
    """

    name = "copy.tmem_dealloc"

    tmem = operand_def(MemRefType)

    assembly_format = "$tmem attr-dict `:` type($tmem)"

    def __init__(self, tmem: SSAValue | Operation):
        super().__init__(operands=[tmem])

    def verify_(self) -> None:
        assert isinstance(t := self.tmem.type, MemRefType)
        # rule: J10
        if memory_space(t) != TMEM or not isinstance(self.tmem.owner, TmemAllocOp):
            raise Error(
                "copy.tmem_dealloc frees the result of a copy.tmem_alloc",
                note="pass the TMEM ref that copy.tmem_alloc returned",
            )
        check_tcgen05(self)


def check_tmem_access(op: TmemLoadOp | TmemStoreOp, vector: VectorType, verb: str) -> None:
    """The checks tcgen05.ld and tcgen05.st share: shape, num, registers, offset."""
    assert isinstance(t := op.tmem.type, MemRefType)
    check_tcgen05(op)
    check_tmem_ref(t)
    shape, num = op.shape.data, op.num.value.data
    # rule: J4
    if num < 1 or num > 128 or num & (num - 1):
        raise Error(
            f"num must be a power of 2 and <= 128, got: {num}",
            note="num is the repeat count .x1 ... .x128: use a power of 2, e.g. num "
            f"{min(128, 1 << max(0, num - 1).bit_length())}",
        )
    regs = num * TMEM_REGS_PER_NUM[shape]
    # rule: J4
    if regs > 128:
        raise Error(
            f"TMEM translation too big : shape={shape} and num={num} involve {regs} registers "
            "per-thread, which exceeds the limit of 128",
            note=f"use num <= {128 // TMEM_REGS_PER_NUM[shape]} for shape {shape} (and a "
            f"vector of {128 // TMEM_REGS_PER_NUM[shape] * TMEM_REGS_PER_NUM[shape]} elements)",
        )
    # rule: J5
    if shape == TmemShape.S16X32BX2 and op.offset is None:
        raise Error(
            "shape 16x32bx2 requires offset argument",
            note="give the second half's column offset: {offset = 16}",
        )
    # rule: J17
    if shape != TmemShape.S16X32BX2 and op.offset is not None:
        raise Error(
            f"offset applies to shape 16x32bx2 only, got shape {shape}",
            note="drop offset",
        )
    if op.offset is not None:
        check_half_offset(op, op.offset.value.data, num)
    # rule: J5
    if vector.get_num_dims() != 1 or vector.get_shape()[0] != regs:
        raise Error(
            f"invalid {verb} type length {list(vector.get_shape())} for shape {shape} in "
            f"{'tcgen05.ld' if verb == 'result' else 'tcgen05.st'} Op",
            note=f"shape {shape} with num = {num} moves {regs} 32-bit registers per thread: "
            f"use vector<{regs}x{vector.element_type}>",
        )
    # rule: J5
    if bitwidth(vector.element_type) != 32:
        raise Error(
            f"tcgen05 moves 32-bit registers, got elements of type {vector.element_type}",
            note="use f32, i32 or another 32-bit element type",
        )


def check_half_offset(op: TmemLoadOp | TmemStoreOp, offset: int, num: int) -> None:
    """The 16x32bx2 immediate (immHalfSplitoff): the column of the second half (lanes 16-31)
    relative to the first. Each half spans `num` columns, so the second one must start at
    0 or after, and end within the ref (from a constant start column, within the ref from
    there); LLVM takes it as an unsigned 32-bit immediate."""
    assert isinstance(t := op.tmem.type, MemRefType)
    columns = tmem_columns(t)
    start = constant_int(op.column) or 0
    # rule: J18
    if not 0 <= offset <= columns - start - num:
        last = columns - start - num
        raise Error(
            f"the 16x32bx2 half offset must be in [0, {last}] for {num} columns per half from "
            f"column {start} of a {columns}-column TMEM ref, got {offset}",
            note=f"the second half reads columns [start + offset, start + offset + {num}): use "
            f"an offset of 0 to {last}"
            if last >= 0
            else f"the ref is too narrow for {num} columns per half from column {start}: "
            "use a smaller num or a wider ref",
        )


@irdl_op_definition
class TmemLoadOp(IRDLOperation):
    """
    Loads TMEM into registers (`tcgen05.ld.sync.aligned`), starting at a column; each warp
    reads its quarter of the lanes. With `reduce`, also returns the min/max over the loaded
    values (`tcgen05.ld.red`). Wait with `copy.tmem_wait load` before using the values.

    ```mlir
    %v = copy.tmem_load %acc[%col] shape shape_32x32b num 4
        : memref<128x128xf32, #copy.tmem> -> vector<4xf32>
    ```
    """

    name = "copy.tmem_load"

    tmem = operand_def(MemRefType)
    column = operand_def(IndexType)

    shape = prop_def(TmemShapeAttr)
    num = prop_def(IntegerAttr[I32])
    offset = opt_prop_def(IntegerAttr[I64])
    reduce = opt_prop_def(TmemReduceAttr)
    abs = opt_prop_def(UnitAttr)
    nan = opt_prop_def(UnitAttr)

    result = result_def(VectorType)
    red = opt_result_def()

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$tmem `[` $column `]` `shape` $shape `num` $num (`reduce` $reduce^)? (`abs` $abs^)? "
        "(`nan` $nan^)? attr-dict "
        "`:` type($tmem) `->` type($result) (`,` type($red)^)?"
    )

    def __init__(
        self,
        tmem: SSAValue | Operation,
        column: SSAValue | Operation,
        *,
        shape: TmemShape | str,
        num: int,
        result_type: VectorType,
        offset: int | None = None,
        reduce: TmemReduce | str | None = None,
        abs: bool = False,
        nan: bool = False,
    ):
        assert isinstance(t := SSAValue.get(tmem).type, MemRefType)
        super().__init__(
            operands=[tmem, column],
            properties={
                "shape": TmemShapeAttr(TmemShape(shape)),
                "num": IntegerAttr(num, i32),
                "offset": None if offset is None else IntegerAttr(offset, i64),
                "reduce": _enum(TmemReduceAttr, TmemReduce, reduce),
                "abs": UnitAttr() if abs else None,
                "nan": UnitAttr() if nan else None,
            },
            result_types=[result_type, [] if reduce is None else [t.element_type]],
        )

    def verify_(self) -> None:
        assert isinstance(t := self.tmem.type, MemRefType)
        assert isinstance(vector := self.result.type, VectorType)
        # rule: J1
        if memory_space(t) != TMEM:
            raise Error(
                "Async load only supports TMEM refs",
                note=f"got a ref in {memory_space(t)}; load SMEM or GMEM from threads with "
                "memref.load, and copy GMEM to SMEM with copy.async_copy",
            )
        self._verify_reduce(t.element_type)
        check_tmem_access(self, vector, "result")
        # rule: J9
        if vector.element_type != t.element_type:
            raise Error(
                "The `source` and `result` must have the same element type.",
                note=f"the TMEM ref holds {t.element_type}, the result has {vector.element_type}",
            )

    def _verify_reduce(self, elt: Attribute) -> None:
        has_abs = self.abs is not None
        has_nan = self.nan is not None
        if self.reduce is None:
            # rule: J15
            if self.red is not None:
                raise Error(
                    "'red' result is present but redOp is not set",
                    note="add reduce min|max, or drop the second result",
                )
            # rule: J15
            if has_abs or has_nan:
                raise Error(
                    f"'{'abs' if has_abs else 'NaN'}' requires 'redOp' to be set",
                    note="abs and nan modify a fused reduction: drop them, or add reduce min|max "
                "with its result (%v, %r = copy.tmem_load ...)",
                )
            return
        # rule: J15
        if self.red is None:
            raise Error(
                "redOp is set but 'red' result is not present",
                note="bind the reduced value: %v, %r = copy.tmem_load ...",
            )
        # rule: J2
        if not (
            isinstance(elt, Float32Type) or (isinstance(elt, IntegerType) and elt.width.data == 32)
        ):
            raise Error(
                f"Unsupported dtype for reduction: {elt}. Only float32,  int32 and uint32 are "
                "supported.",
                note="tcgen05.ld.red reduces f32, s32 and u32 values",
            )
        # rule: J15
        if (has_abs or has_nan) and not isinstance(elt, Float32Type):
            raise Error(
                f"'{'abs' if has_abs else 'NaN'}' requires floating-point element type (f32)",
                note="drop abs/nan for integer reductions",
            )
        target = enclosing_target(self)
        # rule: A14
        if target is not None and not target.has_tmem_load_reduce:
            raise Error(
                f"the fused load-reduce (tcgen05.ld.red) needs {TMEM_LOAD_REDUCE_TARGETS}, "
                f"but the target is {target.name}",
                note="reduce the loaded registers with arith ops, or target sm_103a",
            )
        # rule: J3
        if self.shape.data not in (TmemShape.S32X32B, TmemShape.S16X32BX2):
            raise Error(
                "Fused load-reduce is not supported for this layout",
                note="tcgen05.ld.red exists for shapes 32x32b and 16x32bx2, got "
                f"{self.shape.data}: use shape shape_32x32b or shape shape_16x32bx2",
            )
        # rule: J22
        if self.num.value.data == 1:
            raise Error(
                "Fused load-reduce needs num >= 2, got num 1",
                note="ptxas rejects .x1 for tcgen05.ld.red: load at least 2 registers per "
                "thread (num 2 and a vector<2x...> result), or load without reduce",
            )
        # rule: J15
        if self.red.type != elt:
            raise Error(
                f"the 'red' result must have the element type {elt}, got {self.red.type}",
                note="the reduction yields one value per thread",
            )


@irdl_op_definition
class TmemStoreOp(IRDLOperation):
    """
    Stores registers into TMEM (`tcgen05.st.sync.aligned`), starting at a column; each
    warp writes its quarter of the lanes. Wait with `copy.tmem_wait store` before the
    tensor core reads them.

    ```mlir
    copy.tmem_store %v, %acc[%col] shape shape_32x32b num 4
        : vector<4xf32>, memref<128x128xf32, #copy.tmem>
    ```
    """

    name = "copy.tmem_store"

    value = operand_def(VectorType)
    tmem = operand_def(MemRefType)
    column = operand_def(IndexType)

    shape = prop_def(TmemShapeAttr)
    num = prop_def(IntegerAttr[I32])
    offset = opt_prop_def(IntegerAttr[I64])

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$value `,` $tmem `[` $column `]` `shape` $shape `num` $num attr-dict "
        "`:` type($value) `,` type($tmem)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        tmem: SSAValue | Operation,
        column: SSAValue | Operation,
        *,
        shape: TmemShape | str,
        num: int,
        offset: int | None = None,
    ):
        super().__init__(
            operands=[value, tmem, column],
            properties={
                "shape": TmemShapeAttr(TmemShape(shape)),
                "num": IntegerAttr(num, i32),
                "offset": None if offset is None else IntegerAttr(offset, i64),
            },
        )

    def verify_(self) -> None:
        assert isinstance(t := self.tmem.type, MemRefType)
        assert isinstance(vector := self.value.type, VectorType)
        # rule: J1
        if memory_space(t) != TMEM:
            raise Error(
                "Async store only supports TMEM refs",
                note=f"got a ref in {memory_space(t)}; store to SMEM or GMEM from threads with "
                "memref.store, one element each",
            )
        check_tmem_access(self, vector, "operand")
        # rule: J8
        if vector.element_type != t.element_type:
            raise Error(
                f"Stored array has dtype {vector.element_type}, but TMEM has dtype "
                f"{t.element_type}",
                note="bitcast the registers to the TMEM element type first",
            )


@irdl_op_definition
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


@irdl_op_definition
class SmemToTmemOp(IRDLOperation):
    """
    Copies SMEM into TMEM asynchronously (`tcgen05.cp`), starting at a column; issued by the
    elected thread. The source's rows are 16 bytes, or exactly one swizzle span.

    ```mlir
    copy.smem_to_tmem %tile to %acc[%col] shape shape_128x256b
        : memref<128x8xf32, #copy.smem<swizzle = 32>>, memref<128x128xf32, #copy.tmem>
    ```
    """

    name = "copy.smem_to_tmem"

    src = operand_def(MemRefType)
    tmem = operand_def(MemRefType)
    column = operand_def(IndexType)

    shape = prop_def(TmemCopyShapeAttr)
    multicast = opt_prop_def(TmemCopyMulticastAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$src `to` $tmem `[` $column `]` `shape` $shape (`multicast` $multicast^)? attr-dict "
        "`:` type($src) `,` type($tmem)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        tmem: SSAValue | Operation,
        column: SSAValue | Operation,
        *,
        shape: TmemCopyShape | str,
        multicast: TmemCopyMulticast | str | None = None,
    ):
        super().__init__(
            operands=[src, tmem, column],
            properties={
                "shape": TmemCopyShapeAttr(TmemCopyShape(shape)),
                "multicast": _enum(TmemCopyMulticastAttr, TmemCopyMulticast, multicast),
            },
        )

    def verify_(self) -> None:
        assert isinstance(src_type := self.src.type, MemRefType)
        assert isinstance(tmem_type := self.tmem.type, MemRefType)
        # rule: J11
        if memory_space(src_type) != SMEM:
            raise Error(
                "async_copy_smem_to_tmem source must be an SMEM ref",
                note=f"got a ref in {memory_space(src_type)}; copy GMEM to SMEM first "
                "(copy.async_copy)",
            )
        # rule: J11
        if memory_space(tmem_type) != TMEM:
            raise Error(
                "async_copy_smem_to_tmem target must be a TMEM ref",
                note=f"got a ref in {memory_space(tmem_type)}; allocate it with copy.tmem_alloc",
            )
        check_tcgen05(self)
        check_tmem_ref(tmem_type)
        # rule: J11
        if src_type.element_type != tmem_type.element_type:
            raise Error(
                f"Expected SMEM element type ({src_type.element_type}) to equal the TMEM "
                f"element type ({tmem_type.element_type})",
                note="tcgen05.cp copies bits: give both refs the same element type, "
                f"{tmem_type.element_type}",
            )
        check_contiguous_smem(src_type)
        shape, multicast = self.shape.data, self.multicast
        cast = None if multicast is None else multicast.data
        # rule: J14
        if shape == TmemCopyShape.S64X128B and cast not in (
            TmemCopyMulticast.WARPX2_01_23,
            TmemCopyMulticast.WARPX2_02_13,
        ):
            raise Error(
                "Shape 64x128b requires multicast warpx2_01_23 or warpx2_02_13 for tcgen05.cp Op",
                note="add multicast warpx2_01_23 or multicast warpx2_02_13",
            )
        # rule: J14
        if shape == TmemCopyShape.S32X128B and cast != TmemCopyMulticast.WARPX4:
            raise Error(
                "Shape 32x128b requires multicast warpx4 for tcgen05.cp Op",
                note="add multicast warpx4",
            )
        # rule: J14
        if shape not in (TmemCopyShape.S64X128B, TmemCopyShape.S32X128B) and cast is not None:
            raise Error(
                "Invalid multicast type for tcgen05.cp Op",
                note=f"shape {shape} takes no multicast: drop it",
            )
        # rule: J12
        if tmem_type.get_shape()[0] != 128:
            raise Error(
                f"TMEM reference must have 128 rows, but got {tmem_type.get_shape()[0]}",
                note="tcgen05.cp writes all 128 lanes",
            )
        have = smem_bytes(src_type.get_shape(), src_type.element_type, 16)
        # rule: J12
        if have != TMEM_COPY_BYTES[shape]:
            raise Error(
                f"SMEM has shape {list(src_type.get_shape())} ({have} bytes), but expected "
                f"{TMEM_COPY_BYTES[shape]} bytes for TMEM copy shape {shape}",
                note="one tcgen05.cp moves exactly one shape's worth of SMEM: resize the source"
                + resized_rows_example(src_type, TMEM_COPY_BYTES[shape]),
            )
        swizzle = swizzle_of(src_type)
        row_bytes = src_type.get_shape()[-1] * (bitwidth(src_type.element_type) or 8) // 8
        # rule: J12
        if not (row_bytes == 16 and swizzle == 16) and row_bytes != swizzle:
            raise Error(
                f"Tiling does not fit swizzle: SMEM rows of {row_bytes} bytes with swizzle "
                f"{swizzle}",
                note="tcgen05.cp reads 8-row core matrices: give the source rows of 16 bytes "
                "unswizzled, or rows exactly one swizzle span wide "
                f"(#copy.smem<swizzle = {row_bytes}>)",
            )


Copy = Dialect(
    "copy",
    [
        AsyncCopyOp,
        PrefetchOp,
        CommitGroupOp,
        WaitGroupOp,
        BarrierInitOp,
        BarrierArriveOp,
        BarrierArriveExpectTxOp,
        BarrierWaitOp,
        FenceAsyncSharedOp,
        AllocSmemOp,
        TmemAllocOp,
        TmemDeallocOp,
        TmemLoadOp,
        TmemStoreOp,
        TmemWaitOp,
        SmemToTmemOp,
    ],
    [
        TargetAttr,
        SmemSpaceAttr,
        TmemSpaceAttr,
        LeaderTrackedAttr,
        BarrierType,
        ImplementationAttr,
        ReductionKindAttr,
        OOBModeAttr,
        CacheModeAttr,
        GroupKindAttr,
        BarrierScopeAttr,
        TmemShapeAttr,
        TmemReduceAttr,
        TmemWaitKindAttr,
        TmemCopyShapeAttr,
        TmemCopyMulticastAttr,
    ],
)
