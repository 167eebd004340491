"""A console tool (copy-opt, copy-layout) for the tests without Python's start and the tool's
imports on every run (about 0.3 s of the 0.35 s a small run takes), as Nailgun does for JVM
tools: a server imports the tool once and, for each run, forks a child that runs the tool's
`main` on the caller's stdin, stdout and stderr (file descriptors passed over a Unix
socket), in the caller's cwd and environment, with its argv, and sends back the exit
status. The child is a process of its own, as the tool's would be, but for what every run
does alike (the interpreter's start, `site`, the imports), which the tests that run the
installed scripts cover (the project's install and README tests).

Two clients:
- lit's `copy-opt` is a shim on PATH that runs this file as a client on its own descriptors
  (`lit_tests/lit.cfg`), so pipes, `not` and redirections work as with the installed script;
  where no server answers, it runs the installed script;
- `ForkedTool` runs the tool as `subprocess.run(capture_output=True)` would and returns the
  same `CompletedProcess` (`tests/tools/test_copy_opt.py` holds the two to each other).

The server is single-threaded (a fork copies no lock another thread holds) and ends with
the process that started it.

    python forked_tool.py serve SOCKET MODULE [--module-path]  # the server
    python -S forked_tool.py SOCKET SCRIPT ARGS...              # a client on its own streams
"""

from __future__ import annotations

import array
import atexit
import json
import os
import socket
import sys

STREAMS = 3

FORKS = hasattr(os, "fork") and hasattr(socket, "AF_UNIX") and hasattr(socket, "send_fds")
"""Whether runs can be forked here; elsewhere `ForkedTool` starts the tool's process."""


def send(path: str, request: dict, fds: list[int], timeout: float | None = None) -> int | None:
    """Has the server at `path` run `request` on the descriptors `fds` (stdin, stdout, stderr):
    its exit status; None when no server took it (nothing ran). Raises TimeoutError past
    `timeout` seconds, and RuntimeError when the run ended without a status."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        socket.send_fds(conn, [json.dumps(request).encode()], fds)
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        conn.close()
        return None
    with conn:
        conn.settimeout(timeout)
        reply = b""
        while chunk := conn.recv(64):
            reply += chunk
    if not reply.lstrip(b"-").isdigit():
        raise RuntimeError("the forked run ended without an exit status")
    return int(reply)


def client(path: str, script: str, args: list[str]) -> None:
    """The lit shim's client: this process's streams, cwd and environment, `script` first in
    argv as its own process has it; the installed `script` where no server answers."""
    streams = [sys.stdin, sys.stdout, sys.stderr]
    request = {
        "script": script,  # argv[0], as the script's own process has it
        "args": args,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        # how a process started here sets up its streams (a pipe, a terminal)
        "streams": [(s.encoding, s.errors) if s is not None else None for s in streams],
    }
    try:
        status = send(path, request, list(range(STREAMS)))
    except RuntimeError as exc:  # (the run may have read stdin: it is not started again)
        print(f"{script}: {exc}", file=sys.stderr)
        os._exit(1)
    if status is None:
        os.execv(script, [script, *args])
    os._exit(status)


# --- the server --------------------------------------------------------------------------


def serve(path: str, module_name: str) -> None:
    import importlib

    # Imported before the socket exists: a client that comes earlier, or to a server that
    # cannot import the tool, is not taken (no run is lost to a dying server).
    module = importlib.import_module(module_name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    parent = os.getppid()
    listener.settimeout(1.0)
    while os.getppid() == parent:  # (the process that started it is gone: end)
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            _reap()
            continue
        if os.fork() == 0:
            listener.close()
            _child(module, conn)  # does not return
        conn.close()
        _reap()


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _child(module, conn: socket.socket) -> None:
    import signal
    import traceback

    code = 1
    try:
        data, fds = b"", array.array("i")
        while True:
            msg, got, _, _ = socket.recv_fds(conn, 1 << 20, STREAMS)
            fds.extend(got)
            if not msg:
                break
            data += msg
        request = json.loads(data)
        if request.get("timeout"):
            signal.alarm(request["timeout"])  # killed by SIGALRM, as a hung process would be
        # how the streams were set up: the caller's, else the server's (started with pipes,
        # as `subprocess.run(capture_output=True)` starts the tool)
        hows = request.get("streams") or [
            (s.encoding, s.errors) for s in (sys.stdin, sys.stdout, sys.stderr)
        ]
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin, sys.stdout, sys.stderr = (
            None if how is None else open(
                fd, "w" if fd else "r", encoding=how[0], errors=how[1], closefd=False,
                buffering=1 if fd == 2 else -1,
            )
            for fd, how in enumerate(hows)
        )  # fmt: skip
        if request["cwd"] is not None:
            os.chdir(request["cwd"])
        if request["env"] is not None:
            os.environ.clear()
            os.environ.update(request["env"])
        sys.argv = [request.get("script") or module.__file__, *request["args"]]
        try:
            status = module.main()
            code = 0 if status is None else status
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
        atexit._run_exitfuncs()  # as the interpreter does when the script ends
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        conn.sendall(str(code).encode())
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


# --- the tests' client -------------------------------------------------------------------


class ForkedTool:
    """`python -m MODULE` for the tests, forked from a server of its own (started at the first
    run, again after one dies; it ends with this process); a process of its own per run
    where runs cannot be forked (`FORKS`)."""

    def __init__(self, module: str):
        self.module = module
        self.server = None
        self.path = ""

    def stop(self) -> None:
        """Ends the server and removes its socket's folder."""
        import shutil

        atexit.unregister(self.stop)
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            self.server.wait()
        if self.path:
            shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)
        self.server, self.path = None, ""

    def run(
        self,
        args: list[str],
        stdin: bytes,
        cwd=None,
        env: dict[str, str] | None = None,
        timeout: int = 120,
    ):
        """What `subprocess.run([sys.executable, "-m", MODULE, *args], input=stdin,
        capture_output=True, cwd=cwd, env=env, timeout=timeout)` returns."""
        import subprocess
        import tempfile
        import time

        if not FORKS:
            return subprocess.run(
                [sys.executable, "-m", self.module, *args],
                input=stdin,
                capture_output=True,
                cwd=cwd,
                env=env,
                timeout=timeout,
            )
        if self.server is None or self.server.poll() is not None:
            self.stop()
            self.path = os.path.join(tempfile.mkdtemp(prefix="forked-tool-"), "server")
            atexit.register(self.stop)
            self.server = subprocess.Popen(
                [sys.executable, __file__, "serve", self.path, self.module, "--module-path"],
                # not a terminal, as a child of this process with captured streams: the runs
                # set theirs up alike; its stderr is this process's (a server that fails says
                # why), nothing else writes to its own streams
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        request = {
            "script": None,  # the module's file, as `python -m` has it
            "args": args,
            "cwd": None if cwd is None else os.fspath(cwd),
            "env": env,
            "streams": None,
            "timeout": timeout,
        }
        with (
            tempfile.TemporaryFile() as i,
            tempfile.TemporaryFile() as o,
            tempfile.TemporaryFile() as e,
        ):
            i.write(stdin)
            i.seek(0)
            for _ in range(1000):  # (a server just started may not listen yet)
                try:
                    status = send(self.path, request, [i.fileno(), o.fileno(), e.fileno()],
                                  timeout)  # fmt: skip
                except TimeoutError:  # the child ends at the same time (SIGALRM)
                    raise subprocess.TimeoutExpired([self.module, *args], timeout) from None
                if status is not None or self.server.poll() is not None:
                    break
                time.sleep(0.01)
            if status is None:
                raise RuntimeError(f"the forked-tool server of {self.module} is not running")
            o.seek(0)
            e.seek(0)
            return subprocess.CompletedProcess([self.module, *args], status, o.read(), e.read())


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        # The module search path of the tool's own process: `python -m` puts the cwd first,
        # a console script its own folder (no modules); not this file's folder either way.
        if "--module-path" in sys.argv[4:]:
            sys.path[0] = os.getcwd()
        else:
            del sys.path[0]
        serve(sys.argv[2], sys.argv[3])
    else:
        client(sys.argv[1], sys.argv[2], sys.argv[3:])
