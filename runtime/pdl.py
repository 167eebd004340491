"""The launch guard of programmatic dependent launch (rules GD2, GD3), under debug guards.

The proof trusts an argument's `copy.predecessor_access` mark: a kernel may read an argument
marked "read" (and read or write one marked "none") before its `griddepcontrol.wait`, while
the kernel ahead of it on the stream still runs. Whether the mark is true depends on what
that kernel does with the same memory, which only the launches know. So a launch with
programmatic stream serialization of a kernel compiled with debug guards checks its marks
against the kernel launched before it on the same stream by this runtime, when that one was
compiled with debug guards too (their ABIs then record how each accesses its arguments):

- GD2: an argument the dependent reads under a mark, whose memory the predecessor writes;
- GD3: an argument marked "none" that the dependent writes, whose memory the predecessor
  reads or writes.

A violation raises before `cuLaunchKernelEx`, with the guard's `copy-dialect guard <rule>:`
words, and the kernel is not launched. What the guard cannot see it does not check: a
predecessor launched by other code (torch, a cubin of another compiler), or compiled without
debug guards, leaves the marks unchecked; and it compares the two kernels' arguments as
whole arrays (their byte spans), not the elements each thread touches.
"""

from __future__ import annotations

from dataclasses import dataclass

from facts.abi import KernelAbi
from runtime.errors import ArgumentError


@dataclass(frozen=True)
class LaunchFacts:
    """What the guard knows of one launch: the kernel, its ABI and the byte span of each
    array argument, by argument index."""

    name: str
    abi: KernelAbi
    spans: dict[int, tuple[int, int]]


LAST: dict[int, LaunchFacts] = {}
"""The last launch through this runtime on each stream, by the stream's handle, where that
kernel was compiled with debug guards (a launch of another kernel removes the entry)."""


def stream_key(stream: object) -> int:
    try:
        return int(stream)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return id(stream)


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def conflicts(dependent: LaunchFacts, predecessor: LaunchFacts) -> list[str]:
    """The guard's messages for `dependent` launched right after `predecessor` (empty where
    its marks hold, or where either ABI lacks the facts)."""
    marks, mine, theirs = dependent.abi.marks, dependent.abi.accesses, predecessor.abi.accesses
    if marks is None or mine is None or theirs is None:
        return []
    found: list[str] = []
    for i, mark in enumerate(marks):
        if not mark or i not in dependent.spans or mine[i] == "none":
            continue
        for j, span in predecessor.spans.items():
            access = theirs[j]
            if access == "none" or not overlaps(dependent.spans[i], span):
                continue
            where = (
                f"argument {i} of {dependent.name}, marked copy.predecessor_access = "
                f'"{mark}", overlaps argument {j} of {predecessor.name}, launched before it on '
                f"the stream, which {access.replace('-', 's and ')}s it"
            )
            if "read" in mine[i] and "write" in access:
                found.append(
                    f"copy-dialect guard GD2: {where}: {dependent.name} may read it before "
                    "its griddepcontrol.wait while it is being written (drop the mark)"
                )
            elif mark == "none" and "write" in mine[i]:
                found.append(
                    f"copy-dialect guard GD3: {where}: {dependent.name} may write it before "
                    "its griddepcontrol.wait while it is being accessed (drop the mark)"
                )
    return found


def forget(stream: object) -> None:
    """A launch on `stream` of a kernel compiled without debug guards: the next one's
    predecessor, of which the guard knows nothing."""
    LAST.pop(stream_key(stream), None)


def guard_launch(facts: LaunchFacts, stream: object, programmatic: bool) -> None:
    """Checks a launch against the one before it on `stream` (only a programmatic one: a
    plain launch starts after its predecessor completed), then records it as the stream's
    last (a refused launch is not issued, so not recorded)."""
    key = stream_key(stream)
    previous = LAST.get(key)
    if programmatic and previous is not None:
        found = conflicts(facts, previous)
        if found:
            raise ArgumentError("; ".join(found))
    LAST[key] = facts
