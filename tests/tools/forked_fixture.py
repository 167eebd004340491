"""A console tool for the tests of tests/forked_tool.py: sleeps argv[1] seconds, copies stdin
to stdout and a line to stderr, and exits with status argv[2]."""

from __future__ import annotations

import sys
import time


def main() -> int:
    time.sleep(float(sys.argv[1]))
    sys.stdout.write(sys.stdin.read())
    print(f"{sys.argv[0].rsplit('/', 1)[-1]}: done", file=sys.stderr)
    return int(sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
