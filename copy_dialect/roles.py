"""Who issues an op: warp-specialized roles (`copy.warp_specialize`) and named barriers
(`copy.named_barrier_sync`, `copy.named_barrier_arrive`).

Outside a role, the block issues: TMA copies, prefetches, `barrier_arrive_expect_tx` and bulk
commits and waits are issued by the elected thread of the block (thread 0), cp.async copies
by all of its threads, and a `wait_group` or `fence_async_shared` ends with a block barrier.

`copy.warp_specialize` splits the block's warps into roles by warp index, one region each, run
at once (CUTLASS's producer and consumer warp groups, Triton's `warp_specialize`, Pallas'
`emit_pipeline_warp_specialized`). Inside role r, the role is the issuer: the elected thread
is one lane of the role's first warp (`elect.sync`), cp.async copies are split over the
role's threads, a `wait_group` or `fence_async_shared` ends with the role's own named barrier
(`barrier.sync 1 + r, threads of role r`), and `barrier_wait` blocks the threads that execute it
only. With `maxnreg`, each role first moves its per-thread register limit to its value
(`setmaxnreg`). The roles join at the op's end (a block barrier).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func, gpu
from xdsl.dialects.builtin import (
    I32,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    i32,
)
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    traits_def,
    var_region_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import NoTerminator

from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.verification import check_attribute_names, copy_op_definition, per_run
from copy_dialect.verify_common import (
    enclosing_kernel,
    enclosing_target,
    feature_error,
    retarget_note,
)
from facts.target import SETMAXNREG

WARP = 32
WARPGROUP_WARPS = 4
NAMED_BARRIERS = 16
"""A CTA has 16 named barriers (`bar.sync 0..15`); 0 is the block's (`__syncthreads`)."""
REGISTER_FILE = 65536
"""32-bit registers per SM: the pool that `setmaxnreg` moves registers in."""
MIN_MAXNREG, MAX_MAXNREG = 24, 256


def kernel_block_threads(kernel: Operation) -> int | None:
    """The threads of a kernel's 1-D block (`gpu.known_block_size = array<i32: n, 1, 1>`);
    None when it has none or it is not 1-D."""
    attr = kernel.attributes.get("gpu.known_block_size")
    if not isinstance(attr, DenseArrayBase):
        return None
    values = attr.get_values()
    if len(values) != 3 or values[1] != 1 or values[2] != 1:
        return None
    return int(values[0])


@irdl_op_definition  # it has regions: IRDL checks them per op (copy_op_definition cannot)
class WarpSpecializeOp(IRDLOperation):
    """
    Runs one region per role, at once: role r is `warps[r]` consecutive warps of the block,
    in order (warps 0 .. warps[0] - 1 are role 0). Each region's block argument is the
    thread's index in its role. With `maxnreg`, role r first sets its warps' register limit
    to `maxnreg[r]` (`setmaxnreg`: whole warpgroups, sm_90a). The roles join at the end.

    ```mlir
    copy.warp_specialize warps [1, 4] {
    ^bb0(%t: index):
      // the producer warp: its elected lane issues the TMA loads
    }, {
    ^bb0(%t: index):
      // four consumer warps
    }
    ```
    """

    name = "copy.warp_specialize"

    warps = prop_def(DenseArrayBase.constr(I32))
    maxnreg = opt_prop_def(DenseArrayBase.constr(I32))

    roles = var_region_def("single_block")

    traits = traits_def(NoTerminator())

    def __init__(self, warps: Sequence[int], maxnreg: Sequence[int] | None = None):
        regs = None if maxnreg is None else DenseArrayBase.from_list(i32, list(maxnreg))
        super().__init__(
            properties={"warps": DenseArrayBase.from_list(i32, list(warps)), "maxnreg": regs},
            regions=[[Region(Block(arg_types=[IndexType()])) for _ in warps]],
        )

    @property
    def role_warps(self) -> tuple[int, ...]:
        return tuple(int(w) for w in self.warps.get_values())

    @property
    def role_maxnreg(self) -> tuple[int, ...] | None:
        return None if self.maxnreg is None else tuple(int(r) for r in self.maxnreg.get_values())

    def first_warp(self, role: int) -> int:
        return sum(self.role_warps[:role])

    def role_threads(self, role: int) -> int:
        return WARP * self.role_warps[role]

    def role_block(self, role: int) -> Block:
        """The body of role `role` (its argument: the thread's index in the role)."""
        return self.roles[role].blocks[0]

    def print(self, printer: Printer) -> None:
        printer.print_string(f" warps [{', '.join(map(str, self.role_warps))}]")
        if (regs := self.role_maxnreg) is not None:
            printer.print_string(f" maxnreg [{', '.join(map(str, regs))}]")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        for i, region in enumerate(self.roles):
            printer.print_string(" " if i == 0 else ", ")
            printer.print_region(region, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> WarpSpecializeOp:
        parser.parse_keyword("warps")
        warps = _parse_int_list(parser)
        maxnreg = None
        if parser.parse_optional_keyword("maxnreg") is not None:
            maxnreg = _parse_int_list(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        regions = [parser.parse_region()]
        while parser.parse_optional_punctuation(",") is not None:
            regions.append(parser.parse_region())
        op = cls.create(
            properties={
                "warps": DenseArrayBase.from_list(i32, warps),
                **({} if maxnreg is None else {"maxnreg": DenseArrayBase.from_list(i32, maxnreg)}),
            },
            attributes={} if attrs is None else dict(attrs.data),
            regions=regions,
        )
        return op

    def verify_(self) -> None:
        op_def = self.get_irdl_definition()
        check_attribute_names(self, sorted([*op_def.properties, *op_def.attributes]))
        warps = self.role_warps
        # rule: W2
        if len(self.roles) != len(warps) or not warps or any(w < 1 for w in warps):
            raise Error(
                f"expected one region per role and at least one warp per role, got "
                f"{len(self.roles)} regions for warps {list(warps)}",
                note="give warps one positive count per region: "
                + ", ".join(f"role {r} has {w}" for r, w in enumerate(warps) if w < 1)
                if any(w < 1 for w in warps)
                else "give warps one positive count per region: warps [1, 4] for two regions",
            )
        for r, region in enumerate(self.roles):
            args = region.blocks[0].args if region.blocks else ()
            # rule: W2
            if len(args) != 1 or not isinstance(args[0].type, IndexType):
                raise Error(
                    f"role {r}'s region must take one index argument (the thread's index in "
                    f"the role), got {len(args)} argument(s)",
                    note="begin the region with ^bb0(%t: index):",
                )
        # rule: W9
        if len(warps) > NAMED_BARRIERS - 1:
            raise Error(
                f"at most {NAMED_BARRIERS - 1} roles fit the named barriers, got {len(warps)}",
                note="each role synchronizes on its own named barrier 1..15: merge roles",
            )
        self._verify_placement()
        self._verify_block(warps)
        self._verify_registers(warps)

    def _verify_placement(self) -> None:
        kernel = enclosing_kernel(self)
        # rule: W3
        if kernel is None or self.parent_op() is not kernel:
            raise Error(
                "copy.warp_specialize must be at the top level of a kernel's body",
                note="move it out of loops, branches (scf.for, scf.if) and other roles, to the "
                "kernel's body: each role is a persistent loop of its own",
            )

    def _verify_block(self, warps: Sequence[int]) -> None:
        kernel = enclosing_kernel(self)
        assert kernel is not None
        threads = kernel_block_threads(kernel)
        # rule: W1
        if threads is None or threads != WARP * sum(warps):
            found = "no 1-D gpu.known_block_size" if threads is None else f"{threads} threads"
            raise Error(
                f"the roles cover {sum(warps)} warps ({WARP * sum(warps)} threads), but the "
                f"kernel's block has {found}",
                note=f"set gpu.known_block_size = array<i32: {WARP * sum(warps)}, 1, 1> on the "
                "kernel, or change warps so that the roles cover the block",
            )

    def _verify_registers(self, warps: Sequence[int]) -> None:
        regs = self.role_maxnreg
        if regs is None:
            return
        target = enclosing_target(self)
        # rule: W4
        if target is not None and not SETMAXNREG.has(target):
            raise feature_error(
                self,
                SETMAXNREG,
                target,
                uses="with maxnreg",
                note="drop maxnreg, or " + retarget_note(SETMAXNREG),
            )
        # rule: W5
        if len(regs) != len(warps):
            raise Error(
                f"expected one maxnreg per role ({len(warps)}), got {len(regs)}",
                note=f"give every role its register limit ({len(warps)} values), or drop maxnreg",
            )
        for r, n in enumerate(regs):
            # rule: W5
            if not MIN_MAXNREG <= n <= MAX_MAXNREG or n % 8:
                raise Error(
                    f"maxnreg of role {r} must be a multiple of 8 in [{MIN_MAXNREG}, "
                    f"{MAX_MAXNREG}], got {n}",
                    note=f"round it to {max(MIN_MAXNREG, min(MAX_MAXNREG, n - n % 8))}",
                )
            first = self.first_warp(r)
            # rule: W6
            if first % WARPGROUP_WARPS or warps[r] % WARPGROUP_WARPS:
                raise Error(
                    f"role {r} (warps {first}..{first + warps[r] - 1}) sets maxnreg but is "
                    "not whole warpgroups: every warp of a warpgroup must execute the same "
                    "setmaxnreg",
                    note="give each role with maxnreg a multiple of 4 warps, starting at a "
                    "multiple of 4 (pad the producer to a warpgroup), or drop maxnreg",
                )
        used = sum(n * WARP * w for n, w in zip(regs, warps, strict=True))
        even = min(MAX_MAXNREG, REGISTER_FILE // (WARP * sum(warps)) // 8 * 8)
        # rule: W7
        if used > REGISTER_FILE:
            raise Error(
                f"the roles' register limits need {used} registers, more than the "
                f"{REGISTER_FILE} of an SM",
                note="lower maxnreg so that sum(maxnreg x threads) <= 65536 (setmaxnreg.inc "
                f"would wait forever for registers): {even} each is an even split",
            )


def _parse_int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)


def enclosing_role(op: Operation) -> tuple[WarpSpecializeOp, int] | None:
    """The `copy.warp_specialize` role whose region holds `op`, and its index (once per
    enclosing op in a verification run)."""
    parent = op.parent_op()
    if parent is None or isinstance(parent, func.FuncOp | gpu.FuncOp):
        return None
    if isinstance(parent, WarpSpecializeOp):
        region = op.parent_region()
        return parent, next(i for i, r in enumerate(parent.roles) if r is region)
    return per_run("role", parent, lambda: enclosing_role(parent))


def check_block_wide(op: Operation, what: str) -> None:
    """An op the whole block must reach is not inside a role (only its warps reach it)."""
    role = enclosing_role(op)
    # rule: W8
    if role is not None:
        ws, r = role
        raise Error(
            f"{what} synchronizes the whole block, but it is inside role {r} of "
            "copy.warp_specialize, which only that role's warps reach: the block would hang",
            note=f"move {op.name} before copy.warp_specialize (or after it, where the roles "
            "have joined)",
        )


class _NamedBarrierOp(IRDLOperation):
    id = prop_def(IntegerAttr[I32])
    threads = prop_def(IntegerAttr[I32])

    assembly_format = "$id `,` $threads attr-dict"

    def __init__(self, id: int, threads: int):
        super().__init__(
            properties={"id": IntegerAttr(id, i32), "threads": IntegerAttr(threads, i32)}
        )

    def verify_(self) -> None:
        barrier, threads = self.id.value.data, self.threads.value.data
        # rule: W10
        if not 0 <= barrier < NAMED_BARRIERS:
            raise Error(
                f"named barrier id must be in [0, {NAMED_BARRIERS}), got {barrier}",
                note="a CTA has 16 named barriers: use an id in 0..15",
            )
        role = enclosing_role(self)
        kernel = enclosing_kernel(self)
        # rule: W12
        if threads < WARP or threads % WARP:
            raise Error(
                f"a named barrier counts whole warps: threads must be a positive multiple of "
                f"32, got {threads}",
                note=f"use {max(WARP, threads + (-threads) % WARP)}",
            )
        block = kernel_block_threads(kernel) if kernel is not None else None
        # rule: W12
        if block is not None and threads > block:
            raise Error(
                f"named barrier {barrier} waits for {threads} threads, but the block has {block}",
                note=f"count at most the block's {block} threads",
            )
        # rule: W8
        if barrier == 0 and role is not None:
            raise Error(
                "named barrier 0 is the block's barrier (__syncthreads), but this is inside a role",
                note=f"use id {len(role[0].roles) + 1} (or another up to 15) for the warps that "
                "meet here",
            )


@copy_op_definition
class NamedBarrierSyncOp(_NamedBarrierOp):
    """
    Waits at named barrier `id` until `threads` threads (whole warps) have arrived or
    synced on it (`barrier.sync id, threads`): the warps of the roles that meet here.

    ```mlir
    copy.named_barrier_sync 3, 256
    ```
    """

    name = "copy.named_barrier_sync"


@copy_op_definition
class NamedBarrierArriveOp(_NamedBarrierOp):
    """
    Arrives at named barrier `id` without waiting (`barrier.arrive id, threads`): a producer
    signals warps that `copy.named_barrier_sync` on it.

    ```mlir
    copy.named_barrier_arrive 3, 256
    ```
    """

    name = "copy.named_barrier_arrive"
