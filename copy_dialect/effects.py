"""SMEM effects an op declares: `copy.effects = [#copy.effect<...>, ...]`, a discardable
attribute any op the protocol analysis does not own may carry (an unregistered op, an
`llvm.inline_asm`, an upstream op whose traits say too little), naming which of its operands
it reads or writes and how.

Mirrors MLIR's `MemoryEffects` (`MemRead`/`MemWrite` on a value; xDSL's `EffectInstance`,
`xdsl.traits.get_effects`), with one addition MLIR has no word for: a read that goes on after
the op returns, until a wait of the issuing threads (wgmma and tcgen05.mma read their SMEM
operands asynchronously).

```mlir
"nv.mma"(%a, %b) {copy.effects = [#copy.effect<async_read 0 until wait_group>,
                                  #copy.effect<read 1>]}
    : (memref<64x64xf16, #copy.smem>, !llvm.ptr<3>) -> ()
%d = llvm.inline_asm has_side_effects "wgmma.mma_async...", "..." %da, %db
    {copy.effects = [#copy.effect<async_read 0 until wgmma_wait_group>,
                     #copy.effect<async_read 1 until wgmma_wait_group>]} : (i64, i64) -> ...
```

- `read N`, `write N`: the threads that reach the op read or write the SMEM operand N
  points into before the op returns (as `memref.load`/`memref.store`: P1-P3 apply);
- `async_read N until wait_group`: the op reads it after it returns, until its issuer's
  `copy.wait_group bulk` completes the bulk group it joins (as a TMA store: committed by
  `copy.commit_group bulk`, P2, P4, P7);
- `async_read N until wgmma_wait_group`: the op reads it after it returns, until the
  `nvvm.wgmma.wait.group.sync.aligned` of its warpgroup that retires the wgmma group it
  joins (as `nvvm.wgmma.mma_async` reads through its descriptors: committed by
  `nvvm.wgmma.commit.group.sync.aligned`; P1, P2, P4, P7);
- `copy.effects = []`: the op does not access the memory its operands point into (it computes
  an address or a descriptor: its results are derived from the SMEM, as a view's).

`analysis/kernel/effects.py` checks that each operand named is one of the op's and lies in
SMEM (rule FX1); docs/design.md ("The protocol analysis") says how the proof reads them."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr, UnregisteredOp
from xdsl.ir import Attribute, Operation, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum

from copy_dialect.errors import CopyVerifyException as Error

EFFECTS = "copy.effects"
"""The discardable attribute that declares an op's SMEM effects."""


class EffectKind(StrEnum):
    READ = "read"
    WRITE = "write"
    ASYNC_READ = "async_read"


class Until(StrEnum):
    """What ends an asynchronous read."""

    NONE = ""
    WAIT_GROUP = "wait_group"
    """The issuer's `copy.wait_group bulk` that completes the bulk group the read joined."""
    WGMMA_WAIT_GROUP = "wgmma_wait_group"
    """The warpgroup's `nvvm.wgmma.wait.group.sync.aligned` that retires the wgmma group the
    read joined."""


@irdl_attr_definition
class EffectAttr(ParametrizedAttribute):
    """One SMEM effect of an op on one of its operands: `#copy.effect<read 0>`,
    `#copy.effect<write 1>`, `#copy.effect<async_read 0 until wait_group>`,
    `#copy.effect<async_read 0 until wgmma_wait_group>`."""

    name = "copy.effect"

    kind: StringAttr = param_def()
    operand: IntAttr = param_def()
    until: StringAttr = param_def()

    def __init__(self, kind: EffectKind, operand: int, until: Until = Until.NONE):
        super().__init__(StringAttr(kind), IntAttr(operand), StringAttr(until))

    @property
    def effect(self) -> EffectKind:
        return EffectKind(self.kind.data)

    @property
    def index(self) -> int:
        return self.operand.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            kinds = [k.value for k in EffectKind]
            kind = parser.parse_optional_identifier()
            if kind not in kinds:
                # rule: FX1
                parser.raise_error(f"expected an effect kind ({', '.join(kinds)})")
            operand = parser.parse_integer(allow_boolean=False, allow_negative=False)
            until = ""
            if parser.parse_optional_keyword("until") is not None:
                until = parser.parse_identifier()
        return (StringAttr(kind), IntAttr(operand), StringAttr(until))

    def print_parameters(self, printer: Printer) -> None:
        until = f" until {self.until.data}" if self.until.data else ""
        printer.print_string(f"<{self.kind.data} {self.operand.data}{until}>")

    def verify(self) -> None:
        kinds = [k.value for k in EffectKind]
        if self.kind.data not in kinds:
            # rule: FX1
            raise Error(
                f"unknown effect kind '{self.kind.data}'",
                note=f"an effect is one of {', '.join(kinds)}",
            )
        if self.operand.data < 0:
            # rule: FX1
            raise Error(f"effect on operand {self.operand.data}", note="operands count from 0")
        waits = [u.value for u in Until if u.value]
        if self.kind.data == EffectKind.ASYNC_READ and self.until.data not in waits:
            # rule: FX1
            raise Error(
                "an async_read needs the wait that ends it"
                + (f", not '{self.until.data}'" if self.until.data else ""),
                note=f"write #copy.effect<async_read {self.operand.data} until wait_group> "
                "(the issuer's copy.wait_group bulk that completes the bulk group it joins) or "
                f"#copy.effect<async_read {self.operand.data} until wgmma_wait_group> (the "
                "nvvm.wgmma.wait.group.sync.aligned that retires the wgmma group it joins)",
            )
        if self.kind.data != EffectKind.ASYNC_READ and self.until.data:
            # rule: FX1
            raise Error(
                f"a {self.kind.data} ends when the op returns: it takes no 'until'",
                note=f"write #copy.effect<{self.kind.data} {self.operand.data}>, or "
                f"#copy.effect<async_read {self.operand.data} until wait_group> for a read "
                "that goes on after the op",
            )


def declared_effects(op: Operation) -> tuple[EffectAttr, ...] | None:
    """The effects `op` declares (`copy.effects`), or None when it declares none (an
    attribute of another shape is the kernel rule's error, and declares none here)."""
    attr = op.attributes.get(EFFECTS)
    if not isinstance(attr, ArrayAttr):
        return None
    effects = tuple(e for e in attr.data if isinstance(e, EffectAttr))
    return effects if len(effects) == len(attr.data) else None


def op_name(op: Operation) -> str:
    """The name an op is written with (xDSL names every unregistered op
    `builtin.unregistered`, and keeps the written one apart)."""
    return op.op_name.data if isinstance(op, UnregisteredOp) else op.name
