"""Runs a console tool (copy-opt) as a process of its own without paying for Python's start
and the tool's imports each time: a server process imports the tool once, then forks a
child per run, which runs the tool's `main` as its console script would, on its own stdin,
stdout and stderr (temporary files) and in its own cwd and environment, and exits with its
status. The server is single-threaded, so the fork copies no lock another thread holds.

What a child does not repeat is what every run does alike (the interpreter's start, `site`,
the imports); the tests that run the installed console scripts themselves (lit, the
project's install and README tests) cover those. `run` returns what `subprocess.run`
would, with the same timeout behaviour.

    python tests/tools/forked_tool.py MODULE  # the server: frames on stdin and stdout
"""

from __future__ import annotations

import atexit
import base64
import importlib
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import IO, Any


def _write(stream: IO[bytes], payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()


def _read(stream: IO[bytes]) -> dict[str, Any] | None:
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    return json.loads(stream.read(size))


# --- the server --------------------------------------------------------------------------


def serve(module_name: str) -> None:
    module = importlib.import_module(module_name)  # what each run would import again
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    while (request := _read(requests)) is not None:
        with (
            tempfile.TemporaryFile() as stdin,
            tempfile.TemporaryFile() as stdout,
            tempfile.TemporaryFile() as stderr,
        ):
            stdin.write(base64.b64decode(request["stdin"]))
            stdin.seek(0)
            pid = os.fork()
            if pid == 0:
                _child(module, request, stdin, stdout, stderr)  # does not return
            _, status = os.waitpid(pid, 0)
            stdout.seek(0)
            stderr.seek(0)
            _write(
                replies,
                {
                    "returncode": os.waitstatus_to_exitcode(status),
                    "stdout": base64.b64encode(stdout.read()).decode(),
                    "stderr": base64.b64encode(stderr.read()).decode(),
                },
            )


def _child(module: Any, request: dict[str, Any], stdin: IO[bytes], stdout: IO[bytes],
           stderr: IO[bytes]) -> None:  # fmt: skip
    code = 1
    try:
        signal.alarm(request["timeout"])  # killed by SIGALRM, as a hung process would be
        for fd, file in ((0, stdin), (1, stdout), (2, stderr)):
            os.dup2(file.fileno(), fd)
        # new stream objects on the new descriptors, configured as the server's were (it
        # was started as the tool would be: pipes, the same environment)
        sys.stdin = open(0, encoding=sys.stdin.encoding, errors=sys.stdin.errors, closefd=False)
        sys.stdout = open(
            1, "w", encoding=sys.stdout.encoding, errors=sys.stdout.errors, closefd=False
        )
        sys.stderr = open(
            2, "w", encoding=sys.stderr.encoding, errors=sys.stderr.errors, closefd=False,
            buffering=1,
        )  # fmt: skip
        if request["cwd"] is not None:
            os.chdir(request["cwd"])
        if request["env"] is not None:
            os.environ.clear()
            os.environ.update(request["env"])
        sys.argv = [module.__file__, *request["args"]]
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
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


# --- the client --------------------------------------------------------------------------


class ForkedTool:
    """A server for the tool `module` (started at the first run, again after one dies)."""

    def __init__(self, module: str):
        self.module = module
        self.server: subprocess.Popen[bytes] | None = None

    def run(
        self,
        args: list[str],
        stdin: bytes,
        cwd: Path | None,
        env: dict[str, str] | None,
        timeout: int,
    ) -> subprocess.CompletedProcess[bytes]:
        if self.server is None or self.server.poll() is not None:
            self.server = subprocess.Popen(
                [sys.executable, __file__, self.module],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert self.server.stdin is not None
        assert self.server.stdout is not None
        request = {
            "args": args,
            "stdin": base64.b64encode(stdin).decode(),
            "cwd": None if cwd is None else str(Path(cwd).resolve()),
            "env": env,
            "timeout": timeout,
        }
        _write(self.server.stdin, request)
        reply = _read(self.server.stdout)
        if reply is None:
            raise RuntimeError(f"the forked-tool server of {self.module} died")
        if reply["returncode"] == -signal.SIGALRM:
            raise subprocess.TimeoutExpired([self.module, *args], timeout)
        return subprocess.CompletedProcess(
            [self.module, *args],
            reply["returncode"],
            base64.b64decode(reply["stdout"]),
            base64.b64decode(reply["stderr"]),
        )


if __name__ == "__main__":
    sys.path[0] = os.getcwd()  # as `python -m` has it, not this file's folder
    serve(sys.argv[1])
