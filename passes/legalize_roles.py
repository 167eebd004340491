"""Who issues a TMA copy's thread form in copy-legalize (passes/legalize.py): the block, or
the role of `copy.warp_specialize` that holds the copy (`role_of`), checked to reach the
copy whole (`Issuers`, rules LG3 and LG7); except in a role whose first k warps exactly
reach it and whose other warps do nothing (`first_warps`, from the thread index each
thread computes with arith: `_per_thread`), which splits into a role of those warps and an
idle one (`split_roles`). And the barrier of the issuing group (`group_barrier`).
"""

from __future__ import annotations

from xdsl.dialects import arith, func, gpu, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from copy_dialect import ops as copy
from copy_dialect import portability
from copy_dialect.roles import kernel_block_threads
from facts.target import Target
from passes.legalize_common import role_barrier, thread_condition

TmaCopy = copy.AsyncCopyOp | copy.Im2colLoadOp
"""A TMA copy whose thread form copy-legalize issues: a tile load, store or reduction, or an
im2col load."""


class Issuers:
    """The groups that issue the thread forms of one kernel's TMA copies."""

    def __init__(self, kernel: func.FuncOp, target: Target):
        self.kernel = kernel
        self.target = target
        self.splits: dict[tuple[copy.WarpSpecializeOp, int], int] = {}
        """Roles whose copies only their first k warps reach (`first_warps`): each becomes a
        role of those k warps and an idle role of the others."""

    def __call__(self, op: TmaCopy, *, load: bool = True) -> tuple[SSAValue | None, int]:
        """The thread index and the number of threads of the group that issues `op`'s
        thread form (the block: None and its threads; a role: its index argument and its
        threads), checked to reach `op` whole (LG3, LG7). `load`: `op` is a load (its
        geometry's `is_load`, which the caller has), else a store."""
        role = role_of(op)
        if role is None:
            threads = kernel_block_threads(self.kernel)
            portability.check_threads(op, threads, self.target, load)
            assert threads is not None
            index, top = None, self.kernel.body.block
        else:
            ws, r = role
            threads = ws.role_threads(r)
            index, top = ws.regions[r].block.args[0], ws.regions[r].block
        condition = thread_condition(op, top)
        if condition is not None and role is not None:
            warps = first_warps(role[0], role[1], condition)
            if warps is not None:
                self.splits[role] = warps
                return index, warps * copy.WARP
        if condition is not None:
            who = "the block" if role is None else f"role {role[1]}"
            portability.check_no_form(
                op,
                f"a TMA copy that only some threads of {who} reach (it sits under "
                f"{condition.name}, whose condition or bounds depend on the thread): its "
                f"cp.async or thread-store form is issued by every thread of {who}",
                self.target,
                note="make the conditions around the copy uniform over the "
                + ("block" if role is None else "role")
                + " (a role whose threads do not all issue the copy: give the issuing warps a "
                "role of their own)",
            )
        return index, threads

    def split(self) -> None:
        """Splits each role of `splits` into its first k warps and an idle role."""
        for ws in {ws: None for ws, _ in self.splits}:
            split_roles(ws, {r: k for (w, r), k in self.splits.items() if w is ws})


def role_of(op: Operation) -> tuple[copy.WarpSpecializeOp, int] | None:
    """The copy.warp_specialize whose role holds `op`, and the role's index."""
    while (parent := op.parent_op()) is not None:
        if isinstance(parent, copy.WarpSpecializeOp):
            region = op.parent_region()
            return parent, list(parent.regions).index(region)  # type: ignore[arg-type]
        op = parent
    return None


def first_warps(ws: copy.WarpSpecializeOp, r: int, condition: Operation) -> int | None:
    """k, where role r's copies sit under `condition`, an `scf.if` in the role's body that
    exactly the role's first k warps pass (its condition evaluated for each thread index,
    `%t / 32 == 0`: the first warp of a producer warpgroup), and the role's other warps do
    nothing else (the rest of the body is arith, the `if` has no else): the role then splits
    into a role of k warps and an idle one, the same threads doing the same work. None when
    that cannot be proved."""
    body = ws.regions[r].block
    if not isinstance(condition, scf.IfOp) or condition.parent_block() is not body:
        return None
    if any(op.name != "scf.yield" for op in condition.false_region.walk()):
        return None
    if any(op is not condition and not op.name.startswith("arith.") for op in body.ops):
        return None
    threads = ws.role_threads(r)
    taken = _per_thread(condition.cond, body.args[0], threads, {})
    if taken is None:
        return None
    k = sum(1 for t in taken if t)
    if k == 0 or k % copy.WARP or k == threads or any(taken[t] != (t < k) for t in range(threads)):
        return None
    return k // copy.WARP


_ARITH = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divui": lambda a, b: a // b if b > 0 and a >= 0 else None,
    "arith.remui": lambda a, b: a % b if b > 0 and a >= 0 else None,
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
}
_CMPI = {0: int.__eq__, 1: int.__ne__, 2: int.__lt__, 3: int.__le__, 4: int.__gt__,
         5: int.__ge__, 6: int.__lt__, 7: int.__le__, 8: int.__gt__, 9: int.__ge__}  # fmt: skip
"""arith.cmpi's predicates (eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge) on the
non-negative values of `_per_thread`."""


def _per_thread(
    value: SSAValue, index: SSAValue, threads: int, memo: dict[SSAValue, tuple[int, ...] | None]
) -> tuple[int, ...] | None:
    """`value` for each thread index 0 .. threads - 1 of a role (`index` its argument), when
    it is computed from the index and constants with arith; else None."""
    if value in memo:
        return memo[value]
    found: tuple[int, ...] | None = None
    owner = value.owner
    if value is index:
        found = tuple(range(threads))
    elif isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        found = (owner.value.value.data,) * threads
    elif isinstance(owner, Operation) and len(owner.operands) == 2:
        a, b = (_per_thread(v, index, threads, memo) for v in owner.operands)
        if a is not None and b is not None:
            if isinstance(owner, arith.CmpiOp):
                compare = _CMPI[owner.predicate.value.data]
                found = tuple(int(compare(x, y)) for x, y in zip(a, b, strict=True))
            elif owner.name in _ARITH:
                got = [_ARITH[owner.name](x, y) for x, y in zip(a, b, strict=True)]
                if all(g is not None and g >= 0 for g in got):
                    found = tuple(got)  # type: ignore[arg-type]
    memo[value] = found
    return found


def split_roles(ws: copy.WarpSpecializeOp, splits: dict[int, int]) -> None:
    """Each role r of `splits` becomes a role of its first `splits[r]` warps (the same
    region: its thread indices are those threads') and an idle role of the others;
    `maxnreg` goes (sm_90a only, and the roles are no longer whole warpgroups)."""
    counts: list[int] = []
    for r, w in enumerate(ws.role_warps):
        counts += [splits[r], w - splits[r]] if r in splits else [w]
    new = copy.WarpSpecializeOp(counts)
    at = 0
    for r, region in enumerate(list(ws.regions)):
        target = new.regions[at]
        target.detach_block(target.block).erase()
        region.move_blocks(target)
        at += 2 if r in splits else 1
    for name, attr in ws.attributes.items():
        new.attributes[name] = attr
    Rewriter.replace_op(ws, new)


def group_barrier(op: Operation) -> Operation:
    """The barrier of the group that issues `op`: the block barrier, or in a role the role's
    (`role_barrier`)."""
    if role_of(op) is None:
        return gpu.BarrierOp()
    return role_barrier()
