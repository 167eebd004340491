"""Programmatic dependent launch: the kernel's GMEM accesses against its
`copy.grid_dependency_wait` (rules GD2, GD3), and the `copy.predecessor_access` marks on its
arguments (GD4).

A kernel that holds a `copy.grid_dependency_wait` is launched with programmatic stream
serialization (`copy_dialect.grid_dependency.waits_for_predecessor`, which the lowering
records in the kernel's ABI): it may run while the kernel ahead
of it on the stream, its primary, still runs, and only the wait orders the primary's memory
accesses before its own (PTX ISA, griddepcontrol: the wait returns once the prerequisite
grids completed and their memory operations are visible). So each GMEM access of an argument
the primary may write must come after a wait on every path of the thread that makes it
(reads, GD2: the primary's output; writes, GD3: the primary may still read or write it),
unless the argument is marked `{copy.predecessor_access = "read"}` (the primary at most reads
it: reads may come first) or `"none"` (it does not touch it: reads and writes may).

"On every path" is a forward walk of the kernel's control flow with one fact per program
point, whether a wait came before: yes, no, or only on some paths. An `scf.if` joins its
arms (a missing else arm is the path that skips it); a loop may run zero times, and its body
starts from the state before it joined with its own end; each role of
`copy.warp_specialize` starts from the state at the op (another role's wait is another
thread's); blocks of a CFG region join their predecessors. The wait is a thread's
instruction: a wait that only thread 0 reaches does not order the other threads' accesses,
whatever block barrier follows it. The walk is exact on the paths it sees; it does not
reason about conditions, so a wait and an access under two `scf.if`s on one condition is
rejected (put both in one `scf.if`).

The accesses are the dialect's fact (`copy.gmem_accesses`): TMA prefetches are hints that
change no data and may come before the wait; ops with a GMEM ref that are no known access or
view (a call, say) count as writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum

from xdsl.dialects import builtin, scf
from xdsl.dialects.builtin import MemRefType, StringAttr
from xdsl.ir import Block, Operation, Region

from analysis.kernel.kernel import Kernel
from copy_dialect import ops as copy
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.grid_dependency import is_wait
from copy_dialect.memory import GMEM, memory_space


class Waited(Enum):
    """Whether a `copy.grid_dependency_wait` came before a program point."""

    NO = "no"
    SOME = "on some paths"
    YES = "yes"


def join(a: Waited | None, b: Waited | None) -> Waited | None:
    """Where two paths meet (None: a point no path reached yet)."""
    if a is None:
        return b
    if b is None or a is b:
        return a
    return Waited.SOME


def check_grid_dependency(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """GD4 on the kernel's argument marks; where the kernel waits, GD2 and GD3 on each GMEM
    access that a wait does not precede on every path."""
    marks = yield from argument_marks(kernel.op)
    waits = grid_waits(kernel)
    if not waits:
        return
    before = waited_before(kernel.op)
    waits_later = before_a_wait(waits)
    wait_roles = {role_of(w) for w in waits}
    for op, ref, write in copy.gmem_accesses(kernel.ops[1:]):
        state = before.get(op)
        if state is Waited.YES or state is None:  # None: unreachable
            continue
        arg = copy.argument_of(ref, kernel.op)
        mark = marks.get(arg) if arg is not None else None
        if mark == "none" or (mark == "read" and not write):
            continue
        name = None if arg is None else argument_name(kernel.op, arg)
        hint = ""
        if state is Waited.NO and op in waits_later:
            hint = " (the kernel's wait comes later)"
        elif state is Waited.NO and wait_roles and role_of(op) not in wait_roles:
            hint = " (the kernel's wait is in another role: it orders its own threads' accesses)"
        yield op, early_access(write, name, mark, state, hint)


def argument_name(kernel: Operation, arg: int) -> str:
    """`argument 1 (%y)`: the argument as messages name it (its name where it has one)."""
    hint = kernel.regions[0].blocks.first.args[arg].name_hint  # type: ignore[union-attr]
    return f"argument {arg}" + (f" (%{hint})" if hint else "")


def grid_waits(kernel: Kernel) -> list[Operation]:
    """The kernel's waits for its predecessor (`is_wait`): upstream NVVM's too, in input IR
    (a function the copy lowering made, with its ABI record, holds the lowered form of the
    copy op, whose rules held before the lowering)."""
    if "copy.abi" in kernel.op.attributes:
        return []
    nvvm = [t for t in kernel.positions if getattr(t, "name", None) == "nvvm.griddepcontrol"]
    return [
        *kernel.instances(copy.GridDependencyWaitOp),
        *(op for op in kernel.instances(*nvvm) if is_wait(op)),
    ]


def before_a_wait(waits: list[Operation]) -> set[Operation]:
    """The ops that a wait of their own block comes after in program order (not
    necessarily on every path): where "the kernel's wait comes later" helps."""
    found: set[Operation] = set()
    for wait in waits:
        block = wait.parent
        if block is None:
            continue
        for op in block.ops:
            if op is wait:
                break
            found.update(op.walk())
    return found


def role_of(op: Operation) -> Region | None:
    """The role (a region of `copy.warp_specialize`) that `op` is in, None outside roles."""
    region = op.parent_region()
    while region is not None:
        owner = region.parent
        if isinstance(owner, copy.WarpSpecializeOp):
            return region
        region = owner.parent_region() if owner is not None else None
    return None


def early_access(write: bool, arg: str | None, mark: str | None, state: Waited, hint: str) -> Error:
    where = (
        "no copy.grid_dependency_wait comes before it" + hint
        if state is Waited.NO
        else "a copy.grid_dependency_wait comes before it on some paths only (one on a "
        "branch, in a loop or in another role orders nothing after it)"
    )
    what = arg if arg is not None else "a GMEM ref that is no kernel argument"
    move = "move copy.grid_dependency_wait before this op, at the kernel's level (every thread)"
    if write:
        # rule: GD3
        return Error(
            f"expected every GMEM write of a kernel that waits for its predecessor to come "
            f"after copy.grid_dependency_wait, found a write of {what} where {where}: the "
            "predecessor may still read or write it",
            note=move
            + (
                f", or, if the predecessor neither reads nor writes {what}, mark it "
                f'{{{copy.PREDECESSOR_ACCESS} = "none"}}'
                if arg is not None
                else ""
            ),
        )
    # rule: GD2
    return Error(
        f"expected every GMEM read of a kernel that waits for its predecessor to come after "
        f"copy.grid_dependency_wait, found a read of {what} where {where}: the predecessor "
        "may still be writing it",
        note=move
        + (
            f", or, if the predecessor does not write {what}, mark it "
            f'{{{copy.PREDECESSOR_ACCESS} = "read"}}'
            if arg is not None and mark is None
            else ""
        ),
    )


def argument_marks(kernel: Operation) -> Iterator[tuple[Operation, Error]]:
    """Yields the GD4 errors of the kernel's `copy.predecessor_access` marks; returns the
    valid marks, by argument index."""
    marks: dict[int, str] = {}
    arg_attrs = getattr(kernel, "arg_attrs", None)
    if not isinstance(arg_attrs, builtin.ArrayAttr):
        return marks
    inputs = kernel.function_type.inputs.data  # type: ignore[attr-defined]
    for i, attrs in enumerate(arg_attrs.data):
        if not isinstance(attrs, builtin.DictionaryAttr):
            continue
        mark = attrs.data.get(copy.PREDECESSOR_ACCESS)
        if mark is None:
            continue
        value = mark.data if isinstance(mark, StringAttr) else None
        t = inputs[i] if i < len(inputs) else None
        is_gmem = isinstance(t, MemRefType) and memory_space(t) == GMEM
        # rule: GD4
        if value not in copy.PREDECESSOR_ACCESSES or not is_gmem:
            choices = ", ".join(f'"{v}" ({why})' for v, why in copy.PREDECESSOR_ACCESSES.items())
            found = f"{mark}" if value not in copy.PREDECESSOR_ACCESSES else f'"{value}"'
            yield (
                kernel,
                Error(
                    f"expected {copy.PREDECESSOR_ACCESS} on a GMEM memref argument, one of "
                    f"{choices}, found {found} on argument {i} of type {t}",
                    note=f'write {copy.PREDECESSOR_ACCESS} = "read" or "none" on a GMEM '
                    "memref argument, or drop it",
                ),
            )
            continue
        marks[i] = value
    return marks


# -- where a wait came before ------------------------------------------------------------


def waited_before(kernel: Operation) -> dict[Operation, Waited]:
    """Whether a wait came before each op of the kernel, on every path."""
    before: dict[Operation, Waited] = {}
    body = kernel.regions[0]
    walk_region(body, Waited.NO, before)
    return before


def walk_region(region: Region, state: Waited, before: dict[Operation, Waited]) -> Waited:
    """The state at the region's exits, entered in `state`."""
    blocks = list(region.blocks)
    if not blocks:
        return state
    if len(blocks) == 1:
        return walk_block(blocks[0], state, before)
    entry: dict[Block, Waited | None] = {b: None for b in blocks}
    entry[blocks[0]] = state
    changed = True
    exits: Waited | None = None
    while changed:
        changed = False
        exits = None
        for block in blocks:
            start = entry[block]
            if start is None:
                continue
            end = walk_block(block, start, before)
            successors = block.last_op.successors if block.last_op else ()
            if not successors:
                exits = join(exits, end)
            for succ in successors:
                joined = join(entry[succ], end)
                if joined != entry[succ]:
                    entry[succ] = joined
                    changed = True
    return exits if exits is not None else state


def walk_block(block: Block, state: Waited, before: dict[Operation, Waited]) -> Waited:
    for op in block.ops:
        before[op] = state
        if is_wait(op):
            state = Waited.YES
        elif op.regions:
            state = walk_nested(op, state, before)
    return state


def walk_nested(op: Operation, state: Waited, before: dict[Operation, Waited]) -> Waited:
    """The state after an op with regions."""
    if isinstance(op, scf.IfOp):
        then = walk_region(op.true_region, state, before)
        other = walk_region(op.false_region, state, before) if op.false_region.blocks else state
        return join(then, other) or state
    if isinstance(op, copy.WarpSpecializeOp):
        out: Waited | None = None
        for role in op.regions:
            out = join(out, walk_region(role, state, before))
        return out or state
    # A loop (or any other region op): its regions in order, any number of times.
    start = state
    while True:
        end = start
        for region in op.regions:
            end = walk_region(region, end, before)
        again = join(state, end) or state
        if again is start:
            return again
        start = again
