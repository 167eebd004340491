"""The copy protocol of whole kernels, proven before they run (rules P1..P13).

Every rule the op verifiers check is about one op; the protocol analysis checks what is
between ops: that SMEM an async copy fills is read only after the wait that completes it
(P1), that SMEM is not rewritten while a TMA store or threads may still read it (P2, P3),
that threads' writes are fenced before the TMA unit reads them (P4),
that every barrier phase gets exactly its arrivals and bytes and every wait a phase that
completes (P5, P6), that nothing is in flight when the kernel returns (P7, P8, P12), that
computed barrier indices are in range (P9), that ops one thread issues or the whole block
must reach are not under thread-dependent control flow (P10), that TMEM registers are
used only after their load completes (P11), and that the threads that meet at a named
barrier are the count it names (P13).

It walks each kernel in program order (`walk`: one agent for the block, and one per role of
a `copy.warp_specialize`, run at once and scheduled by `run`, sharing `steps`), each op
followed by the handler the table of `dispatch` names for it: `ops_scf` (scf.if, scf.for,
scf.while, and the unknowns the driver must choose), `ops_barriers`, `ops_copies`,
`ops_dsmem`, `ops_tensormaps`, `ops_tmem` and `ops_roles` (warp_specialize, named
barriers). It keeps a model of one CTA (`state`), one part per concern: the thread classes'
vector clocks (`clocks`, happens-before), the mbarriers (`mbarriers`) and the waits on them
(`waits`), the named barriers (`named`), the issuers' bulk and cp.async groups (`groups`),
SMEM and its races (`smem`), the async copies as issued (`copies`), the tensor maps
(`tensormaps`), TMEM (`tmem`), and what may not be in flight at the end (`ends`), with the
records they share in `records`. It computes the values the protocol depends on (`values`);
block-uniform unknowns that decide it (a trip count, a branch condition, a barrier_test's
result) are chosen by the driver (`analysis`, with what every run shares in `facts`), which
runs the kernel for each choice and, with roles, each role priority; a few counts stand for
the others by a run's prefix (`choices`) or by cutting its laps (`cuts`), and a long loop of
a constant count is proven as one of a count to choose (`general`). What it cannot prove
is a warning that says what to add (`findings`). docs/design.md ("The protocol analysis")
says what it models and what not.
"""

import warnings

from xdsl.ir import Operation

from analysis.protocol.analysis import check_kernel, check_protocol
from analysis.protocol.findings import ProtocolFinding, Related
from copy_dialect.effects import op_name
from copy_dialect.errors import user_stacklevel


class ProtocolWarning(UserWarning):
    """What the protocol analysis cannot prove (the message says what to add)."""


def verify_protocol(module: Operation) -> None:
    """Raise the kernel's first protocol error (a `ProtocolFinding`, which is a
    `VerifyException`), and warn (`ProtocolWarning`) for what cannot be proven. The
    builders, `compile_module` and `runtime.compile` call it; copy-opt prints every finding
    as a diagnostic instead."""
    findings = check_protocol(module)
    for finding in findings:
        if finding.severity == "warning":
            warnings.warn(ProtocolWarning(render(finding)), stacklevel=user_stacklevel())
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        raise errors[0]


def render(finding: ProtocolFinding) -> str:
    """A finding as one text: the message, the ops it names, the fix, and the choice of
    trip counts or branches it was found for."""
    own = f"'{op_name(finding.op)}' "
    lines = [f"{own}op {str(finding).removeprefix(own)}"]
    lines += [f"  note: '{op_name(r.op)}' op: {r.text}" for r in finding.related]
    lines.append(f"  note: {finding.note}")
    if finding.context:
        lines.append(f"  note: {finding.context}")
    return "\n".join(lines)


__all__ = [
    "ProtocolFinding",
    "ProtocolWarning",
    "Related",
    "check_kernel",
    "check_protocol",
    "render",
    "verify_protocol",
]
