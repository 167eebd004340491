"""The whole verification of a module, as every path runs it (`passes.pipeline`, so
`compile_module` and `runtime.compile`, the builders of `frontends.kernels`, and copy-opt,
which prints every diagnostic): every op's verifier and the kernel rules
(`verification_errors`), SSA dominance, then the copy protocol of each kernel, in one
verification run (the analysis reads the facts the op verifiers derived)."""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from analysis.dominance import verify_dominance
from analysis.kernel import kernel_errors, kernels
from analysis.protocol import verify_protocol
from copy_dialect.verification import op_errors, post_order, verification_run


def verification_errors(module: Operation) -> list[tuple[Operation, Exception]]:
    """Each op that fails its verifier or a kernel rule, with the error, in the order the
    op verifiers run (nested ops first); one error per op. A kernel's rules are checked
    once every op of the kernel verified (they read well-formed ops only)."""
    with verification_run():
        errors = op_errors(module)
        failed = {id(op) for op, _ in errors}
        broken = (
            [k for k in kernels(module) if any(id(op) in failed for op in k.walk())]
            if failed
            else []
        )
        count = len(errors)
        for op, error in kernel_errors(module, skip=broken):
            if id(op) not in failed:
                failed.add(id(op))
                errors.append((op, error))
        if len(errors) == count:
            return errors
        rank = {id(op): n for n, op in enumerate(post_order(module))}
        return sorted(errors, key=lambda e: rank[id(e[0])])


def verify_module(module: Operation, *, protocol: bool = True) -> None:
    """Raise the module's first error as the `CopyDiagnosticError` copy-opt's text is (every
    failing op at its location, the source line, every note: `analysis.report.failure`);
    what the protocol analysis cannot prove is a `ProtocolWarning`. `protocol=False` leaves
    the protocol out (the interpreter checks a run's protocol itself)."""
    try:
        check_module(module, protocol=protocol)
    except DiagnosticException as exc:
        from analysis.report import Sources, failure  # it verifies with this module's code

        raise failure(exc, module, Sources(), protocol=protocol) from None


def check_module(module: Operation, *, protocol: bool = True) -> None:
    """`verify_module`'s checks, the first error raised as its check raised it (a
    VerifyException: the message alone, its `note` and `rules`)."""
    with verification_run():
        errors = verification_errors(module)
        if errors:
            raise errors[0][1]
        verify_dominance(module)  # type: ignore[arg-type]
        if protocol:
            verify_protocol(module)
