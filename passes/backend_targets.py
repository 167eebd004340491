"""What the backend reads of the target table (facts.target): LLVM's NVPTX cpu and features
of each target, the nvJitLink architecture a target's PTX is assembled for, and the error
the backend raises. The backend works on `Target` objects; its entries that take a name
resolve it once (`backend_target`). The client (`backend`), its worker process
(`backend_worker`) and nvJitLink (`backend_nvjitlink`) share them."""

from __future__ import annotations

from xdsl.utils.exceptions import DiagnosticException

from facts.target import TARGETS, Target, UnknownTarget, check_arch, target_named

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"

TARGET_CODEGEN: dict[str, tuple[str, str]] = {
    name: (t.llvm_cpu, t.llvm_features) for name, t in TARGETS.items()
}
"""Target -> (llvmlite cpu, features), read from the one target table (facts.target)."""


class BackendError(DiagnosticException):
    """LLVM or nvJitLink rejected the input; the message is theirs. `log` is the whole log."""

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log


class AssemblerWarning(UserWarning):
    """ptxas, inside nvJitLink, made the cubin slower than the PTX asks (its "Potential
    Performance Loss" lines: `backend_nvjitlink.performance_notes`); the message is ptxas's
    line and what it means for the kernel."""


PERFORMANCE_HINTS = {
    "C7509": "a call in the kernel (a 64-bit division or remainder by a value is one: "
    "ptxas makes it a subroutine) makes ptxas wait for each wgmma before the next; compute "
    "such index math in i32 (arith.index_cast to i32 around the division)",
    "C7504": "nvJitLink assembles PTX as a separately compiled unit, where ptxas ignores "
    "setmaxnreg: every warpgroup keeps the kernel's register count; with a ptxas on PATH "
    "the backend assembles such a kernel as a whole program instead, which applies it",
}
"""What a ptxas performance note (by its code) means for a kernel of this project, and
what to do about it."""


def performance_warning(target: str, note: str) -> AssemblerWarning:
    """The warning of one ptxas performance note for `target`'s cubin."""
    code = note[1:6] if note.startswith("(C") else ""
    hint = PERFORMANCE_HINTS.get(code)
    return AssemblerWarning(f"{target}: ptxas: {note}" + (f" ({hint})" if hint else ""))


def backend_target(target: Target | str, what: str = "target") -> Target:
    """The target a backend entry is given, resolved once there (a name: from the target
    table; `what` names the argument in the error)."""
    if isinstance(target, Target):
        return target
    try:
        return target_named(target, what)
    except UnknownTarget as exc:
        raise BackendError(str(exc)) from None


def nvjitlink_arch(target: Target, arch: Target | None) -> str:
    """nvJitLink's `-arch` for PTX of `target`: `arch`'s, or the target's own. Whether `arch`
    runs `target`'s PTX is checked once per compile, by the entry that takes it
    (`check_assembles`)."""
    return (arch or target).llvm_cpu


def check_assembles(target: Target, arch: Target | None) -> None:
    """A BackendError unless `target`'s PTX assembles for `arch` (`facts.target.check_arch`);
    nothing to check without an `arch`."""
    if arch is None or arch == target:
        return
    try:
        check_arch(target, arch)
    except ValueError as exc:
        raise BackendError(str(exc)) from None
