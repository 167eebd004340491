"""PTX and cubins from LLVM IR: llvmlite's NVPTX backend, then nvJitLink.

`compile_ptx` runs llvmlite (LLVM 22.1 with NVPTX) in a worker process. The LLVM in
llvmlite is built with assertions, and LLVM ends the process on a fatal error: an intrinsic
the target lacks (`LLVM ERROR: Cannot select: intrinsic ...`, exit 134), a cpu/PTX pair it
rejects, an immarg that is not a constant (docs/hardware.md). Such a crash ends the
worker only; it becomes a `BackendError` with LLVM's message, and the next call starts a new
worker. The worker is started once and reused (start-up, mostly `import llvmlite`, costs
about 60 ms; a request on a warm worker costs a few ms), and `start_worker()` lets a driver
start it early, while it parses and lowers.

`compile_cubin` runs nvJitLink (`cuda.bindings.nvjitlink`) in this process: it reports
errors through its log and does not abort. `compile_ptx_and_cubin` has the worker run both
steps in one request (what `passes.pipeline.compile_module` uses): no second round trip, the
caller's process is free while nvJitLink runs, and the worker's allocator is tuned for
nvJitLink, which allocates and zeroes tens of megabytes on every call. Neither step needs a
GPU or ptxas. nvJitLink assembles its PTX as a separately compiled unit, where ptxas ignores
`setmaxnreg` (note C7504): `whole_program` has a ptxas on PATH, where there is one, assemble
such a kernel again as a whole program.

This module is the client: the requests, and the worker's life (start, reuse, a crash's
message). The modules it uses: `backend_targets` (the target table's codegen options and
architecture checks, `BackendError`), `backend_worker` (the worker process, run as a script,
and the frames it is talked to in), `backend_nvjitlink` (nvJitLink, in this process and in
the worker).
"""

from __future__ import annotations

import atexit
import base64
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from facts.target import Target
from passes import backend_worker
from passes.backend_nvjitlink import compile_cubin, performance_lines, rejected
from passes.backend_targets import (
    NVPTX_TRIPLE,
    TARGET_CODEGEN,
    BackendError,
    backend_target,
    check_assembles,
    nvjitlink_arch,
)
from passes.backend_worker import EXTERN_LLVM_FUNC, read_frame, write_frame

__all__ = [
    "NVPTX_TRIPLE",
    "TARGET_CODEGEN",
    "WORKER_TIMEOUT_S",
    "BackendError",
    "PendingCompile",
    "compile_cubin",
    "compile_ptx",
    "compile_ptx_and_cubin",
    "ptxas_available",
    "reassemble_whole_program",
    "whole_program",
    "start_worker",
    "stop_worker",
    "submit_ptx_and_cubin",
    "worker_pid",
]

WORKER_TIMEOUT_S = 300.0
"""How long one compile_ptx may take before the worker is killed."""


# --- PTX, through the worker -----------------------------------------------------------------


def compile_ptx(llvm_ir: str, target: Target | str, *, opt_level: int = 3) -> str:
    """PTX for `target` from LLVM IR text: parse, verify, optimize (O3), emit, in the worker."""
    return _request(llvm_ir, backend_target(target), opt_level)


def compile_ptx_and_cubin(
    llvm_ir: str,
    target: Target | str,
    *,
    timings: dict[str, float] | None = None,
    arch: Target | str | None = None,
) -> tuple[str, bytes]:
    """`compile_ptx` (O3), then `compile_cubin` of its PTX, both in the worker: the same PTX,
    cubin and errors as the two calls, with one round trip. `timings`, when given, receives
    the seconds each step took in the worker (for benchmarks/bench_compile.py); `arch`: as
    compile_cubin's, checked here."""
    resolved = backend_target(target)
    gpu = None if arch is None else backend_target(arch, "GPU arch")
    check_assembles(resolved, gpu)
    return submit_ptx_and_cubin(llvm_ir, resolved, timings=timings, arch=gpu).result()


def submit_ptx_and_cubin(
    llvm_ir: str,
    target: Target,
    *,
    timings: dict[str, float] | None = None,
    arch: Target | None = None,
) -> PendingCompile:
    """`compile_ptx_and_cubin`, sent to the worker now and read back by `.result()`: the
    caller works meanwhile, in this thread (a thread that sent the request instead would
    wait for the interpreter's lock, up to its 5 ms switch interval, while the caller
    computes). The worker serves no other request until `.result()` or `.discard()`. `arch`
    is the caller's to check (`check_assembles`, `facts.target.check_arch`): once per
    compile, where the compile starts (`passes.pipeline.compile_module` before lowering,
    copy-opt's `-t cubin` before translating)."""
    return PendingCompile(llvm_ir, target, timings, arch)


class PendingCompile:
    """A compile_ptx_and_cubin request the worker is working on."""

    def __init__(
        self, llvm_ir: str, target: Target, timings: dict[str, float] | None, arch: Target | None
    ):
        self.target = target
        self.timings = timings
        self.gpu = arch
        self.notes: list[str] = []
        """ptxas's performance-loss lines for the cubin (`backend_nvjitlink.performance_notes`;
        the whole-program ptxas's where `whole_program` assembled it again), once `result()`
        returned."""
        self.arch = nvjitlink_arch(target, arch)
        request = {
            "ir": llvm_ir,
            "cpu": target.llvm_cpu,
            "features": target.llvm_features,
            "opt": 3,
            "cubin": True,
            "arch": self.arch,
        }
        _lock.acquire()
        self.open = True
        try:
            self.worker = _current_worker()
            self.log_start = self.worker.send(request, target.name)
        except BaseException:
            self._close()
            raise

    def result(self) -> tuple[str, bytes]:
        """The PTX and the cubin (or the backend's error): nvJitLink's, or ptxas's whole
        program where nvJitLink ignored setmaxnreg (`whole_program`); `notes` its ptxas's
        performance notes."""
        assert self.open, "the reply was read already"
        try:
            reply = self.worker.receive(self.log_start, self.target.name)
        finally:
            self._close()
        ptx, cubin = _finish(reply, self.target, self.timings)
        if cubin is None:  # nvJitLink could not be loaded in the worker: its error, from here
            return ptx, compile_cubin(ptx, self.target, self.gpu)
        cubin, self.notes = whole_program(ptx, cubin, reply.get("notes", []), self.arch)
        return ptx, cubin

    def discard(self) -> None:
        """Waits for the reply and drops it, errors included (the caller has its own)."""
        if not self.open:
            return
        try:
            self.worker.receive(self.log_start, self.target.name)
        except Exception:
            pass
        finally:
            self._close()

    def _close(self) -> None:
        if self.open:
            self.open = False
            _lock.release()


def _request(llvm_ir: str, target: Target, opt_level: int) -> str:
    request = {
        "ir": llvm_ir,
        "cpu": target.llvm_cpu,
        "features": target.llvm_features,
        "opt": opt_level,
        "cubin": False,
    }
    with _lock:
        worker = _current_worker()
        reply = worker.receive(worker.send(request, target.name), target.name)
    ptx, _ = _finish(reply, target, None)
    return ptx


def _finish(
    reply: dict[str, Any], target: Target, timings: dict[str, float] | None
) -> tuple[str, bytes | None]:
    """The PTX and cubin of a reply, or its error."""
    if timings is not None:
        timings.update(reply.get("times", {}))
    if not reply["ok"]:
        raise BackendError(f"LLVM rejected the IR for {target.name}: {reply['error']}")
    ptx: str = reply["ptx"]
    # A misspelled or unknown `llvm.*` intrinsic is not an error in LLVM: it becomes a call
    # to an external function, which only the PTX assembler rejects.
    unknown = sorted(set(EXTERN_LLVM_FUNC.findall(ptx)))
    if unknown:
        raise BackendError(
            f"unknown intrinsic {', '.join(unknown)}: LLVM 22's NVPTX backend does not know "
            f"it for {target.name} (misspelled, or wrong signature), so it became a call to an "
            "external function"
        )
    if "link_error" in reply:
        error, log = reply["link_error"]
        raise BackendError(rejected(target.name, error, log), log)
    linked = reply.get("cubin")
    return ptx, None if linked is None else base64.b64decode(linked)


def start_worker() -> None:
    """Starts the worker process if none is running; returns at once."""
    with _lock:
        _current_worker()


def stop_worker() -> None:
    """Ends the worker process (a later compile_ptx starts a new one)."""
    global _worker
    with _lock:
        if _worker is not None and _worker.owner == os.getpid():
            _worker.close()
        _worker = None


def worker_pid() -> int | None:
    """The worker's process id, if one is running (for tests and diagnostics)."""
    with _lock:
        if _worker is None or _worker.owner != os.getpid() or not _worker.alive():
            return None
        return _worker.process.pid


_lock = threading.Lock()
_worker: _Worker | None = None


def _current_worker() -> _Worker:
    """The live worker of this process; a new one after a crash or in a forked child."""
    global _worker
    if _worker is None or _worker.owner != os.getpid() or not _worker.alive():
        if _worker is not None and _worker.owner == os.getpid():
            _worker.close()
        _worker = _Worker()
    return _worker


@atexit.register
def _stop_worker_at_exit() -> None:
    if _worker is not None and _worker.owner == os.getpid():
        _worker.close()


class _Worker:
    """One worker process, talked to with length-prefixed JSON frames on its stdin/stdout.

    Its stderr goes to a temporary file, where LLVM writes the message of a fatal error
    before the process dies.
    """

    def __init__(self):
        self.owner = os.getpid()
        self.log = tempfile.TemporaryFile()
        # -P: the script's folder (passes/) must not shadow modules.
        self.process = subprocess.Popen(
            [sys.executable, "-P", str(Path(backend_worker.__file__).resolve()), "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            close_fds=True,
        )

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, request: dict[str, Any], target: str) -> int:
        """Sends a request; returns where the worker's log stood (for `receive`)."""
        assert self.process.stdin is not None
        log_start = os.fstat(self.log.fileno()).st_size
        try:
            write_frame(self.process.stdin, request)
        except BrokenPipeError:
            raise self._death(log_start, target) from None
        except BaseException:  # KeyboardInterrupt: a partial frame would confuse the worker
            self.kill()
            raise
        return log_start

    def receive(self, log_start: int, target: str) -> dict[str, Any]:
        """The reply to the request sent last."""
        assert self.process.stdout is not None
        try:
            return read_frame(self.process.stdout.fileno(), time.monotonic() + WORKER_TIMEOUT_S)
        except EOFError:
            raise self._death(log_start, target) from None
        except TimeoutError:
            self.kill()
            raise BackendError(
                f"llvmlite's NVPTX backend took more than {WORKER_TIMEOUT_S:.0f} s for "
                f"{target}; the worker was stopped"
            ) from None
        except BaseException:  # KeyboardInterrupt: the reply would answer the next request
            self.kill()
            raise

    def _death(self, log_start: int, target: str) -> BackendError:
        """The error for a worker that died: LLVM's message from its stderr."""
        status = self.process.wait()
        self.log.seek(0)
        raw = self.log.read()
        log = raw.decode(errors="replace")
        recent = raw[log_start:].decode(errors="replace") or log
        try:
            how = f"killed by {signal.Signals(-status).name}" if status < 0 else ""
        except ValueError:
            how = ""
        how = how or f"exit status {status}"
        return BackendError(
            f"LLVM's NVPTX backend failed for {target} (worker {how}): {_llvm_message(recent)}",
            log,
        )

    def close(self) -> None:
        """Closes the worker's stdin (it exits on EOF); kills it if it does not."""
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
            self.process.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.log):
            try:
                if stream is not None:
                    stream.close()
            except OSError:  # unflushed bytes for a dead worker
                pass


def _llvm_message(log: str) -> str:
    """The lines of LLVM's fatal error, without the stack dump; else the log's last line."""
    lines = [line.rstrip() for line in log.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith(("LLVM ERROR:", "error:")) or ": error:" in line:
            message = []
            for rest in lines[i:]:
                if rest.startswith(("PLEASE submit", "Stack dump", " #0", "0.")):
                    break
                message.append(rest.strip())
            return "\n".join(message)
    return lines[-1] if lines else "no message"


def ptxas_available() -> bool:
    """Whether a `ptxas` is on PATH (tests may cross-check with it; nothing needs it)."""
    return shutil.which("ptxas") is not None


WHOLE_PROGRAM_NOTES = ("(C7504)",)
"""ptxas notes that nvJitLink's separate compilation causes and a whole-program ptxas does
not: setmaxnreg ignored "to maintain compatibility across compilation units"."""


def reassemble_whole_program(ptx: str, arch: str) -> tuple[bytes, list[str]] | None:
    """The cubin of `ptx` for `arch` (nvJitLink's `-arch`, "sm_90a") from the `ptxas` on
    PATH, which assembles a whole program: where nvJitLink (a separately compiled unit)
    ignores setmaxnreg, ptxas applies it. With ptxas's own performance notes; None without
    a ptxas, or where it fails (the caller keeps nvJitLink's cubin and says why)."""
    if not ptxas_available():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        source, cubin = Path(tmp, "kernel.ptx"), Path(tmp, "kernel.cubin")
        source.write_text(ptx)
        try:
            done = subprocess.run(
                ["ptxas", f"-arch={arch}", "-O3", str(source), "-o", str(cubin)],
                capture_output=True,
                text=True,
                timeout=WORKER_TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0 or not cubin.exists():
            return None
        return cubin.read_bytes(), performance_lines(done.stderr)


def whole_program(ptx: str, cubin: bytes, notes: list[str], arch: str) -> tuple[bytes, list[str]]:
    """nvJitLink's cubin and notes, or, where nvJitLink's separate compilation ignored
    setmaxnreg (C7504) and a ptxas is on PATH, the whole-program cubin of ptxas (which
    applies it) and its notes. Without a ptxas the note stays: the caller warns."""
    if not any(n.startswith(WHOLE_PROGRAM_NOTES) for n in notes):
        return cubin, notes
    redone = reassemble_whole_program(ptx, arch)
    return (cubin, notes) if redone is None else redone
