"""The backend's worker process: llvmlite's NVPTX backend (and nvJitLink, for
`backend.compile_ptx_and_cubin`) in a process of its own, so that a fatal LLVM error ends
the worker only (see `backend`); and the frames the client and the worker talk in
(length-prefixed JSON on the worker's stdin and stdout).

Run as a script (`python backend_worker.py --serve`, as `backend` starts it), this file is
the worker; it then imports only the standard library, llvmlite, nvJitLink's bindings,
xDSL's exception module and the target table (`backend_targets`, `backend_nvjitlink`).
"""

from __future__ import annotations

import base64
import ctypes
import hashlib
import json
import os
import re
import select
import signal
import struct
import sys
import time
from collections import OrderedDict
from typing import IO, Any

from passes.backend_nvjitlink import link, nvjitlink_log, nvjitlink_options, performance_notes
from passes.backend_targets import NVPTX_TRIPLE, TARGET_CODEGEN

EXTERN_LLVM_FUNC = re.compile(r"^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?(llvm\.[\w.$]+)", re.M)
"""An `llvm.*` function that PTX declares external: an intrinsic LLVM did not know."""


# --- the frames ------------------------------------------------------------------------------


def write_frame(stream: IO[bytes], payload: dict[str, Any]) -> None:
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


def read_frame(fd: int, deadline: float | None) -> dict[str, Any]:
    (size,) = struct.unpack(">I", _read_exactly(fd, 4, deadline))
    return json.loads(_read_exactly(fd, size, deadline))


# --- the worker process ----------------------------------------------------------------------


def serve() -> None:
    """The worker's loop: one request (IR, cpu, features, opt level, whether to link) -> PTX
    and the cubin, or an error; a request served before gets the same reply again
    (`_Served`)."""
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
    served = _Served(os.environ.get(ALWAYS_COMPILE) != "1")
    while True:
        try:
            request = read_frame(requests, None)
        except EOFError:
            return
        times = _Laps()
        key = served.key(request)
        earlier = served.get(key)
        if earlier is not None:  # the same IR for the same target and options as before
            times.lap(REUSED)
            write_frame(replies, {**earlier, "times": times.seconds})
            continue
        try:
            cpu, features = request["cpu"], request["features"]
            if (cpu, features) not in machines:
                machines[cpu, features] = target.create_target_machine(
                    cpu=cpu, features=features, opt=3
                )
            ptx = _codegen(llvm, machines[cpu, features], request, times)
            reply: dict[str, Any] = {"ok": True, "ptx": ptx}
        except Exception as exc:  # parse and verifier errors arrive as RuntimeError
            reply = {"ok": False, "error": str(exc).strip()}
        if reply["ok"] and request["cubin"] and not EXTERN_LLVM_FUNC.search(reply["ptx"]):
            reply.update(_serve_cubin(reply["ptx"], request["arch"]))
            times.lap("nvJitLink")
        if not request["cubin"] or "cubin" in reply or "link_error" in reply:
            served.put(key, reply)  # (not a reply nvJitLink could not make here: the caller's)
        reply["times"] = times.seconds
        write_frame(replies, reply)
        if request["cubin"]:  # while idle: the next request's nvJitLink handle
            _spare_handles.prepare(request["arch"])


REUSED = "backend: the reply to an identical earlier request"
"""The one stage of a request the worker answered from `_Served`."""

ALWAYS_COMPILE = "COPY_ALWAYS_COMPILE"
"""Set to 1 (as Triton's TRITON_ALWAYS_COMPILE), the worker compiles every request, also one
it served before: for timing the backend (benchmarks/bench_compile.py, bench_verify.py)."""


class _Served:
    """The replies to the latest requests, by request: LLVM and nvJitLink are deterministic,
    so a request the worker served before (a kernel compiled again, for another launch
    configuration or by another test of a process) gets the same reply without compiling
    it again. Bounded by count and by size; the least recently used goes first."""

    MAX_REPLIES = 128
    MAX_BYTES = 64 << 20

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.replies: OrderedDict[str, tuple[dict[str, Any], int]] = OrderedDict()
        self.size = 0

    @staticmethod
    def key(request: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        found = self.replies.get(key)
        if found is None:
            return None
        self.replies.move_to_end(key)
        return found[0]

    def put(self, key: str, reply: dict[str, Any]) -> None:
        size = len(reply.get("ptx", "")) + len(reply.get("cubin", ""))
        if not self.enabled or size > self.MAX_BYTES:
            return
        self.replies[key] = (dict(reply), size)
        self.size += size
        while len(self.replies) > self.MAX_REPLIES or self.size > self.MAX_BYTES:
            _, (_, dropped) = self.replies.popitem(last=False)
            self.size -= dropped


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
            options = nvjitlink_options(arch)
            handle = nvjitlink.create(len(options), options)
    except Exception:
        return {}
    try:
        cubin = base64.b64encode(link(nvjitlink, handle, ptx)).decode()
        return {"cubin": cubin, "notes": performance_notes(nvjitlink, handle)}
    except nvjitlink.nvJitLinkError as exc:
        log = nvjitlink_log(nvjitlink, handle)
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

            options = nvjitlink_options(arch)
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


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    serve()
