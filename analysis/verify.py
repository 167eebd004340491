"""The whole verification of a module, as every path runs it (`passes.pipeline.verify_module`,
so `compile_module` and `runtime.compile`, and the builders of `frontends.kernels`; copy-opt
runs the same steps and prints every diagnostic): every op's verifier, SSA dominance, then the
copy protocol of each kernel, in one verification run (the analysis reads the facts the op
verifiers derived)."""

from __future__ import annotations

from xdsl.ir import Operation

from analysis.dominance import verify_dominance
from analysis.protocol import verify_protocol
from copy_dialect.verification import op_errors, verification_run


def verify_module(module: Operation) -> None:
    """Raise the first error (a VerifyException); what the protocol analysis cannot prove is
    a `ProtocolWarning`."""
    with verification_run():
        errors = op_errors(module)
        if errors:
            raise errors[0][1]
        verify_dominance(module)  # type: ignore[arg-type]
        verify_protocol(module)
