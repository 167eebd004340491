"""What the verifiers of several op families share: the enclosing target and kernel, the
kernel's cluster shape, integer constants, the error of a target that lacks a feature, and
the checks of a barrier operand and a contiguous SMEM ref."""

from __future__ import annotations

from collections.abc import Sequence
from math import gcd, prod

from xdsl.dialects import arith, func, gpu, scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
)
from xdsl.ir import (
    Block,
    Operation,
    SSAValue,
)

from copy_dialect import layout
from copy_dialect.attributes import BarrierType, TargetAttr
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.memory import SMEM, bitwidth, element_strides, memory_space, swizzle_of
from copy_dialect.verification import per_run
from facts.target import Feature, Target, feature_message


def enclosing_target(op: Operation) -> Target | None:
    """The target named by the nearest `copy.target` attribute around `op`, if any (once per
    enclosing op in a verification run)."""
    attr = op.attributes.get("copy.target")
    if attr is not None:
        if not isinstance(attr, TargetAttr):
            raise Error(
                f"expected the 'copy.target' attribute of '{op.name}' to be a "
                f"#copy.target, got {attr}",
                note='write it as copy.target = #copy.target<"sm_90a">',
            )
        return attr.target
    parent = op.parent_op()
    return None if parent is None else per_run("target", parent, lambda: enclosing_target(parent))


def module_target(module: Operation, override: str | None = None) -> str | None:
    """The name of the target a module is compiled for: `override` (copy-opt's --target, a
    pass option), else the module's `copy.target`; None when neither names one. Resolved
    here once and passed on to the passes, the backend and the ABI."""
    if override:
        return override
    attr = module.attributes.get("copy.target")
    return attr.arch.data if isinstance(attr, TargetAttr) else None


def enclosing_kernel(op: Operation) -> Operation | None:
    """The function around `op` (once per enclosing op in a verification run)."""
    parent = op.parent_op()
    if parent is None or isinstance(parent, func.FuncOp | gpu.FuncOp):
        return parent
    return per_run("kernel", parent, lambda: enclosing_kernel(parent))


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


def cluster_shape(op: Operation) -> tuple[int, int, int]:
    """The cluster shape of the kernel around `op`, (1, 1, 1) when it has none."""
    kernel = enclosing_kernel(op)
    return (1, 1, 1) if kernel is None else kernel_cluster_shape(kernel)


def constant_int(value: SSAValue) -> int | None:
    """The value of an integer constant: an `arith.constant`, or one cast to `index`
    (`arith.index_cast` of an i32 constant, say); None for anything else. Once per value in
    a verification run."""
    return per_run("constant", value, lambda: _constant_int(value))


def _constant_int(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    if isinstance(owner, arith.IndexCastOp):
        return constant_int(owner.input)
    return None


def known_multiple(value: SSAValue) -> int:
    """The largest integer that `value` is known to be a multiple of, from the arith ops
    that compute it: a constant is a multiple of itself (0 of anything: 0 stands for
    "any"), a product of the product of its factors', a sum, difference or unsigned
    remainder of the gcd of its terms', a left shift by a constant of its operand's times
    the power of two, an scf.for induction variable of the gcd of its lower bound and step;
    anything else of 1. Once per value in a verification run. The verifiers, the cp.async
    chunk pick, copy-legalize's thread stores and the wide accesses' alignment all ask
    here."""
    return per_run("multiple", value, lambda: _known_multiple(value))


def _known_multiple(value: SSAValue) -> int:
    c = constant_int(value)
    if c is not None:
        return abs(c)
    owner = value.owner
    if isinstance(owner, arith.MuliOp):
        return known_multiple(owner.lhs) * known_multiple(owner.rhs)
    if isinstance(owner, arith.AddiOp | arith.SubiOp | arith.RemUIOp):
        return gcd(known_multiple(owner.lhs), known_multiple(owner.rhs))
    if isinstance(owner, arith.ShLIOp) and (shift := constant_int(owner.rhs)) is not None:
        return known_multiple(owner.lhs) << shift
    if isinstance(owner, arith.IndexCastOp):
        return known_multiple(owner.input)
    if isinstance(owner, Block) and isinstance(loop := owner.parent_op(), scf.ForOp):
        if value is owner.args[0]:
            return gcd(known_multiple(loop.lb), known_multiple(loop.step))
    return 1


def offset_multiple(t: MemRefType, indices: Sequence[SSAValue]) -> int:
    """The largest number of bytes that the offset of element `indices` of a ref of type `t`
    is known to be a multiple of (0: any), from each index's `known_multiple` times its dim's
    byte stride: in swizzled SMEM the layout's strides before the swizzle (rows padded to the
    span, `copy_dialect.layout`), elsewhere the ref's element strides (1 where a stride is
    dynamic). The swizzle moves whole 16-byte units, so an offset that is a multiple of 16
    here is one of the swizzled layout too. The matrix copies' row rule and the wide thread
    accesses (their alignment, and whether they stay in one unit) ask here."""
    shape = t.get_shape()
    bits = bitwidth(t.element_type) or 8
    elem = max(bits // 8, 1)
    swizzle = swizzle_of(t)
    if memory_space(t) == SMEM and swizzle != layout.UNSWIZZLED:
        strides: list[int | None] = [*layout.dim_strides(shape, bits, swizzle), elem]
    else:
        element = element_strides(t)
        if element is None:
            return 1
        strides = [None if s is None else s * elem for s in element]
    multiple = 0
    for index, stride in zip(indices, strides, strict=True):
        if stride is None:
            return 1
        multiple = gcd(multiple, known_multiple(index) * stride)
    return multiple


def unit_problem(t: MemRefType, indices: Sequence[SSAValue], size: int) -> str | None:
    """Why an access of `size` bytes at `indices` of swizzled SMEM may not stay inside one
    16-byte unit (the swizzle keeps a unit's bytes together and moves units apart), or None
    where it provably does: `size` divides 16 and the offset is a known multiple of it. Under
    the flip swizzle (`layout.kept_bytes`) the unit is 8 bytes."""
    unit = layout.kept_bytes(swizzle_of(t))
    if size > unit or unit % size:
        return f"{size} bytes do not fit one {unit}-byte unit"
    multiple = offset_multiple(t, indices)
    if multiple % size:
        return f"its offset is known to be a multiple of {multiple} bytes only, not of {size}"
    return None


def value_name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "the GMEM operand"


def feature_error(
    op: Operation, feature: Feature, target: Target, note: str, uses: str = ""
) -> Error:
    """The error of `op` on a target that lacks `feature`: the one message
    (facts.target.feature_message: the op, what of it needs the feature, the feature, the
    targets that have it and the target) with the site's own fix `note`. The site tests
    `feature.has(target)` under its rule tag and raises this."""
    return Error(feature_message(op.name, feature, target, uses), note=note)


def retarget_note(feature: Feature) -> str:
    """`set copy.target to one of sm_90a, sm_100a, ...`: the end of a fix note that moves
    the kernel to a target with `feature`."""
    targets = feature.targets
    return f"set copy.target to {'one of ' if len(targets) > 1 else ''}{', '.join(targets)}"


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
    # rule: I2
    if offset is not None and not 0 <= offset < count:
        raise Error(
            f"Barrier offset {offset} is out of bounds",
            note=f"the group {barrier.type} holds barriers 0 to {count - 1}: use an index in "
            f"that range, or a larger group (!copy.barrier<{offset + 1}>)",
        )


def check_contiguous_smem(t: MemRefType, ref: SSAValue | None = None) -> None:
    """The SMEM side of a copy is a buffer, contiguous and whole (`ref`: the value, whose
    origin a view's note names)."""
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
        offset = t.layout.offset if isinstance(t.layout, StridedLayoutAttr) else IntAttr(0)
        # rule: C10
        if strides == contiguous and offset != IntAttr(0):
            at = offset.data if isinstance(offset, IntAttr) else "?"
            source = ref.owner.operands[0] if ref is not None and ref.owner.operands else None
            buffer = f"%{source.name_hint}" if source is not None and source.name_hint else "%buf"
            raise Error(
                f"async_copy needs the SMEM reference to be a buffer, got a view at offset {at} "
                f"of one ({t})",
                note=f"pass the buffer with the slot's indices ({buffer}[%slot]) instead of a "
                "memref.subview of it",
            )
        if strides != contiguous or offset != IntAttr(0):
            raise Error(
                "async_copy needs the SMEM reference to be contiguous, but got strides "
                f"{strides} for shape {list(t.get_shape())}",
                note="use a row-major SMEM buffer (no layout) from copy.alloc_smem",
            )


def check_smem_indices(t: MemRefType, indices: Sequence[SSAValue], what: str = "slot") -> None:
    """Each constant index among `indices` (on the leading dims of SMEM ref type `t`) lies
    inside its dim: a copy into slot 3 of a 3-slot buffer writes past the buffer, into
    whatever the arena holds next, and nothing later checks it."""
    shape = t.get_shape()
    for dim, index in enumerate(indices[: len(shape)]):
        value = constant_int(index)
        n = shape[dim]
        # rule: F8
        if value is not None and n >= 0 and not 0 <= value < n:
            last = "its only index is 0" if n == 1 else f"its indices are 0 to {n - 1}"
            raise Error(
                f"expected the SMEM {what} index along dim {dim} in [0, {n}), found the "
                f"constant {value}: it lies outside {t}",
                note=f"dim {dim} of the buffer has {n} entries ({last}): index inside it, "
                f"or allocate a buffer of {value + 1} along dim {dim}",
            )
