"""Cubins from PTX by nvJitLink (`cuda.bindings.nvjitlink`): `compile_cubin` in this
process, and the linking steps the backend's worker process runs for
`backend.compile_ptx_and_cubin`. nvJitLink reports errors through its log and does not
abort; a rejection is a `BackendError` with that log."""

from __future__ import annotations

from typing import Any

from facts.target import Target
from passes.backend_targets import BackendError, backend_target, check_assembles, nvjitlink_arch


def compile_cubin(ptx: str, target: Target | str, arch: Target | str | None = None) -> bytes:
    """A cubin (ELF) from PTX for `target`, by nvJitLink in this process: SASS for `arch`
    (a later GPU that runs `target`'s PTX, as CUDA's compute_80 -> sm_90), by default the
    target's own."""
    resolved = backend_target(target)
    gpu = None if arch is None else backend_target(arch, "GPU arch")
    check_assembles(resolved, gpu)
    sass = nvjitlink_arch(resolved, gpu)
    try:
        from cuda.bindings import nvjitlink
    except ImportError as exc:
        raise BackendError(
            f"compile_cubin needs nvJitLink: pip install cuda-bindings nvidia-nvjitlink ({exc})"
        ) from None
    try:
        options = nvjitlink_options(sass)
        handle = nvjitlink.create(len(options), options)
    except Exception as exc:  # the library could not be found or loaded
        raise BackendError(f"nvJitLink is not usable: {exc}") from None
    try:
        return link(nvjitlink, handle, ptx)
    except nvjitlink.nvJitLinkError as exc:
        log = nvjitlink_log(nvjitlink, handle)
        raise BackendError(rejected(resolved.name, str(exc), log), log) from None
    finally:
        nvjitlink.destroy(handle)


def nvjitlink_options(arch: str) -> list[str]:
    """`-no-cache`: nvJitLink does not cache its intermediate steps (nothing reads them
    back: a handle links one PTX input once); the same cubin, about 0.2 ms sooner."""
    return [f"-arch={arch}", "-O3", "-no-cache"]


def link(nvjitlink: Any, handle: int, ptx: str) -> bytes:
    data = ptx.encode()
    nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
    nvjitlink.complete(handle)
    cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
    nvjitlink.get_linked_cubin(handle, cubin)
    return bytes(cubin)


PERFORMANCE_LOSS = "Potential Performance Loss"
"""What ptxas's info lines about code it could not make as fast as the PTX asks begin with
(C75xx: wgmma serialized, setmaxnreg ignored, ...)."""


def performance_notes(nvjitlink: Any, handle: int) -> list[str]:
    """ptxas's performance-loss lines in nvJitLink's info log ("(C7509) Potential
    Performance Loss: wgmma.mma_async instructions are serialized ..."), without the
    "ptxas info :" prefix."""
    size = nvjitlink.get_info_log_size(handle)
    if not size:
        return []
    log = bytearray(size)
    nvjitlink.get_info_log(handle, log)
    return performance_lines(log.rstrip(b"\0").decode(errors="replace"))


def performance_lines(log: str) -> list[str]:
    """ptxas's performance-loss lines of a log (nvJitLink's info log, ptxas's stderr),
    without their "ptxas info :" prefix."""
    return [line.partition(":")[2].strip() for line in log.splitlines() if PERFORMANCE_LOSS in line]


def rejected(target: str, error: str, log: str) -> str:
    return f"nvJitLink rejected the PTX for {target}: {log or error}"


def nvjitlink_log(nvjitlink: Any, handle: int) -> str:
    size = nvjitlink.get_error_log_size(handle)
    if not size:
        return ""
    log = bytearray(size)
    nvjitlink.get_error_log(handle, log)
    return log.rstrip(b"\0").decode(errors="replace").strip()
