"""Lowers `copy.warp_specialize`: once the ops in its roles are lowered (each issued by its
role: `kernel.open_role` emitted the role's prologue), the block is split by warp index. The
warp index is read once, warp-uniformly (`shfl.sync` of `tid.x / 32` from lane 0, as
CUTLASS's `canonical_warp_idx_sync`); role r's body runs under `first_r <= warp < last_r`,
and a block barrier (`bar.sync 0`) joins the roles at the op's end."""

from __future__ import annotations

from xdsl.dialects import llvm, scf
from xdsl.dialects.builtin import i32
from xdsl.pattern_rewriter import PatternRewriter, op_type_rewrite_pattern

from copy_dialect import ops as copy
from passes import nvvm
from passes.convert_copy_to_nvvm.emit import Emit
from passes.convert_copy_to_nvvm.kernel import KernelPattern


class LowerWarpSpecialize(KernelPattern):
    """`copy.warp_specialize` -> one `scf.if` per role on the warp index, then `bar.sync 0`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: copy.WarpSpecializeOp, rewriter: PatternRewriter, /):
        e = Emit()
        tid = e.resize(e.sreg("tid.x"), i32)
        warp = e(
            llvm.InlineAsmOp(
                "shfl.sync.idx.b32 $0, $1, 0, 0x1f, 0xffffffff;",
                "=r,r",
                [e.binary(llvm.LShrOp, tid, 5)],
                [i32],
                has_side_effects=False,
            )
        ).results[0]
        for role, region in enumerate(op.roles):
            first = op.first_warp(role)
            last = first + op.role_warps[role]
            inside = e.icmp("ult", warp, last)
            if first:
                inside = e(llvm.AndOp(e.icmp("uge", warp, first), inside)).results[0]
            body = region.detach_block(0)
            # open_role replaced the body's argument (the thread's index in the role).
            body.erase_arg(body.args[0])
            body.add_op(scf.YieldOp())
            e(scf.IfOp(inside, [], [body]))
        e(nvvm.Barrier0Op())
        rewriter.replace(op, e.ops, [])
