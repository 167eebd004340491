"""Bulk and cp.async groups: `copy.commit_group` and `copy.wait_group`."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    I32,
    IntegerAttr,
    UnitAttr,
    i32,
)
from xdsl.ir import (
    Operation,
)
from xdsl.irdl import (
    IRDLOperation,
    opt_prop_def,
    prop_def,
)

from copy_dialect.attributes import GroupKind, GroupKindAttr
from copy_dialect.errors import CopyVerifyException as Error
from copy_dialect.portability import legalize_hint
from copy_dialect.verification import copy_op_definition
from copy_dialect.verify_common import enclosing_target, feature_error
from facts.target import BULK_GROUPS


@copy_op_definition
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


@copy_op_definition
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
        # rule: I10
        if not 0 <= pending <= 63:
            raise Error(
                f"pending must be in [0, 63], got {pending}",
                note="it counts committed groups still allowed in flight: use 0 to 63",
            )
        # rule: I11
        if self.is_read_only and group != GroupKind.BULK:
            raise Error(
                "read_only applies to bulk groups only",
                note="cp.async groups complete when their writes land; drop read_only",
            )


def verify_group_target(op: Operation, group: GroupKind) -> None:
    target = enclosing_target(op)
    # rule: A1
    if group == GroupKind.BULK and target is not None and not BULK_GROUPS.has(target):
        raise feature_error(
            op,
            BULK_GROUPS,
            target,
            uses="with bulk",
            note="use copy.commit_group cp_async / copy.wait_group cp_async for cp.async loads"
            + legalize_hint(target),
        )
