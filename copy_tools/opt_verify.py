"""Verification for copy-opt: op by op (nested ops first), each failing op reported at its
location, then SSA dominance; and where to report a diagnostic about an op."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import CallSiteLoc, FileLineColLoc, FusedLoc, ModuleOp, NameLoc
from xdsl.ir import Attribute, ErasedSSAValue, Operation
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from copy_dialect.dominance import non_dominating_uses
from copy_dialect.protocol import check_protocol
from copy_tools.diagnostics import Diagnostic, SourceLocation
from copy_tools.opt_errors import internal_error


def _file_location(loc: Attribute) -> SourceLocation | None:
    """The file position inside a location attribute, if it has one."""
    match loc:
        case FileLineColLoc():
            return SourceLocation(loc.filename.data, loc.line.data, loc.column.data)
        case NameLoc():
            return _file_location(loc.location)
        case CallSiteLoc():
            return _file_location(loc.callee)
        case FusedLoc():
            for inner in loc.locations.data:  # pyright: ignore[reportAttributeAccessIssue]
                if (found := _file_location(inner)) is not None:
                    return found
    return None


def op_location(op: Operation, fallback: SourceLocation) -> SourceLocation:
    """Where to report a diagnostic about `op`.

    The op's own file location, else (ops created by passes have none) that of the
    nearest enclosing op that has one, else `fallback` (the start of the chunk).
    """
    current: Operation | None = op
    while current is not None:
        if (loc := _file_location(current.location)) is not None:
            return loc
        current = current.parent_op()
    return fallback


def exception_location(exc: BaseException, fallback: SourceLocation) -> SourceLocation:
    """Where a pass or the translation failed: at the op the exception names, if any."""
    op = getattr(exc, "op", None)
    return op_location(op, fallback) if isinstance(op, Operation) else fallback


def post_order(root: Operation) -> Iterator[Operation]:
    """Ops nested in `root` and `root`, nested ops before their parent (no recursion)."""
    stack: list[tuple[Operation, bool]] = [(root, False)]
    while stack:
        op, children_done = stack.pop()
        if children_done:
            yield op
            continue
        stack.append((op, True))
        children = [
            child for region in op.regions for block in region.blocks for child in block.ops
        ]
        stack.extend((child, False) for child in reversed(children))


def verify_op(op: Operation) -> None:
    """`op.verify(verify_nested_ops=False)` without xDSL's error path.

    xdsl 0.75's `Operation.verify` reports a failing `verify_()` through `emit_error`, which
    prints the whole module into the exception's notes, once per failing op: copy-opt took
    8 minutes on a 4000-op module with 4000 errors. The block-structure checks below are
    those of `Operation.verify` (they raise without printing anything); `verify_()` then runs
    directly.
    """
    _check_no_empty_blocks(op)
    if any(isinstance(operand, ErasedSSAValue) for operand in op.operands):
        raise VerifyException("an erased value is still used by the op")
    block = op.parent
    region = None if block is None else block.parent
    if op.successors:
        if block is None or region is None:
            raise VerifyException(
                f"Operation {op.name} with block successors does not belong to a block or a region"
            )
        if block.last_op is not op:
            raise VerifyException(
                f"Operation {op.name} with block successors must terminate its parent block"
            )
        if any(succ.parent != region for succ in op.successors):
            raise VerifyException(
                f"Operation {op.name} is branching to a block of a different region"
            )
    if block is not None and region is not None and block.last_op is op:
        if len(region.blocks) == 1:
            parent = region.parent
            if parent is not None and not parent.has_trait(NoTerminator):
                if not op.has_trait(IsTerminator):
                    raise VerifyException(
                        f"Operation {op.name} terminates block in single-block region but is "
                        "not a terminator"
                    )
        elif not op.has_trait(IsTerminator):
            raise VerifyException(
                f"Operation {op.name} terminates block in multi-block region but is not a "
                "terminator"
            )
    op.verify_()


def _check_no_empty_blocks(op: Operation) -> None:
    """The check that xDSL's Block.verify makes on the blocks of `op` (not recursive)."""
    for region in op.regions:
        if len(region.blocks) == 1 and not region.blocks[0].ops and not op.has_trait(NoTerminator):
            raise DiagnosticException(
                "contains an empty block in a single-block region that expects "
                "at least a terminator"
            )


def verify_diagnostics(
    module: ModuleOp, fallback: SourceLocation, after_pass: str | None, protocol: bool = True
) -> list[Diagnostic]:
    """Verify op by op, nested ops first; one error (plus notes) per failing op; then SSA
    dominance; then, with `protocol`, the copy protocol of each kernel (its errors and
    warnings). `after_pass` names the pass that ran last, if any (a note blames it)."""
    diagnostics: list[Diagnostic] = []
    for op in post_order(module):
        loc = op_location(op, fallback)
        try:
            verify_op(op)
        except (RecursionError, MemoryError):
            raise
        except DiagnosticException as exc:
            diagnostics.append(Diagnostic("error", loc, f"'{op.name}' op {exc}"))
            note = getattr(exc, "note", None)
            if isinstance(note, str) and note:
                diagnostics.append(Diagnostic("note", loc, note))
            if after_pass is not None:
                diagnostics.append(
                    Diagnostic("note", loc, f"the op was left invalid by pass '{after_pass}'")
                )
        except Exception as exc:
            diagnostics.extend(internal_error(f"verifier of '{op.name}'", exc, loc))
    if diagnostics:
        return diagnostics
    # As in mlir-opt, dominance is checked once every op verified.
    diagnostics = dominance_diagnostics(module, fallback, after_pass)
    if diagnostics or not protocol:
        return diagnostics
    # The copy protocol of whole kernels, once every op and value is well formed.
    try:
        findings = check_protocol(module)
    except (RecursionError, MemoryError):
        raise
    except Exception as exc:
        return internal_error("the protocol analysis", exc, fallback)
    for finding in findings:
        loc = op_location(finding.op, fallback)
        diagnostics.append(Diagnostic(finding.severity, loc, f"'{finding.op.name}' op {finding}"))
        for related in finding.related:
            diagnostics.append(Diagnostic("note", op_location(related.op, fallback), related.text))
        diagnostics.append(Diagnostic("note", loc, finding.note or ""))
        if finding.context:
            diagnostics.append(Diagnostic("note", loc, finding.context))
    return diagnostics


def dominance_diagnostics(
    module: ModuleOp, fallback: SourceLocation, after_pass: str | None
) -> list[Diagnostic]:
    """mlir-opt's `operand #N does not dominate this use`, with notes, per bad use."""
    diagnostics: list[Diagnostic] = []
    for use in non_dominating_uses(module):
        loc = op_location(use.user, fallback)
        definer = use.definer
        diagnostics.append(Diagnostic("error", loc, use.message))
        where = loc if definer is None else op_location(definer, fallback)
        diagnostics.append(Diagnostic("note", where, use.defined_here))
        diagnostics.append(Diagnostic("note", loc, use.fix))
        if after_pass is not None:
            diagnostics.append(
                Diagnostic("note", loc, f"the op was left invalid by pass '{after_pass}'")
            )
    return diagnostics
