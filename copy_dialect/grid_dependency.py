"""Programmatic dependent launch (PDL): `copy.grid_dependency_wait` and
`copy.launch_dependents`, PTX's `griddepcontrol.wait` and `griddepcontrol.launch_dependents`
(PTX ISA 7.8, sm_90 and newer), and the kernel-argument attribute that says what the
predecessor grid does with an argument (`copy.predecessor_access`).

A kernel launched with programmatic stream serialization (the runtime sets
`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` for every kernel that holds a
`copy.grid_dependency_wait`) may start before the kernel ahead of it on the stream, its
primary, has finished: as soon as every CTA of the primary has executed
`griddepcontrol.launch_dependents` or exited. The PTX ISA ("Parallel Synchronization and
Communication Instructions: griddepcontrol"):

- `griddepcontrol.wait` makes the executing thread wait until every prerequisite grid in
  flight has completed and all its memory operations are performed and made visible to the
  current grid: the one order between the primary's accesses and the dependent's. It is a
  thread's instruction (not `.aligned`): each thread that touches the primary's data must
  have executed it, which the kernel rule GD2/GD3 checks (`analysis.kernel.grid_dependency`).
- `griddepcontrol.launch_dependents` only lets the dependents be scheduled early; it orders
  no memory. Writes the primary makes after it are still complete and visible once the
  dependent's wait returns, so where it stands is a matter of speed, not correctness. Once
  per CTA is enough: further executions by the CTA's threads have no effect.

Without a predecessor launched that way (a plain launch, or the first kernel on the stream)
the wait returns at once and the trigger does nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from xdsl.dialects import memref
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, MemRefType, StringAttr
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.irdl import IRDLOperation

from copy_dialect.copies import AsyncCopyOp
from copy_dialect.im2col import Im2colLoadOp
from copy_dialect.memory import GMEM, memory_space
from copy_dialect.portability import legalize_hint
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import enclosing_target, feature_error
from facts.target import GRID_DEPENDENCY

PREDECESSOR_ACCESS = "copy.predecessor_access"
"""The argument attribute (`{copy.predecessor_access = "none"}` on a kernel's GMEM argument)
by which the author states what the primary grid does with the argument: "none" (it neither
reads nor writes it: the kernel may read and write it before its
`copy.grid_dependency_wait`) or "read" (it at most reads it: the kernel may read it before
the wait, as CUTLASS and Triton kernels load their weights while the primary drains). Without
it, the primary may write the argument and every access comes after the wait."""

PREDECESSOR_ACCESSES = {
    "none": "the predecessor neither reads nor writes it",
    "read": "the predecessor at most reads it",
}
"""The values of `copy.predecessor_access`, with what each states."""


def waits_for_predecessor(kernel: Operation) -> bool:
    """Whether `kernel` waits for the grid ahead of it (holds a wait, `is_wait`): the one
    fact by which it is launched with programmatic stream serialization (the lowering records
    it in the kernel's ABI, `grid_dependent`)."""
    return any(is_wait(op) for op in kernel.walk())


def is_wait(op: Operation) -> bool:
    """A `copy.grid_dependency_wait`, or upstream NVVM's `nvvm.griddepcontrol wait` where a
    frontend that emits NVVM wrote the instruction itself: the same fact to the kernel rules
    (GD2, GD3) and to the ABI."""
    if isinstance(op, GridDependencyWaitOp):
        return True
    if op.name != "nvvm.griddepcontrol":
        return False
    kind = op.properties.get("kind")
    return getattr(kind, "data", None) == "wait"


class GridDependencyOp(IRDLOperation):
    """The family's verifier: the target has griddepcontrol (sm_90+, rule GD1)."""

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def verify_(self) -> None:
        target = enclosing_target(self)
        # rule: GD1
        if target is not None and not GRID_DEPENDENCY.has(target):
            raise feature_error(
                self,
                GRID_DEPENDENCY,
                target,
                note=f"drop {self.name}: before sm_90 a kernel starts only once the kernel "
                "ahead of it on the stream has completed" + legalize_hint(target),
            )


@copy_op_definition
class GridDependencyWaitOp(GridDependencyOp):
    """
    Waits until the grids this one depends on (the kernel launched before it on the stream,
    under programmatic dependent launch) have completed and their memory is visible:
    `griddepcontrol.wait`. Every access of GMEM the predecessor may touch comes after it on
    every path (rules GD2, GD3); an argument marked `copy.predecessor_access` may be read
    (or, "none", written) before it.

    ```mlir
    copy.grid_dependency_wait
    %v = memref.load %x[%i, %j] : memref<4096x4096xf32>
    ```

    A kernel that loads its weights while the predecessor drains marks them
    (`%w: memref<1024xf32> {copy.predecessor_access = "read"}`) and loads them before the
    wait.
    """

    name = "copy.grid_dependency_wait"


@copy_op_definition
class LaunchDependentsOp(GridDependencyOp):
    """
    Lets the grid launched after this one on the stream with programmatic stream
    serialization start before this grid completes, once every CTA has executed it or
    exited: `griddepcontrol.launch_dependents`. It orders no memory (the dependent's
    `copy.grid_dependency_wait` waits for this grid's completion, writes after the trigger
    included); once per CTA suffices.

    ```mlir
    copy.launch_dependents
    ```
    """

    name = "copy.launch_dependents"


# -- what a kernel does with GMEM (GD2, GD3 and the launch guard) ------------------------

READS = (memref.LoadOp,)
VECTOR_READS = ("vector.load", "vector.transfer_read", "vector.maskedload", "vector.gather")
VIEWS = (
    "memref.subview",
    "memref.reinterpret_cast",
    "memref.cast",
    "memref.expand_shape",
    "memref.collapse_shape",
    "memref.view",
    "memref.transpose",
    "memref.memory_space_cast",
)
"""Ops that make a ref of the same memory from their first operand."""
NO_ACCESS = (
    *VIEWS,
    "memref.dim",
    "memref.extract_strided_metadata",
    "memref.extract_aligned_pointer_as_index",
    "copy.prefetch",
    "copy.tensormap_global",
    "copy.tensormap_replace",
    "copy.assume",
    "copy.gather4_prefetch",
)
"""Ops that name a GMEM ref without reading or writing its data."""


GATHERS = ("copy.gather4", "copy.scatter4")
"""TMA's row gathers (reads) and scatters (writes), by name (their module holds the op
definitions)."""


def is_gmem(value: SSAValue) -> bool:
    return isinstance(value.type, MemRefType) and memory_space(value.type) == GMEM


def gmem_accesses(ops: Iterable[Operation]) -> Iterator[tuple[Operation, SSAValue, bool]]:
    """Each GMEM access of `ops` (a kernel's, in walk order): (op, ref, whether it writes).
    A reduction writes; a load reads; an op with a GMEM ref that is no known access, view or
    hint writes (the safe side)."""
    for op in ops:
        if isinstance(op, AsyncCopyOp):
            yield (op, op.src, False) if op.is_load else (op, op.dst, True)
        elif isinstance(op, Im2colLoadOp):
            yield op, op.src, False
        elif isinstance(op, memref.CopyOp):
            if is_gmem(op.source):
                yield op, op.source, False
            if is_gmem(op.destination):
                yield op, op.destination, True
        elif op.name in GATHERS:
            for ref in op.operands:
                if is_gmem(ref):
                    yield op, ref, op.name == "copy.scatter4"
        elif op.name in NO_ACCESS:
            continue
        else:
            write = not (isinstance(op, READS) or op.name in VECTOR_READS)
            for ref in op.operands:
                if is_gmem(ref):
                    yield op, ref, write


def argument_of(ref: SSAValue, kernel: Operation) -> int | None:
    """The argument of `kernel` that `ref` is a view of (through memref views), None if
    none."""
    while isinstance(ref, OpResult) and ref.op.name in VIEWS and ref.op.operands:
        ref = ref.op.operands[0]
    if isinstance(ref, BlockArgument) and ref.block is kernel.regions[0].blocks.first:
        return ref.index
    return None


def argument_accesses(kernel: Operation) -> dict[int, str]:
    """How `kernel` accesses each GMEM argument it touches: "read", "write" or "read-write"
    (through views too; refs of no argument are left out)."""
    found: dict[int, set[str]] = {}
    for _, ref, write in gmem_accesses(list(kernel.walk())[1:]):
        arg = argument_of(ref, kernel)
        if arg is not None:
            found.setdefault(arg, set()).add("write" if write else "read")
    return {arg: "-".join(sorted(kinds)) for arg, kinds in found.items()}


def predecessor_marks(kernel: Operation) -> dict[int, str]:
    """The valid `copy.predecessor_access` marks of `kernel`'s arguments, by index (rule GD4
    rejects the others)."""
    arg_attrs = getattr(kernel, "arg_attrs", None)
    if not isinstance(arg_attrs, ArrayAttr):
        return {}
    marks: dict[int, str] = {}
    for i, attrs in enumerate(arg_attrs.data):
        mark = attrs.data.get(PREDECESSOR_ACCESS) if isinstance(attrs, DictionaryAttr) else None
        if isinstance(mark, StringAttr) and mark.data in PREDECESSOR_ACCESSES:
            marks[i] = mark.data
    return marks
