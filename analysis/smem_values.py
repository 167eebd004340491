"""Which values of a kernel are SMEM or point into it, and the ops that take one whose effects
the protocol analysis does not own: derived once per kernel and verification run, read by
the kernel rule on effect declarations (`kernel.effects`, FX1) and the protocol analysis
(`protocol.facts`, `protocol.foreign`).

An SMEM buffer is a `copy.alloc_smem` result (or a kernel argument in SMEM). What is computed
from one without touching memory points into it: its views (`memref.subview`, casts,
reshapes), the pointers and indices taken from it (`memref.extract_aligned_pointer_as_index`,
`builtin.unrealized_conversion_cast` to `!llvm.ptr<3>`, `llvm.ptrtoint`), the arithmetic
on them, the SMEM matrix descriptor of a slot (`copy.matrix_descriptor`, and the descriptors
a kernel steps along K inside the tile by `arith.addi`/`arith.ori` of a constant), and the
results of an op that declares it accesses nothing (`copy.effects = []`: a descriptor); an
op is known not to touch memory when xDSL's traits say so (`xdsl.traits.get_effects` is
empty). The values carried through `scf.for`, `scf.if` and `scf.yield` follow.

Each such value has an `Origin`: its buffer and, where a view picks one, the ring slot
(the leading indices whose extent the view takes as 1). Every other op that takes one is a
*user*: the ops the analysis owns (the copy ops, the threads' loads and stores, structured
control flow, `func.return`, the tensor-core ops that read through descriptors) follow
their own rules; the others are foreign ops, whose
effects come from their `copy.effects` declaration, else from their xDSL traits, else are
unknown (a warning, FX1)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.traits import get_effects

from copy_dialect.effects import declared_effects
from copy_dialect.memory import SMEM, bitwidth, memory_space
from copy_dialect.verification import ops_of, per_run

THREAD_READS = {
    "memref.load": 0,
    "vector.load": 0,
    "vector.transfer_read": 0,
    "copy.ldmatrix": 0,
}
THREAD_WRITES = {
    "memref.store": 1,
    "vector.store": 1,
    "vector.transfer_write": 1,
    "copy.stmatrix": 1,
}
"""Ops by which threads access memory, and the operand that is the memref (its indices
follow it). `copy.ldmatrix`/`copy.stmatrix` are threads' reads and writes of SMEM too: each
thread of a warp reads or writes the 16-byte row at its indices (copy_dialect.matrix)."""

TENSOR_CORE_READS = {
    "nvvm.wgmma.mma_async": (0, 1),
    "nvvm.tcgen05.mma": (1, 2),
    "nvvm.tcgen05.mma.sp": (1, 2),
}
"""The tensor-core ops that read SMEM through descriptors, and those operands (a wgmma's A
and B; a tcgen05.mma's, dense or sparse, A, unless in TMEM, and B): the protocol analysis
follows them (`protocol.ops_mma`)."""

OWNED = frozenset(
    {
        "func.return",
        "scf.if",
        "scf.for",
        "scf.while",
        "scf.yield",
        "scf.condition",
        *TENSOR_CORE_READS,
    }
)
"""Ops besides the copy ops and the threads' accesses whose use of an SMEM value the protocol
analysis follows itself."""

DESCRIPTOR_STEPS = {"arith.addi": -1, "arith.ori": 0x3FFF}
"""How a descriptor steps inside its tile (CUTLASS's `DescriptorIterator`): adding a constant
to its address field (bits 0-13, in 16-byte units), or or-ing one into it (which moves the
address by at most the constant's address bits): the mask of the constant that moves it."""

SAME_ADDRESS = frozenset(
    {
        "builtin.unrealized_conversion_cast",
        "memref.cast",
        "memref.memory_space_cast",
        "memref.collapse_shape",
        "memref.expand_shape",
        "memref.assume_alignment",
        "arith.index_cast",
        "arith.index_castui",
        "llvm.ptrtoint",
        "llvm.inttoptr",
        "llvm.addrspacecast",
    }
)
"""Ops whose result points where their operand does (a slot stays that slot)."""

NOT_ADDRESSES = frozenset({"memref.dim", "memref.rank"})
"""Ops that read a buffer's shape, not its address."""

Slot = tuple[SSAValue | int | None, ...]


@dataclass(frozen=True)
class Origin:
    """Where a value points: into `buffer`, at the ring slot `slot` (its leading indices;
    None for an index not known; () for anywhere in the buffer)."""

    buffer: SSAValue
    slot: Slot
    room: int | None = None
    """For an SMEM matrix descriptor: the 16-byte units of its tile from the address it holds
    to the tile's end (a step of fewer keeps it in the slot); None for other values, or a
    tile whose size is not known."""

    def somewhere(self) -> Origin:
        """The same buffer, at an offset not known: a slot, if any, not known either."""
        if not self.buffer_has_slots():
            return Origin(self.buffer, self.slot) if self.room is not None else self
        return Origin(self.buffer, (None,))

    def buffer_has_slots(self) -> bool:
        t = self.buffer.type
        return isinstance(t, MemRefType) and len(t.shape) > 1


@dataclass(frozen=True)
class SmemValues:
    origins: dict[SSAValue, Origin]
    """Every SMEM value of the kernel and what it points into."""
    users: dict[Operation, tuple[int, ...]]
    """The foreign ops that take an SMEM value, and which of their operands are."""


def smem_values(fn: Operation) -> SmemValues:
    """The SMEM values of the kernel `fn`, derived once per verification run."""
    return per_run("smem values", fn, lambda: derive(fn))


def is_smem(t: object) -> bool:
    return isinstance(t, MemRefType) and memory_space(t) == SMEM


def owned(op: Operation) -> bool:
    """Ops whose use of SMEM the protocol analysis follows itself."""
    name = op.name
    return (
        name.startswith("copy.") or name in OWNED or name in THREAD_READS or name in THREAD_WRITES
    )


def derive(fn: Operation) -> SmemValues:
    origins: dict[SSAValue, Origin] = {}
    users: dict[Operation, list[int]] = {}
    work: list[SSAValue] = []

    def add(v: SSAValue, origin: Origin) -> None:
        if v not in origins:
            origins[v] = origin
            work.append(v)

    entry = fn.regions[0].blocks.first if fn.regions else None
    for arg in () if entry is None else entry.args:
        if is_smem(arg.type):
            add(arg, Origin(arg, ()))
    for op in ops_of(fn):
        if op.name == "copy.alloc_smem":
            add(op.results[0], Origin(op.results[0], ()))
    while work:
        v = work.pop()
        origin = origins[v]
        for use in tuple(v.uses):
            op, index = use.operation, use.index
            if isinstance(op, scf.YieldOp | scf.ForOp):
                carried(op, index, origin, add)
            elif op.name == "copy.matrix_descriptor" and index == 0:
                add(op.results[0], descriptor_origin(op, origin))
            elif owned(op):
                continue
            elif not passes_on(op):
                users.setdefault(op, [])
                if index not in users[op]:
                    users[op].append(index)
            elif op.name not in NOT_ADDRESSES:
                for r in op.results:
                    if op.name == "memref.extract_strided_metadata" and r.index > 0:
                        break
                    add(r, result_origin(op, origin, v))
    return SmemValues(origins, {op: tuple(sorted(ix)) for op, ix in users.items()})


def passes_on(op: Operation) -> bool:
    """An op that does not touch memory: its results point where its operands do."""
    declared = declared_effects(op)
    if declared is not None:
        return not declared
    if op.regions or "copy.effects" in op.attributes:
        return False
    effects = get_effects(op)
    return effects is not None and not effects


def result_origin(op: Operation, origin: Origin, operand: SSAValue) -> Origin:
    if isinstance(op, memref.SubviewOp) and op.source is operand:
        return subview_origin(op, origin)
    if origin.room is not None and op.name in DESCRIPTOR_STEPS:
        return descriptor_step(op, origin, operand)
    if op.name in SAME_ADDRESS or declared_effects(op) == ():
        return origin
    if op.name == "memref.extract_aligned_pointer_as_index" and not origin.slot:
        return origin
    return origin.somewhere()


def descriptor_origin(op: Operation, origin: Origin) -> Origin:
    """The descriptor `copy.matrix_descriptor %buffer[indices]` yields: the tile the trailing
    dims after the indices make, in the slot the leading indices pick (within a view of a
    slot: that slot)."""
    t = op.operands[0].type
    indices = tuple(op.operands[1:])
    room = None
    if isinstance(t, MemRefType):
        tile = t.get_shape()[len(indices) :]
        bits = bitwidth(t.element_type)
        if all(d >= 0 for d in tile) and bits:
            room = prod(tile) * bits // 128
    if origin.slot:
        return Origin(origin.buffer, origin.slot, room)
    rank = len(t.get_shape()) if isinstance(t, MemRefType) else 0
    return Origin(origin.buffer, indices[: max(rank - 1, 0)], room)


def descriptor_step(op: Operation, origin: Origin, operand: SSAValue) -> Origin:
    """A descriptor stepped by a constant (`DESCRIPTOR_STEPS`) stays in its slot while the
    step is less than the room left in the tile; else it may point anywhere in the buffer."""
    other = [v for v in op.operands if v is not operand]
    step = constant_int(other[0]) if len(other) == 1 else None
    if step is not None and DESCRIPTOR_STEPS[op.name] >= 0:
        step &= DESCRIPTOR_STEPS[op.name]
    assert origin.room is not None
    if step is None or not 0 <= step < origin.room:
        return Origin(origin.buffer, origin.somewhere().slot)
    return Origin(origin.buffer, origin.slot, origin.room - step)


def constant_int(v: SSAValue) -> int | None:
    """The value of an integer constant (`arith.constant`, `llvm.mlir.constant`)."""
    owner = v.owner
    if not isinstance(owner, Operation) or owner.name not in CONSTANTS:
        return None
    value = owner.properties.get("value") or owner.attributes.get("value")
    return value.value.data if isinstance(value, IntegerAttr) else None


CONSTANTS = frozenset({"arith.constant", "llvm.mlir.constant"})


def subview_origin(op: memref.SubviewOp, origin: Origin) -> Origin:
    """A view of a whole buffer picks a slot where its leading sizes are 1."""
    if origin.slot:
        return origin.somewhere()
    offsets = list(op.offsets)
    sizes = list(op.sizes)
    slot: list[SSAValue | int | None] = []
    t = op.source.type
    shape = t.get_shape() if isinstance(t, MemRefType) else ()
    for d, (off, size) in enumerate(
        zip(op.static_offsets.get_values(), op.static_sizes.get_values(), strict=False)
    ):
        offset: SSAValue | int = offsets.pop(0) if off == DYNAMIC_INDEX else int(off)
        n = sizes.pop(0) if size == DYNAMIC_INDEX else int(size)
        if n == 1:
            slot.append(offset)
            continue
        if not (offset == 0 and d < len(shape) and n == shape[d]):
            slot.append(None)
        break
    return Origin(origin.buffer, tuple(slot[: max(len(shape) - 1, 0)]))


def carried(
    op: Operation, index: int, origin: Origin, add: Callable[[SSAValue, Origin], None]
) -> None:
    """An SMEM value carried through a loop or out of a region: the loop's argument and
    result, the parent's result (a different slot each iteration: not known)."""
    there = origin.somewhere()
    if isinstance(op, scf.ForOp):
        if index >= 3:
            add(op.body.blocks[0].args[index - 2], there)
            add(op.results[index - 3], there)
        return
    parent = op.parent_op()
    if parent is None or index >= len(parent.results):
        return
    add(parent.results[index], there)
    if isinstance(parent, scf.ForOp):
        add(parent.body.blocks[0].args[index + 1], there)


def describe(origin: Origin) -> str:
    """The buffer (and slot) as messages name it."""
    name = f"%{origin.buffer.name_hint}" if origin.buffer.name_hint else "an SMEM buffer"
    if not origin.slot:
        return name
    parts = ["?" if not isinstance(s, int) else str(s) for s in origin.slot]
    return f"{name}[{', '.join(parts)}]"
