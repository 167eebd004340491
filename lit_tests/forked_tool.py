"""copy-opt for lit without Python's start and copy-opt's imports on every RUN line (about
0.3 s of the 0.35 s a small test's run takes), as Nailgun does for JVM tools: a server
imports copy-opt once and, for each run, forks a child that runs copy-opt's `main` on the
caller's own stdin, stdout and stderr (passed over a Unix socket), in its cwd, environment
and arguments, and sends back its exit status. The caller is a small client on PATH under
the tool's name (`lit.cfg.py` writes it), so pipes, `not` and redirections work as with the
installed script; where the server cannot be reached, the client runs the installed script.

The server is single-threaded (a fork copies no lock another thread holds) and ends with the
lit run that started it (`lit.cfg.py`), or when that process is gone.

    python forked_tool.py serve SOCKET MODULE      # the server
    python -S forked_tool.py SOCKET FALLBACK ARGS  # a client (what the shim on PATH runs)
"""

from __future__ import annotations

import array
import json
import os
import socket
import sys

STREAMS = 3


def client(path: str, fallback: str, args: list[str]) -> None:
    streams = [sys.stdin, sys.stdout, sys.stderr]
    request = {
        "args": [fallback, *args],  # the script's own path first, as its process has it
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        # how the streams of a process started here are set up (a pipe, a terminal)
        "streams": [(s.encoding, s.errors) if s is not None else None for s in streams],
    }
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        socket.send_fds(conn, [json.dumps(request).encode()], list(range(STREAMS)))
        conn.shutdown(socket.SHUT_WR)
    except OSError:  # no server: the installed script
        os.execv(fallback, [fallback, *args])
    reply = b""
    while chunk := conn.recv(64):
        reply += chunk
    if not reply.isdigit():  # (the run may have read stdin: it is not started again)
        print(f"{fallback}: the forked run ended without an exit status", file=sys.stderr)
        os._exit(1)
    os._exit(int(reply))


def serve(path: str, module_name: str) -> None:
    import importlib
    import signal

    # Imported before the socket exists: a client that comes earlier, or to a server that
    # cannot import the tool, runs the installed script (no run is lost to a dying server).
    module = importlib.import_module(module_name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    parent = os.getppid()
    listener.settimeout(1.0)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    while os.getppid() == parent:
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
    import atexit
    import traceback

    code = 1
    try:
        conn.settimeout(None)
        data, fds = b"", array.array("i")
        while True:
            msg, got, _, _ = socket.recv_fds(conn, 1 << 20, STREAMS)
            fds.extend(got)
            if not msg:
                break
            data += msg
        request = json.loads(data)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin, sys.stdout, sys.stderr = (
            None if how is None else open(
                fd, "w" if fd else "r", encoding=how[0], errors=how[1], closefd=False,
                buffering=1 if fd == 2 else -1,
            )
            for fd, how in enumerate(request["streams"])
        )  # fmt: skip
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = request["args"]
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


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        del sys.path[0]  # as the console script has it: modules from the environment only
        serve(sys.argv[2], sys.argv[3])
    else:
        client(sys.argv[1], sys.argv[2], sys.argv[3:])
