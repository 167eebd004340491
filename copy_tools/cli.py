"""What every command-line tool of the project does at its boundary: no Python traceback
escapes. A closed output pipe (`copy-rules | head`) ends the tool quietly; Ctrl-C exits with
130; any other unexpected exception is one `TOOL: error: internal error: ...` line and a
note saying it is a bug (`COPY_OPT_TRACEBACK=1` prints the traceback too)."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

from copy_tools.opt_errors import TRACEBACK_ENV

BUG_NOTE = (
    "this is a bug in {tool}, not in its input; please report it with the command line "
    f"({TRACEBACK_ENV}=1 prints the Python traceback)"
)


def quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush of a closed pipe
    raises nothing either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (a test's capture)
        pass


def guarded(tool: str, action: Callable[[], int]) -> int:
    """Run a tool's `action`; return its exit status, or that of how it failed."""
    try:
        return action()
    except BrokenPipeError:  # the reader of stdout went away: nothing more to say
        quiet_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except SystemExit:
        raise
    except MemoryError:
        print(f"{tool}: error: out of memory", file=sys.stderr)
    except Exception as exc:
        if os.environ.get(TRACEBACK_ENV) == "1":
            traceback.print_exception(exc, file=sys.stderr)
        try:
            print(
                f"{tool}: error: internal error: {type(exc).__name__}: {exc}\n"
                f"{tool}: note: {BUG_NOTE.format(tool=tool)}",
                file=sys.stderr,
            )
        except BrokenPipeError:
            pass
    return 1
