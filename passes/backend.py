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
GPU or ptxas.

Run as a script (`python backend.py --serve`), this file is the worker; it then imports
only the standard library, llvmlite, nvJitLink's bindings, xDSL's exception module and the
target table.
"""

from __future__ import annotations

import atexit
import base64
import ctypes
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from xdsl.utils.exceptions import DiagnosticException

from facts.target import TARGETS, check_arch

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"

TARGET_CODEGEN: dict[str, tuple[str, str]] = {
    name: (t.llvm_cpu, t.llvm_features) for name, t in TARGETS.items()
}
"""Target -> (llvmlite cpu, features), read from the one target table (facts.target)."""

WORKER_TIMEOUT_S = 300.0
"""How long one compile_ptx may take before the worker is killed."""

_EXTERN_LLVM_FUNC = re.compile(r"^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?(llvm\.[\w.$]+)", re.M)


class BackendError(DiagnosticException):
    """LLVM or nvJitLink rejected the input; the message is theirs. `log` is the whole log."""

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log


def _codegen_options(target: str) -> tuple[str, str]:
    if target not in TARGET_CODEGEN:
        known = ", ".join(TARGET_CODEGEN)
        raise BackendError(f"unknown target '{target}'; known targets: {known}")
    return TARGET_CODEGEN[target]


# --- PTX, through the worker -----------------------------------------------------------------


def compile_ptx(llvm_ir: str, target: str, *, opt_level: int = 3) -> str:
    """PTX for `target` from LLVM IR text: parse, verify, optimize (O3), emit, in the worker."""
    return _request(llvm_ir, target, opt_level)


def compile_ptx_and_cubin(
    llvm_ir: str,
    target: str,
    *,
    timings: dict[str, float] | None = None,
    arch: str | None = None,
) -> tuple[str, bytes]:
    """`compile_ptx` (O3), then `compile_cubin` of its PTX, both in the worker: the same PTX,
    cubin and errors as the two calls, with one round trip. `timings`, when given, receives
    the seconds each step took in the worker (for benchmarks/bench_compile.py); `arch`: as
    compile_cubin's."""
    return submit_ptx_and_cubin(llvm_ir, target, timings=timings, arch=arch).result()


def submit_ptx_and_cubin(
    llvm_ir: str,
    target: str,
    *,
    timings: dict[str, float] | None = None,
    arch: str | None = None,
) -> PendingCompile:
    """`compile_ptx_and_cubin`, sent to the worker now and read back by `.result()`: the
    caller works meanwhile, in this thread (a thread that sent the request instead would
    wait for the interpreter's lock, up to its 5 ms switch interval, while the caller
    computes). The worker serves no other request until `.result()` or `.discard()`."""
    return PendingCompile(llvm_ir, target, timings, arch)


class PendingCompile:
    """A compile_ptx_and_cubin request the worker is working on."""

    def __init__(
        self, llvm_ir: str, target: str, timings: dict[str, float] | None, arch: str | None
    ):
        cpu, features = _codegen_options(target)
        self.target = target
        self.timings = timings
        self.arch = _arch(target, arch)
        request = {
            "ir": llvm_ir,
            "cpu": cpu,
            "features": features,
            "opt": 3,
            "cubin": True,
            "arch": self.arch,
        }
        _lock.acquire()
        self.open = True
        try:
            self.worker = _current_worker()
            self.log_start = self.worker.send(request, target)
        except BaseException:
            self._close()
            raise

    def result(self) -> tuple[str, bytes]:
        """The PTX and the cubin (or the backend's error)."""
        assert self.open, "the reply was read already"
        try:
            reply = self.worker.receive(self.log_start, self.target)
        finally:
            self._close()
        ptx, cubin = _finish(reply, self.target, self.timings)
        if cubin is None:  # nvJitLink could not be loaded in the worker: its error, from here
            cubin = compile_cubin(ptx, self.target, self.arch)
        return ptx, cubin

    def discard(self) -> None:
        """Waits for the reply and drops it, errors included (the caller has its own)."""
        if not self.open:
            return
        try:
            self.worker.receive(self.log_start, self.target)
        except Exception:
            pass
        finally:
            self._close()

    def _close(self) -> None:
        if self.open:
            self.open = False
            _lock.release()


def _request(llvm_ir: str, target: str, opt_level: int) -> str:
    cpu, features = _codegen_options(target)
    request = {"ir": llvm_ir, "cpu": cpu, "features": features, "opt": opt_level, "cubin": False}
    with _lock:
        worker = _current_worker()
        reply = worker.receive(worker.send(request, target), target)
    ptx, _ = _finish(reply, target, None)
    return ptx


def _finish(
    reply: dict[str, Any], target: str, timings: dict[str, float] | None
) -> tuple[str, bytes | None]:
    """The PTX and cubin of a reply, or its error."""
    if timings is not None:
        timings.update(reply.get("times", {}))
    if not reply["ok"]:
        raise BackendError(f"LLVM rejected the IR for {target}: {reply['error']}")
    ptx: str = reply["ptx"]
    # A misspelled or unknown `llvm.*` intrinsic is not an error in LLVM: it becomes a call
    # to an external function, which only the PTX assembler rejects.
    unknown = sorted(set(_EXTERN_LLVM_FUNC.findall(ptx)))
    if unknown:
        raise BackendError(
            f"unknown intrinsic {', '.join(unknown)}: LLVM 22's NVPTX backend does not know "
            f"it for {target} (misspelled, or wrong signature), so it became a call to an "
            "external function"
        )
    if "link_error" in reply:
        error, log = reply["link_error"]
        raise BackendError(_rejected(target, error, log), log)
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
            [sys.executable, "-P", str(Path(__file__).resolve()), "--serve"],
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
            _write_frame(self.process.stdin, request)
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
            return _read_frame(self.process.stdout.fileno(), time.monotonic() + WORKER_TIMEOUT_S)
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


def _write_frame(stream: IO[bytes], payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    while size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_frame(fd: int, deadline: float | None) -> dict[str, Any]:
    (size,) = struct.unpack(">I", _read_exactly(fd, 4, deadline))
    return json.loads(_read_exactly(fd, size, deadline))


# --- the worker process ----------------------------------------------------------------------


def _serve() -> None:
    """The worker's loop: one request (IR, cpu, features, opt level, whether to link) -> PTX
    and the cubin, or an error."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    # Frames go to a private copy of stdout; anything else printed lands in the log.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.fileno()
    _keep_freed_memory()

    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple(NVPTX_TRIPLE)
    machines: dict[tuple[str, str], Any] = {}
    if not select.select([requests], [], [], 0)[0]:  # idle: warm up while the caller works
        _warm_up(llvm, target, machines)
    while True:
        try:
            request = _read_frame(requests, None)
        except EOFError:
            return
        times = _Laps()
        try:
            key = (request["cpu"], request["features"])
            if key not in machines:
                machines[key] = target.create_target_machine(cpu=key[0], features=key[1], opt=3)
            ptx = _codegen(llvm, machines[key], request, times)
            reply: dict[str, Any] = {"ok": True, "ptx": ptx}
        except Exception as exc:  # parse and verifier errors arrive as RuntimeError
            reply = {"ok": False, "error": str(exc).strip()}
        if reply["ok"] and request["cubin"] and not _EXTERN_LLVM_FUNC.search(reply["ptx"]):
            reply.update(_serve_cubin(reply["ptx"], request["arch"]))
            times.lap("nvJitLink")
        reply["times"] = times.seconds
        _write_frame(replies, reply)
        if request["cubin"]:  # while idle: the next request's nvJitLink handle
            _spare_handles.prepare(request["arch"])


_WARM_UP_IR = """target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @warm_up() {
  ret void
}
"""


def _warm_up(llvm: Any, target: Any, machines: dict[tuple[str, str], Any]) -> None:
    """One compile and link of an empty kernel, so that the caller's first request does not
    pay for loading nvJitLink and for LLVM's and nvJitLink's first-call set-up (about 100 ms
    together); done only while no request waits."""
    cpu, features = TARGET_CODEGEN["sm_80"]
    try:
        machines[cpu, features] = target.create_target_machine(cpu=cpu, features=features, opt=3)
        request = {"ir": _WARM_UP_IR, "opt": 3}
        _serve_cubin(_codegen(llvm, machines[cpu, features], request, _Laps()), cpu)
    except Exception:  # a request will report whatever is wrong
        pass


class _Laps:
    """The worker's stage times, for the reply."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.start = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = now - self.start
        self.start = now


def _codegen(llvm: Any, machine: Any, request: dict[str, Any], times: _Laps) -> str:
    module = llvm.parse_assembly(request["ir"])
    module.verify()
    if not module.triple:
        module.triple = NVPTX_TRIPLE
    if not str(module.data_layout):
        module.data_layout = str(machine.target_data)
    times.lap("LLVM: parse and verify")
    if request["opt"]:
        options = llvm.create_pipeline_tuning_options(speed_level=request["opt"])
        builder = llvm.create_pass_builder(machine, options)
        builder.getModulePassManager().run(module, builder)
        times.lap(f"LLVM: O{request['opt']} pipeline")
    ptx: str = machine.emit_assembly(module)
    times.lap("LLVM: codegen")
    return ptx


def _serve_cubin(ptx: str, arch: str) -> dict[str, Any]:
    """The worker's half of compile_ptx_and_cubin: the cubin, nvJitLink's rejection, or
    nothing when nvJitLink cannot be loaded here (the caller then reports why)."""
    try:
        from cuda.bindings import nvjitlink

        handle = _spare_handles.take(arch)
        if handle is None:
            options = _nvjitlink_options(arch)
            handle = nvjitlink.create(len(options), options)
    except Exception:
        return {}
    try:
        return {"cubin": base64.b64encode(_link(nvjitlink, handle, ptx)).decode()}
    except nvjitlink.nvJitLinkError as exc:
        log = _nvjitlink_log(nvjitlink, handle)
        return {"link_error": [str(exc), log]}
    except Exception:  # anything else: the caller links in its own process, and says why
        return {}
    finally:
        nvjitlink.destroy(handle)


class _SpareHandles:
    """nvJitLink handles made while the worker is idle, one per architecture, each for the
    next request of its architecture: creating one costs 0.1-0.2 ms, which the worker
    would otherwise spend after the request arrives. A handle holds only its options until
    its input is added, so a spare one is as good as a new one."""

    def __init__(self) -> None:
        self.handles: dict[str, int] = {}

    def prepare(self, arch: str) -> None:
        if arch in self.handles:
            return
        try:
            from cuda.bindings import nvjitlink

            options = _nvjitlink_options(arch)
            self.handles[arch] = nvjitlink.create(len(options), options)
        except Exception:  # the request that needs it reports what is wrong
            pass

    def take(self, arch: str) -> int | None:
        return self.handles.pop(arch, None)


_spare_handles = _SpareHandles()


def _keep_freed_memory() -> None:
    """Has glibc's allocator keep the memory the worker frees instead of returning it to the
    kernel: nvJitLink allocates tens of megabytes on every call, and with glibc's defaults
    each call pays for fresh pages again (page faults and zeroing, about a fifth of its
    time). The worker's resident memory stays at its largest compile's."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc: nothing to tune
        return
    m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3
    mallopt(m_mmap_threshold, 1 << 30)  # large blocks from the heap, not fresh mappings
    mallopt(m_trim_threshold, 1 << 30)  # never give the heap's top back
    mallopt(m_top_pad, 64 << 20)  # grow the heap in 64 MiB steps


# --- cubin, through nvJitLink ----------------------------------------------------------------


def _arch(target: str, arch: str | None) -> str:
    """nvJitLink's `-arch` for PTX of `target`: `arch`, checked (`target.check_arch`), or the
    target's own."""
    cpu, _ = _codegen_options(target)
    if arch is None or arch == target:
        return cpu
    try:
        check_arch(target, arch)
    except ValueError as exc:
        raise BackendError(str(exc)) from None
    return TARGET_CODEGEN[arch][0]


def compile_cubin(ptx: str, target: str, arch: str | None = None) -> bytes:
    """A cubin (ELF) from PTX for `target`, by nvJitLink in this process: SASS for `arch`
    (a later GPU that runs `target`'s PTX, as CUDA's compute_80 -> sm_90), by default the
    target's own."""
    arch = _arch(target, arch)
    try:
        from cuda.bindings import nvjitlink
    except ImportError as exc:
        raise BackendError(
            f"compile_cubin needs nvJitLink: pip install cuda-bindings nvidia-nvjitlink ({exc})"
        ) from None
    try:
        options = _nvjitlink_options(arch)
        handle = nvjitlink.create(len(options), options)
    except Exception as exc:  # the library could not be found or loaded
        raise BackendError(f"nvJitLink is not usable: {exc}") from None
    try:
        return _link(nvjitlink, handle, ptx)
    except nvjitlink.nvJitLinkError as exc:
        log = _nvjitlink_log(nvjitlink, handle)
        raise BackendError(_rejected(target, str(exc), log), log) from None
    finally:
        nvjitlink.destroy(handle)


def _nvjitlink_options(arch: str) -> list[str]:
    """`-no-cache`: nvJitLink does not cache its intermediate steps (nothing reads them
    back: a handle links one PTX input once); the same cubin, about 0.2 ms sooner."""
    return [f"-arch={arch}", "-O3", "-no-cache"]


def _link(nvjitlink: Any, handle: int, ptx: str) -> bytes:
    data = ptx.encode()
    nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
    nvjitlink.complete(handle)
    cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
    nvjitlink.get_linked_cubin(handle, cubin)
    return bytes(cubin)


def _rejected(target: str, error: str, log: str) -> str:
    return f"nvJitLink rejected the PTX for {target}: {log or error}"


def _nvjitlink_log(nvjitlink: Any, handle: int) -> str:
    size = nvjitlink.get_error_log_size(handle)
    if not size:
        return ""
    log = bytearray(size)
    nvjitlink.get_error_log(handle, log)
    return log.rstrip(b"\0").decode(errors="replace").strip()


def ptxas_available() -> bool:
    """Whether a `ptxas` is on PATH (tests may cross-check with it; nothing needs it)."""
    return shutil.which("ptxas") is not None


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    _serve()
