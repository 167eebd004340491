"""What the backend reads of the target table (facts.target): LLVM's NVPTX cpu and features
of each target, the nvJitLink architecture a target's PTX is assembled for, and the error
the backend raises. The client (`backend`), its worker process (`backend_worker`) and
nvJitLink (`backend_nvjitlink`) share them."""

from __future__ import annotations

from xdsl.utils.exceptions import DiagnosticException

from facts.target import TARGETS, UnknownTarget, check_arch

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


def codegen_options(target: str) -> tuple[str, str]:
    if target not in TARGET_CODEGEN:
        raise BackendError(str(UnknownTarget(target)))
    return TARGET_CODEGEN[target]


def nvjitlink_arch(target: str, arch: str | None) -> str:
    """nvJitLink's `-arch` for PTX of `target`: `arch`'s, or the target's own. Whether `arch`
    runs `target`'s PTX is checked once per compile, by the entry that takes it
    (`check_assembles`)."""
    cpu, _ = codegen_options(target)
    if arch is None or arch == target:
        return cpu
    return codegen_options(arch)[0]


def check_assembles(target: str, arch: str | None) -> None:
    """A BackendError unless `target`'s PTX assembles for `arch` (`facts.target.check_arch`);
    nothing to check without an `arch`."""
    if arch is None or arch == target:
        return
    try:
        check_arch(target, arch)
    except ValueError as exc:
        raise BackendError(str(exc)) from None
