"""Effect declarations (rule FX1): an op's `copy.effects` (`copy_dialect.effects`) is a list
of `#copy.effect<...>`, on an op whose effects the protocol analysis does not know already,
each naming an operand of the op that lies in SMEM or points into it (`analysis.smem_values`):
a declaration the analysis cannot place on a buffer would prove nothing."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import Operation

from analysis.kernel.kernel import Kernel
from analysis.smem_values import owned, smem_values
from copy_dialect.effects import EFFECTS, EffectAttr, op_name
from copy_dialect.errors import CopyVerifyException as Error

SYNTAX = (
    "copy.effects = [#copy.effect<read N>, #copy.effect<write N>, "
    "#copy.effect<async_read N until wait_group>, "
    "#copy.effect<async_read N until wgmma_wait_group>] (N: the operand), or [] for none"
)


def check_effect_declarations(kernel: Kernel) -> Iterator[tuple[Operation, Error]]:
    """Each `copy.effects` of the kernel names SMEM operands of an op the analysis does not
    own."""
    values = None
    for op in kernel.ops:
        attr = op.attributes.get(EFFECTS)
        if attr is None:
            continue
        if not isinstance(attr, ArrayAttr) or not all(isinstance(e, EffectAttr) for e in attr.data):
            # rule: FX1
            yield (
                op,
                Error(
                    f"{EFFECTS} on {op_name(op)} is not a list of #copy.effect",
                    note=f"write {SYNTAX}",
                ),
            )
            continue
        if owned(op) and not op.name.startswith("copy."):
            # (A copy op's own verifier rejects the attribute: AT1.)
            # rule: FX1
            yield (
                op,
                Error(
                    f"the protocol analysis knows the SMEM effects of {op_name(op)}: it takes no "
                    f"{EFFECTS}",
                    note=f"drop {EFFECTS}",
                ),
            )
            continue
        if values is None:
            values = smem_values(kernel.op)
        for effect in attr.data:
            assert isinstance(effect, EffectAttr)
            n = effect.index
            if n >= len(op.operands):
                # rule: FX1
                yield (
                    op,
                    Error(
                        f"{EFFECTS} declares a {effect.kind.data} of operand {n}, but "
                        f"{op_name(op)} has {len(op.operands)} "
                        f"operand{'s' if len(op.operands) != 1 else ''}",
                        note="name an operand by its position, from 0",
                    ),
                )
                break
            if op.operands[n] not in values.origins:
                smem = [i for i, v in enumerate(op.operands) if v in values.origins]
                where = (
                    f"its SMEM operand{'s are' if len(smem) > 1 else ' is'} "
                    + ", ".join(map(str, smem))
                    if smem
                    else "it takes no SMEM value"
                )
                # rule: FX1
                yield (
                    op,
                    Error(
                        f"{EFFECTS} declares a {effect.kind.data} of operand {n} of {op_name(op)}, "
                        "which is not SMEM (a copy.alloc_smem buffer, or a view, pointer or "
                        f"descriptor computed from one): {where}",
                        note="declare the effects on SMEM operands only"
                        + (f" (operand {smem[0]})" if smem else f"; drop {EFFECTS}"),
                    ),
                )
                break
